"""Tests of dpclust.tables.profiles, the summary's table and profiles blocks, and the
report's column profiles for table fits."""

from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pandas as pd
import pytest

from dpclust.tables import check_table
from dpclust.tables.profiles import (OTHER_LEVELS, as_summary, column_profiles,
                                     weighted_quartiles)

#: six rows, two clusters of three; hand-checked numbers in the tests below
SMALL = pd.DataFrame({"x": [1.0, 2.0, np.nan, 4.0, 10.0, 12.0],
                      "c": ["a", "b", "a", None, "b", "b"],
                      "n": [1, 0, 2, 3, np.nan, 5]})
SMALL_LABELS = [0, 0, 0, 1, 1, 1]


def _small():
    X = check_table(SMALL, kinds={"n": "poisson"})
    return X, column_profiles(X, SMALL_LABELS, 2)


def test_real_column_by_hand():
    _, p = _small()
    x = p["columns"][0]
    assert (x["column"], x["kind"]) == ("x", "gaussian")
    assert x["observed"].tolist() == [2, 3]
    np.testing.assert_allclose(x["missing"], [1 / 3, 0.0])
    np.testing.assert_allclose(x["mean"], [1.5, 26 / 3])
    np.testing.assert_allclose(x["sd"], [np.sqrt(0.5), np.sqrt(52 / 3)])
    np.testing.assert_allclose(x["quartiles"], [[1.25, 1.5, 1.75], [7.0, 10.0, 11.0]])
    whole = x["overall"]
    assert whole["observed"] == 5 and whole["missing"] == pytest.approx(1 / 6)
    assert whole["mean"] == pytest.approx(5.8)
    np.testing.assert_allclose(whole["quartiles"], [2.0, 4.0, 10.0])
    # eta^2 = SS_between / SS_total = (2 * 4.3^2 + 3 * (26/3 - 5.8)^2) / 96.8
    between = 2 * 4.3 ** 2 + 3 * (26 / 3 - 5.8) ** 2
    assert x["separation"] == pytest.approx(np.sqrt(between / 96.8))


def test_coded_and_count_columns_by_hand():
    _, p = _small()
    c, n = p["columns"][1], p["columns"][2]
    assert c["levels"] == ["a", "b"]
    np.testing.assert_allclose(c["shares"], [[2 / 3, 1 / 3], [0.0, 1.0]])
    np.testing.assert_allclose(c["overall"]["shares"], [0.4, 0.6])
    # chi2 = 3 (0.2667^2/0.4 + 0.2667^2/0.6) + 2 (0.4^2/0.4 + 0.4^2/0.6); V^2 = chi2 / 5
    chi2 = 3 * ((2 / 3 - 0.4) ** 2 / 0.4 + (1 / 3 - 0.6) ** 2 / 0.6) + 2 * (0.4 + 0.16 / 0.6)
    assert c["separation"] == pytest.approx(np.sqrt(chi2 / 5))
    assert n["kind"] == "poisson"
    np.testing.assert_allclose(n["mean"], [1.0, 4.0])
    np.testing.assert_allclose(n["missing"], [0.0, 1 / 3])
    assert p["sizes"].tolist() == [3, 3]


def test_weights_count_as_frequencies():
    """A row of weight 2 is the row twice, in means, spreads, quartiles and shares."""
    X = check_table(SMALL, kinds={"n": "poisson"})
    w = np.array([2.0, 1, 1, 1, 1, 1])
    weighted = column_profiles(X.with_weight(w), SMALL_LABELS, 2)
    twice = column_profiles(check_table(pd.concat([SMALL.iloc[:1], SMALL]),
                                        kinds={"n": "poisson"}),
                            [0] + SMALL_LABELS, 2)
    for a, b in zip(weighted["columns"], twice["columns"]):
        for key in ("mean", "sd", "shares", "quartiles"):
            if key in a:
                np.testing.assert_allclose(a[key], b[key], err_msg=f"{a['column']} {key}")
    assert weighted["weights"].tolist() == [4.0, 3.0]


def test_weighted_quartiles_are_numpy_s_of_the_repeated_data():
    x = np.random.default_rng(0).normal(size=16)
    np.testing.assert_allclose(weighted_quartiles(x, np.ones(16)),
                               np.quantile(x, [0.25, 0.5, 0.75]))
    w = np.arange(16) % 3 + 1.0
    np.testing.assert_allclose(weighted_quartiles(x, w),
                               np.quantile(np.repeat(x, w.astype(int)), [0.25, 0.5, 0.75]))
    # weights below one: positions 0 and 0.5, scaled to 0 and 1
    assert weighted_quartiles(np.array([1.0, 3.0]), np.full(2, 0.5)).tolist() == [1.5, 2, 2.5]
    assert weighted_quartiles(np.array([4.0]), np.ones(1)).tolist() == [4.0] * 3
    assert np.isnan(weighted_quartiles(np.array([]), np.array([]))).all()


