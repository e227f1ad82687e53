"""GADC Table 2: Aux-Attack (the paper's adaptive attack) on GCN and GADC(IV); our own PGD."""

from jaxlab.report import Claim, Experiment

_AUX = ("the paper's protocol (reference Adaptive_Adversarial_Attack scripts): Aux-Attack "
        "PGD, 1000 flips, Cora split 0 of Mujkanovic et al., one run; paper: Table 2")

EXPERIMENT = Experiment(
    name="gadc_adaptive",
    requires=("graphs",),
    claims=(
        Claim(name="Aux-Attack evasion (Table 2): GADC(IV) beats GCN",
              metric="cora_aux_evasion_gadc", baseline="cora_aux_evasion_gcn", paper=72.03,
              unit="%", setting=_AUX + " (GADC 72.03, GCN 59.71)"),
        Claim(name="Aux-Attack poisoning (Table 2): GADC(IV) beats GCN",
              metric="cora_aux_poisoning_gadc", baseline="cora_aux_poisoning_gcn",
              paper=70.73, unit="%", setting=_AUX + " (GADC 70.73, GCN 48.99)"),
    ) + tuple(
        Claim(name=f"Our own PGD (not the paper's attack), evasion 20%: GADC(IV) beats "
              f"{base.upper()}",
              metric="cora_pgd0.2_evasion_gadc", baseline=f"cora_pgd0.2_evasion_{base}",
              unit="%", setting="second row: our white-box PGD (Xu et al. 2019) on each "
              "model's own loss with self-training labels, 20% of the edges, Pro-GNN split; "
              "no paper number")
        for base in ("gcn", "appnp")
    ),
)
