"""A self-contained HTML report of one fit: summary, tables and embedded figures.

:func:`write_report` is what ``dpclust fit`` calls: it draws the figures (if matplotlib is
installed), writes them as PNG files and writes ``report.html`` with the same PNGs embedded
as base64 data URIs, so the one HTML file can be opened, mailed or archived on its own.  The
page uses inline CSS only (no scripts, fonts or style sheets from the network).

:func:`render_html` builds the page from a summary dict and already written figures; it has
no dependency beyond the standard library and NumPy.  Every string that comes from the
summary is escaped with :func:`html.escape`.

This module assembles the page; its sections live beside it: :mod:`~dpclust.report.lead`
(the lead paragraph and the cards), :mod:`~dpclust.report.verdict` (the convergence verdict
and the warnings), :mod:`~dpclust.report.posterior` (the coarsened posterior, or the fused
clusters beside the raw partition), :mod:`~dpclust.report.tables` (the detail, cluster,
rankings and alpha tables) and :mod:`~dpclust.report.text` (escaping and number
formatting).
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..partitions import canonical_labels
from ..tables import TableData
from . import plots
from .lead import _cards, _lead_paragraph, sampler_words
from .posterior import _answer_section
from .profiles import CSS as _PROFILES_CSS
from .profiles import _columns_read, _profiles_section
from .tables import (_alpha_section, _blocs_table, _cluster_sizes, _cluster_table,
                     _detail_tables, _table1)
from .text import _esc, _rankings_block, json_default
from .verdict import _verdict, _warnings

__all__ = ["render_html", "write_report"]

_MAX_JSON_CHARS = 100_000

_FIGURES = (
    # name, heading, caption
    (
        "trace",
        "MCMC trace",
        ("How the sampler moved, one point per iteration. <b>Log joint</b> is the log "
         "probability of the data and the current partition under the model (higher fits "
         "better); <b>clusters K</b> is the number of occupied clusters. The grey band is the "
         "burn-in, discarded before summarising. After the burn-in the traces should wander "
         "around a stable level with no trend; a trend means the chain needs more iterations. "
         "Several chains are drawn in one colour each: they should overlap."),
    ),
    (
        "calibration",
        "Calibration of the coarsening",
        ("One point per value of α<sub>c</sub> tried (a short run each; ζ = α<sub>c</sub> / "
         "(α<sub>c</sub> + N) beside it): across, the expected number of clusters holding at "
         "least 1% of the points; up, the mean log-likelihood per point. As α<sub>c</sub> "
         "grows the model buys fit with clusters, steeply while they describe structure and "
         "slowly once they only absorb the misfit of the component family. The ringed point, "
         "at the elbow between the two, is the α<sub>c</sub> this run used (Miller &amp; "
         "Dunson 2019, §4.2)."),
    ),
    (
        "clusters",
        "Clusters",
        ("Each point coloured by its cluster in the point estimate. Two-dimensional data are "
         "drawn as they are; higher-dimensional data on their first two principal components, "
         "and count data on a truncated SVD of tf-idf weights. A projection can make separate "
         "clusters look overlapping. For Gaussian clusters the ellipses are 2-standard-deviation "
         "contours and the crosses the cluster means."),
    ),
    (
        "credible_ball",
        "How far the partition could be",
        ("The point estimate (middle) beside the coarsest and the finest partition in its "
         "95% credible ball (Wade &amp; Ghahramani 2018): the ball holds 95% of the "
         "posterior, measured by the same loss the estimate minimises, and these are the "
         "sampled partitions on its edge with the fewest and the most clusters. Each of "
         "their clusters takes the colour of the estimate's cluster holding most of its "
         "points: what the posterior might join or split shows as a colour spreading or a "
         "new one appearing."),
    ),
    (
        "fused_clusters",
        "Fused clusters",
        ("The same points coloured by fused cluster (FOLD): components whose densities "
         "overlap (on average over the posterior less than the threshold apart in Hellinger "
         "distance) are joined. Each fused cluster takes the colour of its largest raw "
         "cluster, so a colour that covers several raw clusters of the figure beside shows "
         "the components it joined."),
    ),
    (
        "profiles",
        "Column profiles",
        ("The columns that separate the clusters most (as in the table above), one panel "
         "each, the clusters across, largest first (the view of PReMiuM's profile plots, "
         "Liverani et al. 2015). Real and count columns: each cluster's mean (dot) and "
         "quartiles (bar), over all the rows' mean (dashed line) and quartiles (grey "
         "band). Yes/no columns: each cluster's share of yes, all the rows' dashed. "
         "Category columns: each cluster's level shares stacked, all the rows' first."),
    ),
    (
        "k_posterior",
        "Posterior of the number of clusters",
        ("How often each number of clusters occurs among the kept draws (of every chain): "
         "counting every cluster, and counting only those with at least 1% of the points. "
         "A Dirichlet-process mixture keeps a few small clusters for outlying points; the "
         "second count is the number of groups that matter."),
    ),
    (
        "tables",
        "Tables against position",
        ("The distance dependent CRP's partition against the rows' positions (their order "
         "when the distances come from a matrix or there are none): one mark per row at its "
         "table, tables numbered by their first row in position order, in the colours of the "
         "other figures (the view of Blei &amp; Frazier 2010, Figure 2). A table confined to a "
         "stretch of positions is what a decay favours; one that spans them all is held "
         "together by the data."),
    ),
    (
        "size_distribution",
        "Cluster size distribution",
        ("Rankings per cluster, largest first, on a log scale (the view of Meilă &amp; Chen "
         "2010, Figure 10), in the colours of the other figures. The dashed lines mark 1% and "
         "0.1% of the rankings; a Dirichlet-process mixture of many rankings leaves a few "
         "large clusters and a long tail of small ones, which are worth a look before "
         "trusting them."),
    ),
    (
        "theta_by_rank",
        "Dispersion by rank",
        ("Each cluster's dispersion θ<sub>j</sub> at rank j, averaged over the clusters "
         "weighted by their sizes, for all clusters and for the large and the small ones "
         "apart (the view of Meilă &amp; Chen 2010, Figure 11). A larger θ<sub>j</sub> means "
         "the rankings of a cluster agree more on their item at rank j; a falling line says "
         "that first choices tell the clusters apart better than later ones."),
    ),
    (
        "cluster_sizes",
        "Cluster sizes",
        ("Points per cluster, largest first, in the same colours as above. Dirichlet-process "
         "mixtures often leave a few very small clusters: look at them before trusting them."),
    ),
    (
        "similarity",
        "Posterior co-clustering",
        ("The probability, over the posterior samples after burn-in, that two points share a "
         "cluster; rows and columns grouped by cluster label. Solid dark blocks are clusters "
         "the posterior is sure of; shading between blocks shows points whose assignment is "
         "uncertain."),
    ),
)

_CSS = """
:root { --ink:#1d2733; --muted:#5c6b7a; --line:#dde3ea; --soft:#f5f7fa; --accent:#1f4e79; }
* { box-sizing: border-box; }
body { margin:0; background:#eef1f5; color:var(--ink); line-height:1.5;
  font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width:1100px; margin:0 auto; padding:28px 24px 48px; }
header { border-bottom:3px solid var(--accent); margin-bottom:18px; }
h1 { margin:0 0 4px; font-size:1.9em; color:var(--accent); }
.subtitle { margin:0 0 12px; color:var(--muted); }
h2 { margin:32px 0 12px; font-size:1.3em; border-bottom:1px solid var(--line);
  padding-bottom:4px; }
h3 { margin:0 0 8px; font-size:1.02em; color:var(--accent); }
.lead { font-size:1.08em; background:#fff; border-radius:8px; padding:14px 18px;
  border:1px solid var(--line); }
.cards { display:grid; grid-template-columns:repeat(auto-fit, minmax(150px, 1fr));
  gap:12px; margin:16px 0; }
.card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:10px 14px; }
.card .value { font-size:1.45em; font-weight:600; color:var(--accent); }
.card .label { font-size:.85em; color:var(--muted); }
.warnings { background:#fff4e0; border:1px solid #f0b860; border-left:6px solid #e08a00;
  border-radius:8px; padding:10px 18px; margin:16px 0; }