def test_an_empty_cluster_and_bad_labels():
    X, _ = _small()
    p = column_profiles(X, [0, 0, 0, 2, 2, 2], 3)
    assert np.isnan(p["columns"][0]["mean"][1]) and p["sizes"].tolist() == [3, 0, 3]
    with pytest.raises(ValueError, match="one entry per row"):
        column_profiles(X, [0, 1], 2)
    with pytest.raises(ValueError, match="0 .. 1"):
        column_profiles(X, [0, 0, 0, 2, 2, 2], 2)


def test_the_summary_block_is_json_and_bounded():
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({f"r{j}": rng.normal(size=n) + (j < 3) * 3 * (np.arange(n) % 4)
                       for j in range(30)})
    df["many"] = [f"L{v}" for v in rng.integers(0, 40, n)]
    df.loc[::7, "r5"] = np.nan
    labels = np.arange(n) % 4
    p = column_profiles(check_table(df), labels, 4)
    block = as_summary(p, max_levels=5)
    text = json.dumps(block, allow_nan=False)  # NaN would be refused
    many = block["columns"][-1]
    assert many["levels"][-1] == OTHER_LEVELS and len(many["levels"]) == 6
    assert many["levels_merged"] == len(p["columns"][-1]["levels"]) - 5
    assert all(abs(sum(s) - 1) < 0.01 for s in many["shares"])
    assert block["columns"][5]["missing"][0] is not None
    small = as_summary(p, max_cells=4 * 10)
    kept = [c for c in small["columns"] if c.get("per_cluster", True)]
    assert small["columns_per_cluster"] == 10 and len(kept) == 10
    assert {c["column"] for c in kept} >= {"r0", "r1", "r2"}  # the separating columns
    assert all("overall" in c for c in small["columns"])
    assert len(json.dumps(small)) < len(text)


# ------------------------------------------------------------------ a fitted table
def _penguins(n=150, seed=0):
    """Four real columns, two category columns, a yes/no column, about 15 % holes, three
    groups."""
    rng = np.random.default_rng(seed)
    g = rng.choice(3, size=n, p=[0.45, 0.35, 0.2])
    centres = np.array([[39, 18.3, 190, 3700], [48.8, 18.4, 196, 3730],
                        [47.5, 15.0, 217, 5070]])
    real = centres[g] + rng.standard_normal((n, 4)) * np.array([2.6, 1.2, 6.5, 450])
    islands = np.array(["Biscoe", "Dream", "Torgersen"])
    island = islands[np.where(rng.random(n) < 0.9, g, rng.integers(0, 3, n))]
    diet = np.array(["fish", "krill", "squid", "mixed"])[np.where(rng.random(n) < 0.7, g, 3)]
    df = pd.DataFrame({"bill_length_mm": real[:, 0], "bill_depth_mm": real[:, 1],
                       "flipper_length_mm": real[:, 2], "body_mass_g": real[:, 3],
                       "island": island.astype(object), "diet": diet.astype(object),
                       "sex": np.where(rng.random(n) < 0.5, "male", "female").astype(object),
                       "tag": [f"t{i}" for i in range(n)]})
    for c in df.columns[:-1]:
        df.loc[rng.random(n) < 0.15, c] = np.nan
    return df, g


@pytest.fixture(scope="module")
def table_fit(tmp_path_factory):
    from dpclust import DPMixture
    from dpclust.estimators.summary import run_summary

    df, g = _penguins()
    model = DPMixture(family="auto", n_iter=30, burn_in=10, random_state=0, n_chains=1)
    with pytest.warns(UserWarning):  # 30 iterations do not converge
        model.fit(df)
    summary = run_summary(model, data={"source": "penguins", "n_samples": len(df),
                                       "n_features": df.shape[1], "format": "csv"},
                          total_seconds=1.0, version="test", truth=g,
                          out_dir=tmp_path_factory.mktemp("fit"))
    return model, summary


