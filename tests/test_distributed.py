"""The sub-cluster sampler on a Dask cluster: the same chain as in-process, through a killed
worker, a lost source and a resume, and from the command line."""

import itertools
import json
import os
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from dpclust import DPMixture
from dpclust.cli import main
from dpclust.datasets import make_gaussian_mixture
from dpclust.distributed import WorkerLost
from dpclust.samplers import SubclusterSplitMerge

ROWS = (700, 900, 400)  # uneven partitions, on purpose
# one round of moves an iteration (the default makes 7 on 2,000 points, each a round trip
# on the cluster): every kind of move still runs, in a third of the time
KW = {"sampler": SubclusterSplitMerge(n_rounds=1), "n_iter": 14, "burn_in": 6,
      "init": "random", "store_labels": True, "random_state": 3, "n_chains": 1}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    try:
        cluster.close()
    except KeyError:
        # distributed's SpecCluster watcher looks up a removed worker by address; the
        # tests kill workers and their nannies start new ones, so the address it is told
        # to remove can be one it never listed: a race in closing, after every test ran
        pass


@pytest.fixture(scope="module")
def data():
    X, y = make_gaussian_mixture(n_samples=sum(ROWS), n_clusters=4, random_state=5)
    return X, y


@pytest.fixture(scope="module")
def local_fit(data):
    return DPMixture(partitions=ROWS, **KW).fit(data[0])


def _same_chain(a, b):
    np.testing.assert_array_equal(a.trace_.labels, b.trace_.labels)
    np.testing.assert_array_equal(a.trace_.log_joint, b.trace_.log_joint)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    # the expected loss is summed per partition on a cluster and over the whole pool
    # in-process: the same number up to the order of the floating-point additions
    assert np.isclose(a.expected_loss_, b.expected_loss_, rtol=1e-12, atol=0.0)


def _kill_workers(client, how_many=1):
    pids = list(client.run(os.getpid).values())
    for pid in pids[:how_many]:
        os.kill(pid, 9)


def _workers_back(client, n=2):
    """The killed workers back: their nannies restart them (in a second or two); where a
    nanny gave up (seen under load: the next fit then waited on no worker; two whole-suite
    runs waited out a minute's timeout so), the cluster starts new ones."""
    try:
        client.wait_for_workers(n, timeout=15)
    except TimeoutError:
        client.cluster.scale(0)
        deadline = time.monotonic() + 60
        while client.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.2)
        client.cluster.scale(n)
        client.wait_for_workers(n, timeout=120)


@pytest.fixture(autouse=True)
def _both_workers(request):
    """Every test on the module's cluster starts with both of its workers, whatever the
    test before it killed."""
    if "client" in request.fixturenames:
        _workers_back(request.getfixturevalue("client"))


def _kill_once(client, at, how_many=1):
    """A callback that kills ``how_many`` workers after iteration ``at``, once (the
    iterations since the last recovery point run again, and call it again); a worker that
    holds an actor first."""
    done = []

    def kill(it, state, info):
        if it == at and not done:
            done.append(it)
            held = client.run(lambda dask_worker: (len(dask_worker.state.actors) > 0,
                                                   os.getpid()))
            for _, pid in sorted(held.values(), reverse=True)[:how_many]:
                os.kill(pid, 9)

    return kill


@pytest.fixture(params=["actors", "actors-dask-calls", "tasks"])
def design(request, monkeypatch):
    """The ways of holding the partitions: actors (the default; called on direct
    connections, or through Dask's actor calls where the workers do not listen) and futures
    of pure tasks through the scheduler."""
    if request.param == "tasks":
        _tasks_design(monkeypatch)
    if request.param == "actors-dask-calls":
        from dpclust.distributed import actors

        init = actors.ActorPartitions.__init__
        monkeypatch.setattr(actors.ActorPartitions, "__init__",
                            lambda self, *a, **k: init(self, *a, direct=False, **k))
    return request.param


def _tasks_design(monkeypatch):
    import functools

    from dpclust.distributed import loading

    monkeypatch.setattr(loading, "load_partitions",
                        functools.partial(loading.load_partitions, actors=False))


