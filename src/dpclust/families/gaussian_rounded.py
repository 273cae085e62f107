r"""Gaussian clusters of values recorded to a grid: the rounded-data model, exactly.

Real tables record numbers to a unit: a letter's features as whole numbers from 0 to 15,
a sensor to the nearest integer, a length to the millimetre.  A Gaussian cluster gives
every recorded value a density, and values that tie exactly have an unbounded likelihood
under a cluster that shrinks onto them: the exact posterior of a Gaussian mixture puts
small clusters on the ties, and their number grows with the data.

The rounded-data model says what was recorded: each row has latent real values ``y_i``,
Gaussian within its cluster, and what the table holds is ``y_ij`` rounded to its column's
grid of width ``w_j``,

.. math::

    x_{ij} = w_j \, \mathrm{round}(y_{ij} / w_j), \qquad
    p(x_i \mid \mu, \Sigma) = \int_{B_i} N(y; \mu, \Sigma) \, dy,
    \qquad B_i = \prod_j [x_{ij} - w_j / 2, \; x_{ij} + w_j / 2]

(columns recorded exactly have ``w_j = 0`` and their factor is the density).  The likelihood
of a cell is a probability, at most 1, so no cluster gains by sitting on a tie.  The box
probability of a full covariance has no closed form, and neither has a cluster's
marginal, so the family declares ``collapsible = False`` and is fitted by the collapsed
samplers given the latent values (:mod:`dpclust.samplers.augmented`, Tanner & Wong 1987).
The chain runs on ``(z, theta, y)``; one iteration:

1. ``y ~`` a kernel leaving ``p(y | theta, z, x)`` invariant: one Gibbs sweep over the
   rounded coordinates, each drawn from its Gaussian conditional given the row's other
   coordinates under its cluster's ``(mu, Sigma)``,

   .. math::

       y_{ij} \mid y_{i,-j} \sim N\!\left(\mu_j - \Lambda_{jj}^{-1} \sum_{l \ne j}
       \Lambda_{jl} (y_{il} - \mu_l), \; \Lambda_{jj}^{-1}\right)
       \text{ truncated to } [x_{ij} - w_j/2, \; x_{ij} + w_j/2],

   ``Lambda = Sigma^{-1}`` (exact truncated-normal draws:
   :func:`~dpclust.utils.truncnorm.truncated_draw`, compiled with the sweep).  The sweep starts from the
   last iteration's ``y`` (the state carries them), so it is a Markov kernel of the
   conditional, not a fresh draw, which is all a Gibbs step needs;
2. ``z`` moved by the inner sampler on the rows ``y`` with ``theta`` integrated out (the
   Normal-Inverse-Wishart family's collapsed kernels);
3. ``theta ~ p(theta | z, y)``, each cluster's Normal-Inverse-Wishart posterior.

Steps 2 and 3 leave ``p(z, theta | y, x)`` invariant and step 1 ``p(y | z, theta, x)``, so
the chain leaves the joint posterior invariant, whose marginal in ``z`` is that of the
rounded-data mixture.  Its log joint (the trace's) is that of the augmented state:
``log p(z) + sum_k log p(theta_k) + sum_i log N(y_i; theta_{z_i})``.

A new row is scored (``predict``, ``score_samples``) by its density at the recorded
values times the cells' widths, ``N(x_i; mu, Sigma) prod_j w_j`` (a new cluster's term: the
prior predictive's Student t at the recorded values times the widths): the box probability
to second order in ``w / sigma``.

Which columns are rounded: ``rounding="auto"`` (what ``family="auto"`` gives a table of
numbers) takes a column as recorded to the grid ``10^-p`` when every value is a multiple
of it (the smallest ``p`` from 0 to 6) and at most half of the rows hold distinct values,
i.e. ties are the rule: :func:`grid_widths`.

References
----------
Tanner, M. A. & Wong, W. H. (1987). The calculation of posterior distributions by data
    augmentation. *JASA* 82(398), 528-540.
Heitjan, D. F. & Rubin, D. B. (1991). Ignorability and coarse data. *Annals of Statistics*
    19(4), 2244-2253 (rounded data as coarse data).
Canale, A. & Dunson, D. B. (2011). Bayesian kernel mixtures for counts. *JASA* 106(496)
    (a Gaussian mixture of latent values rounded to the data's grid).
Robert, C. P. (1995). Simulation of truncated normal variables. *Statistics and Computing*
    5(2), 121-125.
"""

