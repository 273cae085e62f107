"""The parallel sampler of Chang & Fisher (2013) with exact split-merge moves: the
sampler that scales.

Restricted Gibbs sampling with instantiated weights and parameters never creates a cluster;
clusters are created by split moves and removed by merges.  One iteration:

1. weights ``pi ~ Dir(N_1 - 1 + epsilon, ..., N_K - 1 + epsilon)`` (below) and parameters
   ``theta_k ~ p(theta | X_k)``, from per-cluster statistics (no data touched);
2. **the data pass**, parallel over chunks of points: ``z_i ∝ pi_k f(x_i; theta_k)`` (within
   the point's super-cluster when those are on), or the collapsed pass (below); it returns
   per-cluster statistics;
3. **split-merge moves**, one per group of clusters, all groups at once (below): a
   subsample pass, a launch on the client, one refining pass and one proposal pass;
4. one relabelling pass applies the accepted moves (and the canonical numbering).

**The restricted Gibbs pass is exact.**  Every label drawn in parallel among the occupied
clusters is not an invariant update: it can empty a cluster but never create one.  What is
exact is to condition on every cluster staying non-empty.  The pass does this with one
*anchor* per cluster, a member chosen uniformly at random that keeps its label (an
auxiliary variable with density ``prod_k 1/N_k``): the other points are drawn independently,
and the whole pass is accepted with a Metropolis-Hastings probability.  The weights are an
auxiliary variable too, and any conditional law given the partition is valid; with ``pi ~
Dir(N_k - 1 + epsilon)`` the target given the anchors is ``CRP(z) prod_k N_k^-1 Dir(pi;
N - 1 + epsilon) prod_i f(x_i; theta_z_i)``, and the pass's proposal ``prod_(i not an anchor)
pi_z_i f(x_i; theta_z_i)`` divides it into ``w(z) prod_k pi_k^(epsilon - 1)`` with ``w(z) =
prod_k Gamma(N_k) / (N_k Gamma(N_k - 1 + epsilon))`` (K and N are fixed in the pass, and so is
the product of the weights), so the pass is accepted with ``min(1, w(z') / w(z))``, about
``prod_k (N_k / N'_k)^epsilon``.  The paper's ``Dir(N_k, alpha)`` is ``epsilon = 1``: a
cluster just cut off by a move, of a few points, that the pass would grow to its share was
then refused in proportion (3 points growing to 500: 0.006, with ``epsilon = 0.1``: 0.6),
and the whole pass with it (10^6 points: 8 passes of 28 refused and run again).

**The collapsed pass** (``data_pass``; documents, and Gaussians up to 10,000 points) draws
no weights or parameters: random groups of clusters (1 or 2 groups, chosen independently of
the state) run in parallel, and within a group each point that is not alone in its cluster
is drawn among the group's clusters with probability ``∝ N_{k,-i} f(x_i | X_{k,-i})``, the
collapsed predictive of the rest of the cluster.  This is Gibbs sampling of the posterior
restricted to the partitions with K clusters and the same groups; since it keeps K and the
groups, it leaves the posterior invariant, and the anchors are drawn afresh (uniformly) by
the counting pass that follows.  Sampled parameters include the point itself, so that on
sparse counts a document's rare words pin it to its cluster (a median of 49 nats on 20
Newsgroups at beta = 0.1); the collapsed predictive leaves it out.

**The split-merge moves are exact.**  The paper's sub-cluster split (its eq. 21) is a
Hastings ratio only when the new clusters' sub-clusters are drawn from their exact
conditional; with burned-in sub-clusters its ratio leaves out the probability of proposing
the sub-labels, a term that grows with N, and its chains lose clusters (on three
overlapping 2-D clusters every chain ends at K = 1, at any N).  Those moves are kept as
:meth:`SubclusterSplitMerge.approximate` for comparisons.  The default replaces them:

* *Groups.*  Let each cluster carry a group label ``g_k`` uniform on ``1..P``, independent
  of everything else.  Writing the DP as a mixture of P DPs of concentration ``alpha / P``
  (Williamson, Dubey & Xing 2013), ``p(z, g) ∝ CRP_alpha(z) P^-K = prod_g CRP_{alpha/P}
  (z_g)``: given the groups, the partitions of the groups' points are independent DP
  mixtures with concentration ``alpha / P``.  Each iteration draws ``g`` afresh (its exact
  conditional) and every non-empty group makes one Metropolis-Hastings move on its own
  points, in parallel; split targets carry ``alpha / P`` instead of ``alpha``.  ``P`` is
  drawn each round from a distribution that does not depend on the state (a mixture of
  kernels): few groups propose merges of any pair, many propose splits of every cluster.
* *The move.*  A group of ``K_g`` clusters proposes, with probability ``rho(K_g)`` (1 when
  ``K_g = 1``, else 1/2), to split a uniformly chosen cluster, else to merge a uniformly
  chosen pair.  Either way the move acts on a set S of points that is the same before and
  after it (one cluster, or the union of two).
* *Anchors.*  Every move is anchored by two points, i on side 0 and j on side 1.  A
  merge's are the anchors of its two clusters (which one is side 0: uniform, or the larger
  for a pinch); a split's i is its cluster's anchor and j a uniform member of its other
  points (chosen by point keys, independently of everything else).  The anchors are the
  auxiliary variables of the restricted Gibbs pass (density ``1 / N_k``): after a split
  they anchor the two sides, after a merge i anchors the union.
* *The launch* is a function of S, i and j only (and of auxiliary randomness whose law
  depends on them only), so it is the same whether S is one cluster or two and its density
  cancels from the ratio.  Two kinds, chosen at random (``pinch``; a third, ``grow``, is an
  EM launch started like a pinch and is off by default): an **EM launch** (seeded
  at ``x_i`` and ``x_j``; ``launch_iter`` stochastic EM steps on a Bernoulli subsample of S
  chosen by point keys, as Jain & Neal's intermediate restricted Gibbs scans, then
  ``launch_passes`` steps over all of S) gives two components ``phi_0, phi_1`` and weights;
  a **pinch launch** grows side 1 from ``x_j`` alone (weight ``1 / N_S``) against ``phi_0``
  from all of S, which proposes to cut off a few points: how small clusters are born and
  die.
* *The proposal* allocates every other point of S independently, ``p_i(s) ∝ w_s f(x_i;
  phi_s)`` (one parallel pass), so ``q(split) = prod_i p_i(s_i)``.  For a merge the same
  pass scores the current split.
* *Sequential moves* (the default in-process, ``sequential``) have no launch: the points of
  S other than i and j are taken in a uniformly random order (an auxiliary variable with the
  same law for a move and its reverse) and allocated one at a time, ``p_t(s) ∝ n_s f(x_t |
  X_s)`` with ``n_s`` and ``X_s`` the side's points so far, anchors included, and ``f`` the
  collapsed predictive (Dahl 2003), so ``q(split) = prod_t p_t(s_t)``; a merge scores its
  current split in the same order.  The product telescopes: ``q`` is the two sides'
  marginal likelihood and CRP weight divided by a normaliser close to the union's, so the
  ratio of a merge of two fragments of one cluster is of order one where an independent
  allocation's is tens to thousands of nats against it.  Several rounds of moves may run per
  iteration (``n_rounds``), each a move of the chain on its own.
* *Multi-way moves* (``multiway``, with sequential moves): half the iterations propose
  one more move on all the clusters, a split of one cluster into m = 3 .. 10 parts (m - 1
  further anchors, a sequential allocation among m sides) or a merge of a set of 3 .. 10
  clusters grown around a uniform one from the pairs' merge ratios; a Gaussian cut into
  several overlapping fragments is often mergeable only all at once.

Split of c into (A ∋ i, B ∋ j) within a group of ``K_g`` clusters::

    log r = log(alpha / P) + lgamma(N_A) + lgamma(N_B) - lgamma(N_c)
            + log f(X_A) + log f(X_B) - log f(X_c)                       (target)
            + log N_c - log N_A - log N_B                                (anchor densities)
            + log(1 - rho(K_g + 1)) + log P(A, B) - log 2                (reverse: pair, sides)
            - log rho(K_g) + log K_g + log(N_c - 1) - log q(A, B)        (forward: c, j, q)

with ``P(A, B)`` the probability that the group after the split picks the pair (A, B) for a
merge: ``1 / C(K_g + 1, 2)`` for uniform pairs, or with ``merge_pairs="targeted"`` (the
default) ``1 / (2 C) + exp(min(s_AB, 0)) / (2 sum_pairs exp(min(s, 0)))``, ``s`` a pair's log
merge ratio from its statistics (a function of the group's clusters alone, so a merge
computes it for its own pair before the move, a split for its sides after; a split alone
in its group leaves one pair, ``P = 1``).  A pinch merge pinches the smaller cluster, so its
``log 2`` is 0 unless the sizes tie, and a pinch split with ``N_B > N_A`` is rejected; a
merge is the reverse of a split.  With
``stages`` > 1 the proposal is made in stages whose components follow the sides allocated so
far, and q is the product over the stages.  Every move is checked against the exact
posterior over the partitions of five points (the tests), and at a few thousand points against long
collapsed-Gibbs chains.

References
----------
Chang, J. & Fisher III, J. W. (2013). Parallel sampling of DP mixture models using
    sub-cluster splits. NIPS (sections 4-5, eq. 21, Algorithm 1).
Jain, S. & Neal, R. M. (2004, 2007). A split-merge Markov chain Monte Carlo procedure for
    the Dirichlet process mixture model; Splitting and merging components of a nonconjugate
    Dirichlet process mixture model. JCGS; Bayesian Analysis (launch states).
Williamson, S. A., Dubey, A. & Xing, E. P. (2013). Parallel Markov chain Monte Carlo for
    nonparametric mixture models. ICML (the DP as a mixture of DPs).
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet process mixture
    models. Technical report 1086, University of Wisconsin (sequential allocation).
Dinari, O., Yu, A., Freifeld, O. & Fisher III, J. W. (2019). Distributed MCMC inference in
    Dirichlet process mixture models using Julia. CCGrid (the practical merge).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numba
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import gammaln, logsumexp

from ..families.base import concatenate, log_dirichlet, take
from ..kernels import gibbs as _kernels
from ..kernels import subcluster as _sk
from ._partitioned import LaunchSpec, PassSpec, chunk_bounds, launch_partition, threads
from .base import MixtureModel, StepInfo, initial_labels
from .crp import crp_log_prior


#: ``epsilon`` of the data pass's weights ``Dir(N_k - 1 + epsilon)`` (module notes)
PASS_WEIGHT_OFFSET = 0.1

#: groups of more clusters than this pick merge pairs uniformly (``merge_pairs``) ...
TARGETED_PAIRS_MAX = 64
#: ... and so do groups whose pairs' statistics add up to more numbers than this
PAIR_SCORE_BUDGET = 4_000_000

#: the launches that grow side 1 from its anchor alone (a merge grows the smaller cluster)
_ONE_SIDED = ("pinch", "grow")

#: with sequential moves on this many points or more (where one round of moves runs an
#: iteration by default) ...
MANY_POINTS = 100_000
#: ... the number of groups is at most 2 to this power (``n_groups``)
MANY_POINTS_TOP_GROUPS = 3

#: least (and 1 - most) probability that a cluster joins a multi-way merge set (``multiway``)
MULTIWAY_JOIN_MIN = 0.02
#: probability that an iteration makes a multi-way move (``multiway``)
MULTIWAY_RATE = 0.5
#: probability that the multi-way move of an iteration is a split (else a merge): a split
#: allocates a whole cluster among m sides, a merge only when its set has 3 or more clusters
MULTIWAY_SPLIT = 0.25

#: rows per chunk of a launch subsample's passes (a few chunks: both cores, little overhead)
SUBSAMPLE_CHUNK = 1024

class SubclusterState(NamedTuple):
    """Everything the next iteration needs; statistics are per sub-cluster (slot ``2k + s``).

    ``age[k]`` counts the data passes since cluster k's sub-clusters were (re)initialised (0:
    its sub-labels are stale and the next pass draws them afresh).  ``anchors[k]`` is a member
    of cluster k drawn uniformly given the labels.  ``sub_loglik[k]`` is the sub-clusters'
    log-likelihood at the last pass (to see them burn in); ``split_best[k]`` the highest log
    target ratio of their split proposed so far (-inf: none yet), to tell sub-clusters that
    are still separating from stuck ones.
    """

    labels: np.ndarray
    sublabels: np.ndarray
    alpha: float
    age: np.ndarray
    sub_stats: Any
    anchors: np.ndarray
    sub_loglik: np.ndarray
    split_best: np.ndarray | None = None


class PassResult(NamedTuple):
    """What the data pass returns: new labels and codes (sub-label + 2 x random-split side)
    and, per slot (``2k + s``, then the random split's two halves), statistics, counts, the
    smallest member index, a uniformly chosen member with its key (the member of a union of
    slots is the one with the smaller key) and the sub-cluster log-likelihood.  On a Dask
    cluster ``labels`` and ``codes`` are handles to arrays that stay on the workers."""

    labels: Any
    codes: Any
    stats: Any
    counts: np.ndarray
    first: np.ndarray
    member: np.ndarray
    member_key: np.ndarray
    loglik: np.ndarray


class _Cluster:
    """A cluster after the moves of one iteration, built from keys ``4k + code`` of the pass."""

    __slots__ = ("age", "anchor", "anchor_key", "best", "first", "keys", "loglik", "n",
                 "stats", "sub", "sub_keys")

    def __init__(self, keys, stats, n, first, anchor, age, sub, sub_keys, loglik,
                 best=-np.inf, anchor_key=1.0):
        self.keys = keys          # pass keys (4k + code) whose points form this cluster
        self.stats = stats        # its statistics (one row)
        self.n = n
        self.first = first
        self.anchor = anchor      # a uniform member, the one with the smallest key
        self.anchor_key = anchor_key
        self.age = age
        self.sub = sub            # statistics of its two sub-clusters (two rows) or None
        self.sub_keys = sub_keys  # (keys of sub-cluster 0, of 1) when sub-labels are reassigned
        self.loglik = loglik
        self.best = best          # highest log ratio of its sub-cluster split so far

    def restart_subclusters(self):
        """New sub-clusters from seeds at the next pass."""
        self.age, self.sub, self.loglik, self.best = 0, None, (-np.inf, -np.inf), -np.inf


@dataclass(frozen=True)
class SubclusterSplitMerge:
    """Chang & Fisher's parallel sampler, with exact split-merge moves by default.

    Parameters
    ----------
    split_merge : bool, default=True
        The exact split-merge moves (see the module notes): one per random group of
        clusters per iteration, all groups in parallel.
    n_groups : int or None, default=None
        Number of groups P.  None draws ``P = 2^u`` each round, u uniform on ``0 ..
        ceil(log2(min(N, 512)))``, and at most ``MANY_POINTS_TOP_GROUPS`` (P <= 8) with
        sequential moves on ``MANY_POINTS`` (10^5) points or more, where one round runs an
        iteration.  With up to 512 groups most rounds split every cluster and few merge;
        a split that cuts a Gaussian early on leaves fragments, which must be merged back
        within a few iterations: the next passes make them overlap, and then no pairwise
        merge is accepted (its sequential allocation scores the current split tens to
        hundreds of nats short).
        10^6 points from one cluster (ten Gaussians, alpha = 10, 100 iterations, 12 data
        sets): NMI >= 0.99 on 10 of 12 in 7.7-8.8 s, against 4 of 12 in 9.3-13.0 s.
    launch_size : int, default=256
        Expected size of an EM launch's subsample of the move's points (all of them below
        that).
    launch_iter : int, default=4
        Stochastic EM steps of an EM launch on its subsample.  Measured against 8 (the
        earlier default): N = 5 x 10^4, d = 64, 50 iterations, two seeds: NMI 1.000 / 1.000
        against 0.979 / 1.000 in 4.0-4.1 s against 4.3-4.6 s; 10^5 points, d = 50, 50
        clusters, 120 iterations from one cluster, three data sets: K 50 / 52 / 57 and NMI
        1.000 / 0.9997 / 0.9992 against K 62 / 52 / 53 and NMI 0.9986 / 0.9998 / 0.9997.
    launch_passes : int, default=1
        Further stochastic EM steps on all of the move's points (one data pass each).
    stages : {1, 2, 3}, default=1
        The proposal allocates an EM move's points in this many stages, in the order of
        independent keys (about ``launch_size / 32`` points, then eight times as many, then
        the rest), each stage with components fitted to the sides of the points already
        allocated (for a merge: their current sides), so that a merge scores the current
        boundary with components that follow it (Jain & Neal's sequential final scan,
        blocked so that each stage is one parallel pass).  Exact; each stage costs a pass.
        On 10^5 points from one cluster (five data sets, 100 iterations, EM launches
        alone) 3 stages end at NMI 0.901-0.979 (mean 0.960) against 0.928-0.991 (mean
        0.963) for 1: not the default.
    grow : float, default=0.0
        Probability that a move uses a grow launch: side 1 grown by EM from one point
        against the whole move.  Exact, but on 10^5 Gaussian points it creates fragments of
        clusters faster than it removes them (K 23 against 17 after 100 iterations), so it is
        off by default.
    n_rounds : int or None, default=None
        Rounds of split-merge moves per iteration, each with groups drawn afresh.  None:
        with sequential moves ``min(ceil(10^5 / N), ceil(N / 300))`` between 1 and 16, else
        1 (a state-independent
        choice), so that data sets of a few thousand points, where a round costs little,
        propose many merges (5,000 points in 3
        clusters from 10 k-means clusters: NMI 1.0 after 60 iterations with 16 rounds,
        0.66-0.77 with 1).
    pinch : float or None, default=None
        Probability that a move uses a pinch launch (side 1 grown from one point: the moves
        that create and remove small clusters) rather than a sequential allocation (or an
        EM launch).  None: ``0.5 min(1, sqrt(10^4 / N))``, at least 0.05 (0.5 up to 10^4
        points, 0.16 at 10^5, 0.05 at 10^6).  On large data a pinch cuts a blob out of a
        big cluster that the data pass then grows into a fragment, which no exact move
        merges back in reasonable time: 10^6 points from one cluster, four data sets, 100
        iterations: NMI 0.927-0.986 with 0.5, 0.994-1.000 with 0.05 (0.961-1.000 with
        none: pinches also remove small clusters).
    merge_pairs : {"targeted", "uniform"}, default="targeted"
        How a group that proposes a merge picks its pair.  ``"uniform"``: any pair alike.
        ``"targeted"``: with probability 1/2 uniformly, else in proportion to ``exp(min(s,
        0))``, ``s`` the log target ratio of merging the pair (from the clusters'
        statistics), so that pairs the posterior would merge are proposed far more often
        than pairs it never would; exact (the reverse split's ratio scores the pair among
        its group after the split), and uniform in groups of more than
        ``TARGETED_PAIRS_MAX`` clusters, or whose pairs' statistics would exceed
        ``PAIR_SCORE_BUDGET`` numbers (many words: 61,188 allow groups of 11).  10^6 points from one cluster: fragments of one
        Gaussian, proposed for merging once in ~100 iterations with uniform pairs, are
        merged within a few.
    subcluster_splits : bool, default=False
        **Approximate.**  Propose splitting each cluster into its two persistent
        sub-clusters (eq. 21) once they have burned in: the paper's fast move, which leaves
        out the probability of proposing the sub-clusters (see the module notes).  Only
        with ``split_merge=False`` (:meth:`approximate`).
    merges : {"reverse", "practical", "none"}, default="none"
        Propose merging every pair of clusters once per iteration; the merged cluster's
        sub-clusters are the two old clusters, so that its sub-cluster split is the exact
        reverse.  ``"reverse"`` accepts with the target ratio (the reciprocal of eq. 21);
        ``"practical"`` with the ratio of DPMMSubClusters.jl, which leaves out the CRP's
        ``Gamma(N_c) / (Gamma(N_l) Gamma(N_r))`` and so cannot merge two halves of one big
        cluster (two Gaussians always fit its points better than one).  Both approximate,
        and only with ``split_merge=False``.
    random_split_merge : bool, default=False
        One exact random split-or-merge proposal per iteration (a cluster split by a
        Beta-binomial draw, or a random pair merged), each with its full Hastings ratio.
    split_delay : int, default=2
        Passes a cluster's new sub-clusters get to burn in before its split is proposed.
    burn_in : {"fixed", "likelihood"}, default="fixed"
        ``"fixed"``: propose the split after ``split_delay`` passes, as soon as the
        sub-clusters carry information.  ``"likelihood"``: the paper's rule, wait until the
        sub-clusters' log-likelihood stops rising (at most ``max_split_delay`` passes);
        slower to find clusters, since a few thousand points keep raising it for ten passes.
    max_split_delay : int, default=10
        Longest wait under ``burn_in="likelihood"``.
    reseed_after : int or None, default=4
        A cluster whose sub-cluster split is still rejected this many passes after it was
        first proposed, and whose last proposal was no better than an earlier one, gets new
        sub-clusters (new seeds, burned in again); so do sub-clusters that collapsed onto
        one point.  Sub-clusters are a two-component mixture sampled by Gibbs and can settle
        in a poor split (two long overlapping halves of several clusters); new seeds get them
        out.  Sub-clusters that still improve are left to go on: in 50 dimensions two halves
        of a few hundred points take ten passes or more to separate.  None: never.
    split_concentration : float, default=1.0
        ``a`` of the Beta(a, a) that draws the random split's proportion.
    super_clusters : bool, default=False
        Restrict each point's label to the clusters of its super-cluster (the paper's
        Algorithm 1, with the J-divergence of the family), which makes the pass cheaper
        when there are many clusters.  Exact (a random restriction that depends only on the
        parameters); needs ``family.divergence``.
    restricted_gibbs : bool, default=True
        Run the data pass's label updates (off only to test the moves alone).
    data_pass : {"instantiated", "collapsed"} or None, default=None
        How the data pass draws the labels.  ``"instantiated"``: the paper's restricted
        Gibbs given sampled weights and parameters, parallel over chunks of points.
        ``"collapsed"``: restricted collapsed Gibbs (parameters integrated out), parallel
        over random groups of clusters (``pass_groups``): each point that is not alone in
        its cluster is drawn among its group's clusters with probability ``∝ N_{k,-i} f(x_i
        | X_{k,-i})``; exact (Gibbs sampling of the posterior given the number of clusters
        and the groups).  Sampled parameters pin a document to its cluster (its own rare
        words make the cluster's word distribution favour it: a median of 49 nats a
        document on 20 Newsgroups at beta = 0.1), so that the instantiated pass barely moves
        documents, while the collapsed one weighs each against the others' counts.  None:
        collapsed where the family's ``collapsed_pass(N)`` says so (documents always,
        Gaussians up to 10,000 points) when the sampler runs in-process, else instantiated.
    pass_groups : int or None, default=None
        Groups of clusters of the collapsed pass (each point moves among its group's
        clusters; the groups run on separate threads).  None: 1 or 2 at random (state
        independent) each iteration.
    n_jobs : int or None, default=None
        Threads for the data pass (None or -1: all cores).  The result for a given
        ``random_state`` does not depend on it.
    chunk_size : int, default=4096
        Points per chunk of the data pass; each chunk has its own random stream.  Chunks are
        made larger when the statistics of many clusters would not fit in memory.
    sequential : bool or None, default=None
        Moves that are not pinches (nor grows) allocate their points one at a time in a
        random order, each to a side with probability proportional to the side's size times
        its collapsed predictive given the points already allocated (Dahl's sequentially
        allocated split-merge, one thread per move; no launch).  Their ``q`` telescopes
        towards the sides' marginal likelihood, so that a merge of two fragments of one
        cluster is accepted about as often as the posterior allows; the EM launches
        (``False``) score a fragment boundary poorly and leave such fragments for hundreds of
        iterations (5,000 points in 3 clusters from 10 k-means clusters: K 10-12 and NMI
        0.64 after 60 iterations).  None: sequential unless the family's pass is blocked
        (Gaussians with 8 or more features), where a sequential allocation costs O(d^2)
        scalar work per point and the EM launches' BLAS passes are several times cheaper
        (N = 10^5, d = 64: 0.29 s an iteration against 0.16 s), unless the data pass is
        collapsed (a few thousand points, ``data_pass``: on digits in 50 dimensions
        sequential moves end at a log joint of -2.013e5 against -2.039e5).  In-process only: on a Dask
        cluster, and in-process with its partition layout (``DPMixture(partitions=...)``),
        the EM launches are used, so that the two chains are the same.
    multiway : int, default=10
        Largest number of clusters a multi-way move merges, or splits one into (0: none).
        With sequential moves (in-process), half the iterations (``MULTIWAY_RATE``) propose
        one move on all the clusters: with probability ``MULTIWAY_SPLIT`` (1/4) split a
        uniformly chosen cluster into m parts (m uniform on 3 .. ``multiway``, the m - 1
        further anchors ordered uniform members, the rest allocated sequentially among m
        sides), else merge a set grown around a uniform cluster u, each other cluster v
        joining with probability ``exp(min(s_uv, 0))`` (``s_uv`` the log target ratio of
        merging u and v, kept within [0.02, 0.98]); sets of 3 to ``multiway`` clusters
        only.  Exact: the ratio is the module notes' with, for a split into m, ``log P(m)
        - sum_(t < m) log(N_c - t)`` for its ordered anchors, and for the reverse merge
        ``log P(set) - log m!`` for the set and the order of its sides (the split's ``(m -
        1)!`` orders of its further anchors give the same split and cancel).  A Gaussian
        cut early into several overlapping fragments is out of reach of pairwise merges,
        each tens to hundreds of nats short, where merging all of them at once is accepted
        (10^6 points: three fragments of one Gaussian, any two -8 to -11 nats, all three
        +17 to +21; five fragments, any two to four -37 to -180, all five +20).  10^6
        points from one cluster, 12 data sets, 100 iterations: NMI >= 0.99 on all 12 in
        7.7-8.9 s, against 10 of 12 in 7.3-8.1 s without (up to 5 clusters: 10 of 12).
        The merge sets need every pair's merge ratio, so an iteration makes no multi-way
        move where the clusters' pairs exceed the pair-score budget (``PAIR_SCORE_BUDGET``:
        above 64 clusters, or above 11 with 61,188 words); :meth:`approximate` has none.
    seeding : {"mixed", "family", "point"}, default="mixed"
        How new sub-clusters start (each point takes the more likely of two seeds):
        ``"family"``: the family's ``seed_subclusters`` (a random hyperplane through a
        Gaussian cluster); ``"point"``: the posterior given one random member against the
        posterior given the whole cluster, which cuts off one group at a time; ``"mixed"``:
        either, at random, for each new pair of sub-clusters.

    Notes
    -----
    The paper's super-cluster graph: each cluster k picks one cluster m (itself included)
    with probability ``∝ exp(-J(theta_k, theta_m))``; the connected components of those
    links are the super-clusters.
    """

    split_merge: bool = True
    n_groups: int | None = None
    launch_size: int = 256
    launch_iter: int = 4
    launch_passes: int = 1
    stages: int = 1
    sequential: bool | None = None
    n_rounds: int | None = None
    pinch: float | None = None
    grow: float = 0.0
    merge_pairs: str = "targeted"
    subcluster_splits: bool = False
    merges: str = "none"
    random_split_merge: bool = False
    split_delay: int = 2
    burn_in: str = "fixed"
    max_split_delay: int = 10
    reseed_after: int | None = 4
    split_concentration: float = 1.0
    super_clusters: bool = False
    restricted_gibbs: bool = True
    data_pass: str | None = None
    pass_groups: int | None = None
    n_jobs: int | None = None
    chunk_size: int = 4096
    seeding: str = "mixed"
    multiway: int = 10
    name = "subcluster"
    kmeans_start = True
    partitioned = True

    def __post_init__(self):
        if self.merges not in ("reverse", "practical", "none"):
            raise ValueError(
                f"merges must be 'reverse', 'practical' or 'none', got {self.merges!r}")
        if self.burn_in not in ("fixed", "likelihood"):
            raise ValueError(f"burn_in must be 'fixed' or 'likelihood', got {self.burn_in!r}")
        if int(self.split_delay) < 1:
            raise ValueError(f"split_delay must be >= 1, got {self.split_delay}")
        if int(self.max_split_delay) < int(self.split_delay):
            raise ValueError("max_split_delay must be >= split_delay")
        if not self.split_concentration > 0:
            raise ValueError("split_concentration must be positive")
        if self.merge_pairs not in ("targeted", "uniform"):
            raise ValueError(
                f"merge_pairs must be 'targeted' or 'uniform', got {self.merge_pairs!r}")
        if self.data_pass not in (None, "instantiated", "collapsed"):
            raise ValueError(f"data_pass must be 'instantiated', 'collapsed' or None, got "
                             f"{self.data_pass!r}")
        if self.pass_groups is not None and int(self.pass_groups) < 1:
            raise ValueError(f"pass_groups must be a positive number of groups or None, got "
                             f"{self.pass_groups}")
        if self.seeding not in ("mixed", "family", "point"):
            raise ValueError(
                f"seeding must be 'mixed', 'family' or 'point', got {self.seeding!r}")
        if int(self.multiway) < 0:
            raise ValueError(f"multiway must be >= 0 (0: no multi-way moves), got "
                             f"{self.multiway}")
        if int(self.chunk_size) < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")
        if self.n_jobs is not None and (int(self.n_jobs) == 0 or int(self.n_jobs) < -1):
            raise ValueError(f"n_jobs must be a positive number of threads or -1, got {self.n_jobs}")
        if self.n_groups is not None and int(self.n_groups) < 1:
            raise ValueError(f"n_groups must be a positive number of groups or None, got "
                             f"{self.n_groups}")
        if int(self.launch_size) < 2:
            raise ValueError(f"launch_size must be >= 2, got {self.launch_size}")
        if self.n_rounds is not None and int(self.n_rounds) < 1:
            raise ValueError(f"n_rounds must be >= 1 or None, got {self.n_rounds}")
        if int(self.launch_iter) < 0 or int(self.launch_passes) < 0:
            raise ValueError("launch_iter and launch_passes must be >= 0")
        if int(self.stages) not in (1, 2, 3):
            raise ValueError(f"stages must be 1, 2 or 3, got {self.stages}")
        pinch = 0.5 if self.pinch is None else float(self.pinch)
        if not (0.0 <= pinch <= 1.0 and 0.0 <= float(self.grow) <= 1.0
                and pinch + float(self.grow) <= 1.0):
            raise ValueError(f"pinch and grow must be probabilities that add up to at most 1, "
                             f"got {self.pinch} and {self.grow}")
        if self.split_merge and self._subclusters:
            raise ValueError(
                "the exact split-merge moves (split_merge=True) cannot be combined with the "
                "approximate sub-cluster moves (subcluster_splits, merges): use "
                "SubclusterSplitMerge() for the exact sampler or "
                "SubclusterSplitMerge.approximate() for the paper's fast moves")

    @classmethod
    def exact(cls, **kwargs) -> SubclusterSplitMerge:
        """The default configuration, exact MCMC: restricted Gibbs and the parallel
        split-merge moves (keyword arguments override any option)."""
        return cls(**kwargs)

    @classmethod
    def approximate(cls, **kwargs) -> SubclusterSplitMerge:
        """The paper's fast moves: sub-cluster splits (eq. 21), pairwise "reverse" merges
        and the random split/merge pair, without the launch and multi-way moves.

        **Not exact MCMC**, and the error does not shrink with the data: on overlapping
        clusters its chains collapse to one cluster (see the module notes).  For
        comparisons with the paper only.
        """
        options = dict(split_merge=False, subcluster_splits=True, merges="reverse",
                       random_split_merge=True, multiway=0)
        options.update(kwargs)
        return cls(**options)

    @property
    def _subclusters(self) -> bool:
        """Whether the approximate moves need persistent sub-clusters."""
        return bool(self.subcluster_splits) or self.merges != "none"

    @property
    def is_exact(self) -> bool:
        """Whether every move of this configuration is exact MCMC."""
        return not self._subclusters

    # ------------------------------------------------------------------- init
    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> SubclusterState:
        """Labels uniform over ``n_clusters`` (or ``labels``) and sub-labels at random, both
        drawn from the chunks' streams, so that they are the same on any backend; then one
        pass that keeps them gives the statistics, the canonical numbering and the anchors."""
        n = model.n_samples
        data = self._data(model)
        if n_clusters < 1:
            raise ValueError(f"the initial number of clusters must be >= 1, got {n_clusters}")
        if labels is not None:
            labels = initial_labels(rng, n, labels)
        k0 = int(labels.max()) + 1 if labels is not None else int(min(n_clusters, n))
        key = int(rng.integers(2**63))
        z, sub = data.start(key, k0, labels, n_slots=2 * k0 + 2)
        zeros = np.zeros(k0)
        # parameters are not used by a pass that keeps the labels, but must have their type
        kparams = (None if data.pass_kernel is None
                   else data.pack(model.family.sample_prior(rng, 3 * k0)))
        spec = PassSpec(kparams, zeros, np.zeros((k0, 2)), np.zeros(k0, np.uint8),
                        np.zeros(k0, np.int64), np.array([0, k0], np.int64),
                        np.arange(k0, dtype=np.int64), np.full(k0, -1, np.int64), 0, -1, 0.5,
                        int(rng.integers(2**63)), 2 * k0 + 2)
        run = self._run_pass(rng, model, data, spec, z, sub)
        n_k = run.counts[:2 * k0].reshape(k0, 2).sum(axis=1)
        live = np.flatnonzero(n_k > 0)
        first = np.array([min(f for f in run.first[[2 * k, 2 * k + 1]] if f >= 0)
                          for k in live], dtype=np.int64)
        order = live[np.argsort(first, kind="stable")]
        label_map = np.full(4 * k0, -1, dtype=np.int64)
        for new_id, k in enumerate(order):
            label_map[4 * k:4 * k + 4] = new_id
        z, sub = data.relabel(run.labels, run.codes, label_map, np.full(4 * k0, 2, np.int8))
        k = len(order)
        sub_stats = take(run.stats, _pair_rows(order))
        anchors = np.array([_smaller_key(run, 2 * c, 2 * c + 1)[0] for c in order],
                           dtype=np.int64)
        return SubclusterState(z, sub, float(alpha), np.zeros(k, dtype=np.int64),
                               sub_stats, anchors, np.full(k, -np.inf), np.full(k, -np.inf))

    def _data(self, model):
        """The data side of ``model`` (in-process partitions, or a Dask cluster's)."""
        return model.partitions.configure(self.chunk_size, self.n_jobs)

    # ------------------------------------------------------------------- step
    def step(self, rng, state: SubclusterState, model: MixtureModel):
        fam = model.family
        alpha = state.alpha
        K = len(state.age)
        sub_stats = state.sub_stats
        cluster_stats = _pairs_combined(fam, sub_stats, K)
        counts = fam.count(cluster_stats)

        # 1. weights and parameters given the labels (none for the collapsed pass)
        update = (2 if self._subclusters else 3) if self.restricted_gibbs else 1
        collapsed = update == 3 and self._collapsed_here(model)
        if collapsed:
            log_pi, theta = np.zeros(K), None
        else:
            log_pi = log_dirichlet(rng, counts - 1.0 + PASS_WEIGHT_OFFSET)
            theta = fam.sample_posterior(cluster_stats, rng)
        if update == 3:  # labels only: no sub-cluster is drawn, seeded or scored
            log_pibar = np.zeros((K, 2))
            thetabar = None
            fresh = np.zeros(K, dtype=bool)
        else:
            sub_counts = fam.count(sub_stats).reshape(K, 2)
            log_pibar = log_dirichlet(rng, sub_counts + alpha / 2.0)
            thetabar = fam.sample_posterior(sub_stats, rng)
            fresh = state.age == 0
        if fresh.any():
            # new sub-clusters start from seeds: each point takes the more likely one
            idx = np.flatnonzero(fresh)
            seeds = self._seeds(rng, model, cluster_stats, state.anchors, idx)
            rows = _pair_rows(idx)
            thetabar = _with_rows(thetabar, rows, seeds)
            log_pibar[fresh] = math.log(0.5)
        groups = self._super_clusters(rng, fam, theta, K)

        # the random split/merge proposal is chosen now: the pass keeps every cluster
        rand_c, rand_p = -1, 0.5
        propose_split = rng.random() < 0.5
        if self.random_split_merge and propose_split:
            rand_c = int(rng.integers(K))
            rand_p = float(rng.beta(self.split_concentration, self.split_concentration))

        # 2. the data pass, accepted as a whole with w(z') / w(z) (anchors stay put), or
        # the collapsed pass, then a pass that counts its labels (and draws the anchors)
        if collapsed:
            state = state._replace(labels=self._collapsed_pass(rng, model, state))
            update = 0
        run = self._data_pass(rng, model, state, theta, thetabar, log_pi, log_pibar, fresh,
                              groups, rand_c, rand_p, update)
        new_counts = run.counts[:2 * K].reshape(K, 2).sum(axis=1)
        log_r = _log_pass_weight(new_counts) - _log_pass_weight(counts) if update else 0.0
        accepted = log_r >= 0 or math.log(rng.random()) < log_r
        if not accepted:
            run = self._data_pass(rng, model, state, theta, thetabar, log_pi, log_pibar,
                                  fresh, groups, rand_c, rand_p, 0)
        age = state.age + 1 if accepted else state.age.copy()
        clusters = self._clusters_after_pass(rng, fam, run, K, age, state, accepted)

        # 3. moves, from statistics alone
        touched = np.zeros(K, dtype=bool)
        n_splits = n_merges = 0
        if self.random_split_merge:
            if rand_c >= 0:
                n_splits += self._random_split(rng, fam, run, clusters, rand_c, alpha, touched)
            elif K >= 2:
                n_merges += self._random_merge(rng, fam, clusters, alpha, touched)
        if self.subcluster_splits:
            n_splits += self._subcluster_splits(rng, fam, run, clusters, alpha, touched)
        if self.merges != "none":
            n_merges += self._pairwise_merges(rng, fam, clusters, alpha, touched)

        # 4. relabel: canonical order by first member
        new_state = self._relabel(model, run, clusters, K, state, alpha)

        # 5. the exact split-merge moves, in parallel over groups of clusters
        if self.split_merge:
            for _ in range(self._rounds(model)):
                new_state, splits, merges = self._launch_moves(rng, model, new_state)
                n_splits += splits
                n_merges += merges
        if self._multiway_here(model) and rng.random() < MULTIWAY_RATE:
            new_state, splits, merges = self._multiway_move(rng, model, new_state)
            n_splits += splits
            n_merges += merges
        k_new = len(new_state.age)
        alpha = model.update_alpha(rng, alpha, k_new)
        stats = _pairs_combined(fam, new_state.sub_stats, k_new)
        log_lik = float(fam.log_marginal(stats).sum())
        log_joint = crp_log_prior(fam.count(stats), alpha) + log_lik
        return (new_state._replace(alpha=alpha),
                StepInfo(log_joint, k_new, alpha, int(n_splits), int(n_merges), log_lik))

    def _seeds(self, rng, model, cluster_stats, anchors, idx):
        """Seed parameters (rows ``2j``, ``2j + 1``) for the new sub-clusters of clusters
        ``idx``: the family's structured split, or a point seed (the posterior given one
        random member against the posterior given the whole cluster), half the time each
        under ``seeding="mixed"``."""
        fam = model.family
        mode = self.seeding
        use_point = (np.full(len(idx), mode == "point") if mode != "mixed"
                     else rng.random(len(idx)) < 0.5)
        seeds = fam.seed_subclusters(take(cluster_stats, idx), rng)
        if use_point.any():
            pick = np.flatnonzero(use_point)
            rows = self._data(model).rows_of(anchors[idx[pick]])
            one = fam.stats(rows, np.arange(len(pick)), len(pick))
            near = fam.sample_posterior(one, rng)
            whole = fam.sample_posterior(take(cluster_stats, idx[pick]), rng)
            seeds = _with_rows(seeds, 2 * pick, near)
            seeds = _with_rows(seeds, 2 * pick + 1, whole)
        return seeds

    # ------------------------------------------------------------ the pass
    def _super_clusters(self, rng, fam, theta, K):
        """``(group_of, group_start, group_members)``: one group, or the paper's Algorithm 1."""
        if not self.super_clusters or K == 1 or theta is None:
            return (np.zeros(K, dtype=np.int64), np.array([0, K], dtype=np.int64),
                    np.arange(K, dtype=np.int64))
        div = np.asarray(fam.divergence(theta), dtype=np.float64)
        logits = -np.maximum(div, 0.0)
        np.fill_diagonal(logits, 0.0)
        pick = np.empty(K, dtype=np.int64)
        _kernels.sample_rows_from_logs(logits, rng.random(K), pick)
        graph = csr_matrix((np.ones(K), (np.arange(K), pick)), shape=(K, K))
        n_groups, group_of = connected_components(graph, directed=True, connection="weak")
        order = np.argsort(group_of, kind="stable")
        start = np.searchsorted(group_of[order], np.arange(n_groups + 1))
        return group_of.astype(np.int64), start.astype(np.int64), order.astype(np.int64)

    def _data_pass(self, rng, model, state, theta, thetabar, log_pi, log_pibar, fresh, groups,
                   rand_c, rand_p, update) -> PassResult:
        K = len(log_pi)
        data = self._data(model)
        group_of, group_start, group_members = groups
        # labels only (thetabar None): the K clusters' parameters, no sub-cluster slots;
        # none to keep the labels after a collapsed pass (one cluster's, never read)
        if theta is None:
            theta = model.family.point_params(take(state.sub_stats, [0]))
        comps = theta if thetabar is None else concatenate(theta, thetabar)
        kparams = None if data.pass_kernel is None else data.pack(comps)
        spec = PassSpec(kparams, log_pi, log_pibar, fresh.astype(np.uint8), group_of,
                        group_start, group_members,
                        np.ascontiguousarray(state.anchors, dtype=np.int64), int(update),
                        int(rand_c), float(rand_p), int(rng.integers(2**63)), 2 * K + 2)
        if data.pass_kernel is None:
            return _reference_pass(rng, model.family, model.X, theta, thetabar, spec,
                                   state.labels, state.sublabels)
        return self._run_pass(rng, model, data, spec, state.labels, state.sublabels)

    def _run_pass(self, rng, model, data, spec, labels, sub) -> PassResult:
        """One pass of ``spec`` over the data; returns its labels, codes and statistics."""
        if data.pass_kernel is None:
            return _reference_pass(rng, model.family, model.X, None, None, spec, labels, sub)
        labels_out, codes, part = data.run_pass(spec, labels, sub)
        K = (spec.n_slots - 2) // 2
        return PassResult(labels_out, codes, data.unpack(part.acc), part.cnt, part.first,
                          part.res, part.rkey, part.ll[:2 * K])

    # ------------------------------------------------------------- clusters
    def _clusters_after_pass(self, rng, fam, run, K, age, state, accepted):
        clusters = []
        ll = run.loglik.reshape(K, 2).sum(axis=1)
        whole = _pairs_combined(fam, run.stats, K)
        best = (state.split_best if state.split_best is not None
                else np.full(K, -np.inf))
        for k in range(K):
            sub = take(run.stats, [2 * k, 2 * k + 1])
            n0, n1 = int(run.counts[2 * k]), int(run.counts[2 * k + 1])
            firsts = [f for f in (run.first[2 * k], run.first[2 * k + 1]) if f >= 0]
            anchor, anchor_key = _smaller_key(run, 2 * k, 2 * k + 1)
            if not accepted:
                loglik = (float(state.sub_loglik[k]), -np.inf)
            elif state.age[k] == 0:  # this pass drew its sub-labels afresh
                loglik = (-np.inf, -np.inf)
            else:
                loglik = (float(ll[k]), float(state.sub_loglik[k]))
            clusters.append(_Cluster(
                keys=[4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3],
                stats=take(whole, [k]), n=n0 + n1,
                first=min(firsts), anchor=anchor, age=int(age[k]), sub=sub, sub_keys=None,
                loglik=loglik, best=-np.inf if state.age[k] == 0 else float(best[k]),
                anchor_key=anchor_key))
        return clusters

    def _random_split(self, rng, fam, run, clusters, c, alpha, touched):
        """Exact random split of cluster c into the pass's two random halves.

        Proposal probability of the unordered split {L, R}: ``2 B(a + N_L, a + N_R) /
        (K B(a, a))``; its reverse merge picks that pair among ``K + 1`` clusters with
        probability ``1 / C(K + 1, 2)``.
        """
        K = len(touched)
        a = self.split_concentration
        K_slot = 2 * K
        n_l, n_r = int(run.counts[K_slot]), int(run.counts[K_slot + 1])
        if n_l == 0 or n_r == 0:
            return 0
        halves = take(run.stats, [K_slot, K_slot + 1])
        log_target = _log_split_target(fam, take(halves, [0]), take(halves, [1]),
                                       clusters[c].stats, n_l, n_r, alpha)
        log_q_split = math.log(2.0) - math.log(K) + _log_beta(a + n_l, a + n_r) - _log_beta(a, a)
        log_q_merge = -math.log(math.comb(K + 1, 2))
        if math.log(rng.random()) >= log_target + log_q_merge - log_q_split:
            return 0
        clusters[c] = _new_cluster(run, [4 * c, 4 * c + 1], take(halves, [0]), K_slot)
        clusters.append(_new_cluster(run, [4 * c + 2, 4 * c + 3], take(halves, [1]),
                                     K_slot + 1))
        touched[c] = True
        return 1

    def _random_merge(self, rng, fam, clusters, alpha, touched):
        """Exact merge of a random pair; the reverse is the random split above."""
        K = len(clusters)
        a = self.split_concentration
        i, j = sorted(int(v) for v in rng.choice(K, size=2, replace=False))
        ci, cj = clusters[i], clusters[j]
        both = fam.combine(ci.stats, cj.stats)
        log_target = -_log_split_target(fam, ci.stats, cj.stats, both, ci.n, cj.n, alpha)
        log_q_merge = -math.log(math.comb(K, 2))
        log_q_split = (math.log(2.0) - math.log(K - 1) + _log_beta(a + ci.n, a + cj.n)
                       - _log_beta(a, a))
        if math.log(rng.random()) >= log_target + log_q_split - log_q_merge:
            return 0
        self._merge_into(rng, fam, clusters, i, j, both)
        touched[i] = touched[j] = True
        return 1

    def _merge_into(self, rng, fam, clusters, i, j, both):
        """Cluster i becomes i ∪ j, with the two old clusters as its sub-clusters."""
        ci, cj = clusters[i], clusters[j]
        low = ci if ci.anchor_key <= cj.anchor_key else cj  # a uniform member of the union
        clusters[i] = _Cluster(ci.keys + cj.keys, both, ci.n + cj.n, min(ci.first, cj.first),
                               low.anchor, self.split_delay, concatenate(ci.stats, cj.stats),
                               (ci.keys, cj.keys), (-np.inf, -np.inf),
                               anchor_key=low.anchor_key)
        clusters[j] = None

    def _ready(self, c) -> bool:
        if c.sub is None or c.age < self.split_delay:
            return False
        if self.burn_in == "fixed":
            return True
        now, before = c.loglik
        return c.age >= self.max_split_delay or not now > before

    def _subcluster_splits(self, rng, fam, run, clusters, alpha, touched):
        """Split each ready cluster into its sub-clusters with eq. 21 (conjugate form); the
        ratios of all ready clusters are computed in one batch."""
        ready = []
        for k in range(len(touched)):
            c = clusters[k]
            if touched[k] or c is None or not self._ready(c):
                continue
            n_sub = fam.count(c.sub)
            if n_sub[0] == 0 or n_sub[1] == 0:
                if self.reseed_after is not None and c.n > 1:
                    # the sub-clusters collapsed into one: they propose nothing
                    c.restart_subclusters()
                continue
            ready.append(k)
        if not ready:
            return 0
        subs = concatenate(*(clusters[k].sub for k in ready))
        whole = concatenate(*(clusters[k].stats for k in ready))
        logf_sub = fam.log_marginal(subs).reshape(-1, 2)
        logf = fam.log_marginal(whole)
        n_sub = fam.count(subs).reshape(-1, 2)
        # Chang & Fisher eq. 21, conjugate form: the target ratio of the split
        log_h = _split_log_ratio(logf_sub[:, 0], logf_sub[:, 1], logf, n_sub[:, 0],
                                 n_sub[:, 1], alpha)
        accepted = 0
        for a, k in enumerate(ready):
            c = clusters[k]
            if math.log(rng.random()) >= log_h[a]:
                improved = log_h[a] > c.best
                c.best = max(c.best, float(log_h[a]))
                if self.reseed_after is None:
                    continue
                collapsed = min(n_sub[a]) <= 1 and c.n > 3
                stuck = (c.age >= self.split_delay + int(self.reseed_after)
                         and not improved)
                if collapsed or stuck:
                    # a split the target keeps rejecting: start its sub-clusters afresh
                    c.restart_subclusters()
                continue
            keys0 = [key for key in c.keys if key % 2 == 0]
            keys1 = [key for key in c.keys if key % 2 == 1]
            clusters[k] = _new_cluster(run, keys0, take(c.sub, [0]), 2 * k)
            clusters.append(_new_cluster(run, keys1, take(c.sub, [1]), 2 * k + 1))
            touched[k] = True
            accepted += 1
        return accepted

    def _pairwise_merges(self, rng, fam, clusters, alpha, touched):
        """Each pair once, in random order, at most one merge per cluster per iteration; the
        merged cluster's sub-clusters are the two old clusters.  ``"reverse"``: accepted with
        the target ratio, the reverse of the sub-cluster split; ``"practical"``: with the
        ratio of DPMMSubClusters.jl.  All pairs are scored in one batch."""
        live = [k for k in range(len(touched)) if not touched[k] and clusters[k] is not None]
        if len(live) < 2:
            return 0
        first, second = np.triu_indices(len(live), 1)
        stats = concatenate(*(clusters[k].stats for k in live))
        n = fam.count(stats)
        logf = fam.log_marginal(stats)
        both = fam.combine(take(stats, first), take(stats, second))
        logf_both = fam.log_marginal(both)
        n_l, n_r = n[first], n[second]
        n_m = n_l + n_r
        if self.merges == "reverse":
            # minus the split target ratio (ALGORITHMS.md section 3)
            log_h = -_split_log_ratio(logf[first], logf[second], logf_both, n_l, n_r, alpha)
        else:
            a2 = alpha / 2.0
            log_h = (-math.log(alpha) + math.lgamma(alpha) - 2 * math.lgamma(a2)
                     + gammaln(n_m) - gammaln(n_m + alpha)
                     + gammaln(n_l + a2) - gammaln(n_l) + gammaln(n_r + a2) - gammaln(n_r)
                     + logf_both - logf[first] - logf[second])
        accepted = 0
        for p in rng.permutation(len(first)):
            i, j = live[first[p]], live[second[p]]
            if touched[i] or touched[j]:
                continue
            if math.log(rng.random()) < log_h[p]:
                self._merge_into(rng, fam, clusters, i, j, take(both, [p]))
                touched[i] = touched[j] = True
                accepted += 1
        return accepted

    # -------------------------------------------------------------- relabel
    def _relabel(self, model, run, clusters, K, state, alpha) -> SubclusterState:
        live = [c for c in clusters if c is not None]
        order = sorted(range(len(live)), key=lambda a: live[a].first)
        label_map = np.empty(4 * K, dtype=np.int64)
        sub_map = np.full(4 * K, 2, dtype=np.int8)
        identity = True
        for new_id, a in enumerate(order):
            c = live[a]
            label_map[c.keys] = new_id
            if c.sub_keys is not None:
                sub_map[c.sub_keys[0]] = 0
                sub_map[c.sub_keys[1]] = 1
                identity = False
            if c.keys != [4 * new_id, 4 * new_id + 1, 4 * new_id + 2, 4 * new_id + 3]:
                identity = False
        live = [live[a] for a in order]
        if identity and run.counts[2 * K:].sum() == 0:  # no random-split codes either
            labels, sub = run.labels, run.codes
        else:
            labels, sub = self._data(model).relabel(run.labels, run.codes, label_map, sub_map)
        # a cluster whose sub-clusters start afresh keeps its statistics in its first slot
        fam = model.family
        sub_stats = concatenate(*(c.sub if c.sub is not None
                                  else concatenate(c.stats, fam.empty_stats(1)) for c in live))
        age = np.array([c.age for c in live], dtype=np.int64)
        anchors = np.array([c.anchor for c in live], dtype=np.int64)
        sub_ll = np.array([c.loglik[0] for c in live])
        best = np.array([c.best for c in live])
        return SubclusterState(labels, sub, alpha, age, sub_stats, anchors, sub_ll, best)


    # ------------------------------------------------ exact split-merge moves
    def _sequential_here(self, model) -> bool:
        """Whether this run's moves may be sequential: they need a move's points in one
        process, so not on a Dask cluster, nor in-process with its partition layout (whose
        chain must be the cluster's)."""
        if self.sequential is False or not _in_one_process(model):
            return False
        if self.sequential is None:  # not where the pass is blocked (many dimensions) ...
            pk = model.pass_kernel  # ... unless it is collapsed (a few thousand points)
            return pk is None or int(pk.block) == 0 or self._collapsed_here(model)
        return True

    def _collapsed_here(self, model) -> bool:
        """Whether the data pass is collapsed (``data_pass``): it needs the points in one
        process, like the sequential moves."""
        if self.data_pass == "instantiated" or not _in_one_process(model):
            return False
        return self.data_pass == "collapsed" or (
            self.data_pass is None and model.family.collapsed_pass(model.n_samples))

    def _collapsed_pass(self, rng, model, state):
        """The labels after one restricted collapsed Gibbs pass (``data_pass``), over random
        groups of clusters in parallel (``pass_groups``)."""
        kern = model.kernel
        labels = np.array(state.labels, dtype=np.int64)
        K = len(state.age)
        P = (int(self.pass_groups) if self.pass_groups is not None
             else 1 + int(rng.integers(2)))
        group = rng.integers(P, size=K)
        size = np.bincount(group, minlength=P)
        move_of = np.where(size[group] > 1, group, -1).astype(np.int64)
        pins = np.full((P, 2), -1, dtype=np.int64)
        rows, start, fixed = _sk.rows_by_move(labels, move_of, np.zeros(K, dtype=np.int64),
                                              pins)
        members = np.argsort(group, kind="stable").astype(np.int64)
        mstart = np.searchsorted(group[members], np.arange(P + 1)).astype(np.int64)
        seeds = rng.integers(2**63, size=(2, P)).astype(np.uint64)
        kstats = kern.alloc(K)
        counts = np.zeros(K, dtype=np.int64)
        rebuild, fns = _kernels.dispatch(kern, "rebuild_stats")
        rebuild(kern.data, kstats, kern.hyper, labels, counts, *fns)
        with threads(self.n_jobs):
            lanes = _sk.move_lanes(np.diff(start) * np.maximum(size, 1),
                                   numba.get_num_threads())
            _sk.shuffle_moves(rows, fixed, start, seeds[0], *lanes)
            fn = (kern.entry_points or {}).get("collapsed_groups")
            extra = (() if fn is not None else (kern.add, kern.remove, kern.log_predictive))
            (fn or _sk.collapsed_groups)(kern.data, kstats, kern.hyper, rows, start, members,
                                         mstart, labels, counts, seeds[1], lanes[0], lanes[1],
                                         np.empty((len(lanes[1]) - 1, max(K, 1))), *extra)
        return labels

    def _rounds(self, model) -> int:
        """Rounds of split-merge moves per iteration: ``n_rounds``, or by default (with
        sequential moves; else 1) ``min(ceil(10^5 / N), ceil(N / 300))`` between 1 and 16:
        about the same work per iteration from a few thousand points up, and one round on
        small data sets, where one already reaches most clusters."""
        if self.n_rounds is not None:
            return int(self.n_rounds)
        if not self._sequential_here(model):
            return 1
        n = max(int(model.n_samples), 1)
        return int(min(16, max(1, min(math.ceil(1e5 / n), math.ceil(n / 300)))))

    def _group_count(self, rng, model) -> int:
        """The number of groups P of this round: ``n_groups``, or by default ``2^u`` with u
        uniform on ``0 .. ceil(log2(min(N, 512)))`` (a mixture of kernels chosen
        independently of the state: few groups propose merges of any pair, many groups
        propose splits of every cluster), at most ``2^MANY_POINTS_TOP_GROUPS`` with sequential
        moves on ``MANY_POINTS`` points or more (see ``n_groups``)."""
        if self.n_groups is not None:
            return int(self.n_groups)
        n = int(model.n_samples)
        top = int(math.ceil(math.log2(max(2, min(n, 512)))))
        if n >= MANY_POINTS and self._sequential_here(model):
            top = min(top, MANY_POINTS_TOP_GROUPS)
        return 2 ** int(rng.integers(top + 1))

    def _targeted_pairs_max(self, stats) -> int:
        """The most pairs a group scores for ``merge_pairs="targeted"`` (0 for uniform):
        :func:`_pairs_max`."""
        return 0 if self.merge_pairs == "uniform" else _pairs_max(stats)

    def _pair_log_probs(self, fam, stats, n, alpha, groups):
        """``log P(pair)`` of every pair in each group of ``groups`` (lists of rows of
        ``stats``/``n``), as ``(first, second, log_p)`` arrays, pairs in group order and
        ``i < j`` within a group (see ``merge_pairs``)."""
        firsts, seconds, sizes = [], [], []
        for members in groups:
            m = np.asarray(members, dtype=np.int64)
            a, b = np.triu_indices(len(m), 1)
            firsts.append(m[a])
            seconds.append(m[b])
            sizes.append(len(a))
        first = np.concatenate(firsts)
        second = np.concatenate(seconds)
        log_p = np.empty(len(first))
        most = self._targeted_pairs_max(stats)
        targeted = np.zeros(len(first), dtype=bool)
        start = 0
        for members, size in zip(groups, sizes):
            if size > most:
                log_p[start:start + size] = -math.log(size)
            else:
                targeted[start:start + size] = True
            start += size
        if targeted.any():
            merge = _merge_log_ratios(fam, stats, n, alpha, first[targeted],
                                      second[targeted])
            log_w = np.minimum(merge, 0.0)
            part = log_p[targeted]
            start = 0
            at = 0
            for members, size in zip(groups, sizes):
                if size <= most:
                    w = log_w[at:at + size]
                    part[at:at + size] = np.logaddexp(-math.log(2.0 * size),
                                                      w - logsumexp(w) - math.log(2.0))
                    at += size
            log_p[targeted] = part
        return first, second, log_p

    def _pinch(self, n_samples: int) -> float:
        """The probability of a pinch launch: ``pinch``, or by default ``0.5 min(1,
        sqrt(10^4 / N))``, at least 0.05 (a constant of the run)."""
        if self.pinch is not None:
            return float(self.pinch)
        return max(0.05, 0.5 * min(1.0, math.sqrt(1e4 / max(int(n_samples), 1))))

    def _choose_moves(self, rng, fam, stats, n, alpha, n_groups: int,
                      sequential: bool = False, pinch: float = 0.5):
        """Each cluster joins one of ``n_groups`` groups uniformly; each non-empty group of
        ``K_g`` clusters proposes one move: a split of a uniformly chosen cluster (always
        when ``K_g = 1``, else with probability 1/2) or the merge of a uniformly chosen
        pair, whose side 0 (the cluster whose anchor the merged cluster keeps) is chosen
        uniformly (the smaller for the one-sided launches).  Each move's launch is a pinch
        with probability ``pinch``, a grow with probability ``grow``, else sequential (with
        ``sequential``) or EM.  The pair is uniform, or targeted (``merge_pairs``)."""
        K = len(n)
        group = rng.integers(n_groups, size=K)
        moves = []
        merging = []
        for g in np.unique(group):
            members = np.flatnonzero(group == g)
            k_g = len(members)
            u = rng.random()
            launch = ("pinch" if u < pinch else "grow" if u < pinch + self.grow
                      else "sequential" if sequential else "em")
            if k_g == 1 or rng.random() < _p_split(k_g):
                c = int(members[rng.integers(k_g)])
                if n[c] >= 2:  # a single point cannot be split (nor can the reverse merge)
                    moves.append(_Move("split", (c,), k_g, launch, tuple(members.tolist())))
            else:
                merging.append(len(moves))
                moves.append(_Move("merge", (), k_g, launch, tuple(members.tolist())))
        if merging:
            first, second, log_p = self._pair_log_probs(
                fam, stats, n, alpha / n_groups, [moves[b].group for b in merging])
            start = 0
            for b in merging:
                move = moves[b]
                size = move.k_g * (move.k_g - 1) // 2
                cdf = np.cumsum(np.exp(log_p[start:start + size]))
                pick = start + min(int(np.searchsorted(cdf, rng.random() * cdf[-1],
                                                       side="right")), size - 1)
                pair = [int(first[pick]), int(second[pick])]
                if rng.random() < 0.5:
                    pair.reverse()  # side 0 (whose anchor the union keeps) is uniform
                if move.launch in _ONE_SIDED and n[pair[1]] != n[pair[0]]:
                    pair.sort(key=lambda c: -n[c])  # side 1, the grown side, is the smaller
                moves[b] = move._replace(members=tuple(pair), log_pair=float(log_p[pick]))
                start += size
        return moves

    def _launch_moves(self, rng, model, state: SubclusterState):
        """One round of exact split-merge moves (the module notes give the ratio).

        Every move is anchored by two points, i on side 0 and j on side 1: a merge's are
        the anchors of its two clusters; a split's i is its cluster's anchor and j the
        other point with the smallest of independent keys (uniform over them).  The launch
        is a function of the move's points, i and j.
        """
        fam = model.family
        data = self._data(model)
        K = len(state.age)
        alpha = state.alpha
        stats = _pairs_combined(fam, state.sub_stats, K)
        n = np.rint(fam.count(stats)).astype(np.int64)
        n_groups = self._group_count(rng, model)
        moves = self._choose_moves(rng, fam, stats, n, alpha, n_groups,
                                   self._sequential_here(model), self._pinch(model.n_samples))
        if not moves:
            return state, 0, 0
        B = len(moves)
        block_of = np.full(K, -1, dtype=np.int64)
        side_of = np.full(K, -1, dtype=np.int64)
        pins = np.full((B, 2), -1, dtype=np.int64)
        size = np.zeros(B)
        for b, move in enumerate(moves):
            for side, c in enumerate(move.members):
                block_of[c] = b
                pins[b, side] = state.anchors[c]
                if move.kind == "merge":
                    side_of[c] = side
            size[b] = n[list(move.members)].sum()
        moving = block_of >= 0
        kind = np.array([m.launch for m in moves])
        # sequential moves need no subsample, only their second anchors
        rate = np.where(kind == "sequential", 1e-300, np.minimum(1.0, self.launch_size / size))
        thresholds = np.zeros(K)
        thresholds[moving] = rate[block_of[moving]]

        # the launch subsamples, and the second anchor of each split (a uniform member of
        # the cluster other than its anchor, chosen by keys independent of the subsample)
        index, sub_labels, rows, second = data.select(
            int(rng.integers(2**63)), int(rng.integers(2**63)), thresholds, state.anchors,
            state.labels)
        for b, move in enumerate(moves):
            if move.kind == "split":
                pins[b, 1] = second[move.members[0]]
        ready = pins[:, 1] >= 0

        # the anchors' rows seed every launch
        flat = pins[ready].ravel()
        seeds = fam.empty_stats(2 * B)
        if len(flat):
            one = fam.stats(data.rows_of(flat), np.arange(len(flat)), len(flat))
            seeds = _with_rows(seeds, _pair_rows(np.flatnonzero(ready)), one)
        params = fam.point_params(seeds, rng)
        log_w = np.full((B, 2), math.log(0.5))
        # one-sided launches: the whole move against its point j, weighted 1 / N_S
        sided = np.flatnonzero(ready & np.isin(kind, _ONE_SIDED))
        if len(sided):
            whole = concatenate(*(_stats_of(fam, stats, moves[b].members) for b in sided))
            params = _with_rows(params, 2 * sided, fam.point_params(whole, rng))
            log_w[sided, 0] = np.log1p(-1.0 / size[sided])
            log_w[sided, 1] = -np.log(size[sided])

        # EM and grow launches: stochastic EM on the subsample, then on all the move's points
        em = ready & np.isin(kind, ("em", "grow"))
        em_block = np.where(moving & em[np.maximum(block_of, 0)], block_of, -1)
        if em.any():
            params, log_w = self._launch_on_subsample(rng, model, rows, sub_labels, em_block,
                                                      params, log_w)
            rows2 = _pair_rows(np.flatnonzero(em))
            for _ in range(int(self.launch_passes)):
                run = self._launch_run(rng, model, data, state.labels, params, log_w,
                                       em_block, side_of, pins, 0)
                new_params, new_w = self._launch_params(rng, fam, run, size, K)
                params = _with_rows(params, rows2, take(new_params, rows2))
                log_w[em] = new_w[em]

        # the proposal: splits drawn, merges scored, every point counted
        seq = ready & (kind == "sequential")
        launched = ready & ~seq
        block_of = np.where(moving & launched[np.maximum(block_of, 0)], block_of, -1)
        run = self._staged_proposal(rng, model, data, state.labels, params, log_w, block_of,
                                    side_of, pins, seeds, size, kind == "pinch")
        seq_sides = None
        if seq.any():
            run, seq_sides = self._sequential_proposal(rng, model, data, state.labels, run,
                                                       moves, np.flatnonzero(seq), side_of,
                                                       pins)
        return self._apply_launch_moves(rng, model, data, state, run, moves, stats, n,
                                        n_groups, alpha, pins, ready, seq_sides)

    def _staged_proposal(self, rng, model, data, labels, params, log_w, block_of, side_of,
                         pins, seeds, size, pinch):
        """The proposal pass, in ``stages`` stages for the EM moves (see the parameter):
        stage m allocates the points whose stage key lies in its range, with components
        fitted to the anchors and the sides allocated so far; the result adds up the
        stages (``logq`` is the sum of the stages' log probabilities)."""
        fam = model.family
        K = len(block_of)
        B = log_w.shape[0]
        m = float(self.launch_size)
        # stage sizes m/32, m/4, then the rest: a merge's first stage, scored under the EM
        # launch, is small, and the later ones are scored under components fitted to the
        # current sides (measured on fragments of one cluster: log q -815 against -1,775
        # with a first stage of m)
        first = max(2.0, m / 32.0)
        cuts = [np.minimum(1.0, first * 8.0 ** a / size) for a in range(self.stages - 1)]
        # a pinch allocates everything in the first stage
        edges = [np.zeros(B)] + [np.where(pinch, 2.0, c) for c in cuts] + [np.full(B, 2.0)]
        stage_key = int(rng.integers(2**63))
        total = None
        codes = None
        n_stages = len(edges) - 1
        for a in range(n_stages):
            last = a == n_stages - 1
            stage = np.stack([edges[a], edges[a + 1]], axis=1)
            if not last and not np.any(stage[:, 0] < np.minimum(stage[:, 1], 1.0)):
                continue  # no move has points in this stage
            run = self._launch_run(rng, model, data, labels, params, log_w, block_of,
                                   side_of, pins, 2 if last else 1, stages=stage,
                                   stage_key=stage_key, codes=codes)
            labels, codes = run.labels, run.codes
            total = run if total is None else _add_stages(fam, total, run, K)
            if not last:
                grown = fam.combine(seeds, total.stats)
                fitted = fam.point_params(grown, rng)
                em = np.flatnonzero(~pinch)
                rows2 = _pair_rows(em)
                params = _with_rows(params, rows2, take(fitted, rows2))
                counts = fam.count(grown).reshape(-1, 2)
                log_w = log_w.copy()
                log_w[em] = (np.log(counts[em] + 1.0)
                             - np.log(counts[em].sum(axis=1, keepdims=True) + 2.0))
        return total

    def _sequential_proposal(self, rng, model, data, labels, run, moves, seq, side_of, pins):
        """The sequential moves ``seq`` (indices into ``moves``): each move's points other
        than its anchors in a uniformly random order (an auxiliary variable drawn afresh,
        the same law for a move and its reverse), allocated by :func:`~dpclust.kernels.
        subcluster.sequential_move`, one thread per move.  Returns ``run`` with
        their sides (codes), counts, ``logq`` and the sides' log marginals (``logf``), and a
        :class:`_SequentialSides` that counts a side's statistics when a move needs them."""
        K = len(side_of)
        move_of = np.full(K, -1, dtype=np.int64)
        for a, b in enumerate(seq):
            for c in moves[b].members:
                move_of[c] = a
        spins = np.ascontiguousarray(pins[seq], dtype=np.int64)
        rows, start, fixed = _sk.rows_by_move(np.asarray(labels, dtype=np.int64), move_of,
                                              np.asarray(side_of, dtype=np.int64), spins)
        B = len(seq)
        order_seeds = _sk.chunk_seeds(int(rng.integers(2**63)), B)
        seeds = _sk.chunk_seeds(int(rng.integers(2**63)), B)
        with threads(self.n_jobs):
            lanes = _sk.move_lanes(np.diff(start), numba.get_num_threads())
            _sk.shuffle_moves(rows, fixed, start, order_seeds, *lanes)
            kern, local_rows, local_pins, copied = _copied_rows(model, rows, spins)
            sides, logq, counts, logf = _sk.sequential_allocation(
                kern, local_rows, start, fixed, local_pins, seeds, lanes)
        codes = np.array(run.codes)
        codes[rows] = sides
        codes[spins[:, 0]] = 0
        codes[spins[:, 1]] = 1
        rows2 = _pair_rows(seq)
        cnt = run.counts.copy()
        cnt[K + rows2] = counts
        lq = run.logq.copy()
        lq[2 * np.asarray(seq)] = logq
        lf = np.full(len(run.logq), np.nan)
        lf[rows2] = logf
        sides_of = _SequentialSides(model.family, data, rows, start, sides, spins, seq, copied)
        return run._replace(codes=codes, counts=cnt, logq=lq, logf=lf), sides_of

    # ------------------------------------------------------------ multi-way moves
    def _multiway_here(self, model) -> bool:
        """Whether this run makes multi-way moves (``multiway``; sequential moves only)."""
        return int(self.multiway) >= 3 and self._sequential_here(model)

    def _join_probs(self, fam, stats, n, alpha):
        """``P[u, v]``: the probability that cluster v joins a multi-way merge set grown
        around u, ``exp(min(s_uv, 0))`` within ``[MULTIWAY_JOIN_MIN, 1 - MULTIWAY_JOIN_MIN]``
        (``multiway``); None where the clusters' pairs exceed the pair-score budget."""
        K = len(n)
        if math.comb(K, 2) > _pairs_max(stats) or K < 2:
            return None
        i, j = np.triu_indices(K, 1)
        merge = _merge_log_ratios(fam, stats, n, alpha, i, j)
        p = np.clip(np.exp(np.minimum(merge, 0.0)), MULTIWAY_JOIN_MIN, 1.0 - MULTIWAY_JOIN_MIN)
        P = np.zeros((K, K))
        P[i, j] = p
        P[j, i] = p
        return P

    @staticmethod
    def _log_set_prob(P, members) -> float:
        """``log P(set)`` of the multi-way merge set ``members`` under join probabilities
        ``P``: ``(1/K) sum_(u in set) prod_(v in set, v != u) P[u, v] prod_(v not in set)
        (1 - P[u, v])``."""
        K = P.shape[0]
        inside = np.zeros(K, dtype=bool)
        inside[list(members)] = True
        out = ~inside
        terms = []
        for u in members:
            mine = inside.copy()
            mine[u] = False
            terms.append(np.log(P[u, mine]).sum() + np.log1p(-P[u, out]).sum())
        return float(logsumexp(terms) - math.log(K))

    def _multiway_ratio(self, n_parts, logf_parts, logf_c, log_q, K_before, log_set, alpha):
        """Log Hastings ratio of splitting a cluster (one of ``K_before``) into the m parts
        (the reverse merge's set has log probability ``log_set`` after the split)."""
        m = len(n_parts)
        n_c = float(np.sum(n_parts))
        target = ((m - 1) * math.log(alpha) + float(gammaln(n_parts).sum())
                  - float(gammaln(n_c)) + float(np.sum(logf_parts)) - logf_c)
        anchors = math.log(n_c) - float(np.log(n_parts).sum())
        forward = (math.log(MULTIWAY_SPLIT) - math.log(K_before)
                   - math.log(int(self.multiway) - 2)
                   - sum(math.log(n_c - t) for t in range(1, m)) + log_q)
        reverse = math.log(1.0 - MULTIWAY_SPLIT) + log_set - float(gammaln(m + 1))
        return target + anchors + reverse - forward

    def _multiway_move(self, rng, model, state: SubclusterState):
        """One multi-way split or merge on all the clusters (``multiway``)."""
        fam = model.family
        K = len(state.age)
        alpha = state.alpha
        m_max = int(self.multiway)
        stats = _pairs_combined(fam, state.sub_stats, K)
        n = np.rint(fam.count(stats)).astype(np.int64)
        labels = np.asarray(state.labels)
        seed = int(rng.integers(2**63))
        if rng.random() < MULTIWAY_SPLIT:
            c = int(rng.integers(K))
            m = int(rng.integers(3, m_max + 1))
            if n[c] < m:
                return state, 0, 0
            members = np.flatnonzero(labels == c)
            others = members[members != state.anchors[c]]
            pins = np.concatenate([[state.anchors[c]],
                                   rng.choice(others, size=m - 1, replace=False)])
            rows = rng.permutation(others[~np.isin(others, pins)])
            kern, local_rows, local_pins, copied = _copied_rows(model, rows, pins)
            sides, log_q, counts, logf = _sk.multiway_allocation(
                kern, local_rows, np.full(len(rows), -1, dtype=np.int64), local_pins, seed)
            rest = np.delete(np.arange(K), c)
            parts = _rows_stats(fam, self._data(model), copied, np.concatenate([rows, pins]),
                                np.concatenate([local_rows, local_pins]),
                                np.concatenate([sides, np.arange(m)]), m)
            post = concatenate(take(stats, rest), parts)
            P = self._join_probs(fam, post, np.concatenate([n[rest], counts]).astype(float),
                                 alpha)
            if P is None:
                return state, 0, 0  # the reverse merge would not be proposed
            log_set = self._log_set_prob(P, list(range(K - 1, K - 1 + m)))
            logf_c = float(fam.log_marginal(take(stats, [c]))[0])
            log_r = self._multiway_ratio(counts, logf, logf_c, log_q, K, log_set, alpha)
            if not math.log(rng.random()) < log_r:
                return state, 0, 0
            new = labels.copy()
            new_ids = np.concatenate([[c], K + np.arange(m - 1)])
            new[rows] = new_ids[sides]
            new[pins] = new_ids
            anchors = np.concatenate([state.anchors, pins[1:]])
            anchors[c] = pins[0]
            slots = concatenate(stats, take(parts, np.arange(1, m)))
            slots = _with_rows(slots, [c], take(parts, [0]))
            return self._canonical_state(fam, state, new, slots, anchors), 1, 0
        # merge: a set grown around a uniform cluster
        if K < 3:
            return state, 0, 0
        P = self._join_probs(fam, stats, n.astype(float), alpha)
        if P is None:
            return state, 0, 0
        u = int(rng.integers(K))
        joins = rng.random(K) < P[u]
        joins[u] = True
        members = np.flatnonzero(joins)
        m = len(members)
        if m < 3 or m > m_max:
            return state, 0, 0
        log_set = self._log_set_prob(P, members.tolist())
        order = members[rng.permutation(m)]  # side s is cluster order[s]
        side_of = np.full(K, -1, dtype=np.int64)
        side_of[order] = np.arange(m)
        sides_all = side_of[labels]
        pins = state.anchors[order].astype(np.int64)
        rows = np.flatnonzero(sides_all >= 0)
        rows = rng.permutation(rows[~np.isin(rows, pins)])
        kern, local_rows, local_pins, _ = _copied_rows(model, rows, pins)
        _, log_q, counts, logf = _sk.multiway_allocation(kern, local_rows, sides_all[rows],
                                                         local_pins, seed)
        both = _stats_of(fam, stats, order)
        logf_c = float(fam.log_marginal(both)[0])
        log_r = -self._multiway_ratio(counts, logf, logf_c, log_q, K - m + 1, log_set, alpha)
        if not math.log(rng.random()) < log_r:
            return state, 0, 0
        keep = int(order[0])
        label_map = np.arange(K, dtype=np.int64)
        label_map[order] = keep
        anchors = state.anchors.copy()
        anchors[keep] = pins[0]
        slots = _with_rows(stats, [keep], both)
        return self._canonical_state(fam, state, label_map[labels], slots, anchors), 0, 1

    @staticmethod
    def _canonical_state(fam, state, labels, slot_stats, anchors):
        """The state after a multi-way move: ``labels`` (ids of the clusters of
        ``slot_stats``, some perhaps empty) numbered in the canonical order (by first
        member), as :meth:`_apply_launch_moves` leaves it."""
        n_slots = len(anchors)
        first = np.full(n_slots, len(labels), dtype=np.int64)
        _sk.first_members(labels, first)
        live = np.flatnonzero(first < len(labels))
        order = live[np.argsort(first[live], kind="stable")]
        new_id = np.full(n_slots, -1, dtype=np.int64)
        new_id[order] = np.arange(len(order))
        return _state_of_clusters(fam, new_id[labels], np.zeros_like(state.sublabels),
                                  state.alpha, take(slot_stats, order),
                                  np.asarray(anchors, dtype=np.int64)[order])

    def _launch_on_subsample(self, rng, model, rows, sub_labels, block_of, params, log_w):
        """``launch_iter`` stochastic EM steps on each EM move's subsample, from the launch
        ``params`` (seeded by the anchors); returns the new ``(params, log_w)``."""
        fam = model.family
        if self.launch_iter == 0 or len(sub_labels) == 0:
            return params, log_w
        B = log_w.shape[0]
        blocks = block_of[sub_labels]
        live = np.unique(blocks[blocks >= 0])
        rows2 = _pair_rows(live)
        size = np.bincount(blocks[blocks >= 0], minlength=B).astype(np.float64)
        local = _SubsampleRows(model, rows, self.n_jobs)
        no_side = np.full(len(block_of), -1, dtype=np.int64)
        no_pins = np.full((B, 2), -1, dtype=np.int64)
        log_w = log_w.copy()
        for _ in range(int(self.launch_iter)):
            run = self._launch_run(rng, model, local, sub_labels, params, log_w, block_of,
                                   no_side, no_pins, 0)
            new_params, new_w = self._launch_params(rng, fam, run, size, len(block_of))
            params = _with_rows(params, rows2, take(new_params, rows2))
            log_w[live] = new_w[live]
        return params, log_w

    @staticmethod
    def _launch_params(rng, fam, run, size, K):
        """Launch parameters and weights from the sides' statistics of an EM step."""
        params = fam.point_params(run.stats, rng)
        counts = run.counts[K:].reshape(-1, 2).astype(np.float64)
        log_w = np.log(counts + 1.0) - np.log(size[:, None] + 2.0)
        return params, log_w

    def _launch_run(self, rng, model, data, labels, params, log_w, block_of, side_of, pins,
                    mode, stages=None, stage_key=0, codes=None):
        """One launch pass of ``mode`` over ``data`` (all the points, or a subsample)."""
        K = len(block_of)
        B = log_w.shape[0]
        spec = LaunchSpec(None, log_w, block_of, side_of, pins, int(mode),
                          int(rng.integers(2**63)), K + 2 * B, stages, int(stage_key))
        if data.pass_kernel is None:
            X = data.X if isinstance(data, _SubsampleRows) else model.X
            return _reference_launch(rng, model.family, X, params, spec, labels, codes)
        spec = spec._replace(kparams=data.pack(params))
        labels, codes, part = data.launch_pass(spec, labels, codes)
        return LaunchResult(labels, codes, data.unpack(part.acc), part.cnt, part.first,
                            part.res, part.ll, part.rkey)

    def _apply_launch_moves(self, rng, model, data, state, run, moves, stats, n, n_groups,
                            alpha, pins, ready, seq_sides=None):
        """Accept or reject every move with its ratio (module notes); relabel once.
        ``seq_sides``: the sequential moves' sides (:class:`_SequentialSides`)."""
        fam = model.family
        K = len(n)
        log_p = math.log(n_groups)
        records = []  # per cluster: [stats, first, anchor] (None: merged away)
        for k in range(K):
            records.append([take(stats, [k]), int(run.first[k]), int(state.anchors[k])])
        label_map = np.repeat(np.arange(K, dtype=np.int64), 4)
        cache = {}

        def halves_of(b):
            """The sides' statistics and first members of split b (a sequential move's
            are counted here, only for the moves that need them)."""
            if b not in cache:
                if seq_sides is not None and b in seq_sides:
                    cache[b] = seq_sides.halves(b)
                else:
                    cache[b] = (take(run.stats, [2 * b, 2 * b + 1]),
                                (int(run.first[K + 2 * b]), int(run.first[K + 2 * b + 1])))
            return cache[b]

        # a split's reverse: its two sides as a pair of its group after the split (the only
        # pair of a group of one cluster)
        split_pair = {b: 0.0 for b, m in enumerate(moves) if m.kind == "split"}
        proposed = [b for b, m in enumerate(moves)
                    if ready[b] and m.kind == "split" and m.k_g > 1]
        if proposed:
            pool = concatenate(stats, *(halves_of(b)[0] for b in proposed))
            n_pool = np.concatenate([np.asarray(n, dtype=np.float64)]
                                    + [run.counts[K + 2 * b:K + 2 * b + 2] for b in proposed])
            after = [tuple(c for c in moves[b].group if c != moves[b].members[0])
                     + (K + 2 * a, K + 2 * a + 1) for a, b in enumerate(proposed)]
            _, _, pair_p = self._pair_log_probs(fam, pool, n_pool, alpha / n_groups, after)
            ends = np.cumsum([len(g) * (len(g) - 1) // 2 for g in after])
            split_pair.update({b: float(pair_p[end - 1]) for b, end in zip(proposed, ends)})
        splits = merges = 0
        for b, move in enumerate(moves):
            if not ready[b]:
                continue
            k_g = move.k_g
            log_q = float(run.logq[2 * b])  # the allocation of all but the two anchors
            if move.kind == "split":
                c = move.members[0]
                n_a, n_b = int(run.counts[K + 2 * b]), int(run.counts[K + 2 * b + 1])
                if move.launch in _ONE_SIDED and n_b > n_a:
                    continue  # its reverse merge would grow the other cluster
                if seq_sides is not None and b in seq_sides:
                    # the sides' log marginals from the allocation itself
                    logf_c = float(fam.log_marginal(records[c][0])[0])
                    target = float(_split_log_ratio(run.logf[2 * b], run.logf[2 * b + 1],
                                                    logf_c, n_a, n_b, alpha))
                else:
                    halves = halves_of(b)[0]
                    target = _log_split_target(fam, take(halves, [0]), take(halves, [1]),
                                               records[c][0], n_a, n_b, alpha)
                log_ratio = (target - log_p
                             + _log_anchored_split(n_a, n_b, k_g, log_q,
                                                   move.launch in _ONE_SIDED, split_pair[b]))
                if math.log(rng.random()) < log_ratio:
                    halves, first = halves_of(b)
                    records[c] = [take(halves, [0]), int(first[0]), int(pins[b, 0])]
                    records.append([take(halves, [1]), int(first[1]), int(pins[b, 1])])
                    label_map[4 * c + 1] = len(records) - 1
                    splits += 1
            else:
                left, right = move.members  # side 0, side 1
                s_l, s_r = records[left][0], records[right][0]
                both = fam.combine(s_l, s_r)
                n_l, n_r = int(n[left]), int(n[right])
                log_ratio = -(_log_split_target(fam, s_l, s_r, both, n_l, n_r, alpha) - log_p
                              + _log_anchored_split(n_l, n_r, k_g - 1, log_q,
                                                    move.launch in _ONE_SIDED, move.log_pair))
                if math.log(rng.random()) < log_ratio:
                    records[left] = [both, min(records[left][1], records[right][1]),
                                     int(pins[b, 0])]
                    records[right] = None
                    label_map[4 * right:4 * right + 4] = left
                    merges += 1
        if splits == 0 and merges == 0:
            return state, 0, 0
        live = [a for a, r in enumerate(records) if r is not None]
        order = sorted(live, key=lambda a: records[a][1])
        new_id = np.full(len(records), -1, dtype=np.int64)
        new_id[order] = np.arange(len(order))
        label_map = new_id[label_map]
        labels, sub = data.relabel(run.labels, run.codes, label_map,
                                   np.zeros(4 * K, dtype=np.int8))
        cluster_stats = concatenate(*(records[a][0] for a in order))
        anchors = np.array([records[a][2] for a in order], dtype=np.int64)
        return _state_of_clusters(fam, labels, sub, alpha, cluster_stats, anchors), splits, merges


class _Move(NamedTuple):
    """One split-merge move: ``kind`` "split" (``members = (c,)``) or "merge" (two
    clusters, side 0 and side 1), the size ``k_g`` of its group, its launch: "em"
    (symmetric), "grow" or "pinch" (side 1 grown from one point, j), the clusters of its
    group, and for a merge the log probability of choosing its pair."""

    kind: str
    members: tuple
    k_g: int
    launch: str
    group: tuple = ()
    log_pair: float = 0.0  # a merge's: log P(its pair | its group)


def _state_of_clusters(fam, labels, sublabels, alpha, cluster_stats, anchors):
    """The state after split-merge moves: clusters ``cluster_stats`` (canonical order) with
    ``anchors``, each cluster's statistics in its first sub-cluster slot and none in the
    second, fresh sub-clusters (age 1, nothing scored yet)."""
    k = len(anchors)
    empty = fam.empty_stats(k)
    sub_stats = type(cluster_stats)(*(
        np.stack([np.asarray(a), np.asarray(e)], axis=1).reshape((2 * k,) + np.shape(a)[1:])
        for a, e in zip(cluster_stats, empty)))
    return SubclusterState(labels, sublabels, alpha, np.ones(k, dtype=np.int64), sub_stats,
                           anchors, np.full(k, -np.inf), np.full(k, -np.inf))


def _copied_rows(model, rows, pins):
    """``(kern, local_rows, local_pins, copied)``: the collapsed kernel over ``rows`` and then
    ``pins`` copied in that order where the family copies rows (a long scan in a random
    order then reads memory in sequence; 10^6 points: about half the time), with the rows'
    and pins' indices into the copy and the copy itself; else the model's kernel, the rows
    and pins as given, and None."""
    pins = np.asarray(pins, dtype=np.int64)
    kern = model.family.gathered_kernel(model.kernel, np.concatenate([rows, pins.ravel()]))
    if kern is None:
        return model.kernel, rows, pins, None
    local_pins = len(rows) + np.arange(pins.size, dtype=np.int64).reshape(pins.shape)
    return kern, np.arange(len(rows), dtype=np.int64), local_pins, kern.data[0]


def _rows_stats(fam, data, copied, rows, local, labels, n_clusters):
    """Statistics of the data rows ``rows`` in clusters ``labels``, read from ``copied`` at
    ``local`` where :func:`_copied_rows` made a copy (one contiguous read), else from the
    data."""
    if copied is None:
        return data.stats_at(rows, labels, n_clusters)
    return fam.stats_at(copied, local, labels, n_clusters)


def _stats_of(fam, stats, members):
    """Statistics of the union of clusters ``members``."""
    out = take(stats, [members[0]])
    for c in members[1:]:
        out = fam.combine(out, take(stats, [c]))
    return out


class _SequentialSides:
    """The sides drawn by the sequential moves ``seq`` (rows grouped by move as
    :func:`~dpclust.kernels.subcluster.rows_by_move` gives them, the anchors
    apart); ``halves(b)`` counts move b's two sides' statistics and first members, from
    ``copied`` where the family copied the moves' rows in their order (a move's rows, then
    every move's two anchors: one contiguous read), else from the data."""

    def __init__(self, fam, data, rows, start, sides, pins, seq, copied=None):
        self.fam, self.data, self.copied = fam, data, copied
        self.rows, self.start, self.sides, self.pins = rows, start, sides, pins
        self.at = {int(b): a for a, b in enumerate(seq)}

    def __contains__(self, b) -> bool:
        return int(b) in self.at

    def halves(self, b):
        a = self.at[int(b)]
        lo, hi = self.start[a], self.start[a + 1]
        rows = np.concatenate([self.rows[lo:hi], self.pins[a]])
        sides = np.concatenate([self.sides[lo:hi], [0, 1]])
        local = np.concatenate([np.arange(lo, hi), len(self.rows) + 2 * a + np.arange(2)])
        stats = _rows_stats(self.fam, self.data, self.copied, rows, local, sides, 2)
        return stats, (int(rows[sides == 0].min()), int(rows[sides == 1].min()))


class LaunchResult(NamedTuple):
    """What a launch pass returns: the labels it read and the sides (``codes``; handles to
    arrays on a Dask cluster), the 2B sides' statistics, counts per slot (K clusters then the
    2B sides), first and a uniform member per slot, and ``logq`` per move (``log q`` of the
    allocation and of its mirror image)."""

    labels: Any
    codes: Any
    stats: Any
    counts: np.ndarray
    first: np.ndarray
    member: np.ndarray
    logq: np.ndarray
    member_key: np.ndarray
    logf: Any = None  # the sides' log marginals, where a sequential move counted them


def _add_stages(fam, a: LaunchResult, b: LaunchResult, K: int) -> LaunchResult:
    """Two stages of a proposal added up: the sides' statistics, counts, first points,
    members (the smaller key) and ``logq``; the clusters' slots are the later stage's."""
    counts = b.counts.copy()
    counts[K:] += a.counts[K:]
    first = b.first.copy()
    take_a = (a.first[K:] >= 0) & ((b.first[K:] < 0) | (a.first[K:] < b.first[K:]))
    first[K:] = np.where(take_a, a.first[K:], b.first[K:])
    member, key = b.member.copy(), b.member_key.copy()
    smaller = a.member_key[K:] < b.member_key[K:]
    member[K:] = np.where(smaller, a.member[K:], b.member[K:])
    key[K:] = np.where(smaller, a.member_key[K:], b.member_key[K:])
    return LaunchResult(b.labels, b.codes, fam.combine(a.stats, b.stats), counts, first,
                        member, a.logq + b.logq, key)


class _SubsampleRows:
    """The launch subsample as a data side of its own: one partition of ``X``, rows
    numbered from 0, in chunks of :data:`SUBSAMPLE_CHUNK` rows run on ``n_jobs`` threads."""

    def __init__(self, model, X, n_jobs=None):
        self.X = X
        self.n_jobs = n_jobs
        self.pass_kernel = (None if model.pass_kernel is None
                            else model.family.pass_kernel(X, model.data_summary))

    def pack(self, params):
        return self.pass_kernel.pack(params)

    def unpack(self, acc):
        return self.pass_kernel.unpack(acc)

    def launch_pass(self, spec, labels, codes=None):
        bounds = chunk_bounds(len(labels), SUBSAMPLE_CHUNK, 2 * spec.n_moves,
                              self.pass_kernel.n_stats)
        with threads(self.n_jobs):
            return launch_partition(self.pass_kernel, spec,
                                    np.asarray(labels, dtype=np.int64), 0, bounds, 0, codes)


# ---------------------------------------------------------------- helpers
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
    both = fam.log_marginal(fam.combine(take(stats, i), take(stats, j)))
    return -_split_log_ratio(logf[i], logf[j], both, n[i], n[j], alpha)


def _pair_rows(index):
    """Rows ``2k, 2k + 1`` of each ``k`` of ``index``, in order: the two sub-clusters of
    clusters, or the two sides of moves."""
    index = np.asarray(index, dtype=np.int64)
    return np.stack([2 * index, 2 * index + 1], axis=1).ravel()


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


def _reference_launch(rng, fam, X, params, spec, labels, codes=None) -> LaunchResult:
    """The launch pass in NumPy, for families without a :class:`PassKernel` (same
    distribution as the numba pass, different random numbers; in-process only)."""
    labels = np.asarray(labels, dtype=np.int64)
    K = len(spec.block_of)
    B = spec.n_moves
    n = len(labels)
    blocks = spec.block_of[labels]
    moving = np.flatnonzero(blocks >= 0)
    pins = np.asarray(spec.pins).reshape(-1, 2)
    b = blocks[moving]
    pin_side = np.where(moving == pins[b, 0], 0, np.where(moving == pins[b, 1], 1, -1))
    if spec.stages is not None:  # the points of this stage (pinned ones with the first)
        u3 = _sk.point_keys(np.uint64(spec.stage_key), moving.astype(np.int64))
        lo, hi = spec.stages[b, 0], spec.stages[b, 1]
        inside = np.where(pin_side >= 0, lo == 0.0, (u3 >= lo) & (u3 < hi))
        moving, b, pin_side = moving[inside], b[inside], pin_side[inside]
    codes = np.zeros(n, dtype=np.int8) if codes is None else np.array(codes)
    logq = np.zeros(2 * B)
    s = np.zeros(len(moving), dtype=np.int64)
    if len(moving):
        ll = fam.log_likelihood(fam.subset(X, moving), params)  # (m, 2B)
        a0 = ll[np.arange(len(b)), 2 * b] + spec.log_w[b, 0]
        a1 = ll[np.arange(len(b)), 2 * b + 1] + spec.log_w[b, 1]
        lse = np.logaddexp(a0, a1)
        fixed = spec.side_of[labels[moving]] if spec.mode >= 1 else np.full(len(b), -1)
        pinned = pin_side >= 0
        drawn = (rng.random(len(b)) < np.exp(a1 - lse)).astype(np.int64)
        s = np.where(fixed >= 0, fixed, np.where(pinned, pin_side, drawn))
        if spec.mode >= 1:
            lp = np.where(pinned, 0.0, np.where(s == 0, a0 - lse, a1 - lse))
            lq = np.where(pinned, 0.0, np.where(s == 0, a1 - lse, a0 - lse))
            logq = (np.bincount(2 * b, weights=lp, minlength=2 * B)
                    + np.bincount(2 * b + 1, weights=lq, minlength=2 * B))
            codes[moving] = s
    counted = np.ones(len(moving), dtype=bool) if spec.mode == 0 else \
        spec.side_of[labels[moving]] < 0
    side_rows = moving[counted]
    side_slot = 2 * b[counted] + s[counted]
    stats = fam.stats(fam.subset(X, side_rows), side_slot, 2 * B) if len(side_rows) \
        else fam.empty_stats(2 * B)
    slots = np.concatenate([labels, K + side_slot]) if spec.mode == 2 else K + side_slot
    points = np.concatenate([np.arange(n), side_rows]) if spec.mode == 2 else side_rows
    counts = np.bincount(slots, minlength=K + 2 * B)
    first = np.full(K + 2 * B, -1, dtype=np.int64)
    member = np.full(K + 2 * B, -1, dtype=np.int64)
    rev = np.arange(len(slots))[::-1]
    first[slots[rev]] = points[rev]
    perm = rng.permutation(len(slots))
    member[slots[perm]] = points[perm]
    # keys of the members: the smallest of that many uniforms, as in the compiled pass
    key = np.where(counts > 0, rng.beta(1.0, np.maximum(counts, 1)), 1.0)
    return LaunchResult(labels, codes, stats, counts, first, member, logq, key)


def _in_one_process(model) -> bool:
    """Whether the model's points are in this process with a collapsed kernel, as the
    sequential moves and the collapsed pass need (not on a Dask cluster, nor in-process with
    its partition layout, whose chain must be the cluster's)."""
    return getattr(model, "partition_rows", ()) is None and model.kernel is not None


def _log_pass_weight(counts) -> float:
    """``log w(z)`` of the data pass's Metropolis-Hastings ratio ``w(z') / w(z)`` (module
    notes): ``sum_k log Gamma(N_k) - log N_k - log Gamma(N_k - 1 + epsilon)``."""
    n = np.asarray(counts, dtype=np.float64)
    return float(np.sum(gammaln(n) - np.log(n) - gammaln(n - 1.0 + PASS_WEIGHT_OFFSET)))


def _log_beta(a, b):
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _split_log_ratio(logf_l, logf_r, logf_c, n_l, n_r, alpha):
    """``log alpha + lgamma(N_l) + lgamma(N_r) - lgamma(N_c) + log f(X_l) + log f(X_r)
    - log f(X_c)``: the target ratio of a split (ALGORITHMS.md section 3), from the parts'
    log marginals; elementwise over arrays of splits."""
    return (math.log(alpha) + gammaln(n_l) + gammaln(n_r) - gammaln(n_l + n_r)
            + logf_l + logf_r - logf_c)


def _log_split_target(fam, left, right, both, n_l, n_r, alpha):
    """:func:`_split_log_ratio` of one split given the statistics of its parts."""
    logf = fam.log_marginal(concatenate(left, right, both))
    return float(_split_log_ratio(logf[0], logf[1], logf[2], n_l, n_r, alpha))


def _with_rows(params, rows, values):
    """A copy of batched ``params`` whose components ``rows`` are replaced by ``values``."""
    out = type(params)(*(np.array(a) for a in params))
    for mine, theirs in zip(out, values):
        mine[rows] = theirs
    return out


def _pairs_combined(fam, sub_stats, K):
    """Cluster statistics from the statistics of their two sub-clusters."""
    return fam.combine(take(sub_stats, np.arange(0, 2 * K, 2)),
                       take(sub_stats, np.arange(1, 2 * K, 2)))


def _smaller_key(run, a, b):
    """``(member, key)`` of the union of slots a and b: the member with the smaller key (a
    uniform member of the union, since each slot's is the smallest of uniform keys)."""
    j = a if run.member_key[a] <= run.member_key[b] else b
    return int(run.member[j]), float(run.member_key[j])


def _new_cluster(run, keys, stats, slot):
    """A cluster made of pass slot ``slot``, with new sub-clusters."""
    return _Cluster(keys, stats, int(run.counts[slot]), int(run.first[slot]),
                    int(run.member[slot]), 0, None, None, (-np.inf, -np.inf),
                    anchor_key=float(run.member_key[slot]))


def _reference_pass(rng, fam, X, theta, thetabar, spec, labels, sub) -> PassResult:
    """The data pass in NumPy, for families without a :class:`PassKernel` (same distribution
    as the numba pass, different random numbers; in-process only)."""
    n = len(labels)
    K = len(spec.log_pi)
    update, rand_c, rand_p = spec.update, spec.rand_c, spec.rand_p
    log_pi, log_pibar = spec.log_pi, spec.log_pibar
    fresh = spec.fresh.astype(bool)
    group_of = spec.group_of
    if update:
        new = np.asarray(labels, dtype=np.int64)
        if update >= 2:
            logp = fam.log_likelihood(X, theta) + log_pi[None, :]
            logp[group_of[labels][:, None] != group_of[None, :]] = -np.inf
            drawn = np.empty(n, dtype=np.int64)
            _kernels.sample_rows_from_logs(logp, rng.random(n), drawn)
            is_anchor = np.zeros(n, dtype=bool)
            is_anchor[spec.anchors[spec.anchors >= 0]] = True
            new = np.where(is_anchor, new, drawn)
    if update == 3:  # labels only: every sub-label 0, as in the compiled pass
        s = np.zeros(n, dtype=np.int8)
        lsub = np.zeros(n)
    elif update:
        ll_bar = fam.log_likelihood(X, thetabar)
        rows = np.arange(n)
        l0 = ll_bar[rows, 2 * new]
        l1 = ll_bar[rows, 2 * new + 1]
        a0 = l0 + log_pibar[new, 0]
        a1 = l1 + log_pibar[new, 1]
        s = (np.log(rng.random(n)) < a1 - np.logaddexp(a0, a1))
        s = np.where(fresh[new], rng.random(n) < 0.5, s).astype(np.int8)
        lsub = np.where(fresh[new], 0.0, np.where(s == 1, l1, l0))
    else:
        new = np.asarray(labels, dtype=np.int64)
        s = np.asarray(sub, dtype=np.int8)
        lsub = np.zeros(n)
    slots = 2 * new + s
    codes = s.copy()
    stats = fam.stats(X, slots, 2 * K)
    loglik = np.bincount(slots, weights=lsub, minlength=2 * K)
    members = np.flatnonzero(new == rand_c) if rand_c >= 0 else np.zeros(0, dtype=np.int64)
    side = (rng.random(len(members)) >= rand_p).astype(np.int64)
    codes[members] += (2 * side).astype(np.int8)
    halves = fam.stats(fam.subset(X, members), side, 2) if len(members) else fam.empty_stats(2)
    all_slots = np.concatenate([slots, 2 * K + side])
    all_points = np.concatenate([np.arange(n), members])
    counts = np.bincount(all_slots, minlength=2 * K + 2)
    first = np.full(2 * K + 2, -1, dtype=np.int64)
    member = np.full(2 * K + 2, -1, dtype=np.int64)
    perm = rng.permutation(len(all_slots))
    member[all_slots[perm]] = all_points[perm]
    rev = np.arange(len(all_slots))[::-1]
    first[all_slots[rev]] = all_points[rev]
    # the key of a uniform member of n points: the smallest of n uniforms, Beta(1, n)
    key = np.where(counts > 0, rng.beta(1.0, np.maximum(counts, 1)), 1.0)
    return PassResult(new, codes, concatenate(stats, halves), counts, first, member, key,
                      loglik)
