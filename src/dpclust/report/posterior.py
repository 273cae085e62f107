"""Which answer the report shows, in detail: the coarsened posterior (its alpha_c, zeta,
the misfit it tolerates and the calibration grid) or the fused clusters beside the raw
partition (which raw clusters each fused cluster joins, and how far apart they are)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..estimators.coarsening import NEAR_ELBOW
from . import plots
from .text import _esc, _fmt_value, _kv_table, _panel, _plural

#: raw clusters listed in a fused cluster's row (the rest are counted)
_MAX_JOINED = 8
#: fused clusters listed in the table
_MAX_ROWS = 50


def _answer_section(summary: Mapping[str, Any], sizes: list[int]) -> str:
    """The coarsened posterior's panel, or the fused clusters' table (or why there is
    none); empty for a run that has neither block."""
    coarsening = summary.get("coarsening") or {}
    fused = summary.get("fused") or {}
    if coarsening.get("alpha_c") is not None:
        return _coarsening_section(coarsening)
    if fused:
        return _fused_section(fused, sizes)
    return ""


def _coarsening_section(coarsening: Mapping[str, Any]) -> str:
    rows = [("Posterior", "coarsened (Miller &amp; Dunson 2019)"),
            ("α<sub>c</sub>", _esc(_fmt_value(coarsening["alpha_c"]))),
            ("ζ = α<sub>c</sub> / (α<sub>c</sub> + N)", _esc(f"{coarsening['zeta']:.3g}")),
            ("Misfit tolerated (nats per point)",
             _esc(f"{coarsening['tolerated_misfit_nats_per_point']:.3g}")),
            ("Chosen", {"elbow": "at the elbow of fit against complexity",
                        "family default": "the family's default model (<code>--coarsening "
                                          "exact</code> fits the exact posterior)"}.get(
                coarsening.get("chosen_by"), "by the user"))]
    panels = [_panel(
        "What was fitted", _kv_table(rows),
        "The likelihood is raised to the power ζ: the posterior given that the data lie "
        "within about 1/α<sub>c</sub> nats per point (relative entropy) of the model, "
        "instead of exactly from it. Clusters that would only absorb a misfit that small "
        "are not created.")]
    grid = coarsening.get("calibration") or {}
    if grid.get("alpha_c"):
        chosen = grid.get("chosen")
        zeta = list(grid.get("zeta") or [])
        zeta += [None] * (len(grid["alpha_c"]) - len(zeta))
        head = ("<tr><th class=\"num\">α<sub>c</sub></th><th class=\"num\">ζ</th>"
                "<th class=\"num\">fit</th><th class=\"num\">complexity</th></tr>")
        rows = []
        for a, z, f, c in zip(grid["alpha_c"], zeta, grid["fit"], grid["complexity"]):
            cells = [f"{a:g}", "—" if z is None else f"{z:.3g}", f"{f:.4f}", f"{c:.2f}"]
            if chosen is not None and np.isclose(a, chosen):
                cells = [f"<b>{_esc(v)}</b>" for v in cells]
                cells[0] = "chosen → " + cells[0]
            else:
                cells = [_esc(v) for v in cells]
            rows.append("<tr>" + "".join(f'<td class="num">{v}</td>' for v in cells) + "</tr>")
        panels.append(_panel(
            "Calibration grid", f"<table><thead>{head}</thead><tbody>{''.join(rows)}"
            "</tbody></table>",
            f"Short runs of {_esc(grid.get('n_iter', '?'))} iterations, one per α<sub>c</sub>"
            + _subsample_note(grid) + ". Fit: the mean log-likelihood per point; complexity: the expected number of "
            "clusters with at least 1% of the points. The elbow is the point farthest above "
            "the chord from the first to the last (both axes scaled to [0, 1]); the figure "
            "below draws the same curve." + _near_tie(grid)))
    return ('<h2>Coarsened posterior</h2><div class="tables">' + "".join(panels)
            + "</div>")


def _subsample_note(grid: Mapping[str, Any]) -> str:
    """Where the grid ran on a subsample: how many rows, at the same effective sample
    size."""
    if not grid.get("alpha_c_subsample"):
        return ""
    return (f", on a random subsample of {int(grid.get('rows', 0)):,} rows, each at the "
            "α<sub>c</sub> that gives the subsample the effective sample size ζN of the "
            "whole data (the coarsened posterior depends on N and α<sub>c</sub> only "
            "through it)")


def _near_tie(grid: Mapping[str, Any]) -> str:
    """A sentence naming the grid's near-ties to the elbow, if any."""
    near = [f"{a:g}" for a in grid.get("near_elbows") or []]
    if not near:
        return ""
    which = " and ".join(near)
    return (f" <b>Near tie:</b> α<sub>c</sub> = {_esc(which)} {'is' if len(near) == 1 else 'are'}"
            f" almost as far above the chord (at least {NEAR_ELBOW:.0%} of the elbow's "
            "height), and short "
            "runs do not tell them apart: fit that value too (<code>coarsening=</code>) and "
            "compare the answers.")


