"""Voting blocs from a clustering of ballots, read from the ballots themselves.

A *bloc* is a cluster of the point estimate holding at least :data:`MIN_SHARE` of the
rankings.  What a reader asks of one does not depend on the component family (Generalized
Mallows, Plackett–Luce), so :func:`describe_blocs` answers from the bloc's own ballots:

* its **first preferences**: the share of its ballots that rank each candidate first;
* its **candidates**: those its voters rank among their first three choices most often;
* its **transfers**: for the voters of its leading first choice, who they rank second
  (and how many stop there), the pattern a count's transfers follow;
* how sure the posterior is of it: its **presence**, the share of kept draws that have the
  bloc (:func:`dpclust.partitions.cluster_presence`);
* with a grouping of the ballots (a cast-vote record's precinct), the groups where the bloc
  is strongest, by its share of each group's ballots.

References
----------
Gormley, I. C. & Murphy, T. B. (2008). Exploring voting blocs within the Irish electorate:
    a mixture modeling approach. *JASA* 103(483), 1014-1027 (blocs described by their
    candidates and their support).
"""

from __future__ import annotations

import numpy as np

__all__ = ["describe_blocs", "MIN_SHARE"]

#: a cluster holding at least this share of the rankings is a bloc
MIN_SHARE = 0.01
#: candidates listed per bloc (first preferences, candidates, transfers) and groups
N_LISTED = 3
#: a bloc's candidates: those ranked among the first this many choices most often
TOP_CHOICES = 3


def describe_blocs(X, labels, *, presence=None, min_share: float = MIN_SHARE) -> list:
    """The blocs of a clustering of rankings, largest first.

    Parameters
    ----------
    X : Rankings
        The ballots (item names from ``X.items`` when it has them; its ``groups``, when
        present, give each bloc's strongest groups).
    labels : array-like of shape (n_rankings,)
        The point estimate.
    presence : array-like of shape (n_clusters,), optional
        Each cluster's presence among the posterior draws.
    min_share : float, default=MIN_SHARE
        The smallest share of the rankings that makes a bloc.

    Returns
    -------
    blocs : list of dict
        Per bloc: ``cluster``, ``rankings``, ``share``, ``presence`` (or None),
        ``first_preferences`` (``[name, share]`` pairs, largest first, shares of the bloc's
        ballots), ``candidates`` (``[name, share]``: share of the bloc's ballots that rank
        the candidate among their first :data:`TOP_CHOICES`), ``transfers`` (``{"from":
        name, "to": [[name, share], ...], "stop": share}`` over the ballots whose first
        choice is the bloc's leading one) and, with groups, ``groups`` (``[group, share of
        the group's ballots in the bloc]``, strongest first).
    """
    labels = np.asarray(labels, dtype=np.int64)
    orders, lengths = np.asarray(X.orders), np.asarray(X.lengths)
    n, n_items = len(labels), int(X.n_items)
    names = list(X.items) if X.items is not None else [str(j) for j in range(n_items)]
    sizes = np.bincount(labels)
    groups = getattr(X, "groups", None)
    out = []
    for k in np.lexsort((np.arange(len(sizes)), -sizes)):
        if n == 0 or sizes[k] < min_share * n:
            break
        rows = np.flatnonzero(labels == k)
        first = np.bincount(orders[rows, 0], minlength=n_items) / len(rows)
        top = orders[rows, :TOP_CHOICES]
        near = np.bincount(top[top >= 0], minlength=n_items) / len(rows)
        lead = int(np.argmax(first))
        led = rows[orders[rows, 0] == lead]
        second = orders[led[lengths[led] >= 2], 1]
        to = np.bincount(second, minlength=n_items) / max(len(led), 1)
        bloc = {"cluster": int(k), "rankings": int(sizes[k]),
                "share": float(f"{sizes[k] / n:.4g}"),
                "presence": (None if presence is None
                             else float(f"{float(np.asarray(presence)[k]):.3g}")),
                "first_preferences": _listed(first, names),
                "candidates": _listed(near, names),
                "transfers": {"from": names[lead], "to": _listed(to, names),
                              "stop": float(f"{np.mean(lengths[led] < 2):.3g}")}}
        if groups is not None:
            bloc["groups"] = _strongest_groups(np.asarray(groups), rows)
        out.append(bloc)
    return out


def _listed(shares: np.ndarray, names: list) -> list:
    """The :data:`N_LISTED` largest shares above 0, as ``[name, share]``."""
    order = np.argsort(-shares, kind="stable")[:N_LISTED]
    return [[names[j], float(f"{shares[j]:.3g}")] for j in order if shares[j] > 0]


def _strongest_groups(groups: np.ndarray, rows: np.ndarray) -> list:
    """The groups where the bloc holds the largest share of the ballots."""
    values, inverse = np.unique(groups, return_inverse=True)
    share = (np.bincount(inverse[rows], minlength=len(values))
             / np.bincount(inverse, minlength=len(values)))
    order = np.argsort(-share, kind="stable")[:N_LISTED]
    return [[str(values[g]), float(f"{share[g]:.3g}")] for g in order]