def test_dask_array_gives_the_in_process_chain(client, data, local_fit):
    X, _ = data
    dX = da.from_array(X, chunks=(ROWS, (X.shape[1],)))
    m = DPMixture(executor=client, **KW).fit(dX)
    _same_chain(local_fit, m)
    assert m.n_clusters_ == local_fit.n_clusters_
    np.testing.assert_allclose(m.weights_, local_fit.weights_)
    np.testing.assert_allclose(m.score_samples(X[:20]), local_fit.score_samples(X[:20]),
                               rtol=1e-10)
    np.testing.assert_array_equal(m.predict(X[:50]), local_fit.predict(X[:50]))
    with pytest.raises(ValueError, match="co-clustering"):
        m.posterior_similarity()


def test_another_prior_gives_the_in_process_chain(client, data):
    """A Pitman–Yor fit on the cluster: the same chain as in-process on the same partitions
    (the prior's split ratio and EPPF are read on the client, the data pass on the
    workers)."""
    X, _ = data
    kw = {**KW, "prior": "pitman-yor:0.25,1", "n_iter": 8, "burn_in": 4}
    local = DPMixture(partitions=ROWS, **kw).fit(X)
    dX = da.from_array(X, chunks=(ROWS, (X.shape[1],)))
    m = DPMixture(executor=client, **kw).fit(dX)
    _same_chain(local, m)
    assert m.sampler_ == "subcluster" and m.prior_.name == "pitman-yor"


def test_shards_give_the_in_process_chain(client, data, local_fit, tmp_path, monkeypatch):
    from dpclust.samplers import _partitioned_moves

    X, _ = data
    edges = np.cumsum((0,) + ROWS)
    for p, (a, b) in enumerate(itertools.pairwise(edges)):
        np.save(tmp_path / f"part-{p:02d}.npy", X[a:b])
    # the moves' statistics hop from partition to partition here (the other tests collect
    # the moves' points): the same chain either way
    monkeypatch.setattr(_partitioned_moves, "COLLECT_BYTES", 0)
    m = DPMixture(executor=client, **KW).fit(str(tmp_path))
    _same_chain(local_fit, m)
    assert m.transfer_["round_trips"] > 0 and m.transfer_["tasks"] > m.transfer_["round_trips"]


def test_parquet_shards_and_partition_count(client, data, tmp_path):
    pd = pytest.importorskip("pandas")
    X, _ = data
    parts = np.array_split(X, 3)
    for p, part in enumerate(parts):
        pd.DataFrame(part, columns=["a", "b"]).to_parquet(tmp_path / f"p{p}.parquet")
    m = DPMixture(executor=client, **KW).fit(str(tmp_path / "*.parquet"))
    ref = DPMixture(partitions=[len(p) for p in parts], **KW).fit(X)
    _same_chain(ref, m)


def test_a_killed_worker_changes_nothing(client, data, local_fit, design):
    """Actors: the partitions are held again and the chain runs again from its last
    recovery point; tasks: Dask recomputes what the worker held from the tasks' lineage."""
    X, _ = data
    dX = da.from_array(X, chunks=(ROWS, (X.shape[1],)))
    m = DPMixture(executor=client, callback=_kill_once(client, 10), **KW).fit(dX)
    _same_chain(local_fit, m)
    assert m.transfer_["rebuilds"] == (0 if design == "tasks" else 1)
    assert m.transfer_["direct"] == (design == "actors")


def test_a_worker_killed_after_a_checkpoint_changes_nothing(client, data, local_fit,
                                                            tmp_path, design):
    """After a checkpoint the chain's state and kept draws are what was written (actors:
    the recovery point; tasks: new root tasks made from it): a worker lost then is rebuilt
    from them, and the chain goes on the same."""
    X, _ = data
    dX = da.from_array(X, chunks=(ROWS, (X.shape[1],)))
    # after the checkpoint of iteration 10 (kept draws from iteration 6)
    m = DPMixture(executor=client, callback=_kill_once(client, 12), checkpoint=tmp_path / "c",
                  checkpoint_every=5, **KW).fit(dX)
    _same_chain(local_fit, m)


