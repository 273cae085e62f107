"""The report's sections for a fit to a table: how each column was read, and the column
profiles of the clusters (PReMiuM's profile plots as a table).

Both read the run summary only: its ``table`` block (each column's row of the family's
``describe()``, the columns left out, the cleaning rules) and its ``profiles`` block
(:func:`dpclust.tables.profiles.as_summary`).  The profiles table has one row per column
of the data, the columns that separate the clusters most first, and one column per
cluster, the largest first; each cell shows the cluster's mean (real and count columns),
its share of *yes* (yes/no columns) or its most over-represented level (categories), and
is coloured by how far that lies from all the rows; a grey line under the cell is its
share of missing cells.  Wide tables stay readable: the rows scroll inside a box of
bounded height, under a heading and beside a first column that stay in view.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..tables import KINDS
from . import plots
from .text import _esc, _fmt_number

#: clusters (the largest) and data columns (the most separating) in the profiles table
MAX_PROFILE_CLUSTERS = 12
MAX_PROFILE_ROWS = 200
#: a difference of this many overall standard deviations (real, count columns) or of this
#: share (levels) gets the full colour
FULL_SD = 2.0
FULL_SHARE = 0.5

_YES = frozenset({"1", "1.0", "yes", "true", "y", "t"})

#: what each kind is called in the report
KIND_NAMES = {"gaussian": "real", "bernoulli": "yes/no", "categorical": "category",
              "poisson": "count", "left out": "left out"}

CSS = """
.scroll { max-height:640px; overflow:auto; border:1px solid var(--line); border-radius:6px; }
.scroll.short { max-height:420px; }
table.profiles { width:auto; min-width:100%; font-size:.84em; }
table.profiles th, table.profiles td { white-space:nowrap; padding:4px 6px; }
table.profiles thead th { position:sticky; top:0; z-index:2; }
table.profiles .col { position:sticky; left:0; z-index:1; background:#fff; max-width:210px;
  overflow:hidden; text-overflow:ellipsis; border-right:1px solid var(--line); }
