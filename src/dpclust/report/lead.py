"""The top of the report: the lead paragraph (what was fitted, what was found, how sure) and
the cards of key figures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..families import FAMILIES
from ..partitions.losses import as_loss
from .text import _esc, _fmt_seconds, _fmt_value, _plural, _rankings_block

_LOSS_NAMES = {"vi": "Variation of Information (VI)", "binder": "Binder",
               "omari": "one minus adjusted Rand index (omARI)",
               "nvi": "normalised Variation of Information (NVI)",
               "nid": "normalised information distance (NID)"}


def loss_name(loss: Any) -> str:
    """A loss's name for a reader: ``"vi(a=0.5)"`` as "Variation of Information (VI),
    a = 0.5"."""
    text = str(loss)
    name, _, weight = text.partition("(")
    words = _LOSS_NAMES.get(name.strip().lower(), name)
    return words + (f", {weight.rstrip(')').replace('=', ' = ')}" if weight else "")


def sureness_sentence(summary: Mapping[str, Any]) -> str:
    """One line on how sure the posterior is of the partition shown: how many of its
    clusters most draws hold, and the credible ball around it, e.g. "How sure: 5 of its
    6 clusters are in at least half of the posterior draws; 95% of the posterior lies
    within VI 0.41 of it, among partitions of 4 to 7 clusters."  ``""`` without either."""
    parts = []
    presence = summary.get("cluster_presence")
    if presence:
        held = sum(float(p) >= 0.5 for p in presence)
        parts.append(f"{'all' if held == len(presence) else held} of its "
                     f"{_plural(len(presence), 'cluster')} "
                     f"{'is' if len(presence) == 1 and held == 1 else 'are'} in at least "
                     "half of the posterior draws")
    ball = (summary.get("point_estimate") or {}).get("credible_ball")
    if ball:
        low, high = ball["n_clusters_range"]
        span = (f"{_plural(low, 'cluster')}" if low == high else f"{low} to {high} clusters")
        base, _, weight = str(ball["loss"]).partition("(")
        name = base.upper() + (f" ({weight}" if weight else "")
        parts.append(f"{100 * float(ball['level']):g}% of the posterior lies within {name} "
                     f"{float(ball['radius']):.2g} of it, among partitions of {span}")
    if not parts:
        return ""
    return "How sure: " + "; ".join(parts) + "."


def weights_words(summary: Mapping[str, Any], noun: str = "row") -> str:
    """How the rows were weighted, to follow their number (``""`` without weights), e.g.
    "4,526 as the column Freq counts them, a frequency table's" or "each weighted by the
    column w, its likelihood raised to the weight"."""
    weights = summary.get("weights") or {}
    if not weights:
        return ""
    column = weights.get("column")
    by = f"the column {column}" if column is not None else "their weights"
    if weights.get("mode") == "repeat":
        return (f"{_fmt_value(weights.get('n_model_rows'))} as {by} counts them"
                + (", the table's counts of its rows" if weights.get("counted") else ""))
    return f"each weighted by {by}, its likelihood raised to the weight"


def counted_rows(summary: Mapping[str, Any], n: Any) -> Any:
    """The rows the model holds: ``n``, or with whole-number weights (each row counted as
    many rows) the count, which the cluster sizes and the 1 % share count in."""
    weights = summary.get("weights") or {}
    return weights.get("n_model_rows", n) if weights.get("mode") == "repeat" else n


def against_draws(summary: Mapping[str, Any], noun: str = "point") -> str:
    """Why the partition shown has more clusters than every kept posterior draw
    (:func:`_finer`), or fewer clusters holding 1 % of the points than every draw
    (:func:`_coarser`); ``""`` when neither."""
    posterior = summary.get("n_clusters_posterior") or {}
    if "ddcrp" in summary or not summary.get("n_clusters") or not posterior.get("all"):
        return ""
    return _finer(summary, noun) or _coarser(summary, noun)


