"""Tests of dpclust.report: the HTML report and the figures it embeds."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dpclust.report import plots, render_html, write_report

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False
needs_mpl = pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib (dpclust[plot])")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MALICIOUS = "<script>alert('x')</script>"


def _trace(n_iter: int, rng: np.random.Generator, *, alpha_varies: bool = True) -> dict:
    it = np.arange(n_iter)
    log_joint = -2000.0 + 1500.0 * (1 - np.exp(-it / 15.0)) + rng.normal(0, 5, n_iter)
    n_clusters = np.clip(np.round(1 + 2 * (1 - np.exp(-it / 10.0)) + rng.normal(0, 0.4, n_iter)),
                         1, None).astype(int)
    alpha = 1.0 + 0.3 * rng.standard_normal(n_iter) if alpha_varies else np.ones(n_iter)
    return {
        "log_joint": log_joint,
        "n_clusters": n_clusters,
        "alpha": np.abs(alpha),
        "seconds": np.cumsum(np.full(n_iter, 0.01)),
    }


def _summary(K, sizes, n, d, params, *, family, source="demo") -> dict:
    return {
        "settings": {"family": family, "sampler": "collapsed-gibbs", "alpha": MALICIOUS,
                     "n_iter": 200, "burn_in": 50, "thin": 1, "seed": 0},
        "data": {"source": source, "n_samples": n, "n_features": d, "format": "npy"},
        "timings": {"total_seconds": 2.5, "seconds_per_iteration": 0.0125,
                    "point_updates_per_second": 48000.0},
        "n_clusters": K,
        "cluster_sizes": list(sizes),
        "cluster_params": params,
        "log_joint": {"final": -512.25, "best": -498.5, "best_iteration": 173},
        "point_estimate": {"loss": "vi", "expected_loss": 0.042},
        "metrics": {"nmi": 0.98, "ari": 0.97},
        "warnings": ["R-hat of K is 1.2 <check>: run longer"],
    }


@pytest.fixture
def gaussian_fit():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [6.0, 1.0], [2.0, 7.0]])
    covs = np.array([[[1.0, 0.5], [0.5, 1.0]], [[0.5, 0.0], [0.0, 2.0]], [[1.5, -0.6], [-0.6, 0.8]]])
    sizes = [150, 100, 50]
    X = np.vstack([rng.multivariate_normal(c, s, size=m) for c, s, m in zip(centres, covs, sizes)])
    labels = np.repeat(np.arange(3), sizes)
    same = (labels[:, None] == labels[None, :]).astype(float)
    similarity = np.clip(0.9 * same + 0.05 + 0.05 * rng.random((300, 300)), 0, 1)
    params = {"means": centres.tolist(), "covariances": covs.tolist()}
    summary = _summary(3, sizes, 300, 2, params, family="gaussian")
    return summary, _trace(200, rng), X, labels, similarity


@pytest.fixture
def sparse_fit():
    rng = np.random.default_rng(1)
    n_docs, vocab, K = 120, 40, 3
    labels = np.repeat(np.arange(K), n_docs // K)
    topics = rng.dirichlet(np.full(vocab, 0.1), size=K)
    counts = np.vstack([rng.multinomial(30, topics[k]) for k in labels])
    X = sp.csr_matrix(counts)
    words = [f"word{j}" for j in range(vocab)]
    top_words = [[words[j] for j in np.argsort(-topics[k])[:5]] for k in range(K)]
    summary = _summary(K, np.bincount(labels).tolist(), n_docs, vocab,
                       {"top_words": top_words}, family="multinomial", source="docs.npz")
    return summary, _trace(200, rng, alpha_varies=False), X, labels


def _embedded_pngs(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)]


@needs_mpl
def test_gaussian_report(tmp_path, gaussian_fit):
    summary, trace, X, labels, similarity = gaussian_fit
    paths = write_report(tmp_path / "out", summary, trace, X, labels, similarity=similarity,
                         title="Demo & test")
    assert set(paths) == {"report", "trace", "clusters", "cluster_sizes", "similarity"}
    for name in ("trace", "clusters", "cluster_sizes", "similarity"):
        assert paths[name] == tmp_path / "out" / f"{name}.png"
        assert paths[name].read_bytes().startswith(PNG_SIGNATURE)
    page = paths["report"].read_text(encoding="utf-8")
    embedded = _embedded_pngs(page)
    assert len(embedded) == 4
    assert all(png.startswith(PNG_SIGNATURE) for png in embedded)
    assert "found <b>3 clusters</b> in <b>300 points</b>" in page
    assert "<script>" not in page and "&lt;script&gt;" in page  # settings are escaped
    assert "&lt;check&gt;" in page  # and so are warnings
    assert "Demo &amp; test" in page
    assert "Variation of Information" in page and "0.98" in page
    assert "http://" not in page and "https://" not in page  # nothing from the network
    assert "(0, 0)" in page  # the mean vector of cluster 0 in the cluster table


@needs_mpl
def test_sparse_report(tmp_path, sparse_fit):
    summary, trace, X, labels = sparse_fit
    paths = write_report(tmp_path, summary, trace, X, labels)
    assert set(paths) == {"report", "trace", "clusters", "cluster_sizes"}
    page = paths["report"].read_text(encoding="utf-8")
    assert len(_embedded_pngs(page)) == 3
    assert summary["cluster_params"]["top_words"][0][0] in page
    assert "found <b>3 clusters</b> in <b>120 points</b>" in page


@needs_mpl
def test_sparse_data_is_never_densified(tmp_path, sparse_fit, monkeypatch):
    _, _, X, labels = sparse_fit

    def refuse(*args, **kwargs):
        raise AssertionError("sparse data densified")

    for cls in (sp.csr_matrix, sp.csr_array):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    path = plots.plot_clusters(X, labels, tmp_path / "c.png")
    assert path.read_bytes().startswith(PNG_SIGNATURE)


def test_report_without_matplotlib(tmp_path, gaussian_fit, monkeypatch):
    summary, trace, X, labels, similarity = gaussian_fit

    def missing():
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(plots, "import_matplotlib", missing)
    paths = write_report(tmp_path, summary, trace, X, labels, similarity=similarity)
    assert set(paths) == {"report"}
    page = paths["report"].read_text(encoding="utf-8")
    assert "pip install dpclust[plot]" in page
    assert "data:image/png" not in page
    assert "3 clusters" in page
    assert 'class="num">150</td>' in page
    assert not list(tmp_path.glob("*.png"))


def test_plot_functions_without_matplotlib_name_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    for mod in [m for m in sys.modules if m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(ImportError, match=r"pip install dpclust\[plot\]"):
        plots.plot_cluster_sizes([0, 1, 1], tmp_path / "s.png")


@needs_mpl
def test_minimal_summary_is_tolerated(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 6))
    labels = np.repeat([0, 1], 20)
    summary = {"settings": {}, "data": {}, "timings": {}, "n_clusters": 2,
               "cluster_sizes": [20, 20], "cluster_params": {}, "log_joint": {}}
    trace = {"log_joint": rng.normal(size=30), "n_clusters": np.full(30, 2)}
    paths = write_report(tmp_path, summary, trace, X, labels)
    assert set(paths) == {"report", "trace", "clusters", "cluster_sizes"}
    page = paths["report"].read_text(encoding="utf-8")
    assert "Warnings" not in page and "found <b>2 clusters</b>" in page


@needs_mpl
def test_broken_figure_does_not_stop_the_report(tmp_path, gaussian_fit):
    summary, trace, X, labels, _ = gaussian_fit
    with pytest.warns(UserWarning, match="similarity.png not drawn"):
        paths = write_report(tmp_path, summary, trace, X, labels, similarity=np.eye(3))
    assert "similarity" not in paths
    assert "could not be drawn" in paths["report"].read_text(encoding="utf-8")


@needs_mpl
def test_plot_clusters_projections(tmp_path):
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(25), 8)  # more clusters than colours: the rest are grey
    X = rng.normal(size=(200, 5)) + labels[:, None]
    means = [X[labels == k].mean(0).tolist() for k in range(25)]
    covs = [np.cov(X[labels == k].T).tolist() for k in range(25)]
    for d, name in ((5, "pca.png"), (1, "one.png")):
        params = {"means": [m[:d] for m in means], "covariances": [np.asarray(c)[:d, :d] for c in covs]}
        path = plots.plot_clusters(X[:, :d], labels, tmp_path / name, cluster_params=params)
        assert path.read_bytes().startswith(PNG_SIGNATURE)
    colours = plots.cluster_colours(labels)
    assert len(set(colours.values())) == len(plots.CLUSTER_PALETTE) + 1
    assert sum(c == plots.OTHER_COLOUR for c in colours.values()) == 25 - len(plots.CLUSTER_PALETTE)


def test_subsample_is_deterministic_and_bounded():
    a = plots._subsample_indices(50_000)
    b = plots._subsample_indices(50_000)
    assert len(a) == plots.MAX_PLOT_POINTS and np.array_equal(a, b)
    assert np.all(np.diff(a) > 0)
    assert np.array_equal(plots._subsample_indices(10), np.arange(10))


def test_ellipse_matches_covariance():
    # axis-aligned covariance diag(4, 1): 2-sigma contour has full axes 8 and 4
    _, width, height, angle = plots._ellipse_params(np.zeros(2), np.diag([4.0, 1.0]))
    assert (width, height) == pytest.approx((8.0, 4.0))
    assert abs(angle) % 180 == pytest.approx(0.0, abs=1e-9)


def test_importing_report_does_not_import_matplotlib():
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = "import sys, dpclust.report; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# --------------------------------------------------------------------------------------------
# the distance dependent CRP's figures


def test_tables_are_numbered_by_first_customer_in_position_order():
    positions = np.array([5.0, 1.0, 3.0, 0.0, 4.0])
    labels = np.array([7, 2, 7, 9, 2])
    # in position order: 9 (at 0), 2 (at 1), 7 (at 3)
    np.testing.assert_array_equal(plots._table_numbers(positions, labels), [2, 1, 2, 0, 1])
    np.testing.assert_array_equal(plots._table_numbers(np.arange(5), labels), [0, 1, 0, 2, 1])


@needs_mpl
def test_plot_tables_by_position_returns_a_figure(tmp_path):
    from matplotlib.figure import Figure

    labels = np.repeat([0, 1, 2], 20)
    fig = plots.plot_tables_by_position(None, labels)
    assert isinstance(fig, Figure) and fig.axes[0].get_xlabel() == "customer"
    days = np.datetime64("2024-01-01") + np.arange(60).astype("timedelta64[D]")
    fig = plots.plot_tables_by_position(days, labels, path=tmp_path / "t.png",
                                        colours=plots.cluster_colours(labels),
                                        position_label="day")
    assert isinstance(fig, Figure) and fig.axes[0].get_xlabel() == "day"
    assert (tmp_path / "t.png").read_bytes().startswith(PNG_SIGNATURE)
    host = plots.new_figure(plots.import_matplotlib(), (4, 3))
    ax = host.subplots()
    assert plots.plot_tables_by_position(np.linspace(0, 1, 60), labels, ax=ax) is host
    assert ax.get_title().endswith("(K = 3)")
    with pytest.raises(ValueError, match="shape"):
        plots.plot_tables_by_position(np.arange(5), labels)


@needs_mpl
def test_plot_prior_draws_is_figure_2(tmp_path):
    from matplotlib.figure import Figure

    fig = plots.plot_prior_draws(n=200, path=tmp_path / "f2.png")
    assert isinstance(fig, Figure)
    panels = [ax for ax in fig.axes if ax.get_xlabel() == "customer"]
    assert len(panels) == 4
    assert [len(ax.child_axes) for ax in panels] == [1, 1, 1, 1]  # the decay insets
    assert panels[0].get_title().startswith("traditional CRP")
    assert panels[3].get_title().startswith("logistic decay, a = 30, slope = 2")
    assert (tmp_path / "f2.png").read_bytes().startswith(PNG_SIGNATURE)
    # the same seed, the same draws
    again = plots.plot_prior_draws(n=200)
    assert [ax.get_title() for ax in again.axes[:4]] == [ax.get_title() for ax in fig.axes[:4]]
    three = plots.plot_prior_draws(["constant", "window:5", "exponential:2"], n=50, alpha=2.0)
    assert sum(ax.get_visible() for ax in three.axes if ax.get_xlabel() == "customer") == 3


@needs_mpl
def test_ddcrp_report_has_the_tables_figure(tmp_path, gaussian_fit):
    summary, trace, X, labels, _ = gaussian_fit
    summary = dict(summary, ddcrp={"decay": "window:10", "decay_function": "f(d) = 1[d < 10]",
                                   "sequential": True, "distances": "positions column 't'",
                                   "n_tables": 3, "n_tables_last_iteration": 4})
    summary["data"] = dict(summary["data"], positions_column="t")
    paths = write_report(tmp_path, summary, trace, X, labels, positions=np.arange(300.0))
    assert "tables" in paths and paths["tables"].read_bytes().startswith(PNG_SIGNATURE)
    page = paths["report"].read_text(encoding="utf-8")
    assert 'id="fig-tables"' in page and "found <b>3 tables</b>" in page
    assert "<b>window:10</b> decay" in page and "<b>sequential</b>" in page
    assert "make 4 tables" in page and "Distance dependent CRP" in page
    # no ddcrp in the summary: no tables figure
    plain = write_report(tmp_path / "plain", gaussian_fit[0], trace, X, labels)
    assert "tables" not in plain


# --------------------------------------------------------------------------------------------
# rankings: a Generalized Mallows mixture (Meilă & Chen 2010, Table 1, Figures 10 and 11)


@pytest.fixture
def rankings_fit():
    rng = np.random.default_rng(4)
    names = ["candidate 1", "candidate 2", MALICIOUS, "candidate 4", "candidate 5"]
    sizes = [60, 25, 10, 4, 1]
    labels = np.repeat(np.arange(5), sizes)
    order = [list(rng.permutation(5)) for _ in sizes]
    theta = rng.uniform(0.1, 2.0, size=(5, 4)).round(4)
    params = {"top_items": [[names[i] for i in row] for row in order],
              "theta": theta.tolist()}
    summary = _summary(5, sizes, 100, None, params, family="mallows", source="votes.csv")
    del summary["data"]["n_features"], summary["metrics"]
    summary["data"].update(n_items=5, max_length=4)
    summary["mallows"] = {"n_items": 5, "ranks_with_theta": 4, "exact": True,
                          "posterior": "exact MCMC", "substantial_clusters": 5,
                          "theta_by_rank": [1.0, 0.9, 0.8, 0.7]}
    return summary, _trace(50, rng), labels, theta, names, order


def test_theta_by_rank_is_the_size_weighted_mean():
    theta = np.array([[2.0, 1.0], [0.5, 0.25], [1.0, 3.0]])
    sizes = np.array([90, 6, 4])
    out = plots.theta_by_rank(theta, sizes, large_share=0.05)
    naive = [sum(s * t[j] for s, t in zip(sizes, theta)) / sizes.sum() for j in range(2)]
    np.testing.assert_allclose(out["all"], naive)
    np.testing.assert_allclose(out["large"], (90 * theta[0] + 6 * theta[1]) / 96)
    np.testing.assert_allclose(out["small"], theta[2])
    assert plots.theta_by_rank(theta, sizes, large_share=0.001)["small"] is None
    with pytest.raises(ValueError, match="one row per size"):
        plots.theta_by_rank(theta, [1, 2])
    with pytest.raises(ValueError, match="no cluster"):
        plots.theta_by_rank(theta, [0, 0, 0])


@needs_mpl
def test_ranking_figures(tmp_path):
    labels = np.repeat(np.arange(30), np.arange(30, 0, -1) ** 2)  # 30 sizes, 900 down to 1
    path = plots.plot_cluster_size_distribution(labels, tmp_path / "sizes.png",
                                                unit="rankings")
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    theta = np.linspace(2.0, 0.2, 30)[:, None] * np.ones((1, 6))
    path = plots.plot_theta_by_rank(theta, np.bincount(labels), tmp_path / "theta.png")
    assert path.read_bytes().startswith(PNG_SIGNATURE)


@needs_mpl
def test_rankings_report_has_table_1_and_figures_10_and_11(tmp_path, rankings_fit):
    summary, trace, labels, theta, names, order = rankings_fit
    paths = write_report(tmp_path, summary, trace, None, labels)
    assert set(paths) == {"report", "trace", "size_distribution", "theta_by_rank"}
    page = paths["report"].read_text(encoding="utf-8")
    assert len(_embedded_pngs(page)) == 3
    assert 'id="fig-size_distribution"' in page and 'id="fig-theta_by_rank"' in page
    assert "found <b>5 clusters</b> in <b>100 rankings</b> (of 5 items" in page
    assert "Generalized Mallows" in page and "5 clusters hold at least 1%" in page
    table1 = page[page.index('id="table1"'):page.index("</table>", page.index('id="table1"'))]
    # the five largest clusters, largest first, with their shares, and every rank
    assert [int(k) for k in re.findall(r"cluster (\d+) · ", table1)] == [0, 1, 2, 3, 4]
    assert "cluster 0 · 60.0%" in table1 and "60 rankings" in table1
    first_row = re.search(r"<tr><td class=\"num\">1</td>(.*?)</tr>", table1).group(1)
    assert f"θ {theta[0, 0]:.2f}" in first_row
    assert first_row.count("θ ") == 5
    assert re.search(r"<tr><td class=\"num\">5</td>", table1)  # rank 5: no theta there
    assert "<script>" not in page and "&lt;script&gt;" in page  # item names are escaped
    # the cluster table: central rankings' first items and theta_1..theta_3
    assert "θ<sub>3</sub>" in page and "θ<sub>4</sub></th>" not in page
    assert " › ".join(names[i] for i in order[1]).replace("<", "&lt;").replace(
        ">", "&gt;").replace("'", "&#x27;") in page
    assert "approximate" not in page
    # an approximate sampler is said to be one
    summary["mallows"]["exact"] = False
    page = render_html(summary, {}, labels=labels)
    assert "The sampler is approximate</b> (Beta-Gibbs)" in page


def test_report_says_when_the_sub_cluster_sampler_was_approximate():
    labels = np.repeat(np.arange(3), 10)
    summary = {"n_clusters": 3, "settings": {"sampler": "subcluster-approx",
                                             "family": "gaussian"}}
    page = render_html(summary, {}, labels=labels)
    assert "The sampler is approximate</b> (the paper's sub-cluster splits" in page
    summary["settings"]["sampler"] = "subcluster"
    assert "approximate" not in render_html(summary, {}, labels=labels)


def test_rankings_report_without_matplotlib_keeps_table_1(tmp_path, rankings_fit, monkeypatch):
    summary, trace, labels, *_ = rankings_fit

    def missing():
        raise ImportError("No module named 'matplotlib'")

    monkeypatch.setattr(plots, "import_matplotlib", missing)
    paths = write_report(tmp_path, summary, trace, None, labels)
    assert set(paths) == {"report"}
    page = paths["report"].read_text(encoding="utf-8")
    assert 'id="table1"' in page and "pip install dpclust[plot]" in page


def test_theta_by_rank_of_the_summary_is_the_figure_s():
    """The summary's theta by rank (dpclust.families.mallows) and the figure's
    (dpclust.report.plots) are the same average."""
    from dpclust.families.mallows import LARGE_CLUSTER_SHARE, theta_by_rank

    rng = np.random.default_rng(3)
    theta, sizes = rng.gamma(2.0, size=(7, 4)), rng.integers(0, 40, size=7)
    ours = theta_by_rank(theta, sizes)
    theirs = plots.theta_by_rank(theta, sizes)
    assert LARGE_CLUSTER_SHARE == plots.LARGE_CLUSTER_SHARE
    for key in ("all", "large", "small"):
        assert (ours[key] is None) == (theirs[key] is None)
        if ours[key] is not None:
            np.testing.assert_array_equal(ours[key], theirs[key])


# ------------------------------------------------------- which answer the page shows
_CALIBRATION = {"alpha_c": [10.0, 30.0, 100.0, 300.0, 1000.0],
                "zeta": [0.0066, 0.0196, 0.0625, 0.1667, 0.4],
                "fit": [-5.50, -4.29, -3.76, -3.60, -3.54],
                "complexity": [5.35, 6.15, 6.45, 6.30, 10.0], "chosen": 300.0, "n_iter": 40,
                "rule": "elbow of fit against complexity (kneedle)"}


def _coarsened(summary: dict) -> dict:
    return {**summary, "n_clusters": 3, "coarsening": {
        "posterior": "coarsened", "alpha_c": 300.0, "zeta": 300 / 1800,
        "tolerated_misfit_nats_per_point": 1 / 300, "chosen_by": "elbow",
        "calibration": _CALIBRATION}}


def _fused(summary: dict, *, judged: bool = False) -> dict:
    entry = {"rhat": 1.004, "ess_bulk": 61.0, "ess_tail": 58.0, "converged": judged,
             "n_draws": 60, "draws": "60 of the 240 kept draws per chain, evenly spread",
             "judged": judged}
    if not judged:
        entry["reason"] = "R-hat passes; the ESS are lower bounds"
    conv = {"log_likelihood": {"rhat": 1.001, "ess_bulk": 400.0, "ess_tail": 380.0,
                               "converged": True},
            "converged": True, "n_chains": 2, "n_draws": 240, "failing": [],
            "rule": "R-hat < 1.01 and bulk and tail ESS >= 100 per chain",
            "fused_clusters": entry}
    return {**summary, "convergence": conv, "fused": {
        "computed": True, "n_clusters": 2, "sizes": [250, 50], "omega": 1.0,
        "threshold": 0.5, "n_raw_clusters": 3, "raw_to_fused": [0, 0, 1],
        "crosstab": [[150, 0], [100, 0], [0, 50]],
        "hellinger": {"within": 0.2, "between": 0.97,
                      "within_cluster": [0.31, 0.0], "to_nearest": [0.97, 0.97]},
        "n_draws": 120, "exact": True,
        "per_draw": {"mean": 2.3, "distribution": {"2": 0.75, "3": 0.249, "4": 0.001},
                     "n_chains": 2, "n_draws": 60, "convergence": entry}}}


def _lead(page: str) -> str:
    return re.search(r'<p class="lead">(.*?)</p>', page, re.S).group(1)


def test_the_lead_says_the_coarsened_posterior_and_why_k_grows(gaussian_fit):
    summary = _coarsened(gaussian_fit[0])
    page = render_html(summary, {})
    lead = _lead(page)
    assert ("This is the <b>coarsened posterior</b> (Miller &amp; Dunson 2019; "
            "α<sub>c</sub> = 300, ζ = 0.17, chosen at the elbow of fit against complexity): "
            "it tolerates a misfit of about 0.0033 nats per point between the data and the "
            "gaussian family.") in lead
    # right after K, and the why-sentence: K grows with N under the exact posterior, here not
    assert lead.index("3 clusters") < lead.index("coarsened posterior")
    assert ("Under the exact posterior, data that no gaussian component fits exactly gain "
            "clusters that absorb the misfit, so K grows with N; here the 300 points count "
            "as ζN ≈ 50, which stays below α<sub>c</sub>") in lead
    assert ">300</div><div class=\"label\">alpha_c (coarsening)" in page
    assert "fused clusters" not in page.split("<h2>Run details")[0].lower()
    assert "Calibration grid" in page and "chosen → <b>300</b>" in page
    assert "Near tie" not in page
    tie = _coarsened(gaussian_fit[0])
    tie["coarsening"]["calibration"] = {**tie["coarsening"]["calibration"],
                                        "near_elbows": [100.0]}
    assert "<b>Near tie:</b> α<sub>c</sub> = 100 is almost as far above" in render_html(tie, {})
    user = _coarsened(gaussian_fit[0])
    user["coarsening"] = {**user["coarsening"], "chosen_by": "user"}
    del user["coarsening"]["calibration"]
    page = render_html(user, {})
    assert "ζ = 0.17, as given)" in _lead(page) and "Calibration grid" not in page


def test_the_lead_says_the_raw_partition_and_its_fused_clusters(gaussian_fit):
    page = render_html(_fused(gaussian_fit[0]), {})
    lead = _lead(page)
    assert ("These 3 clusters are the raw partition of the <b>exact posterior</b>; the "
            "<b>2 fused clusters</b> join components whose densities overlap (FOLD") in lead
    assert "so K grows with N; fused clusters join such components back" in lead
    assert ">2</div><div class=\"label\">fused clusters" in page
    # the table: each fused cluster with the raw clusters it joins
    section = page.split("<h2>Fused clusters beside the raw partition</h2>")[1]
    section = section.split("<h2>")[0]
    assert "The raw partition has 3 clusters; fusing gives 2 clusters." in section
    rows = re.findall(r"<tr><td>.*?</tr>", section)
    assert len(rows) == 2
    assert "0 (150)" in rows[0] and "1 (100)" in rows[0] and "2 (50)" in rows[1]
    assert ">0.310<" in rows[0] and ">0.970<" in rows[0]  # H within, H to the nearest
    assert "2 in 75%, 3 in 25%, 4 in &lt;1%" in section and "fused_label" in section
    # the verdict's row: figures, not judged, and why
    verdict = page.split('<section class="verdict')[1].split("</section>")[0]
    assert "fused clusters (per draw)" in verdict and "not judged" in verdict
    assert "R-hat passes; the ESS are lower bounds" in verdict
    judged = render_html(_fused(gaussian_fit[0], judged=True), {})
    verdict = judged.split('<section class="verdict')[1].split("</section>")[0]
    assert "not judged" not in verdict and verdict.count("<td>✓</td>") == 2
    assert "Every quantity passes the rule" in verdict
    verdict = page.split('<section class="verdict')[1].split("</section>")[0]
    assert "Every quantity judged passes the rule" in verdict


def test_the_lead_says_the_raw_partition_alone_and_why_fusing_was_skipped(gaussian_fit):
    summary = gaussian_fit[0]
    lead = _lead(render_html(summary, {}))
    assert "This is the <b>exact posterior</b>'s partition (raw: neither coarsened nor fused)" \
        in lead and "K grows with N" in lead
    skipped = {**summary, "fused": {"computed": False, "reason": "on a Dask cluster <x>"}}
    page = render_html(skipped, {})
    assert "Fused clusters were not computed: on a Dask cluster &lt;x&gt;." in page
    same = _fused(summary)
    same["fused"] = {**same["fused"], "n_clusters": 3, "raw_to_fused": [0, 1, 2],
                     "crosstab": [[150, 0, 0], [0, 100, 0], [0, 0, 50]],
                     "sizes": [150, 100, 50]}
    page = render_html(same, {})
    assert "are the same: no two components overlap enough to be joined" in _lead(page)
    assert "the same clusters, none joined" in page
    # draws that disagree can give more fused clusters than raw ones: the page says why
    more = _fused(summary)
    more["fused"] = {**more["fused"], "n_clusters": 4, "sizes": [100, 50, 100, 50],
                     "raw_to_fused": [0, 2, 3], "crosstab": [[100, 50, 0, 0], [0, 0, 100, 0],
                                                             [0, 0, 0, 50]]}
    page = render_html(more, {})
    assert "more clusters than the raw ones, because the draws disagree" in _lead(page)
    assert "it splits raw clusters" in page


@needs_mpl
def test_the_calibration_and_fused_figures(tmp_path, gaussian_fit):
    summary, trace, X, labels, _ = gaussian_fit
    paths = write_report(tmp_path / "c", _coarsened(summary), trace, X, labels)
    assert paths["calibration"].read_bytes().startswith(PNG_SIGNATURE)
    page = paths["report"].read_text(encoding="utf-8")
    assert 'id="fig-calibration"' in page and "ringed point" in page
    assert "fused_clusters" not in paths
    # fused clusters that differ from the raw ones are drawn beside them
    fused = np.where(labels == 2, 1, 0)
    paths = write_report(tmp_path / "f", _fused(summary), trace, X, labels, fused_labels=fused)
    assert paths["fused_clusters"].read_bytes().startswith(PNG_SIGNATURE)
    page = paths["report"].read_text(encoding="utf-8")
    assert page.index('id="fig-clusters"') < page.index('id="fig-fused_clusters"') \
        < page.index('id="fig-cluster_sizes"')
    same = write_report(tmp_path / "s", _fused(summary), trace, X, labels, fused_labels=labels)
    assert "fused_clusters" not in same and "calibration" not in same
    with pytest.raises(ValueError, match="one length"):
        plots.plot_calibration({**_CALIBRATION, "fit": [1.0]}, tmp_path / "bad.png")


def test_a_fused_cluster_takes_the_colour_of_its_largest_raw_cluster():
    raw = plots.colours_by_size(np.arange(4), [50, 40, 30, 20])
    # fused 0 holds raw 1 and 3; fused 1 holds raw 0; fused 2 is raw 2 split with fused 0
    table = np.array([[0, 50, 0], [40, 0, 0], [5, 0, 25], [20, 0, 0]])
    colours = plots.fused_colours([50, 40, 30, 20], table)
    assert colours[0] == raw[1] and colours[1] == raw[0] and colours[2] == raw[2]
    # raw 0 is the largest raw cluster of two fused clusters: the smaller takes a new colour
    clash = plots.fused_colours([55, 20], np.array([[30, 25], [0, 20]]))
    assert clash[1] == raw[0]  # the larger fused cluster keeps raw 0's colour
    assert clash[0] not in (raw[0], raw[1]) and clash[0] == plots.CLUSTER_PALETTE[2]


def test_lists_of_names_read_as_text_not_json():
    from dpclust.report.text import _fmt_value

    assert _fmt_value(["island", "sex", 3]) == "island, sex, 3"
    # records read as text too (the rankings' subsample showed as JSON in the data card)
    assert _fmt_value({"n": 600, "of": 29988, "seed": 0}) == "n: 600, of: 29,988, seed: 0"
    assert _fmt_value([{"a_b": 1}, {"c": [1, 2]}]) == "a b: 1; c: 1, 2"


def test_blocs_table_names_candidates_with_shares_and_theta_1(rankings_fit):
    summary, trace, labels, theta, names, order = rankings_fit
    summary["blocs"] = [
        {"cluster": 1, "share": 0.25, "rankings": 25, "presence": 0.9,
         "first_preferences": [["candidate 2", 0.6], ["candidate 4", 0.3]],
         "candidates": [["candidate 2", 0.9]],
         "transfers": {"from": "candidate 2", "to": [["candidate 4", 0.5]], "stop": 0.1}}]
    page = render_html(summary, {}, labels=labels)
    blocs = page[page.index('id="blocs"'):page.index("</table>", page.index('id="blocs"'))]
    assert "<th class=\"num\">θ₁</th>" in blocs
    assert f'<td class="num">{theta[1, 0]:.2f}</td>' in blocs
    assert "candidate 2 60%" in blocs and "25.0%" in blocs
    assert "{" not in blocs  # no record shown as JSON


def test_the_verdict_says_when_only_the_small_clusters_have_not_settled(gaussian_fit):
    """A run that fails the rule on the number of clusters while the clusters holding at
    least 1 % of the points pass it (many points: small clusters of outlying points come and
    go): the red banner says which scale has settled, and the advice follows."""
    ok = {"rhat": 1.001, "ess_bulk": 900.0, "ess_tail": 800.0, "converged": True}
    conv = {"log_likelihood": ok,
            "n_clusters": {"rhat": 1.08, "ess_bulk": 60.0, "ess_tail": 40.0,
                           "converged": False},
            "large_clusters": {**ok, "values": [6, 6]},
            "converged": False, "n_chains": 4, "n_draws": 2500, "failing": ["n_clusters"],
            "rule": "R-hat < 1.01 and bulk and tail ESS >= 100 per chain"}
    page = render_html({**gaussian_fit[0], "convergence": conv}, {})
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Not converged: the small clusters have not settled (the large ones have)" in text
    assert "at least 1 % of the points have settled (6 in every kept draw)" in text
    assert "Otherwise: run more iterations" in text
    # without the large clusters' figures (a summary from an older fit): the plain advice
    del conv["large_clusters"]
    page = render_html({**gaussian_fit[0], "convergence": conv}, {})
    assert "settled" not in page and "Run more iterations" in page
    assert "these results cannot be trusted yet" in page
    assert "use a sampler with split-merge moves" in page
    # a run that already splits and merges clusters is told to run longer
    settings = {**gaussian_fit[0]["settings"], "sampler": "auto (gibbs+sams)"}
    page = render_html({**gaussian_fit[0], "settings": settings, "convergence": conv}, {})
    assert "split-merge moves" not in page and "already splits and merges" in page


def test_trace_panels_zoom_on_the_kept_draws_from_either_side():
    """Early values far below the kept draws (a log joint climbing from a poor start) or far
    above them (a log-likelihood falling from a start with many clusters) are left outside
    the axis, which shows the kept draws' wiggles; a trace without such values is shown
    whole."""
    from dpclust.report.figures.traces import _robust_ylim

    kept = np.sin(np.arange(200.0))
    low, high, where = _robust_ylim(np.concatenate([[-100.0, -50.0], kept]), 2)
    assert where == "below" and -4 < low < -1 and 1 < high < 2
    low, high, where = _robust_ylim(np.concatenate([[100.0, 50.0], kept]), 2)
    assert where == "above" and -2 < low < -1 and 1 < high < 4
    assert _robust_ylim(np.concatenate([[-100.0, 100.0], kept]), 2)[2] == "outside"
    assert _robust_ylim(np.concatenate([[1.5, -1.2], kept]), 2) is None


@needs_mpl
def test_the_partition_says_how_sure_it_is(tmp_path, gaussian_fit):
    """The lead says in one line how sure the partition is, every cluster is listed with
    its presence (greyed below 50 %), the credible ball's panel gives its bounds and its
    figure draws the coarsest and the finest beside the estimate."""
    from dpclust.partitions import credible_ball

    summary, trace, X, labels, _ = gaussian_fit
    rng = np.random.default_rng(3)
    draws = np.repeat(labels[None, :], 40, axis=0)
    draws[:10, labels == 2] = 0  # a quarter of the draws merge clusters 2 and 0
    draws[10:14, rng.random(300) < 0.1] = 3  # a few split off a scatter of points
    ball = credible_ball(draws, labels)
    summary = {**summary, "cluster_presence": [1.0, 1.0, 0.4],
               "point_estimate": {"loss": "vi", "expected_loss": 0.12,
                                  "credible_ball": ball.as_dict()}}
    paths = write_report(tmp_path / "out", summary, trace, X, labels, credible_ball=ball)
    page = paths["report"].read_text(encoding="utf-8")
    assert ("How sure: 2 of its 3 clusters are in at least half of the posterior draws; 95% "
            f"of the posterior lies within VI {ball.radius:.2g} of it, among partitions of "
            "2 to 4 clusters.") in page
    assert "<th class=\"num\">in draws</th>" in page and '<tr class="unsure">' in page
    assert "95% credible ball" in page and "coarsest (upper vertical bound)" in page
    assert paths["credible_ball"].read_bytes().startswith(PNG_SIGNATURE)
    assert 'id="fig-credible_ball"' in page


def test_the_verdict_table_gives_the_ess_in_the_rule_s_unit():
    """The rule asks for an ESS per chain; ArviZ's is of all the chains together, so the
    table divides it by the chains and says the unit and the target beside it."""
    from dpclust.report.verdict import _verdict

    entry = {"rhat": 1.005, "ess_bulk": 555.0, "ess_tail": 1581.0, "converged": True}
    conv = {"log_likelihood": entry, "n_clusters": entry, "size_entropy": entry,
            "learned": [], "converged": True, "n_chains": 4, "n_draws": 720,
            "failing": [], "rule": "R-hat < 1.01 and bulk and tail ESS >= 100 per chain"}
    html = _verdict({"convergence": conv})
    assert "bulk ESS per chain (&ge; 100)" in html and "tail ESS per chain" in html
    assert "<td>139</td>" in html and "<td>395</td>" in html and "555" not in html


def test_the_lead_and_the_closing_line_say_how_many_clusters_hold_one_percent(capsys):
    """A point estimate with single points besides its large clusters (the rankings' VI with
    a = 0.5 keeps ambiguous ballots apart) says how many hold at least 1 %, first."""
    from pathlib import Path

    from dpclust.cli.commands import _print_done
    from dpclust.report.lead import _lead_paragraph

    sizes = [500, 300, 197, 1, 1, 1]
    summary = {"n_clusters": 6, "cluster_sizes": sizes, "data": {"n_samples": 1000},
               "settings": {"family": "gaussian"}}
    assert "(3 of them holding at least 1&nbsp;% of the points)" in _lead_paragraph(summary,
                                                                                   sizes)
    _print_done(Path("out"), summary)
    assert "6 clusters in 1000 points (3 holding at least 1 % of the points)" in (
        capsys.readouterr().out)
    summary["cluster_sizes"] = [500, 500]
    summary["n_clusters"] = 2
    assert "holding at least" not in _lead_paragraph(summary, [500, 500])


def test_the_lead_and_the_closing_line_say_why_the_estimate_is_finer_than_every_draw(
        capsys):
    """Chains that place points differently leave the VI estimate with single points and
    more clusters than any draw: the lead and the closing line say so and why, and say
    nothing when the estimate has no more clusters than some draw."""
    from pathlib import Path

    from dpclust.cli.commands import _print_done
    from dpclust.report.lead import _lead_paragraph

    sizes = [500, 300, 196, 1, 1, 1, 1]
    summary = {"n_clusters": 7, "cluster_sizes": sizes, "data": {"n_samples": 1000},
               "settings": {"family": "gaussian"},
               "n_clusters_posterior": {"all": {"3": 0.25, "4": 0.75}},
               "point_estimate": {"loss": "vi", "expected_loss": 0.4}}
    said = ("Each posterior draw has 3 to 4 clusters; the partition shown has more because "
            "it puts each of the 4 points that the draws place in different clusters (none "
            "in as many as half of them) in a cluster of its own, as the VI estimate does")
    assert said in _lead_paragraph(summary, sizes)
    _print_done(Path("out"), summary)
    assert said in capsys.readouterr().out
    summary["point_estimate"]["loss"] = "vi(a=0.5)"  # joins at three quarters of the draws
    assert ("(none in as many as three quarters of them) in a cluster of its own, as the VI "
            "(a = 0.5) estimate does") in _lead_paragraph(summary, sizes)
    summary["n_clusters_posterior"]["all"] = {"7": 1.0}
    assert "Each posterior draw" not in _lead_paragraph(summary, sizes)
    _print_done(Path("out"), summary)
    assert "Each posterior draw" not in capsys.readouterr().out
    # fewer clusters holding 1 % than every draw: the estimate joined clusters whose
    # points the draws share out differently (a frequency table's copies, say)
    coarse = {"n_clusters": 1, "cluster_sizes": [1000], "data": {"n_samples": 1000},
              "settings": {"family": "table"},
              "n_clusters_posterior": {"all": {"8": 0.5, "9": 0.5},
                                       "large": {"4": 0.4, "5": 0.6}},
              "point_estimate": {"loss": "vi", "expected_loss": 1.3}}
    said = ("Each posterior draw has 4 to 5 clusters holding at least 1 % of the points; the "
            "partition shown has 1, as the VI estimate joins clusters whose points the draws "
            "share out differently from draw to draw.")
    assert said in _lead_paragraph(coarse, [1000])
    coarse["n_clusters_posterior"]["large"] = {"1": 0.2, "4": 0.8}
    assert "Each posterior draw" not in _lead_paragraph(coarse, [1000])


def test_the_lead_counts_the_features_modelled_and_the_columns_left_out():
    """A table whose reading left out an id, a constant and a label: the lead says how many
    columns the model reads, not the file's count, and points to the section that says why."""
    from dpclust.report.lead import _lead_paragraph

    summary = {"n_clusters": 2, "cluster_sizes": [200, 144],
               "data": {"n_samples": 344, "n_features": 18, "source": "penguins_raw.csv"},
               "settings": {"family": "table"},
               "table": {"columns": [], "rules": {},
                         "dropped": [["rownames", "an identifier"], ["Region", "a constant"],
                                     ["Stage", "a constant"], ["Individual ID", "a label"]]}}
    lead = _lead_paragraph(summary, [200, 144])
    assert ('14 features of 18 columns, <a href="#columns-read">4 left out</a>, from '
            '<code>penguins_raw.csv</code>') in lead
    # summaries since written keep the file's columns apart from the features modelled
    summary["data"].update(n_features=14, n_columns=18)
    assert '14 features of 18 columns, <a href="#columns-read">4 left out</a>' in (
        _lead_paragraph(summary, [200, 144]))
    summary["table"]["dropped"] = []
    summary["data"].update(n_features=18, n_columns=18)
    assert "18 features," in _lead_paragraph(summary, [200, 144])
