"""The contract that every component family implements.

A family bundles a likelihood ``f(x; theta)`` with a conjugate prior ``p(theta; lambda)``
(Mathematics §1).  Samplers only ever talk to a family through this contract, so
they never branch on the family.  There are two faces:

* a **NumPy face**, batched over clusters: sufficient statistics of several clusters at once
  are one :class:`typing.NamedTuple` of arrays whose first axis is the cluster.  Everything
  that is not a per-point hot loop (log marginals for the log joint, parameter draws,
  predictive densities for new data, the explicit-parameter samplers) uses it;
* a **kernel face** (:class:`FamilyKernel`): numba-compiled functions acting on one slot of
  a preallocated array-of-clusters for one data point.  The collapsed samplers' sweeps take
  these functions as arguments.

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
Paisley, J. (2015). Lecture notes: Dirichlet process mixtures and collapsed Gibbs sampling.

A family also describes itself to the outputs, so that adding one is one file: it registers
by name (:func:`register_family`, filling :data:`FAMILIES`), declares the kind of data it
reads (:attr:`ConjugateFamily.data_kind`) and its hyperparameters as the command line
exposes them (:class:`HyperParameter`), and says how its fitted clusters read in the run
summary (:meth:`ConjugateFamily.describe_clusters`, :meth:`ConjugateFamily.describe_fit`)
and in the report's cluster table (:meth:`ConjugateFamily.cluster_table`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, NamedTuple

import numpy as np

from .faces import FamilyKernel, PassKernel  # noqa: F401  (the contract's two faces)

#: every registered family by its name (``DPMixture(family=NAME)``, ``dpclust fit --family
#: NAME``), in the order of registration; filled by :func:`register_family`
FAMILIES: dict[str, type] = {}

#: the file beside the run summary that holds cluster parameters too large for it
CLUSTER_PARAMS_FILE = "cluster_params.npz"


def register_family(cls: type) -> type:
    """Class decorator: register a :class:`ConjugateFamily` under its :attr:`~ConjugateFamily.name`.

    The estimator, the command line (its ``--family`` choices and the family's
    :attr:`~ConjugateFamily.hyperparameters` as options), the run summary and the report
    then know the family by that name.

    Examples
    --------
    >>> @register_family  # doctest: +SKIP
    ... class Poisson(ConjugateFamily):
    ...     name = "poisson"
    ...     data_kind = "counts"
    """
    if not (isinstance(cls, type) and issubclass(cls, ConjugateFamily)):
        raise TypeError(f"register_family takes a ConjugateFamily subclass, not {cls!r}")
    if not cls.name or cls.name == ConjugateFamily.name:
        raise ValueError(f"{cls.__name__} needs a name of its own to be registered")
    FAMILIES[cls.name] = cls
    return cls


def positive_float(text) -> float:
    """A positive finite number from its text, for :attr:`HyperParameter.type`.

    Raises
    ------
    ValueError
        ``expected a positive number, got '...'``.
    """
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"expected a positive number, got {text!r}")
    return value


def positive_or_gamma(text):
    """A learnable hyperparameter from its text, for :attr:`HyperParameter.type`: a
    positive number (fixed) or ``gamma:SHAPE,RATE`` (learned under that Gamma prior), kept
    as its text.

    Raises
    ------
    ValueError
        ``expected a positive number or gamma:SHAPE,RATE, got '...'``.
    """
    from ..priors import GammaPrior

    try:
        if GammaPrior.parse(text) is not None:
            return str(text).strip()
    except ValueError:
        pass
    try:
        return positive_float(text)
    except ValueError:
        raise ValueError(f"expected a positive number or gamma:SHAPE,RATE (to learn it), got "
                         f"{text!r}") from None


class HyperParameter(NamedTuple):
    """A family's hyperparameter as the command line and the run summary expose it.

    ``name`` is the constructor's keyword, the option's destination and the key of the
    summary's settings; ``type`` turns the option's text into the value (a ``ValueError``
    whose message the command line shows); ``default`` is the constructor's default, which
    the summary reports when the option is not given; ``flag`` defaults to ``--name`` with
    dashes.
    """

    name: str
    type: Callable[[str], Any]
    help: str
    default: Any = None
    metavar: str | None = None
    flag: str | None = None

    @property
    def option(self) -> str:
        """The command-line option, e.g. ``--concentration``."""
        return self.flag or "--" + self.name.replace("_", "-")


class ClusterColumn(NamedTuple):
    """One column of the report's cluster table: its heading (HTML), the text of cluster
    ``k``'s cell (``cell(k)``, plain text that the report escapes) and the cell's CSS class
    (``"num"``, ``"mono"`` or ``""``)."""

    heading: str
    cell: Callable[[int], str]
    css: str = ""


class ClusterTable(NamedTuple):
    """What a family adds to the report's cluster table: columns after the size and share,
    and a note (HTML) appended to the table's hint."""

    columns: tuple = ()
    note: str = ""


