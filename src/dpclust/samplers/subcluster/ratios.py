"""The pieces of the sub-cluster sampler's Hastings ratios, written once: the data pass's
``w(z)``, the target ratio of a split, the proposal and anchor part of a split or merge, and
the merge ratios that targeted pairs and multi-way sets are chosen by (the module notes of
:mod:`dpclust.samplers.subcluster` give every term).

References
----------
Chang, J. & Fisher III, J. W. (2013). Parallel sampling of DP mixture models using
    sub-cluster splits. NIPS (eq. 21: the target ratio of a split).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from ...families.base import concatenate, take

#: ``epsilon`` of the data pass's weights ``Dir(N_k - 1 + epsilon)`` (module notes)
PASS_WEIGHT_OFFSET = 0.1

#: groups of more clusters than this pick merge pairs uniformly (``merge_pairs``) ...
TARGETED_PAIRS_MAX = 64
#: ... and so do groups whose pairs' statistics add up to more numbers than this
PAIR_SCORE_BUDGET = 4_000_000


def _log_pass_weight(counts, prior, alpha) -> float:
    """``log w(z)`` of the data pass's Metropolis-Hastings ratio ``w(z') / w(z)`` (module
    notes): ``log p(z) - sum_k [log N_k + log Gamma(N_k - 1 + epsilon)]``, with ``p(z)`` the
    partition prior's EPPF (``prod_k Gamma(N_k)`` and a factor of K and N for the Dirichlet
    process; K and N are fixed in the pass, so only the sizes' factors ``W(N_k)`` of a
    Gibbs-type prior change)."""
    n = np.asarray(counts, dtype=np.float64)
    return float(prior.log_eppf(n, alpha)
                 - np.sum(np.log(n) + gammaln(n - 1.0 + PASS_WEIGHT_OFFSET)))


def _log_beta(a, b):
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _split_log_ratio(logf_l, logf_r, logf_c, n_l, n_r, alpha):
    """``log alpha + lgamma(N_l) + lgamma(N_r) - lgamma(N_c) + log f(X_l) + log f(X_r)
    - log f(X_c)``: the target ratio of a split (Mathematics §3), from the parts'
    log marginals; elementwise over arrays of splits."""
    return (math.log(alpha) + gammaln(n_l) + gammaln(n_r) - gammaln(n_l + n_r)
            + logf_l + logf_r - logf_c)


def _log_split_target(fam, left, right, both, n_l, n_r, alpha):
    """:func:`_split_log_ratio` of one split given the statistics of its parts."""
    logf = fam.log_marginal(concatenate(left, right, both))
    return float(_split_log_ratio(logf[0], logf[1], logf[2], n_l, n_r, alpha))


def _log_anchored_split(n_a: int, n_b: int, k_g: int, log_q: float, one_sided: bool = False,
                        log_pair: float | None = None):
    """The proposal and anchor part of the log Hastings ratio of splitting a cluster of a
    group of ``k_g`` clusters into sides of ``n_a`` and ``n_b`` points (the target ratio
    apart); a merge's is minus this, with ``k_g`` the group's size after the merge.

    Forward: the cluster (``rho(k_g) / k_g``), its second anchor j (uniform over its other
    ``N_c - 1`` points) and the allocation of the rest (``q``).
    Reverse: the pair (``(1 - rho(k_g + 1)) P(pair)``, ``P(pair) = 1 / C(k_g + 1, 2)``
    unless ``log_pair`` is given) and which one is side 0 (1/2;
    a one-sided (grow or pinch) merge grows the smaller cluster, so 1 unless the two are the
    same size, and a one-sided split whose side 1 is the larger is never made).
    The anchors are auxiliary variables, uniform members: ``1 / (N_a N_b)`` after, ``1 / N_c``
    before."""
    n_c = n_a + n_b
    forward = math.log(_p_split(k_g)) - math.log(k_g) - math.log(n_c - 1.0) + log_q
    if log_pair is None:
        log_pair = -math.log(math.comb(k_g + 1, 2))
    reverse = math.log(1.0 - _p_split(k_g + 1)) + log_pair
    if not one_sided or n_a == n_b:
        reverse -= math.log(2.0)
    anchors = math.log(n_c) - math.log(n_a) - math.log(n_b)
    return anchors + reverse - forward


def _p_split(k_g: int) -> float:
    """Probability that a group of ``k_g`` clusters proposes a split rather than a merge."""
    return 1.0 if k_g == 1 else 0.5


def _pairs_max(stats) -> int:
    """The most cluster pairs whose merge ratios one set of moves scores:
    ``C(TARGETED_PAIRS_MAX, 2)``, fewer where a cluster's statistics are large (a pair costs a
    log marginal: 61,188 words allow 65 pairs, 11 clusters)."""
    row = sum(int(np.asarray(a)[0].size) for a in stats)
    return int(min(math.comb(TARGETED_PAIRS_MAX, 2), PAIR_SCORE_BUDGET // max(row, 1)))


def _merge_log_ratios(fam, stats, n, alpha, i, j) -> np.ndarray:
    """Log target ratio of merging clusters ``i[t]`` and ``j[t]`` (rows of ``stats`` and
    ``n``), for each pair: the targeted pairs' and the multi-way merge sets' weights."""
    single = np.unique(np.concatenate([i, j]))
    logf = np.zeros(int(single.max()) + 1)
    logf[single] = fam.log_marginal(take(stats, single))
    both = fam.log_marginal_unions(stats, i, j)
    return -_split_log_ratio(logf[i], logf[j], both, n[i], n[j], alpha)
