"""A faithful miniature of LLark: key and tempo questions about rendered music, held-out tracks."""

from jaxlab.report import Claim, Experiment

_SETTING = (
    "rendered clips with exact labels, log-mel/chroma/onset features at 10 fps, 2-layer "
    "width-128 LM from scratch, template instructions; paper: Jukebox-5B + Llama-2-7B, "
    "zero-shot on GiantSteps/GTZAN/MusicNet (not comparable)"
)

EXPERIMENT = Experiment(
    name="llark_music",
    claims=(
        Claim(
            name="a linear audio projector lets the LM name the key far above the text-only LM",
            metric="key_score_full",
            bounds=(0.0, 1.0),
            baseline="key_score_text",
            paired=True,
            setting="weighted key score on held-out tracks and held-out phrasings; " + _SETTING,
            power=0.21,
        ),
        Claim(
            name="a linear audio projector lets the LM state the tempo above the text-only LM",
            metric="tempo_acc2_full",
            bounds=(0.0, 1.0),
            baseline="tempo_acc2_text",
            paired=True,
            unit="",
            diagnostic=True,
            setting="diagnostic: the text-only baseline sits at the metric's floor (0), so no "
            "result can contradict the claim; tempo Acc2 (4 %, ×2/×½/×3/×⅓) on held-out "
            "tracks and phrasings; " + _SETTING,
        ),
        Claim(
            name="the LM's key score is close to the specialist probe on the frozen features",
            metric="key_score_gap_to_probe",
            threshold=0.0,
            tolerance=0.1,
            higher_is_better=False,
            bounds=(-1.0, 1.0),
            diagnostic=True,
            threshold_source="equivalence with the probe; the paper reports no gap, and ±0.1 "
            "is the smallest gap worth reporting",
            test="matches",
            setting="diagnostic: 3 seeds cannot show equivalence within ±0.1 at the measured "
            "spread (sd ≈ 0.2); logistic-regression probe on time-pooled features minus the "
            "full model's weighted key score; " + _SETTING,
        ),
        Claim(
            name="captions mention the right key (vs the text-only LM)",
            metric="caption_key_score_full",
            bounds=(0.0, 1.0),
            baseline="caption_key_score_text",
            paired=True,
            setting="key parsed from generated captions, weighted score; " + _SETTING,
            power=1.0,
        ),
        Claim(
            name="a projector alone, LM frozen after text training, beats the text-only LM",
            metric="key_score_projector",
            bounds=(0.0, 1.0),
            baseline="key_score_text",
            paired=True,
            diagnostic=True,
            setting="ablation LLark does not run or claim (it trains both); weighted key "
            "score; " + _SETTING,
        ),
    ),
)