def _span(counts: Mapping[str, Any]) -> tuple[int, int, str]:
    """The fewest and most clusters of the draws' counts (a posterior of K), and in words."""
    ks = [int(k) for k in counts]
    low, high = min(ks), max(ks)
    return low, high, (_plural(low, "cluster") if low == high else f"{low} to {high} clusters")


def _loss_words(summary: Mapping[str, Any]) -> tuple[str, float, str]:
    """The point estimate's loss: its name, its weight ``a`` (1 without one) and its label
    for a reader (``"VI (a = 0.5)"``)."""
    loss = as_loss(str((summary.get("point_estimate") or {}).get("loss") or "vi"))
    short = {"vi": "VI", "binder": "Binder", "omari": "omARI", "nvi": "NVI", "nid": "NID"}
    return (loss.name, loss.a,
            short[loss.name] + (f" (a = {loss.a:g})" if loss.a != 1.0 else ""))


def _finer(summary: Mapping[str, Any], noun: str) -> str:
    """The expected-loss estimate (VI, Binder) gives a point a cluster of its own when the
    draws put it with no one cluster in as many as about half of them: in VI's sweep a
    point joins cluster ``j`` only if ``2 E[g(c_s)] > g(m_j)`` with ``g(n) = (n + 1)
    log(n + 1) - n log n``, ``m_j`` the cluster's size and ``c_s`` its mates in draw ``s``
    that are in ``j`` (with a weight ``a``, ``(2 - a) g(m_j)``: a share ``(2 - a) / 2`` of
    the draws).  Chains that place many points differently, as chains that have not met
    do, so leave many single points, e.g. "Each posterior draw has 125 to 141 clusters; the
    partition shown has more because it puts each of the 412 points that the draws place
    in different clusters (none in as many as half of them) in a cluster of its own, as the
    VI estimate does with such points." """
    K, sizes = summary["n_clusters"], summary.get("cluster_sizes") or ()
    low, high, span = _span(summary["n_clusters_posterior"]["all"])
    single = sum(1 for size in sizes if size == 1)
    if K <= high or not single:
        return ""
    name, a, label = _loss_words(summary)
    which = (f"each of the {_plural(single, noun)}" if single > 1 else f"the one {noun}")
    because = "because" if K - single <= high else "in part because"
    # VI and Binder join a point to a cluster holding it in about (2 - a) / 2 of the draws
    share = {0.5: "half", 0.75: "three quarters"}.get((2 - a) / 2, f"{50 * (2 - a):g} %")
    how = f" (none in as many as {share} of them)" if name in ("vi", "binder") else ""
    return (f"Each posterior draw has {span}; the partition shown has more {because} it puts "
            f"{which} that the draws place in different clusters{how} in a cluster of its "
            f"own, as the {label} estimate does with such {noun}s.")


def _coarser(summary: Mapping[str, Any], noun: str) -> str:
    """Fewer clusters holding 1 % of the points in the partition shown than in every
    draw: the estimate joins clusters whose points the draws share out among them
    differently from draw to draw (the copies of a frequency table's row, say, which the
    draws split among clusters as a latent class model does), e.g. "Each posterior draw
    has 4 to 6 clusters holding at least 1 % of the points; the partition shown has 1, as
    the VI estimate joins clusters whose points the draws share out differently from draw
    to draw." """
    large = summary["n_clusters_posterior"].get("large") or {}
    sizes = summary.get("cluster_sizes") or ()
    n = sum(sizes)
    if not large or not n:
        return ""
    low, _, span = _span(large)
    shown = sum(1 for size in sizes if size >= 0.01 * n)
    if shown >= low:
        return ""
    _, _, label = _loss_words(summary)
    return (f"Each posterior draw has {span} holding at least 1 % of the {noun}s; the "
            f"partition shown has {shown}, as the {label} estimate joins clusters whose "
            f"{noun}s the draws share out differently from draw to draw.")


