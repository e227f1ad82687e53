"""jaxlab.optim: optimizers as optax-style transformations (μ²-SGD, worker momentum)."""

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
    "AnyTimeState",
    "Mu2SGDState",
    "StormState",
    "WorkerMomentumState",
    "anytime_averaging",
    "mu2sgd",
    "storm",
    "worker_momentum",
]