def test_recovery_points_and_balanced_actors(client, data, monkeypatch):
    """Without a checkpoint the runner gathers the chain's state every ``RECOVER_EVERY``
    iterations, each kept draw once; a worker killed twice in one run is survived twice;
    the actors hold about equal numbers of rows."""
    from dpclust.distributed import actors, backend

    monkeypatch.setattr(backend, "RECOVER_EVERY", 4)
    X, _ = data
    kw = dict(KW, n_iter=20, burn_in=10)
    local = DPMixture(partitions=ROWS, **kw).fit(X)
    kills = [_kill_once(client, 6), _kill_once(client, 15)]
    m = DPMixture(executor=client, partitions=ROWS,
                  callback=lambda it, s, i: [k(it, s, i) for k in kills], **kw).fit(X)
    _same_chain(local, m)
    assert m.transfer_["rebuilds"] == 2
    assert m.transfer_["calls"] <= 2 * m.transfer_["round_trips"]  # one a worker a gather
    assert m.transfer_["direct"]  # local workers listen on tcp:// addresses
    assert actors.balanced_holders([700, 900, 400], ["a", "a", "a"], ["a", "b"]) == \
        ["b", "a", "b"]
    assert actors.balanced_holders([5] * 8, ["a"] * 5 + ["b"] * 3, ["a", "b"]) == \
        ["a"] * 4 + ["b"] * 4


def _scheduler_tasks(client):
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


@pytest.mark.slow  # 2 x 120 iterations on the cluster (a minute or two)
def test_checkpoints_keep_the_scheduler_s_tasks_bounded(client, data, tmp_path, design):
    """Tasks: without checkpoints the scheduler keeps every task since the start (each
    partition's state is a chain of tasks); with them it forgets the tasks before the last
    one.  Actors: the scheduler holds the partitions' loading tasks and the actors only."""
    X, _ = data
    every, counts = 20, {True: [], False: []}
    for cut in (True, False):
        def probe(it, state, info, cut=cut):
            if (it + 1) % every == 0:
                counts[cut].append(_scheduler_tasks(client))

        kw = dict(KW, n_iter=120, burn_in=60, max_draws=4, store_labels=False)
        DPMixture(executor=client, partitions=ROWS, callback=probe,
                  checkpoint=tmp_path / "c" if cut else None,
                  checkpoint_every=every if cut else None, **kw).fit(X)
    with_cut, without = counts[True], counts[False]
    if design != "tasks":
        assert max(with_cut) - min(with_cut) <= 5 and max(without) - min(without) <= 5, \
            (with_cut, without)
        return
    assert max(with_cut[2:]) <= with_cut[1] + 60, with_cut
    assert without[-1] > without[1] + 200, without


def _span_records_and_key_names(dask_scheduler):
    from dask.utils import key_split

    spans = dask_scheduler.extensions["spans"].spans.values()
    records = [r for s in spans for r in ((s._metadata or {}).get("collections") or [])]
    return records, key_split.cache_info().currsize


def test_the_client_folds_what_the_scheduler_keeps_of_its_submissions(client, data,
                                                                      monkeypatch):
    """Tasks: Dask's spans keep a metadata record per submission and ``key_split`` caches
    every key's name, whatever becomes of the tasks: the client folds the records' repeats
    and empties the cache every ``FOLD_EVERY`` round trips, so neither grows with the
    run."""
    from dpclust.distributed import backend

    _tasks_design(monkeypatch)
    X, _ = data
    DPMixture(executor=client, partitions=ROWS, **KW).fit(X)
    records, names = client.run_on_scheduler(_span_records_and_key_names)
    unfolded = len(records)
    assert unfolded > 50 and names > 500  # what a 14-iteration run leaves unfolded
    monkeypatch.setattr(backend, "FOLD_EVERY", 1)
    calls = []
    fold = backend.DaskPartitions._fold_span_metadata
    monkeypatch.setattr(backend.DaskPartitions, "_fold_span_metadata",
                        lambda self: calls.append(1) or fold(self))
    DPMixture(executor=client, partitions=ROWS, **KW).fit(X)
    records, names = client.run_on_scheduler(_span_records_and_key_names)
    assert calls and names < 500, (len(calls), names)
    # folded at each round trip: what is left is the kinds of record (the module's other
    # tests submit dask arrays too) and the few submitted after the last round trip (fewer than
    # 20 in most runs, 21 in one whole-suite run), not one per submission
    assert len(records) < min(30, unfolded / 2), (unfolded, len(records))
    assert "Future" in {r["type"] for r in records}


