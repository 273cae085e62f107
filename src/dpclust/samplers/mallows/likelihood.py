"""The density of an instantiated Mallows sampler's state: the log-likelihood of the rankings
given each cluster's ``(sigma, theta)``, and the joint with the partition and parameter
priors (Meilă & Chen 2010, equations (2)-(3) and the DP mixture of section 3)."""

from __future__ import annotations

import numpy as np

from ...families.mallows import GeneralizedMallows, MallowsParams, cumulative_log_psi
from ...kernels.mallows import scoring as _k
from ...priors import crp_log_prior
from ._helpers import _ranks


def instantiated_log_likelihood(fam: GeneralizedMallows, X, labels,
                                params: MallowsParams) -> float:
    """``sum_i log GM(pi_i | sigma_{z_i}, theta_{z_i})``."""
    labels = np.asarray(labels, dtype=np.int64)
    cum = cumulative_log_psi(params.theta, fam.n_items_)
    return float(_k.instantiated_log_likelihood(X.orders, X.lengths, labels,
                                                _ranks(params.order), params.theta, cum))


def instantiated_log_joint(fam: GeneralizedMallows, X, labels, params: MallowsParams,
                           alpha: float) -> float:
    """``log p(z | alpha) + sum_c log P0(sigma_c, theta_c) + sum_i log GM(pi_i | sigma_{z_i},
    theta_{z_i})``: the joint density of the state of an instantiated sampler."""
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(labels, minlength=params.order.shape[0])
    log_partition_prior = crp_log_prior(counts, alpha)
    return float(log_partition_prior + fam.log_prior(params).sum()
                 + instantiated_log_likelihood(fam, X, labels, params))