table.profiles thead th.col { z-index:3; background:var(--soft); }
table.profiles tbody tr:nth-child(even) td.col { background:#fafbfc; }
table.profiles td.cell { position:relative; text-align:right; min-width:64px;
  font-variant-numeric:tabular-nums; }
table.profiles td.cell .lvl { display:inline-block; max-width:96px; overflow:hidden;
  text-overflow:ellipsis; vertical-align:bottom; }
table.profiles td.all { color:var(--muted); border-right:1px solid var(--line); }
table.profiles .miss { position:absolute; left:0; bottom:0; height:3px; background:#8a96a3; }
.kind { display:inline-block; font-size:.78em; color:var(--muted); border:1px solid var(--line);
  border-radius:3px; padding:0 4px; margin-left:6px; }
.sep { color:var(--muted); font-size:.8em; margin-left:6px; font-variant-numeric:tabular-nums; }
.key { display:inline-block; width:2.2em; height:.8em; vertical-align:-0.05em;
  border:1px solid rgba(0,0,0,.12); margin:0 3px; }
"""


# ------------------------------------------------------------------ columns read as
def _columns_read(summary: Mapping[str, Any]) -> str:
    """The table of how each column was read: its kind, levels and why; the columns left
    out with the reason; the cleaning rules with the cells each changed."""
    block = summary.get("table")
    if not block:
        return ""
    levels = {c["column"]: c.get("levels") or []
              for c in (summary.get("profiles") or {}).get("columns") or ()}
    rows = []
    described = set()
    for r in block.get("columns") or ():
        name = str(r.get("column"))
        described.add(name)
        kind = str(r.get("kind"))
        rows.append(f"<tr><td>{_esc(name)}</td><td>{_esc(KIND_NAMES.get(kind, kind))}</td>"
                    f'<td>{_levels_text(r.get("levels"), levels.get(name))}</td>'
                    f'<td>{_esc(r.get("why") or "")}</td></tr>')
    for name, why in block.get("dropped") or ():
        if str(name) not in described:
            rows.append(f"<tr><td>{_esc(name)}</td><td>left out</td><td></td>"
                        f"<td>{_esc(why)}</td></tr>")
    rules = block.get("rules") or {}
    if rules:
        said = "; ".join(f"{_esc(rule)}: {int(n):,}" for rule, n in rules.items())
        rules_text = f"Cleaning rules applied (cells changed): {said}."
    else:
        rules_text = "No cleaning rule changed a cell."
    kinds = " ".join(f"<b>{_esc(KIND_NAMES[k])}</b>: {_esc(text)}." for k, text in KINDS.items())
    hint = (f"How the model read each column of the table, in the table's order. {kinds} "
            "Missing cells are left out of the likelihood. " + rules_text)
    return ('<h2>Columns read as</h2><div class="panel" id="columns-read">'
            '<div class="scroll short"><table><thead><tr><th>column</th><th>read as</th>'
            '<th>levels</th><th>why</th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table></div><p class="hint">{hint}</p></div>')


def _levels_text(n_levels: Any, names: list) -> str:
    """A column's levels: their names, up to four; beyond, the count and the first three."""
    names = [str(v) for v in names or () if not str(v).startswith("(other")]
    if n_levels is None:
        return ""
    n = int(n_levels)
    if names and n <= 4:
        return _esc(", ".join(names))
    if names:
        return f"{n}: {_esc(', '.join(names[:3]))}, …"
    return f"{n}"


# ------------------------------------------------------------------ column profiles
def _profiles_section(summary: Mapping[str, Any], sizes: list[int]) -> str:
    """The column profiles of the clusters (see the module's docstring)."""
    block = summary.get("profiles")
    if not block or not sizes:
        return ""
    columns = [c for c in block.get("columns") or () if c.get("per_cluster", True)]
    if not columns:
        return ""
    ids = np.arange(len(sizes))
    colours = plots.colours_by_size(ids, sizes)
    order = [int(k) for k in np.lexsort((ids, -np.asarray(sizes)))
             if sizes[k] > 0][:MAX_PROFILE_CLUSTERS]
    total = sum(sizes)
    columns.sort(key=lambda c: -(c.get("separation") or 0.0))
    shown = columns[:MAX_PROFILE_ROWS]
    presence = summary.get("cluster_presence")
    if presence is not None and len(presence) != len(sizes):
        presence = None
    head = ['<th class="col">column</th>', '<th class="num">all rows</th>']
    for k in order:
        sure = ("" if presence is None else
                f'<br><span class="kind">in {100.0 * float(presence[k]):.0f}% of draws</span>')
        head.append(f'<th class="num"><span class="swatch" style="background:{colours[k]}">'
                    f"</span>{k} · {100.0 * sizes[k] / total:.0f}%{sure}</th>")
    rows = []
    for c in shown:
        kind = str(c.get("kind"))
        sep = c.get("separation")
        sep_text = ("" if sep is None else
                    f'<span class="sep" title="how strongly the clusters differ in this '
                    f'column, 0 to 1">{_sep_name(c)} {float(sep):.2f}</span>')
        cells = [f'<td class="col" title="{_esc(c["column"])}">{_esc(c["column"])}'
                 f'<span class="kind">{_esc(KIND_NAMES.get(kind, kind))}</span>{sep_text}</td>',
                 _overall_cell(c)]
        cells.extend(_cluster_cell(c, k) for k in order)
        rows.append(f"<tr>{''.join(cells)}</tr>")
    notes = []
    if len(order) < sum(1 for s in sizes if s > 0):
        notes.append(f"The {len(order)} largest clusters are shown; the profiles of all "
                     "clusters are in the summary's <code>profiles</code> block.")
    left = len(columns) - len(shown)
    left += len(block.get("columns") or ()) - len(columns)
    if left:
        notes.append(f"{left:,} columns that separate the clusters least are left out here.")
    hint = ("Each cluster described by its own rows, column by column, the columns that "
            "separate the clusters most first (η for real and count columns, the share "
            "of their spread that lies between clusters, square-rooted; Cramér's V for "
            "yes/no and category columns; both from 0 to 1). A cell shows the cluster's "
            "mean, its share of yes (1, true, or the second level named) in a yes/no column, "
            "or the level most "
            "over-represented in it with its share in the cluster. Colour: "
            f'<span class="key" style="background:{_colour(1.0)}"></span>above all the '
            f'rows, <span class="key" style="background:{_colour(-1.0)}"></span>below '
            f"(full colour at {FULL_SD:g} standard deviations of the whole column, or "
            f"{100 * FULL_SHARE:.0f} points of share). The grey line under a cell is its "
            "share of missing cells; hover over a cell for its spread, quartiles and "
            "counts. " + " ".join(notes))
    return ('<h2>Column profiles</h2><div class="panel" id="profiles">'
            f'<div class="scroll"><table class="profiles"><thead><tr>{"".join(head)}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'<p class="hint">{hint}</p></div>')


def _sep_name(column: Mapping[str, Any]) -> str:
    return "V" if "shares" in column or "levels" in column else "η"


def _colour(strength: float) -> str:
    """A background for a difference in [-1, 1]: red above, blue below, white at 0."""
    s = float(np.clip(strength, -1.0, 1.0))
    rgb = (214, 39, 40) if s > 0 else (31, 119, 180)
    return f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{0.6 * abs(s):.2f})"


def _num(v: Any, sd: Any = None) -> str:
    """A number; with the column's spread ``sd``, to two significant digits of it."""
    if v is None:
        return "—"
    if sd is None or not sd > 0:
        return _fmt_number(float(v))
    decimals = int(np.clip(1 - np.floor(np.log10(float(sd))), 0, 6))
    v = round(float(v), decimals) + 0.0  # no "−0.0"
    return f"{v:,.{decimals}f}".replace("-", "−")


def _pct(v: Any) -> str:
    return "—" if v is None else f"{100.0 * float(v):.0f}%"


def _miss(share: Any) -> str:
    if not share:
        return ""
    return f'<span class="miss" style="width:{100.0 * float(share):.0f}%"></span>'


def _overall_cell(c: Mapping[str, Any]) -> str:
    whole = c.get("overall") or {}
    tip = f'all rows: {whole.get("observed", 0):,} observed, {_pct(whole.get("missing"))} missing'
    if "shares" in whole:
        levels, shares = c.get("levels") or [], whole["shares"]
        if len(levels) == 2:
            text = f"{_yes(levels)}{_pct(shares[1])}"
        else:
            top = int(np.argmax([s or 0.0 for s in shares]))
            text = f'<span class="lvl">{_esc(levels[top])}</span> {_pct(shares[top])}'
        tip += "; " + _shares_text(levels, shares)
    else:
        text = _num(whole.get("mean"), whole.get("sd"))
        tip += f"; {_spread_text(whole)}"
    return (f'<td class="cell all" title="{_esc(tip)}">{text}'
            f'{_miss(whole.get("missing"))}</td>')


def _cluster_cell(c: Mapping[str, Any], k: int) -> str:
    whole = c.get("overall") or {}
    observed = (c.get("observed") or [0])[k]
    missing = (c.get("missing") or [None])[k]
    tip = f"cluster {k}: {observed:,} observed, {_pct(missing)} missing"
    if not observed:
        return f'<td class="cell" title="{_esc(tip)}">—{_miss(missing)}</td>'
    if "shares" in c:
        levels, p, q = c.get("levels") or [], c["shares"][k], whole.get("shares") or []
        p = [v or 0.0 for v in p]
        q = [v or 0.0 for v in q] or [0.0] * len(p)
        if len(levels) == 2:
            j = 1
            text = f"{_yes(levels)}{_pct(p[1])}"
        else:
            j = int(np.argmax(np.subtract(p, q)))
            text = f'<span class="lvl">{_esc(levels[j])}</span> {_pct(p[j])}'
        strength = (p[j] - q[j]) / FULL_SHARE
        tip += f"; {_shares_text(levels, p)} (all rows: {_pct(q[j])} {levels[j]})"
    else:
        mean, sd = c["mean"][k], whole.get("sd")
        stats = {"mean": mean, "sd": c["sd"][k], "quartiles": c["quartiles"][k]}
        strength = (0.0 if mean is None or not sd or whole.get("mean") is None
                    else (mean - whole["mean"]) / sd / FULL_SD)
        text = _num(mean, sd)
        tip += f"; {_spread_text(stats)} (all rows: mean {_num(whole.get('mean'))})"
    return (f'<td class="cell" style="background:{_colour(strength)}" title="{_esc(tip)}">'
            f"{text}{_miss(missing)}</td>")


def _yes(levels: list) -> str:
    """The name of a yes/no column's second level before its share, unless it is yes."""
    return "" if str(levels[1]).strip().lower() in _YES else f"{_esc(levels[1])} "


def _spread_text(stats: Mapping[str, Any]) -> str:
    q = stats.get("quartiles") or [None] * 3
    return (f'mean {_num(stats.get("mean"))}, sd {_num(stats.get("sd"))}, quartiles '
            f"{_num(q[0])} / {_num(q[1])} / {_num(q[2])}")


def _shares_text(levels: list, shares: list) -> str:
    pairs = sorted(zip(levels, shares), key=lambda p: -(p[1] or 0.0))
    return ", ".join(f"{name} {_pct(s)}" for name, s in pairs[:8]) + (
        ", …" if len(pairs) > 8 else "")