class ClusterSummary(NamedTuple):
    """A family's description of its fitted clusters for the run summary: the JSON-able
    ``cluster_params`` block, and arrays too large for it (``None``: none), which go to
    :data:`CLUSTER_PARAMS_FILE` beside the summary."""

    block: dict
    arrays: dict | None = None


def rounded(values):
    """Floats to four significant digits, for JSON (None stays None)."""
    if values is None:
        return None
    return [float(f"{v:.4g}") for v in np.asarray(values, dtype=np.float64).tolist()]


def log_gamma(rng: np.random.Generator, shape) -> np.ndarray:
    """``log G`` with ``G ~ Gamma(shape, 1)`` elementwise, drawn as ``log G' + log(U) /
    shape`` with ``G' ~ Gamma(shape + 1)``, so that small shapes never underflow to 0."""
    a = np.asarray(shape, dtype=np.float64)
    return np.log(rng.standard_gamma(a + 1.0)) + np.log(rng.random(a.shape)) / a


def log_dirichlet(rng: np.random.Generator, concentration) -> np.ndarray:
    """Logarithm of Dirichlet draws, one per row of ``concentration`` (last axis).

    Drawn in log space (``log G = log G' + log(U) / a`` with ``G' ~ Gamma(a + 1)``, which is
    ``Gamma(a)``), so that small concentrations never underflow to a probability of zero.
    """
    return log_normalise(log_gamma(rng, concentration))


def log_normalise(log_x) -> np.ndarray:
    """``log_x - logsumexp(log_x)`` over the last axis: log weights (or worths) that sum
    to one."""
    m = np.max(log_x, axis=-1, keepdims=True)
    return log_x - (m + np.log(np.exp(log_x - m).sum(axis=-1, keepdims=True)))


def take(stats: NamedTuple, index) -> NamedTuple:
    """Select clusters ``index`` (int array, slice or boolean mask) from batched statistics."""
    return type(stats)(*(np.asarray(a)[index] for a in stats))


def concatenate(*stats: NamedTuple) -> NamedTuple:
    """Stack the clusters of several batched statistics into one."""
    return type(stats[0])(*(np.concatenate(arrays, axis=0) for arrays in zip(*stats)))


class InstantiatedHooks:
    """Optional part of the family contract, for the samplers that hold parameters in
    their state (explicit Gibbs, the finite-mixture sampler, the rankings' samplers): a
    Markov kernel of a cluster's parameters given its points, and an exact draw given one
    point.  The defaults use the family's exact posterior draw; a family without one
    (``collapsible = False``) overrides them.
    """

    # ------------------------------------------ instantiated samplers' hooks
    def update_params(self, X, labels, params, rng: np.random.Generator,
                      n_clusters: int | None = None) -> NamedTuple:
        """New parameters of the clusters of ``labels`` by a Markov kernel that leaves
        ``prod_k p(theta_k | X_k)`` invariant, started at ``params`` (one row per cluster;
        None: no current value).

        What Neal's algorithm 2 and the blocked Gibbs sampler do to the parameters after
        the labels (Neal 2000: "any update of phi_c that leaves p(phi_c | y_c) invariant").
        The default is an exact draw, ``sample_posterior(stats(X, labels, n_clusters))``,
        which ignores ``params``; families without one exact draw (Plackett–Luce) override
        it with a Gibbs kernel and list the samplers it serves in :attr:`samplers`.
        """
        return self.sample_posterior(self.stats(X, labels, n_clusters), rng)

    def sample_given_one(self, X, i: int, rng: np.random.Generator) -> NamedTuple:
        """An exact draw ``theta ~ p(theta | x_i)`` (a batch of one): the parameter of the
        new cluster that point ``i`` opens in Neal's algorithm 2.  The default is
        ``sample_posterior(stats(x_i))``."""
        return self.sample_posterior(self.stats(self.subset(X, [i])), rng)


