"""``DPMixture``: the scikit-learn style estimator of Dirichlet-process (and other
partition-prior) mixtures, a thin facade over families, priors, samplers and the chain
runner.

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
Wade, S. & Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation and credible
    balls. Bayesian Analysis 13(2) (the point estimate ``labels_``).
"""

from __future__ import annotations

import contextlib
import math
import warnings

from ..chains.length import DEFAULT_MAX_TIME, renamed_run_length
from ..chains.renamed import no_other_keywords, without_renamed
from ..utils.checks import DataError, check_int
from ..samplers import MixtureModel, choose_sampler
from ..samplers._partitioned import kmeans_start
from ..samplers.kmeans import kmeans_labels
from ..priors import PartitionPrior, get_prior
from ..tables.frequency import row_counts
from .mixture import MixtureEstimator
from .weights import (WeightedData, check_mode, fold_fused, make_plan, row_similarity,
                      summarise_rows)


class DPMixture(MixtureEstimator):
    """Dirichlet-process mixture model fitted by MCMC; the data decide the number of clusters.

    Parameters
    ----------
    family : str, dict or ConjugateFamily, default="auto"
        The component family.  ``"auto"`` (the default) picks one from the data
        (:func:`~dpclust.families.choose_family`): a sparse matrix of counts takes
        ``"multinomial"``, :class:`~dpclust.rankings.Rankings` take ``"plackett-luce"``
        (with its default coarsening), an array of numbers ``"gaussian"`` (``"diagonal"``
        when the rows are fewer than the columns squared, in the data's principal axes
        with at least three rows a column, and beyond 150 columns:
        :func:`~dpclust.families.numbers_family`), its columns of whole numbers
        (or of a fixed number of decimals) with ties read as rounded values
        (``NormalInverseWishart(rounding="auto")``:
        :class:`~dpclust.families.gaussian_rounded.RoundedGaussian`); a pandas DataFrame (or array) with text,
        yes/no or 0/1 columns, a scale of 3 to 12 whole numbers or missing cells takes the
        ``"table"`` family
        (:class:`~dpclust.families.TableFamily`: a kind per column, real columns together
        in one full-covariance Gaussian when they are complete, else independent
        Normal-Gamma columns; yes/no Beta-Bernoulli, categories Dirichlet-categorical,
        declared counts Gamma-Poisson; holes left out exactly; real columns turned as an
        array's, ``axes="auto"``); a dict of column kinds, ``{"zip": "categorical"}``, is that family with those
        columns' kinds given.  ``"diagonal"``, ``"bernoulli"``, ``"categorical"`` and
        ``"poisson"`` are the table family with every column of one kind.  ``"gaussian"`` is
        :class:`~dpclust.families.NormalInverseWishart` with data-driven defaults,
        ``"multinomial"`` is :class:`~dpclust.families.DirichletMultinomial` for count vectors
        (dense or ``scipy.sparse``), ``"mallows"`` is
        :class:`~dpclust.families.GeneralizedMallows` and ``"plackett-luce"``
        :class:`~dpclust.families.PlackettLuce` for top-t rankings (lists of item ids
        or names, best first, or a :class:`~dpclust.rankings.Rankings`), or pass a
        configured family object.
    alpha : float or GammaPrior, default=1.0
        DP concentration.  A :class:`~dpclust.GammaPrior` (or ``("gamma", shape, rate)``)
        puts a prior on it and resamples it every iteration (Escobar & West 1995).  The
        shorthand for ``prior=DirichletProcess(alpha)``.
    prior : PartitionPrior, str or None, default=None
        The prior on partitions (:mod:`dpclust.priors`): None is the Dirichlet process with
        ``alpha``; :class:`~dpclust.priors.PitmanYor` (``"pitman-yor:D,S"``),
        :class:`~dpclust.priors.MixtureOfFiniteMixtures` (``"mfm:GAMMA,poisson:MU"``) or
        :class:`~dpclust.priors.FiniteDirichlet` (``"finite:K"``) change what the model
        says about the number of clusters (the user guide's "How many clusters?").  The
        estimator keeps its name for all of them: the Dirichlet process is its default.
        Collapsed Gibbs, explicit Gibbs and Gibbs+SAMS fit every prior (``"auto"`` picks
        Gibbs+SAMS for a prior other than the DP); the sub-cluster sampler and the
        rankings' samplers fit the Dirichlet process only, and ``"fsd"`` the finite prior.
    coarsening : float, "auto", "exact" or None, default=None
        Fit the *coarsened* posterior (Miller & Dunson 2019) instead of the exact one: the
        mixture likelihood raised to ``zeta = coarsening / (coarsening + N)``, which
        conditions on the data lying within a tolerated misfit of the model (about
        ``1 / coarsening`` nats per point) instead of being drawn from it exactly.  Real
        data never fit a component family exactly, and under the exact posterior extra
        clusters absorb the misfit, so their number grows with N; under the coarsened one
        it does not.  The model is then a finite mixture with sparse weights
        (``prior="finite:K"``, default ``finite:20`` with weights ``Dir(1/20)``), fitted by
        the allocation-free sampler ``"coarsened"``
        (:class:`~dpclust.samplers.CoarsenedMixture`); ``labels_`` summarises each point's
        component drawn from its responsibilities.  ``"auto"`` chooses the value by
        Miller & Dunson's elbow of fit against complexity over a short grid
        (:func:`~dpclust.estimators.coarsening.calibrate`; ``coarsening_`` and
        ``calibration_`` say what it found).  ``"exact"``: the exact posterior.  None
        (the default): the family's default model, the exact posterior for every family
        but Plackett–Luce rankings, which are fitted at ``coarsening=100``
        (:attr:`~dpclust.families.base.ConjugateFamily.default_coarsening`: on real
        ballots the exact posterior keeps adding clusters the chains do not settle),
        unless the other settings ask for the exact posterior's model (a sampler, a prior
        or an alpha of its own); ``coarsening_`` says which ran.
    sampler : str or sampler object, default="auto"
        ``"auto"``: ``"gibbs"`` below 5,000 points (or documents), ``"subcluster"`` from
        there on.
        ``"gibbs"``: collapsed Gibbs (Neal's algorithm 3); ``"explicit"``: Gibbs with
        explicit cluster parameters (Neal's algorithm 2, the lecture notes' variant);
        ``"fsd"``: finite symmetric Dirichlet approximation with 20 components (pass
        ``FiniteSymmetricDirichlet(n_components=K)`` for another K); ``"subcluster"``: the
        parallel sampler of Chang & Fisher (2013), the one that scales: restricted Gibbs
        with instantiated parameters (collapsed for documents and for Gaussian data up to
        10,000 points) and exact parallel split-merge moves
        (:class:`~dpclust.samplers.SubclusterSplitMerge`; ``"subcluster-exact"`` is the
        same); ``"subcluster-approx"``: the paper's fast sub-cluster splits and merges,
        **not exact** (for comparisons with the paper); ``"gibbs+sams"``:
        collapsed Gibbs with Dahl's merge-split moves.  For rankings (``"mallows"``, which
        has no collapsed form): ``"slice-gibbs"`` (the default there; exact MCMC with its
        Metropolis-Hastings step for the central ranking) or ``"beta-gibbs"`` (faster,
        approximate), :class:`~dpclust.samplers.SliceGibbs` and
        :class:`~dpclust.samplers.BetaGibbs` (Meilă & Chen 2010); for
        ``"plackett-luce"``: ``"explicit"`` (the default there; Neal's algorithm 2 with
        exact Gibbs rounds of the worths) or ``"fsd"`` under a finite prior.  With
        ``coarsening``, ``"coarsened"`` for every family.
    n_iter : int or None, default=None
        Number of MCMC iterations (sweeps over the data) of each chain.  None: 200, then
        longer until the chains pass the convergence rule, within
        ``max_iter`` and ``max_time``.
    burn_in : int or None, default=None
        Iterations discarded before draws are kept; ``None`` means half the run.
    thin : int, default=1
        Keep every ``thin``-th draw after burn-in.
    store_labels : bool, default=False
        Keep every kept partition in ``trace_.labels`` (n_kept × n_samples integers).
    init_clusters : int, default=10
        Start from this many clusters (at most one per point).  Samplers that move one
        point at a time merge clusters far more easily than they split them (a new cluster
        must grow from a single point), so starting above the expected number of clusters
        mixes better than starting from one.
    init : {"auto", "random", "kmeans"}, default="auto"
        How the ``init_clusters`` starting clusters are made: points assigned at random, or
        k-means (k-means++ seeds, 20 Lloyd iterations; documents by their word
        proportions).  ``"auto"``: k-means for the sub-cluster sampler on Gaussian data,
        random otherwise.  The sub-cluster sampler's splits break a cluster that mixes
        several groups into pieces that its exact merges reassemble slowly: on the bundled
        demo (1,500 points, six clusters) it reaches NMI 0.997 in 100 iterations from
        k-means, but K = 58 after 10 iterations and NMI 0.987 after 400 from ten random
        clusters; on 10^5 points it reaches NMI 0.9999 from k-means.  With ``partitions``
        or on a Dask cluster the k-means runs on a uniform sample of about 20,000 rows
        (chosen by keys of the rows' global indices, not by the partitions) and every
        partition assigns its rows to the nearest centre: the same start in-process and on
        a cluster.
    point_estimate : "auto", {"vi", "binder", "omari", "nvi", "nid"} or Loss, default="auto"
        Loss whose posterior expectation ``labels_`` minimises, searched over all partitions
        (:func:`dpclust.partitions.point_estimate`); ``"vi(a=0.5)"`` weighs the loss
        (``a < 1`` splits more, ``a > 1`` merges more).  ``"auto"``: the family's
        ``default_loss``, variation of information, for rankings ``"vi(a=0.5)"`` (a short
        ballot says so little about its bloc that plain VI joins every bloc), with rows
        repeated by whole-number weights ``"vi(a=0.75)"``; ``loss_`` is the one used.  VI
        merges clusters whose points the draws cannot tell apart; Binder and omARI keep
        them and add small clusters of uncertain points; NVI lies between.
    max_draws : int or "auto", default="auto"
        At most this many kept draws (evenly spaced) are held for the point estimate and the
        co-clustering matrix, which cost O(max_draws² × n) and O(max_draws × n) memory.
        ``"auto"``: 200, fewer beyond 100,000 points (``2·10⁷ / n``, at least 20).
    n_predictive_draws : int, default=20
        Kept draws (evenly spaced) averaged over by ``score_samples``.
    random_state : int, Generator or None, default=None
        Seed or ``numpy.random.Generator``; the same seed gives the same result.
    progress : bool, default=False
        Show a progress bar (iteration, number of clusters, log joint) on stderr.
    checkpoint : str or path, optional
        File to which the chain state is written every ``checkpoint_every`` iterations and at
        the end; :meth:`resume` continues from it with nothing lost.
    checkpoint_every : int or None, default=None
        Iterations between checkpoints (``None``: only at the end, if ``checkpoint`` is set).
    callback : callable, optional
        ``callback(iteration, state, info)`` after every iteration; returning ``False`` stops
        the run early (the draws kept so far are used).
    executor : None, "dask" or distributed.Client, default=None
        Where the fit runs.  None: in this process (its chains in processes of this
        machine, ``n_jobs``).  A ``distributed.Client``, or ``"dask"`` for Dask's current
        client: the sub-cluster sampler on that Dask cluster, with ``X`` a dask array,
        shard files (a directory, glob pattern or list of ``.npy``/``.parquet`` files, one
        partition each) or an in-memory array shipped once to the workers.  Data, labels
        and kept draws stay on the workers; each iteration sends the cluster parameters and
        gathers per-cluster statistics.  Needs ``pip install 'dpclust[dask]'``; starts
        from k-means on a sample of the rows as ``init`` says (the start of the in-process
        run with the same ``partitions``); ``posterior_similarity`` is not kept.  (It
        replaces ``backend="dask"`` and ``client=``, which still work and warn.)
    partitions : int, sequence of int or None, default=None
        Rows per partition of the sub-cluster sampler's data pass (an int: that many equal
        partitions).  Each partition has its own random streams and statistics, combined
        in order, so the same ``random_state`` and partitions give exactly the same chain
        in-process and on a Dask cluster.  None: one partition in-process, a dask array's
        own row chunks (or one partition per worker) on a Dask cluster.
    n_chains : int, default=4
        Independent chains, their streams spawned from ``random_state``
        (``numpy.random.SeedSequence``).  Their kept draws are pooled for ``labels_``, the
        co-clustering matrix, ``predict``, ``score_samples`` and ``sample`` (at most
        ``max_draws`` in all); ``trace_`` has one row per chain; ``convergence_``
        compares them (R-hat sees a chain stuck where the others are not).  With one chain,
        R-hat compares the chain's quarters.  On a Dask cluster the chains run one after
        another on the same workers.
    n_jobs : int or None, default=None
        Processes for the chains.  None: the chains start in this process, one iteration
        of each in turn; when the rest of the run would take more than 5 seconds there,
        they move to one process per chain, up to the cores (``n_processes_`` says how many
        ran them) -- where processes can start: in an interactive session or a notebook,
        or from a script whose call to ``fit`` runs under ``if __name__ ==
        "__main__":`` (the spawned processes import the script again), and without a
        ``callback``.  1: this process; -1: one per core from the start, at most one per
        chain.  Each process gets its share of the cores for its numba threads; the result
        does not depend on ``n_jobs``.  A ``callback`` needs ``n_jobs`` None or 1.
    max_iter : int or None, default=None
        The longest run that goes on until the chains pass the convergence rule.  With
        ``n_iter=None``, at most this many iterations (None: 200,000); with a number
        ``n_iter``, the run is exactly ``n_iter`` long when ``max_iter`` is None, and
        otherwise goes on after ``n_iter`` until the rule passes, up to ``max_iter``.  A
        run that goes on is made longer, while ``convergence_`` fails, by as much as the
        smallest effective sample size needs to reach the rule's (with a fifth to spare;
        between 1.5 and 2 times; while an R-hat fails, as much as brings R-hat - 1 under
        0.01, for it falls about as one over the kept draws), within ``max_time``; on the
        way the rule is judged every fifth of the last length, and the run stops at the
        first length that passes (within a fifth of the shortest that would).  A burn-in
        left to the default stays half of the run, so the verdict and the kept draws are
        those of the second half.  ``n_iter_`` says how long it ran.  (It replaces
        ``until_converged=True``, which still works and warns: ``max_iter=10 * n_iter``.)
    max_time : float or None, default=600.0
        Seconds: a run that goes on until it converges is made longer only as far as its
        pace so far says it will end within ``max_time`` of its start (an extension of
        less than a quarter is not made); it then stops and says whether it converged.
        With ``n_iter=None`` its first 200 iterations are held to ``max_time`` too: on
        data where they would take longer the run stops at ``max_time`` (its burn-in
        brought down to half the run its pace foresees, before the chains reach it).
        None (or 0, as ``--max-time`` on the command line): no limit but ``max_iter``.
        A run of fixed length (``n_iter`` given) is not
        cut.  Where the budget decides the length, the result depends on the machine's
        speed as well as on ``random_state``: pass ``max_time=None`` (or a fixed
        ``n_iter``) for a result that any machine reproduces.
    sample_weight_mode : {"auto", "repeat", "power"}, default="auto"
        How ``fit(X, sample_weight=w)`` reads the weights (Notes, "Sample weights"):
        ``"repeat"``: row ``i`` counted as ``w_i`` rows (whole numbers; every family);
        ``"power"``: row ``i``'s likelihood raised to ``w_i`` (the table families:
        ``"table"``, ``"diagonal"``, ``"bernoulli"``, ``"categorical"``, ``"poisson"``);
        ``"auto"``: ``"repeat"`` when every weight is a whole number, else ``"power"``;
        whole numbers above 50 copies per row on average are refused under ``"auto"``
        (ask for ``"repeat"`` or ``"power"``).  At most 10^7 copies in all.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Point estimate of the partition: the partition with the least posterior expected
        loss (``point_estimate``; variation of information by default) to the kept draws,
        searched over all partitions, not only the sampled ones
        (:func:`dpclust.partitions.point_estimate`), at most 30 s after the chains (a
        quarter of ``max_time`` after a run held to less than two minutes).
    loss_ : str
        The loss ``labels_`` minimises (``point_estimate`` with ``"auto"`` resolved).
    credible_ball_ : CredibleBall
        The 95 % credible ball around ``labels_`` in the same loss (Wade & Ghahramani 2018;
        :func:`dpclust.partitions.credible_ball`): its radius, the range of numbers of
        clusters inside it, and its bounds as partitions: ``upper_vertical`` (the coarsest),
        ``lower_vertical`` (the finest) and ``horizontal`` (the farthest).
    n_clusters_ : int
        Number of clusters in ``labels_``.
    weights_ : ndarray of shape (n_clusters,)
        The clusters' mixing weights given ``labels_``, summing to 1: the prior's
        predictive weights of the clusters, normalised (for the DP ``N_k / N``; Pitman–Yor
        ``(N_k - d) / (N - K d)``).  ``components_`` gives each weight's credible interval.
    weight_new_ : float
        The prior's probability that one more point opens a new cluster (for the DP
        ``alpha / (N + alpha)``); it joins cluster ``k`` with probability ``(1 -
        weight_new_) * weights_[k]``.
    prior_ : PartitionPrior
        The prior on partitions the chains targeted (:mod:`dpclust.priors`).
    sampler_ : str
        The sampler that ran, a name of :data:`dpclust.samplers.SAMPLERS` (what
        ``sampler="auto"`` chose: :func:`dpclust.samplers.choose_sampler`).
    cluster_params_ : dict of arrays
        Posterior means of the cluster parameters given ``labels_`` (``"means"`` and
        ``"covariances"`` for Gaussians, ``"probabilities"`` for multinomials).  For
        rankings, the sampled parameters of the draw ``labels_`` is: ``"central_rankings"``
        (item ids best first), ``"theta"`` (dispersion per rank, larger = tighter) and
        ``"top_items"`` (each cluster's first five items by name).
    family_ : ConjugateFamily
        The family with every hyperparameter resolved.
    alpha_ : float
        Posterior mean of alpha over the kept draws (the fixed value if not resampled).
    trace_ : Trace
        Per-iteration ``log_joint``, ``n_clusters``, ``alpha``, ``size_entropy``,
        ``seconds`` (and ``labels``), each with a leading chain axis (one chain
        included): ``trace_.n_clusters[:, -10:]`` is K over the last ten iterations.
    certainty_ : ndarray of shape (n_samples,) or None
        Each point's posterior probability of lying in the core of its cluster of
        ``labels_`` (:func:`dpclust.partitions.point_certainty` over the pooled kept
        draws); None on a Dask cluster.
    cluster_presence_ : ndarray of shape (n_clusters,) or None
        Each cluster's share of the pooled kept draws that have a cluster made mostly of its
        points and holding most of them (:func:`dpclust.partitions.cluster_presence`): how
        surely the posterior supports it; None on a Dask cluster.
    components_ : Components or None
        The components matched to the clusters of ``labels_`` across the kept draws by the
        ECR rule (Papastamoulis & Iliopoulos 2010; :func:`dpclust.partitions.
        summarise_components`): each cluster's weight (its share of the points) with a
        95 % credible interval, and its parameters' posterior means and intervals
        (``params[name] = (mean, lower, upper)``).  The sampler's own parameters where it
        keeps them, else parameters drawn from each cluster's conditional posterior in up
        to 50 kept draws; None on a Dask cluster or where they would take over 200 MB.
    convergence_ : dict
        The verdict of :func:`dpclust.diagnostics.convergence` on the kept iterations:
        per quantity (``log_likelihood``, ``n_clusters``, ``size_entropy``, and ``alpha`` when
        resampled) the rank-normalised split ``rhat``, ``ess_bulk``, ``ess_tail`` and
        ``converged`` (R-hat < 1.01, both ESS >= 100 per chain; Vehtari et al. 2021), and
        overall ``converged`` and ``failing``.  A run that has not converged warns
        (``UserWarning``) with what to do.  :meth:`to_arviz` gives the chains to ArviZ.
    n_iter_ : int
        Iterations run (by each chain).
    n_processes_ : int
        Processes that ran the chains (1: this process).
    expected_loss_ : float
        Posterior expected loss of ``labels_``.
    n_features_in_ : int
    sample_weight_mode_ : {"repeat", "power"} or None
        How the last ``fit``'s ``sample_weight`` was read (None: no weights).
    label_share_ : ndarray of shape (n_samples,) or None
        With ``sample_weight``: the share of each row's copies (model rows) in its cluster
        of ``labels_``: 1 under ``"repeat"``, whose estimate keeps a row's copies together,
        0 for rows of weight 0; None without weights.
    transfer_ : dict
        Only on a Dask cluster: ``params_bytes`` (the cluster parameters sent for
        each data pass, once to every worker that runs a partition) and ``stats_bytes`` (the
        statistics gathered from all partitions) per pass, ``n_partitions``, and the whole
        run's ``round_trips`` (times the client waited for the workers), ``tasks``,
        ``calls`` (to the workers' actors, one per worker each stage of a round trip) and
        ``rebuilds`` (a lost worker's partitions held again and the chain run again from
        its last recovery point), and ``direct`` (whether the client called the workers'
        actors on direct connections rather than through Dask).

    Notes
    -----
    The fitted estimator keeps a reference to the (validated) training data: the posterior
    predictive density of :meth:`score_samples` is computed from the training points of each
    kept draw, which holds far less memory than per-draw cluster statistics would for large
    vocabularies.

    **Sample weights.**  ``fit(X, sample_weight=w)`` fits the model to *model rows* made
    from the rows of ``X``, with ``z`` their partition and ``p(z)`` the partition prior:

    * ``"repeat"`` (whole numbers): row ``i`` repeated ``w_i`` times, each copy its own
      customer of the prior; the posterior is exactly that of the repeated data,
      ``p(z | X_rep) ∝ p(z) ∏_k ∫ ∏_{t ∈ k} f(x_t | θ) p(θ) dθ``, and the
      copies of a row may sit in different clusters.  Aggregated data -- ballots
      with their counts, a point seen many times -- are fitted this way (the rankings
      families already score identical ballots once, ``family.distinct``).
    * ``"power"``: row ``i`` once, its likelihood raised to ``w_i``:
      ``p(z | X, w) ∝ p(z) ∏_k ∫ ∏_{i ∈ k} f(x_i | θ)^{w_i} p(θ) dθ``, a generalised
      (power) posterior (Bissiri, Holmes & Walker 2016, with the loss
      ``-w_i log f(x_i | θ)``).  All ``w_i = 1`` give the ordinary posterior; it is not
      the posterior of repeated rows: a row of weight 3 has the likelihood of three
      copies held in one cluster, and the prior counts it once.  Survey or importance
      weights, which are not counts, belong here.

    A row of weight 0 is left out of the model under both (scikit-learn's convention).
    The family's data-driven hyperparameters are resolved from the model rows.  The
    per-row outputs keep one entry per row of ``X``: ``labels_[i]`` is the cluster of row
    ``i``'s copies (the point estimate's search moves a row's copies together, though a
    draw may split them; a row of weight 0 gets the cluster :meth:`predict` gives it),
    ``certainty_[i]`` the mean over its copies (NaN for weight 0),
    :meth:`posterior_similarity` compares a copy of each row.  Whatever counts points
    counts the model rows: ``weights_``, ``cluster_params_``, the predictive density of
    :meth:`score_samples` (that of the repeated data), ``trace_.labels`` (one column per
    model row) and a checkpoint (:meth:`resume` takes the same ``sample_weight``).  Under
    ``"power"`` the labels are the point estimate's; ``n_clusters_`` counts its clusters
    either way.

    References
    ----------
    Neal (2000), algorithms 2 and 3; Escobar & West (1995); Wade & Ghahramani (2018);
    Bissiri, Holmes & Walker (2016), A general framework for updating belief
    distributions, JRSS B 78(5) (the power posterior of ``sample_weight_mode="power"``).

    Examples
    --------
    >>> from dpclust import DPMixture
    >>> from dpclust.datasets import make_gaussian_mixture
    >>> X, y = make_gaussian_mixture(n_samples=300, n_clusters=3, random_state=0)
    >>> model = DPMixture(n_iter=100, random_state=0).fit(X)
    >>> model.n_clusters_
    3
    """

    @without_renamed
    def __init__(self, family="auto", alpha=1.0, sampler="auto", n_iter=None, burn_in=None,
                 thin=1, store_labels=False, init_clusters=10, init="auto", point_estimate="auto",
                 max_draws="auto", n_predictive_draws=20, random_state=None, progress=False,
                 checkpoint=None, checkpoint_every=None, callback=None, executor=None,
                 partitions=None, n_chains=4, n_jobs=None, max_iter=None,
                 max_time=DEFAULT_MAX_TIME, prior=None, coarsening=None,
                 sample_weight_mode="auto", **renamed):
        self.family = family
        self.coarsening = coarsening
        self.alpha = alpha
        self.prior = prior
        self.sampler = sampler
        n_iter, max_iter = renamed_run_length(n_iter, max_iter, renamed)
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.store_labels = store_labels
        self.init_clusters = init_clusters
        self.init = init
        self.point_estimate = point_estimate
        self.max_draws = max_draws
        self.n_predictive_draws = n_predictive_draws
        self.random_state = random_state
        self.progress = progress
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.callback = callback
        self.executor = _executor(executor, renamed)
        no_other_keywords("DPMixture", renamed)
        self.partitions = partitions
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.max_iter = max_iter
        self.max_time = max_time
        self.sample_weight_mode = sample_weight_mode

    # ----------------------------------------------------------------- set-up
    def _settings(self):
        out = super()._settings()
        check_int(self.init_clusters, "init_clusters", 1)
        if self.init not in ("auto", "random", "kmeans"):
            raise ValueError(f"init must be 'auto', 'random' or 'kmeans', got {self.init!r}")
        check_mode(getattr(self, "sample_weight_mode", "auto"))
        executor = getattr(self, "executor", None)
        if not (executor is None or executor in ("local", "dask") or _is_client(executor)):
            raise ValueError(f"executor must be None (this process), 'dask' (Dask's current "
                             f"client) or a distributed.Client, got {executor!r}")
        return out

    @property
    def _coarsening(self):
        """``coarsening`` checked and in effect: None (the exact posterior), a positive
        number or ``"auto"``; ``coarsening=None`` is the family's default (set at ``fit``,
        :attr:`~dpclust.families.base.ConjugateFamily.default_coarsening`), ``"exact"``
        None."""
        value = getattr(self, "coarsening", None)
        if value is None:
            return self.__dict__.get("_family_coarsening")
        if isinstance(value, str) and value in ("auto", "exact"):
            return None if value == "exact" else value
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if isinstance(value, bool) or not (number > 0 and math.isfinite(number)):
            raise ValueError(f"coarsening must be a positive number (alpha_c), 'auto', "
                             f"'exact' or None, got {value!r}")
        return number

    def _alpha_c(self):
        """The coarsening of the model (the chosen one under ``"auto"``), or None."""
        value = self._coarsening
        if isinstance(value, str):
            return self.__dict__.get("coarsening_")
        return value

    def _partition_prior(self) -> PartitionPrior:
        """``prior`` resolved (the Dirichlet process with ``alpha`` when None; a sparse
        finite mixture under ``coarsening``)."""
        prior = getattr(self, "prior", None)
        if self._coarsening is not None:
            resolved = get_prior("finite:20" if prior is None else prior)
            if resolved.name != "finite":
                raise ValueError(f"coarsening fits a finite mixture with sparse weights "
                                 f"(prior='finite:K'), not the {resolved.title} prior")
            if not (isinstance(self.alpha, (int, float)) and self.alpha == 1.0):
                raise ValueError("alpha is the Dirichlet process's concentration; under "
                                 "coarsening the finite prior takes its own: "
                                 "prior='finite:K,ALPHA'")
            return resolved
        resolved = get_prior(prior, alpha=self.alpha)
        if prior is not None and not resolved.is_dirichlet_process and not (
                isinstance(self.alpha, (int, float)) and self.alpha == 1.0):
            raise ValueError(f"alpha={self.alpha!r} is the Dirichlet process's concentration; "
                             f"the {resolved.title} prior takes its own parameters: leave "
                             f"alpha at its default")
        return resolved

    @property
    def _distributed(self) -> bool:
        """Whether the fit runs on a Dask cluster (``executor``)."""
        return getattr(self, "executor", None) not in (None, "local")

    @property
    def _partitions(self):
        return getattr(self, "partitions", None)

    @property
    def _where(self) -> str:
        """Where the chains run, as :func:`~dpclust.samplers.choose_sampler` reads it."""
        return ("dask" if self._distributed
                else "partitions" if self._partitions is not None else "local")

    def _initial_labels(self, rng, model, sampler):
        """k-means labels when ``init`` asks for them (None: the sampler's random start).

        With partitions (in-process or on a Dask cluster) the k-means runs on a sample of
        the rows and each partition assigns its rows to the nearest centre
        (:func:`~dpclust.samplers._partitioned.kmeans_start`), the same labels wherever the
        partitions are; in-process without partitions on all the rows."""
        family = model.family
        use_kmeans = (self.init == "kmeans"
                      or (self.init == "auto" and getattr(sampler, "kmeans_start", False)
                          and family.kmeans_start))
        if not use_kmeans or self.init_clusters == 1:
            return None
        if self._distributed or self._partitions is not None:
            start = kmeans_start(rng, model.partitions, family, self.init_clusters)
        else:
            features = family.init_features(model.X)
            start = (None if features is None
                     else kmeans_labels(rng, features, self.init_clusters))
        if start is None and self.init == "kmeans":
            raise ValueError(f"init='kmeans' needs data that k-means can use; "
                             f"{type(family).__name__} has none: use init='random'")
        return start

    def _make_sampler(self, n_samples, family):
        """The sampler of this fit, chosen once (:func:`~dpclust.samplers.choose_sampler`;
        the runner records its name as ``sampler_``)."""
        return self._sampler_choice(self.sampler, n_samples, family).sampler

    def _sampler_choice(self, request, n_samples, family):
        return choose_sampler(request, n_samples, family, self._partition_prior(),
                              where=self._where, coarsened=self._coarsening is not None)

    def _resumed_sampler(self, ckpt, n_samples, family_):
        """The sampler the checkpointed run ran, whatever ``"auto"`` would choose today: the
        name the checkpoint records, or for a file written before it recorded one, what
        ``"auto"`` chose then: below the sub-cluster sampler's threshold, Gibbs under the
        Dirichlet process for every family but documents, where it now takes Gibbs with
        merge-split moves."""
        if not (isinstance(self.sampler, str) and self.sampler == "auto"):
            return self._make_sampler(n_samples, family_)
        name = ckpt.get("sampler")
        now = self._sampler_choice("auto", n_samples, family_)
        if name is None:
            name = now.name
            if (name == "gibbs+sams" and self._partition_prior().is_dirichlet_process
                    and getattr(family_, "name", "") != "multinomial"):
                name = "gibbs"
        if name == now.name:  # with the options "auto" gives it
            return now.sampler
        return self._sampler_choice(name, n_samples, family_).sampler

    def _partition_rows(self, n_samples):
        """Rows per partition of ``partitions`` for ``n_samples`` points (None: one)."""
        if self._partitions is None:
            return None
        from ..distributed.loading import partition_rows

        return tuple(partition_rows(n_samples, self._partitions))

    def _make_model(self, family_, Xw, alpha_prior):
        plan = getattr(self, "_weight_plan", None)
        return MixtureModel(family_, Xw, alpha_prior, prior=self._partition_prior(),
                            partition_rows=self._partition_rows(family_.n_points(Xw)),
                            coarsening=self._alpha_c(), groups=plan and plan.copies)

    def _dask_model(self, X, family, prior):
        """The data on the Dask cluster of ``client``, validated and summarised there."""
        learned = {**family.hyperpriors(), **self._partition_prior().hyperpriors()}
        if learned:
            raise ValueError(
                f"a fit on a Dask cluster runs the hyperparameters fixed: give "
                f"{', '.join(learned)} a number (e.g. the value an in-process fit on a "
                f"sample learns, its hyperparameters_) instead of a GammaPrior")
        from ..distributed.backend import DaskModel
        from ..distributed.loading import load_partitions

        client = self.executor
        if isinstance(client, str):
            from ..distributed.backend import _dask

            try:
                client = _dask().get_client()
            except ValueError:
                raise ValueError("executor='dask' needs a Dask cluster: pass "
                                 "executor=Client(...) (or create one first)") from None
        data, resolved, fingerprint = load_partitions(client, X, family, self.partitions)
        return DaskModel(resolved, data, prior, fingerprint, prior=self._partition_prior())

    _model_state = ("coarsening_", "_family_coarsening")

    def _resumed(self, family_):
        if self._takes_default_coarsening():  # the family's default model
            self._family_coarsening = getattr(family_, "default_coarsening", None)

    def _takes_default_coarsening(self) -> bool:
        """Whether the family's default coarsening applies: ``coarsening=None`` and nothing
        else asked for the exact posterior's model (a sampler other than ``"auto"`` or
        ``"coarsened"``, a prior other than a finite one, an ``alpha``, a Dask ``executor``,
        sample weights read as powers)."""
        sampler = getattr(self, "sampler", "auto")
        prior = getattr(self, "prior", None)
        return (getattr(self, "coarsening", None) is None
                and (isinstance(sampler, str) and sampler in ("auto", "coarsened"))
                and (prior is None or (isinstance(prior, str) and prior.startswith("finite")))
                and isinstance(self.alpha, (int, float)) and self.alpha == 1.0
                and not self._distributed
                and getattr(self, "sample_weight_mode", "auto") != "power")

    def _resume_model(self, X, family_, prior):
        X, sample_weight = _unwrap(X)
        if self._distributed:
            _no_dask_weights(sample_weight)
            return self._dask_model(X, family_, prior)
        Xw = self._weigh(family_, family_.validate(X), sample_weight, X)
        return self._make_model(family_, Xw, prior)

    def fit(self, X, y=None, sample_weight=None):
        """Run the chains on ``X`` and summarise them (under ``coarsening="auto"`` after
        choosing the coarsening).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), sparse counts, rankings or a table
            The data, as ``family`` reads them.
        y : ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Weights >= 0 of the rows, read as ``sample_weight_mode`` says (see the class's
            "Sample weights").  None: every row once, but for a frequency table (R's data
            frame of a contingency table, its counts in a column ``Freq``;
            :mod:`dpclust.tables.frequency`), whose rows count as many rows as ``Freq``
            says.

        Returns
        -------
        self
        """
        self._family_coarsening = None
        if self._takes_default_coarsening():  # the family's default model
            self._family_coarsening = getattr(self._family(_unwrap(X)[0]),
                                              "default_coarsening", None)
        if sample_weight is not None:
            if isinstance(self._coarsening, str):
                raise ValueError("coarsening='auto' calibrates on unweighted data: with "
                                 "sample_weight, give coarsening a number")
            X = WeightedData(X, sample_weight)
        if isinstance(self._coarsening, str):
            from .coarsening import calibrate

            self.calibration_ = calibrate(self, X)
            self.coarsening_ = self.calibration_.chosen
        elif self._coarsening is not None:
            self.coarsening_ = self._coarsening
            self.__dict__.pop("calibration_", None)
        else:
            for stale in ("coarsening_", "calibration_"):
                self.__dict__.pop(stale, None)
        return super().fit(X, y)

    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit and return ``labels_`` (one label per row of ``X``)."""
        return self.fit(X, sample_weight=sample_weight).labels_

    @classmethod
    def resume(cls, path, X, *, sample_weight=None, **kwargs):
        """Continue a checkpointed run (:meth:`ChainEstimator.resume
        <dpclust.chains.ChainEstimator.resume>`; the same keywords); ``sample_weight``: the
        weights the run was started with (the data are checked by fingerprint with them)."""
        if sample_weight is not None:
            X = WeightedData(X, sample_weight)
        return super().resume(path, X, **kwargs)

    def _weigh(self, family, Xw, sample_weight, X=None):
        """The model rows of ``Xw`` under ``sample_weight`` (:mod:`.weights`); keeps the
        plan, and the rows of weight 0, for ``_finish``.  Without ``sample_weight``, a
        frequency table ``X`` (:mod:`dpclust.tables.frequency`) weighs its rows by its
        counts, each row as many rows (``"repeat"`` unless ``sample_weight_mode`` says
        ``"power"``)."""
        self._weight_plan = self._dropped_X = self._counted = None
        mode = getattr(self, "sample_weight_mode", "auto")
        if sample_weight is None:
            sample_weight = row_counts(X, getattr(Xw, "schema", None))
            self._counted = None if sample_weight is None else Xw.schema.weights
            mode = "repeat" if sample_weight is not None and mode == "auto" else mode
        if sample_weight is None:
            return Xw
        plan = make_plan(sample_weight, mode, family)
        if plan.mode == "power" and self._coarsening is not None:
            raise ValueError("coarsening raises the whole likelihood to a power: it does not "
                             "combine with powers per row; use whole-number weights "
                             "(sample_weight_mode='repeat') or coarsening=None")
        out = plan.apply(family, Xw)
        self._weight_plan = plan
        if len(plan.dropped):
            self._dropped_X = family.subset(Xw, plan.dropped)
        return out

    def _finish(self, model, progs):
        super()._finish(model, progs)
        summarise_rows(self, self.__dict__.pop("_weight_plan", None),
                       self.__dict__.pop("_dropped_X", None))

    def posterior_similarity(self, max_samples=10_000):
        """Posterior co-clustering matrix ``P[i, j] = Pr(z_i = z_j | X)`` from the kept draws.

        With whole-number sample weights, the probability that a copy of row ``i`` and a
        copy of row ``j`` sit together; NaN for rows of weight 0.

        Returns
        -------
        similarity : ndarray of shape (n_samples, n_samples)
        """
        P = super().posterior_similarity(max_samples)
        rows = getattr(self, "_model_rows", None)
        return P if rows is None else row_similarity(P, rows, len(self.labels_))

    def fuse(self, omega=1.0, **kwargs):
        fusion = super().fuse(omega, **kwargs)
        rows = getattr(self, "_model_rows", None)
        if rows is not None:
            self.fused_labels_ = fold_fused(rows, len(self.labels_), self._model_labels,
                                            fusion.labels, self.labels_)
        return fusion

    fuse.__doc__ = MixtureEstimator.fuse.__doc__

    def _initial_state(self, rng, model, sampler, alpha0):
        labels = self._initial_labels(rng, model, sampler)
        return sampler.init(rng, model, labels=labels, n_clusters=self.init_clusters,
                            alpha=alpha0)

    def _target(self, X):
        """The model for ``X`` (and its sample weights): on the Dask cluster with
        a Dask ``executor``, else the model rows (:mod:`.weights`) of ``X`` validated, the
        family's hyperparameters resolved from them."""
        X, sample_weight = _unwrap(X)
        family = self._family(X)
        if self._distributed:
            _no_dask_weights(sample_weight)
            prior = self._partition_prior().alpha_prior
            return self._dask_model(X, family, prior)
        return self._model_of(family, self._weigh(family, family.validate(X), sample_weight, X))

    def _lost(self, exc, model, progs, fingerprint, saved):
        """A Dask cluster lost what it could not recompute: save the last complete
        iteration if its labels can still be gathered, else point to the last save."""
        if not _cluster_failure(exc):
            return None
        done = min(p.snapshot.iteration for p in progs)
        if self.checkpoint is not None and done > 0:
            with contextlib.suppress(Exception):  # its labels may be lost with it
                saved[0] = self._save(progs, model, fingerprint)
        from ..distributed import WorkerLost

        where = (f"the checkpoint {self.checkpoint} holds iteration {saved[0]}: continue "
                 f"with {type(self).__name__}.resume (or 'dpclust resume')"
                 if self.checkpoint is not None and saved[0]
                 else "no checkpoint was written (pass checkpoint= and checkpoint_every=)")
        return WorkerLost(f"the run stopped after iteration {done}: {exc}; {where}")