def _learned_sentence(learned, family) -> str:
    """`` Learned from the data (posterior mean): the multinomial family's concentration
    0.071 (95 % interval 0.068–0.074).``, then the partition prior's (``the partition
    prior's discount 0.31 (…)``), or ``""`` when no hyperparameter was learned."""
    if not learned:
        return ""

    def items(of):
        return ", ".join(
            f"{_esc(name.replace('_', ' '))} {_fmt_value(v['mean'])} (95 % interval "
            f"{_fmt_value(v['interval_95'][0])}–{_fmt_value(v['interval_95'][1])})"
            for name, v in learned.items() if v.get("of", "family") == of)

    groups = []
    if any(v.get("of", "family") == "family" for v in learned.values()):
        groups.append((f"the {_esc(family)} family's " if family else "") + items("family"))
    if any(v.get("of") == "prior" for v in learned.values()):
        groups.append("the partition prior's " + items("prior"))
    return " Learned from the data (posterior mean): " + "; ".join(groups) + "."


def _model_words(settings: Mapping[str, Any], ddcrp: bool) -> str:
    """The lead sentence's words for the model: its family (in the data's principal axes
    where so), prior, concentration and rounded columns (HTML)."""
    parts = []
    if settings.get("family") is not None:
        parts.append(f" and a {_esc(settings['family'])} mixture")
        if settings.get("axes") == "principal":
            parts.append(" in the data's principal axes (the real columns standardised and "
                         "turned; every cluster shares that orientation)")
    if settings.get("prior") is not None:
        parts.append(f" under a {_esc(settings['prior'])} prior")
    if settings.get("alpha") is not None:
        alpha = settings["alpha"]
        sep = ": " if isinstance(alpha, str) else " = "
        name = "self-link weight" if ddcrp else "concentration"
        parts.append(f" ({name} α{sep}{_esc(_fmt_value(alpha))})")
    rounding = settings.get("rounding")
    if isinstance(rounding, list) and any(w > 0 for w in rounding):
        n_rounded = sum(1 for w in rounding if w > 0)
        parts.append(f", of values rounded to a grid in {n_rounded} of {len(rounding)} "
                     "columns (each recorded value a cell, its exact value latent)")
    return "".join(parts)


