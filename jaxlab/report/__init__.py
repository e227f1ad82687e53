"""Papers, experiments and claims; the reproduce runner and its report."""

from jaxlab.report.configs import PRESETS, base_config
from jaxlab.report.paper_presets import PaperSetting
from jaxlab.report.registry import Claim, Experiment, Paper

__all__ = ["PRESETS", "Claim", "Experiment", "Paper", "PaperSetting", "base_config"]
