"""The report's tables: the run's details (settings, data, timings, log joint, the ddCRP's and
the rankings' blocks), the clusters (columns from each family's
:meth:`~dpclust.families.ConjugateFamily.cluster_table`), the largest clusters of rankings
(Meilă & Chen 2010, Table 1), the blocs, and alpha's sensitivity."""

from __future__ import annotations

import math

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..families import FAMILIES, ClusterTable
from ..families.mallows import theta_at
from . import plots
from .lead import loss_name
from .text import (_esc, _fmt_rate, _fmt_seconds, _fmt_value, _kv_table, _panel,
                   _rankings_block, _scalar)

_MAX_CLUSTER_ROWS = 100
#: the table of the largest clusters of rankings (Meilă & Chen 2010, Table 1): its
#: clusters (columns) and ranks (rows)
_TABLE1_CLUSTERS = 5
_TABLE1_RANKS = 10

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
    "sampling_seconds": "Sampling, all chains",
    "seconds_per_iteration": "Time per iteration",
    "point_updates_per_second": "Point updates per second",
    "first_iteration_seconds": "First iteration",
}

_LOG_JOINT_LABELS = {
    "final": "Final (last iteration)",
    "best": "Best seen",
    "best_iteration": "Iteration of the best",
}


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
    own = _rankings_block(summary)
    if own:
        # the blocs have a table of their own (below); the rule is in its hint
        rows = [(_esc(_MALLOWS_LABELS.get(k, k)), _esc(_fmt_theta(v) if k.startswith("theta")
                                                       else _fmt_value(v)))
                for k, v in own.items() if k not in ("blocs", "near_uniform_rule")]
        family = FAMILIES.get(settings.get("family"))
        panels.append(_panel(
            getattr(family, "title", "Generalized Mallows"), _kv_table(rows),
            getattr(family, "report_hint", "")))
    data = summary.get("data") or {}
    if data:
        rows = [(f"<code>{_esc(k)}</code>", _sentences(v) if k in _SENTENCE_LISTS
                 else _esc(_fmt_value(v))) for k, v in data.items()]
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
                             "A point update is one point reassigned in one sweep. "
                             "Sampling adds up every chain's own time, so with chains in "
                             "parallel it can exceed the total."))
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
            if k == "credible_ball":
                continue
            text = loss_name(v) if k == "loss" else _fmt_value(v)
            rows.append((f"<code>{_esc(k)}</code>", _esc(text)))
        panels.append(_panel(
            "Point estimate", _kv_table(rows),
            "The single partition reported: of all partitions, the one found to minimise the "
            "posterior expected loss, searched by sequential allocation, sweeps and "
            "whole-cluster moves (0 would mean every posterior sample agrees with it)."))
    ball = estimate.get("credible_ball")
    if ball:
        panels.append(_ball_panel(ball, summary.get("n_clusters")))
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