def _lead_paragraph(summary: Mapping[str, Any], sizes: list[int]) -> str:
    settings = summary.get("settings") or {}
    data = summary.get("data") or {}
    timings = summary.get("timings") or {}
    K = summary.get("n_clusters", len(sizes))
    n = data.get("n_samples", sum(sizes) if sizes else None)
    ddcrp = summary.get("ddcrp") or {}
    own = _rankings_block(summary)
    rankings = own is not None
    unit = "table" if ddcrp else "cluster"
    parts = [f"dpclust found <b>{_esc(_plural(K, unit))}</b>"]
    counted = counted_rows(summary, n)
    large = sum(1 for c in sizes if counted and c >= 0.01 * counted)
    if not ddcrp and sizes and 0 < large < K:  # small clusters (single points) besides
        parts.append(f" ({large} of them holding at least 1&nbsp;% of the "
                     f"{'rankings' if rankings else 'points'})")
    if n is not None:
        detail = []
        left_out = len((summary.get("table") or {}).get("dropped") or ())
        if data.get("n_features") is not None and left_out:
            # n_columns: the file's columns (a summary written before it was kept counted
            # the columns as n_features)
            columns = data.get("n_columns", data["n_features"])
            used = columns - left_out
            detail.append(f"{_esc(_plural(used, 'feature'))} of {columns} "
                          f'columns, <a href="#columns-read">{left_out} left out</a>')
        elif data.get("n_features") is not None:
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
        parts.append(f" in <b>{_esc(_plural(n, 'ranking' if rankings else 'point'))}</b>")
        weighted = weights_words(summary)
        if weighted:
            detail.insert(0, _esc(weighted))
        if detail:
            parts.append(f" ({', '.join(detail)})")
    if settings.get("sampler") is not None:
        parts.append(f" with the {sampler_words(settings['sampler'])}")
    parts.append(_model_words(settings, ddcrp))
    sentence = "".join(parts) + "." + _learned_sentence(summary.get("learned"),
                                                         settings.get("family"))
    answer = _answer_sentences(summary, K, n)
    if answer:
        sentence += " " + answer
    if "subcluster-approx" in str(settings.get("sampler", "")):
        sentence += (" <b>The sampler is approximate</b> (the paper's sub-cluster splits and "
                     "merges, which leave out the probability of proposing the sub-clusters): "
                     "its draws are not from the posterior, and on overlapping clusters it "
                     "loses clusters; <code>--sampler subcluster</code> is exact.")
    elif settings.get("sampler_exact") is False and not rankings:
        sentence += (" <b>The sampler is approximate</b> for this prior: its draws are not "
                     "from the posterior.")
    if ddcrp:
        sentence += " " + _ddcrp_sentence(ddcrp)
    if rankings:
        sentence += " " + _rankings_sentence(settings.get("family"), own)
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
        what = "rankings" if rankings else "points"
        sentence += f" The largest cluster holds {share:.0f}% of the {what}."
    estimate = summary.get("point_estimate") or {}
    if estimate.get("loss") is not None:
        sentence += (" The partition shown is the one that minimises the posterior expected "
                     f"{_esc(loss_name(estimate['loss']))} loss")
        if estimate.get("expected_loss") is not None:
            sentence += f" (expected loss {_esc(_fmt_value(estimate['expected_loss']))})"
        sure = sureness_sentence(summary)
        sentence += ". " + _esc(sure) if sure else "."
        drawn = against_draws(summary, "ranking" if rankings else "point")
        if drawn:
            sentence += " " + _esc(drawn)
    metrics = summary.get("metrics") or {}
    if metrics:
        scores = ", ".join(f"{_esc(str(k).upper())} {_esc(_fmt_value(v))}"
                           for k, v in metrics.items())
        sentence += (f" Compared with the true labels: {scores} "
                     "(1 means identical partitions).")
    return f'<p class="lead">{sentence}</p>'


def _answer_sentences(summary: Mapping[str, Any], K: Any, n: Any) -> str:
    """Two sentences beside K: which of the three answers the page shows (the coarsened
    posterior, fused clusters beside the raw partition, or the raw partition alone) and why
    K grows with N under the exact posterior when the component family does not fit."""
    settings = summary.get("settings") or {}
    if summary.get("ddcrp") or settings.get("family") is None:
        return ""  # not a mixture of a family's components, or not a run's summary
    family = _esc(settings["family"])
    what = "rankings" if _rankings_block(summary) is not None else "data"
    why = (f"Under the exact posterior, {what} that no {family} component fits exactly gain "
           "clusters that absorb the misfit, so K grows with N")
    coarsening = summary.get("coarsening") or {}
    if coarsening.get("alpha_c") is not None:
        alpha_c, zeta = float(coarsening["alpha_c"]), coarsening.get("zeta")
        how = {"elbow": "chosen at the elbow of fit against complexity",
               "family default": f"the default model of {family} {what}"}.get(
                   coarsening.get("chosen_by"), "as given")
        text = (f"This is the <b>coarsened posterior</b> (Miller &amp; Dunson 2019; "
                f"α<sub>c</sub> = {_esc(_fmt_value(alpha_c))}")
        if zeta is not None:
            text += f", ζ = {float(zeta):.2g}"
        text += f", {how})"
        misfit = coarsening.get("tolerated_misfit_nats_per_point")
        if misfit is not None:
            text += (f": it tolerates a misfit of about {float(misfit):.2g} nats per point "
                     f"between the {what} and the {family} family")
        text += f". {why}; "
        if zeta is not None and isinstance(n, (int, float)):
            text += (f"here the {_esc(_fmt_value(n))} points count as ζN ≈ "
                     f"{_esc(_fmt_value(round(float(zeta) * n)))}, which stays below "
                     f"α<sub>c</sub> however large N grows, so K does not.")
        else:
            text += "here it does not."
        return text
    fused = summary.get("fused") or {}
    if fused.get("computed"):
        F = fused["n_clusters"]
        text = (f"These {_esc(_plural(K, 'cluster'))} are the raw partition of the "
                "<b>exact posterior</b>")
        if F == K and fused.get("raw_to_fused") == list(range(int(K))):
            text += ("; its fused clusters (FOLD, Dombowsky &amp; Dunson 2024), which join "
                     "components whose densities overlap, are the same: no two components "
                     "overlap enough to be joined. ")
            return text + why + "; no clusters were added here that fusing would join."
        text += (f"; the <b>{_esc(_plural(F, 'fused cluster'))}</b> join components whose "
                 "densities overlap (FOLD, Dombowsky &amp; Dunson 2024: on average over the "
                 f"posterior less than {_esc(_fmt_value(fused.get('threshold', 0.5)))} apart "
                 "in Hellinger distance)")
        if F > K:
            text += (", and keep apart points that the draws put in components far apart: "
                     "more clusters than the raw ones, because the draws disagree about "
                     "where points belong")
        return text + ". " + why + "; fused clusters join such components back into one group."
    text = ("This is the <b>exact posterior</b>'s partition (raw: neither coarsened nor "
            "fused). ")
    return (text + why + "; <code>--coarsening auto</code> gives the coarsened posterior, "
            "whose K does not.")


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


