"""The Normal-Inverse-Wishart family's log marginal of many complete blocks of rows at
once, in NumPy: what the exact posteriors of the augmented Gaussian families (holes,
rounded values) integrate over their latent cells."""

from __future__ import annotations

import numpy as np
from scipy.special import multigammaln


def niw_log_marginal_batched(niw, blocks):
    """``log f(X)`` of the NIW family for many complete blocks at once, (G, r, d)."""
    m0, kappa0, nu0, S0 = niw._hyper()
    _, r, d = blocks.shape
    mean = blocks.mean(axis=1)
    c = blocks - mean[:, None, :]
    scatter = np.einsum("gra,grb->gab", c, c)
    kn, nn = kappa0 + r, nu0 + r
    diff = mean - m0
    Sn = S0 + scatter + (kappa0 * r / kn) * diff[:, :, None] * diff[:, None, :]
    return (-0.5 * r * d * np.log(np.pi) + multigammaln(0.5 * nn, d)
            - multigammaln(0.5 * nu0, d) + 0.5 * nu0 * np.linalg.slogdet(S0)[1]
            - 0.5 * nn * np.linalg.slogdet(Sn)[1] + 0.5 * d * (np.log(kappa0) - np.log(kn)))
