"""The sub-cluster sampler's sequential and multi-way moves on data in partitions
(:mod:`dpclust.samplers._partitioned_moves`): exact posteriors with the partition layout
in-process (the chain a Dask cluster runs, as tests/test_distributed.py checks), and the
moves' behaviour on clustered data."""

import numpy as np
import pytest
from test_samplers_exact import FAMILIES, X_DOCS, X_GAUSS

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture
from dpclust.exact import exact_posterior, partition_frequencies, total_variation
from split_chains import run_chain
from dpclust.metrics import nmi
from dpclust.samplers import MixtureModel, SubclusterSplitMerge
from dpclust.samplers._partitioned_moves import (combine_first, combine_members, first_rows,
                                                 sample_members)

#: the sequential pairwise moves alone (no data pass, no pinches)
SEQUENTIAL_ALONE = SubclusterSplitMerge(restricted_gibbs=False, pinch=0.0, sequential=True,
                                        multiway=0)
#: the multi-way moves with the random pair move (irreducible), as in test_subcluster.py
MULTIWAY_ALONE = SubclusterSplitMerge(split_merge=False, random_split_merge=True,
                                      restricted_gibbs=False, sequential=True)


def tv_partitioned(sampler, family_name, rows, n_steps, seed):
    """Total variation between the chain on 5 points split into partitions ``rows`` and
    the enumerated posterior (alpha = 1)."""
    make_family, prep = FAMILIES[family_name]
    raw = (X_DOCS if family_name == "multinomial" else X_GAUSS)[:5]
    X = prep(raw)
    fam = make_family(raw)
    parts, exact = exact_posterior(fam, X, 1.0)
    model = MixtureModel(fam, X, None, partition_rows=tuple(rows))
    draws = run_chain(sampler, model, np.random.default_rng(seed), n_steps, burn_in=200,
                      init_kwargs={"alpha": 1.0, "n_clusters": 1})
    assert exact.max() < 0.6
    return total_variation(partition_frequencies(draws, parts), exact)


# ------------------------------------------------------------- exact posterior
# slow (20 s): the default run keeps the default sampler's test on partitions below, which
# makes these moves
@pytest.mark.slow
def test_sequential_moves_on_partitions_match_exact_posterior():
    # measured TV 0.041 at 6,000 steps and 0.021 at 40,000 (partitions 2 + 3)
    tv = tv_partitioned(SEQUENTIAL_ALONE, "gaussian", (2, 3), 6_000, seed=13)
    assert tv < 0.07, tv


@pytest.mark.slow
@pytest.mark.parametrize("family,rows", [("gaussian", (1, 2, 2)), ("multinomial", (2, 3))])
def test_sequential_moves_on_partitions_match_exact_posterior_long(family, rows):
    tv = tv_partitioned(SEQUENTIAL_ALONE, family, rows, 40_000, seed=13)
    assert tv < 0.035, tv


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_multiway_moves_on_partitions_match_exact_posterior(family):
    tv = tv_partitioned(MULTIWAY_ALONE, family, (2, 3), 40_000, seed=8)
    assert tv < 0.035, tv


#: the restricted Gibbs scan moves alone, as tests/test_subcluster.py runs them in one piece
SCANS_ALONE = SubclusterSplitMerge(restricted_gibbs=False, pinch=0.0, scan_moves=1.0, scans=2,
                                   multiway=0)


# slow (2-4 min each): the default run checks that a collected scan move is the in-process
# scan move (test_collected_scan_moves_are_the_in_process_scan_moves, below), whose exact
# test (tests/test_subcluster.py) is in the default run
@pytest.mark.slow
@pytest.mark.parametrize("family,rows", [("gaussian", (1, 2, 2)), ("multinomial", (2, 3))])
def test_scan_moves_on_partitions_match_exact_posterior(family, rows):
    """Scan moves on partitions, made where the round's points are collected, each move's
    points in the order of its hops.  Measured TV 0.019 (Gaussian) and 0.021 (documents) at
    40,000 steps; documents at 10,000: 0.055-0.076 over three seeds (no multi-way moves
    here to help them mix)."""
    tv = tv_partitioned(SCANS_ALONE, family, rows, 40_000, seed=8)
    assert tv < 0.03, tv