def _scheduler_intervals(dask_scheduler):
    return sorted({b.interval for b in dask_scheduler.stream_comms.values()})


def _worker_interval(dask_worker):
    return dask_worker.batched_stream.interval


def test_the_chain_s_connections_send_at_once(client, data):
    """Dask batches a connection's messages (2-10 ms apart); the chain waits for each
    answer, so the client sets the intervals of its own connection, the scheduler's to the
    workers and the workers' to the scheduler to zero when it loads the data."""
    from dpclust.distributed import backend, load_partitions
    from dpclust.families import NormalInverseWishart

    def reset(dask_scheduler):
        for b in dask_scheduler.stream_comms.values():
            b.interval = 0.005

    client.scheduler_comm.interval = 0.01
    client.run_on_scheduler(reset)
    client.run(lambda dask_worker: setattr(dask_worker.batched_stream, "interval", 0.002))
    load_partitions(client, data[0], NormalInverseWishart(), partitions=2)
    assert client.scheduler_comm.interval == backend.BATCH_INTERVAL == 0.0
    assert client.run_on_scheduler(_scheduler_intervals) == [0.0]
    assert set(client.run(_worker_interval).values()) == {0.0}


def test_collected_allocations_are_shared_by_points():
    """The moves of a round go to the workers in shares of about equal numbers of points,
    each move once (each move is allocated alone, so the shares change where, not what)."""
    from dpclust.distributed.backend import balanced_shares

    sizes = np.array([5, 900, 40, 880, 60, 3, 10])
    shares = balanced_shares(sizes, len(sizes), 2)
    assert sorted(np.concatenate(shares).tolist()) == list(range(len(sizes)))
    assert all(np.all(np.diff(s) > 0) for s in shares)
    loads = sorted(int(sizes[s].sum()) for s in shares)
    assert loads == [948, 950], loads  # by index (0, 2, 4, 6 | 1, 3, 5): 115 and 1,783
    assert [s.tolist() for s in balanced_shares(None, 5, 2)] == [[0, 2, 4], [1, 3]]
    assert len(balanced_shares(sizes[:1], 1, 4)) == 1  # no empty shares


# slow: test_a_lost_source_stops_with_a_checkpoint resumes from a checkpoint on the cluster
@pytest.mark.slow
def test_resume_from_a_checkpoint(client, data, local_fit, tmp_path):
    X, _ = data
    dX = da.from_array(X, chunks=(ROWS, (X.shape[1],)))
    path = tmp_path / "chain.ckpt"
    DPMixture(executor=client, checkpoint=path, checkpoint_every=5,
              callback=lambda it, state, info: it < 13, **KW).fit(dX)
    m = DPMixture.resume(path, dX, client=client)
    _same_chain(local_fit, m)


def test_a_lost_source_stops_with_a_checkpoint(client, data, local_fit, tmp_path):
    X, _ = data
    shards = tmp_path / "shards"
    shards.mkdir()
    edges = np.cumsum((0,) + ROWS)
    for p, (a, b) in enumerate(itertools.pairwise(edges)):
        np.save(shards / f"part-{p:02d}.npy", X[a:b])
    moved = tmp_path / "moved"
    path = tmp_path / "chain.ckpt"

    def lose(it, state, info):
        if it == 11:  # the files go away, then the workers: no partition can be reloaded
            shards.rename(moved)
            _kill_workers(client, how_many=2)

    with pytest.raises(WorkerLost, match=r"holds iteration 10"):
        DPMixture(executor=client, checkpoint=path, checkpoint_every=5,
                  callback=lose, **KW).fit(str(shards))
    moved.rename(shards)
    _workers_back(client)
    m = DPMixture.resume(path, str(shards), client=client)
    _same_chain(local_fit, m)


