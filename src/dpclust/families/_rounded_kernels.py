"""The compiled Gibbs sweep of the rounded-data family's latent values
(:meth:`dpclust.families.gaussian_rounded.RoundedGaussian.draw_latents`)."""

from __future__ import annotations

import math

from numba import njit

from ..utils.truncnorm import truncated_draw


@njit(cache=True)
def latent_sweep(X, y, labels, mean, prec, cols, half, u, row, c):
    """One Gibbs sweep of ``y`` over the rounded columns ``cols`` (half-widths ``half``),
    rows in order, from row ``row`` and its ``c``-th rounded column: each ``y[i, j]`` from
    its Gaussian conditional given the row's other coordinates under cluster
    ``labels[i]``'s ``(mean, prec)`` (the precision matrix), truncated to ``X[i, j] +-
    half``, with the uniforms ``u``.  Returns ``(row, c)`` where the uniforms ran out, or
    ``(n, 0)`` when the sweep is done."""
    n, d = X.shape
    k = 0
    while row < n:
        g = labels[row]
        while c < cols.shape[0]:
            j = cols[c]
            acc = 0.0
            for l in range(d):
                if l != j:
                    acc += prec[g, j, l] * (y[row, l] - mean[g, l])
            pjj = prec[g, j, j]
            m = mean[g, j] - acc / pjj
            s = 1.0 / math.sqrt(pjj)
            z, k = truncated_draw((X[row, j] - half[c] - m) / s, (X[row, j] + half[c] - m) / s,
                                  u, k)
            if k < 0:
                return row, c
            y[row, j] = m + s * z
            c += 1
        c = 0
        row += 1
    return n, 0
