"""Exact draws from the standard normal truncated to intervals ``[a, b]``, compiled, with
uniforms from an explicit generator: what the rounded-data family draws its latent values
with (:mod:`dpclust.families.gaussian_rounded`).

Every draw is a rejection sampler, so it is exact whatever the interval; the proposal is
chosen per interval so that a proposal is accepted with probability at least about 0.2
(Robert 1995).  With the interval reflected so that ``b >= 0``:

* containing 0 and narrower than 2.5: uniform proposals on ``[a, b]``, accepted with
  probability ``exp(-z^2 / 2)``;
* containing 0 and wider: standard normal proposals (Box–Muller), kept when in ``[a, b]``;
* above 0 (``0 < a < b``) and narrow against the tail's scale (``(b - a) max(a, 1) < 1``):
  uniform proposals accepted with probability ``exp((a^2 - z^2) / 2)``;
* otherwise: Robert's translated exponential, ``z = a + E / lambda`` with ``E ~ Exp(1)``
  and ``lambda = (a + sqrt(a^2 + 4)) / 2``, kept when ``z <= b`` and then accepted with
  probability ``exp(-(z - lambda)^2 / 2)``.

Each proposal reads two uniforms from a buffer drawn by the caller's generator
(:func:`truncated_draw`); when the buffer runs out the draw reports it, and the caller
draws a new buffer and proposes again (the refused proposals' uniforms are independent of
the next ones, so restarting the interval is the same rejection sampler).

References
----------
Robert, C. P. (1995). Simulation of truncated normal variables. *Statistics and Computing*
    5(2), 121-125.
Box, G. E. P. & Muller, M. E. (1958). A note on the generation of random normal deviates.
    *Annals of Mathematical Statistics* 29(2), 610-611.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: an interval containing 0 and at least this wide takes normal proposals
_WIDE = 2.5
#: uniforms drawn per value still to draw (about three proposals of two uniforms)
BUFFER_PER_DRAW = 6


@njit(cache=True)
def truncated_draw(a, b, u, k):
    """``(z, k')``: one draw of ``N(0, 1)`` on ``[a, b]`` (``a < b``, finite) from the
    uniforms ``u[k:]``, two per proposal, with ``k'`` the next unread index; ``k' = -1``
    when the buffer ran out before a proposal was accepted (module notes)."""
    flip = b < 0.0
    if flip:
        a, b = -b, -a
    width = b - a
    n = u.shape[0]
    while k + 1 < n:
        u1, u2 = u[k], u[k + 1]
        log_u2 = math.log(1.0 - u2)  # 1 - u in (0, 1]
        k += 2
        if a <= 0.0:
            if width < _WIDE:
                z = a + width * u1
                ok = log_u2 <= -0.5 * z * z
            else:
                z = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
                ok = a <= z <= b
        elif width * max(a, 1.0) < 1.0:
            z = a + width * u1
            ok = log_u2 <= 0.5 * (a * a - z * z)
        else:
            lam = 0.5 * (a + math.sqrt(a * a + 4.0))
            z = a - math.log(1.0 - u1) / lam
            ok = z <= b and log_u2 <= -0.5 * (z - lam) * (z - lam)
        if ok:
            return (-z if flip else z), k
    return 0.0, -1


@njit(cache=True)
def _fill(a, b, out, start, u):
    """Draw ``out[i]`` for ``i`` from ``start`` until ``u`` runs out; returns the first
    ``i`` not drawn."""
    k = 0
    for i in range(start, a.shape[0]):
        z, k = truncated_draw(a[i], b[i], u, k)
        if k < 0:
            return i
        out[i] = z
    return a.shape[0]


def truncated_standard_normal(rng: np.random.Generator, a, b) -> np.ndarray:
    """One draw of ``Z ~ N(0, 1)`` conditioned on ``a <= Z <= b`` per pair of bounds
    (arrays of one shape, ``a < b``, finite); returns an array of that shape."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"bounds of shapes {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("the bounds of a truncated normal must be finite")
    if np.any(b <= a):
        raise ValueError("each interval of a truncated normal needs a < b")
    lo, hi = np.ascontiguousarray(a.ravel()), np.ascontiguousarray(b.ravel())
    out = np.empty(lo.size)
    i = 0
    while i < lo.size:
        i = _fill(lo, hi, out, i, rng.random(BUFFER_PER_DRAW * (lo.size - i) + 64))
    return out.reshape(a.shape)


__all__ = ["truncated_draw", "truncated_standard_normal", "BUFFER_PER_DRAW"]