def test_default_on_partitions_matches_exact_posterior():
    # the default sampler with its partition layout: instantiated pass, sequential and
    # multi-way moves
    tv = tv_partitioned(SubclusterSplitMerge(), "gaussian", (3, 2), 4_000, seed=5)
    assert tv < 0.08, tv


# ------------------------------------------------------------- helpers
def test_sample_members_is_layout_free_and_ordered_by_key():
    rng = np.random.default_rng(0)
    labels = rng.integers(3, size=500)
    anchor = int(np.flatnonzero(labels == 1)[0])
    whole = combine_members([sample_members(labels, 1, anchor, 4, 99, 0)], 4)
    cut = [0, 130, 260, 500]
    parts = [sample_members(labels[a:b], 1, anchor, 4, 99, a) for a, b in zip(cut, cut[1:])]
    np.testing.assert_array_equal(combine_members(parts, 4), whole)
    assert len(set(whole.tolist())) == 4 and anchor not in whole
    assert np.all(labels[whole] == 1)
    first = combine_first([first_rows(labels[a:b], 3, a) for a, b in zip(cut, cut[1:])])
    np.testing.assert_array_equal(first, [np.flatnonzero(labels == k)[0] for k in range(3)])


# ------------------------------------------------------------- on clustered data
def test_partitions_find_what_in_process_finds():
    """Six Gaussians in 3-D, 3,000 points in 2 partitions from 10 random clusters: the
    sequential and multi-way moves take the fragments back (EM launches alone: K 20-40)."""
    X, y = make_gaussian_mixture(n_samples=3000, n_clusters=6, n_features=3, random_state=0)
    m = DPMixture(n_iter=40, partitions=2, init="random", random_state=0, n_chains=1).fit(X)
    assert m.n_clusters_ <= 8 and nmi(m.labels_, y) > 0.95, (m.n_clusters_, nmi(m.labels_, y))


