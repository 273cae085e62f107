"""Exact split-merge moves for DP mixtures of Generalized Mallows models.

Split-merge moves (``split_merge=M``: M proposals per iteration).  Moving one ranking at a
time cannot split or merge clusters of hundreds of rankings, so both samplers can add exact
Metropolis-Hastings moves on whole clusters, in the spirit of Jain & Neal (2004, 2007) and
Dahl (2003).  A proposal draws two distinct rankings ``i``, ``j`` uniformly; ``S`` is the
union of their clusters less ``i`` and ``j``.

* *Launch* (auxiliary variables, drawn afresh with the same law in both directions, since
  they depend on ``S``, ``i`` and ``j`` only): two GM components fitted by ``launch_iter``
  steps of stochastic EM on a subsample of ``S`` (at most ``launch_size`` rankings),
  started from the anchors' own rankings; and the theta ``theta_m`` at which the merged
  cluster's central ranking is proposed (conditional modes given a central ranking drawn
  at the launch's mean theta).
* *Split* (``i``, ``j`` in one cluster c): each ranking of ``S`` goes to side 0 (with ``i``)
  or side 1 (with ``j``) independently, with probability ∝ ``w_s GM(pi | launch_s)``
  (``q_alloc``); each side's central ranking is drawn from the stagewise distribution
  ``q_s(sigma)`` at its theta's conditional modes given the launch's central ranking and the
  side's rankings; each side's theta is then drawn exactly from its conditional given sigma
  (adaptive rejection sampling).
* *Merge* (``i``, ``j`` in different clusters): the merged central ranking is drawn from the
  stagewise distribution at ``theta_m``, its theta exactly given sigma.

* *Random-proportion allocation* (a share ``random_share`` of the proposals, chosen
  independently of the state, so that the mixture of the two kernels is exact): a
  proportion ``rho ~ U(0, 1)``, then each ranking of ``S`` on side 1 with probability
  ``rho``; the launch is the anchors' own rankings.  Integrated over ``rho``, an allocation
  with ``m_0`` and ``m_1`` rankings on the sides has ``q_alloc = B(m_0 + 1, m_1 + 1)``, which
  cancels the CRP's ``Gamma(n_0) Gamma(n_1) / Gamma(n_0 + n_1)`` up to a polynomial factor:
  the reverse split of two overlapping clusters no longer costs the launch's confidence in
  each ranking's side (about 1-2 nats a ranking on real ballots), so such clusters can merge.

* *Anchors by cluster* (a share ``cluster_share`` of the proposals): an ordered pair of
  clusters ``(a, b)`` uniform among the ``K^2``; ``a = b`` proposes to split it with two
  distinct uniform members as anchors, ``a != b`` to merge them with a uniform anchor in
  each.  Anchors by ranking propose splits of a cluster in proportion to its size squared
  and mostly pair the largest clusters; by cluster every pair is proposed equally often.
  The ratio then carries the selection probabilities, ``P(merge | split state) / P(split |
  merged state) = K_M^2 n_c (n_c - 1) / (K_S^2 n_0 n_1)`` with ``K_S = K_M + 1`` clusters in
  the split state.

Because each theta is proposed from its exact conditional, the thetas cancel from the ratio:
``P0(theta) prod GM(pi | sigma, theta) / p(theta | sigma, X)`` is the one-dimensional
integral ``M(X | sigma) = P0(sigma) prod_j Z(nu r_j + S_j(sigma), nu + N_j) / Z(nu r_j,
nu)`` (compiled Gauss-Kronrod quadrature, :func:`dpclust.kernels.mallows.model.
log_theta_integral`).  The split's log ratio is then

    log alpha + log Gamma(n_0) + log Gamma(n_1) - log Gamma(n_0 + n_1)
    + log M(X_0 | sigma_0) + log M(X_1 | sigma_1) - log M(X_c | sigma_c)
    - log q_0(sigma_0) - log q_1(sigma_1) + log q_m(sigma_c) - log q_alloc(sides),

and a merge's is its negative, evaluated at the current clusters (``q_alloc`` of the current
sides, ``q_s`` of the current central rankings).  The exact tests (``tests/test_mallows.py``)
run the moves alone, without the assignment sweep, against enumerated posteriors.


References
----------
Jain, S. & Neal, R. M. (2004, 2007). Split-merge Markov chain Monte Carlo procedures for
    Dirichlet process mixture models (conjugate; non-conjugate). JCGS; Bayesian Analysis.
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report, University of Wisconsin.
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betaln

from ...kernels.mallows import model as gmk
from ..base import relabel
from ...kernels.mallows import split_merge as _k
from ._helpers import _ranks


class _SplitMerge:
    """Exact split-merge moves for DP mixtures of GM models (see the module notes).

    One move: two distinct rankings ``i``, ``j`` drawn uniformly; ``S`` the rankings of
    their clusters other than ``i`` and ``j``.  A *launch* (a function of ``S``, ``i``,
    ``j`` and fresh randomness only) fits two GM components by ``launch_iter`` steps of
    stochastic EM on a subsample of ``S`` of at most ``launch_size`` rankings, started from
    the anchors' own rankings.  If ``i`` and ``j`` share a cluster, the move proposes to
    split it: each ranking of ``S`` goes to side 0 (with ``i``) or side 1 (with ``j``)
    independently, with probability ∝ its weight under the launch components; each side's
    central ranking is drawn from the stagewise distribution at its theta's conditional
    modes (given the launch's central ranking); each theta is integrated out of the ratio
    and drawn exactly afterwards.  Otherwise it proposes to merge the two clusters, and the
    ratio scores the reverse split with the same launch.
    """

    def __init__(self, fam, X, launch_iter, launch_size, rng):
        self.orders, self.lengths = X.orders, X.lengths
        self.n = n = fam.n_items_
        self.J = J = fam.max_length_
        self.nu_r = fam.nu_r_
        self.nu = float(fam.nu)
        self.log_z0 = fam.log_prior_normalisers()
        self.launch_iter = int(launch_iter)
        self.launch_size = int(launch_size)
        self.state = np.uint64(rng.integers(0, 2**63 - 1))
        # scratch of the stagewise distribution and of the statistics
        self.a = np.zeros(n)
        self.E = np.zeros((n, n))
        self.present = np.zeros(n, dtype=np.int64)
        self.mark = np.zeros(n, dtype=np.int64)
        self.col = np.zeros(n)
        self.alive = np.zeros(n, dtype=np.int64)
        self.absent = np.zeros(n, dtype=np.int64)
        self.logw = np.zeros(n)
        self.free = np.zeros(n, dtype=np.int64)
        self.code = np.zeros(max(J, 1), dtype=np.int64)
        self.S = np.zeros(J)
        self.Nj = np.zeros(J)
        self.cum = np.zeros((2, J + 1))
        self.hull = np.empty((3, gmk._MAX_HULL))

    # ------------------------------------------------------------ pieces
    def _stats(self, members, rank):
        _k.side_code_stats(self.orders, self.lengths, members, rank, self.S, self.Nj,
                           self.code)
        return self.S, self.Nj

    def _modes(self, members, rank):
        S, Nj = self._stats(members, rank)
        out = np.empty(self.J)
        _k.theta_modes(S, Nj, self.nu_r, self.nu, self.n, out)
        return out

    def _log_marginal(self, members, rank):
        S, Nj = self._stats(members, rank)
        return _k.log_marginal_given_sigma(S, Nj, self.nu_r, self.nu, self.n, self.log_z0)

    def _draw_thetas(self, members, rank):
        S, Nj = self._stats(members, rank)
        out = np.empty(self.J)
        self.state = np.uint64(_k.draw_thetas(S, Nj, self.nu_r, self.nu, self.n,
                                                self.state, out, *self.hull))
        return out

    def _sigma(self, members, theta, order=None):
        """Draw a central ranking (``order=None``; returns ``(order, rank, log_q)``) or score
        the given one (returns its log probability) under the stagewise distribution."""
        replay = order is not None
        out = np.array(order, dtype=np.int64) if replay else np.empty(self.n, dtype=np.int64)
        rank = np.empty(self.n, dtype=np.int64)
        state, log_q = _k.sigma_proposal(
            self.orders, self.lengths, members, theta, replay, out, rank, self.state, self.a,
            self.E, self.present, self.mark, self.col, self.alive, self.absent, self.logw)
        self.state = np.uint64(state)
        return log_q if replay else (out, rank, log_q)

    def _allocate(self, points, launch, sides=None):
        draw = sides is None
        if draw:
            sides = np.empty(len(points), dtype=np.int64)
        (_, rank0, th0), (_, rank1, th1), lw = launch
        state, log_q = _k.allocate_sides(self.orders, self.lengths, points, rank0, th0,
                                         rank1, th1, lw[0], lw[1], draw, sides,
                                         self.state, self.cum[0], self.cum[1])
        self.state = np.uint64(state)
        return sides, log_q

    @staticmethod
    def _random_sides(rng, points, sides=None):
        """The random-proportion allocation: a proportion ``rho ~ U(0, 1)``, then each
        ranking on side 1 with probability ``rho``.  Integrated over ``rho``, a given
        allocation with ``m_0`` and ``m_1`` rankings on the sides has probability
        ``B(m_0 + 1, m_1 + 1)``."""
        if sides is None:
            sides = (rng.random(len(points)) < rng.random()).astype(np.int64)
        m1 = int(sides.sum())
        return sides, float(betaln(len(points) - m1 + 1.0, m1 + 1.0))

    def _launch(self, rng, rest, i, j, n_iter=None):
        """Two components fitted to ``rest`` by stochastic EM from the anchors ``i``, ``j``:
        ``((order0, rank0, theta0), (order1, rank1, theta1), (log w0, log w1))``."""
        sub = rest if len(rest) <= self.launch_size else rng.choice(rest, self.launch_size,
                                                                    replace=False)
        sides = []
        for anchor in (i, j):
            order = np.empty(self.n, dtype=np.int64)
            rank = np.empty(self.n, dtype=np.int64)
            zero = np.zeros(max(self.J, 1), dtype=np.int64)
            self.state = np.uint64(gmk.place_by_codes(self.orders, anchor,
                                                      self.lengths[anchor], zero, self.n,
                                                      self.state, order, rank, self.free))
            one = np.array([anchor], dtype=np.int64)
            sides.append((order, rank, self._modes(one, rank)))
        lw = (math.log(0.5), math.log(0.5))
        launch = (sides[0], sides[1], lw)
        for _ in range(self.launch_iter if n_iter is None else n_iter):
            alloc, _ = self._allocate(sub, launch)
            fitted = []
            for s, anchor in enumerate((i, j)):
                members = np.concatenate(([anchor], sub[alloc == s])).astype(np.int64)
                order, rank, _ = self._sigma(members, launch[s][2])
                fitted.append((order, rank, self._modes(members, rank)))
            n1 = float(alloc.sum())
            lw = (math.log((len(sub) - n1 + 1.0) / (len(sub) + 2.0)),
                  math.log((n1 + 1.0) / (len(sub) + 2.0)))
            launch = (fitted[0], fitted[1], lw)
        return launch

    def _merged_theta(self, launch, members):
        """The stagewise distribution's theta for the merged cluster: conditional modes
        given a central ranking drawn at the launch's mean theta (fresh randomness)."""
        _, rank, _ = self._sigma(members, 0.5 * (launch[0][2] + launch[1][2]))
        return self._modes(members, rank)

    def move(self, rng, labels, order, theta, log_alpha, i, j, random_allocation=False,
             n_clusters=None):
        """One split-merge proposal anchored at rankings ``i`` and ``j``; updates ``labels``,
        ``order`` and ``theta`` (lists of rows) in place when accepted.  Returns ``"split"``,
        ``"merge"`` or None.  ``random_allocation`` uses the random-proportion allocation
        (and the anchors' own rankings as the launch) instead of the fitted launch.
        ``n_clusters``: the anchors were drawn by cluster (:meth:`run`) among this many
        clusters, rather than uniformly among the rankings, and the ratio carries the
        selection probabilities."""
        ci, cj = int(labels[i]), int(labels[j])
        if ci == cj:
            union = np.flatnonzero(labels == ci)
        else:
            union = np.flatnonzero((labels == ci) | (labels == cj))
        rest = union[(union != i) & (union != j)]
        launch = self._launch(rng, rest, i, j, 0 if random_allocation else None)
        theta_c = self._merged_theta(launch, union)
        split = ci == cj
        if split:
            if random_allocation:
                sides, log_alloc = self._random_sides(rng, rest)
            else:
                sides, log_alloc = self._allocate(rest, launch)
            part = [np.concatenate(([i], rest[sides == 0])).astype(np.int64),
                    np.concatenate(([j], rest[sides == 1])).astype(np.int64)]
        else:
            sides = (labels[rest] == cj).astype(np.int64)
            if random_allocation:
                _, log_alloc = self._random_sides(rng, rest, sides)
            else:
                _, log_alloc = self._allocate(rest, launch, sides)
            in_i = labels[union] == ci
            part = [union[in_i], union[~in_i]]
        # the split state against the merged one (module notes): prior, marginals given
        # the central rankings, and the proposal's terms
        terms = {"crp": log_alpha + math.lgamma(len(part[0])) + math.lgamma(len(part[1]))
                 - math.lgamma(len(union)), "alloc": -log_alloc, "marginal": 0.0,
                 "sigma": 0.0}
        if n_clusters is not None:
            # anchors by cluster: an ordered pair of clusters uniform among K^2, then a
            # uniform anchor in each (a split: an ordered pair of distinct members), so
            # P(merge | split state) / P(split | merged state) =
            # [K_M^2 n_c (n_c - 1)] / [K_S^2 n_0 n_1], K_S = K_M + 1
            k_m = n_clusters if split else n_clusters - 1
            terms["select"] = (2.0 * math.log(k_m) - 2.0 * math.log(k_m + 1)
                               + math.log(len(union)) + math.log(len(union) - 1)
                               - math.log(len(part[0])) - math.log(len(part[1])))
        drawn = []
        for s, c in enumerate((ci, cj)):
            th = self._modes(part[s], launch[s][1])
            if split:
                o, r, log_q = self._sigma(part[s], th)
                drawn.append((o, r))
            else:
                r = _ranks(order[c][None, :])[0]
                log_q = self._sigma(part[s], th, order[c])
            terms["marginal"] += self._log_marginal(part[s], r)
            terms["sigma"] -= log_q
        if split:
            r = _ranks(order[ci][None, :])[0]
            log_q = self._sigma(union, theta_c, order[ci])
        else:
            o, r, log_q = self._sigma(union, theta_c)
        terms["marginal"] -= self._log_marginal(union, r)
        terms["sigma"] += log_q
        log_ratio = sum(terms.values())
        if not split:
            log_ratio = -log_ratio
        if math.log1p(-rng.random()) >= log_ratio:
            return None
        if split:
            labels[part[1]] = len(order)
            order[ci] = drawn[0][0]
            theta[ci] = self._draw_thetas(part[0], drawn[0][1])
            order.append(drawn[1][0])
            theta.append(self._draw_thetas(part[1], drawn[1][1]))
            return "split"
        else:
            labels[part[1]] = ci
            order[ci] = o
            theta[ci] = self._draw_thetas(union, r)
            return "merge"

    # ------------------------------------------------------------- moves
    def run(self, rng, labels, order, theta, alpha, n_moves, random_share=0.0,
            cluster_share=0.0):
        """``n_moves`` split-merge proposals, each with the random-proportion allocation
        with probability ``random_share`` and with anchors drawn by cluster with
        probability ``cluster_share`` (choices independent of the state, so the mixture of
        the kernels is exact); returns the new ``(labels, order, theta)`` (clusters
        compacted) and the numbers of accepted splits and merges.

        Anchors by ranking: two distinct rankings uniformly, so a split is proposed for a
        cluster in proportion to its size squared.  Anchors by cluster: an ordered pair of
        clusters uniformly (the same cluster twice: a split of it, with two distinct
        members as anchors), so mid-sized clusters are proposed for merging far more often
        than among rankings, where the largest clusters dominate."""
        labels = np.array(labels, dtype=np.int64)
        order = [row.copy() for row in order]
        theta = [row.copy() for row in theta]
        N = len(labels)
        log_alpha = math.log(alpha)
        splits = merges = 0
        if N < 2:
            return labels, np.array(order), np.array(theta), 0, 0
        for _ in range(n_moves):
            random_allocation = random_share > 0 and rng.random() < random_share
            by_cluster = cluster_share > 0 and rng.random() < cluster_share
            k = None
            if by_cluster:
                live = np.flatnonzero(np.bincount(labels, minlength=len(order)))
                k = len(live)
                a, b = live[rng.integers(k, size=2)]
                members_a = np.flatnonzero(labels == a)
                if a == b:
                    if len(members_a) < 2:
                        continue  # no split of a single ranking: the move is rejected
                    i, j = rng.choice(members_a, 2, replace=False)
                else:
                    i = rng.choice(members_a)
                    j = rng.choice(np.flatnonzero(labels == b))
                i, j = int(i), int(j)
            else:
                i = int(rng.integers(N))
                j = int(rng.integers(N - 1))
                j += j >= i
            kind = self.move(rng, labels, order, theta, log_alpha, i, j, random_allocation, k)
            splits += kind == "split"
            merges += kind == "merge"
        labels, old_ids = relabel(labels)
        order = np.ascontiguousarray(np.array(order)[old_ids])
        theta = np.ascontiguousarray(np.array(theta)[old_ids])
        return labels, order, theta, splits, merges
