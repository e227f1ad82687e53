"""Stationary Latent Weight Inference for Unreliable Observations from Online TTA (Lee, Chang)."""

from jaxlab.report import Paper

PAPER = Paper(
    id="slwi",
    title="Stationary Latent Weight Inference for Unreliable Observations from Online "
    "Test-Time Adaptation",
    authors="Lee, Chang",
    venue="ICML 2024",
    code="",
    summary="filtering the adapted weights with a Kalman filter anchored to the source weights "
    "lowers online error on long shifting streams and limits forgetting, at small cost",
)