def _ball_panel(ball: Mapping[str, Any], n_clusters: Any) -> str:
    """The credible ball around the estimate: its radius and its three bounds."""
    name = str(ball["loss"]).split("(")[0].upper()
    rows = [("radius", f'<span class="mono">{name} {float(ball["radius"]):.3g}</span>'),
            ("the estimate", f'<span class="mono">{n_clusters} clusters</span>')]
    for key, label in (("upper_vertical", "coarsest (upper vertical bound)"),
                       ("lower_vertical", "finest (lower vertical bound)"),
                       ("horizontal", "farthest (horizontal bound)")):
        b = ball.get(key) or {}
        if b:
            rows.append((label, f'<span class="mono">{int(b["n_clusters"])} clusters, '
                                f'{name} {float(b["distance"]):.3g}</span>'))
    return _panel(
        f"{100 * float(ball['level']):g}% credible ball", _kv_table(rows),
        "The smallest ball around the estimate that holds this share of the posterior, in "
        "the loss the estimate minimises (Wade &amp; Ghahramani 2018); its bounds are the "
        "sampled partitions on its edge with the fewest clusters, the most, and the farthest "
        "from the estimate.")


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
    table = _family_columns(summary)
    presence = summary.get("cluster_presence")
    if presence is not None and len(presence) != len(sizes):
        presence = None  # a summary of another partition (e.g. weighted rows)
    comp = summary.get("components") or {}
    interval = comp.get("weight_interval")
    if interval is not None and len(interval) != len(sizes):
        interval = None
    head = ['<th>cluster</th>', '<th class="num">size</th>', '<th class="num">share</th>']
    if interval is not None:
        head.append(f'<th class="num">weight ({100 * float(comp["level"]):g}% interval)</th>')
    if presence is not None:
        head.append('<th class="num">in draws</th>')
    # numbers are right-aligned in the heading too; other classes style the cells only
    head.extend(f'<th{_css("num" if c.css == "num" else "")}>{c.heading}</th>'
                for c in table.columns)
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
        if interval is not None:
            lo, hi = interval[k]
            cells.append(f'<td class="num">{100 * float(lo):.1f}–{100 * float(hi):.1f}%</td>')
        if presence is not None:
            cells.append(_presence_cell(presence[k]))
        cells.extend(f"<td{_css(c.css)}>{_esc(c.cell(k))}</td>" for c in table.columns)
        rows.append(f"<tr{_unsure(presence, k)}>{''.join(cells)}</tr>")
    if len(sizes) > _MAX_CLUSTER_ROWS:
        rest = [int(k) for k in order[_MAX_CLUSTER_ROWS:]]
        n_rest = sum(sizes[k] for k in rest)
        rows.append(f'<tr><td colspan="{len(head)}">… and {len(rest):,} smaller clusters '
                    f"holding {n_rest:,} points</td></tr>")
    hint = ("Sorted by size. Colours match the figures (clusters beyond the 18th largest are "
            "grey)." + table.note)
    if interval is not None:
        hint += (" <i>Weight</i>: the interval of the cluster's share of the points over the "
                 "posterior draws, its component matched to it in each draw.")
    if presence is not None:
        hint += (" <i>In draws</i>: the share of the posterior draws that have the cluster "
                 "(a cluster made mostly of its points and holding most of them); a cluster "
                 "below 50%, greyed, is one the posterior does not support as drawn.")
    return (f'<h2>Clusters</h2><div class="panel"><table><thead><tr>{"".join(head)}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table><p class="hint">{hint}</p></div>')


def _presence_cell(presence: Any) -> str:
    return f'<td class="num">{100.0 * float(presence):.0f}%</td>'


def _unsure(presence: Any, k: int) -> str:
    """The row attribute that greys a cluster most draws do not hold."""
    return ' class="unsure"' if presence is not None and float(presence[k]) < 0.5 else ""


def _family_columns(summary: Mapping[str, Any]) -> ClusterTable:
    """The cluster-table columns of the summary's family; for a summary that names no
    registered family, those of every family whose parameters its ``cluster_params`` holds
    (in the order of registration)."""
    block = summary.get("cluster_params") or {}
    family = FAMILIES.get((summary.get("settings") or {}).get("family"))
    if family is not None:
        return family.cluster_table(block)
    tables = [f.cluster_table(block) for f in FAMILIES.values()]
    return ClusterTable(tuple(c for table in tables for c in table.columns),
                        "".join(table.note for table in tables))


def _css(css: str) -> str:
    """`` class="..."`` for a table cell, or nothing."""
    return f' class="{css}"' if css else ""


#: entries of the summary's data block that list sentences (a cast-vote record's counting
#: rules, one per rule applied): shown one a line
_SENTENCE_LISTS = ("cleaning",)


def _sentences(values: Any) -> str:
    """A list of sentences as escaped HTML, one a line."""
    return "<br>".join(_esc(str(v)) for v in values) if values else "—"


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


def _theta_1(theta, k: int) -> str:
    """Cluster k's θ at the first rank as text (— where it has none)."""
    t = theta_at(theta, k, 0)
    return "—" if t is None or not math.isfinite(t) else f"{t:.2f}"


