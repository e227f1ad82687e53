"""Papers, experiments and claims; the reproduce runner and its report."""

from jaxlab.report.configs import PRESETS, base_config
from jaxlab.report.registry import Claim, Experiment, Paper

__all__ = ["PRESETS", "Claim", "Experiment", "Paper", "base_config"]
