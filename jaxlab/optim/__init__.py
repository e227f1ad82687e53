"""jaxlab.optim: optimizers as optax-style transformations (μ²-SGD, worker momentum) and
input optimisation of ReLU networks (ADR-GD)."""

from jaxlab.optim.adr_gd import (
    ADRGDResult,
    adr_gd,
    projected_gradient_ascent,
    random_relu_mlp,
    reference_random_relu_mlp,
    relu_mlp,
)
from jaxlab.optim.momentum import WorkerMomentumState, worker_momentum
from jaxlab.optim.mu2sgd import (
    AnyTimeState,
    Mu2SGDState,
    StormState,
    anytime_averaging,
    mu2sgd,
    storm,
)

__all__ = [
    "ADRGDResult",
    "AnyTimeState",
    "Mu2SGDState",
    "StormState",
    "WorkerMomentumState",
    "adr_gd",
    "anytime_averaging",
    "mu2sgd",
    "projected_gradient_ascent",
    "random_relu_mlp",
    "reference_random_relu_mlp",
    "relu_mlp",
    "storm",
    "worker_momentum",
]