class CoarsenedHooks:
    """Optional part of the family contract, for the coarsened posterior's allocation-free
    sampler and for fused clusters: the parameters' prior and posterior densities, soft
    (weighted) statistics and proposals, random walks, the distinct rows of the data, and
    divergences between components.  The defaults raise where a family has no such form.
    """

    # ------------------------------------------------- coarsened posteriors
    def log_prior(self, params: NamedTuple) -> np.ndarray:
        """``log p(theta_k)``, the prior density of each component's parameters, shape (K,).

        The allocation-free sampler of coarsened posteriors
        (:mod:`dpclust.samplers.coarsened`) needs it.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define log_prior(); coarsened posteriors need it")

    def weighted_stats(self, X, weights) -> NamedTuple:
        """Statistics of the points of ``X`` counted ``weights[i, k]`` times in component
        ``k`` (real, non-negative; shape (n, K)): the soft, tempered statistics the coarsened
        sampler's proposals condition on.  Optional: families without it are proposed to by
        random walks (:meth:`random_walk`)."""
        raise NotImplementedError

    def log_posterior_density(self, params: NamedTuple, stats: NamedTuple) -> np.ndarray:
        """``log p(theta_k | stats_k)``: the normalised conjugate posterior density of each
        component's parameters given its statistics, shape (K,).  Goes with
        :meth:`weighted_stats`."""
        raise NotImplementedError

    def soft_proposal(self, X, weights, given: NamedTuple, rng=None, proposed=None):
        """A proposal for one component's parameters from the points of ``X`` counted
        ``weights[i]`` times (shape (n,)): ``(params, log q)``, a draw when ``rng`` is given,
        else the log density of ``proposed`` (a batch of one); ``given`` is the component's
        current value, which a proposal may read.  The default draws from the conjugate
        posterior given :meth:`weighted_stats` (it ignores ``given``)."""
        if type(self).weighted_stats is ConjugateFamily.weighted_stats:
            raise NotImplementedError(f"{type(self).__name__} has no soft proposal")
        stats = self.weighted_stats(X, np.asarray(weights, dtype=np.float64)[:, None])
        params = self.sample_posterior(stats, rng) if rng is not None else proposed
        return params, float(self.log_posterior_density(params, stats)[0])

    def random_walk(self, params: NamedTuple, rng: np.random.Generator, scale: float):
        """A random-walk proposal for one component's parameters (batch of one):
        ``(proposed, log q(old | new) - log q(new | old))``, the step's size set by ``scale``
        (1: a typical posterior step).  For families without :meth:`weighted_stats`."""
        raise NotImplementedError(
            f"{type(self).__name__} defines neither weighted_stats() nor random_walk(); "
            f"coarsened posteriors need one")

    def initial_params(self, X, labels, n_components: int, rng: np.random.Generator):
        """Starting parameters of ``n_components`` components for the clusters ``labels``
        of ``X`` (components without points from the prior).  The default draws each from
        its posterior given its points."""
        return self.sample_posterior(self.stats(X, labels, n_components), rng)

    def distinct(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, inverse, counts)``: the index of the first row of each distinct row of
        ``X``, every row's distinct row, and how many rows each stands for.  Samplers whose
        cost is per distinct row count repeated rows (ballots) once.  The default takes every
        row as distinct."""
        n = self.n_points(X)
        return np.arange(n), np.arange(n), np.ones(n, dtype=np.int64)

    def row_keys(self, X) -> list[bytes] | None:
        """One ``bytes`` key per row of ``X``, equal for exactly the rows :meth:`distinct`
        counts as one, the same on any machine; None for a family that takes every row as
        distinct (the default).  A Dask fit finds identical rows held by different workers
        from the keys' digests (:func:`~dpclust.families.identical.row_digests`)."""
        return None

    def divergence(self, params: NamedTuple) -> np.ndarray:
        """Symmetric KL (J-) divergence between every pair of components, shape (K, K).

        Used to group clusters into super-clusters (Chang & Fisher 2013, Algorithm 1).
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define divergence(); super-clusters need it")

    def hellinger(self, params: NamedTuple) -> np.ndarray:
        """Hellinger distance between the densities of every pair of components, shape (K, K).

        ``H(f_k, f_m) = sqrt(1 - BC(f_k, f_m))`` with the Bhattacharyya coefficient
        ``BC = integral of sqrt(f(x; theta_k) f(x; theta_m))``: symmetric, in [0, 1], 0 on the
        diagonal.  Fused clusters (:func:`dpclust.fusion.fuse`) compare the components of
        every posterior draw with it.

        References
        ----------
        Dombowsky, A. & Dunson, D. B. (2024). Bayesian clustering via fusing of localized
            densities. JASA (arXiv 2304.00074): the loss of fused clusters is built on
            this distance.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define hellinger(); fused clusters "
            "(dpclust.fusion.fuse) need the Hellinger distance between its components")