.warnings h2 { margin:4px 0 6px; border:none; font-size:1.1em; color:#8a4b00; }
.warnings ul { margin:0; padding-left:20px; }
.verdict { border-radius:6px; padding:10px 16px; margin:14px 0; border:1px solid; }
.verdict h2 { margin:4px 0 6px; border:none; font-size:1.1em; }
.verdict.ok { background:#e9f7ec; border-color:#7cc48a; border-left:6px solid #2e8b45; }
.verdict.ok h2 { color:#1f6b33; }
.verdict.bad { background:#fdeaea; border-color:#e08b8b; border-left:6px solid #c62828; }
.verdict.bad h2 { color:#a01d1d; }
.verdict table { border-collapse:collapse; margin-top:6px; }
.verdict td, .verdict th { padding:2px 10px; text-align:right; }
.verdict td:first-child, .verdict th:first-child { text-align:left; }
.note { background:#e8f1fb; border:1px solid #b6d0ec; border-left:6px solid var(--accent);
  border-radius:8px; padding:10px 18px; margin:16px 0; }
.tables { display:grid; grid-template-columns:repeat(auto-fit, minmax(320px, 1fr)); gap:16px; }
.panel { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px 16px; }
.hint { color:var(--muted); font-size:.85em; margin:8px 0 0; }
table { border-collapse:collapse; width:100%; font-size:.92em; }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line);
  vertical-align:top; }
th { background:var(--soft); font-weight:600; }
tbody tr:nth-child(even) td { background:#fafbfc; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
.flag { color:#b3261e; font-size:.85em; font-weight:600; margin-right:6px; }
tr.unsure td { color:var(--muted); }
.theta { color:var(--muted); font-size:.8em; font-variant-numeric:tabular-nums;
  white-space:nowrap; margin-left:4px; }
tr.foot td { border-top:2px solid var(--line); color:var(--muted); }
table.kv th { width:45%; background:none; font-weight:500; color:var(--muted); }
table.kv td { overflow-wrap:anywhere; }
.tables > .panel { min-width:0; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size:.92em; }
.swatch { display:inline-block; width:.9em; height:.9em; border-radius:2px;
  vertical-align:-0.1em; margin-right:6px; border:1px solid rgba(0,0,0,.15); }
.share { display:flex; align-items:center; gap:8px; justify-content:flex-end; }
.bar { display:inline-block; height:.7em; background:var(--accent); opacity:.55;
  border-radius:2px; }
.figures { display:grid; grid-template-columns:repeat(auto-fit, minmax(440px, 1fr)); gap:16px; }
figure { margin:0; background:#fff; border:1px solid var(--line); border-radius:8px;
  padding:12px; }
figure.wide { grid-column:1 / -1; }
figure img { display:block; max-width:100%; height:auto; margin:0 auto; }
figcaption { color:var(--muted); font-size:.88em; margin-top:8px; }
details { background:#fff; border:1px solid var(--line); border-radius:8px; padding:8px 14px;
  margin-top:24px; }
details pre { max-height:480px; overflow:auto; font-size:.8em; }
footer { margin-top:32px; color:var(--muted); font-size:.85em; text-align:center; }
"""


def _figures(figures: Mapping[str, Path], errors: Mapping[str, str]) -> str:
    blocks = []
    for name, heading, caption in _FIGURES:
        if name in figures:
            data = base64.b64encode(Path(figures[name]).read_bytes()).decode("ascii")
            wide = (' class="wide"' if name in ("trace", "tables", "profiles", "credible_ball")
                    else "")
            blocks.append(
                f'<figure{wide} id="fig-{name}"><h3>{_esc(heading)}</h3>'
                f'<img src="data:image/png;base64,{data}" alt="{_esc(heading)}">'
                f"<figcaption>{caption}</figcaption></figure>"
            )
        elif name in errors:
            blocks.append(
                f'<figure id="fig-{name}"><h3>{_esc(heading)}</h3>'
                f'<p class="hint">This figure could not be drawn: {_esc(errors[name])}</p>'
                "</figure>"
            )
    if not blocks:
        return ""
    return f'<h2>Figures</h2><div class="figures">{"".join(blocks)}</div>'


def _pretty_json(obj: Any, depth: int = 0) -> str:
    """JSON with one line per key for the first two levels and compact values below."""
    if isinstance(obj, Mapping) and obj and depth < 2:
        pad = "  " * (depth + 1)
        items = ",\n".join(f"{pad}{json.dumps(str(k))}: {_pretty_json(v, depth + 1)}"
                           for k, v in obj.items())
        return "{\n" + items + "\n" + "  " * depth + "}"
    return json.dumps(obj, default=json_default, separators=(", ", ": "))


def _json_block(summary: Mapping[str, Any]) -> str:
    text = _pretty_json(summary)
    if len(text) > _MAX_JSON_CHARS and "cluster_params" in summary:
        slim = {k: v for k, v in summary.items() if k != "cluster_params"}
        text = _pretty_json(slim)
        text += "\n(cluster_params left out here: too large to show)"
    return (f"<details><summary>Full summary (JSON)</summary><pre>{_esc(text)}</pre>"
            "</details>")


# --------------------------------------------------------------------------- public


def render_html(
    summary: Mapping[str, Any],
    figures: Mapping[str, str | Path] | None = None,
    *,
    labels: Any = None,
    title: str | None = None,
    figure_errors: Mapping[str, str] | None = None,
    plots_available: bool = True,
) -> str:
    """Build the report page as one self-contained HTML string.

    Parameters
    ----------
    summary : mapping
        The fit summary (see :func:`write_report`); missing optional keys are skipped.
    figures : mapping of str to path, optional
        PNG files to embed, keyed by ``"trace"``, ``"calibration"``, ``"clusters"``,
        ``"fused_clusters"``, ``"profiles"``, ``"k_posterior"``, ``"tables"``,
        ``"size_distribution"``, ``"theta_by_rank"``, ``"cluster_sizes"``, ``"similarity"``.
    labels : array-like of int, shape (n_samples,), optional
        The point-estimate partition; used for cluster sizes if the summary has none.
    title : str, optional
        Page title; default ``"dpclust report"``.
    figure_errors : mapping of str to str, optional
        Why a figure is missing, shown in its place.
    plots_available : bool, default=True
        If False, say that figures need ``pip install dpclust[plot]``.

    Returns
    -------
    html : str
        The page.
    """
    figures = dict(figures or {})
    settings = summary.get("settings") or {}
    data = summary.get("data") or {}
    sizes = _cluster_sizes(summary, labels)
    title = title or "dpclust report"
    sub = []
    if summary.get("ddcrp"):
        sub.append("distance dependent CRP")
    if settings.get("family") is not None:
        sub.append(f"{settings['family']} mixture")
    if settings.get("sampler") is not None:
        sub.append(sampler_words(settings["sampler"], html=False))
    if data.get("source") is not None:
        sub.append(f"data: {data['source']}")
    note = ""
    if not plots_available:
        note = ('<div class="note">Figures are not included because matplotlib is not '
                f"installed. Install the plotting extra with "
                f"<code>{_esc(plots.PLOT_INSTALL_HINT)}</code> and run the fit again.</div>")
    body = "".join([
        f"<header><h1>{_esc(title)}</h1>",
        f'<p class="subtitle">{_esc(" · ".join(sub))}</p>' if sub else "",
        "</header>",
        _lead_paragraph(summary, sizes),
        _verdict(summary),
        _warnings(summary),
        _cards(summary, sizes),
        note,
        _answer_section(summary, sizes),
        _detail_tables(summary),
        _columns_read(summary),
        _profiles_section(summary, sizes),
        _blocs_table(summary),
        _table1(summary, sizes),
        _alpha_section(summary),
        _figures(figures, figure_errors or {}),
        _cluster_table(summary, sizes),
        _json_block(summary),
        "<footer>Generated by dpclust · Dirichlet-process mixture clustering by MCMC</footer>",
    ])
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}{_PROFILES_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def write_report(
    out_dir: str | Path,
    summary: Mapping[str, Any],
    trace: Mapping[str, Any] | None,
    X: Any,
    labels: Any,
    similarity: Any = None,
    title: str | None = None,
    positions: Any = None,
    fused_labels: Any = None,
    credible_ball: Any = None,
) -> dict[str, Path]:
    """Write the figures and a self-contained ``report.html`` for one fit.

    Parameters
    ----------
    out_dir : str or Path
        Output folder, created if needed.
    summary : mapping
        JSON-able fit summary with ``"settings"`` (family, sampler, alpha, n_iter,
        burn_in, thin, seed, ...), ``"data"`` (source, n_samples, n_features, format),
        ``"timings"`` (total_seconds, seconds_per_iteration, point_updates_per_second),
        ``"n_clusters"``, ``"cluster_sizes"`` (one per label), ``"cluster_params"``
        (``"means"`` (n_clusters, n_features) and ``"covariances"`` for Gaussians,
        ``"top_words"`` for multinomials, ``"top_items"`` (each central ranking's first
        items by name) and ``"theta"`` (n_clusters, n_ranks) for rankings), ``"log_joint"``
        (final, best, best_iteration) and optionally ``"point_estimate"``, ``"metrics"``,
        ``"warnings"``, for a distance dependent CRP ``"ddcrp"`` (decay, decay_function,
        sequential, distances, n_tables, ...) and for a Generalized Mallows mixture of
        rankings ``"mallows"`` (n_items, posterior, exact, theta_by_rank, ...).
    trace : mapping of str to array of shape (n_iter,) or None
        Per-iteration ``log_joint``, ``n_clusters``, ``alpha``, ``seconds``.  The burn-in
        length is read from ``summary["settings"]["burn_in"]``.
    X : array-like of shape (n_samples, n_features), scipy.sparse matrix, or Rankings
        The data: dense floats, or sparse counts (documents x vocabulary).  Rankings (a
        summary with ``"mallows"``) have no scatter plot: their report draws the largest
        clusters' central rankings (a table), the cluster size distribution
        (:func:`~dpclust.report.plots.plot_cluster_size_distribution`) and theta by rank
        (:func:`~dpclust.report.plots.plot_theta_by_rank`) instead of the clusters and
        their sizes.
    labels : array-like of int, shape (n_samples,)
        The point-estimate partition, labels ``0 .. n_clusters - 1``.
    similarity : array-like of shape (n_samples, n_samples), optional
        Posterior co-clustering probabilities; drawn if given.
    title : str, optional
        Report title; default ``"dpclust report"``.
    positions : array-like of shape (n_samples,), optional
        A distance dependent CRP's positions (numbers or ``datetime64``), the x axis of the
        tables figure (:func:`~dpclust.report.plots.plot_tables_by_position`), which is
        drawn when the summary has ``"ddcrp"``; without positions, the row index.
    fused_labels : array-like of int, shape (n_samples,), optional
        The fused clusters (the summary's ``"fused"`` block describes them): drawn beside
        the clusters when they differ from ``labels``.
    credible_ball : CredibleBall, optional
        The credible ball around ``labels`` (:func:`dpclust.partitions.credible_ball`):
        its coarsest and finest bounds are drawn beside the estimate, when they differ from
        it.

    Returns
    -------
    paths : dict of str to Path
        ``"report"`` and every figure written: ``"trace"``, ``"calibration"``,
        ``"clusters"``, ``"credible_ball"``, ``"fused_clusters"``, ``"k_posterior"``,
        ``"tables"``,
        ``"size_distribution"``, ``"theta_by_rank"``, ``"cluster_sizes"``, ``"similarity"``.

    Notes
    -----
    Without matplotlib the report is still written, with tables only and a note naming
    ``pip install dpclust[plot]``.  A figure that fails to draw is reported in the page and
    by a :class:`UserWarning`; it never stops the report.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    errors: dict[str, str] = {}
    try:
        plots.import_matplotlib()
        plots_available = True
    except ImportError:
        plots_available = False
    if plots_available:
        jobs = _figure_jobs(summary, trace, X, labels, similarity, positions, fused_labels,
                            credible_ball)
        paths, errors = _draw_figures(out_dir, jobs)

    page = render_html(summary, paths, labels=labels, title=title, figure_errors=errors,
                       plots_available=plots_available)
    report = out_dir / "report.html"
    report.write_text(page, encoding="utf-8")
    paths["report"] = report
    return paths


def _figure_jobs(summary: Mapping[str, Any], trace: Mapping[str, Any] | None, X: Any,
                 labels: Any, similarity: Any, positions: Any,
                 fused_labels: Any = None,
                 ball: Any = None) -> list[tuple[str, bool, Callable[[Path], Path]]]:
    """The report's figures: (name, whether this fit has it, how to draw it to a path)."""
    settings = summary.get("settings") or {}
    calibration = (summary.get("coarsening") or {}).get("calibration")
    burn_in = int(settings.get("burn_in") or 0)
    params = summary.get("cluster_params") or None
    rankings = _rankings_block(summary) is not None
    theta = (params or {}).get("theta")
    if isinstance(X, TableData):  # a table's columns as numbers, for the projection
        X = plots.table_matrix(X)
    profiles = summary.get("profiles")
    return [
        ("trace", bool(trace), lambda p: plots.plot_trace(trace, burn_in, p)),
        ("k_posterior", bool(trace) and trace.get("n_large_clusters") is not None
         and len(trace.get("kept", ())) > 0,
         lambda p: plots.plot_k_posterior(
             np.atleast_2d(trace["n_clusters"])[:, trace["kept"]],
             np.atleast_2d(trace["n_large_clusters"])[:, trace["kept"]], p)),
        ("profiles", bool(profiles) and labels is not None,
         lambda p: plots.plot_profiles(profiles, _cluster_sizes(summary, labels), p)),
        ("calibration", bool(calibration),
         lambda p: plots.plot_calibration(calibration, p)),
        ("clusters", X is not None and labels is not None and not rankings,
         lambda p: plots.plot_clusters(X, labels, p, cluster_params=params)),
        ("credible_ball", X is not None and labels is not None and not rankings
         and _ball_differs(ball, labels),
         lambda p: _draw_ball(X, labels, ball, p)),
        ("fused_clusters", X is not None and not rankings
         and _fused_differs(summary, labels, fused_labels),
         lambda p: _draw_fused(summary, X, labels, fused_labels, p)),
        ("tables", bool(summary.get("ddcrp")) and labels is not None,
         lambda p: _draw_tables(summary, positions, labels, p)),
        ("size_distribution", rankings and labels is not None,
         lambda p: plots.plot_cluster_size_distribution(labels, p, unit="rankings")),
        ("theta_by_rank", rankings and theta is not None,
         lambda p: plots.plot_theta_by_rank(theta, _cluster_sizes(summary, labels), p)),
        ("cluster_sizes", labels is not None and not rankings,
         lambda p: plots.plot_cluster_sizes(labels, p)),
        ("similarity", similarity is not None and labels is not None,
         lambda p: plots.plot_similarity(similarity, labels, p)),
    ]


def _ball_differs(ball: Any, labels: Any) -> bool:
    """Whether the credible ball has a coarsest or finest bound other than the estimate."""
    if ball is None or labels is None:
        return False
    est = canonical_labels(np.asarray(labels))
    return any(not np.array_equal(canonical_labels(b.labels), est)
               for b in (ball.upper_vertical, ball.lower_vertical))


def _draw_ball(X: Any, labels: Any, ball: Any, path: Path) -> Path:
    """The estimate between the coarsest and the finest partition of its credible ball."""
    loss = str(ball.loss).upper()
    bounds = [(f"Coarsest in the {100 * ball.level:g} % ball: "
               f"{ball.upper_vertical.n_clusters} clusters\n({loss} "
               f"{ball.upper_vertical.distance:.2g} from the estimate)",
               ball.upper_vertical.labels),
              (f"Finest in the {100 * ball.level:g} % ball: "
               f"{ball.lower_vertical.n_clusters} clusters\n({loss} "
               f"{ball.lower_vertical.distance:.2g} from the estimate)",
               ball.lower_vertical.labels)]
    return plots.plot_credible_ball(X, labels, bounds, path)


def _fused_differs(summary: Mapping[str, Any], labels: Any, fused_labels: Any) -> bool:
    """Whether there are fused clusters to draw that are not the raw clusters again."""
    if labels is None or fused_labels is None or not (summary.get("fused") or {}).get(
            "computed"):
        return False
    return not np.array_equal(np.asarray(labels), np.asarray(fused_labels))


def _draw_fused(summary: Mapping[str, Any], X: Any, labels: Any, fused_labels: Any,
                path: Path) -> Path:
    """The fused clusters, each in the colour of its largest raw cluster."""
    raw = np.asarray(labels, dtype=np.int64)
    fused = np.asarray(fused_labels, dtype=np.int64)
    table = np.zeros((int(raw.max()) + 1, int(fused.max()) + 1), dtype=np.int64)
    np.add.at(table, (raw, fused), 1)
    colours = plots.fused_colours(table.sum(axis=1), table)
    omega = (summary.get("fused") or {}).get("omega", 1.0)
    return plots.plot_clusters(
        X, fused, path, colours=colours, legend_title="fused cluster (size)",
        title=f"Fused clusters (FOLD, ω = {omega:g}): {table.shape[1]} from {table.shape[0]}")


def _draw_figures(out_dir: Path, jobs) -> tuple[dict[str, Path], dict[str, str]]:
    """Draw the wanted figures of ``jobs`` into ``out_dir``: the paths written, and why
    the others failed (a broken figure must not cost the whole report)."""
    paths: dict[str, Path] = {}
    errors: dict[str, str] = {}
    for name, wanted, draw in jobs:
        if not wanted:
            continue
        try:
            paths[name] = draw(out_dir / f"{name}.png")
        except Exception as exc:  # a broken figure must not cost the whole report
            errors[name] = f"{type(exc).__name__}: {exc}"
            # stacklevel 3: the caller of write_report
            warnings.warn(f"dpclust report: {name}.png not drawn ({errors[name]})",
                          UserWarning, stacklevel=3)
    return paths, errors


def _draw_tables(summary: Mapping[str, Any], positions: Any, labels: Any, path: Path) -> Path:
    """The tables-against-position figure of a ddCRP fit, in the report's cluster colours."""
    data = summary.get("data") or {}
    column = data.get("positions_column")
    if positions is None:
        label = "row (customer)"
    elif column is not None:
        label = str(column)
    else:
        label = "position"
    plots.plot_tables_by_position(positions, labels, path=path,
                                  colours=plots.cluster_colours(labels), position_label=label)
    return Path(path)