def test_errors_name_the_partition(client, tmp_path):
    bad = np.ones((50, 2))
    bad[7, 1] = np.nan
    np.save(tmp_path / "a.npy", np.ones((50, 2)))
    np.save(tmp_path / "b.npy", bad)
    with pytest.raises(ValueError, match=r"b\.npy.*NaN"):
        DPMixture(executor=client, n_iter=2, n_chains=1).fit(str(tmp_path))
    with pytest.raises(ValueError, match="sub-cluster"):
        DPMixture(executor=client, sampler="gibbs", n_iter=2,
                  n_chains=1).fit(np.ones((9, 2)))


def test_the_k_means_start_gives_the_in_process_chain(client, data):
    """The default start on a cluster is k-means on a sample of the rows, each partition
    assigning its rows to the nearest centre: the in-process run with the same partitions
    starts from the same labels, and on separated blobs they are the blobs."""
    from sklearn.metrics import normalized_mutual_info_score

    X, y = data
    kw = dict(KW, sampler="subcluster", init="auto", init_clusters=4, n_iter=6, burn_in=0)
    local = DPMixture(partitions=ROWS, **kw).fit(X)
    dX = da.from_array(X, chunks=(ROWS, (X.shape[1],)))
    on_dask = DPMixture(executor=client, **kw).fit(dX)
    _same_chain(local, on_dask)
    assert normalized_mutual_info_score(y, on_dask.trace_.labels[0, 0]) > 0.9
    small = DPMixture(executor=client, partitions=ROWS, init="kmeans",
                      **{k: v for k, v in kw.items() if k != "init"}).fit(X)
    _same_chain(local, small)


# slow: the default run keeps the estimator's contract tests on the cluster
@pytest.mark.slow
def test_cli_on_a_cluster_matches_in_process(client, data, tmp_path):
    X, _ = data
    csv = tmp_path / "x.csv"
    np.savetxt(csv, X, delimiter=",")
    address = client.scheduler.address
    common = [str(csv), "--n-chains", "1", "--n-iter", "12", "--random-state", "1", "--init", "random",
              "--no-progress", "--partitions", "3"]
    assert main(["fit", *common, "--scheduler", address, "--out",
                 str(tmp_path / "dask"), "--checkpoint-every", "4"]) == 0
    assert main(["fit", *common, "--out", str(tmp_path / "local")]) == 0
    a = np.loadtxt(tmp_path / "dask" / "labels.csv", delimiter=",", skiprows=1, dtype=str)
    b = np.loadtxt(tmp_path / "local" / "labels.csv", delimiter=",", skiprows=1, dtype=str)
    np.testing.assert_array_equal(a, b[:, 0])  # in-process also has each point's certainty
    assert main(["resume", str(tmp_path / "dask"), "--n-iter", "16", "--no-progress"]) == 0
    summary = json.loads((tmp_path / "dask" / "summary.json").read_text())
    assert summary["settings"]["n_iter"] == 16 and summary["dask"]["partitions"] == 3
    assert summary["dask"]["stats_bytes_per_pass"] > 0
    assert (tmp_path / "dask" / "report.html").stat().st_size > 10_000


def test_documents_give_the_in_process_chain(client, monkeypatch):
    """Documents (sparse rows) on the cluster, with the restricted Gibbs scan moves that
    they make where a round's points are collected: the in-process chain."""
    from dpclust.datasets import make_documents
    from dpclust.samplers._partitioned import LocalPartitions

    from dpclust.families import DirichletMultinomial

    X, _ = make_documents(n_docs=300, random_state=0)
    kw = {**KW, "family": DirichletMultinomial(concentration=1.0), "n_iter": 12, "burn_in": 4}
    scanned = []
    collected = LocalPartitions._collected
    monkeypatch.setattr(LocalPartitions, "_collected",
                        lambda self, spec, *a: scanned.append(1) or collected(self, spec, *a))
    ref = DPMixture(partitions=2, **kw).fit(X)
    assert scanned  # the in-process twin made scan moves, so the cluster's chain did too
    m = DPMixture(executor=client, partitions=2, **kw).fit(X)  # sparse rows
    _same_chain(ref, m)


