"""RP between an MLP and a conv U-Net EDM denoiser vs training-set size, and against D*."""

from jaxlab.report import Claim, Experiment

_SETTING = (
    "scikit-learn digits (8x8) instead of CIFAR-10, two small EDM denoisers (MLP, "
    "conv U-Net) instead of DDPM++, PCA proxy for SSCD, RP threshold at which 5 % of "
    "unrelated item pairs agree (paper: SSCD > 0.6); paired by seed (shared noises); "
    "paper has no number at this scale"
)

EXPERIMENT = Experiment(
    name="diffusion_reproducibility",
    paper="diffusion_reproducibility",
    claims=(
        Claim(
            name="memorization regime: RP(MLP, U-Net) at the smallest n is above chance",
            metric="digits_rp_ab_small",
            power=1.0,
            bounds=(0.0, 1.0),
            baseline="digits_rp_floor_small",
            unit="",
            paired=True,
            setting=_SETTING,
        ),
        Claim(
            name="generalization regime: RP(MLP, U-Net) at the largest n is above chance",
            metric="digits_rp_ab_large",
            power=0.0,
            bounds=(0.0, 1.0),
            baseline="digits_rp_floor_large",
            unit="",
            paired=True,
            setting=_SETTING,
        ),
        Claim(
            name="RP dips between the two regimes (digits)",
            metric="digits_rp_ends",
            power=0.98,
            bounds=(0.0, 1.0),
            baseline="digits_rp_middle",
            unit="",
            paired=True,
            setting=_SETTING + "; ends = min(RP at smallest, largest n), middle = min between",
        ),
        Claim(
            name="RP dips between the two regimes (mixture of low-rank Gaussians)",
            metric="molrg_rp_ends",
            power=0.97,
            bounds=(0.0, 1.0),
            baseline="molrg_rp_middle",
            unit="",
            paired=True,
            setting="mixture of 3 rank-4 Gaussians in R^64 (the paper's MoLRG setting, "
            "smaller); no paper number",
        ),
        Claim(
            name="at small n the MLP reproduces the optimal denoiser's samples",
            metric="digits_rp_mlp_dstar_small",
            power=1.0,
            bounds=(0.0, 1.0),
            baseline="digits_rp_floor_small",
            unit="",
            paired=True,
            setting=_SETTING,
        ),
        Claim(
            name="at small n the U-Net reproduces the optimal denoiser's samples",
            metric="digits_rp_unet_dstar_small",
            power=1.0,
            bounds=(0.0, 1.0),
            baseline="digits_rp_floor_small",
            unit="",
            paired=True,
            setting=_SETTING,
        ),
        # Threshold-free versions: the mean cosine of shared-noise pairs in the proxy space.
        # The three digits ones restate an RP claim above on the same samples (one finding,
        # tallied once): diagnostics.
        Claim(
            name="threshold-free: MLP and U-Net samples agree above chance at the smallest n",
            metric="digits_cos_ab_small",
            bounds=(-1.0, 1.0),
            diagnostic=True,
            baseline="digits_cos_floor_small",
            unit="",
            paired=True,
            setting=_SETTING + "; mean pair cosine, floor = mismatched noises",
        ),
        Claim(
            name="threshold-free: MLP and U-Net samples agree above chance at the largest n",
            metric="digits_cos_ab_large",
            bounds=(-1.0, 1.0),
            diagnostic=True,
            baseline="digits_cos_floor_large",
            unit="",
            paired=True,
            setting=_SETTING + "; mean pair cosine, floor = mismatched noises",
        ),
        Claim(
            name="threshold-free: at small n the MLP follows the optimal denoiser",
            metric="digits_cos_mlp_dstar_small",
            bounds=(-1.0, 1.0),
            diagnostic=True,
            baseline="digits_cos_floor_small",
            unit="",
            paired=True,
            setting=_SETTING + "; mean pair cosine with D*'s samples",
        ),
        Claim(
            name="threshold-free: MLP and U-Net agree above chance at the largest n (MoLRG)",
            metric="molrg_cos_ab_large",
            power=1.0,
            bounds=(-1.0, 1.0),
            baseline="molrg_cos_floor_large",
            unit="",
            paired=True,
            setting="mixture of 3 rank-4 Gaussians in R^64; mean pair cosine",
        ),
    ),
)