from __future__ import annotations

import numpy as np

from ..utils.truncnorm import BUFFER_PER_DRAW
from ._linalg import lower_inverses
from ._grid import MAX_DECIMALS, MAX_DISTINCT_SHARE, check_widths, grid_widths
from ._rounded_kernels import latent_sweep
from .gaussian import ROUNDED, GaussianParams, NormalInverseWishart

_SAMPLER_TEXT = {
    "gibbs": "exact MCMC (collapsed Gibbs given the latent unrounded values, drawn each "
             "iteration)",
    "gibbs+sams": "exact MCMC (collapsed Gibbs and merge-split moves given the latent "
                  "unrounded values, drawn each iteration)",
    "subcluster": "exact MCMC (the sub-cluster sampler's moves given the latent unrounded "
                  "values, drawn each iteration)",
}


class RoundedGaussian(NormalInverseWishart):
    """:class:`~dpclust.families.NormalInverseWishart` clusters of latent values that the
    data record rounded to a grid per column (module notes).

    Made by ``NormalInverseWishart(rounding=...).resolve(X)`` when a column is rounded;
    ``rounding="auto"`` is what ``family="auto"`` gives a table of numbers.  The widths are
    :attr:`widths_` (0: a column recorded exactly).
    """

    collapsible = False
    #: the samplers that fit it (on the latent values: :mod:`dpclust.samplers.augmented`)
    samplers = ("gibbs", "gibbs+sams", "subcluster")
    #: the latent values are a Markov kernel's state, carried from one iteration to the next
    carries_latents = True
    #: Gibbs+SAMS sweeps with collapsed Gibbs on the latent values (the family's own
    #: parameters have no closed-form likelihood for Neal's algorithm 2)
    sweeps_own_params = False

    @property
    def widths_(self) -> np.ndarray:
        """Each column's cell width, shape (n_features,) (0: recorded exactly)."""
        return self._widths

    def _no_collapsed(self, what: str):
        return ValueError(
            f"{what}: values rounded to a grid have no closed-form cluster marginal, so "
            "this family is fitted given their latent unrounded values with sampler="
            "'gibbs', 'gibbs+sams' or 'subcluster' ('auto' picks one); rounding=None "
            "fits the values as exact")

    def kernel(self, X, n_max=None):
        raise self._no_collapsed("collapsed kernels")

    def pass_kernel(self, X, summary=None):
        return None

    def update_params(self, X, labels, params, rng, n_clusters=None):
        raise self._no_collapsed("sampler='explicit' or 'fsd'")

    def sample_given_one(self, X, i, rng):
        raise self._no_collapsed("sampler='explicit'")

    def log_likelihood(self, X, params: GaussianParams) -> np.ndarray:
        """``log N(x_i; mu_k, Sigma_k) + sum_j log w_j`` (rounded columns): a new row's
        score, the box probability to second order in ``w / sigma`` (module notes)."""
        return NormalInverseWishart.log_likelihood(self, X, params) + self._log_cells()

    def log_prior_predictive(self, X) -> np.ndarray:
        """``log f(x_i) + sum_j log w_j`` under the prior (the Student t of the
        Normal-Inverse-Wishart family), shape (n,): a new cluster's term, on the scale of
        :meth:`log_likelihood`."""
        return (NormalInverseWishart.log_predictive(self, X, self.empty_stats(1))[:, 0]
                + self._log_cells())

    def _log_cells(self) -> float:
        """``sum_j log w_j`` over the rounded columns: a row's cell volume."""
        w = self._widths
        return float(np.log(w[w > 0]).sum())

    # ----------------------------------- the collapsed samplers, given the latents
    def latent_family(self) -> NormalInverseWishart:
        """The family of the latent values: the Normal-Inverse-Wishart family with this
        one's resolved hyperparameters (and learned ones)."""
        out = NormalInverseWishart.__new__(NormalInverseWishart)
        out.__dict__.update(self.__dict__)
        out.rounding = None
        return out

    def initial_latent_params(self, X, labels, n_clusters: int, rng) -> GaussianParams:
        """A start: each cluster's parameters from the posterior of its recorded values."""
        return self.sample_posterior(self.stats(X, labels, n_clusters), rng)

    def draw_latents(self, X, labels, params: GaussianParams, rng, previous=None) -> np.ndarray:
        """One Gibbs sweep of the latent values over the rounded columns, from ``previous``
        (None: the recorded values), each coordinate from its Gaussian conditional given
        the row's others under its cluster's ``(mu, Sigma)``, truncated to its cell
        (module notes, step 1); shape (n, d)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = X.copy() if previous is None else np.array(previous, dtype=np.float64)
        labels = np.ascontiguousarray(labels, dtype=np.int64)
        # the precision matrices from the Cholesky factors: Lambda = L^-T L^-1
        chol = np.ascontiguousarray(params.chol, dtype=np.float64)
        inv_chol = np.empty_like(chol)
        lower_inverses(chol, inv_chol)  # the factors of drawn covariances are regular
        prec = np.ascontiguousarray(np.swapaxes(inv_chol, 1, 2) @ inv_chol)
        mean = np.ascontiguousarray(params.mean, dtype=np.float64)
        cols = np.flatnonzero(self._widths > 0).astype(np.int64)
        half = 0.5 * self._widths[cols]
        row, c, n = 0, 0, len(X)
        while row < n:  # a buffer of uniforms at a time (each coordinate takes a few)
            u = rng.random(BUFFER_PER_DRAW * ((n - row) * len(cols) - c) + 64)
            row, c = latent_sweep(X, y, labels, mean, prec, cols, half, u, row, c)
        return y

    def params_from_latent(self, params) -> GaussianParams:
        """The same parameters (the family's form is the latent family's)."""
        return params

    latent_from_params = params_from_latent

    # ------------------------------------------------------- describing itself
    def describe_params(self, params: GaussianParams) -> dict:
        """A draw's parameters in the form of ``mean_params``: ``means`` and
        ``covariances`` of the latent values."""
        return {"means": np.asarray(params.mean, dtype=np.float64),
                "covariances": np.asarray(params.cov, dtype=np.float64)}

    def describe_fit(self, params: dict, sizes: np.ndarray, *, sampler: str) -> dict:
        """Which posterior the sampler targets, and which columns are read as rounded."""
        w = self._widths
        cols = ", ".join(f"{j}: {v:g}" for j, v in enumerate(w) if v > 0)
        return {"posterior": _SAMPLER_TEXT.get(sampler, f"sampler {sampler}"),
                "rounded_columns": f"{int((w > 0).sum())} of {len(w)} columns read as "
                                   f"values rounded to a grid (column: width) {cols}"}


def resolve_rounding(family: NormalInverseWishart, resolved: NormalInverseWishart,
                     summary) -> NormalInverseWishart:
    """``resolved`` (the Normal-Inverse-Wishart family resolved on ``summary``) as a
    :class:`RoundedGaussian` when ``family.rounding`` makes a column rounded: ``"auto"``
    reads the widths the summary found (:func:`grid_widths`), a number or one per column
    gives them; unchanged otherwise."""
    rounding = family.rounding
    if rounding is None:
        return resolved
    d = len(resolved.mean)
    if isinstance(rounding, str):
        if rounding != "auto":
            raise ValueError(f"rounding must be None, 'auto', a width or one per column, "
                             f"got {rounding!r}")
        widths = getattr(summary, "widths", None)
        widths = np.zeros(d) if widths is None else np.asarray(widths, dtype=np.float64)
    else:
        widths = check_widths(rounding, d)
    if not np.any(widths > 0):
        return resolved
    out = RoundedGaussian.__new__(RoundedGaussian)
    out.__dict__.update(resolved.__dict__)
    out._widths = widths
    out.rounding = [float(w) for w in widths]
    return out


__all__ = ["RoundedGaussian", "grid_widths", "resolve_rounding", "MAX_DECIMALS",
           "MAX_DISTINCT_SHARE"]


ROUNDED["resolve"] = resolve_rounding
