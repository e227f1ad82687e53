"""Adaptive PGD structure attack (our JAX attack) against GCN, APPNP and GADC(IV)."""

from jaxlab.report import Claim, Experiment

EXPERIMENT = Experiment(
    name="gadc_adaptive",
    requires=("graphs",),
    claims=tuple(
        Claim(name=f"Cora PGD evasion {int(b * 100)}%: GADC(IV) beats {base.upper()}",
              metric=f"cora_pgd{b:g}_evasion_gadc", baseline=f"cora_pgd{b:g}_evasion_{base}",
              unit="%", setting="our white-box PGD (Xu et al. 2019) per model, not the "
              "paper's adaptive attack; one model per seed")
        for b in (0.05, 0.1, 0.2) for base in ("gcn", "appnp")
    ),
)
