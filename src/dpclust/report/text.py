"""Text for the report: HTML escaping, numbers, durations and rates as people read them,
and the small building blocks (key-value tables, panels) of its sections."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import numpy as np


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
    if isinstance(value, (list, tuple)) and all(
            v is None or isinstance(v, (str, bool, int, float)) for v in value):
        return ", ".join(_fmt_value(v) for v in value)  # a list of names or numbers
    # a record reads as "name: value, ..." (a reader never sees JSON or a Python repr)
    if isinstance(value, Mapping):
        return ", ".join(f"{str(k).replace('_', ' ')}: {_fmt_value(v)}"
                         for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "; ".join(_fmt_value(v) for v in value)
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


def _rankings_block(summary) -> dict | None:
    """The family's own block of a summary of a fit to rankings (``{}`` when it has none),
    or None when the fit is not to rankings (its family, by the settings' name, reads
    another kind of data; a summary without a family is about rankings when it has blocs
    or a ``mallows`` block)."""
    from ..families import FAMILIES

    family = FAMILIES.get((summary.get("settings") or {}).get("family"))
    if family is None:
        block = summary.get("mallows")
        return (block or {}) if (block or summary.get("blocs")) else None
    if family.data_kind != "rankings":
        return None
    return summary.get(family.name) or {}
