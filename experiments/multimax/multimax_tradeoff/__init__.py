"""Sparsity / multi-modality trade-off of softmax, sparsemax, entmax-1.5 and MultiMax."""

import math

from jaxlab.report import Claim, Experiment

_SETTING = "32-entry vectors, 3 jittered equal peaks in N(0,1) noise; paper: 2-3 entry inputs"

EXPERIMENT = Experiment(
    name="multimax_tradeoff",
    claims=(
        Claim(
            name="fitted MultiMax keeps more peaks than sparsemax",
            metric="peaks_kept_multimax_fit",
            bounds=(0.0, 32.0),
            baseline="peaks_kept_sparsemax",
            paired=True,
            setting=_SETTING,
            power=1.0,
        ),
        Claim(
            name="fitted MultiMax keeps more peaks than entmax-1.5",
            metric="peaks_kept_multimax_fit",
            bounds=(0.0, 32.0),
            baseline="peaks_kept_entmax15",
            paired=True,
            setting=_SETTING,
            power=1.0,
        ),
        Claim(
            name="fitted MultiMax is sparser than the fitted-temperature softmax",
            metric="sparsity_multimax_fit",
            bounds=(0.0, 1.0),
            baseline="sparsity_softmax_fit",
            paired=True,
            setting=_SETTING,
            power=1.0,
        ),
        Claim(
            name="fitted MultiMax matches the sparse multi-modal target better than softmax",
            metric="kl_multimax_fit",
            bounds=(0.0, math.inf),
            baseline="kl_softmax_fit",
            paired=True,
            higher_is_better=False,
            setting=_SETTING + "; KL(target || p), target uniform on the peaks",
            power=1.0,
        ),
        Claim(
            name="hand-set MultiMax keeps more peaks than sparsemax",
            metric="peaks_kept_multimax_hand",
            bounds=(0.0, 32.0),
            baseline="peaks_kept_sparsemax",
            paired=True,
            setting=_SETTING,
            power=1.0,
        ),
    ),
)
