"""The sub-cluster sampler's configuration and its iteration: :class:`SubclusterSplitMerge`
(``init`` and a pure ``step``), which composes the data pass (:mod:`.passes`), the moves
from statistics (:mod:`.approximate`), the exact pairwise moves (:mod:`.pairwise`) and the
multi-way moves (:mod:`.multiway`).  The algorithm is described in the notes of
:mod:`dpclust.samplers.subcluster`.
"""

from __future__ import annotations

import warnings

from dataclasses import dataclass

import numpy as np

from ...families.base import take
from .._partitioned import PassSpec, StartLabels
from ..base import MixtureModel, StepInfo, initial_labels
from .approximate import approximate_moves, choose_random_split
from .clusters import _smaller_key, clusters_after_pass, relabel
from .multiway import MULTIWAY_RATE, multiway_move
from .multiway_parts import multiway_move_parts
from .pairwise import launch_moves, pair_log_probs, targeted_pairs_max
from .passes import accepted_pass, draw_parameters, run_pass
from .schedule import data_side, multiway_here, partitioned, rounds
from .slots import _pair_rows, _pairs_combined
from .state import SubclusterState


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
        collapsed where the family's ``collapsed_pass(N, rounds)`` says so from the model's
        size (documents always; Gaussians up to 10,000 points below 8 features, and from 8
        while the modelled cost of the collapsed pass and its sequential moves stays small:
        up to ~1,500 points at d = 10, ~700 at d = 50) when the sampler runs in-process,
        else instantiated.
    pass_groups : int or None, default=None
        Groups of clusters of the collapsed pass (each point moves among its group's
        clusters; the groups run on separate threads).  None: 1 or 2 at random (state
        independent) each iteration.
    n_threads : int or None, default=None
        Threads for the data pass (None or -1: all cores).  The result for a given
        ``random_state`` does not depend on it.  (``n_jobs``, its former name, still works
        with a ``FutureWarning``: in dpclust ``n_jobs`` is the estimator's number of chain
        processes.)
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
        collapsed (small data, ``data_pass``: on digits in 50 dimensions sequential moves
        end at a log joint of -2.013e5 against -2.039e5 in 30 s).  On a Dask
        cluster, and in-process with its partition layout (``DPMixture(partitions=...)``),
        a move visits the partitions in turn (:mod:`dpclust.samplers._partitioned_moves`):
        20,000 points from six Gaussians, two partitions, 30 iterations from k-means: six
        clusters and NMI 1.000 (EM launches from ten random clusters: 46 and 0.83).
    multiway : int, default=10
        Largest number of clusters a multi-way move merges, or splits one into (0: none).
        With sequential moves (on partitions too), half the iterations (``MULTIWAY_RATE``) propose
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
    scan_moves : float or None, default=None
        Share of the sequential moves made as Jain & Neal's restricted Gibbs split-merge
        moves: each of the move's points (other than its two anchors) starts on a uniformly
        random side, ``scans`` intermediate restricted Gibbs scans follow (each point drawn
        with probability ``∝ n_{s,-i} f(x_i | X_{s,-i})``, the collapsed predictive of the
        rest of its side), and a final scan draws the split (or, for a merge, scores the
        current one), so that ``q`` is the final scan's probability.  The launch is a
        function of the move's points and anchors with the same law for a split and its
        reverse merge, so the ratio is the sequential moves' with this ``q``.  A sequential
        allocation decides the sides from the first few points; where each side then
        predicts every further point better the more it holds (documents over a large
        vocabulary), every split puts all the points but one anchor on one side, and no
        cluster is ever split.  The scans start both sides from half the points.  None: the
        family's ``scan_moves`` (documents 1/2, else 0).  On partitioned data (a Dask
        cluster, or in-process with its partition layout) a round's moves scan when their
        points are collected on one worker (their data under 64 MiB), else they allocate
        sequentially.  5,000 Enron-shaped documents (20 topics, 28,102 words) from one
        cluster: K = 1 after 20 iterations without, K = 20 after 2 iterations with.
    scans : int, default=4
        Intermediate restricted Gibbs scans of a scan move (``scan_moves``); each costs a
        sequential allocation's time.  The Enron-shaped corpus (39,861 documents) from one
        cluster, 8 iterations: K = 19 and log joint -1.6800e7 with 4, K = 17 and -1.7005e7
        with 2 (the generating labels: K = 20, -1.6723e7).
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
    n_threads: int | None = None
    chunk_size: int = 4096
    seeding: str = "mixed"
    multiway: int = 10
    scan_moves: float | None = None
    scans: int = 4
    #: the former name of ``n_threads`` (given: a FutureWarning, and it sets ``n_threads``)
    n_jobs: int | None = None
    #: what the estimator reads (see the user guide, "Adding a sampler"): every partition
    #: prior (the exact moves read the prior's split ratio and EPPF; the paper's approximate
    #: moves and the multi-way moves are written with the Dirichlet process's algebra, and
    #: are for it alone), families with a collapsed form, data in partitions, a k-means start
    priors = None
    needs = "collapsed"
    partitioned = True

    @property
    def moves_clusters(self) -> bool:
        """Whether it moves whole clusters (splits and merges), not only points: unless
        its split-merge and multi-way moves are both off."""
        return bool(self.split_merge or int(self.multiway) >= 3)
    kmeans_start = True

    def _after_load(self):
        """A sampler saved in a checkpoint before ``n_jobs`` became ``n_threads``."""
        if "n_threads" not in self.__dict__:
            self.__dict__["n_threads"] = self.__dict__.get("n_jobs")
            self.__dict__["n_jobs"] = None

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
        if self.n_jobs is not None:
            warnings.warn("SubclusterSplitMerge(n_jobs=) is now n_threads= (n_jobs is the "
                          "estimator's number of chain processes)", FutureWarning,
                          stacklevel=3)
            object.__setattr__(self, "n_threads", self.n_jobs)  # a frozen dataclass
            object.__setattr__(self, "n_jobs", None)
        if self.n_threads is not None and (int(self.n_threads) == 0
                                           or int(self.n_threads) < -1):
            raise ValueError(f"n_threads must be a positive number of threads or -1, got "
                             f"{self.n_threads}")
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
        if self.scan_moves is not None and not 0.0 <= float(self.scan_moves) <= 1.0:
            raise ValueError(f"scan_moves must be a probability or None, got {self.scan_moves}")
        if int(self.scans) < 0:
            raise ValueError(f"scans must be >= 0, got {self.scans}")
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

    @property
    def name(self) -> str:
        """``"subcluster"``, or ``"subcluster-approx"`` for a configuration with the
        paper's approximate sub-cluster moves."""
        return "subcluster" if self.is_exact else "subcluster-approx"

    @property
    def summary(self) -> str:
        """One line for the command line's help and the docs."""
        if self.is_exact:
            return ("the parallel sub-cluster sampler: restricted Gibbs with exact parallel "
                    "split-merge moves (Chang & Fisher 2013); the default from 5,000 points")
        return ("the paper's fast sub-cluster splits and merges (NOT exact: for comparisons "
                "with Chang & Fisher 2013)")

    # ------------------------------------------------------------------- init
    def init(self, rng, model: MixtureModel, labels=None, n_clusters: int = 1,
             alpha: float = 1.0) -> SubclusterState:
        """Labels uniform over ``n_clusters`` (or ``labels``: an array, or a
        :class:`~dpclust.samplers._partitioned.StartLabels` that the data side holds, such as
        the k-means start of partitioned data) and sub-labels at random, both drawn from the
        chunks' streams, so that they are the same on any backend; then one pass that keeps
        them gives the statistics, the canonical numbering and the anchors (empty starting
        clusters are dropped there)."""
        n = model.n_samples
        data = data_side(self, model)
        if n_clusters < 1:
            raise ValueError(f"the initial number of clusters must be >= 1, got {n_clusters}")
        prior = model.partition_prior
        if not prior.is_dirichlet_process and (not self.is_exact or self.random_split_merge):
            raise ValueError(f"the sub-cluster sampler's moves from statistics (the paper's "
                             f"sub-cluster splits, pairwise merges and random splits) are "
                             f"written for the Dirichlet process, not the {prior.title}: use "
                             f"the default configuration (sampler='subcluster')")
        if isinstance(labels, StartLabels):
            k0, labels = int(labels.n_clusters), labels.labels
        elif labels is not None:
            labels = initial_labels(rng, n, labels)
            k0 = int(labels.max()) + 1
        else:
            k0 = int(min(n_clusters, n))
        # a prior with at most so many clusters (the finite Dirichlet) starts within them
        most = getattr(prior, "n_components", None)
        if most is not None and k0 > most:
            labels, k0 = None, int(min(most, n))
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
        run = run_pass(rng, model, data, spec, z, sub)
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

    # ------------------------------------------------------------------- step
    def step(self, rng, state: SubclusterState, model: MixtureModel):
        """One iteration (the module notes of :mod:`dpclust.samplers.subcluster`): returns
        the next state and its :class:`~dpclust.samplers.base.StepInfo`."""
        fam = model.family
        alpha = state.alpha
        K = len(state.age)
        # 1. weights and parameters given the labels (none for the collapsed pass)
        draws = draw_parameters(self, rng, model, state)
        # the random split/merge proposal is chosen now: the pass keeps every cluster
        rand_c, rand_p = choose_random_split(self, rng, K)

        # 2. the data pass, accepted as a whole with w(z') / w(z) (anchors stay put), or
        # the collapsed pass, then a pass that counts its labels (and draws the anchors)
        run, accepted = accepted_pass(self, rng, model, state, draws, rand_c, rand_p)
        age = state.age + 1 if accepted else state.age.copy()
        clusters = clusters_after_pass(fam, run, K, age, state, accepted)

        # 3. moves, from statistics alone
        n_splits, n_merges = approximate_moves(self, rng, fam, run, clusters, rand_c, alpha)

        # 4. relabel: canonical order by first member
        new_state = relabel(self, model, run, clusters, K, alpha)

        # 5. the exact split-merge moves, in parallel over groups of clusters
        if self.split_merge:
            for _ in range(rounds(self, model)):
                new_state, splits, merges = launch_moves(self, rng, model, new_state)
                n_splits += splits
                n_merges += merges
        if multiway_here(self, model) and rng.random() < MULTIWAY_RATE:
            move = multiway_move_parts if partitioned(model) else multiway_move
            new_state, splits, merges = move(self, rng, model, new_state)
            n_splits += splits
            n_merges += merges
        k_new = len(new_state.age)
        alpha = model.update_alpha(rng, alpha, k_new)
        stats = _pairs_combined(fam, new_state.sub_stats, k_new)
        log_lik = float(fam.log_marginal(stats).sum())
        log_joint = model.partition_prior.log_eppf(fam.count(stats), alpha) + log_lik
        return (new_state._replace(alpha=alpha),
                StepInfo(log_joint, k_new, alpha, int(n_splits), int(n_merges), log_lik))

    # ------------------------------------------------------ merge pairs (tests)
    def _targeted_pairs_max(self, stats) -> int:
        """:func:`~dpclust.samplers.subcluster.pairwise.targeted_pairs_max`."""
        return targeted_pairs_max(self, stats)

    def _pair_log_probs(self, fam, stats, n, alpha, groups):
        """:func:`~dpclust.samplers.subcluster.pairwise.pair_log_probs`."""
        return pair_log_probs(self, fam, stats, n, alpha, groups)
