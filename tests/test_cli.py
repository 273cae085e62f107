"""End-to-end tests of the ``dpclust`` command line (dpclust.cli)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dpclust
from dpclust import cli
from dpclust.cli import main
from dpclust.cli.parser import build_parser
from dpclust.datasets import make_documents, make_gaussian_mixture
from dpclust.metrics import ari, nmi

from cli_helpers import run

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

try:
    import pyarrow  # noqa: F401

    HAVE_ARROW = True
except ImportError:
    HAVE_ARROW = False

SRC = Path(dpclust.__file__).resolve().parents[1]
FAST = ["--n-iter", "12", "--no-progress", "--no-plots"]
OUTPUT_FILES = ("run.json", "labels.csv", "summary.json", "trace.csv", "report.html",
                "trace.nc", "model.npz")


# --------------------------------------------------------------------------------------------
# helpers and data


def read_labels(out: Path) -> np.ndarray:
    lines = (out / "labels.csv").read_text().splitlines()
    assert lines[0] in ("label", "label,certainty", "label,certainty,fused_label")
    return np.array([int(v.split(",")[0]) for v in lines[1:]])


def labels_of(out: Path) -> np.ndarray:
    return np.loadtxt(out / "labels.csv", skiprows=1, delimiter=",", usecols=0,
                      dtype=np.int64)


def summary_of(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def blobs():
    X, y = make_gaussian_mixture(n_samples=60, n_clusters=2, n_features=2, random_state=1)
    return X, y


@pytest.fixture(scope="module")
def docs():
    X, y = make_documents(n_docs=40, n_topics=2, vocab_size=30, doc_length=40, random_state=1)
    return X, y


def write_csv(path: Path, X, header=None, extra=None):
    rows = [] if header is None else [",".join(header)]
    for i, row in enumerate(X):
        cells = [repr(float(v)) for v in row]
        if extra is not None:
            cells.append(str(extra[i]))
        rows.append(",".join(cells))
    path.write_text("\n".join(rows) + "\n")
    return path


def write_docword(path: Path, X: sp.csr_matrix):
    coo = X.tocoo()
    lines = [str(X.shape[0]), str(X.shape[1]), str(coo.nnz)]
    lines += [f"{i + 1} {j + 1} {int(v)}" for i, j, v in zip(coo.row, coo.col, coo.data)]
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------------------------------------
# the demo and the output files


@pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib (dpclust[plot])")
def test_fit_demo_writes_every_file_and_a_report_with_images(tmp_path, capsys):
    out = tmp_path / "demo"
    status, stdout, err = run(capsys, "fit", "--n-iter", "10", "--no-progress", "--out", out)
    assert status == 0, err
    for name in OUTPUT_FILES + ("trace.png", "clusters.png", "cluster_sizes.png",
                                "similarity.png", "k_posterior.png"):
        assert (out / name).is_file(), name
    html = (out / "report.html").read_text()
    # ten iterations have not converged: no fused clusters (their drawing is tested with
    # a run that converges)
    assert not summary_of(out)["fused"]["computed"]
    fused = (out / "fused_clusters.png").is_file()
    assert not fused
    ball = (out / "credible_ball.png").is_file()  # when its bounds differ from the estimate
    assert html.count("data:image/png;base64,") == 5 + fused + ball
    assert len(read_labels(out)) == 1500
    trace = (out / "trace.csv").read_text().splitlines()
    assert trace[0] == "iteration,log_joint,log_likelihood,n_clusters,alpha,seconds"
    assert len(trace) == 11 and trace[1].startswith("0,")
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["config"]["data"] == "demo"
    assert "clusters in 1500 points" in stdout


def test_options_are_named_as_the_python_parameters_and_old_spellings_still_work(
        tmp_path, capsys):
    """--n-iter, --n-chains, --random-state, --n-jobs, --max-iter as DPMixture's parameters;
    --iters, --chains, --seed, --jobs, --max-iters still run, with a note; without
    --random-state the seed is drawn, said, and kept in run.json for resume."""
    help_text = build_parser()._subparsers._group_actions[0].choices["fit"].format_help()
    for new in ("--n-iter", "--n-chains", "--random-state", "--n-jobs", "--max-iter"):
        assert new in help_text
    old = tmp_path / "old"
    status, _, err = main_quiet(capsys, ["fit", "--iters", "12", "--chains", "1", "--seed",
                                         "5", "--no-progress", "--no-plots", "--out", old])
    assert status == 0, err
    assert "--iters is now --n-iter" in err and "--seed is now --random-state" in err
    new = tmp_path / "new"
    status, _, err = main_quiet(capsys, ["fit", "--n-iter", "12", "--n-chains", "1",
                                         "--random-state", "5", "--no-progress",
                                         "--no-plots", "--out", new])
    assert status == 0 and "is now" not in err, err
    assert (old / "labels.csv").read_text() == (new / "labels.csv").read_text()
    drawn = tmp_path / "drawn"
    status, _, err = main_quiet(capsys, ["fit", "--n-iter", "12", "--n-chains", "1",
                                         "--no-progress", "--no-plots", "--out", drawn])
    assert status == 0, err
    seed = json.loads((drawn / "run.json").read_text())["config"]["seed"]
    assert f"--random-state {seed} repeats this run" in err
    assert summary_of(drawn)["settings"]["seed"] == seed


def main_quiet(capsys, argv):
    """``main(argv)`` as given (no defaults added); (exit status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_summary_json_content(tmp_path, capsys):
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", *FAST, "--random-state", "7", "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert {"dpclust_version", "settings", "data", "timings", "n_clusters", "cluster_sizes",
            "cluster_params", "log_joint", "point_estimate", "metrics"} <= set(s)
    assert s["dpclust_version"] == dpclust.__version__
    settings = s["settings"]
    assert settings["seed"] == 7 and settings["n_iter"] == 12 and settings["burn_in"] == 6
    assert settings["family"] == "gaussian" and settings["sampler"] == "auto (gibbs+sams)"
    assert settings["init"] == "auto"
    assert settings["command_line"].startswith("dpclust fit ") and "--random-state 7" in settings[
        "command_line"]
    assert s["data"] == {"source": "demo", "format": "load_demo()", "n_samples": 1500,
                         "n_features": 2}
    t = s["timings"]
    assert {"total_seconds", "seconds_per_iteration", "point_updates_per_second"} <= set(t)
    assert t["point_updates_per_second"] == pytest.approx(
        1500 * 12 / t["sampling_seconds"])
    assert sum(s["cluster_sizes"]) == 1500 and len(s["cluster_sizes"]) == s["n_clusters"]
    means = np.array(s["cluster_params"]["means"])
    covs = np.array(s["cluster_params"]["covariances"])
    assert means.shape == (s["n_clusters"], 2) and covs.shape == (s["n_clusters"], 2, 2)
    assert set(s["log_joint"]) == {"final", "best", "best_iteration"}
    assert s["log_joint"]["best"] >= s["log_joint"]["final"]
    assert s["point_estimate"]["loss"] == "vi" and s["point_estimate"]["expected_loss"] >= 0
    assert set(s["metrics"]) == {"nmi", "ari"} and 0 <= s["metrics"]["nmi"] <= 1
    # --no-plots: a report with tables and no figures
    html = (out / "report.html").read_text()
    assert "data:image/png" not in html and not list(out.glob("*.png"))


def test_convergence_block_trace_nc_and_banner(tmp_path, capsys):
    """summary.json's verdict (strict JSON), the ArviZ trace and the report's banner: red
    with the failing quantities for a short run, green for a long easy one."""
    import warnings

    out = tmp_path / "short"
    status, stdout, err = run(capsys, "fit", *FAST, "--random-state", "0", "--out", out)
    assert status == 0, err
    conv = summary_of(out)["convergence"]
    assert conv["converged"] is False and conv["n_chains"] == 1 and conv["n_draws"] == 6
    assert set(conv["log_likelihood"]) == {"rhat", "ess_bulk", "ess_tail", "converged"}
    json.loads((out / "summary.json").read_text(), parse_constant=pytest.fail)  # no NaN
    assert "NOT converged" in err and "the log-likelihood" in err
    html = (out / "report.html").read_text()
    assert 'class="verdict bad"' in html and "Not converged" in html and "R-hat" in html
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import arviz as az

        idata = az.from_netcdf(out / "trace.nc")
    assert idata.sample_stats["lp"].shape == (1, 6)

    X, _ = make_gaussian_mixture(1000, 3, separation=5.0, random_state=0)
    path = tmp_path / "easy.csv"
    np.savetxt(path, X, delimiter=",")
    out = tmp_path / "easy"
    # four chains of 3,000: one chain's split R-hat sits at the rule's edge whatever the seed
    # (1.005-1.02 on the log-likelihood at 2,000 iterations, 1.010 on the fused clusters at
    # 6,000); four chains of 3,000 passed at seeds 1-3 with every R-hat <= 1.004
    status, stdout, err = run(capsys, "fit", path, "--n-iter", "3000", "--n-chains", "4",
                              "--random-state", "1", "--no-progress", "--no-plots",
                              "--out", out)
    assert status == 0, err
    assert summary_of(out)["convergence"]["converged"] is True
    assert "converged: R-hat" in stdout and "NOT" not in err
    assert 'class="verdict ok"' in (out / "report.html").read_text()


def test_gamma_alpha_is_resampled_and_labels_can_be_stored(tmp_path, blobs, capsys):
    X, _ = blobs
    data = tmp_path / "x.npy"
    np.save(data, X)
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *FAST, "--alpha", "gamma:2,1", "--store-labels",
                         "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["settings"]["alpha"] == "gamma:2,1" and s["alpha_posterior_mean"] > 0
    alphas = np.loadtxt(out / "trace.csv", delimiter=",", skiprows=1)[:, 4]
    assert np.ptp(alphas) > 0
    samples = np.load(out / "label_samples.npz")
    assert samples["labels"].shape == (1, 6, 60) and samples["iterations"].tolist() == list(
        range(6, 12))


# --------------------------------------------------------------------------------------------
# which answer: fused clusters of the exact posterior, or the coarsened posterior


def test_an_exact_run_fuses_its_clusters_into_labels_summary_and_report(tmp_path, blobs,
                                                                         capsys):
    X, _ = blobs
    data = tmp_path / "x.npy"
    np.save(data, X)
    out = tmp_path / "o"
    # 12 iterations have not converged: the page says so instead of fusing
    status, _, err = run(capsys, "fit", data, *FAST, "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert not s["convergence"]["converged"]
    assert not s["fused"]["computed"] and "not converged" in s["fused"]["reason"]
    assert (out / "labels.csv").read_text().splitlines()[0] == "label,certainty"

    # until it converges (4,800 iterations), every kept draw stored: fused, and the fused
    # clusters per draw judged with the rest
    status, _, err = run(capsys, "fit", data, "--no-progress", "--no-plots", "--store-labels",
                         "--n-chains", "4", "--until-converged", "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["convergence"]["converged"], (s["settings"], s["convergence"])
    f = s["fused"]
    assert f["computed"] and f["omega"] == 1.0 and sum(f["sizes"]) == 60
    lines = (out / "labels.csv").read_text().splitlines()
    assert lines[0] == "label,certainty,fused_label"
    cols = np.loadtxt(out / "labels.csv", delimiter=",", skiprows=1)
    raw, fused = cols[:, 0].astype(int), cols[:, 2].astype(int)
    table = np.zeros((s["n_clusters"], f["n_clusters"]), dtype=int)
    np.add.at(table, (raw, fused), 1)
    assert table.tolist() == f["crosstab"]
    entry = s["convergence"]["fused_clusters"]
    assert f["per_draw"]["convergence"] == entry
    html = (out / "report.html").read_text()
    assert "Fused clusters beside the raw partition" in html
    assert "fused clusters (per draw)" in html
    assert "raw partition of the <b>exact posterior</b>" in html and "K grows with N" in html

    assert entry["draws"] == "every kept draw (stored labels)" and entry["judged"] is True
    assert entry["converged"]


@pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib (dpclust[plot])")
def test_coarsening_auto_report_draws_the_calibration_and_says_which_answer(tmp_path,
                                                                           capsys):
    out = tmp_path / "c"
    status, _, err = run(capsys, "fit", "--coarsening", "auto", "--n-iter", "40",
                         "--no-progress", "--out", out)
    assert status == 0, err
    s = summary_of(out)
    co = s["coarsening"]
    grid = co["calibration"]
    assert co["chosen_by"] == "elbow" and co["alpha_c"] == grid["chosen"] in grid["alpha_c"]
    assert "fused" not in s and "fused_clusters" not in s["convergence"]
    assert (out / "labels.csv").read_text().splitlines()[0] == "label,certainty"
    assert (out / "calibration.png").read_bytes().startswith(b"\x89PNG")
    html = (out / "report.html").read_text()
    assert 'id="fig-calibration"' in html and "Calibration grid" in html
    lead = html.split('<p class="lead">')[1].split("</p>")[0]
    zeta = co["alpha_c"] / (co["alpha_c"] + 1500)
    assert (f"This is the <b>coarsened posterior</b> (Miller &amp; Dunson 2019; "
            f"α<sub>c</sub> = {co['alpha_c']:g}, ζ = {zeta:.2g}, chosen at the elbow of fit "
            "against complexity)") in lead
    assert (f"it tolerates a misfit of about {1 / co['alpha_c']:.2g} nats per point between "
            "the data and the gaussian family") in lead
    assert "so K grows with N; here the 1,500 points count as ζN ≈" in lead
    assert "alpha_c (coarsening)" in html


# --------------------------------------------------------------------------------------------
# data formats


def _table_files(tmp_path, X):
    csv_header = write_csv(tmp_path / "with_header.csv", X, header=["a", "b"])
    csv_plain = write_csv(tmp_path / "plain.csv", X)
    npy = tmp_path / "x.npy"
    np.save(npy, X)
    return {"csv-header": csv_header, "csv-plain": csv_plain, "npy": npy}


@pytest.mark.parametrize("which", ["csv-header", "csv-plain", "npy", "parquet"])
def test_fit_dense_formats(tmp_path, blobs, capsys, which):
    X, _ = blobs
    if which == "parquet":
        pd = pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
        path = tmp_path / "x.parquet"
        pd.DataFrame(X, columns=["a", "b"]).to_parquet(path)
    else:
        path = _table_files(tmp_path, X)[which]
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", path, *FAST, "--out", out)
    assert status == 0, err
    assert len(read_labels(out)) == 60
    s = summary_of(out)
    assert s["data"]["source"] == str(path.absolute())
    assert s["data"]["n_samples"] == 60 and s["data"]["n_features"] == 2
    assert "metrics" not in s
    assert json.loads((out / "run.json").read_text())["config"]["data"] == str(path.absolute())


def test_fit_npz_counts_with_vocabulary(tmp_path, docs, capsys):
    X, _ = docs
    data = tmp_path / "counts.npz"
    sp.save_npz(data, X)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(f"word{i}" for i in range(X.shape[1])) + "\n")
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, "--family", "multinomial", "--vocab", vocab,
                         "--concentration", "0.5", *FAST, "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["data"]["format"] == "npz" and s["data"]["n_features"] == 30
    assert s["settings"]["concentration"] == 0.5
    top = s["cluster_params"]["top_words"]
    assert len(top) == s["n_clusters"] and all(len(t) == 10 for t in top)
    assert all(w.startswith("word") for t in top for w in t)
    assert "probabilities" not in s["cluster_params"]  # no K x V dump


def test_fit_docword_counts(tmp_path, docs, capsys):
    X, y = docs
    data = write_docword(tmp_path / "docword.test.txt", X)
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, "--family", "multinomial", *FAST, "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["data"]["format"] == "docword" and s["data"]["n_samples"] == 40
    top = s["cluster_params"]["top_words"]
    assert all(isinstance(w, int) and 0 <= w < 30 for t in top for w in t)


def test_multinomial_demo(tmp_path, capsys):
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", "--family", "multinomial", *FAST, "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["data"]["n_samples"] == 500 and "metrics" in s


# --------------------------------------------------------------------------------------------
# --truth and --columns


def test_truth_column_by_name_gives_metrics(tmp_path, blobs, capsys):
    X, y = blobs
    names = np.array(["red", "blue"])[y]
    data = write_csv(tmp_path / "t.csv", X, header=["a", "b", "species"], extra=names)
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, "--truth", "species", *FAST, "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["data"]["n_features"] == 2 and s["data"]["columns"] == ["a", "b"]
    labels = labels_of(out)
    assert s["metrics"]["nmi"] == pytest.approx(nmi(labels, names))
    assert s["metrics"]["ari"] == pytest.approx(ari(labels, names))


def test_truth_column_by_index_without_header_and_columns(tmp_path, blobs, capsys):
    X, y = blobs
    table = np.column_stack([y, X, np.zeros(len(y))])  # label first, a useless last column
    data = write_csv(tmp_path / "t.csv", table)
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, "--truth", "0", "--columns", "1,2", *FAST,
                         "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["data"]["n_features"] == 2
    assert s["metrics"]["ari"] == pytest.approx(ari(labels_of(out), y))


@pytest.mark.skipif(not HAVE_ARROW, reason="needs pyarrow (dpclust[parquet])")
def test_truth_column_in_parquet(tmp_path, blobs, capsys):
    pd = pytest.importorskip("pandas")
    X, y = blobs
    path = tmp_path / "t.parquet"
    pd.DataFrame({"a": X[:, 0], "label": y, "b": X[:, 1]}).to_parquet(path)
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", path, "--truth", "label", *FAST, "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["data"]["columns"] == ["a", "b"] and "nmi" in s["metrics"]


def test_columns_by_name(tmp_path, blobs, capsys):
    X, _ = blobs
    data = write_csv(tmp_path / "t.csv", np.column_stack([X, X[:, 0]]), header=["a", "b", "c"])
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, "--columns", "c,a", *FAST, "--out", out)
    assert status == 0, err
    assert summary_of(out)["data"]["columns"] == ["c", "a"]


# --------------------------------------------------------------------------------------------
# checkpoint and resume


def test_resume_gives_the_labels_of_an_uninterrupted_run(tmp_path, blobs, capsys):
    X, _ = blobs
    data = tmp_path / "x.npy"
    np.save(data, X)
    common = ["fit", data, "--n-iter", "30", "--random-state", "3", "--checkpoint-every", "5",
              "--no-progress", "--no-plots"]
    full, part = tmp_path / "full", tmp_path / "part"
    status, _, err = run(capsys, *common, "--out", full)
    assert status == 0, err
    assert (full / "checkpoint.npz").is_file()

    status, _, err = run(capsys, *common, "--stop-after", "12", "--out", part)
    assert status == 130
    assert "interrupted" in err and f"dpclust resume {part}" in err
    assert "saved at iteration 12" in err
    assert not (part / "labels.csv").exists() and (part / "run.json").is_file()

    status, _, err = run(capsys, "resume", part, "--no-progress")
    assert status == 0, err
    assert (part / "labels.csv").read_bytes() == (full / "labels.csv").read_bytes()
    trace_full = np.loadtxt(full / "trace.csv", delimiter=",", skiprows=1)
    trace_part = np.loadtxt(part / "trace.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(trace_full[:, :4], trace_part[:, :4])
    s = summary_of(part)
    assert s["settings"]["resumed_from_iteration"] == 12 and s["settings"]["n_iter"] == 30


def test_predict_and_score_new_rows_with_the_saved_model(tmp_path, blobs, capsys):
    """fit writes model.npz; predict and score read new rows as fit read its data and give
    what DPMixture.load(...).predict_proba / score_samples give."""
    from dpclust import DPMixture

    X, _ = blobs
    data = write_csv(tmp_path / "x.csv", X)
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *FAST, "--out", out)
    assert status == 0, err
    model = DPMixture.load(out / "model.npz")
    new = write_csv(tmp_path / "new.csv", X[:7] + 0.1)
    status, stdout, err = run(capsys, "predict", out, new)
    assert status == 0, err
    lines = stdout.strip().splitlines()
    assert lines[0] == "label,probability" and len(lines) == 8
    proba = model.predict_proba(X[:7] + 0.1)
    got = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    np.testing.assert_array_equal(got[:, 0], proba.argmax(axis=1))
    np.testing.assert_allclose(got[:, 1], proba.max(axis=1), rtol=1e-5)
    status, _, err = run(capsys, "score", out, new, "--out", tmp_path / "s.csv")
    assert status == 0, err
    dens = np.loadtxt(tmp_path / "s.csv", skiprows=1)
    np.testing.assert_allclose(dens, model.score_samples(X[:7] + 0.1))
    status, _, err = run(capsys, "predict", tmp_path / "nowhere", new)
    assert status == 2 and "run.json" in err
    (out / "model.npz").write_bytes(b"junk")
    status, _, err = run(capsys, "score", out, new)
    assert status == 2 and "cannot be read" in err


def test_predict_rankings(tmp_path, capsys):
    data = write_rankings(tmp_path / "votes.csv")
    out = tmp_path / "o"
    assert run(capsys, "fit", data, *MALLOWS_FAST, "--out", out, "--no-plots")[0] == 0
    status, stdout, err = run(capsys, "predict", out, data)
    assert status == 0, err
    labels = [int(line.split(",")[0]) for line in stdout.strip().splitlines()[1:]]
    assert len(labels) == 24 and min(labels) >= 0


def test_resume_with_a_moved_data_file(tmp_path, blobs, capsys):
    """A moved data file: resume names --data; --data with the same content continues
    (the chain is the uninterrupted one); different content is refused by fingerprint."""
    X, _ = blobs
    data = tmp_path / "x.npy"
    np.save(data, X)
    common = ["--n-iter", "16", "--random-state", "3", "--checkpoint-every", "4", "--no-progress",
              "--no-plots"]
    full, part = tmp_path / "full", tmp_path / "part"
    assert run(capsys, "fit", data, *common, "--out", full)[0] == 0
    assert run(capsys, "fit", data, *common, "--stop-after", "6", "--out", part)[0] == 130
    moved = tmp_path / "elsewhere.npy"
    data.rename(moved)
    status, _, err = run(capsys, "resume", part, "--no-progress")
    assert status == 2 and "is gone" in err and "--data NEWPATH" in err
    other = tmp_path / "other.npy"
    np.save(other, X + 1.0)
    status, _, err = run(capsys, "resume", part, "--no-progress", "--data", other)
    assert status == 2 and "fingerprints do not match" in err
    status, _, err = run(capsys, "resume", part, "--no-progress", "--data", moved)
    assert status == 0, err
    assert (part / "labels.csv").read_bytes() == (full / "labels.csv").read_bytes()


def test_resume_extends_a_finished_run(tmp_path, blobs, capsys):
    X, _ = blobs
    data = write_csv(tmp_path / "x.csv", X)
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *FAST, "--checkpoint-every", "4", "--out", out)
    assert status == 0, err
    status, _, err = run(capsys, "resume", out, "--n-iter", "20", "--no-progress")
    assert status == 0, err
    assert summary_of(out)["settings"]["n_iter"] == 20
    assert len((out / "trace.csv").read_text().splitlines()) == 21
    # a later plain resume knows the run was extended (run.json still says 12)
    status, _, err = run(capsys, "resume", out, "--no-progress")
    assert status == 0, err
    assert summary_of(out)["settings"]["n_iter"] == 20
    assert len((out / "trace.csv").read_text().splitlines()) == 21