def sampler_words(setting: str, html: bool = True) -> str:
    """``"auto (gibbs)"`` as a reader says it: "gibbs sampler (chosen by auto)" (HTML with
    the name in bold; plain text for ``html=False``)."""
    text = str(setting)
    chosen = text.startswith("auto (") and text.endswith(")")
    name = text[len("auto ("):-1] if chosen else text
    if not html:
        return f"{name} sampler" + (" (chosen by auto)" if chosen else "")
    return f"<b>{_esc(name)}</b> sampler" + (" (chosen by <code>auto</code>)" if chosen else "")


def _rankings_sentence(family: Any, own: Mapping[str, Any]) -> str:
    """What the lead paragraph says about a mixture of rankings."""
    text = getattr(FAMILIES.get(family), "report_sentence", "")
    if own.get("substantial_clusters") is not None:
        text += (f" {_esc(_plural(own['substantial_clusters'], 'cluster'))} "
                 f"{'holds' if own['substantial_clusters'] == 1 else 'hold'} at least 1% "
                 "of the rankings.")
    if own.get("exact") is False:
        text += (" <b>The sampler is approximate</b> (Beta-Gibbs): its draws are not from "
                 "the posterior; Slice-Gibbs (<code>--sampler slice-gibbs</code>) is exact."
                 if family == "mallows" else
                 " <b>The sampler is approximate</b>: its draws are not from the posterior.")
    return text


def _cards(summary: Mapping[str, Any], sizes: list[int]) -> str:
    data = summary.get("data") or {}
    timings = summary.get("timings") or {}
    log_joint = summary.get("log_joint") or {}
    ddcrp = summary.get("ddcrp") or {}
    cards = [("tables" if ddcrp else "clusters",
              _fmt_value(summary.get("n_clusters", len(sizes))))]
    fused = summary.get("fused") or {}
    if fused.get("computed"):
        cards.append(("fused clusters", _fmt_value(fused["n_clusters"])))
    coarsening = summary.get("coarsening") or {}
    if coarsening.get("alpha_c") is not None:
        cards.append(("alpha_c (coarsening)", _fmt_value(float(coarsening["alpha_c"]))))
    if ddcrp.get("decay") is not None:
        cards.append(("decay" + (", sequential" if ddcrp.get("sequential") else ""),
                      str(ddcrp["decay"])))
    if data.get("n_samples") is not None:
        cards.append(("rankings" if _rankings_block(summary) is not None else "points",
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
