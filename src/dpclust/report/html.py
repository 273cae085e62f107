"""A self-contained HTML report of one fit: summary, tables and embedded figures.

:func:`write_report` is what ``dpclust fit`` calls: it draws the figures (if matplotlib is
installed), writes them as PNG files and writes ``report.html`` with the same PNGs embedded
as base64 data URIs, so the one HTML file can be opened, mailed or archived on its own.  The
page uses inline CSS only (no scripts, fonts or style sheets from the network).

:func:`render_html` builds the page from a summary dict and already written figures; it has
no dependency beyond the standard library and NumPy.  Every string that comes from the
summary is escaped with :func:`html.escape`.
"""

from __future__ import annotations

import base64
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from ..diagnostics import RANKINGS_MIXING
from ..families import FAMILIES, ConjugateFamily
from ..families.mallows import theta_at
from . import plots

__all__ = ["render_html", "write_report"]

_MAX_CLUSTER_ROWS = 100
_MAX_JSON_CHARS = 100_000
#: the table of the largest clusters of rankings (Meilă & Chen 2010, Table 1): its
#: clusters (columns) and ranks (rows)
_TABLE1_CLUSTERS = 5
_TABLE1_RANKS = 10

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
        "k_posterior",
        "Posterior of the number of clusters",
        ("How often each number of clusters occurs among the kept draws (of every chain): "
         "counting every cluster, and counting only those with at least 1% of the points. "
         "A Dirichlet-process mixture keeps a few small clusters for outlying points; the "
         "second count is the number of groups that matter."),
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

_LOSS_NAMES = {"vi": "Variation of Information (VI)", "binder": "Binder"}

_DDCRP_LABELS = {
    "decay": "Decay",
    "decay_function": "Decay function",
    "sequential": "Sequential",
    "links": "Each row links",
    "distances": "Distances",
    "n_tables": "Tables (point estimate)",
    "n_tables_last_iteration": "Tables (last iteration)",
    "self_links_last_iteration": "Self links (last iteration)",
    "candidate_links": "Candidate links",
}

_MALLOWS_LABELS = {
    "n_items": "Items",
    "ranks_with_theta": "Ranks with a θ (longest ranking)",
    "posterior": "Posterior",
    "exact": "Exact MCMC",
    "substantial_clusters": "Clusters with ≥ 1% of the rankings",
    "singletons": "Singleton clusters",
    "largest_share": "Largest cluster's share",
    "large_cluster_share": "Large clusters from (share)",
    "theta_by_rank": "θ by rank (weighted mean)",
    "theta_by_rank_large": "θ by rank, large clusters",
    "theta_by_rank_small": "θ by rank, small clusters",
}

_TIMING_LABELS = {
    "total_seconds": "Total time",
    "seconds_per_iteration": "Time per iteration",
    "point_updates_per_second": "Point updates per second",
}

