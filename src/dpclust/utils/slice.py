"""Univariate slice sampling (Neal 2003): the update of a learned scalar (a family's
hyperparameter, a prior's strength) from its conditional, which needs no tuning.

References
----------
Neal, R. M. (2003). Slice sampling. Annals of Statistics 31(3), 705-767 (figures 3 and 5:
    stepping out and shrinkage).
"""

from __future__ import annotations

import math

#: the slice sampler's initial window (on the log scale of a positive value: an e-fold
#: either way)
SLICE_WIDTH = 1.0
#: the most steps the window is stepped out on each side
SLICE_STEPS = 20


def slice_log(rng: np.random.Generator, log_target, x0: float, width: float = SLICE_WIDTH,
              max_steps: int = SLICE_STEPS) -> float:
    """One slice-sampling update of a scalar ``x`` with unnormalised log density
    ``log_target(x)``, from ``x0`` (Neal 2003, stepping out then shrinkage).

    The window's placement and the stepping-out budget split are drawn first, so the
    update leaves the density invariant for any ``width`` and ``max_steps``.
    """
    f0 = log_target(x0)
    if not math.isfinite(f0):
        raise ValueError(f"the slice sampler started at a point of zero density ({x0})")
    level = f0 + math.log(rng.random())  # log of the slice's height: f0 - Exp(1)
    left = x0 - width * rng.random()
    right = left + width
    j = int(math.floor(max_steps * rng.random()))
    k = max_steps - 1 - j
    while j > 0 and log_target(left) > level:
        left -= width
        j -= 1
    while k > 0 and log_target(right) > level:
        right += width
        k -= 1
    while True:
        x = left + (right - left) * rng.random()
        if log_target(x) > level:
            return x
        if x < x0:
            left = x
        else:
            right = x


def slice_positive(rng, log_density, value: float) -> float:
    """One slice-sampling update of a positive scalar with unnormalised log density
    ``log_density(value)``, on ``u = log value`` (the Jacobian ``value`` included)."""

    def target(u: float) -> float:
        if not -700.0 < u < 700.0:
            return -math.inf
        out = log_density(math.exp(u)) + u
        return out if math.isfinite(out) else -math.inf

    return math.exp(slice_log(rng, target, math.log(value)))


def slice_unit(rng, log_density, value: float) -> float:
    """One slice-sampling update of a scalar in (0, 1) with unnormalised log density
    ``log_density(value)``, on its logit ``u = log(value / (1 - value))`` (the Jacobian
    ``value (1 - value)`` included)."""

    def target(u: float) -> float:
        if not -700.0 < u < 700.0:
            return -math.inf
        x = 1.0 / (1.0 + math.exp(-u))
        if not 0.0 < x < 1.0:
            return -math.inf
        out = log_density(x) + math.log(x) + math.log1p(-x)
        return out if math.isfinite(out) else -math.inf

    u = slice_log(rng, target, math.log(value) - math.log1p(-value))
    return 1.0 / (1.0 + math.exp(-u))
