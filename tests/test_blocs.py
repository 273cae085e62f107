"""Blocs a reader can trust: the posterior's support of each cluster
(:func:`dpclust.partitions.cluster_presence`), the blocs read from their ballots
(:func:`dpclust.rankings.blocs.describe_blocs`) and their table in the report, for the
Generalized Mallows and Plackett–Luce families alike."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpclust import DPMixture
from dpclust.partitions import cluster_presence
from dpclust.rankings import Rankings
from dpclust.rankings.blocs import describe_blocs


def test_cluster_presence_counts_draws_that_have_the_cluster():
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2])
    same = (labels + 1) % 3  # relabelled: every cluster appears
    merged = np.where(labels == 1, 0, labels)  # clusters 0 and 1 merged: neither is mostly
    split = np.array([0, 0, 3, 3, 1, 1, 1, 1, 2, 2])  # cluster 0 cut in halves
    np.testing.assert_array_equal(cluster_presence([labels, same], labels), [1, 1, 1])
    np.testing.assert_array_equal(cluster_presence([merged], labels), [0, 0, 1])
    np.testing.assert_array_equal(cluster_presence([split], labels), [0, 1, 1])
    np.testing.assert_allclose(cluster_presence([labels, merged, split, same], labels),
                               [0.5, 0.75, 1.0])
    with pytest.raises(ValueError, match="at least one draw"):
        cluster_presence([], labels)


def test_blocs_are_read_from_their_ballots():
    names = ("Ann", "Bob", "Cy", "Di")
    X = Rankings([[0, 1, 2], [0, 1, -1], [0, 2, -1], [1, 0, -1], [0, -1, -1],
                  [3, 2, 1], [3, 2, -1], [2, 3, -1]], 4, items=names,
                 groups=["p1", "p1", "p2", "p2", "p2", "p1", "p2", "p2"], group_name="precinct")
    labels = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    a, b = describe_blocs(X, labels, presence=[0.9, 0.4])
    assert (a["cluster"], a["rankings"], a["share"], a["presence"]) == (0, 5, 0.625, 0.9)
    assert a["first_preferences"] == [["Ann", 0.8], ["Bob", 0.2]]
    assert a["candidates"] == [["Ann", 1.0], ["Bob", 0.6], ["Cy", 0.4]]
    # Ann's 4 voters: 2 go to Bob, 1 to Cy, 1 stops
    assert a["transfers"] == {"from": "Ann", "to": [["Bob", 0.5], ["Cy", 0.25]], "stop": 0.25}
    assert a["groups"] == [["p1", 0.667], ["p2", 0.6]]
    assert b["first_preferences"] == [["Di", 0.667], ["Cy", 0.333]]
    assert b["transfers"] == {"from": "Di", "to": [["Cy", 1.0]], "stop": 0.0}
    # a cluster below the share is not a bloc
    assert len(describe_blocs(X, labels, min_share=0.5)) == 1


@pytest.mark.parametrize("family", ["mallows", "plackett-luce"])
def test_report_shows_the_blocs_of_either_family(tmp_path, family):
    from dpclust.cli import main

    rows = ([["a", "b", "c"]] * 30 + [["b", "a"]] * 10 + [["d", "c", "b"]] * 30
            + [["c", "d"]] * 10)
    path = tmp_path / "ballots.csv"
    path.write_text("\n".join(",".join(r) for r in rows) + "\n")
    out = tmp_path / "out"
    assert main(["fit", str(path), "--family", family, "--n-chains", "1", "--n-iter", "40",
                 "--random-state", "1", "--out", str(out), "--no-progress", "--no-plots"]) in (0, None)
    page = (out / "report.html").read_text()
    if family == "plackett-luce":  # its default model: the coarsened sampler, said as such
        import json

        summary = json.loads((out / "summary.json").read_text())
        assert summary["settings"]["sampler"] == "auto (coarsened)"
        assert "coarsened posterior" in summary["plackett-luce"]["posterior"]
    blocs = page[page.index('id="blocs"'):]
    blocs = blocs[:blocs.index("</div>")]
    assert "in draws" in blocs and "transfers from the leading first choice" in blocs
    assert re.search(r"<i>a</i> → b \d+%", blocs)
    # no raw JSON of the blocs on the page (outside the collapsed full summary)
    shown = page[:page.index("<details><summary>Full summary")]
    assert "[{" not in shown and "{&quot;" not in shown
    est = DPMixture(family=family, n_iter=40, random_state=1, n_chains=1).fit(
        Rankings([[0, 1, 2]] * 30 + [[3, 2, 1]] * 30, 4))
    assert est.cluster_presence_.shape == (est.n_clusters_,)


def test_blocs_table_breaks_blocs_down_by_group():
    from dpclust.report.tables import _blocs_table

    bloc = {"cluster": 0, "rankings": 50, "share": 0.5, "presence": 0.3,
            "first_preferences": [["Ann", 0.8]], "candidates": [["Ann", 1.0]],
            "transfers": {"from": "Ann", "to": [["Bob", 0.5]], "stop": 0.25},
            "groups": [["Precinct 7", 0.9], ["Precinct 2", 0.4]]}
    html = _blocs_table({"settings": {"family": "plackett-luce"}, "cluster_sizes": [50, 50],
                         "data": {"group_column": "Precinct"}, "blocs": [bloc]})
    assert "strongest in (Precinct" in html and "Precinct 7 90%, Precinct 2 40%" in html
    assert "30%" in html and "(1 of them)" in html  # below half the draws: flagged in the hint
    assert "<i>Ann</i> → Bob 50%; stop 25%" in html