def test_the_summary_says_how_the_columns_were_read(table_fit):
    model, summary = table_fit
    table = summary["table"]
    assert [r["column"] for r in table["columns"]][:7] == list(_penguins()[0].columns[:7])
    assert table["dropped"] == [["tag", model.family_.schema_.dropped[0][1]]]
    assert {r["column"]: r["kind"] for r in table["columns"]}["sex"] == "bernoulli"
    assert isinstance(table["rules"], dict)
    json.dumps(summary["table"], allow_nan=False)


def test_the_summary_profiles_are_the_data_s(table_fit):
    model, summary = table_fit
    block = summary["profiles"]
    json.dumps(block, allow_nan=False)
    assert block["sizes"] == summary["cluster_sizes"]
    df = _penguins()[0]
    labels = model.labels_
    mass = next(c for c in block["columns"] if c["column"] == "body_mass_g")
    for k in range(summary["n_clusters"]):
        cells = df["body_mass_g"][labels == k].dropna()
        assert mass["observed"][k] == len(cells)
        assert mass["mean"][k] == pytest.approx(cells.mean(), rel=1e-3)
    island = next(c for c in block["columns"] if c["column"] == "island")
    assert island["levels"] == ["Biscoe", "Dream", "Torgersen"]
    assert island["overall"]["shares"][1] == pytest.approx(
        (df["island"] == "Dream").sum() / df["island"].notna().sum(), rel=1e-3)


# ------------------------------------------------------------------ the report
def _visible_text(page: str) -> str:
    """The page's text as a reader sees it: no tags, attributes, styles or the folded
    JSON of the full summary."""
    page = re.sub(r"<details>.*?</details>", "", page, flags=re.S)
    page = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    return re.sub(r"<[^>]+>", " ", page)


def test_the_report_shows_the_columns_and_their_profiles(table_fit, tmp_path):
    from dpclust.report import render_html

    model, summary = table_fit
    page = render_html(summary, {})
    text = _visible_text(page)
    assert "Columns read as" in text and "Column profiles" in text
    for name in ("bill_length_mm", "island", "sex", "tag"):
        assert name in text
    assert "Biscoe, Dream, Torgersen" in text  # the levels by name
    assert "left out" in text  # the identifier column, with its reason
    assert model.family_.schema_.dropped[0][1] in text
    for raw in ('{"', "array(", "np.float64", "None", "nan", "'column'"):
        assert raw not in text, raw
    section = page[page.index('id="profiles"'):]
    assert section.index("bill_length_mm") < section.index(">sex<")  # separating first


def test_a_wide_table_s_profiles_stay_bounded():
    """60 columns and 15 clusters: the rows scroll in a box of bounded height, at most
    MAX_PROFILE_CLUSTERS clusters are shown, and the page says so."""
    from dpclust.report import render_html
    from dpclust.report.profiles import CSS, MAX_PROFILE_CLUSTERS

    rng = np.random.default_rng(2)
    n, K = 600, 15
    labels = np.arange(n) % K
    df = pd.DataFrame({f"col{j:02d}": rng.normal(size=n) + (j % 3 == 0) * labels
                       for j in range(45)})
    for j in range(15):
        df[f"cat{j:02d}"] = np.array(["a", "b", "c", "d"], dtype=object)[
            (labels * (j % 2) + rng.integers(0, 4, n)) % 4]
    X = check_table(df)
    sizes = np.bincount(labels).tolist()
    summary = {"settings": {"family": "table"}, "n_clusters": K, "cluster_sizes": sizes,
               "profiles": as_summary(column_profiles(X, labels, K))}
    page = render_html(summary, {})
    section = page[page.index('id="profiles"'):page.index("</table>",
                                                          page.index('id="profiles"'))]
    assert section.count("<tr>") == 1 + 60
    assert section.count('<span class="swatch"') == MAX_PROFILE_CLUSTERS
    assert 'class="scroll"' in section and re.search(r"\.scroll \{ max-height:\d+px", CSS)
    assert f"The {MAX_PROFILE_CLUSTERS} largest clusters are shown" in page
    assert len(page) < 400_000


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="needs matplotlib (dpclust[plot])")
def test_the_report_draws_the_profile_plots(table_fit, tmp_path):
    from dpclust.report import write_report

    model, summary = table_fit
    paths = write_report(tmp_path, summary, None, model._X_fit, model.labels_)
    assert {"profiles", "clusters"} <= set(paths)
    assert paths["profiles"].read_bytes().startswith(b"\x89PNG")
    page = paths["report"].read_text(encoding="utf-8")
    assert 'id="fig-profiles"' in page and "could not be drawn" not in page