def _unwrap(X):
    """``(data, sample_weight)`` of what ``fit`` was given."""
    if isinstance(X, WeightedData):
        return X.X, X.sample_weight
    return X, None


def _no_dask_weights(sample_weight):
    if sample_weight is not None:
        raise ValueError("sample_weight is for in-process runs: the data of "
                         "a Dask executor stay on the workers; fit in this process (executor=None)")


def _cluster_failure(exc) -> bool:
    """Whether an error came from a Dask cluster or the sources it reloads data from."""
    from ..distributed import WorkerLost

    module = type(exc).__module__ or ""
    return (isinstance(exc, (WorkerLost, DataError, OSError))
            or module.startswith(("distributed", "tornado")))


def _is_client(obj) -> bool:
    """Whether ``obj`` looks like a ``distributed.Client`` (submits and gathers tasks)."""
    return hasattr(obj, "submit") and hasattr(obj, "gather")


def _executor(executor, renamed: dict):
    """``executor`` from the parameters it replaced (``backend``, ``client``; popped from
    ``renamed``), which warn."""
    if not {"backend", "client"} & set(renamed):
        return executor
    warnings.warn("backend= and client= are one parameter now, executor=: executor=client "
                  "(a distributed.Client), executor='dask' (Dask's current client) or None "
                  "(this process)", FutureWarning, stacklevel=3)
    backend, client = renamed.pop("backend", "local"), renamed.pop("client", None)
    if executor is not None or backend == "local":
        return executor
    return (client or "dask") if backend == "dask" else backend  # fit refuses another
