"""GADC Table 2: Aux-Attack (the paper's adaptive attack) on GCN and GADC(IV); our own PGD."""

from jaxlab.report import Claim, Experiment

_AUX = (
    "the paper's protocol (reference Adaptive_Adversarial_Attack scripts): Aux-Attack "
    "PGD, 1000 flips, Cora, one run per split of Mujkanovic et al. (quick: splits 0-2, "
    "paired by split; the paper: split 0 only)"
)
_PAPER = {
    ("evasion", "gadc"): 72.03,
    ("evasion", "gcn"): 59.71,
    ("poisoning", "gadc"): 70.73,
    ("poisoning", "gcn"): 48.99,
}
# TOST power at quick's 3 splits from a pilot that is not the judged run (config docstring).
_TOST_POWER = {
    ("evasion", "gadc"): 0.90,
    ("evasion", "gcn"): 1.0,
    ("poisoning", "gadc"): 1.0,
    ("poisoning", "gcn"): 0.99,
}

EXPERIMENT = Experiment(
    name="gadc_adaptive",
    requires=("graphs",),
    claims=tuple(
        Claim(
            name=f"Aux-Attack {mode} (Table 2): GADC(IV) beats GCN",
            metric=f"cora_aux_{mode}_gadc",
            baseline=f"cora_aux_{mode}_gcn",
            unit="%",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            test="better",
            paired=True,
            power=1.0,
            setting=_AUX + f"; paper: GADC {_PAPER[mode, 'gadc']} vs GCN {_PAPER[mode, 'gcn']}",
        )
        for mode in ("evasion", "poisoning")
    )
    + tuple(
        Claim(
            name=f"Aux-Attack {mode} (Table 2): {model.upper()} matches the paper",
            metric=f"cora_aux_{mode}_{model}",
            paper=paper,
            tolerance=3.0,
            unit="%",
            bounds=(0.0, 100.0),
            unit_of_replication="splits",
            paper_source="Table 2",
            test="matches",
            power=_TOST_POWER[mode, model],
            setting=_AUX + "; tolerance 3 points (the attack moves single runs by ~1)",
        )
        for (mode, model), paper in _PAPER.items()
    )
    + tuple(
        Claim(
            name=f"Our own PGD (not the paper's attack), evasion 20%: GADC(IV) beats "
            f"{base.upper()}",
            metric="cora_pgd0.2_evasion_gadc",
            baseline=f"cora_pgd0.2_evasion_{base}",
            unit="%",
            test="better",
            diagnostic=True,
            bounds=(0.0, 100.0),
            setting="diagnostic (the paper makes no such claim): our white-box PGD (Xu et "
            "al. 2019) maximizing each model's own loss with self-training labels, 20% of "
            "the edges, Pro-GNN split; independent runs (Welch)",
        )
        for base in ("gcn", "appnp")
    ),
)