_LOG_JOINT_LABELS = {
    "final": "Final (last iteration)",
    "best": "Best seen",
    "best_iteration": "Iteration of the best",
}

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
.flag { color:#b3261e; font-size:.85em; font-weight:600; }
.theta { color:var(--muted); font-size:.8em; font-variant-numeric:tabular-nums;
  white-space:nowrap; margin-left:4px; }
tr.foot td { border-top:2px solid var(--line); color:var(--muted); }
table.kv th { width:45%; background:none; font-weight:500; color:var(--muted); }
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


# --------------------------------------------------------------------------- formatting


def _esc(value: Any) -> str:
    """HTML-escaped ``str(value)``."""
    return escape(str(value), quote=True)


def _scalar(value: Any) -> Any:
    """NumPy scalars as Python scalars; anything else unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def _fmt_number(value: float | int) -> str:
    """A number for people: thousands separators, about four significant digits."""
    value = _scalar(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    a = abs(value)
    if a >= 1e12 or a < 1e-3:
        return f"{value:.3e}"
    if a >= 1000:
        return f"{value:,.1f}"
    if a >= 1:
        return f"{value:.4g}"
    return f"{value:.3g}"


def _fmt_value(value: Any) -> str:
    """Any summary value as (unescaped) text."""
    value = _scalar(value)
    if value is None:
        return "—"
    if isinstance(value, (bool, int, float)):
        return _fmt_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        value = value.tolist()
    try:
        return json.dumps(value, default=json_default)
    except (TypeError, ValueError):
        return str(value)


def _fmt_seconds(seconds: Any) -> str:
    """A duration: ``0.42 s``, ``12.3 s``, ``3 min 12 s``, ``1 h 02 min``."""
    try:
        s = float(_scalar(seconds))
    except (TypeError, ValueError):
        return str(seconds)
    if not math.isfinite(s):
        return _fmt_number(s)
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(round(s % 60)):02d} s"
    return f"{int(s // 3600)} h {int(round(s % 3600 / 60)):02d} min"


def _fmt_rate(rate: Any) -> str:
    """A rate per second with a k/M/G suffix."""
    try:
        r = float(_scalar(rate))
    except (TypeError, ValueError):
        return str(rate)
    for factor, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(r) >= factor:
            return f"{r / factor:.3g}{suffix}/s"
    return f"{r:.3g} /s"


def json_default(obj: Any) -> Any:
    """``json.dumps`` fallback for NumPy arrays, scalars and paths."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return str(obj)


def _plural(n: Any, word: str) -> str:
    return f"{_fmt_value(n)} {word}{'' if n == 1 else 's'}"


def _kv_table(rows: Sequence[tuple[str, str]]) -> str:
    """A two-column table; ``rows`` are already-escaped ``(label, value)`` HTML pairs."""
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="kv"><tbody>{body}</tbody></table>'


def _panel(heading: str, body: str, hint: str = "") -> str:
    hint_html = f'<p class="hint">{hint}</p>' if hint else ""
    return f'<div class="panel"><h3>{_esc(heading)}</h3>{body}{hint_html}</div>'


# --------------------------------------------------------------------------- sections


def _lead_paragraph(summary: Mapping[str, Any], sizes: list[int]) -> str:
    settings = summary.get("settings") or {}
    data = summary.get("data") or {}
    timings = summary.get("timings") or {}
    K = summary.get("n_clusters", len(sizes))
    n = data.get("n_samples", sum(sizes) if sizes else None)
    ddcrp = summary.get("ddcrp") or {}
    mallows = summary.get("mallows") or {}
    unit = "table" if ddcrp else "cluster"
    parts = [f"dpclust found <b>{_esc(_plural(K, unit))}</b>"]
    if n is not None:
        detail = []
        if data.get("n_features") is not None:
            detail.append(_esc(_plural(data["n_features"], "feature")))
        if data.get("n_items") is not None:
            detail.append(f"of {_esc(_plural(data['n_items'], 'item'))}")
        if data.get("source") == "demo":
            detail.append("the built-in demo data")
        elif data.get("dataset") is not None:
            detail.append(_esc(data["dataset"]))
        elif data.get("source") is not None:
            detail.append(f"from <code>{_esc(data['source'])}</code>")
            if data.get("read_as") and (data.get("separator"), data.get("decimal")) != (
                    "comma", "."):
                detail.append(f"read as {_esc(data['read_as'])}")
        sub = data.get("subsample") or {}
        if sub.get("of") is not None:
            detail.append(f"a random {_fmt_value(sub['n'])} of the {_fmt_value(sub['of'])}, "
                          f"drawn with seed {_esc(sub.get('seed'))}")
        parts.append(f" in <b>{_esc(_plural(n, 'ranking' if mallows else 'point'))}</b>")
        if detail:
            parts.append(f" ({', '.join(detail)})")
    if settings.get("sampler") is not None:
        parts.append(f" with the <b>{_esc(settings['sampler'])}</b> sampler")
    if settings.get("family") is not None:
        parts.append(f" and a {_esc(settings['family'])} mixture")
    if settings.get("alpha") is not None:
        alpha = settings["alpha"]
        sep = ": " if isinstance(alpha, str) else " = "
        name = "self-link weight" if ddcrp else "concentration"
        parts.append(f" ({name} α{sep}{_esc(_fmt_value(alpha))})")
    sentence = "".join(parts) + "."
    if str(settings.get("sampler", "")).startswith("subcluster-approx"):
        sentence += (" <b>The sampler is approximate</b> (the paper's sub-cluster splits and "
                     "merges, which leave out the probability of proposing the sub-clusters): "
                     "its draws are not from the posterior, and on overlapping clusters it "
                     "loses clusters; <code>--sampler subcluster</code> is exact.")
    if ddcrp:
        sentence += " " + _ddcrp_sentence(ddcrp)
    if mallows:
        sentence += " " + _mallows_sentence(mallows)
    run = []
    if settings.get("n_iter") is not None:
        run.append(f"It ran {_esc(_plural(settings['n_iter'], 'iteration'))}")
        extra = []
        if settings.get("burn_in"):
            extra.append(f"the first {_esc(_fmt_value(settings['burn_in']))} discarded "
                         "as burn-in")
        if settings.get("thin") not in (None, 0, 1):
            extra.append(f"thinned by {_esc(_fmt_value(settings['thin']))}")
        if extra:
            run.append(f" ({', '.join(extra)})")
    if timings.get("total_seconds") is not None:
        run.append((" in " if run else "It took ")
                   + f"<b>{_esc(_fmt_seconds(timings['total_seconds']))}</b>")
    if run:
        sentence += " " + "".join(run) + "."
    if sizes and sum(sizes) > 0:
        share = 100.0 * max(sizes) / sum(sizes)
        what = "rankings" if mallows else "points"
        sentence += f" The largest cluster holds {share:.0f}% of the {what}."
    estimate = summary.get("point_estimate") or {}
    if estimate.get("loss") is not None:
        loss = _LOSS_NAMES.get(str(estimate["loss"]).lower(), str(estimate["loss"]))
        sentence += (" The partition shown is the one that minimises the posterior expected "
                     f"{_esc(loss)} loss")
        if estimate.get("expected_loss") is not None:
            sentence += f" (expected loss {_esc(_fmt_value(estimate['expected_loss']))})"
        sentence += "."
    metrics = summary.get("metrics") or {}
    if metrics:
        scores = ", ".join(f"{_esc(str(k).upper())} {_esc(_fmt_value(v))}"
                           for k, v in metrics.items())
        sentence += (f" Compared with the true labels: {scores} "
                     "(1 means identical partitions).")
    return f'<p class="lead">{sentence}</p>'


def _ddcrp_sentence(ddcrp: Mapping[str, Any]) -> str:
    """What the lead paragraph says about a distance dependent CRP fit."""
    text = "The prior is a distance dependent CRP (Blei &amp; Frazier 2010)"
    if ddcrp.get("decay") is not None:
        text += f" with the <b>{_esc(ddcrp['decay'])}</b> decay"
        if ddcrp.get("decay_function"):
            text += f", <code>{_esc(ddcrp['decay_function'])}</code>"
    text += "."
    if ddcrp.get("distances"):
        text += f" Distances: {_esc(ddcrp['distances'])}."
    if ddcrp.get("sequential") is not None:
        text += (" It is <b>sequential</b>: each row links only to itself or to an earlier "
                 "row." if ddcrp["sequential"] else
                 " It is not sequential: each row may link to any other row.")
    if ddcrp.get("n_tables_last_iteration") is not None:
        text += (" The last iteration's links make "
                 f"{_esc(_plural(ddcrp['n_tables_last_iteration'], 'table'))}.")
    return text


def _mallows_sentence(mallows: Mapping[str, Any]) -> str:
    """What the lead paragraph says about a Generalized Mallows mixture of rankings."""
    text = ("Each cluster is a Generalized Mallows model (Meilă &amp; Chen 2010): a central "
            "ranking of the items and a dispersion θ<sub>j</sub> for each rank j, larger "
            "where the cluster's rankings agree more.")
    if mallows.get("substantial_clusters") is not None:
        text += (f" {_esc(_plural(mallows['substantial_clusters'], 'cluster'))} "
                 f"{'holds' if mallows['substantial_clusters'] == 1 else 'hold'} at least 1% "
                 "of the rankings.")
    if mallows.get("exact") is False:
        text += (" <b>The sampler is approximate</b> (Beta-Gibbs): its draws are not from "
                 "the posterior; Slice-Gibbs (<code>--sampler slice-gibbs</code>) is exact.")
    return text


def _cards(summary: Mapping[str, Any], sizes: list[int]) -> str:
    data = summary.get("data") or {}
    timings = summary.get("timings") or {}
    log_joint = summary.get("log_joint") or {}
    ddcrp = summary.get("ddcrp") or {}
    cards = [("tables" if ddcrp else "clusters",
              _fmt_value(summary.get("n_clusters", len(sizes))))]
    if ddcrp.get("decay") is not None:
        cards.append(("decay" + (", sequential" if ddcrp.get("sequential") else ""),
                      str(ddcrp["decay"])))
    if data.get("n_samples") is not None:
        cards.append(("rankings" if summary.get("mallows") else "points",
                      _fmt_value(data["n_samples"])))
    if data.get("n_items") is not None:
        cards.append(("items", _fmt_value(data["n_items"])))
    if timings.get("total_seconds") is not None:
        cards.append(("total time", _fmt_seconds(timings["total_seconds"])))
    if log_joint.get("best") is not None:
        cards.append(("best log joint", _fmt_value(log_joint["best"])))
    for name, value in (summary.get("metrics") or {}).items():
        cards.append((str(name).upper(), _fmt_value(value)))
    items = "".join(
        f'<div class="card"><div class="value">{_esc(v)}</div>'
        f'<div class="label">{_esc(k)}</div></div>'
        for k, v in cards
    )
    return f'<div class="cards">{items}</div>'


def _warnings(summary: Mapping[str, Any]) -> str:
    items = summary.get("warnings") or []
    if isinstance(items, str):
        items = [items]
    if not items:
        return ""
    lis = "".join(f"<li>{_esc(w)}</li>" for w in items)
    return (f'<section class="warnings" role="alert"><h2>⚠ Warnings ({len(items)})</h2>'
            f"<ul>{lis}</ul></section>")


_QUANTITY_LABELS = {"log_likelihood": "log-likelihood", "n_clusters": "number of clusters",
                    "size_entropy": "entropy of the cluster sizes", "alpha": "alpha"}


def _verdict(summary: Mapping[str, Any]) -> str:
    """The convergence banner: green when every quantity passes the rule, red otherwise,
    with the diagnostics table (R-hat, bulk and tail ESS per quantity)."""
    conv = summary.get("convergence")
    if not conv:
        return ""

    def fmt(v, digits):
        return "–" if v is None else f"{v:.{digits}f}"

    rows = "".join(
        f"<tr><td>{_esc(label)}</td><td>{fmt(conv[q]['rhat'], 3)}</td>"
        f"<td>{fmt(conv[q]['ess_bulk'], 0)}</td><td>{fmt(conv[q]['ess_tail'], 0)}</td>"
        f"<td>{'✓' if conv[q]['converged'] else '✗'}</td></tr>"
        for q, label in _QUANTITY_LABELS.items() if isinstance(conv.get(q), dict))
    table = ("<table><tr><th>quantity</th><th>R-hat</th><th>bulk ESS</th><th>tail ESS</th>"
             f"<th>passes</th></tr>{rows}</table>")
    chains = int(conv.get("n_chains", 1))
    draws = int(conv.get("n_draws", 0))
    scope = (f"{chains} chains × {draws} kept draws" if chains > 1 else
             f"one chain, {draws} kept draws: split R-hat compares the chain's quarters, so a "
             "mode the chain never visited goes unseen; several chains see more")
    if conv["converged"]:
        head = "✓ Converged"
        text = f"Every quantity passes the rule ({conv['rule']}); {scope}."
        cls = "ok"
    else:
        head = "✗ Not converged: these results cannot be trusted yet"
        if summary.get("mallows"):
            todo = f"Run several long chains: {RANKINGS_MIXING}."
        else:
            todo = ("Run more iterations (a longer burn-in if the traces still drift) or "
                    "several chains, or use a sampler with split-merge moves.")
        text = f"Fails the rule ({conv['rule']}); {scope}. {todo}"
        cls = "bad"
    return (f'<section class="verdict {cls}" role="status"><h2>{_esc(head)}</h2>'
            f"<p>{_esc(text)}</p>{table}</section>")


def _detail_tables(summary: Mapping[str, Any]) -> str:
    panels = []
    settings = summary.get("settings") or {}
    if settings:
        rows = [(f"<code>{_esc(k)}</code>", _esc(_fmt_value(v))) for k, v in settings.items()]
        panels.append(_panel("Settings", _kv_table(rows)))
    ddcrp = summary.get("ddcrp") or {}
    if ddcrp:
        rows = [(_esc(_DDCRP_LABELS.get(k, k)), _esc(_fmt_value(v))) for k, v in ddcrp.items()]
        panels.append(_panel(
            "Distance dependent CRP", _kv_table(rows),
            "Each row links to another with weight f(distance), or to itself with weight "
            "α; the tables are the groups that links join. Tables (point estimate) counts "
            "the reported partition."))
    mallows = summary.get("mallows") or {}
    if mallows:
        rows = [(_esc(_MALLOWS_LABELS.get(k, k)), _esc(_fmt_theta(v) if k.startswith("theta")
                                                       else _fmt_value(v)))
                for k, v in mallows.items()]
        panels.append(_panel(
            "Generalized Mallows", _kv_table(rows),
            "Rankings of the items, best first, clustered around central rankings. θ by "
            "rank averages each cluster's θ<sub>j</sub> weighted by its size (ranks 1, 2, "
            "…), as in the figure below."))
    data = summary.get("data") or {}
    if data:
        rows = [(f"<code>{_esc(k)}</code>", _esc(_fmt_value(v))) for k, v in data.items()]
        panels.append(_panel("Data", _kv_table(rows)))
    timings = summary.get("timings") or {}
    if timings:
        rows = []
        for k, v in timings.items():
            if k.endswith("per_second"):
                text = _fmt_rate(v)
            elif k.endswith("seconds") or k.startswith("seconds"):
                text = _fmt_seconds(v)
            else:
                text = _fmt_value(v)
            rows.append((_esc(_TIMING_LABELS.get(k, k)), f'<span class="mono">{_esc(text)}</span>'))
        panels.append(_panel("Timings", _kv_table(rows),
                             "A point update is one point reassigned in one sweep."))
    certainty = summary.get("certainty") or {}
    if certainty:
        rows = [("mean", f'<span class="mono">{certainty["mean"]:.3f}</span>'),
                ("points below 0.9", f'<span class="mono">{certainty["below_0.9"]:,} '
                 f'({100 * certainty["share_below_0.9"]:.1f}%)</span>'),
                ("points below 0.5", f'<span class="mono">{certainty["below_0.5"]:,}</span>')]
        panels.append(_panel(
            "Point certainty", _kv_table(rows),
            "A point's certainty is the share of kept draws in which it lies with the bulk of "
            "its cluster (the draw's cluster holding most of that cluster's points); each "
            "point's value is the <code>certainty</code> column of labels.csv. Points below "
            "0.5 belong elsewhere as often as not."))
    log_joint = summary.get("log_joint") or {}
    if log_joint:
        rows = [(_esc(_LOG_JOINT_LABELS.get(k, k)), f'<span class="mono">{_esc(_fmt_value(v))}</span>')
                for k, v in log_joint.items()]
        panels.append(_panel(
            "Log joint", _kv_table(rows),
            "log p(data, partition) under the model; higher fits better. Comparable only "
            "between runs on the same data with the same model."))
    estimate = summary.get("point_estimate") or {}
    if estimate:
        rows = []
        for k, v in estimate.items():
            text = _LOSS_NAMES.get(str(v).lower(), _fmt_value(v)) if k == "loss" else _fmt_value(v)
            rows.append((f"<code>{_esc(k)}</code>", _esc(text)))
        panels.append(_panel(
            "Point estimate", _kv_table(rows),
            "The single partition reported, chosen to minimise the posterior expected loss "
            "(0 would mean every posterior sample agrees with it)."))
    metrics = summary.get("metrics") or {}
    if metrics:
        rows = [(_esc(str(k).upper()), f'<span class="mono">{_esc(_fmt_value(v))}</span>')
                for k, v in metrics.items()]
        panels.append(_panel(
            "Agreement with the true labels", _kv_table(rows),
            "NMI: normalised mutual information; ARI: adjusted Rand index. 1 means the same "
            "partition; near 0, no better than chance."))
    if not panels:
        return ""
    return f'<h2>Run details</h2><div class="tables">{"".join(panels)}</div>'


def _figures(figures: Mapping[str, Path], errors: Mapping[str, str]) -> str:
    blocks = []
    for name, heading, caption in _FIGURES:
        if name in figures:
            data = base64.b64encode(Path(figures[name]).read_bytes()).decode("ascii")
            wide = ' class="wide"' if name in ("trace", "tables") else ""
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


def _cluster_table(summary: Mapping[str, Any], sizes: list[int]) -> str:
    """Every cluster, largest first: its size and share, then the columns its family adds
    (:meth:`~dpclust.families.ConjugateFamily.cluster_table`: means, top words, central
    rankings ...) from the summary's ``cluster_params``."""
    if not sizes:
        return ""
    ids = np.arange(len(sizes))
    colours = plots.colours_by_size(ids, sizes)
    order = np.lexsort((ids, -np.asarray(sizes)))
    total = sum(sizes)
    family = FAMILIES.get((summary.get("settings") or {}).get("family"), ConjugateFamily)
    table = family.cluster_table(summary.get("cluster_params") or {})
    head = ['<th>cluster</th>', '<th class="num">size</th>', '<th class="num">share</th>']
    head.extend(f'<th{_css(c.css)}>{c.heading}</th>' for c in table.columns)
    rows = []
    for k in order[:_MAX_CLUSTER_ROWS]:
        k = int(k)
        share = 100.0 * sizes[k] / total if total else 0.0
        cells = [
            f'<td><span class="swatch" style="background:{colours[k]}"></span>{k}</td>',
            f'<td class="num">{sizes[k]:,}</td>',
            (f'<td class="num"><span class="share"><span class="bar" '
             f'style="width:{max(share, 0.5) * 0.8:.1f}px"></span>{share:.1f}%</span></td>'),
        ]
        cells.extend(f"<td{_css(c.css)}>{_esc(c.cell(k))}</td>" for c in table.columns)
        rows.append(f"<tr>{''.join(cells)}</tr>")
    if len(sizes) > _MAX_CLUSTER_ROWS:
        rest = [int(k) for k in order[_MAX_CLUSTER_ROWS:]]
        n_rest = sum(sizes[k] for k in rest)
        rows.append(f'<tr><td colspan="{len(head)}">… and {len(rest):,} smaller clusters '
                    f"holding {n_rest:,} points</td></tr>")
    hint = ("Sorted by size. Colours match the figures (clusters beyond the 18th largest are "
            "grey)." + table.note)
    return (f'<h2>Clusters</h2><div class="panel"><table><thead><tr>{"".join(head)}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table><p class="hint">{hint}</p></div>')


def _css(css: str) -> str:
    """`` class="..."`` for a table cell, or nothing."""
    return f' class="{css}"' if css else ""


def _fmt_theta(values: Any) -> str:
    """A list of thetas, rank 1 first, to three significant digits."""
    if values is None:
        return "—"
    try:
        return ", ".join(f"{float(v):.3g}" for v in values)
    except (TypeError, ValueError):
        return _fmt_value(values)


def _table1(summary: Mapping[str, Any], sizes: list[int]) -> str:
    """The largest clusters of rankings side by side: the first items of each central
    ranking, rank by rank, with the cluster's theta_j at each rank (Meilă & Chen 2010,
    Table 1)."""
    params = summary.get("cluster_params") or {}
    top_items, theta = params.get("top_items"), params.get("theta")
    if not summary.get("mallows") or not sizes or top_items is None:
        return ""
    ids = np.arange(len(sizes))
    colours = plots.colours_by_size(ids, sizes)
    order = [int(k) for k in np.lexsort((ids, -np.asarray(sizes)))[:_TABLE1_CLUSTERS]
             if k < len(top_items) and len(top_items[k])]
    if not order:
        return ""
    total = sum(sizes)
    n_ranks = min(_TABLE1_RANKS, max(len(top_items[k]) for k in order))
    head = ['<th class="num">rank</th>']
    for k in order:
        share = 100.0 * sizes[k] / total if total else 0.0
        head.append(f'<th><span class="swatch" style="background:{colours[k]}"></span>'
                    f"cluster {k} · {share:.1f}%</th>")
    rows = []
    for j in range(n_ranks):
        cells = [f'<td class="num">{j + 1}</td>']
        for k in order:
            item = top_items[k][j] if j < len(top_items[k]) else ""
            t = theta_at(theta, k, j)
            mark = f' <span class="theta">θ {t:.2f}</span>' if t is not None else ""
            cells.append(f"<td>{_esc(item)}{mark}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    foot = ['<td class="num">size</td>'] + [f"<td>{sizes[k]:,} rankings</td>" for k in order]
    rows.append(f'<tr class="foot">{"".join(foot)}</tr>')
    covered = 100.0 * sum(sizes[k] for k in order) / total if total else 0.0
    n_order = len(order)
    hint = (f"The central rankings of the {n_order} largest clusters, best first, which hold "
            f"{covered:.0f}% of the rankings; the share of each cluster is in its heading "
            "(the layout of Meilă &amp; Chen 2010, Table 1). Beside each item is the "
            "cluster's θ<sub>j</sub> at that rank: the larger, the more its rankings agree "
            "on that place. Every cluster is listed below.")
    return (f'<h2>Largest clusters</h2><div class="panel" id="table1"><table>'
            f'<thead><tr>{"".join(head)}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<p class="hint">{hint}</p></div>')


_BLOCS_ITEMS = 5


def _blocs_table(summary: Mapping[str, Any]) -> str:
    """The clusters with at least 1 % of the rankings ("blocs"), largest first, with the
    near-uniform ones flagged."""
    mallows = summary.get("mallows") or {}
    blocs = mallows.get("blocs")
    if not blocs:
        return ""
    rows = []
    for b in blocs:
        ranking = list(b.get("central_ranking") or [])
        shown = " › ".join(_esc(x) for x in ranking[:_BLOCS_ITEMS])
        if len(ranking) > _BLOCS_ITEMS:
            shown += " › …"
        flag = ('<span class="flag">near-uniform</span>' if b.get("near_uniform") else "")
        rows.append(f'<tr><td class="num">{int(b["cluster"])}</td>'
                    f'<td class="num">{100.0 * float(b["share"]):.1f}%</td>'
                    f'<td class="num">{int(b["rankings"]):,}</td><td>{shown}</td>'
                    f'<td class="num">{float(b["theta_1"]):.2f}</td>'
                    f'<td class="num">{float(b["top_item_probability"]):.2f}</td>'
                    f"<td>{flag}</td></tr>")
    n_flag = sum(bool(b.get("near_uniform")) for b in blocs)
    n_items = mallows.get("n_items")
    uniform = f"1/{n_items} = {1.0 / n_items:.2f}" if n_items else "1/n"
    hint = (f"The {len(blocs)} clusters that hold at least 1% of the rankings, largest first: "
            "the blocs to read. <i>P(first)</i> is the probability that a ranking of the "
            "cluster puts the central ranking's first item first, against "
            f"{uniform} for a uniformly random pick. A <b>near-uniform</b> cluster ("
            f"{_esc(mallows.get('near_uniform_rule', ''))}) gathers rankings that agree on "
            "little: its central ranking means little there."
            + (f" {n_flag} of them {'is' if n_flag == 1 else 'are'} flagged." if n_flag else
               ""))
    return ('<h2>Blocs</h2><div class="panel" id="blocs"><table><thead><tr>'
            '<th class="num">cluster</th><th class="num">share</th><th class="num">rankings'
            '</th><th>central ranking (best first)</th><th class="num">θ<sub>1</sub></th>'
            '<th class="num">P(first)</th><th></th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table><p class="hint">{hint}</p></div>')


def _alpha_section(summary: Mapping[str, Any]) -> str:
    """How alpha shapes the number of clusters: a paragraph (for rankings, or whenever a
    sensitivity table was asked for) and the table of ``--alpha-sensitivity``."""
    rows = summary.get("alpha_sensitivity") or []
    if not rows and not summary.get("mallows"):
        return ""
    text = ("Under a Dirichlet process prior the number of clusters grows with the data: "
            "about α log N clusters a priori, and more in the posterior when the clusters' "
            "model does not fit real data exactly, because extra clusters then take up the "
            "misfit. So K is not the number of groups in a population; the clusters with at "
            "least 1% of the points are the ones to read, and α sets how readily new "
            "clusters open: a smaller α (for example 0.01) asks for fewer, broader clusters, "
            "and <code>--alpha gamma:SHAPE,RATE</code> lets the data choose α. "
            "<code>--alpha-sensitivity A1 A2 …</code> fits again with other values and "
            "tabulates the result here.")
    table = ""
    if rows:
        body = []
        for r in rows:
            def num(key, fmt):
                v = r.get(key)
                return "—" if v is None else format(v, fmt)
            alpha = r.get("alpha")
            label = _esc(alpha if isinstance(alpha, str) else format(float(alpha), "g"))
            if r.get("this_run"):
                label += " (this run)"
            body.append(f"<tr><td>{label}</td><td class=\"num\">{num('n_clusters', '.1f')}</td>"
                        f"<td class=\"num\">{num('clusters_1pct', '.1f')}</td>"
                        f"<td class=\"num\">{num('log_likelihood', '.6g')}</td>"
                        f"<td>{'yes' if r.get('converged') else 'no'}</td></tr>")
        table = ("<table><thead><tr><th>α</th><th class=\"num\">E[K]</th>"
                 "<th class=\"num\">E[K, clusters ≥ 1%]</th><th class=\"num\">"
                 "E[log-likelihood]</th><th>converged</th></tr></thead><tbody>"
                 f"{''.join(body)}</tbody></table>")
    return (f'<h2>How α shapes the number of clusters</h2><div class="panel" id="alpha">'
            f"{table}<p class=\"hint\">{text}</p></div>")


def _cluster_sizes(summary: Mapping[str, Any], labels: Any) -> list[int]:
    """Sizes per cluster label: from the summary, else counted from ``labels``."""
    sizes = summary.get("cluster_sizes")
    if sizes is not None:
        return [int(_scalar(s)) for s in sizes]
    if labels is not None:
        labels = np.asarray(labels, dtype=np.int64)
        if labels.size and labels.min() >= 0:
            return np.bincount(labels).tolist()
    return []


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
        PNG files to embed, keyed by ``"trace"``, ``"clusters"``, ``"tables"``,
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
        sub.append(f"{settings['sampler']} sampler")
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
        _detail_tables(summary),
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
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
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

    Returns
    -------
    paths : dict of str to Path
        ``"report"`` and every figure written: ``"trace"``, ``"clusters"``, ``"tables"``,
        ``"size_distribution"``, ``"theta_by_rank"``, ``"cluster_sizes"``, ``"similarity"``.

    Notes
    -----
    Without matplotlib the report is still written, with tables only and a note naming
    ``pip install dpclust[plot]``.  A figure that fails to draw is reported in the page and
    by a :class:`UserWarning`; it never stops the report.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = summary.get("settings") or {}
    burn_in = int(settings.get("burn_in") or 0)
    params = summary.get("cluster_params") or None
    rankings = bool(summary.get("mallows"))
    theta = (params or {}).get("theta")

    paths: dict[str, Path] = {}
    errors: dict[str, str] = {}
    try:
        plots.import_matplotlib()
        plots_available = True
    except ImportError:
        plots_available = False

    if plots_available:
        jobs: list[tuple[str, bool, Callable[[Path], Path]]] = [
            ("trace", bool(trace), lambda p: plots.plot_trace(trace, burn_in, p)),
            ("k_posterior", bool(trace) and trace.get("n_large_clusters") is not None
             and len(trace.get("kept", ())) > 0,
             lambda p: plots.plot_k_posterior(
                 np.atleast_2d(trace["n_clusters"])[:, trace["kept"]],
                 np.atleast_2d(trace["n_large_clusters"])[:, trace["kept"]], p)),
            ("clusters", X is not None and labels is not None and not rankings,
              lambda p: plots.plot_clusters(X, labels, p, cluster_params=params)),
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
        for name, wanted, draw in jobs:
            if not wanted:
                continue
            try:
                paths[name] = draw(out_dir / f"{name}.png")
            except Exception as exc:  # a broken figure must not cost the whole report
                errors[name] = f"{type(exc).__name__}: {exc}"
                warnings.warn(f"dpclust report: {name}.png not drawn ({errors[name]})",
                              UserWarning, stacklevel=2)

    page = render_html(summary, paths, labels=labels, title=title, figure_errors=errors,
                       plots_available=plots_available)
    report = out_dir / "report.html"
    report.write_text(page, encoding="utf-8")
    paths["report"] = report
    return paths


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
