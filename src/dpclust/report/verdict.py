"""The report's convergence verdict and its warnings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..diagnostics import ESS_PER_CHAIN, RANKINGS_MIXING, RHAT_MAX, separate_modes, settled_scale
from ..samplers.registry import moves_clusters
from .text import _esc, _rankings_block


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
                    "size_entropy": "entropy of the cluster sizes", "alpha": "alpha",
                    "fused_clusters": "fused clusters (per draw)"}


def _labels(conv: Mapping[str, Any]) -> list:
    """``(quantity, label)`` of every row of the diagnostics table: the chain's quantities,
    then each learned hyperparameter (``"concentration (learned)"``), then fused clusters."""
    rows = [(q, label) for q, label in _QUANTITY_LABELS.items() if q != "fused_clusters"]
    rows += [(q, f"{q.replace('_', ' ')} (learned)") for q in conv.get("learned", ())]
    return rows + [("fused_clusters", _QUANTITY_LABELS["fused_clusters"])]


def _verdict(summary: Mapping[str, Any]) -> str:
    """The convergence banner: green when every quantity passes the rule, red otherwise,
    with the diagnostics table (R-hat, bulk and tail ESS per quantity)."""
    conv = summary.get("convergence")
    if not conv:
        return ""

    def fmt(v, digits):
        return "–" if v is None else f"{v:.{digits}f}"

    def passes(entry):
        if entry.get("judged") is False:
            return "not judged"
        return "✓" if entry["converged"] else "✗"

    chains = int(conv.get("n_chains", 1))

    def per_chain(v):  # the rule's unit: ArviZ's ESS is of all the chains together
        return None if v is None else v / chains

    rows = "".join(
        f"<tr><td>{_esc(label)}</td><td>{fmt(conv[q]['rhat'], 3)}</td>"
        f"<td>{fmt(per_chain(conv[q]['ess_bulk']), 0)}</td>"
        f"<td>{fmt(per_chain(conv[q]['ess_tail']), 0)}</td>"
        f"<td>{passes(conv[q])}</td></tr>"
        for q, label in _labels(conv) if isinstance(conv.get(q), dict))
    table = (f"<table><tr><th>quantity</th><th>R-hat (&lt; {RHAT_MAX})</th>"
             f"<th>bulk ESS per chain (&ge; {ESS_PER_CHAIN})</th>"
             f"<th>tail ESS per chain (&ge; {ESS_PER_CHAIN})</th>"
             f"<th>passes</th></tr>{rows}</table>")
    draws = int(conv.get("n_draws", 0))
    scope = (f"{chains} chains × {draws} kept draws" if chains > 1 else
             f"one chain, {draws} kept draws: split R-hat compares the chain's quarters, so a "
             "mode the chain never visited goes unseen; several chains see more")
    if conv["converged"]:
        head = "✓ Converged"
        unjudged = any(isinstance(v, dict) and v.get("judged") is False
                       for v in conv.values())
        every = "Every quantity judged" if unjudged else "Every quantity"
        text = f"{every} passes the rule ({conv['rule']}); {scope}."
        cls = "ok"
    else:
        scale = settled_scale(conv, coarsened=bool(summary.get("coarsening")))
        modes = separate_modes(conv)
        head = ("✗ Not converged: the chains sit at separate levels" if modes else
                "✗ Not converged: the small clusters have not settled (the large ones have)"
                if scale else "✗ Not converged: these results cannot be trusted yet")
        if _rankings_block(summary) is not None and not summary.get("coarsening"):
            todo = f"Run several long chains: {RANKINGS_MIXING}."
        elif moves_clusters((summary.get("settings") or {}).get("sampler", "")):
            todo = ("Run longer (max_time, CLI --max-time) or more iterations: the sampler "
                    "already splits and merges clusters.")
        else:
            todo = ("Run more iterations (a longer burn-in if the traces still drift) or "
                    "several chains" + ("; a smaller alpha_c mixes faster and merges more."
                                        if summary.get("coarsening") else
                                        ", or use a sampler with split-merge moves."))
        text = (f"Fails the rule ({conv['rule']}); {scope}. "
                + (f"{modes} {scale}".strip() if modes else
                   f"{scale} Otherwise: {todo[0].lower()}{todo[1:]}" if scale else todo))
        cls = "bad"
    return (f'<section class="verdict {cls}" role="status"><h2>{_esc(head)}</h2>'
            f"<p>{_esc(text)}</p>{table}{_fused_note(conv.get('fused_clusters'))}</section>")


def _fused_note(entry) -> str:
    """What the fused-clusters row is computed on, and why it is not judged if not."""
    if not isinstance(entry, dict):
        return ""
    text = ("Fused clusters (per draw): the number of fused clusters each draw alone gives "
            f"(FOLD on that draw's components), over {entry.get('draws', 'the draws fused')}")
    if entry.get("judged") is False:
        text += f". Not judged, so not counted in the verdict: {entry.get('reason', '')}"
    return f'<p class="hint">{_esc(text.rstrip())}.</p>'

