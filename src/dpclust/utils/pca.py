"""Principal axes with a fixed sign: the same data give the same axes on every machine."""

from __future__ import annotations

import numpy as np


def flip_signs(components: np.ndarray) -> np.ndarray:
    """``components`` (axes as rows) each signed so that its largest loading is positive
    (as scikit-learn's ``svd_flip``): an axis's sign is otherwise arbitrary."""
    signs = np.sign(components[np.arange(components.shape[0]), np.argmax(np.abs(components), 1)])
    signs[signs == 0] = 1.0
    return components * signs[:, None]
