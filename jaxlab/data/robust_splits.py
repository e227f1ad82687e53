"""The fixed node splits of Mujkanovic et al.'s adaptive-attack benchmark (``gb.data``).

Five stratified 10 % / 10 % / 80 % train/validation/test splits, drawn with scikit-learn's
``train_test_split`` at the seeds 1234, 2021, 1309, 4242 and 1998 — the splits of the
adaptive-attack experiments of Mujkanovic et al. (NeurIPS 2022) and of Table 2 of GADC
(ICML 2024; split 0 there).
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

SPLIT_SEEDS = (1234, 2021, 1309, 4242, 1998)


def stratified_split(
    labels: np.ndarray, seed: int, train: float = 0.1, val: float = 0.1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index arrays of a stratified train/validation/test split (``gb.data._three_split``).

    First ``train + val`` of the nodes are split off (stratified by label), then that part
    is split into train and validation (stratified again), both with ``random_state=seed``.

    Example:
      >>> from jaxlab.data.robust_splits import stratified_split
      >>> tr, va, te = stratified_split(np.repeat([0, 1], 50), 0)
      >>> len(tr), len(va), len(te)
      (10, 10, 80)
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be [n], got shape {labels.shape}")
    if not (0 < train and 0 < val and train + val < 1):
        raise ValueError(f"need 0 < train, 0 < val, train + val < 1; got {train}, {val}")
    idx = np.arange(labels.shape[0])
    idx_labelled, idx_test = train_test_split(
        idx, train_size=train + val, stratify=labels, random_state=seed
    )
    idx_train, idx_val = train_test_split(
        idx_labelled,
        train_size=train / (train + val),
        stratify=labels[idx_labelled],
        random_state=seed,
    )
    return idx_train, idx_val, idx_test


def mujkanovic_splits(labels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The five fixed 10/10/80 splits of ``gb.data.get_splits`` (one per :data:`SPLIT_SEEDS`)."""
    return [stratified_split(labels, seed) for seed in SPLIT_SEEDS]