def _blocs_table(summary: Mapping[str, Any]) -> str:
    """The clusters with at least 1 % of the rankings ("blocs"), largest first, read from
    their ballots (:func:`dpclust.rankings.blocs.describe_blocs`): first preferences,
    candidates, transfers, the posterior's certainty of each, and the Generalized Mallows
    flag of near-uniform clusters."""
    blocs = summary.get("blocs")
    if not blocs:
        return ""
    own = _rankings_block(summary) or {}
    flagged = {int(b["cluster"]) for b in own.get("blocs") or () if b.get("near_uniform")}
    sizes = summary.get("cluster_sizes") or []
    colours = plots.colours_by_size(np.arange(len(sizes)), sizes) if sizes else {}
    grouped = any(b.get("groups") for b in blocs)
    group = (summary.get("data") or {}).get("group_column") or "group"
    theta = (summary.get("cluster_params") or {}).get("theta")  # Mallows only
    rows, n_unsure = [], 0
    for b in blocs:
        k = int(b["cluster"])
        swatch = (f'<span class="swatch" style="background:{colours[k]}"></span>'
                  if k in colours else "")
        presence = b.get("presence")
        sure = "—" if presence is None else f"{100.0 * float(presence):.0f}%"
        doubtful = presence is not None and float(presence) < 0.5
        n_unsure += doubtful
        transfers = b.get("transfers") or {}
        moves = _shares(transfers.get("to"))
        if transfers.get("stop"):
            moves += f"; stop {100.0 * float(transfers['stop']):.0f}%"
        flag = '<span class="flag">near-uniform</span>' if k in flagged else ""
        if doubtful:
            flag += '<span class="flag">not in most draws</span>'
        unsure = ' class="unsure"' if doubtful else ""
        rows.append(f'<tr{unsure}><td class="num">{swatch}{k}</td>'
                    f'<td class="num">{100.0 * float(b["share"]):.1f}%</td>'
                    f'<td class="num">{int(b["rankings"]):,}</td>'
                    f'<td class="num">{sure}</td>'
                    + (f'<td class="num">{_theta_1(theta, k)}</td>' if theta else "")
                    + f'<td>{_shares(b.get("first_preferences"))}</td>'
                    f'<td>{_shares(b.get("candidates"))}</td>'
                    f'<td><i>{_esc(transfers.get("from", ""))}</i> → {moves}</td>'
                    + (f'<td>{_shares(b.get("groups"))}</td>' if grouped else "")
                    + f"<td>{flag}</td></tr>")
    hint = (f"The {len(blocs)} clusters that hold at least 1% of the rankings, largest first, "
            "described by their own ballots: the share of the bloc's ballots that rank each "
            "candidate first; its <i>candidates</i>, with the share of its ballots that rank "
            "them among their first three; where the voters of its leading first choice "
            "go next (their second preferences, and how many stop there). <i>In draws</i> is "
            "the share of the posterior draws that have the bloc: a cluster made mostly of "
            "its ballots and holding most of them. Below 50% the posterior does not "
            "support the bloc as drawn: its row is greyed and flagged")
    hint += (f" ({n_unsure} of them)." if n_unsure else ".")
    if theta:
        hint += (" <i>θ₁</i> is the bloc's Generalized Mallows dispersion at the first rank: "
                 "the larger, the more its voters agree on their first choice (0: no more "
                 "than chance).")
    if flagged:
        hint += (" A <b>near-uniform</b> cluster (" + _esc(own.get("near_uniform_rule", ""))
                 + ") has a central ranking that means little.")
    return ('<h2>Blocs</h2><div class="panel" id="blocs"><table><thead><tr>'
            '<th class="num">cluster</th><th class="num">share</th><th class="num">rankings'
            '</th><th class="num">in draws</th>'
            + ('<th class="num">θ₁</th>' if theta else "")
            + '<th>first preferences</th><th>candidates '
            '(in first three)</th><th>transfers from the leading first choice</th>'
            + (f"<th>strongest in ({_esc(group)}: the bloc's share of its ballots)</th>"
               if grouped else "")
            + '<th></th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table><p class="hint">{hint}</p></div>')


def _shares(pairs) -> str:
    """``[[name, share], ...]`` as "name 45%, name 20%" (escaped)."""
    return ", ".join(f"{_esc(name)} {100.0 * float(share):.0f}%" for name, share in pairs or ())


def _alpha_section(summary: Mapping[str, Any]) -> str:
    """How alpha shapes the number of clusters: a paragraph (for rankings, or whenever a
    sensitivity table was asked for) and the table of ``--alpha-sensitivity``."""
    rows = summary.get("alpha_sensitivity") or []
    if not rows and _rankings_block(summary) is None:
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
