"""The Gamma–Poisson family with exposures (:mod:`dpclust.families.exposure`), the
conjugate form of Plackett–Luce given its latents: the marginal against numerical
integration over the rates, and the compiled kernels against the NumPy face."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpclust.families.exposure import ExposureData, GammaExposure


def _data(rng, N=30, n=4):
    counts = (rng.random((N, n)) < 0.4).astype(float)
    counts[0, 0] = 3.0  # a count above 1
    return ExposureData(counts, rng.exponential(0.7, size=(N, n)))


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (0.4, 2.5)])
def test_marginal_matches_integration_over_the_rates(a, b):
    rng = np.random.default_rng(0)
    X = _data(rng, 6, 2)
    fam = GammaExposure(a, b).resolve(X)
    got = fam.log_marginal(fam.stats(X))[0]
    want = 0.0
    for j in range(2):
        C, E = X.counts[:, j].sum(), X.exposure[:, j].sum()
        def f(lam, C=C, E=E):
            return lam ** C * math.exp(-lam * E) * stats.gamma.pdf(lam, a, scale=1 / b)

        want += math.log(integrate.quad(f, 0, np.inf, limit=200)[0])
    assert got == pytest.approx(want, rel=1e-7)


def test_kernels_match_the_numpy_face():
    rng = np.random.default_rng(1)
    X = _data(rng)
    fam = GammaExposure(0.7, 1.3).resolve(X)
    labels = rng.integers(0, 3, size=len(X.counts))
    kern = fam.kernel(X)
    kstats = kern.alloc(4)
    for k in range(4):
        kern.reset(kstats, k, kern.hyper)
    for i, k in enumerate(labels):
        kern.add(kern.data, i, kstats, k, kern.hyper)
    st = fam.stats(X, labels, 3)
    for k in range(3):
        assert kern.log_marginal(kstats, k, kern.hyper) == pytest.approx(
            fam.log_marginal(st)[k], rel=1e-10)
    pred = fam.log_predictive(X, st)
    for i in range(5):
        for k in range(4):
            ref = (pred[i, k] if k < 3 else
                   fam.log_marginal(fam.stats(fam.subset(X, [i])))[0])
            assert kern.log_predictive(kern.data, i, kstats, k, kern.hyper) == pytest.approx(
                ref, rel=1e-9, abs=1e-9)
    gain = kern.log_join_gain(kstats, 0, 1, kern.hyper)
    union = fam.log_marginal(fam.stats(X, np.where(labels == 1, 0, labels), 3))[0]
    assert gain == pytest.approx(union - fam.log_marginal(st)[:2].sum(), rel=1e-10)
    kern.remove(kern.data, 0, kstats, labels[0], kern.hyper)
    less = fam.stats(fam.subset(X, np.arange(1, len(labels))), labels[1:], 3)
    assert kern.log_marginal(kstats, labels[0], kern.hyper) == pytest.approx(
        fam.log_marginal(less)[labels[0]], rel=1e-10)


def test_bad_rows_are_refused_with_a_message():
    fam = GammaExposure()
    with pytest.raises(ValueError, match="negative"):
        fam.validate(ExposureData(np.ones((2, 2)), -np.ones((2, 2))))
    with pytest.raises(ValueError, match="same"):
        fam.validate(ExposureData(np.ones((2, 2)), np.ones((2, 3))))
    with pytest.raises(ValueError, match="shape must be a positive"):
        GammaExposure(shape=0.0).resolve(ExposureData(np.ones((2, 2)), np.ones((2, 2))))
