"""Simulation-based calibration of values rounded to a grid: data drawn from the Gaussian
mixture's prior and rounded are fitted exactly by the rounded-data family
(:mod:`dpclust.families.gaussian_rounded`), so the ranks stay uniform; fitting the same
rounded values as exact values fails the same test."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dpclust.calibration import simulation_based_calibration
from dpclust.families import NormalInverseWishart
from dpclust.families.gaussian_rounded import RoundedGaussian
from dpclust.samplers import get_sampler

#: the SBC settings of the other families' tests: 200 data sets of 30 rows, 19 draws 3
#: steps apart after 60, five bins
SBC = dict(n_samples=30, n_replicates=200, n_draws=19, thin=3, burn_in=60, n_bins=5)
#: the first column recorded to whole numbers, about two cluster widths a cell
WIDTHS = (1.0, 0.0)


def pilot() -> np.ndarray:
    """A fixed table the families are resolved on once (SBC needs the prior that generated
    the data, never one resolved on them): two columns of sd 1."""
    return np.random.default_rng(2024).normal(size=(40, 2))


def family(rounding=WIDTHS):
    # kappa = 1: clusters overlap, so that the partition is uncertain
    return NormalInverseWishart(kappa=1.0, rounding=rounding).resolve(pilot())


@dataclass(frozen=True)
class Rounded:
    """What the table records of the latent values: each column rounded to its grid."""

    widths: tuple = WIDTHS

    def __call__(self, X, rng):
        w = np.asarray(self.widths)
        return np.where(w > 0, np.round(X / np.where(w > 0, w, 1.0)) * w, X)


def test_the_rounded_family_is_resolved_with_the_widths_given():
    fam = family()
    assert isinstance(fam, RoundedGaussian)
    np.testing.assert_array_equal(fam.widths_, WIDTHS)
    # a cell about two cluster widths wide: the prior's mean cluster sd in column 0
    sd = np.sqrt(fam.scale[0, 0] / max(fam.dof - 3.0, 1.0))
    assert 0.2 < sd < 0.6


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gibbs+sams", "subcluster"])
def test_rounded_values_are_calibrated(name):
    """200 data sets of 30 rows from the Gaussian mixture's prior, column 0 rounded to whole
    numbers, fitted by the rounded-data family: ranks uniform (p > 0.001)."""
    fam = family()
    r = simulation_based_calibration(fam, get_sampler(name, family=fam), **SBC,
                                     random_state=52, n_jobs=2, observe=Rounded())
    assert r.calibrated(0.001), r.p_values


@pytest.mark.slow
def test_rounded_values_read_as_exact_fail_calibration():
    """The power of the test: the same rounded data sets fitted as exact values.  The ties
    pull rows together under clusters that shrink onto them, so the posterior's partitions
    differ from the truth's in law."""
    plain = family(rounding=None)
    assert type(plain) is NormalInverseWishart
    r = simulation_based_calibration(plain, get_sampler("gibbs+sams", family=plain), **SBC,
                                     random_state=52, n_jobs=2, observe=Rounded())
    assert not r.calibrated(0.001), r.p_values