def test_learned_hyperparameters_are_refused_on_the_cluster(client):
    """A Dask cluster runs the family's hyperparameters fixed: the documents' learned
    default is refused with what to give instead."""
    from dpclust.datasets import make_documents

    X, _ = make_documents(n_docs=60, random_state=0)
    with pytest.raises(ValueError, match="give concentration a number"):
        DPMixture(executor=client, family="multinomial", **KW).fit(X)


@pytest.mark.slow  # 16 s (the workers compile the table kernels); Dask's identity is in
def test_tables_with_holes_give_the_in_process_chain(client):  # the default run (arrays)
    """A DataFrame of mixed columns with holes (the table family): the rows the sampler
    gathers from the workers are tables, stacked by the family."""
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 240
    group = rng.integers(0, 3, n)
    df = pd.DataFrame({"x": rng.normal(group * 3.0, 1.0), "y": rng.normal(-group, 1.0),
                       "kind": np.array(["a", "b", "c"])[group],
                       "flag": rng.random(n) < 0.2 + 0.3 * group})
    df = df.mask(rng.random(df.shape) < 0.15)
    kw = {**KW, "family": "auto", "n_iter": 12, "burn_in": 4}
    ref = DPMixture(partitions=2, **kw).fit(df)
    m = DPMixture(executor=client, partitions=2, **kw).fit(df)
    _same_chain(ref, m)


# slow: a non-default proposal (EM launches in three stages); the default moves run in
# every other test here
@pytest.mark.slow
def test_staged_proposals_give_the_in_process_chain(client, data):
    """Proposals in three stages carry each partition's sides from stage to stage."""
    X, _ = data
    kw = dict(KW, sampler=SubclusterSplitMerge(stages=3, launch_size=64), n_iter=12)
    local = DPMixture(partitions=ROWS, **kw).fit(X)
    dX = da.from_array(X, chunks=(ROWS, (X.shape[1],)))
    on_dask = DPMixture(executor=client, **kw).fit(dX)
    _same_chain(local, on_dask)
    assert local.trace_.n_accepted_splits.sum() > 0


# slow: each chain is the single-chain run, which the default run checks on the cluster
@pytest.mark.slow
def test_several_chains_on_a_cluster_are_the_in_process_chains(client, data):
    """On a Dask cluster the chains run one after another; each is the in-process chain
    of the same stream."""
    import warnings

    X, _ = data
    kw = dict(KW, n_chains=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        here = DPMixture(partitions=ROWS, **kw).fit(X)
        there = DPMixture(executor=client, **kw).fit(
            da.from_array(X, chunks=(ROWS, (X.shape[1],))))
    assert there.trace_.log_joint.shape == (2, KW["n_iter"])
    np.testing.assert_array_equal(there.trace_.labels, here.trace_.labels)
    np.testing.assert_array_equal(there.labels_, here.labels_)
    assert there.certainty_ is None and here.certainty_ is not None
    assert set(there.convergence_) == set(here.convergence_)


def test_identical_rows_on_different_workers_stay_together(client, data):
    """Rows repeated across partitions (rows 0-999 again as 1000-1999): the workers find
    them from the rows' digests, so the point estimate keeps them together as in-process
    and is the in-process estimate."""
    X = np.concatenate([data[0][:1000], data[0][:1000]])
    ref = DPMixture(partitions=ROWS, **KW).fit(X)
    m = DPMixture(executor=client, partitions=ROWS, **KW).fit(X)
    _same_chain(ref, m)
    np.testing.assert_array_equal(m.labels_[:1000], m.labels_[1000:])
    draws = np.asarray(m.trace_.labels)[0]
    assert np.any(draws[:, :1000] != draws[:, 1000:])  # which the draws do not


def test_a_cluster_without_workers_is_named_not_waited_on_for_ever():
    from dpclust.distributed.loading import wait_for_workers

    with distributed.LocalCluster(n_workers=0, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as empty:
        with pytest.raises(RuntimeError, match="no worker"):
            wait_for_workers(empty, timeout=1)