def _two_moves(family, scans=None):
    """``(family, X, labels, cut, pins, spec)``: 600 Gaussian points or 300 documents in four
    random clusters and three partitions of unequal sizes (``cut``); move 0 splits cluster
    0, move 1 merges clusters 1 (side 0) and 3 (side 1)."""
    from dpclust.samplers._partitioned_moves import SequentialSpec

    make_family, prep = FAMILIES[family]
    if family == "gaussian":
        raw, _ = make_gaussian_mixture(n_samples=600, n_clusters=4, n_features=2,
                                       random_state=1)
    else:
        from dpclust.datasets import make_documents

        raw, _ = make_documents(n_docs=300, random_state=1)
    X = prep(raw)
    fam = make_family(raw)
    n = fam.n_points(X)
    labels = np.random.default_rng(4).integers(4, size=n)
    cut = np.array([0, n // 3, n // 2, n])
    pins = np.array([[np.flatnonzero(labels == 0)[0], np.flatnonzero(labels == 0)[-1]],
                     [np.flatnonzero(labels == 1)[0], np.flatnonzero(labels == 3)[0]]])
    spec = SequentialSpec(np.array([0, 1, -1, 1]), np.array([-1, 0, -1, 1]),
                          np.array([2, 2]), pins, np.array([2, 0]), 12345, len(cut) - 1,
                          scans)
    return fam, X, labels, cut, pins, spec


@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_collected_allocation_gives_the_hops_numbers(family):
    """A Dask cluster may collect the moves' points where they are allocated instead of
    handing the moves' statistics from partition to partition: the same sides, sizes,
    ``log q`` and statistics to the last bit."""
    from dpclust.samplers._partitioned_moves import (collect_points, collected_allocation,
                                                     collected_piece, merge_carries,
                                                     seed_carry, sequential_finish,
                                                     sequential_hop)

    fam, X, labels, cut, pins, spec = _two_moves(family)
    n, P = fam.n_points(X), len(cut) - 1
    kern = fam.partition_kernel(X, n)
    carry = seed_carry(kern, spec, pins.ravel())
    # the hops, as in-process
    prev, pieces = [carry], [[] for _ in range(P)]
    for h in range(P):
        outs = []
        for p in range(P):
            a = int(cut[p])
            out, piece = sequential_hop(kern, fam, spec, labels[a:cut[p + 1]], a, a, p, h, prev)
            outs.append(out)
            pieces[p].append(piece)
        prev = outs
    hops = merge_carries(spec, prev, np.arange(2))
    # collected, in two groups of moves
    points = [collect_points(fam, fam.subset(X, np.arange(cut[p], cut[p + 1])), spec,
                             labels[cut[p]:cut[p + 1]], int(cut[p]), 0, p) for p in range(P)]
    groups = [collected_allocation(fam, spec, n, carry, points, [b]) for b in (1, 0)]
    collected = merge_carries(spec, [g[0] for g in groups], np.arange(2))
    np.testing.assert_array_equal(collected.counts, hops.counts)
    np.testing.assert_array_equal(collected.logq, hops.logq)
    for a, b in zip(collected.kstats, hops.kstats):
        np.testing.assert_array_equal(a, b)
    for p in range(P):
        a, b = int(cut[p]), int(cut[p + 1])
        piece = collected_piece(spec, labels[a:b], a, p,
                                [(g[0].moves, g[1][p]) for g in groups])
        codes_c, sides_c = sequential_finish(fam, X, spec, labels[a:b], None, [piece], a, a)
        codes_h, sides_h = sequential_finish(fam, X, spec, labels[a:b], None, pieces[p], a, a)
        np.testing.assert_array_equal(codes_c, codes_h)
        np.testing.assert_array_equal(sides_c.first, sides_h.first)
        for u, v in zip(sides_c.stats, sides_h.stats):
            np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("family", ["gaussian", "multinomial"])
def test_collected_scan_moves_are_the_in_process_scan_moves(family):
    """A scan move on partitions (its points collected in one place) is the in-process scan
    move (:func:`~dpclust.kernels.subcluster.scan_move`) on the move's points in the order
    of its hops, from the same anchors and stream: the same sides, ``log q`` and sizes to the
    last bit, whether the moves run together or one to a worker."""
    from dpclust.kernels.subcluster import sequential_allocation
    from dpclust.samplers._partitioned_moves import (collect_points, collected_allocation,
                                                     merge_carries, move_rows, seed_carry)

    fam, X, labels, cut, pins, spec = _two_moves(family, scans=np.array([3, 1]))
    n, P = fam.n_points(X), len(cut) - 1
    kern = fam.partition_kernel(X, n)
    carry = seed_carry(kern, spec, pins.ravel())
    points = [collect_points(fam, fam.subset(X, np.arange(cut[p], cut[p + 1])), spec,
                             labels[cut[p]:cut[p + 1]], int(cut[p]), 0, p) for p in range(P)]
    together = collected_allocation(fam, spec, n, carry, points, [0, 1])[0]
    apart = merge_carries(spec, [collected_allocation(fam, spec, n, carry, points, [b])[0]
                                 for b in (1, 0)], np.arange(2))
    # each move's points in hop order: partitions (rot + h) mod P, each in its move order
    local = [move_rows(spec, labels[cut[p]:cut[p + 1]], int(cut[p]), p, np.arange(2))
             for p in range(P)]
    rows, fixed, start = [], [], [0]
    for b in range(2):
        for h in range(P):
            q = (spec.rot[b] + h) % P
            r, s, f = local[q]
            rows.append(r[s[b]:s[b + 1]] + cut[q])
            fixed.append(f[s[b]:s[b + 1]])
        start.append(sum(len(r) for r in rows))
    _, logq, counts, _ = sequential_allocation(
        kern, np.concatenate(rows), np.array(start), np.concatenate(fixed), pins, carry.states,
        scans=spec.scans)
    for got in (together, apart):
        np.testing.assert_array_equal(got.logq, logq)
        np.testing.assert_array_equal(got.counts[:, :2].ravel(), counts)
    assert np.all(np.isfinite(logq)) and not np.array_equal(logq, np.zeros(2))


def test_both_data_sides_implement_the_partitioned_data_protocol():
    """The sub-cluster sampler calls only PartitionedData's methods, which the in-process
    and the Dask partitions both implement, with the same arguments."""
    import inspect

    from dpclust.distributed.backend import DaskPartitions
    from dpclust.samplers._partitioned import LocalPartitions
    from dpclust.samplers.partitioned_data import PartitionedData

    names = [n for n in vars(PartitionedData) if not n.startswith("_")
             and callable(getattr(PartitionedData, n))]
    assert len(names) == 18
    for cls in (LocalPartitions, DaskPartitions):
        for name in names:
            want = list(inspect.signature(getattr(PartitionedData, name)).parameters)
            have = list(inspect.signature(getattr(cls, name)).parameters)
            assert have == want, (cls.__name__, name, have)
