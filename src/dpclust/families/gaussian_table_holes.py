r"""A full-covariance Gaussian block with missing cells, exactly (instantiated samplers only).

:class:`~dpclust.families.gaussian_table.GaussianTable` keeps one Normal-Inverse-Wishart
Gaussian per cluster over a table's real columns and needs them complete.  With holes in
them, under missing-at-random a row's likelihood is that of its **observed coordinates**,

.. math::

    f(x_{i,o}; \mu, \Sigma) = N(x_{i,o}; \mu_o, \Sigma_{oo}),

``o`` the coordinates row ``i`` has.  When the rows of a cluster miss different coordinates
the posterior of ``(mu, Sigma)`` given them is not Normal-Inverse-Wishart, and the cluster's
marginal likelihood ``f(X_{k,obs})`` has no closed form: the collapsed samplers (collapsed
Gibbs, SAMS, the sub-cluster sampler's moves) cannot run on this model exactly.  (When every
row of a cluster misses the *same* coordinates the observed block is Normal-Inverse-Wishart
again, ``(mu_o, Sigma_oo) ~ NIW(m0_o, kappa0, nu0 - d + d_o, S0_oo)``, which the tests use to
check the sampler; in general it is not.)

With the parameters instantiated every step is exact, so this family declares
``collapsible = False`` and is fitted by the samplers that hold parameters, and by the
collapsed samplers given the missing cells (:mod:`dpclust.samplers.augmented`: each
iteration draws the cells given the clusters' parameters, moves the partition on the
completed rows with the parameters integrated out, and draws the parameters again):

* ``log_likelihood`` is the observed-coordinates density above (rows grouped by missing
  pattern: one Cholesky factor of ``Sigma_oo`` per pattern and component);
* ``update_params`` is a data-augmentation step (Tanner & Wong 1987): given the current
  ``theta_k`` draw each row's missing cells from their Gaussian conditional
  ``x_{i,m} | x_{i,o} ~ N(mu_m + S_mo S_oo^{-1}(x_{i,o} - mu_o), S_mm - S_mo S_oo^{-1} S_om)``,
  then ``theta_k`` from the Normal-Inverse-Wishart posterior of the completed rows.  Both
  draws are exact conditionals of ``p(theta_k, X_{k,mis} | X_{k,obs})``, so the step leaves
  ``p(theta_k | X_{k,obs})`` invariant (it is one Gibbs round of that joint);
* ``sample_given_one`` is an exact draw of ``theta ~ p(theta | x_{i,obs})``: the missing
  cells from the prior predictive's conditional given the observed ones (a multivariate t:
  ``nu' + d_o`` degrees of freedom, location ``m_m + P_mo P_oo^{-1}(x_o - m_o)``, scale
  ``(nu' + delta) / (nu' + d_o) (P_mm - P_mo P_oo^{-1} P_om)`` with ``P`` the prior
  predictive's scale, ``nu' = nu0 - d + 1`` and ``delta`` the Mahalanobis distance of
  ``x_o`` under ``P_oo``), then ``theta`` from the posterior of the completed row: their
  joint is ``p(x_mis | x_obs) p(theta | x_obs, x_mis)``, whose ``theta``-marginal is the
  target;
* ``log_predictive`` on empty statistics (the new-cluster term ``f(x_{i,obs})`` of Neal's
  algorithm 2) is the prior predictive t marginalised to the observed coordinates: same
  degrees of freedom ``nu0 - d + 1``, location ``m0_o``, scale ``P_oo``.

So Neal's algorithm 2 (``sampler="explicit"``, what ``"auto"`` picks) targets the exact
posterior of the Dirichlet-process mixture, and the blocked Gibbs sampler (``"fsd"``) that of
the finite mixture; ``"gibbs"``, ``"gibbs+sams"`` and ``"subcluster"`` the same posterior
through the completed rows.  The other columns of the table (yes/no, categories, counts) keep their
conjugate factors and leave their holes out as in :class:`~dpclust.families.table.TableFamily`.

Prior defaults with holes: the prior mean is each real column's observed mean; the scale is
built as for complete columns from ``C = D^{1/2} R D^{1/2}``, ``D`` the columns' observed
variances and ``R`` the correlation matrix of the complete rows (the identity when fewer than
``d + 2`` rows are complete).

References
----------
Tanner, M. A. & Wong, W. H. (1987). The calculation of posterior distributions by data
    augmentation. JASA 82(398), 528-540.
Little, R. J. A. & Rubin, D. B. (2019). Statistical Analysis with Missing Data, 3rd ed.
    (ignorability under missing-at-random; the conditional Gaussian draws, section 11.2).
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models,
    algorithm 2.
Kotz, S. & Nadarajah, S. (2004). Multivariate t Distributions and Their Applications,
    section 1.11 (the conditional of a multivariate t).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..tables import TableData
from . import _table_math as _m
from .base import take
from .gaussian import DataSummary, NormalInverseWishart
from .gaussian_table import (GaussianTable, GaussianTableParams, GaussianTableStats, _solve,
                             _split, missing_patterns, observed_log_predictive)
from .table import FULL_COVARIANCE, TableFamily, _standardise

_LOG_2PI = float(np.log(2.0 * np.pi))

#: what the run summary says of each sampler that fits the family (whether its draws
#: are exact is the sampler's own declaration, added by the summary)
_SAMPLER_TEXT = {
    "explicit": "exact MCMC (Neal's algorithm 2 with data-augmentation updates of each "
                "cluster's mean and covariance)",
    "fsd": "exact MCMC for the finite mixture (blocked Gibbs with data augmentation)",
    "gibbs": "exact MCMC (collapsed Gibbs given the missing cells, drawn each iteration)",
    "gibbs+sams": "exact MCMC (Neal's algorithm 2 sweeps and merge-split moves given the "
                  "missing cells, drawn each iteration)",
    "subcluster": "exact MCMC (the sub-cluster sampler's split-merge moves given the "
                  "missing cells, drawn each iteration)",
}


def gaussian_conditional(mean, cov, x_obs, o, m):
    """``(location (r, d_m), Cholesky factor (d_m, d_m))`` of ``x_m | x_o`` for rows
    ``x_obs`` (r, d_o) of ``N(mean, cov)``."""
    S_oo = cov[np.ix_(o, o)]
    S_mo = cov[np.ix_(m, o)]
    L = np.linalg.cholesky(S_oo)
    A = _solve(L, S_mo.T)                      # L^{-1} S_om, (d_o, d_m)
    y = _solve(L, (x_obs - mean[o]).T)         # L^{-1} (x_o - mu_o), (d_o, r)
    loc = mean[m][None, :] + (A.T @ y).T
    cond = cov[np.ix_(m, m)] - A.T @ A
    return loc, np.linalg.cholesky(0.5 * (cond + cond.T)), y


def niw_summary_with_holes(summary) -> DataSummary:
    """The Gaussian family's :class:`~dpclust.families.gaussian.DataSummary` of real columns
    with holes, for its data-driven defaults: the columns' observed means, and a scatter
    ``(n - 1) D^{1/2} R D^{1/2}`` with ``D`` the columns' observed variances and ``R`` the
    correlations of the complete rows (``summary.complete_real``; the identity when fewer
    than ``d + 2`` rows are complete or their correlation is singular)."""
    gn = np.asarray(summary.gn, dtype=np.float64)
    d = len(gn)
    var = np.divide(summary.gm2, gn - 1.0, out=np.ones(d), where=gn > 1.5)
    var = np.where(np.isfinite(var) & (var > 0), var, 1.0)
    R = np.eye(d)
    comp = getattr(summary, "complete_real", None)
    if comp is not None and comp.n >= d + 2:
        sd = np.sqrt(np.diagonal(comp.scatter))
        if np.all(sd > 0):
            R = comp.scatter / np.outer(sd, sd)
            try:
                np.linalg.cholesky(R)
            except np.linalg.LinAlgError:
                R = np.eye(d)
    n = int(summary.n)
    sd = np.sqrt(var)
    return DataSummary(n, np.asarray(summary.gmean, dtype=np.float64).copy(),
                       max(n - 1, 1) * R * np.outer(sd, sd))


class GaussianTableHoles(GaussianTable):
    """:class:`~dpclust.families.gaussian_table.GaussianTable` with holes in the real
    columns: the observed-coordinates likelihood, fitted by the samplers that instantiate
    the clusters' parameters (see the module's docstring for the derivation).

    Made by ``TableFamily(covariance="full").resolve(X)`` when a real column has a hole.
    """

    collapsible = False
    #: the samplers that fit it, and the one ``sampler="auto"`` picks
    samplers = ("explicit", "fsd", "gibbs", "gibbs+sams", "subcluster")
    default_sampler = "explicit"
    #: augmentation rounds per ``update_params`` (each an exact Gibbs round)
    n_rounds = 1

    def _check(self, X: TableData) -> TableData:
        if np.any(X.weight != 1.0):
            raise ValueError("row weights as a power on the likelihood need "
                             "covariance='diagonal' (the full covariance counts whole rows); "
                             "whole-number weights repeat rows with any family")
        return X

    def _no_collapsed(self, what: str):
        return ValueError(
            f"{what}: a full-covariance Gaussian has no closed-form marginal of rows with "
            "holes in the real columns, so it is fitted with sampler='explicit' (the "
            "default), 'fsd', or a collapsed sampler given the missing cells ('gibbs', "
            "'gibbs+sams', 'subcluster'); covariance='diagonal' takes every sampler")

    # ------------------------------------------------------------ statistics
    def stats(self, X, labels=None, n_clusters=None) -> GaussianTableStats:
        """Statistics of complete rows (those the predictive conditions on); rows with
        holes in the real columns have none in closed form."""
        if np.isnan(X.real).any():
            raise self._no_collapsed("statistics of rows with holes")
        return GaussianTable.stats(self, X, labels, n_clusters)

    def kernel(self, X):
        raise self._no_collapsed("collapsed samplers")

    def pass_kernel(self, X, summary=None):
        return None

    def log_predictive(self, X, stats) -> np.ndarray:
        """``log f(x_{i,obs} | X_k)`` for statistics of complete rows (empty: the prior
        predictive): :func:`observed_log_predictive`."""
        return observed_log_predictive(self, self._check(X), stats)

    def log_prior_predictive(self, X) -> np.ndarray:
        """``log f(x_{i,obs})`` under the prior, shape (n,): the new-cluster term."""
        return self.log_predictive(X, self.empty_stats(1))[:, 0]

    def _rest_log_likelihood(self, X, t) -> np.ndarray | float:
        """The other columns' ``log f(x_i; theta_k)`` (0 for a table of real columns)."""
        if not (X.code.shape[1] or X.count.shape[1]):
            return 0.0
        return _m.log_likelihood(self._rest(X), t, self.hyper)

    def log_likelihood(self, X, params) -> np.ndarray:
        """``log N(x_{i,o}; mu_{k,o}, Sigma_{k,oo})`` plus the other columns', shape (n, K):
        one Cholesky factor of ``Sigma_oo`` per missing pattern and component."""
        X = self._check(X)
        g, t = _split(params)
        real = np.asarray(X.real, dtype=np.float64)
        n, d = real.shape
        K = len(g.mean)
        out = np.zeros((n, K))
        for obs, rows in missing_patterns(real):
            o = np.flatnonzero(obs)
            if not len(o):
                continue
            L = g.chol if len(o) == d else np.linalg.cholesky(g.cov[:, o[:, None], o[None, :]])
            diff = real[rows][:, o][None, :, :] - g.mean[:, None, o]
            y = _solve(L, np.swapaxes(diff, 1, 2))
            maha = np.einsum("kir,kir->kr", y, y)
            logdet = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
            out[rows] = (-0.5 * (len(o) * _LOG_2PI + logdet[:, None] + maha)).T
        return out + self._rest_log_likelihood(X, t)

    # ------------------------------------------ instantiated samplers' hooks
    def impute(self, X, labels, params, rng) -> np.ndarray:
        """The real columns with each missing cell drawn from its conditional given the
        row's observed cells under its cluster's ``(mu, Sigma)`` (``labels`` index
        ``params``), shape (n, d): the augmentation half of :meth:`update_params`, and,
        over posterior draws, imputed values with their posterior spread."""
        g, _ = _split(params)
        real = np.array(X.real, dtype=np.float64)
        labels = np.asarray(labels, dtype=np.int64)
        d = real.shape[1]
        for obs, rows in missing_patterns(real):
            if obs.all():
                continue
            o, m = np.flatnonzero(obs), np.flatnonzero(~obs)
            for k in np.unique(labels[rows]):
                mine = rows[labels[rows] == k]
                if len(o):
                    loc, C, _ = gaussian_conditional(g.mean[k], g.cov[k], real[mine][:, o], o, m)
                else:
                    loc, C = np.broadcast_to(g.mean[k], (len(mine), d)), g.chol[k]
                z = rng.standard_normal((len(mine), len(m)))
                real[np.ix_(mine, m)] = loc + z @ C.T
        return real

    def _completed_posterior(self, X, real, labels, K, rng) -> GaussianTableParams:
        """``theta_k`` from the conjugate posterior of the rows with real block ``real``."""
        g = self.niw_.sample_posterior(self.niw_.stats(real, labels, K), rng)
        t = _m.sample_posterior(_m.table_stats(self._rest(X), labels, K, self.hyper.offsets),
                                self.hyper, rng)
        return GaussianTableParams(*g, *t)

    def update_params(self, X, labels, params, rng, n_clusters=None) -> GaussianTableParams:
        """:attr:`n_rounds` data-augmentation rounds per cluster: missing cells from their
        Gaussian conditional given ``theta_k``, then ``theta_k`` from the posterior of the
        completed rows (a kernel leaving ``p(theta_k | X_{k,obs})`` invariant).  Clusters
        without a current value (``params`` None or shorter than ``n_clusters``) start
        from their rows with holes at the cluster's observed column means; clusters
        without rows get a prior draw."""
        X = self._check(X)
        labels = np.asarray(labels, dtype=np.int64)
        K = int(labels.max()) + 1 if n_clusters is None else int(n_clusters)
        real = np.asarray(X.real, dtype=np.float64)
        if not np.isnan(real).any():
            return self._completed_posterior(X, real, labels, K, rng)
        have = 0 if params is None else len(params[0])
        if have < K:
            theta = self._completed_posterior(X, self._mean_filled(real, labels, K), labels,
                                              K, rng)
            if have:
                params = GaussianTableParams(*(np.concatenate([a[:have], b[have:]])
                                               for a, b in zip(params, theta)))
            else:
                params = theta
        elif have > K:
            params = take(params, np.arange(K))
        for _ in range(self.n_rounds):
            params = self._completed_posterior(X, self.impute(X, labels, params, rng),
                                               labels, K, rng)
        return params

    def _mean_filled(self, real, labels, K) -> np.ndarray:
        """The real block with each hole at its cluster's observed column mean (the prior
        mean where the cluster has none)."""
        seen = ~np.isnan(real)
        sums = np.zeros((K, real.shape[1]))
        cnt = np.zeros((K, real.shape[1]))
        np.add.at(sums, labels, np.where(seen, real, 0.0))
        np.add.at(cnt, labels, seen.astype(np.float64))
        means = np.where(cnt > 0, sums / np.maximum(cnt, 1.0), self.niw_.mean[None, :])
        return np.where(seen, real, means[labels])

    def sample_given_one(self, X, i: int, rng) -> GaussianTableParams:
        """An exact draw ``theta ~ p(theta | x_{i,obs})``: the missing cells from the
        prior predictive's Student-t conditional given the observed ones, then ``theta``
        from the posterior of the completed row (see the module's docstring)."""
        i = int(np.asarray(i).ravel()[0])
        row = self.subset(X, [i])
        x = np.array(row.real[0], dtype=np.float64)
        obs = ~np.isnan(x)
        if not obs.all():
            d = len(x)
            m0, kappa0, nu0, S0 = self.niw_._hyper()
            nu = nu0 - d + 1.0
            P = S0 * (kappa0 + 1.0) / (kappa0 * nu)
            o, m = np.flatnonzero(obs), np.flatnonzero(~obs)
            if len(o):
                loc, C, y = gaussian_conditional(m0, P, x[o][None, :], o, m)
                delta = float(y[:, 0] @ y[:, 0])
                df = nu + len(o)
                C = C * math.sqrt((nu + delta) / df)
                loc = loc[0]
            else:
                loc, C, df = m0, np.linalg.cholesky(P), nu
            z = C @ rng.standard_normal(len(m))
            x[m] = loc + z / math.sqrt(rng.chisquare(df) / df)
        return self._completed_posterior(row, x[None, :], np.zeros(1, dtype=np.int64), 1, rng)

    # ----------------------------------- the collapsed samplers, given the cells
    def latent_family(self) -> GaussianTable:
        """The family of the rows with their missing cells filled in: the complete
        full-covariance table (:mod:`dpclust.samplers.augmented`), with this family's
        resolved hyperparameters."""
        out = GaussianTable.__new__(GaussianTable)
        out.__dict__.update(self.__dict__)
        return out

    def initial_latent_params(self, X, labels, n_clusters: int, rng) -> GaussianTableParams:
        """A start: :meth:`update_params` from the holes at their clusters' observed
        means."""
        return self.update_params(X, labels, None, rng, n_clusters)

    def draw_latents(self, X, labels, params, rng) -> TableData:
        """The table with every missing real cell drawn from its Gaussian conditional
        given the row's observed cells and its cluster's ``(mu, Sigma)`` (:meth:`impute`):
        the exact conditional of the latents."""
        return replace(self._check(X), real=self.impute(X, labels, params, rng))

    def params_from_latent(self, params) -> GaussianTableParams:
        """The same parameters (the family's form is the complete family's)."""
        return params

    latent_from_params = params_from_latent

    # ------------------------------------------------------- describing itself
    def init_features_like(self, X: TableData, reference: TableData) -> np.ndarray:
        """The real columns standardised by ``reference``'s (holes at the column mean)
        beside the other columns' features."""
        rest = self._rest(X)
        parts = [_standardise(X.real, reference.real)]
        if rest.code.shape[1] or rest.count.shape[1]:
            parts.append(super(GaussianTable, self).init_features_like(
                rest, self._rest(reference)))
        return np.hstack(parts)

    def describe_params(self, params) -> dict:
        """A draw's parameters in the form of ``mean_params``: ``means``, ``covariances``,
        ``variances`` of the real columns, ``probabilities`` of the levels, ``rates`` of
        the counts."""
        g, t = _split(params)
        cov = np.asarray(g.cov, dtype=np.float64)
        return {"means": np.asarray(g.mean, dtype=np.float64), "covariances": cov,
                "variances": np.diagonal(cov, axis1=1, axis2=2).copy(),
                "probabilities": np.exp(np.asarray(t.log_prob, dtype=np.float64)),
                "rates": np.exp(np.asarray(t.log_rate, dtype=np.float64))}

    def describe_fit(self, params: dict, sizes: np.ndarray, *, sampler: str) -> dict:
        """Which posterior the sampler targets, and how many real cells were missing."""
        return {"posterior": _SAMPLER_TEXT.get(sampler, f"sampler {sampler}"),
                "missing_real_cells": "left out of the likelihood (observed-coordinates "
                                      "marginal); imputed within the chain"}


__all__ = ["GaussianTableHoles", "missing_patterns", "gaussian_conditional",
           "niw_summary_with_holes"]


def resolve_full_covariance(table: TableFamily, summary) -> GaussianTable:
    """The full-covariance family of a table (:meth:`TableFamily.full_covariance`):
    :class:`GaussianTable` for real columns without holes, :class:`GaussianTableHoles`
    with them, their other columns resolved as ``table`` resolves them and the Gaussian's
    hyperparameters from the real columns' summary (observed means and variances where
    cells are missing, :func:`niw_summary_with_holes`)."""
    holes = summary.real is None
    out = (GaussianTableHoles if holes else GaussianTable)(**table.get_params())
    base = table._resolve_columns(summary._replace(
        schema=summary.schema, gn=summary.gn[:0], gmean=summary.gmean[:0],
        gm2=summary.gm2[:0]), n_real=0)
    out.schema_, out.hyper_ = base.schema_, base.hyper_
    out._base_hyper, out._learned = base._base_hyper, base._learned
    out.niw_ = NormalInverseWishart(kappa=table.kappa, scale=table.scale).resolve_summary(
        niw_summary_with_holes(summary) if holes else summary.real)
    return out


FULL_COVARIANCE["resolve"] = resolve_full_covariance
