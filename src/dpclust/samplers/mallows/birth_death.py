"""Exact birth and death of components for DP mixtures of Generalized Mallows models.

Birth and death of components (``birth_death=M``: M proposals per iteration, off by default).
The split-merge moves (:mod:`.split_merge`) draw the allocation first and the parameters
given it, so the reverse of a merge must propose the current partition of the two clusters,
one of a vast number of nearly equally good ones when clusters overlap.  These moves draw
the parameters first and the allocation from its conditional given them, so the partition
leaves the ratio:

* *Birth* in a uniform cluster ``c`` (rankings ``S``): a new component ``phi_b`` from a
  proposal that reads ``S`` and ``phi_c`` but never the allocation (a seed ranking of ``S``
  uniformly; ``sigma_b ~ GM(seed's items, then the others in sigma_c's order; theta_p = 1)``
  over whole permutations; ``theta_b`` from its conditional density given sigma_b at the
  rankings' responsibilities ``GM_b / (GM_b + GM_c)``); a proportion ``rho ~ Beta(m_c + 1,
  m_b + 1)`` at the soft counts; each ranking of ``S`` to ``c`` or ``b`` from ``rho GM_c :
  (1 - rho) GM_b``.  ``c`` keeps its parameters.
* *Death* of ``b`` into ``a`` (an ordered pair of clusters, uniform): the rankings of ``b``
  join ``a``; ``rho ~ Beta(n_a + 1, n_b + 1)``, the reverse birth's proportion, is an
  auxiliary variable whose density turns the CRP's Gamma terms into a polynomial.

The birth's log ratio is ``log alpha + log [n_c (n_c + 1) / (n_a n_b)] + log P0(phi_b) -
log q(phi_b) - log q(rho) + sum_{pi in S} log [rho + (1 - rho) GM_b(pi) / GM_c(pi)] -
log(K + 1)``: the mixture likelihood of ``S`` with the new component against without it
(:class:`_BirthDeath`).  Exact (``tests/test_mallows.py``), but on the Dublin West ballots
they are accepted about once in a thousand proposals: on an equilibrated state of 10,000
ballots (47 clusters) the death of a cluster into another loses a median 830 nats of that
mixture likelihood (only clusters of one ranking die), and a birth from a seed ranking fits
its share of the rankings worse than the cluster does (median -15 nats).  On 2,000 ballots
(18 clusters) deaths lose a median 440 nats, and births that fit their central ranking to
the rankings a seed stands for (the stagewise distribution of the responsibility-weighted
rankings, a mixture over 8 auxiliary seeds: tried, not kept) gain a median -1 nats of
mixture likelihood (at best +10) but pay the prior's price of a component (log 9! = 12.8
nats for sigma, about 5 for theta), so their log ratio is a median -23, as with the seed
proposal kept here.  The clusters are not redundant, and a new one is worth less than its
price; what moves slowly is how the components tile the rankings, which neither kind of
move changes.

References
----------
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit
from scipy.stats import beta as beta_dist

from ...kernels.mallows import model as gmk
from ...families.mallows import MallowsParams
from ..base import relabel
from ...kernels.mallows import birth_death as _k
from ._helpers import _ranks

#: dispersion of the birth's central-ranking proposal around its seed ranking
_BIRTH_THETA = 1.0


class _BirthDeath:
    """Exact birth and death of components inside a pair of clusters, with the allocation
    drawn from the proposed parameters (see the module notes).

    *Birth* in cluster ``c`` (members ``S``, parameters ``phi_c``): a new component ``phi_b =
    (sigma_b, theta_b)`` from a proposal that reads the rankings of ``S`` and ``phi_c`` but
    never the allocation (:meth:`_birth`), a share ``rho`` of ``S`` for ``c`` from ``Beta(m_a +
    1, m_b + 1)`` at the rankings' soft counts, then each ranking of ``S`` to ``c`` or to the
    new cluster from its conditional ``rho GM_c : (1 - rho) GM_b``.  *Death* of ``b`` into
    ``a``: every ranking of ``b`` goes to ``a``, whose parameters stay; ``rho`` is drawn
    from ``Beta(n_a + 1, n_b + 1)``, an auxiliary variable of the reverse birth.  Because the
    allocation is drawn from its conditional given ``(rho, phi_a, phi_b)``, the partition of
    ``S`` leaves the ratio, whatever its volume, and the birth's log ratio is

        log alpha + log [n_c (n_c + 1) / (n_a n_b)] + log P0(phi_b) - log q(phi_b) - log q(rho)
        + sum_{pi in S} log [rho + (1 - rho) GM_b(pi) / GM_c(pi)] - log(K + 1),

    the last term the selection probabilities (a birth in a uniform cluster of the ``K``, a
    death of an ordered pair uniform among the ``(K + 1) K`` of the other state); a death's
    is its negative, at the current clusters.
    """

    def __init__(self, fam, X, rng, theta_p=_BIRTH_THETA):
        self.orders, self.lengths = X.orders, X.lengths
        self.first, self.inverse = X.distinct()
        self.n = n = fam.n_items_
        self.J = J = fam.max_length_
        self.nu_r = fam.nu_r_
        self.nu = float(fam.nu)
        self.fam = fam
        self.theta_p = float(theta_p)
        self.state = np.uint64(rng.integers(0, 2**63 - 1))
        self.cum = np.zeros(J + 1)
        self.code = np.zeros(max(J, 1), dtype=np.int64)
        self.S = np.zeros(J)
        self.Nj = np.zeros(J)
        self.centre = np.zeros(n, dtype=np.int64)
        self.crank = np.zeros(n, dtype=np.int64)
        self.left = np.zeros(n, dtype=np.int64)
        self.hull = np.empty((3, gmk._MAX_HULL))

    def _distinct(self, members):
        """The distinct rankings among ``members``: representatives, each member's index
        among them, and their counts."""
        uniq, loc, cnt = np.unique(self.inverse[members], return_inverse=True,
                                   return_counts=True)
        return self.first[uniq], loc.reshape(-1), cnt.astype(np.float64)

    def _scores(self, reps, order_row, theta_row):
        out = np.empty(len(reps))
        _k.component_scores(self.orders, self.lengths, reps, _ranks(order_row[None, :])[0],
                            theta_row, self.n, self.cum, out)
        return out

    def _birth(self, reps, cnt, order_a, theta_a, l_a, order_b=None, theta_b=None):
        """Draw the new component (``order_b=None``) or score the given one: returns
        ``(order_b, theta_b, log q(phi_b), l_b)``, ``l_b`` its log GM of each
        representative."""
        draw = order_b is None
        if draw:
            order_b = np.empty(self.n, dtype=np.int64)
            theta_b = np.empty(self.J)
        log_w = np.log(cnt / cnt.sum())
        state, lq_sigma = _k.central_proposal(
            self.orders, self.lengths, reps, log_w, order_a, self.theta_p, draw, order_b,
            self.state, self.centre, self.crank, self.left)
        state, lq_theta = _k.theta_proposal(
            self.orders, self.lengths, reps, cnt, l_a, _ranks(order_b[None, :])[0],
            np.asarray(theta_a),
            self.nu_r, self.nu, self.n, draw, theta_b, np.uint64(state), self.cum, self.code,
            self.S, self.Nj, *self.hull)
        self.state = np.uint64(state)
        return order_b, theta_b, lq_sigma + lq_theta, self._scores(reps, order_b, theta_b)

    @staticmethod
    def _soft(cnt, l_a, l_b):
        """Soft count of the new component: ``sum cnt GM_b / (GM_a + GM_b)``."""
        return float((cnt * expit(l_b - l_a)).sum())

    def _log_ratio(self, log_alpha, k_merged, cnt, l_a, l_b, soft, rho, n_a, n_b, log_q,
                   order_b, theta_b):
        """The birth's log Hastings ratio (class notes); ``soft`` is :meth:`_soft`."""
        n_c = n_a + n_b
        log_q_rho = float(beta_dist.logpdf(rho, n_c - soft + 1.0, soft + 1.0))
        mix = float((cnt * np.logaddexp(math.log(rho), math.log1p(-rho) + l_b - l_a)).sum())
        return (log_alpha + math.log(n_c) + math.log(n_c + 1.0) - math.log(n_a)
                - math.log(n_b) + float(self.fam.log_prior(
                    MallowsParams(order_b[None, :], theta_b[None, :]))[0])
                - log_q - log_q_rho + mix
                - math.log(k_merged + 1.0))

    def birth(self, rng, labels, order, theta, log_alpha, c, k):
        """Propose a birth in cluster ``c`` (``k`` clusters); True when accepted."""
        members = np.flatnonzero(labels == c)
        n_c = len(members)
        if n_c < 2:
            return False
        reps, loc, cnt = self._distinct(members)
        l_a = self._scores(reps, order[c], theta[c])
        order_b, theta_b, log_q, l_b = self._birth(reps, cnt, order[c], theta[c], l_a)
        soft = self._soft(cnt, l_a, l_b)
        rho = float(rng.beta(n_c - soft + 1.0, soft + 1.0))
        if not 0.0 < rho < 1.0:
            return False
        # each ranking to the new component with probability (1 - rho) GM_b / (...)
        p_b = expit(math.log1p(-rho) - math.log(rho) + l_b - l_a)
        to_b = rng.random(n_c) < p_b[loc]
        n_b = int(to_b.sum())
        if n_b == 0 or n_b == n_c:
            return False  # an empty cluster: outside the state space
        log_ratio = self._log_ratio(log_alpha, k, cnt, l_a, l_b, soft, rho, n_c - n_b, n_b,
                                    log_q, order_b, theta_b)
        if math.log1p(-rng.random()) >= log_ratio:
            return False
        labels[members[to_b]] = len(order)
        order.append(order_b)
        theta.append(theta_b)
        return True

    def death(self, rng, labels, order, theta, log_alpha, a, b, k):
        """Propose the death of cluster ``b`` into ``a`` (``k`` clusters); True when
        accepted."""
        in_a = labels == a
        in_b = labels == b
        members = np.flatnonzero(in_a | in_b)
        n_a, n_b = int(in_a.sum()), int(in_b.sum())
        reps, _, cnt = self._distinct(members)
        l_a = self._scores(reps, order[a], theta[a])
        _, _, log_q, l_b = self._birth(reps, cnt, order[a], theta[a], l_a, order[b],
                                       theta[b])
        rho = float(rng.beta(n_a + 1.0, n_b + 1.0))
        if not 0.0 < rho < 1.0:
            return False
        log_ratio = -self._log_ratio(log_alpha, k - 1, cnt, l_a, l_b,
                                     self._soft(cnt, l_a, l_b), rho, n_a, n_b, log_q,
                                     order[b], theta[b])
        if math.log1p(-rng.random()) >= log_ratio:
            return False
        labels[in_b] = a
        return True

    def run(self, rng, labels, order, theta, alpha, n_moves):
        """``n_moves`` proposals, each a birth (probability 1/2, in a uniform cluster) or a
        death (an ordered pair of clusters, uniform); returns the new ``(labels, order,
        theta)`` (clusters compacted) and the numbers of accepted births and deaths."""
        labels = np.array(labels, dtype=np.int64)
        order = [row.copy() for row in order]
        theta = [row.copy() for row in theta]
        log_alpha = math.log(alpha)
        births = deaths = 0
        for _ in range(n_moves):
            live = np.flatnonzero(np.bincount(labels, minlength=len(order)))
            k = len(live)
            if rng.random() < 0.5:
                c = int(live[rng.integers(k)])
                births += self.birth(rng, labels, order, theta, log_alpha, c, k)
            elif k >= 2:
                a, b = rng.choice(live, 2, replace=False)
                deaths += self.death(rng, labels, order, theta, log_alpha, int(a), int(b), k)
        labels, old_ids = relabel(labels)
        order = np.ascontiguousarray(np.array(order)[old_ids])
        theta = np.ascontiguousarray(np.array(theta)[old_ids])
        return labels, order, theta, births, deaths