class RowHandling:
    """Optional part of the family contract: rows and where they are (counting,
    subsetting and stacking data in the family's working form, statistics of some rows, the
    kernels of partitions, k-means features) and the constructor's parameters.  The
    defaults serve data that are one array.
    """

    # ----------------------------------------------------------------- misc
    def n_points(self, X) -> int:
        """Number of data points in ``X`` (working form)."""
        return X.shape[0]

    def subset(self, X, index):
        """Rows ``index`` of ``X`` (working form)."""
        return X[index]

    def stack_rows(self, parts: list):
        """The rows of several parts of the data (working form), one part after the other:
        how rows gathered from the workers of a Dask cluster are put together."""
        import scipy.sparse as sp

        if sp.issparse(parts[0]):
            return sp.vstack(parts, format="csr")
        return np.concatenate(parts)

    def stats_at(self, X, rows, labels, n_clusters: int) -> NamedTuple:
        """Statistics of the points ``rows`` of ``X`` in clusters ``labels`` (one per row):
        ``stats(subset(X, rows), labels, n_clusters)``, which a family may compute without
        copying the rows."""
        return self.stats(self.subset(X, rows), labels, n_clusters)

    def partition_kernel(self, X, n_total: int) -> FamilyKernel:
        """The collapsed kernel of ``X``, one part of a data set of ``n_total`` points:
        :meth:`kernel`, with any table indexed by a cluster's size made for clusters of up
        to ``n_total`` points (a sequential allocation on partitioned data goes on from one
        part to the next)."""
        return self.kernel(X)

    def gathered_kernel(self, kern: FamilyKernel, rows) -> FamilyKernel | None:
        """The collapsed kernel ``kern`` over its data's rows ``rows`` copied in that order
        (point ``t`` of the result is row ``rows[t]``), so that a long scan in a random
        order reads memory in sequence; None where the family does not copy rows (the scan
        then reads the rows where they are).  The copy is the result's ``data[0]``, in
        working form (``stats_at`` reads it)."""
        return None

    #: whether ``init="auto"`` starts the sub-cluster sampler from k-means
    kmeans_start = True
    #: the share of the sub-cluster sampler's sequential moves made by default as restricted
    #: Gibbs scan moves from a random launch (``SubclusterSplitMerge(scan_moves=None)``)
    scan_moves = 0.0

    def collapsed_pass(self, n_samples: int, n_rounds: int = 1) -> bool:
        """Whether the sub-cluster sampler's data pass is collapsed by default
        (``SubclusterSplitMerge(data_pass=None)``; both are exact).

        Parameters
        ----------
        n_samples : int
            Points of the model.
        n_rounds : int, default=1
            Rounds of sequential split-merge moves an iteration would make with the
            collapsed pass (:func:`~dpclust.samplers.subcluster.schedule.rounds`), for a
            family that weighs the cost of an iteration.

        Returns
        -------
        bool
            A function of the model's size only, never of the chain's state (so that the
            sampler stays a mixture of kernels chosen independently of it)."""
        return False

    def init_features(self, X):
        """The points as rows of a (dense or sparse) matrix on which k-means makes a
        sensible starting partition (``init="kmeans"``); ``None`` when there is none."""
        return X

    def init_features_like(self, X, reference):
        """:meth:`init_features` of the rows ``X`` on the scale that the sample
        ``reference`` (rows in working form) sets: the k-means start of partitioned data
        finds its centres on a sample and assigns every partition's rows to them.  The same
        as ``init_features(X)`` for features made row by row (the default); a family whose
        features are scaled by the data overrides it."""
        return self.init_features(X)

    def get_params(self, deep: bool = True) -> dict:
        """Constructor arguments, for display and serialisation (``deep`` as scikit-learn's
        ``clone`` passes it: a family's arguments hold no estimators)."""
        raise NotImplementedError


