"""The page of ``dpclust compare``: which model fits held-out data better, a table and a
dot-and-whisker figure, in the report's page style.

:func:`write_comparison_report` draws the figure (if matplotlib is installed), writes it as a
PNG and writes ``comparison.html`` with the PNG embedded; :func:`render_comparison_html`
builds the page from the comparison's JSON (what ``comparison.json`` holds) alone.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import plots
from .html import _CSS, _json_block
from .text import _esc, _fmt_number, _fmt_seconds, _kv_table, _panel

__all__ = ["render_comparison_html", "write_comparison_report"]

_CAPTION = ("Left: each model's mean log predictive density of the held-out {noun}s (higher "
            "predicts new {noun}s better), ± 2 standard errors. Right: its difference to the "
            "best model, ± 2 standard errors of the paired per-{noun} differences; a whisker "
            "that stays left of the dashed zero line is a model clearly behind.")


def comparison_panel(comparison: Mapping[str, Any], figure: str | Path | None = None) -> str:
    """The "Model comparison" section: the table of models, best first, and the figure.

    Parameters
    ----------
    comparison : mapping
        ``models`` (rows with ``model``, ``elpd``, ``se``, ``elpd_diff``, ``se_diff``,
        ``n_clusters``, ``n_large_clusters``, ``converged``, ``fit_seconds``), ``n_test``,
        ``n_splits`` and ``noun``.
    figure : path, optional
        The PNG of :func:`~dpclust.report.figures.plot_model_comparison`, embedded.
    """
    noun = comparison.get("noun", "point")
    head = ("<tr><th>Model</th>"
            f'<th class="num">nats per {_esc(noun)}</th><th class="num">± se</th>'
            '<th class="num">difference to the best</th><th class="num">± se (paired)</th>'
            '<th class="num">clusters</th><th class="num">clusters ≥ 1%</th>'
            '<th>converged</th><th class="num">fit time</th></tr>')
    rows = []
    for m in comparison["models"]:
        cells = [_esc(m["model"])]
        cells += [_num(m.get(k)) for k in ("elpd", "se", "elpd_diff", "se_diff", "n_clusters",
                            "n_large_clusters")]
        cells.append("yes" if m.get("converged", True) else '<span class="flag">no</span>')
        cells.append(_fmt_seconds(m.get("fit_seconds", 0.0)))
        tds = "".join(f"<td>{c}</td>" if i in (0, 7) else f'<td class="num">{c}</td>'
                      for i, c in enumerate(cells))
        rows.append(f"<tr>{tds}</tr>")
    n, k = int(comparison["n_test"]), int(comparison.get("n_splits", 1))
    held = (f"{n:,} held-out {noun}s" if k == 1
            else f"{n:,} {noun}s, each held out once in {k} folds")
    hint = (f"Scored on {_esc(held)}: the mean log posterior predictive density per "
            f"{_esc(noun)} (nats), each model fitted to the same training {_esc(noun)}s. "
            "The paired standard error of a difference is that of the per-"
            f"{_esc(noun)} differences (as arviz.compare's dse, per {_esc(noun)}); "
            "clusters are those of the point estimate, and the posterior mean number "
            "holding at least 1% of the training data.")
    table = f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    body = _panel("Held-out log predictive density", table, hint)
    if figure is not None:
        data = base64.b64encode(Path(figure).read_bytes()).decode("ascii")
        caption = _CAPTION.format(noun=_esc(noun))
        body += (f'<figure class="wide" id="fig-comparison" style="margin-top:16px">'
                 f'<img src="data:image/png;base64,{data}" alt="model comparison">'
                 f"<figcaption>{caption}</figcaption></figure>")
    return f"<h2>Model comparison</h2>{body}"


def render_comparison_html(payload: Mapping[str, Any], figure: str | Path | None = None, *,
                           figure_error: str | None = None) -> str:
    """The page of a comparison as one self-contained HTML string.

    Parameters
    ----------
    payload : mapping
        What ``comparison.json`` holds: ``sentence``, ``comparison`` (see
        :func:`comparison_panel`), and optionally ``settings`` (with ``models``: each
        model's settings by name) and ``data`` (``source``, ``n_samples``).
    figure : path, optional
        The comparison figure's PNG.
    figure_error : str, optional
        Why the figure is missing, shown in its place.

    Returns
    -------
    html : str
    """
    comparison = payload["comparison"]
    data = payload.get("data") or {}
    settings = payload.get("settings") or {}
    sub = [f"{len(comparison['models'])} models"]
    if data.get("source") is not None:
        sub.append(f"data: {data['source']}")
    if data.get("n_samples") is not None:
        sub.append(f"{int(data['n_samples']):,} {comparison.get('noun', 'point')}s")
    warn = ""
    behind = [m["model"] for m in comparison["models"] if not m.get("converged", True)]
    if behind:
        warn = ('<div class="warnings"><h2>Not converged</h2><ul><li>'
                f"{_esc(', '.join(behind))}: the chains did not pass the convergence rule, "
                "so the comparison may say more about the chains than about the models; "
                "run more iterations (--n-iter) or chains (--n-chains).</li></ul></div>")
    error = (f'<p class="hint">The figure could not be drawn: {_esc(figure_error)}</p>'
             if figure_error else "")
    models = settings.get("models") or {}
    details = "".join(
        _panel(name, _kv_table([(_esc(k), _esc(v)) for k, v in spec.items()]))
        for name, spec in models.items())
    if details:
        details = f'<h2>Models</h2><div class="tables">{details}</div>'
    run = {k: v for k, v in settings.items() if k != "models"}
    if run:
        details += _panel("Split and chains",
                          _kv_table([(_esc(k), _esc(v)) for k, v in run.items()]))
    body = "".join([
        "<header><h1>dpclust model comparison</h1>",
        f'<p class="subtitle">{_esc(" · ".join(sub))}</p></header>',
        f'<p class="lead">{_esc(payload.get("sentence", ""))}.</p>',
        warn,
        comparison_panel(comparison, figure),
        error,
        details,
        _json_block(payload),
        "<footer>Generated by dpclust · models compared by held-out log predictive "
        "density</footer>",
    ])
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            "<title>dpclust model comparison</title>\n"
            f"<style>{_CSS}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n"
            "</html>\n")


def write_comparison_report(out_dir: str | Path, payload: Mapping[str, Any], *,
                            plots_wanted: bool = True) -> dict[str, Path]:
    """Write ``comparison.png`` (with matplotlib) and ``comparison.html`` into ``out_dir``.

    Returns
    -------
    paths : dict
        ``"report"`` and, when drawn, ``"figure"``.
    """
    out_dir = Path(out_dir)
    paths, figure, error = {}, None, None
    if plots_wanted:
        try:
            figure = plots.plot_model_comparison(
                payload["comparison"]["models"], out_dir / "comparison.png",
                noun=payload["comparison"].get("noun", "point"))
            paths["figure"] = figure
        except ImportError:
            error = f"matplotlib is not installed ({plots.PLOT_INSTALL_HINT})"
        except (ValueError, RuntimeError) as exc:
            error = str(exc)
    page = render_comparison_html(payload, figure, figure_error=error)
    paths["report"] = out_dir / "comparison.html"
    paths["report"].write_text(page, encoding="utf-8")
    return paths


def _num(value) -> str:
    if value is None:
        return "—"
    return _fmt_number(float(value))
