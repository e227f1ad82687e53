"""FLIPAD vs RawPAD and DCTPAD on an image miniature of the paper's Tables 1-2 (8×8 digits,
generators whose last layer is a transposed convolution followed by tanh)."""

from jaxlab.report import Claim, Experiment

_SETTING = (
    "scikit-learn digits (8x8) and three small VAE decoders with a stride-2 "
    "conv-transpose + tanh last layer (two seeds of one architecture, one other) "
    "instead of DCGAN/WGAN-GP/LSGAN/EBGAN on CelebA/LSUN at 64x64; each generator "
    "is the target in turn, pairs = (target, outsider); no paper number at this scale"
)
_NOISY = (
    _SETTING + "; Gaussian noise (std 0.02 of the 8-bit range) on the test queries, "
    "detector trained on clean images"
)
_IMMUNE = (
    _SETTING + "; Gaussian noise (std 0.05 of the 8-bit range, the reference's "
    "Table 3 value) on training and test images (its immunization)"
)


def _claim(name, metric, baseline, setting=_SETTING, power=None):
    return Claim(
        name=name,
        metric=metric,
        baseline=baseline,
        unit="",
        setting=setting,
        paired=True,
        bounds=(0.0, 1.0),
        power=power,
    )


EXPERIMENT = Experiment(
    name="flipad_images",
    paper="flipad",
    claims=(
        _claim(
            "FLIPAD beats RawPAD on mean AUC over (target, outsider) pairs (images)",
            "flipad_auc_mean",
            "rawpad_auc_mean",
            power=0.91,
        ),
        _claim(
            "FLIPAD beats DCTPAD on mean AUC over (target, outsider) pairs (images)",
            "flipad_auc_mean",
            "dctpad_auc_mean",
            power=0.89,
        ),
        _claim(
            "FLIPAD beats RawPAD against the same architecture with another seed (images)",
            "flipad_auc_same_arch",
            "rawpad_auc_same_arch",
            power=0.97,
        ),
        _claim(
            "FLIPAD beats DCTPAD against the same architecture with another seed (images)",
            "flipad_auc_same_arch",
            "dctpad_auc_same_arch",
            power=0.83,
        ),
        _claim(
            "FLIPAD beats RawPAD with Gaussian noise on the queries (images)",
            "flipad_noisy_auc_mean",
            "rawpad_noisy_auc_mean",
            _NOISY,
            power=0.85,
        ),
        _claim(
            "FLIPAD beats DCTPAD with Gaussian noise on the queries (images)",
            "flipad_noisy_auc_mean",
            "dctpad_noisy_auc_mean",
            _NOISY,
            power=0.797,
        ),
        _claim(
            "FLIPAD beats RawPAD with noise on training and test images (images)",
            "flipad_immune_auc_mean",
            "rawpad_immune_auc_mean",
            _IMMUNE,
            power=0.92,
        ),
        _claim(
            "FLIPAD beats DCTPAD with noise on training and test images (images)",
            "flipad_immune_auc_mean",
            "dctpad_immune_auc_mean",
            _IMMUNE,
            power=1.0,
        ),
    ),
)