class LearnedHyperparameters:
    """Optional part of the family contract: hyperparameters under a Gamma hyperprior,
    resampled every iteration given the partition (:attr:`ConjugateFamily.learnable`).
    The defaults learn nothing.
    """

    # ------------------------------------------------ learned hyperparameters
    def hyperpriors(self) -> dict:
        """The learned hyperparameters: each of :attr:`learnable` given a
        :class:`~dpclust.priors.GammaPrior` (or its text, ``"gamma:SHAPE,RATE"``), by name,
        with its prior (empty: none)."""
        from ..priors import GammaPrior

        kept = self.__dict__.get("_hyperpriors")  # a resolved family's, where it keeps them
        if kept is not None:
            return dict(kept)
        params = {name: GammaPrior.parse(v) or v for name, v in self.get_params().items()}
        learned = {name: params[name] for name in self.learnable
                   if isinstance(params.get(name), GammaPrior)}
        for name, value in params.items():
            if isinstance(value, GammaPrior) and name not in learned:
                can = (f"it can learn {', '.join(self.learnable)}" if self.learnable
                       else "it learns none of its hyperparameters")
                raise ValueError(f"{type(self).__name__} cannot learn {name} (a GammaPrior was "
                                 f"given): {can}; give {name} a number")
        return learned

    def _keep_hyperpriors(self, resolved: "ConjugateFamily") -> "ConjugateFamily":
        """``resolved`` (a resolved copy of this family, whose parameters hold numbers)
        declaring this family's learned hyperparameters as its own."""
        resolved._hyperpriors = self.hyperpriors()
        return resolved

    def at(self, values: dict) -> "ConjugateFamily":
        """This resolved family with the learned hyperparameters set to ``values`` (a
        number by name for each of :meth:`hyperpriors`).  The copy still declares the
        same hyperpriors, so that a chain moves from one value to the next."""
        raise NotImplementedError(f"{type(self).__name__} learns no hyperparameters")

    def learned_values(self) -> dict:
        """The values the learned hyperparameters hold in this resolved family (their
        starting values until :meth:`at` sets them)."""
        return {}

    def kernel_hyper(self, kernel: FamilyKernel):
        """The ``hyper`` of ``kernel`` (a kernel of another value of this family, on the same
        data) at this family's values, so that a learned value's kernel shares the data
        arrays; None: make the kernel anew (:meth:`kernel`)."""
        return None


class SelfDescription:
    """Optional part of the family contract: how the family describes itself to the run
    summary, the report and the command line.  The defaults say little.
    """

    # ------------------------------------------------------- describing itself
    def settings(self) -> dict:
        """The values of :attr:`hyperparameters`, by name, as the run summary's settings
        show them."""
        from ..priors import GammaPrior

        params = self.get_params()
        return {hp.name: ({"gamma_shape": g.shape, "gamma_rate": g.rate}
                          if (g := GammaPrior.parse(params[hp.name])) else params[hp.name])
                for hp in self.hyperparameters}

    def describe_clusters(self, params: dict, *, feature_names=None) -> ClusterSummary:
        """The fitted clusters for the run summary's ``cluster_params`` block.

        Parameters
        ----------
        params : dict of str to array-like
            The estimator's ``cluster_params_``, one row per cluster.
        feature_names : list of str, optional
            Names of the data's columns (a vocabulary), where the data have them.

        Returns
        -------
        ClusterSummary
            By default every parameter as nested lists.
        """
        return ClusterSummary({k: np.asarray(v).tolist() for k, v in params.items()})

    def describe_fit(self, params: dict, sizes: np.ndarray, *, sampler: str) -> dict | None:
        """A block of the run summary of the family's own, under the key :attr:`name`
        (None: none).  ``sizes`` (n_clusters,) counts the points of each cluster of the
        point estimate; ``sampler`` is the sampler that ran."""
        return None

    @classmethod
    def cluster_table(cls, block: dict) -> ClusterTable:
        """The report's cluster-table columns from a summary's ``cluster_params`` block
        (:meth:`describe_clusters`); by default none."""
        return ClusterTable()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def _short(v) -> str:
    if isinstance(v, np.ndarray):
        if v.size <= 4:
            return np.array2string(v, precision=3, separator=", ")
        return f"<array {v.shape}>"
    return repr(v)


