"""CurBench on text: the non-vision curricula vs the baseline, classifying Shakespeare's plays."""

from jaxlab.report import Claim, Experiment

from .. import meta_cost_claims

_SMALL = "which of 4 plays a 96-character speech window is from; char n-gram bag, 10 epochs; "
_MODEL = "char n-gram bag on 4 Shakespeare plays"
EXPERIMENT = Experiment(
    name="curbench_text",
    paper="curbench",
    requires=("shakespeare",),
    claims=(
        Claim(
            name="curricula help clearly under label noise (noise-0.4)",
            metric="noise_best_cl_test_acc",
            power=0.46,
            bounds=(0.0, 100.0),
            baseline="noise_baseline_test_acc",
            unit="%",
            paired=True,
            setting=_SMALL + "best curriculum by validation accuracy, paired by seed; paper: "
            "LSTM on noisy SST-2 64.36 -> 78.58 (Table 3)",
        ),
        Claim(
            name="in the standard setting the best curriculum gains little (about +1 point)",
            metric="standard_gain",
            bounds=(-100.0, 100.0),
            paper=1.2,
            paper_source="Table 3",
            tolerance=1.5,
            power=0.93,
            unit=" points",
            setting=_SMALL + "best curriculum minus baseline, per seed; paper: +1.20 points, "
            "LSTM on SST-2 81.67 -> 82.87 (Table 3)",
        ),
        Claim(
            name="the gain under noise exceeds the gain in the standard setting",
            metric="noise_gain",
            power=0.93,
            bounds=(-100.0, 100.0),
            baseline="standard_gain",
            unit=" points",
            paired=True,
            setting=_SMALL + "gain = best curriculum minus baseline, paired by seed; paper: "
            "+14.22 vs +1.20 points (Table 3, LSTM, SST-2)",
        ),
        *meta_cost_claims(_MODEL, power=0.69),
    ),
)
