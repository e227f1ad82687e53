"""MCF (ICML 2024) on QM9: COV/MAT of a PerceiverIO conformer diffusion model."""

from jaxlab.report import Claim, Experiment

_SETTING = (
    "QM9 (qm9pack) single DFT reference per molecule, 2 samples, tiny model trained minutes on "
    "CPU (paper: GEOM-QM9 CREST ensembles, MCF-B, 300k steps); per seed the mean over 60 test "
    "molecules"
)

EXPERIMENT = Experiment(
    name="mcf_qm9",
    requires=("qm9",),
    claims=(
        Claim("MCF coverage COV-R (δ = 0.5 Å)", "cov_r", paper=0.950, setting=_SETTING,
              tolerance=0.05),
        Claim("MCF matching MAT-R", "mat_r", paper=0.103, higher_is_better=False,
              setting=_SETTING, tolerance=0.05, unit=" Å"),
        Claim("MCF beats random coordinates (MAT-R)", "mat_r", higher_is_better=False,
              baseline="random_mat_r", setting=_SETTING, unit=" Å", paired=True),
        Claim("MCF vs RDKit ETKDGv3 (COV-R)", "cov_r", baseline="etkdg_cov_r", paired=True,
              setting=_SETTING),
        Claim("MCF vs RDKit ETKDGv3 (MAT-R)", "mat_r", higher_is_better=False,
              baseline="etkdg_mat_r", setting=_SETTING, paired=True, unit=" Å"),
        Claim("MCF vs RDKit ETKDGv3 (COV-P)", "cov_p", baseline="etkdg_cov_p", paired=True,
              setting=_SETTING),
        Claim("MCF vs RDKit ETKDGv3 (MAT-P)", "mat_p", higher_is_better=False,
              baseline="etkdg_mat_p", setting=_SETTING, paired=True, unit=" Å"),
        Claim("MCF median MAT-R vs ETKDGv3", "mat_r_median", higher_is_better=False,
              baseline="etkdg_mat_r_median", setting=_SETTING, paired=True, unit=" Å"),
        Claim("Molecules rejected by the featuriser (counted, listed in rejected.json)",
              "num_rejected", higher_is_better=False, diagnostic=True, deterministic=True,
              setting="bookkeeping of the dataset build, not a claim of the paper"),
    ),
)