def _fused_section(fused: Mapping[str, Any], sizes: list[int]) -> str:
    if not fused.get("computed"):
        return ('<h2>Fused clusters</h2><div class="note">Fused clusters were not computed: '
                f"{_esc(fused.get('reason', ''))}.</div>")
    F = int(fused["n_clusters"])
    fsizes = fused.get("sizes") or []
    table = np.asarray(fused.get("crosstab") or [], dtype=np.int64)
    raw_sizes = np.asarray(sizes if sizes else table.sum(axis=1), dtype=np.int64)
    hellinger = fused.get("hellinger") or {}
    within = list(hellinger.get("within_cluster") or [])
    nearest = list(hellinger.get("to_nearest") or [])
    have_table = table.ndim == 2 and table.shape[1] == F and len(raw_sizes) == table.shape[0]
    raw_colours = plots.colours_by_size(np.arange(len(raw_sizes)), raw_sizes)
    colours = plots.fused_colours(raw_sizes, table) if have_table else {}
    rows = []
    for f in range(min(F, _MAX_ROWS)):
        swatch = (f'<span class="swatch" style="background:{colours[f]}"></span>'
                  if f in colours else "")
        joined = "—"
        if have_table:
            members = np.flatnonzero(table[:, f])
            members = members[np.argsort(-table[members, f], kind="stable")]
            parts = [f'<span class="swatch" style="background:{raw_colours[int(k)]}"></span>'
                     f"{int(k)} ({table[k, f]:,})" for k in members[:_MAX_JOINED]]
            if len(members) > _MAX_JOINED:
                parts.append(f"and {len(members) - _MAX_JOINED} more")
            joined = ", ".join(parts)
        size = fsizes[f] if f < len(fsizes) else None
        rows.append(f"<tr><td>{swatch}{f}</td><td class=\"num\">{_esc(_fmt_value(size))}</td>"
                    f"<td>{joined}</td><td class=\"num\">{_distance(within, f)}</td>"
                    f"<td class=\"num\">{_distance(nearest, f)}</td></tr>")
    if F > _MAX_ROWS:
        rows.append(f'<tr class="foot"><td colspan="5">and {F - _MAX_ROWS:,} more fused '
                    "clusters (summary.json and labels.csv have them all)</td></tr>")
    head = ("<tr><th>fused cluster</th><th class=\"num\">points</th>"
            "<th>raw clusters joined (points)</th><th class=\"num\">H within</th>"
            "<th class=\"num\">H to nearest</th></tr>")
    K = len(raw_sizes)
    same = F == K and fused.get("raw_to_fused") == list(range(K))
    intro = (f"The raw partition has {_esc(_plural(K, 'cluster'))}; fusing gives "
             f"{_esc(_plural(F, 'cluster'))}"
             + (": the same clusters, none joined." if same else "."))
    if F > K:
        intro += (" Fusing keeps apart points that the draws put in components far apart, "
                  "so where the draws disagree about where points belong it splits raw "
                  "clusters.")
    hint = ("H is the Hellinger distance (0 to 1) between the components of two points, "
            "averaged over the posterior draws and over the pairs of points: within a fused "
            "cluster, and to the nearest other fused cluster. Points go together when it is "
            f"below {_esc(_fmt_value(fused.get('threshold', 0.5)))} (ω = "
            f"{_esc(_fmt_value(fused.get('omega', 1.0)))}). The "
            "<code>fused_label</code> column of labels.csv gives each point's fused cluster.")
    per_draw = fused.get("per_draw") or {}
    dist = per_draw.get("distribution") or {}
    if dist:
        shares = ", ".join(f"{_esc(k)} in {_esc(_percent(v))}" for k, v in
                           sorted(dist.items(), key=lambda kv: int(kv[0])))
        hint += (f" Fused on its own, each draw gives {shares} of the "
                 f"{per_draw.get('n_draws', '?')} draws per chain judged (mean "
                 f"{_esc(_fmt_value(per_draw.get('mean')))}); the verdict above judges "
                 "that number as it judges K. Like K it counts every small group of "
                 "outlying points that a draw keeps apart, so it can exceed the fused "
                 "clusters of all the draws together.")
    if fused.get("exact") is False:
        hint += (" There were too many distinct blocks of points to fuse one by one, so the "
                 "points that the draws do not agree on moved together, one group per raw "
                 "cluster.")
    body = (f"<p>{intro}</p><table><thead>{head}</thead><tbody>{''.join(rows)}</tbody>"
            "</table>")
    return ('<h2>Fused clusters beside the raw partition</h2>'
            f'<div class="panel">{body}<p class="hint">{hint}</p></div>')


def _percent(share: float) -> str:
    """A share as a whole percentage, with ``<1%`` for small non-zero shares."""
    return "<1%" if 0 < share < 0.005 else f"{100 * share:.0f}%"


def _distance(values: list, f: int) -> str:
    """The Hellinger distance of fused cluster ``f`` from a per-cluster list, or a dash."""
    v = values[f] if f < len(values) else None
    return "—" if v is None else f"{float(v):.3f}"
