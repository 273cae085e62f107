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
Dir(N_k - 1 + epsilon)`` the target given the anchors is ``p(z) prod_k N_k^-1 Dir(pi;
N - 1 + epsilon) prod_i f(x_i; theta_z_i)``, and the pass's proposal ``prod_(i not an anchor)
pi_z_i f(x_i; theta_z_i)`` divides it into ``w(z) prod_k pi_k^(epsilon - 1)`` with ``w(z) =
prod_k Gamma(N_k) / (N_k Gamma(N_k - 1 + epsilon))`` (K and N are fixed in the pass, and so is
the product of the weights; ``p(z)`` is the partition prior, the CRP for the Dirichlet
process, whose ``Gamma(N_k)`` are shown), so the pass is accepted with ``min(1, w(z') /
w(z))``, about ``prod_k (N_k / N'_k)^epsilon``.  The paper's ``Dir(N_k, alpha)`` is ``epsilon = 1``: a
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
* *Other priors on partitions.*  With the groups uniform and independent of the partition,
  ``p(z, g) = p(z) P^-K`` under any prior, so a split's target is the prior's split ratio
  (:meth:`~dpclust.priors.PartitionPrior.log_split_ratio`) minus ``log P``.  Under a
  Gibbs-type prior other than the DP that ratio depends on the number of clusters, which
  couples the groups: their moves are proposed in parallel, each from its own group's
  points, and accepted one after another, each with the number of clusters that the moves
  accepted before it left (each is then a Metropolis-Hastings move of the whole state whose
  proposal the other groups' moves do not change).  The data pass reads the prior's EPPF
  in ``w(z)`` (with K and N fixed only the sizes' factors ``W(N_k)`` change: ``Gamma(N_k)``
  for the DP, ``Gamma(N_k - d)`` for Pitman-Yor) and the collapsed pass its seating weights
  (``W(c + 1) / W(c)``: ``c``, ``c - d``, ``c + gamma``).  The multi-way moves and the
  paper's approximate moves are written with the DP's algebra and run under it alone.
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

The package, one module per part of the iteration (plain functions of the configuration,
composed by :meth:`SubclusterSplitMerge.step`):

* :mod:`.sampler` — :class:`SubclusterSplitMerge`: the configuration, ``init`` and ``step``;
* :mod:`.state` — :class:`SubclusterState` and what the passes return;
* :mod:`.schedule` — what a configuration does on a given model (sequential moves, collapsed
  pass, rounds, groups, pinches);
* :mod:`.passes` — the data pass, instantiated (accepted with ``w(z') / w(z)``) or collapsed;
* :mod:`.clusters` — the clusters after the pass, and the relabelling into a state;
* :mod:`.approximate` — the paper's moves from statistics: the random split/merge and,
  approximate, the sub-cluster splits and pairwise merges;
* :mod:`.pairwise` — one round of the exact pairwise split-merge moves;
* :mod:`.sequential` — their sequential allocation (in-process);
* :mod:`.launch` — their launches and proposal on partitioned data (EM, pinch, grow);
* :mod:`.multiway` — the multi-way splits and merges;
* :mod:`.ratios`, :mod:`.slots` — the Hastings ratios' pieces, statistics by slot;
* :mod:`.reference` — NumPy references of the compiled data and launch passes.

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

from .launch import SUBSAMPLE_CHUNK
from .multiway import MULTIWAY_JOIN_MIN, MULTIWAY_RATE, MULTIWAY_SPLIT
from .ratios import (PAIR_SCORE_BUDGET, PASS_WEIGHT_OFFSET, TARGETED_PAIRS_MAX,
                     _log_anchored_split, _log_pass_weight, _split_log_ratio)
from .reference import _reference_launch, _reference_pass
from .sampler import SubclusterSplitMerge
from .schedule import MANY_POINTS, MANY_POINTS_TOP_GROUPS
from .slots import _pairs_combined
from .state import LaunchResult, PassResult, SubclusterState

__all__ = ["LaunchResult", "MANY_POINTS", "MANY_POINTS_TOP_GROUPS", "MULTIWAY_JOIN_MIN",
           "MULTIWAY_RATE", "MULTIWAY_SPLIT", "PAIR_SCORE_BUDGET", "PASS_WEIGHT_OFFSET",
           "PassResult", "SUBSAMPLE_CHUNK", "SubclusterSplitMerge", "SubclusterState",
           "TARGETED_PAIRS_MAX"]

# checkpoints (and pickles) name a class by its module and qualified name: these keep the
# name they had before the sampler became a package, so that files written before and
# after the split name the same classes
for _cls in (LaunchResult, PassResult, SubclusterSplitMerge, SubclusterState):
    _cls.__module__ = __name__
del _cls
