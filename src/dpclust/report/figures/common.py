"""What every figure of the report shares: labels checked as integers, clusters ranked by
size, and the fixed-seed subsample of the points that are drawn."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["MAX_PLOT_POINTS", "SUBSAMPLE_SEED", "as_labels", "clusters_by_size",
           "subsample_indices"]

MAX_PLOT_POINTS = 20_000
"""At most this many points are drawn in a scatter plot (a fixed-seed subsample)."""

SUBSAMPLE_SEED = 0
"""Seed of every random choice a figure makes (subsample, jitter, truncated SVD)."""


def as_labels(labels: Any) -> np.ndarray:
    """Labels as a 1-D int array."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}")
    if (labels.size and not np.issubdtype(labels.dtype, np.integer)
            and not np.all(np.equal(np.mod(labels, 1), 0))):
        raise ValueError("labels must be integers")
    return labels.astype(np.int64, copy=False)


def clusters_by_size(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels and sizes of the clusters present, largest first (ties by label)."""
    ids, counts = np.unique(labels, return_counts=True)
    order = np.lexsort((ids, -counts))
    return ids[order], counts[order]


def subsample_indices(n_samples: int, max_points: int = MAX_PLOT_POINTS) -> np.ndarray:
    """Sorted indices of at most ``max_points`` of ``n_samples`` points, always the same ones.

    Uses a fixed-seed local generator, so the same data give the same figure.
    """
    if n_samples <= max_points:
        return np.arange(n_samples)
    rng = np.random.default_rng(SUBSAMPLE_SEED)
    return np.sort(rng.choice(n_samples, size=max_points, replace=False))
