"""Simulation-based calibration of the table families with missing cells (issue 34): holes
punched completely at random (:class:`dpclust.calibration.MissingCompletelyAtRandom`) are
left out of the likelihood exactly, so the ranks stay uniform; filling them with the column's
mean instead (treating imputed cells as observed) fails the same test."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from dpclust.calibration import (MissingCompletelyAtRandom, prior_draw,
                                 simulation_based_calibration)
from dpclust.families import TableFamily
from dpclust.samplers import CollapsedGibbs, ExplicitGibbs
from dpclust.tables import TableData

#: the SBC settings of the Plackett–Luce and Gaussian tests: 200 data sets of 30 rows,
#: 19 draws 3 steps apart after 60, five bins
SBC = dict(n_samples=30, n_replicates=200, n_draws=19, thin=3, burn_in=60, n_bins=5)


def pilot() -> pd.DataFrame:
    """A fixed table the family is resolved on once: two real columns, a yes/no, a
    three-level category and a count column.  The hyperparameters come from it, never from
    the simulated data (SBC needs the prior that generated them)."""
    rng = np.random.default_rng(2024)
    n = 12
    return pd.DataFrame({"x1": rng.normal(0.0, 1.0, n), "x2": rng.normal(0.0, 1.0, n),
                         "yes": rng.random(n) < 0.5,
                         "cat": pd.Categorical(rng.choice(list("abc"), n)),
                         "n": rng.poisson(3.0, n)})


def table_family(covariance="diagonal") -> TableFamily:
    # kappa = 1: a cluster's mean one cluster width from the prior mean, so that clusters
    # overlap and the partition is uncertain (the default 0.01 separates them)
    return TableFamily(kinds={"n": "poisson"}, covariance=covariance,
                       kappa=1.0).resolve(pilot())


@dataclass(frozen=True)
class MeanImputed:
    """The wrong model of the power check: holes punched as in the calibration, then filled
    with the column's observed mean (real), rounded mean (count) or most frequent level
    (coded), and the filled cells fitted as if observed."""

    share: float = 0.2

    def __call__(self, X, rng):
        X = MissingCompletelyAtRandom(self.share)(X, rng)
        real = np.where(np.isnan(X.real), np.nanmean(X.real, axis=0), X.real)
        count = np.where(np.isnan(X.count), np.round(np.nanmean(X.count, axis=0)), X.count)
        code = X.code.copy()
        for j in range(code.shape[1]):
            seen = code[code[:, j] >= 0, j]
            code[code[:, j] < 0, j] = np.bincount(seen).argmax()
        return TableData(real, code, count, X.weight, X.schema)


def test_the_family_is_the_product_family_with_the_pilots_columns():
    fam = table_family()
    assert type(fam) is TableFamily
    assert [(c.name, c.kind) for c in fam.schema_.columns] == [
        ("x1", "gaussian"), ("x2", "gaussian"), ("yes", "bernoulli"),
        ("cat", "categorical"), ("n", "poisson")]
    assert type(table_family("full")).__name__ == "GaussianTable"


def test_holes_are_punched_at_random_and_never_empty_a_row():
    fam = table_family()
    rng = np.random.default_rng(0)
    _, _, _, X = prior_draw(fam, 4000, 1.0, rng)
    H = MissingCompletelyAtRandom(0.3)(X, rng)
    miss = H.missing()
    assert not miss.all(axis=1).any()
    # P(missing) = 0.3 less the rows refilled: 0.3 - 0.3 ** 5 / 5 per cell
    assert miss.mean() == pytest.approx(0.3 - 0.3 ** 5 / 5, abs=0.01)
    assert np.all(np.abs(miss.mean(axis=0) - miss.mean()) < 0.03)  # every column alike
    # the observed cells keep their values
    np.testing.assert_array_equal(H.real[~np.isnan(H.real)], X.real[~np.isnan(H.real)])
    np.testing.assert_array_equal(H.code[H.code >= 0], X.code[H.code >= 0])
    np.testing.assert_array_equal(H.count[~np.isnan(H.count)], X.count[~np.isnan(H.count)])
    assert H.schema is X.schema and np.all(H.weight == 1.0)
    # only the blocks asked for
    C = MissingCompletelyAtRandom(0.9, blocks=("code", "count"))(X, rng)
    assert not np.isnan(C.real).any() and (C.code < 0).any() and np.isnan(C.count).any()
    # a float array: NaN holes
    A = MissingCompletelyAtRandom(0.5)(np.ones((50, 3)), rng)
    assert np.isnan(A).any() and not np.isnan(A).all(axis=1).any()
    with pytest.raises(ValueError, match="share"):
        MissingCompletelyAtRandom(1.0)
    with pytest.raises(ValueError, match="blocks"):
        MissingCompletelyAtRandom(0.2, blocks=("reals",))


def test_observe_is_applied_to_each_data_set_and_reproducible():
    kw = dict(n_samples=12, n_replicates=6, n_draws=9, thin=2, burn_in=10, n_bins=5,
              random_state=3, observe=MissingCompletelyAtRandom(0.2))
    a = simulation_based_calibration(table_family(), CollapsedGibbs(), **kw)
    b = simulation_based_calibration(table_family(), CollapsedGibbs(), **kw)
    c = simulation_based_calibration(table_family(), CollapsedGibbs(),
                                     **{**kw, "observe": None})
    for name in a.ranks:
        np.testing.assert_array_equal(a.ranks[name], b.ranks[name])
    assert any(not np.array_equal(a.ranks[k], c.ranks[k]) for k in a.ranks)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", [CollapsedGibbs(), ExplicitGibbs()],
                         ids=["gibbs", "explicit"])
def test_the_product_family_with_missing_cells_is_calibrated(sampler):
    """200 data sets of 30 rows from the product family's prior, a fifth of the cells
    missing completely at random: ranks uniform (p > 0.001) for every statistic."""
    r = simulation_based_calibration(table_family(), sampler, **SBC, random_state=34,
                                     n_jobs=2, observe=MissingCompletelyAtRandom(0.2))
    assert r.calibrated(0.001), r.p_values


@pytest.mark.slow
def test_the_full_covariance_table_with_missing_levels_and_counts_is_calibrated():
    """The same with one full-covariance Gaussian over the real columns, which must be
    complete: holes in the yes/no, category and count columns only."""
    r = simulation_based_calibration(table_family("full"), CollapsedGibbs(), **SBC,
                                     random_state=34, n_jobs=2,
                                     observe=MissingCompletelyAtRandom(0.2, ("code", "count")))
    assert r.calibrated(0.001), r.p_values


@pytest.mark.slow
@pytest.mark.parametrize("name", ["explicit", "gibbs+sams"])
def test_the_full_covariance_table_with_holes_in_its_real_columns_is_calibrated(name):
    """Holes in every kind of column, the real ones in one full-covariance Gaussian: the
    family without a collapsed form, fitted by Neal's algorithm 2 and by Gibbs+SAMS given
    the missing cells (:mod:`dpclust.samplers.augmented`)."""
    from dpclust.samplers import get_sampler

    holes = pilot()
    holes.loc[0, "x1"] = np.nan  # resolves to the family of real columns with holes
    fam = TableFamily(kinds={"n": "poisson"}, covariance="full", kappa=1.0).resolve(holes)
    assert not fam.collapsible
    r = simulation_based_calibration(fam, get_sampler(name, family=fam), **SBC,
                                     random_state=34, n_jobs=2,
                                     observe=MissingCompletelyAtRandom(0.2))
    assert r.calibrated(0.001), r.p_values


@pytest.mark.slow
def test_mean_imputation_fails_calibration():
    """The power of the test: the same data sets with the holes filled by the column's
    mean and fitted as observed.  The filled cells pull rows together, so the posterior has
    too few clusters and the truth's number of clusters ranks high."""
    r = simulation_based_calibration(table_family(), CollapsedGibbs(), **SBC, random_state=34,
                                     n_jobs=2, observe=MeanImputed(0.2))
    assert min(r.p_values.values()) < 1e-6, r.p_values
    assert not r.calibrated(0.001)
    assert r.histogram("n_clusters")[-1] > 2 * r.histogram("n_clusters")[0]