class ConjugateFamily(InstantiatedHooks, CoarsenedHooks, RowHandling, LearnedHyperparameters,
                      SelfDescription, ABC):
    """Base class of component families (Mathematics §1).

    Subclasses store their constructor arguments unchanged (``None`` meaning a data-driven
    default) and implement :meth:`resolve`, which returns a copy with every hyperparameter
    fixed from the training data.  All other methods require a resolved family.

    The *core* contract is what a new conjugate family must write: the 17 abstract methods
    (set-up, statistics, posterior, likelihood, the numba face).  The rest comes in optional
    parts with working defaults, each a mixin this class includes: :class:`InstantiatedHooks`
    (samplers that hold parameters), :class:`CoarsenedHooks` (coarsened posteriors and
    fused clusters), :class:`RowHandling` (rows, partitions, k-means features),
    :class:`LearnedHyperparameters` and :class:`SelfDescription` (summary, report, command
    line).  Every attribute the package reads of a family is declared below with its
    default.

    The batched NumPy contract, with ``K`` clusters on the first axis of every statistic:

    ========================================  =====================================================
    ``stats(X, labels, n_clusters)``          sufficient statistics per cluster
    ``empty_stats(n_clusters)``               statistics of empty clusters
    ``combine(a, b)`` / ``subtract``          statistics of the union / difference of point sets
    ``count(stats)``                          number of points per cluster, shape (K,)
    ``posterior(stats)``                      posterior hyperparameters, batched
    ``log_marginal(stats)``                   ``log f(X_k)``, shape (K,)
    ``log_predictive(X, stats)``              ``log f(x_i | X_k)``, shape (n, K)
    ``sample_posterior(stats, rng)``          ``theta_k ~ p(theta | X_k)``, batched parameters
    ``point_params(stats, rng)``              a central parameter of each posterior (same form)
    ``log_likelihood(X, params)``             ``log f(x_i; theta_k)``, shape (n, K)
    ``sample_data(params, k, rng)``           one point from ``f(.; theta_{k_j})`` per entry of k
    ``mean_params(stats)``                    posterior-mean parameters, for reporting
    ``kernel(X)``                             the numba face, :class:`FamilyKernel`
    ``pass_kernel(X, summary)``               optional numba face with instantiated parameters
    ``summarize(X)`` / ``merge_summaries``    what ``resolve`` needs of the data, by parts
    ``divergence(params)``                    optional symmetric KL divergences between components
    ========================================  =====================================================
    """

    #: short name used by the estimator and the command line (:func:`register_family`)
    name: str = "family"
    #: what the report calls the model ("Generalized Mallows")
    title: str = "Component family"
    #: what the family clusters, for ``dpclust fit --help``: "'NAME' for <this>"
    describes: str = ""
    #: the kind of data it reads: ``"dense"`` (a table of numbers), ``"counts"`` (a dense or
    #: sparse matrix of counts) or ``"rankings"`` (:class:`~dpclust.rankings.Rankings`)
    data_kind: str = "dense"
    #: what one data point is, in words ("point", "ranking")
    noun: str = "point"
    #: hyperparameters the command line exposes as options (:class:`HyperParameter`)
    hyperparameters: tuple = ()
    #: the title of the command line's option group for the family's options; None: the
    #: "model" group
    option_group: str | None = None
    #: whether the family has a collapsed form (its parameters integrated out: the
    #: marginal and predictive methods); False for families fitted with parameters in the
    #: state (Generalized Mallows, Plackett-Luce, the full-covariance table with holes)
    collapsible: bool = True
    #: for families without a collapsed form (``collapsible = False``): the samplers that
    #: fit them, by name (:data:`dpclust.samplers.SAMPLERS`)
    samplers: tuple = ()
    #: the sampler ``sampler="auto"`` always picks for this family (None: the rule of
    #: :func:`dpclust.samplers.choose_sampler`, by the number of points)
    default_sampler: str | None = None
    #: the loss whose searched minimiser ``point_estimate="auto"`` reports
    #: (:func:`dpclust.partitions.point_estimate`): variation of information, except where
    #: a family's points say so little each that VI's Bayes estimate joins every group
    #: (rankings: ``"vi(a=0.5)"``); where it is VI, rows repeated as copies take
    #: :data:`~dpclust.samplers.base.COPIES_LOSS` (``MixtureModel.default_loss``)
    default_loss: str = "vi"
    #: from this many points on ``sampler="auto"`` picks the sub-cluster sampler (None: the
    #: samplers' :data:`~dpclust.samplers.AUTO_SUBCLUSTER_FROM`)
    auto_subcluster_from: int | None = None
    #: whether ``sample_weight`` may be read as powers of the likelihood (the table
    #: families); otherwise weights are whole-number repeats only
    supports_weights: bool = False
    #: the coarsening ``alpha_c`` of the model this family's data get by default (the
    #: estimator's ``coarsening=None``), or None: the exact posterior.  For a family whose
    #: exact posterior on real data keeps growing clusters that chains do not settle
    #: (rankings), the coarsened posterior is the default answer (Miller & Dunson 2019)
    default_coarsening: float | None = None
    #: the sampler ``sampler="auto"`` picks below the sub-cluster sampler's threshold (None:
    #: the samplers' :data:`~dpclust.samplers.registry.AUTO_SMALL_SAMPLER`, Gibbs+SAMS)
    auto_small_sampler: str | None = None
    #: the options of the sampler ``sampler="auto"`` picks, by its name (the table
    #: families: ten merge-split proposals a sweep, ``{"gibbs+sams": {"n_proposals": 10}}``)
    auto_sampler_options: dict = {}
    #: the hyperparameters that may be learned: given a :class:`~dpclust.priors.GammaPrior`
    #: instead of a number, each is resampled every iteration given the partition
    #: (:meth:`hyperpriors`, :meth:`at`)
    learnable: tuple = ()
    #: what the report's lead paragraph says a cluster of this family is (HTML; "": nothing)
    report_sentence: str = ""
    #: the hint under the family's own panel of the report (HTML; "": none)
    report_hint: str = ""
    #: what a log density of the working form gains to be one of the data as given
    #: (``score_samples`` adds it): 0, except where the working form is a linear map of the
    #: data (a table's real columns in their principal axes, :mod:`dpclust.tables.axes`)
    log_jacobian: float = 0.0
    #: whether the kernel face's cluster statistics hold prior terms (a Gaussian's
    #: posterior scale), so that a sampler's cached statistics are made again when a learned
    #: hyperparameter changes; False where they are plain sums (word totals)
    kernel_stats_hold_prior: bool = True
    # ------------------------------------------------------------------ set-up
    @abstractmethod
    def validate(self, X, *, what: str = "X"):
        """Check data for this family and return it in the family's working form.

        Raises
        ------
        ValueError
            With a message naming the problem (NaN, wrong shape, negative counts, ...).
        """

    @abstractmethod
    def resolve(self, X) -> "ConjugateFamily":
        """Return a copy whose hyperparameters are all fixed (data-driven defaults from X)."""

    def summarize(self, X):
        """What :meth:`resolve_summary` needs to know of the data ``X`` (working form), as a
        small object that :meth:`merge_summaries` combines across parts of the data: how
        the data-driven defaults are found when the data are split over the workers of a
        cluster.  None for a family that does not support it."""
        return None

    def merge_summaries(self, a, b):
        """The summary of the union of two disjoint parts of the data."""
        raise NotImplementedError(f"{type(self).__name__} has no data summaries")

    def resolve_summary(self, summary) -> "ConjugateFamily":
        """:meth:`resolve` from a data summary instead of the data."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot resolve its hyperparameters from a data summary")

    @property
    @abstractmethod
    def is_resolved(self) -> bool:
        """Whether every hyperparameter has a value."""

    @abstractmethod
    def n_features(self) -> int:
        """Dimension of a data point (``d`` for vectors, ``V`` for count vectors)."""

    # ------------------------------------------------------------ statistics
    @abstractmethod
    def stats(self, X, labels=None, n_clusters: int | None = None) -> NamedTuple:
        """Sufficient statistics of the points of each cluster.

        Parameters
        ----------
        X : data in the family's working form, n points
        labels : int array of shape (n,), optional
            Cluster of each point in ``0 .. n_clusters - 1``; all points in one cluster if None.
        n_clusters : int, optional
            Number of clusters (default ``labels.max() + 1``).
        """

    @abstractmethod
    def empty_stats(self, n_clusters: int = 1) -> NamedTuple:
        """Statistics of ``n_clusters`` empty clusters."""

    @abstractmethod
    def combine(self, a: NamedTuple, b: NamedTuple) -> NamedTuple:
        """Statistics of the union of two disjoint point sets, cluster by cluster."""

    @abstractmethod
    def subtract(self, a: NamedTuple, b: NamedTuple) -> NamedTuple:
        """Statistics of ``A \\ B`` for ``B`` a subset of ``A``, cluster by cluster."""

    @abstractmethod
    def count(self, stats: NamedTuple) -> np.ndarray:
        """Number of points of each cluster, shape (K,)."""

    def add(self, stats: NamedTuple, x) -> NamedTuple:
        """Statistics after adding the point(s) ``x`` (a set of rows) to every cluster."""
        return self.combine(stats, self._broadcast(self.stats(x), stats))

    def remove(self, stats: NamedTuple, x) -> NamedTuple:
        """Statistics after removing the point(s) ``x`` from every cluster."""
        return self.subtract(stats, self._broadcast(self.stats(x), stats))

    def _broadcast(self, one: NamedTuple, like: NamedTuple) -> NamedTuple:
        k = len(self.count(like))
        return take(one, np.zeros(k, dtype=np.intp))

    # -------------------------------------------------------------- posterior
    @abstractmethod
    def posterior(self, stats: NamedTuple) -> NamedTuple:
        """Posterior hyperparameters given each cluster's statistics (batched)."""

    @abstractmethod
    def log_marginal(self, stats: NamedTuple) -> np.ndarray:
        """``log f(X_k)``, the marginal likelihood of each cluster's points, shape (K,)."""

    def log_marginal_unions(self, stats: NamedTuple, i, j) -> np.ndarray:
        """``log f(X_{i[t]} ∪ X_{j[t]})`` for each pair ``t`` of clusters of ``stats``
        (disjoint point sets), shape (len(i),): what a merge's ratio needs.  A family whose
        statistics are large (the documents' vocabulary) may score the unions without
        copying the rows; the values are the same."""
        return self.log_marginal(self.combine(take(stats, i), take(stats, j)))

    @abstractmethod
    def log_predictive(self, X, stats: NamedTuple) -> np.ndarray:
        """``log f(x_i | X_k)`` for every point and cluster, shape (n, K)."""

    @abstractmethod
    def sample_posterior(self, stats: NamedTuple, rng: np.random.Generator) -> NamedTuple:
        """One draw ``theta_k ~ p(theta | X_k)`` per cluster (batched parameters)."""

    def point_params(self, stats: NamedTuple, rng: np.random.Generator) -> NamedTuple:
        """One parameter per cluster that represents its posterior, in the form of
        :meth:`sample_posterior`: what the exact split-merge moves of the sub-cluster sampler
        allocate points with (any value is valid there; a central one proposes better splits).

        The default is a posterior draw; families return the posterior mean (or mode).
        """
        return self.sample_posterior(stats, rng)

    def sample_prior(self, rng: np.random.Generator, n_clusters: int = 1) -> NamedTuple:
        """``n_clusters`` independent draws from the prior."""
        return self.sample_posterior(self.empty_stats(n_clusters), rng)

    @abstractmethod
    def log_likelihood(self, X, params: NamedTuple) -> np.ndarray:
        """``log f(x_i; theta_k)`` for every point and parameter, shape (n, K)."""

    @abstractmethod
    def sample_data(self, params: NamedTuple, components: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
        """Draw one point from ``f(.; theta_{components[j]})`` for each entry ``j``."""

    @abstractmethod
    def mean_params(self, stats: NamedTuple) -> dict:
        """Posterior means of the parameters per cluster, as a dict of arrays."""



    # ---------------------------------------------------------------- kernels
    @abstractmethod
    def kernel(self, X) -> FamilyKernel:
        """The numba face of the family for data ``X`` (in working form)."""

    def pass_kernel(self, X, summary=None) -> PassKernel | None:
        """The instantiated-parameter numba face for data ``X``, or None.

        ``summary`` (see :meth:`summarize`) is that of the whole data set when ``X`` is one
        part of it, so that every part's raw statistics are taken about the same origin.

        Without it the sub-cluster sampler runs its NumPy reference pass through
        ``log_likelihood`` and ``stats`` (same distribution, slower).
        """
        return None

    def seed_subclusters(self, stats: NamedTuple, rng: np.random.Generator) -> NamedTuple:
        """Two parameters per cluster (rows ``2k``, ``2k + 1``) whose likelihoods split the
        cluster's points in a random but structured way: how a cluster's new sub-clusters
        start (the sub-cluster sampler assigns each point to the more likely seed).

        The default draws both from the cluster's posterior; families override it with a
        split that the sub-clusters' Gibbs updates refine in a few passes.
        """
        return self.sample_posterior(take(stats, np.repeat(np.arange(len(self.count(stats))), 2)),
                                     rng)