def test_ctrl_c_exits_130_and_names_the_resume_command(tmp_path, blobs, capsys, monkeypatch):
    X, _ = blobs
    data = tmp_path / "x.npy"
    np.save(data, X)

    def interrupt(self, X, y=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(dpclust.DPMixture, "fit", interrupt)
    status, _, err = run(capsys, "fit", data, *FAST, "--out", tmp_path / "a")
    assert status == 130 and "interrupted" in err and "resume" not in err
    status, _, err = run(capsys, "fit", data, *FAST, "--checkpoint-every", "5", "--out",
                         tmp_path / "b")
    assert status == 130 and "interrupted" in err and "no checkpoint was written yet" in err
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------------
# errors: one line on stderr, exit status 2


def _bad_inputs(tmp_path):
    def write(name, text):
        (tmp_path / name).write_text(text)
        return tmp_path / name

    neg = tmp_path / "neg.npy"
    np.save(neg, np.array([[1.0, -2.0], [0.0, 3.0]]))
    return {
        "nan": (["fit", write("nan.csv", "a,b\n1,2\nnan,4\n"), "--family", "gaussian"], "NaN"),
        "inf": (["fit", write("inf.csv", "1,2\n3,inf\n")], "infinite"),
        "overflow": (["fit", write("big.csv", "1,2\n1e300,3\n2,5\n")], "Rescale"),
        "underflow": (["fit", write("tiny.csv", "1e-300,2\n3e-300,3\n2e-300,5\n")],
                      "underflows"),
        "strings": (["fit", write("words.csv", "name\nalice\nbob\n"), "--family", "gaussian"],
                    "non-numeric"),
        "empty": (["fit", write("empty.csv", "")], "empty"),
        "missing": (["fit", tmp_path / "nope.csv"], "no such file"),
        "directory": (["fit", tmp_path], "directory"),
        "negative-counts": (["fit", neg, "--family", "multinomial"], "negative"),
        "fractional-counts": (["fit", write("frac.csv", "1,2.5\n0,3\n"), "--family",
                               "multinomial"], "non-integer"),
        "family": (["fit", "--family", "lognormal"], "invalid choice: 'lognormal'"),
        "sampler": (["fit", "--sampler", "slice"], "invalid choice: 'slice'"),
        "alpha-word": (["fit", "--alpha", "big"], "--alpha"),
        "alpha-negative": (["fit", "--alpha", "-1"], "positive number"),
        "alpha-gamma": (["fit", "--alpha", "gamma:1"], "gamma:SHAPE,RATE"),
        "alpha-gamma-zero": (["fit", "--alpha", "gamma:0,1"], "shape and rate"),
        "burn-in": (["fit", "--n-iter", "10", "--burn-in", "10"], "--burn-in"),
        "iters": (["fit", "--n-iter", "0"], "--n-iter"),
        "truth-on-demo": (["fit", "--truth", "label"], "DATA file"),
        "no-truth-column": (["fit", write("t.csv", "a,b\n1,2\n"), "--truth", "c"],
                            "no column named 'c'"),
        "vocab-size": (["fit", "--family", "multinomial", "--vocab", write("v.txt", "a\nb\n")],
                       "2 words"),
        "decimal-point-given": (["fit", write("eu.csv", "1,5;2\n3;4,25\n"), "--decimal", "."],
                                "--decimal ,"),
        "mixed-separators": (["fit", write("mix.csv", "1,2\n3;4\n5,6\n")],
                             "is the file separated by semicolons?"),
        "typo-first-row": (["fit", write("typo.csv", "1,2x\n3,4\n5,6\n"), "--family", "gaussian"],
                           "line 1 mixes numbers and text: column 2 holds '2x'"),
        "sep-on-demo": (["fit", "--sep", "tab"], "the bundled data need none"),
        "decimal-on-rankings": (["fit", write("r.csv", "a,b\nb,a\n"), "--family", "mallows",
                                 "--decimal", ","], "--decimal applies to tables of numbers"),
        "sep-choice": (["fit", "--sep", "pipe"], "invalid choice: 'pipe'"),
        "resume-no-checkpoint": (["resume", tmp_path], "no checkpoint"),
        "resume-missing-dir": (["resume", tmp_path / "nowhere"], "no such directory"),
        "no-command": ([], "required"),
    }


BAD = ["nan", "inf", "overflow", "underflow", "strings", "empty", "missing", "directory", "negative-counts",
       "fractional-counts", "family", "sampler", "alpha-word", "alpha-negative", "alpha-gamma",
       "alpha-gamma-zero", "burn-in", "iters", "truth-on-demo", "no-truth-column", "vocab-size",
       "decimal-point-given", "mixed-separators", "typo-first-row", "sep-on-demo",
       "decimal-on-rankings", "sep-choice", "resume-no-checkpoint", "resume-missing-dir", "no-command"]


def test_spreadsheet_files_with_decimal_commas_are_read_and_said_so(tmp_path, blobs, capsys):
    """A semicolon-separated file with decimal commas named .csv, as spreadsheets in many
    locales save one: read as meant, the summary and the report say how, --sep/--decimal
    override, and predict reads new rows the same way."""
    X, _ = blobs
    text = "x;y\n" + "".join(f"{a:.6f};{b:.6f}\n".replace(".", ",") for a, b in X)
    path = tmp_path / "eu.csv"
    path.write_text(text)
    out = tmp_path / "out"
    status, _, err = run(capsys, "fit", path, "--out", out, *FAST)
    assert status in (0, 3), err
    data = summary_of(out)["data"]
    assert data["read_as"] == "separated by semicolons, decimal commas (found in the file)"
    assert (data["separator"], data["decimal"]) == ("semicolon", ",")
    assert data["columns"] == ["x", "y"] and data["n_samples"] == len(X)
    assert "read as separated by semicolons" in (out / "report.html").read_text()
    tab = tmp_path / "new.txt"
    tab.write_text("".join(f"{a:.6f}\t{b:.6f}\n".replace(".", ",") for a, b in X[:5]))
    status, stdout, err = run(capsys, "predict", out, tab, "--sep", "tab", "--decimal", ",")
    assert status == 0, err
    assert len(stdout.splitlines()) == 6
    status, _, err = run(capsys, "fit", path, "--out", tmp_path / "o2", "--sep", "comma",
                         *FAST)
    assert status == 2 and "holds semicolons" in err


def test_no_warning_reaches_the_user_on_awkward_but_valid_data(tmp_path, capsys):
    """Valid data at the edges (a constant column, identical points, values near the scale
    limits, a single row) fit, predict and score with every warning an error."""
    cases = {"const.csv": "1,5\n2,5\n3,5\n10,5\n11,5\n", "same.csv": "1,1\n1,1\n1,1\n",
             "huge.csv": "1e90,2\n-1e90,3\n0,4\n", "tiny.csv": "1e-90,2e-90\n3e-90,1e-90\n",
             "one.csv": "1,2\n"}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        out = tmp_path / f"out_{name}"
        for argv in (["fit", path, "--out", out, "--n-iter", "20", "--no-progress"],
                     ["predict", out, path], ["score", out, path]):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                warnings.filterwarnings("ignore", message=".*has not converged")
                status, _, err = run(capsys, *argv)
            assert status == 0, (name, argv[0], err)
            assert "Warning" not in err and "Traceback" not in err, err


def test_summary_is_strict_json_with_undefined_figures(tmp_path):
    """NaN and infinities become null: the file parses with a strict reader."""
    from dpclust.cli import _write_json

    path = tmp_path / "s.json"
    _write_json(path, {"rhat": float("nan"), "ess": np.inf, "a": np.array([1.0, -np.inf]),
                       "n": np.int64(3), "nested": {"x": [np.float32("nan"), 2.0]}})
    back = json.loads(path.read_text(), parse_constant=pytest.fail)
    assert back == {"rhat": None, "ess": None, "a": [1.0, None], "n": 3,
                    "nested": {"x": [None, 2.0]}}


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_one_line_and_exit_status_2(tmp_path, capsys, case):
    (tmp_path / "run.json").write_text(json.dumps({"config": {"data": "demo"}}))
    argv, expected = _bad_inputs(tmp_path)[case]
    out = tmp_path / "out"
    extra = ["--out", out, "--no-progress"] if argv and argv[0] == "fit" else []
    status, _, err = run(capsys, *argv, *extra)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpclust: error: ")
    assert expected in lines[0]
    assert "Traceback" not in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs a non-root POSIX user for an unreadable file")
def test_unreadable_file(tmp_path, capsys):
    data = tmp_path / "secret.csv"
    data.write_text("1,2\n3,4\n")
    data.chmod(0)
    try:
        status, _, err = run(capsys, "fit", data, *FAST, "--out", tmp_path / "o")
    finally:
        data.chmod(0o600)
    assert status == 2 and err.startswith("dpclust: error: ") and len(err.splitlines()) == 1


def test_unwritable_output(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    status, _, err = run(capsys, "fit", *FAST, "--out", tmp_path / "file")
    assert status == 2 and "not a directory" in err and len(err.splitlines()) == 1


# --------------------------------------------------------------------------------------------
# the module entry point


def test_python_m_dpclust_version():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(SRC), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "dpclust", "--version"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 0
    assert result.stdout.strip() == f"dpclust {dpclust.__version__}"


def test_help_has_examples(capsys):
    status, out, _ = run(capsys, "fit", "--help")
    assert status == 0 and "examples:" in out and "--checkpoint-every" in out
    assert "--stop-after" not in out  # hidden, for tests
    assert cli.build_parser().prog == "dpclust"


def test_kmeans_start_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", *FAST, "--init", "kmeans", "--init-clusters", "3",
                         "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["settings"]["init"] == "kmeans" and s["metrics"]["nmi"] > 0.9
    status, _, err = run(capsys, "fit", "--init", "spectral")
    assert status == 2 and "spectral" in err


# --------------------------------------------------------------------------------------------
# the distance dependent CRP (--model ddcrp)


def write_timeline(path: Path, *, dates: bool = False, n: int = 40):
    """Two groups of 2-D points one after the other in time; a header row
    ``x,y,when,group`` (``when``: 0, 1, 2, ... or days from 2024-01-01)."""
    X, _ = make_gaussian_mixture(n_samples=n, n_clusters=1, n_features=2, random_state=2)
    group = (np.arange(n) >= n // 2).astype(int)
    X = X + 6.0 * group[:, None]
    when = [f"2024-01-{1 + i // 2:02d}" if dates else str(i) for i in range(n)]
    lines = ["x,y,when,group"] + [f"{a!r},{b!r},{w},{g}" for (a, b), w, g in
                                  zip(X.tolist(), when, group)]
    path.write_text("\n".join(lines) + "\n")
    return path


def read_links(out: Path) -> np.ndarray:
    lines = (out / "links.csv").read_text().splitlines()
    assert lines[0] == "customer,link"
    rows = np.array([[int(v) for v in line.split(",")] for line in lines[1:]])
    np.testing.assert_array_equal(rows[:, 0], np.arange(len(rows)))
    return rows[:, 1]


DDCRP_FAST = ["--model", "ddcrp", "--n-iter", "12", "--no-progress"]


@pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib (dpclust[plot])")
@pytest.mark.parametrize("dates", [False, True], ids=["numbers", "dates"])
def test_ddcrp_fit_with_positions(tmp_path, capsys, dates):
    data = write_timeline(tmp_path / "t.csv", dates=dates)
    out = tmp_path / "o"
    status, stdout, err = run(capsys, "fit", data, *DDCRP_FAST, "--positions", "when",
                              "--decay", "window:4", "--sequential", "--truth", "group",
                              "--out", out)
    assert status == 0, err
    assert "tables in 40 points" in stdout and "links.csv" in stdout
    labels, links = read_labels(out), read_links(out)
    assert len(labels) == len(links) == 40
    assert (links <= np.arange(40)).all()  # sequential: itself or an earlier row
    s = summary_of(out)
    assert s["settings"]["model"] == "ddcrp" and s["settings"]["decay"] == "window:4"
    assert s["settings"]["sequential"] is True and s["settings"]["positions"] == "when"
    assert "init_clusters" not in s["settings"]
    assert s["data"]["columns"] == ["x", "y"] and s["data"]["n_features"] == 2
    dd = s["ddcrp"]
    assert dd["decay_function"] == "f(d) = 1[d < 4]" and dd["sequential"] is True
    assert dd["n_tables"] == s["n_clusters"] == labels.max() + 1
    assert dd["n_tables_last_iteration"] == dd["self_links_last_iteration"]
    if dates:
        assert "days" in dd["distances"]
        assert s["data"]["positions_range"] == ["2024-01-01T00:00:00", "2024-01-20T00:00:00"]
    else:
        assert s["data"]["positions_range"] == [0.0, 39.0]
    assert (out / "tables.png").is_file()
    html = (out / "report.html").read_text()
    assert 'id="fig-tables"' in html and "Tables against position" in html
    assert "<b>window:4</b> decay" in html and "<b>sequential</b>" in html
    run_json = json.loads((out / "run.json").read_text())["config"]
    assert run_json["model"] == "ddcrp" and run_json["sampler"] == "ddcrp"


def test_ddcrp_with_a_sparse_distance_matrix(tmp_path, blobs, capsys):
    X, _ = blobs
    data = tmp_path / "x.npy"
    np.save(data, X)
    i = np.arange(len(X))
    near = np.abs(i[:, None] - i[None, :]) <= 2
    sp.save_npz(tmp_path / "d.npz", sp.csr_matrix(np.where(near, 1.0, 0.0)))
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *DDCRP_FAST, "--no-plots", "--distances",
                         tmp_path / "d.npz", "--decay", "exponential:1", "--out", out)
    assert status == 0, err
    links = read_links(out)
    assert (np.abs(links - i) <= 2).all()  # only the stored pairs may link
    s = summary_of(out)
    assert "sparse" in s["ddcrp"]["distances"] and s["data"]["distance_pairs"] == near.sum()
    assert s["ddcrp"]["sequential"] is False


def test_ddcrp_constant_decay_needs_no_distances(tmp_path, blobs, capsys):
    X, _ = blobs
    data = write_csv(tmp_path / "x.csv", X, header=["a", "b", "t"], extra=np.arange(len(X)))
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *DDCRP_FAST, "--no-plots", "--columns", "a,b",
                         "--out", out)
    assert status == 0, err
    assert summary_of(out)["ddcrp"]["decay"] == "constant"
    # no fused clusters for the ddCRP's tables, and the summary says why
    fused = summary_of(out)["fused"]
    assert fused["computed"] is False and "ddCRP" in fused["reason"]
    assert (out / "labels.csv").read_text().splitlines()[0] == "label,certainty"
    # positions with the constant decay work, with a warning that they change nothing
    status, _, err = run(capsys, "fit", data, *DDCRP_FAST, "--no-plots", "--positions", "t",
                         "--out", out)
    assert status == 0, err
    assert any("constant decay" in w for w in summary_of(out)["warnings"])


def test_ddcrp_resume_gives_the_run_of_an_uninterrupted_chain(tmp_path, capsys):
    data = write_timeline(tmp_path / "t.csv", dates=True)
    common = ["fit", data, "--model", "ddcrp", "--positions", "when", "--decay",
              "logistic:3", "--sequential", "--n-iter", "16", "--random-state", "4",
              "--checkpoint-every", "4", "--no-progress", "--no-plots"]
    full, part = tmp_path / "full", tmp_path / "part"
    status, _, err = run(capsys, *common, "--out", full)
    assert status == 0, err
    status, _, err = run(capsys, *common, "--stop-after", "6", "--out", part)
    assert status == 130 and f"dpclust resume {part}" in err
    status, _, err = run(capsys, "resume", part, "--no-progress")
    assert status == 0, err
    for name in ("labels.csv", "links.csv"):
        assert (part / name).read_bytes() == (full / name).read_bytes(), name
    np.testing.assert_array_equal(
        np.loadtxt(full / "trace.csv", delimiter=",", skiprows=1)[:, :4],
        np.loadtxt(part / "trace.csv", delimiter=",", skiprows=1)[:, :4])
    s = summary_of(part)
    assert s["settings"]["resumed_from_iteration"] == 6 and s["ddcrp"]["decay"] == "logistic:3"
    # extending it keeps the model
    status, _, err = run(capsys, "resume", part, "--n-iter", "20", "--no-progress")
    assert status == 0, err
    assert summary_of(part)["settings"]["n_iter"] == 20 and len(read_links(part)) == 40


def _ddcrp_bad_inputs(tmp_path):
    data = write_timeline(tmp_path / "t.csv")
    backwards = tmp_path / "b.csv"
    lines = data.read_text().splitlines()
    backwards.write_text("\n".join([lines[0], *lines[:0:-1]]) + "\n")
    np.save(tmp_path / "d.npy", np.zeros((3, 3)))
    dd = ["--model", "ddcrp"]
    return {
        "decay-unknown": ([data, *dd, "--decay", "gaussian:3"], "unknown decay 'gaussian'"),
        "decay-number": ([data, *dd, "--decay", "window:wide"], "'wide' is not a number"),
        "decay-arity": ([data, *dd, "--decay", "window"], "Window takes 1 parameter"),
        "decay-negative": ([data, *dd, "--decay", "exponential:-2"], "positive"),
        "positions-missing": ([data, *dd, "--decay", "window:3", "--positions", "time"],
                              "no column named 'time'"),
        "no-distances": ([data, *dd, "--decay", "window:3"],
                         "--decay window:3 needs distances between the rows"),
        "both": ([data, *dd, "--positions", "when", "--distances", tmp_path / "d.npy"],
                 "not both"),
        "sampler": ([data, *dd, "--sampler", "gibbs"],
                    "--sampler does not apply to --model ddcrp"),
        "init": ([data, *dd, "--init", "kmeans"], "--init does not apply"),
        "dp-decay": ([data, "--decay", "window:3"], "--decay applies only to --model ddcrp"),
        "dp-positions": ([data, "--positions", "when"], "--positions applies only"),
        "positions-on-demo": ([*dd, "--positions", "when"], "DATA file"),
        "unsorted": ([backwards, *dd, "--decay", "window:3", "--positions", "when",
                      "--sequential"], "must be in non-decreasing order"),
        "distances-size": ([data, *dd, "--columns", "x,y", "--decay", "window:3",
                            "--distances", tmp_path / "d.npy"],
                           "3 x 3 distance matrix, but the data have 40 rows"),
    }


@pytest.mark.parametrize("case", ["decay-unknown", "decay-number", "decay-arity",
                                  "decay-negative", "positions-missing", "no-distances",
                                  "both", "sampler", "init", "dp-decay", "dp-positions",
                                  "positions-on-demo", "unsorted", "distances-size"])
def test_ddcrp_bad_input_is_one_line_and_exit_status_2(tmp_path, capsys, case):
    argv, expected = _ddcrp_bad_inputs(tmp_path)[case]
    status, _, err = run(capsys, "fit", *argv, "--out", tmp_path / "out", "--no-progress",
                         "--n-iter", "4")
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpclust: error: "), err
    assert expected in lines[0]


# --------------------------------------------------------------------------------------------
# rankings (--family mallows)


ITEMS = ("ash", "birch", "cedar", "elm", "fir")
MALLOWS_FAST = ["--family", "mallows", "--n-iter", "8", "--no-progress"]


def write_rankings(path: Path, *, n: int = 24, ids: bool = False, seed: int = 0):
    """``n`` top-t rankings of :data:`ITEMS`, best first, one a row: half near the order
    ash > birch > ..., half near its reverse, each of length 2 to 4 (empty cells after).
    With ``ids``, items are written as 1-based ids and the row is padded with ``0``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        order = list(range(5)) if i % 2 == 0 else list(range(4, -1, -1))
        j = int(rng.integers(0, 4))
        order[j], order[j + 1] = order[j + 1], order[j]  # one swap of neighbours
        t = int(rng.integers(2, 5))
        if ids:
            cells = [str(k + 1) for k in order[:t]] + ["0"] * (5 - t)
        else:
            cells = [ITEMS[k] for k in order[:t]] + [""] * (5 - t)
        rows.append(",".join(cells))
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib (dpclust[plot])")
def test_mallows_fit_writes_the_rankings_report(tmp_path, capsys):
    data = write_rankings(tmp_path / "votes.csv")
    out = tmp_path / "o"
    status, stdout, err = run(capsys, "fit", data, *MALLOWS_FAST, "--out", out)
    assert status == 0, err
    assert "clusters in 24 rankings" in stdout or "cluster in 24 rankings" in stdout
    labels = read_labels(out)
    assert len(labels) == 24
    s = summary_of(out)
    assert s["settings"]["family"] == "mallows"
    assert s["settings"]["sampler"] == "auto (slice-gibbs)"
    assert s["settings"]["nu"] == 1.0 and s["settings"]["r"] == 1.0
    assert s["data"]["n_items"] == 5 and s["data"]["n_samples"] == 24
    assert s["data"]["max_length"] == 4 and "n_features" not in s["data"]
    params = s["cluster_params"]
    K = s["n_clusters"]
    assert len(params["top_items"]) == len(params["theta"]) == K
    assert all(sorted(row) == sorted(ITEMS) for row in params["top_items"])
    assert all(len(row) == 4 for row in params["theta"])  # one theta per rank 1..4
    m = s["mallows"]
    assert m["exact"] is True and m["posterior"].startswith("exact MCMC")
    assert m["n_items"] == 5 and m["ranks_with_theta"] == 4 and len(m["theta_by_rank"]) == 4
    sizes = np.bincount(labels, minlength=K)
    expected = sizes @ np.array(params["theta"]) / sizes.sum()
    np.testing.assert_allclose(m["theta_by_rank"], expected, rtol=1e-3)
    for name in ("trace.png", "size_distribution.png", "theta_by_rank.png", "similarity.png",
                 "k_posterior.png"):
        assert (out / name).is_file(), name
    assert not (out / "clusters.png").exists() and not (out / "cluster_sizes.png").exists()
    html = (out / "report.html").read_text()
    assert 'id="table1"' in html and "Largest clusters" in html
    assert 'id="fig-size_distribution"' in html and 'id="fig-theta_by_rank"' in html
    assert "in <b>24 rankings</b> (of 5 items" in html
    assert "θ<sub>1</sub>" in html and "central ranking (first items)" in html
    assert html.count("data:image/png;base64,") == 5



def test_fit_reads_standard_input(tmp_path, capsys, monkeypatch):
    """``fit -`` reads a CSV table from stdin, keeps it in the run folder, and an empty
    stdin is one clear line."""
    import io as _io

    rng = np.random.default_rng(0)
    rows = np.vstack([rng.normal(0, 0.3, (20, 2)), rng.normal(4, 0.3, (20, 2))])
    text = "x,y\n" + "\n".join(f"{a:.4f},{b:.4f}" for a, b in rows) + "\n"
    monkeypatch.setattr("sys.stdin", _io.TextIOWrapper(_io.BytesIO(text.encode())))
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", "-", "--n-iter", "6", "--no-progress", "--no-plots",
                         "--out", out)
    assert status == 0, err
    assert (out / "stdin.csv").read_text() == text
    assert summary_of(out)["data"]["n_samples"] == 40
    monkeypatch.setattr("sys.stdin", _io.TextIOWrapper(_io.BytesIO(b"")))
    status, _, err = run(capsys, "fit", "-", "--out", tmp_path / "e", "--no-progress")
    assert status == 2 and "standard input is empty" in err


def test_mallows_ids_from_one_without_index_base(tmp_path, capsys):
    """Ids 1..n and no --index-base: read as 1-based, said in the summary, and no phantom
    item 0; a gap in the ids is refused naming --items."""
    data = tmp_path / "ids.csv"
    data.write_text("1,3,2\n2,1,3\n3,1\n1,2\n2,3\n3,2,1\n")
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *MALLOWS_FAST, "--out", out, "--no-plots")
    assert status == 0, err
    s = summary_of(out)
    assert s["data"]["n_items"] == 3 and "item ids from 1, inferred" in s["data"]["format"]
    assert any("--index-base" in w for w in s["warnings"])
    assert all(sorted(b["central_ranking"]) == ["1", "2", "3"] for b in s["mallows"]["blocs"])
    gap = tmp_path / "gap.csv"
    gap.write_text("1,4\n2,1\n")
    status, _, err = run(capsys, "fit", gap, *MALLOWS_FAST, "--out", tmp_path / "g")
    assert status == 2 and "no ranking uses the id 3" in err and "--items FILE" in err


def test_mallows_blocs_and_alpha_sensitivity(tmp_path, capsys):
    """The summary lists the clusters with >= 1 % of the rankings largest first, with the
    near-uniform flag by its rule; --alpha-sensitivity tabulates K for other alphas."""
    from dpclust.families.mallows import log_psi

    data = write_rankings(tmp_path / "votes.csv")
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *MALLOWS_FAST, "--out", out, "--no-plots",
                         "--alpha-sensitivity", "0.05", "gamma:1,1")
    assert status == 0, err
    s = summary_of(out)
    blocs = s["mallows"]["blocs"]
    sizes = np.bincount(read_labels(out))
    assert [b["rankings"] for b in blocs] == sorted(sizes[sizes >= 0.24], reverse=True)
    for b in blocs:
        assert sorted(b["central_ranking"]) == sorted(ITEMS)
        p_top = float(np.exp(-log_psi(b["theta_1"], 4)))
        assert b["top_item_probability"] == pytest.approx(p_top, rel=1e-3)
        assert b["near_uniform"] == (p_top < 2 / 5)
    rows = s["alpha_sensitivity"]
    assert [r["alpha"] for r in rows] == [1.0, 0.05, "gamma:1,1"]
    assert rows[0]["this_run"] and "seconds" in rows[1]
    for r in rows:
        assert r["n_clusters"] >= r["clusters_1pct"] >= 1 and np.isfinite(r["log_likelihood"])
    status, _, err = run(capsys, "fit", "--model", "ddcrp", "--alpha-sensitivity", "0.5",
                         "--out", tmp_path / "d", "--n-iter", "2")
    assert status == 2 and "--model dp" in err


def test_mallows_ids_with_missing_marker_items_and_prior(tmp_path, capsys):
    data = write_rankings(tmp_path / "ids.csv", ids=True)
    names = tmp_path / "names.txt"
    names.write_text("\n".join(ITEMS) + "\n")
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *MALLOWS_FAST, "--no-plots", "--missing", "0",
                         "--index-base", "1", "--items", names, "--sampler", "beta-gibbs",
                         "--nu", "2", "--r", "0.5", "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["settings"]["sampler"] == "beta-gibbs"
    assert s["settings"]["nu"] == 2.0 and s["settings"]["r"] == 0.5
    assert s["data"]["missing"] == ["0"] and s["data"]["items"] == str(names.absolute())
    assert all(sorted(row) == sorted(ITEMS) for row in s["cluster_params"]["top_items"])
    assert s["mallows"]["exact"] is False and "approximate" in s["mallows"]["posterior"]
    html = (out / "report.html").read_text()
    assert "The sampler is approximate</b> (Beta-Gibbs)" in html
    run_json = json.loads((out / "run.json").read_text())["config"]
    assert run_json["missing"] == ["0"] and run_json["index_base"] == 1
    # without --items the items are named as the file numbers them, from --index-base
    status, _, err = run(capsys, "fit", data, *MALLOWS_FAST, "--no-plots", "--missing", "0",
                         "--index-base", "1", "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert all(sorted(row) == ["1", "2", "3", "4", "5"] for row in s["cluster_params"]["top_items"])
    assert s["data"]["format"] == "rankings table (item ids from 1)"


def test_mallows_preflib_file_and_its_tie_warning(tmp_path, capsys):
    lines = ["# FILE NAME: trees.toi", "# DATA TYPE: toi", "# NUMBER ALTERNATIVES: 4"]
    lines += [f"# ALTERNATIVE NAME {k}: {name}" for k, name in enumerate(ITEMS[:4], 1)]
    lines += ["6: 1,2,3", "5: 4,3,2,1", "3: 2,1", "2: 3,{1,2}", "1: {1,4},2"]
    data = tmp_path / "trees.toi"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, *MALLOWS_FAST, "--no-plots", "--out", out)
    assert status == 0, err
    assert err.startswith("dpclust: warning: ") and "ties" in err
    s = summary_of(out)
    assert s["data"]["format"] == "PrefLib .toi" and s["data"]["n_items"] == 4
    assert s["data"]["n_samples"] == 16  # the order that begins with a tie is dropped
    assert set(s["cluster_params"]["top_items"][0]) == set(ITEMS[:4])
    assert any("ties" in w for w in s["warnings"])
    # gzipped, as PrefLib distributes them
    packed = tmp_path / "trees.toi.gz"
    packed.write_bytes(gzip.compress(data.read_bytes()))
    status, _, err = run(capsys, "fit", packed, *MALLOWS_FAST, "--no-plots", "--out", out)
    assert status == 0, err
    assert summary_of(out)["data"]["format"] == "PrefLib .toi"


def test_mallows_dataset_dublin_west(tmp_path, capsys):
    out = tmp_path / "o"
    status, stdout, err = run(capsys, "fit", "--dataset", "dublin-west", "--family", "mallows",
                              "--n-iter", "2", "--no-progress", "--no-plots", "--out", out)
    assert status == 0, err
    assert "in 29988 rankings" in stdout
    s = summary_of(out)
    assert s["settings"]["family"] == "mallows"
    assert s["data"]["source"] == "dublin-west" and s["data"]["n_items"] == 9
    from dpclust.datasets import DUBLIN_WEST_CANDIDATES

    assert s["cluster_params"]["top_items"][0][0] in DUBLIN_WEST_CANDIDATES
    assert set(s["mallows"]["blocs"][0]["central_ranking"]) == set(DUBLIN_WEST_CANDIDATES)
    assert len(read_labels(out)) == 29988
    assert json.loads((out / "run.json").read_text())["config"]["data"] == "dublin-west"


def test_subsample_fits_a_seeded_random_subset_and_resumes_it(tmp_path, blobs, capsys):
    """``--subsample N``: N rows drawn with --random-state, with their truth labels; a resumed run
    draws the same rows; the summary and the report say so; N at least the data: all rows,
    with a warning."""
    X, y = blobs
    data = tmp_path / "x.csv"
    write_csv(data, X, header=["a", "b", "label"], extra=y)
    common = ["fit", data, "--truth", "label", "--subsample", "25", "--n-iter", "20",
              "--random-state", "4", "--checkpoint-every", "5", "--no-progress", "--no-plots"]
    full, part = tmp_path / "full", tmp_path / "part"
    status, _, err = run(capsys, *common, "--out", full)
    assert status == 0, err
    s = summary_of(full)
    assert s["data"]["n_samples"] == 25
    assert s["data"]["subsample"] == {"n": 25, "of": 60, "seed": 4}
    assert len(read_labels(full)) == 25 and "nmi" in s["metrics"]
    assert "a random 25 of the 60, drawn with seed 4" in (full / "report.html").read_text()
    status, _, err = run(capsys, *common, "--stop-after", "7", "--out", part)
    assert status == 130
    status, _, err = run(capsys, "resume", part, "--no-progress")
    assert status == 0, err
    assert (part / "labels.csv").read_bytes() == (full / "labels.csv").read_bytes()

    out = tmp_path / "all"
    status, _, err = run(capsys, "fit", data, "--truth", "label", "--subsample", "60",
                         "--n-iter", "4", "--no-progress", "--no-plots", "--out", out)
    assert status == 0, err
    assert "not fewer than the 60 rows" in err
    assert summary_of(out)["data"]["n_samples"] == 60


def test_subsample_of_the_dublin_west_ballots(tmp_path, capsys):
    out = tmp_path / "o"
    status, stdout, err = run(capsys, "fit", "--dataset", "dublin-west", "--subsample", "300",
                              "--n-iter", "4", "--no-progress", "--no-plots", "--out", out)
    assert status == 0, err
    assert "in 300 rankings" in stdout
    s = summary_of(out)
    assert s["data"]["subsample"]["of"] == 29988 and len(read_labels(out)) == 300


def test_mallows_without_data_is_the_dublin_west_demo():
    args = cli.build_parser().parse_args(["fit", "--family", "mallows"])
    config = cli._config_from_args(args)
    assert config.data == "dublin-west" and config.family == "mallows"
    args = cli.build_parser().parse_args(["fit"])
    assert cli._config_from_args(args).data == "demo"
    assert cli._config_from_args(args).family == "auto"


def test_mallows_resume_gives_the_labels_of_an_uninterrupted_run(tmp_path, capsys):
    data = write_rankings(tmp_path / "votes.csv", n=30, seed=2)
    common = ["fit", data, "--family", "mallows", "--n-iter", "12", "--random-state", "5",
              "--checkpoint-every", "3", "--no-progress", "--no-plots"]
    full, part = tmp_path / "full", tmp_path / "part"
    status, _, err = run(capsys, *common, "--out", full)
    assert status == 0, err
    status, _, err = run(capsys, *common, "--stop-after", "7", "--out", part)
    assert status == 130 and f"dpclust resume {part}" in err
    status, _, err = run(capsys, "resume", part, "--no-progress")
    assert status == 0, err
    assert (part / "labels.csv").read_bytes() == (full / "labels.csv").read_bytes()
    s = summary_of(part)
    assert s["settings"]["resumed_from_iteration"] == 7 and "mallows" in s
    assert s["cluster_params"] == summary_of(full)["cluster_params"]


def _mallows_bad_inputs(tmp_path):
    def write(name, text):
        (tmp_path / name).write_text(text)
        return tmp_path / name

    good = write_rankings(tmp_path / "good.csv")
    ids = write_rankings(tmp_path / "ids.csv", ids=True)
    np.save(tmp_path / "r.npy", np.array([[0, 1], [1, 0]]))
    mallows = ["--family", "mallows"]
    return {
        "twice": ([write("twice.csv", "ash,birch\nelm,fir,elm\n"), *mallows],
                  "twice"),
        "after-gap": ([write("gap.csv", "ash,birch,\nelm,,fir\n"), *mallows],
                      "follows an empty cell"),
        "unknown-item": ([good, *mallows, "--items", write("few.txt", "ash\nbirch\n")],
                         "unknown item"),
        "padding-hint": ([ids, *mallows, "--index-base", "1"], "pass --missing 0"),
        "zero-id": ([write("z.csv", "1,2,0\n2,0,1\n"), *mallows, "--index-base", "1"],
                    "below --index-base 1"),
        "mixed": ([write("mixed.csv", "ash,2\n1,birch\n"), *mallows], "mixes item names"),
        "npy": ([tmp_path / "r.npy", *mallows], "rankings are read from a text table"),
        "preflib": ([write("bad.soi", "1: 1,2\n"), *mallows],
                    "expected the number of alternatives"),
        "empty": ([write("empty.csv", ""), *mallows], "empty"),
        "missing-file": ([tmp_path / "nope.csv", *mallows], "no such file"),
        "no-item-names": ([good, *mallows, "--items", write("blank.txt", "\n\n")],
                          "holds no item names"),
        "index-base": ([good, *mallows, "--index-base", "2"], "invalid choice: 2"),
        "gaussian-missing": ([good, "--family", "gaussian", "--missing", "0"],
                             "--missing applies only to --family mallows"),
        "gaussian-nu": (["--nu", "2"], "--nu applies only to --family mallows"),
        "nu-negative": ([*mallows, "--nu", "-1"], "positive number"),
        "sampler": ([good, *mallows, "--sampler", "gibbs"],
                    "--sampler slice-gibbs, beta-gibbs or coarsened, not gibbs"),
        "sampler-gaussian": (["--sampler", "beta-gibbs"], "fits --family mallows"),
        "dataset-family": (["--dataset", "dublin-west", "--family", "gaussian"],
                           "holds rankings"),
        "dataset-and-data": ([good, "--dataset", "dublin-west"], "not both"),
        "dataset-unknown": (["--dataset", "iris"], "invalid choice: 'iris'"),
        "dataset-missing": (["--dataset", "dublin-west", "--missing", "0"], "needs none"),
        "preflib-items": ([write("ok.soi", "# NUMBER ALTERNATIVES: 2\n1: 1,2\n"), *mallows,
                           "--items", write("n.txt", "a\nb\n")], "PrefLib file"),
        "ddcrp": ([good, *mallows, "--model", "ddcrp"], "collapsed form"),
        "truth": ([good, *mallows, "--truth", "0"], "read whole"),
        "kmeans": ([good, *mallows, "--init", "kmeans"], "--init kmeans"),
    }


MALLOWS_BAD = ["twice", "after-gap", "unknown-item", "padding-hint", "zero-id", "mixed", "npy",
               "preflib", "empty", "missing-file", "no-item-names", "index-base",
               "gaussian-missing", "gaussian-nu", "nu-negative", "sampler", "sampler-gaussian",
               "dataset-family", "dataset-and-data", "dataset-unknown", "dataset-missing",
               "preflib-items", "ddcrp", "truth", "kmeans"]


@pytest.mark.parametrize("case", MALLOWS_BAD)
def test_mallows_bad_input_is_one_line_and_exit_status_2(tmp_path, capsys, case):
    argv, expected = _mallows_bad_inputs(tmp_path)[case]
    out = tmp_path / "out"
    status, _, err = run(capsys, "fit", *argv, "--out", out, "--no-progress", "--n-iter", "2")
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpclust: error: "), err
    assert expected in lines[0]
    assert not out.exists() or not (out / "labels.csv").exists()


def test_chains_jobs_and_until_converged_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "chains"
    status, stdout, err = run(capsys, "fit", "--n-iter", "20", "--n-chains", "2", "--n-jobs", "2",
                              "--random-state", "3", "--no-progress", "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["settings"]["chains"] == 2 and s["settings"]["jobs"] == 2
    assert s["convergence"]["n_chains"] == 2
    assert abs(sum(s["n_clusters_posterior"]["all"].values()) - 1) < 1e-9
    assert "best_chain" in s["log_joint"]
    lines = (out / "trace.csv").read_text().splitlines()
    assert lines[0].startswith("chain,iteration,") and len(lines) == 1 + 2 * 20
    assert lines[21].startswith("1,0,")
    cert = np.loadtxt(out / "labels.csv", delimiter=",", skiprows=1, usecols=1)
    assert cert.shape == (1500,) and ((0 <= cert) & (cert <= 1)).all()
    assert s["certainty"]["below_0.9"] == int((cert < 0.9).sum())
    assert abs(s["certainty"]["mean"] - cert.mean()) < 1e-3
    assert (out / "k_posterior.png").is_file()
    html = (out / "report.html").read_text()
    assert "2 chains × 10 kept draws" in html and 'id="fig-k_posterior"' in html
    assert "Point certainty" in html

    out = tmp_path / "until"
    status, stdout, err = run(capsys, "fit", *FAST, "--until-converged", "--max-iter", "48",
                              "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["settings"]["n_iter"] == 48 and s["settings"]["burn_in"] == 24
    assert s["settings"]["until_converged"] == {"max_iters": 48, "first_block": 12,
                                                "max_time": 600.0}
    # --max-iter alone says the same, as max_iter does in Python
    status, _, err = run(capsys, "fit", *FAST, "--max-iter", "48", "--out", tmp_path / "m")
    assert status == 0, err
    assert summary_of(tmp_path / "m")["settings"]["until_converged"]["max_iters"] == 48


def test_a_wide_file_keeps_the_summary_and_report_small(tmp_path, capsys):
    """Thousands of columns would list every name and K d x d covariances: the summary
    lists the first 50 names and the means' first 50 coordinates; the means and variances
    go to cluster_params.npz."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 120))
    X[:30] += 4.0
    path = tmp_path / "wide.csv"
    np.savetxt(path, X, delimiter=",", header=",".join(f"f{j}" for j in range(120)),
               comments="")
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", path, *FAST, "--family", "gaussian", "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert len(s["data"]["columns"]) == 50 and s["data"]["columns_not_listed"] == 70
    params = s["cluster_params"]
    assert "covariances" not in params and params["n_features"] == 120
    assert np.array(params["means"]).shape == (s["n_clusters"], 50)
    saved = np.load(out / "cluster_params.npz")
    assert saved["means"].shape == saved["variances"].shape == (s["n_clusters"], 120)
    # about 1 kB a cluster for its 50 listed means (the full Gaussian in 120 dimensions
    # with 60 rows finds no structure: its VI estimate may be all singletons)
    assert (out / "summary.json").stat().st_size < 10_000 + 1_200 * s["n_clusters"]
    assert "f119" not in (out / "report.html").read_text()
    # the default (auto: the diagonal Gaussian for 120 columns of few rows) lists 50 columns'
    # parameters
    status, _, err = run(capsys, "fit", path, *FAST, "--out", tmp_path / "auto")
    assert status == 0, err
    params = summary_of(tmp_path / "auto")["cluster_params"]
    assert params["n_features"] == 120 and len(params["means"]) == 50
    saved = np.load(tmp_path / "auto" / "cluster_params.npz")
    assert saved["means"].shape == saved["variances"].shape == (len(params["means"]["f0"]), 120)


@pytest.fixture
def toy_family():
    """A family registered in one place (its class, with ``register_family``), and gone
    again after the test."""
    from dpclust.families import FAMILIES, ConjugateFamily, HyperParameter, register_family
    from dpclust.families.base import positive_float

    @register_family
    class Toy(ConjugateFamily):
        name = "toy"
        describes = "toy data"
        hyperparameters = (HyperParameter("spread", positive_float, default=2.0,
                                          metavar="S", help="toy only: the prior spread"),)

        def __init__(self, spread=2.0):
            self.spread = spread

        def get_params(self):
            return {"spread": self.spread}

    yield Toy
    FAMILIES.pop("toy")


def test_a_registered_family_is_a_choice_with_its_options(toy_family, capsys):
    """Registering a family makes it a --family choice, its hyperparameters options (with
    their help), and what run.json stores; no other file knows of it."""
    status, out, _ = run(capsys, "fit", "--help")
    out = " ".join(out.split())  # argparse wraps the help
    assert status == 0 and "'toy' for toy data" in out
    assert "--spread S" in out and "toy only: the prior spread" in out
    args = cli.build_parser().parse_args(["fit", "--family", "toy", "--spread", "3"])
    config = cli._config_from_args(args)
    assert config.family == "toy" and config.hyperparameters == (("spread", 3.0),)
    assert config.to_json()["spread"] == 3.0
    assert cli.RunConfig.from_json(config.to_json()) == config
    # the others' hyperparameters are refused, and so is its own for the others
    status, _, err = run(capsys, "fit", "--family", "toy", "--concentration", "0.5")
    assert status == 2 and "--concentration applies only to --family multinomial" in err
    status, _, err = run(capsys, "fit", "--spread", "3")
    assert status == 2 and "--spread applies only to --family toy" in err
    status, _, err = run(capsys, "fit", "--family", "toy", "--spread", "-1")
    assert status == 2 and "argument --spread: expected a positive number, got '-1'" in err


def test_run_json_keeps_the_hyperparameters_by_name():
    """run.json lists every family's hyperparameters by name (null when not given), as
    before, and reads them back."""
    args = cli.build_parser().parse_args(["fit", "--family", "mallows", "--nu", "2"])
    config = cli._config_from_args(args)
    stored = config.to_json()
    assert stored["nu"] == 2.0 and stored["r"] is None and stored["concentration"] is None
    assert cli.RunConfig.from_json(stored) == config
    old = {"data": "demo", "family": "multinomial", "concentration": 0.5, "nu": None}
    assert cli.RunConfig.from_json(old).hyperparameters == (("concentration", 0.5),)


# --------------------------------------------------------------------------------------------
# --prior: the prior on partitions


def test_fit_with_a_pitman_yor_prior_names_it_in_the_summary_and_report(tmp_path, capsys):
    out = tmp_path / "py"
    status, _, err = run(capsys, "fit", "--prior", "pitman-yor:0.25,1", "--n-iter", "12",
                         "--no-progress", "--no-plots", "--out", out)
    assert status == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["prior"] == "Pitman–Yor process (discount 0.25, strength 1)"
    assert "alpha" not in summary["settings"]
    assert summary["prior"] == {"name": "pitman-yor", "title": "Pitman–Yor process",
                                "discount": 0.25, "strength": 1.0}
    assert summary["settings"]["sampler"] == "auto (gibbs+sams)"
    assert "under a Pitman–Yor process (discount 0.25, strength 1) prior" in (
        out / "report.html").read_text()


@pytest.mark.parametrize("argv, message", [
    (["--prior", "chinese-buffet"], "unknown prior"),
    (["--prior", "pitman-yor:0.3"], "DISCOUNT,STRENGTH"),
    (["--prior", "mfm:1,poisson:2", "--alpha", "2"], "takes its parameters in --prior"),
    (["--prior", "mfm", "--model", "ddcrp"], "--prior applies to --model dp"),
    (["--prior", "pitman-yor:0.3,1", "--sampler", "fsd"], "not the Pitman–Yor process"),
])
def test_prior_mistakes_are_one_clear_message(tmp_path, capsys, argv, message):
    status, _, err = run(capsys, "fit", *argv, "--n-iter", "4", "--no-progress", "--no-plots",
                         "--out", tmp_path / "bad")
    assert status != 0
    assert message in err and "Traceback" not in err


def test_a_rankings_file_needs_no_family(tmp_path, capsys):
    """A PrefLib file of ballots with no model flags: Plackett–Luce components under the
    coarsened posterior (its family's default), said in the summary and the report."""
    rng = np.random.default_rng(0)
    lines = ["# DATA TYPE: soi", "# NUMBER ALTERNATIVES: 5"]
    for first in (1, 4):
        for _ in range(40):
            rest = [i for i in range(1, 6) if i != first]
            rng.shuffle(rest)
            lines.append("1: " + ",".join(map(str, [first, *rest[:2]])))
    data = tmp_path / "ballots.soi"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o"
    status, _, err = run(capsys, "fit", data, "--n-iter", "60", "--no-progress", "--no-plots",
                         "--out", out)
    assert status == 0, err
    s = summary_of(out)
    assert s["settings"]["family"] == "plackett-luce"
    assert s["coarsening"]["alpha_c"] == 100.0
    assert "coarsened posterior" in (out / "report.html").read_text()
    # and --coarsening exact asks for the exact posterior
    status, _, err = run(capsys, "fit", data, "--n-iter", "20", "--no-progress", "--no-plots",
                         "--coarsening", "exact", "--out", tmp_path / "e")
    assert status == 0, err
    assert "coarsening" not in summary_of(tmp_path / "e")
