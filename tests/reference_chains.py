"""Reference chains: every sampler and family at a fixed seed, run through the public API.

``python tests/reference_chains.py`` writes ``tests/data/reference_chains.npz`` from the
current code; ``tests/test_reference_chains.py`` reruns each case and asserts that the chain
is the same draw for draw.  The file was written before the layered redesign (issue 31) so
that moving code between modules, or putting the Dirichlet process behind the partition-prior
contract, provably leaves every DP chain as it was.  Regenerate it only for a change that
is meant to alter chains, and say so in the commit.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

PATH = Path(__file__).parent / "data" / "reference_chains.npz"

#: what is compared: the per-iteration trace and the kept partitions
TRACE_FIELDS = ("log_joint", "log_likelihood", "n_clusters", "alpha", "n_accepted_splits",
                "n_accepted_merges", "labels")


def gaussian_data():
    rng = np.random.default_rng(12)
    means = np.array([[0.0, 0.0], [2.2, 0.4], [0.8, 2.4]])
    z = rng.integers(0, 3, size=150)
    return means[z] + rng.normal(size=(150, 2)) * 0.8


def larger_gaussian_data(n=3000, d=3):
    """Overlapping clusters in more points and dimensions: the sub-cluster sampler's
    sequential, multi-way and (from 8 features) blocked-scoring paths."""
    rng = np.random.default_rng(15)
    means = rng.normal(size=(5, d)) * 2.5
    z = rng.integers(0, 5, size=n)
    return means[z] + rng.normal(size=(n, d))


def document_data():
    rng = np.random.default_rng(13)
    topics = rng.dirichlet(np.full(12, 0.3), size=3)
    z = rng.integers(0, 3, size=90)
    return np.stack([rng.multinomial(15, topics[k]) for k in z]).astype(float)


def ranking_data():
    rng = np.random.default_rng(14)
    centres = [np.arange(6), np.array([5, 4, 3, 0, 1, 2])]
    rows = []
    for i in range(70):
        c = centres[i % 2]
        perm = c.copy()
        for _ in range(2):  # a few adjacent swaps away from the centre
            j = rng.integers(0, 5)
            perm[j], perm[j + 1] = perm[j + 1], perm[j]
        rows.append(perm[: rng.integers(2, 7)])
    return rows


def _dp(**kw):
    from dpclust import DPMixture

    base = dict(n_iter=14, burn_in=0, store_labels=True, random_state=3, progress=False,
                n_chains=1)
    base.update(kw)
    return DPMixture(**base)


def _cases():
    from dpclust import DDCRPMixture, GammaPrior
    from dpclust.samplers import FiniteSymmetricDirichlet, GibbsSAMS, SubclusterSplitMerge

    from dpclust.families import DirichletMultinomial

    g, d, r = gaussian_data(), sp.csr_matrix(document_data()), ranking_data()
    cases = {}
    # the documents' family as it was when the chains were stored (beta fixed at 1: its
    # default is learned since)
    docs = DirichletMultinomial(concentration=1.0)
    for fam, X in (("gaussian", g), (docs, d)):
        name = fam if isinstance(fam, str) else "multinomial"
        cases[f"{name}-gibbs"] = (lambda f=fam: _dp(family=f, sampler="gibbs"), X)
        cases[f"{name}-gibbs-gamma"] = (
            lambda f=fam: _dp(family=f, sampler="gibbs", alpha=GammaPrior(2.0, 1.0)), X)
        cases[f"{name}-explicit"] = (lambda f=fam: _dp(family=f, sampler="explicit"), X)
        cases[f"{name}-fsd"] = (
            lambda f=fam: _dp(family=f, sampler=FiniteSymmetricDirichlet(n_components=8)), X)
        cases[f"{name}-sams"] = (
            lambda f=fam: _dp(family=f, sampler=GibbsSAMS(n_proposals=3), alpha=0.7), X)
        cases[f"{name}-subcluster"] = (lambda f=fam: _dp(family=f, sampler="subcluster"), X)
        cases[f"{name}-subcluster-instantiated"] = (
            lambda f=fam: _dp(family=f, sampler=SubclusterSplitMerge(data_pass="instantiated"),
                              alpha=GammaPrior(1.0, 1.0)), X)
        cases[f"{name}-subcluster-approx"] = (
            lambda f=fam: _dp(family=f, sampler="subcluster-approx"), X)
        # the partitioned moves as they were written (EM launches); the default's sequential
        # moves on partitions are the "-partitions-sequential" cases
        cases[f"{name}-subcluster-partitions"] = (
            lambda f=fam: _dp(family=f, sampler=SubclusterSplitMerge(sequential=False),
                              partitions=2, init="random"), X)
        cases[f"{name}-subcluster-partitions-sequential"] = (
            lambda f=fam: _dp(family=f, sampler="subcluster", partitions=3), X)
    cases["gaussian-gibbs-2chains"] = (lambda: _dp(sampler="gibbs", n_chains=2, n_jobs=1), g)
    cases["gaussian-subcluster-supercluster"] = (
        lambda: _dp(sampler=SubclusterSplitMerge(super_clusters=True, data_pass="instantiated")),
        g)
    big, wide = larger_gaussian_data(), larger_gaussian_data(1500, 9)
    cases["gaussian-large-subcluster"] = (lambda: _dp(sampler="subcluster", n_iter=6), big)
    cases["gaussian-large-subcluster-instantiated"] = (
        lambda: _dp(sampler=SubclusterSplitMerge(data_pass="instantiated"), n_iter=6), big)
    cases["gaussian-wide-subcluster-instantiated"] = (
        lambda: _dp(sampler=SubclusterSplitMerge(data_pass="instantiated"), n_iter=6), wide)
    cases["mallows-slice-gibbs"] = (lambda: _dp(family="mallows", sampler="slice-gibbs"), r)
    cases["mallows-beta-gibbs"] = (lambda: _dp(family="mallows", sampler="beta-gibbs"), r)
    t = np.arange(150.0)
    cases["gaussian-ddcrp"] = (
        lambda: DDCRPMixture(family="gaussian", decay="window:20", positions=t, n_iter=14,
                             burn_in=0, store_labels=True, random_state=3, n_chains=1), g)
    return cases


def run_case(name):
    """The fitted estimator's trace for case ``name``: a dict of arrays."""
    make, X = _cases()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(X)
    out = {}
    for field in TRACE_FIELDS:
        value = getattr(model.trace_, field, None)
        if value is not None:  # one chain's trace is stored without its chain axis
            value = np.asarray(value)
            out[field] = value[0] if value.shape[0] == 1 else value
    out["labels_"] = np.asarray(model.labels_)
    return out


def case_names():
    return sorted(_cases())


def write(path=PATH):
    arrays = {}
    for name in case_names():
        for key, value in run_case(name).items():
            arrays[f"{name}/{key}"] = value
        print(name, file=sys.stderr)
    np.savez_compressed(path, **arrays)


if __name__ == "__main__":
    write()
