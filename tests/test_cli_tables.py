"""The command line on tables of mixed columns: ``--family auto`` / ``table`` on a messy
spreadsheet export, ``--column-type``, ``--weights``, the ``table`` block of the summary and
the one-line errors (exit status 2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dpclust.cli import main

from cli_helpers import as_written, run

try:
    import pandas as pd
    import pyarrow  # noqa: F401

    HAVE_ARROW = True
except ImportError:
    HAVE_ARROW = False

FAST = ["--n-iter", "12", "--no-progress", "--no-plots"]
N_ROWS = 30


def summary_of(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def kinds_of(summary: dict) -> dict:
    return {row["column"]: row["kind"] for row in summary["table"]["columns"]}


@pytest.fixture(scope="module")
def messy(tmp_path_factory) -> Path:
    """A spreadsheet export: semicolons and decimal commas, an id column, blank cells,
    ``NA`` and ``?`` for missing numbers, yes/no text, a 0/1 column, numbers quoted and
    padded as text, a zip code with leading zeros, counts, weights and known groups."""
    rng = np.random.default_rng(0)
    lines = ["id;age;smoker;colour;member;income;zip;visits;w;group"]
    for i in range(N_ROWS):
        g = i % 2
        age = f"{rng.normal(30 + 25 * g, 3):.1f}".replace(".", ",")
        age = {3: "NA", 7: "?", 11: ""}.get(i, age)
        smoker = ["no", "yes"][int(rng.random() < 0.2 + 0.6 * g)] if i != 5 else ""
        colour = rng.choice(["red", "blue", "green"]) if i != 9 else "NA"
        income = f'"{int(rng.normal(1000 + 2000 * g, 100))}"' if i % 3 else f" {1500 + i} "
        zip_code = ["02139", "10001", "60601"][i % 3]
        w = "1" if i % 4 else "2,5"
        lines.append(f"r{i:03d};{age};{smoker};{colour};{g if i != 13 else '?'};{income};"
                     f"{zip_code};{rng.poisson(1 + 4 * g)};{w};{'ab'[g]}")
    path = tmp_path_factory.mktemp("tables") / "survey.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def auto_run(messy, tmp_path_factory):
    """``dpclust fit survey.csv --family auto --truth group`` (the weights column left out)."""
    out = tmp_path_factory.mktemp("auto")
    status = main(as_written(("fit", messy, "--family", "auto", "--truth", "group",
                              "--columns", "id,age,smoker,colour,member,income,visits",
                              *FAST, "--out", out)))
    return status, out


# --------------------------------------------------------------------------------------------
# --family auto end to end


def test_auto_reads_a_messy_export_and_says_what_it_picked(auto_run):
    status, out = auto_run
    assert status == 0
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["family"] == "auto" and run["config"]["column_types"] is None
    summary = summary_of(out)
    assert summary["settings"]["family"] == "table"
    assert summary["data"]["family_picked"] == "table"
    assert summary["data"]["truth_column"] == "group" and "nmi" in summary["metrics"]
    assert summary["data"]["n_samples"] == N_ROWS
    assert kinds_of(summary) == {"age": "gaussian", "smoker": "bernoulli",
                                 "colour": "categorical", "member": "bernoulli",
                                 "income": "gaussian", "visits": "gaussian"}
    assert summary["table"]["dropped"] == [["id", "an identifier (a distinct text on every row)"]]
    # the features modelled and the file's columns (less the truth column)
    assert (summary["data"]["n_features"], summary["data"]["n_columns"]) == (6, 7)
    levels = {row["column"]: row["levels"] for row in summary["table"]["columns"]}
    assert levels["smoker"] == 2 and levels["colour"] == 3


def test_auto_counts_its_cleaning_rules(auto_run):
    rules = summary_of(auto_run[1])["table"]["rules"]
    # age: NA, ?, empty; smoker: one empty; colour: one NA; member: one ?
    assert rules == {"'NA' read as missing (cells)": 2, "'?' read as missing (cells)": 2,
                     "empty cells read as missing (cells)": 2}


def test_auto_says_the_kinds_on_stderr(messy, tmp_path, capsys):
    status, _, err = run(capsys, "fit", messy, "--family", "auto", "--columns", "id,age,smoker",
                         *FAST, "--n-iter", "4", "--out", tmp_path)
    assert status == 0, err
    lines = err.splitlines()
    assert ("dpclust: --family auto (the default) picked table (the table has columns of 2 "
            "kinds (numbers and yes/no) and holes: the table family models each column by "
            "its kind and the holes as missing; --family chooses another)") == lines[0]
    assert lines[1].startswith("dpclust: columns read as (--column-type NAME=KIND")
    kinds = {line.split()[1]: line.split()[2] for line in lines[2:5]}
    assert kinds == {"age": "gaussian", "smoker": "bernoulli", "id": "left"}
    assert "dpclust: 'NA' read as missing (cells): 1" in lines


def test_auto_picks_gaussian_for_complete_numbers(tmp_path, capsys):
    data = tmp_path / "points.csv"
    rng = np.random.default_rng(1)
    data.write_text("a,b\n" + "\n".join(f"{x:.3f},{y:.3f}" for x, y in rng.normal(size=(20, 2))))
    status, _, err = run(capsys, "fit", data, "--family", "auto", *FAST, "--out", tmp_path / "o")
    assert status == 0, err
    summary = summary_of(tmp_path / "o")
    assert summary["settings"]["family"] == "gaussian" and "table" not in summary
    assert summary["data"]["family_picked"] == "gaussian"


def test_without_family_the_family_is_picked_from_the_data(tmp_path, capsys):
    """No --family is --family auto: a table with holes gets the table family, a sparse
    file of counts the documents' family, and a hyperparameter of another family than
    the one picked is refused before the run, naming the family picked."""
    holes = tmp_path / "holes.csv"
    holes.write_text("a,b\n" + "\n".join(f"{i % 7}.5,{'' if i % 5 == 0 else i % 3}"
                                          for i in range(30)))
    status, _, err = run(capsys, "fit", holes, *FAST, "--out", tmp_path / "t")
    assert status == 0, err
    assert summary_of(tmp_path / "t")["data"]["family_picked"] == "table"
    assert "--family auto (the default) picked table" in err
    counts = tmp_path / "docs.npz"
    rng = np.random.default_rng(3)
    sp.save_npz(counts, sp.csr_matrix(rng.poisson(1.0, size=(30, 8)).astype(float)))
    status, _, err = run(capsys, "fit", counts, *FAST, "--out", tmp_path / "d")
    assert status == 0, err
    assert summary_of(tmp_path / "d")["settings"]["family"] == "multinomial"
    for command, head in (("predict", "label,probability"), ("score", "log_density")):
        status, stdout, err = run(capsys, command, tmp_path / "d", counts)
        assert status == 0, err
        assert stdout.splitlines()[0] == head and len(stdout.splitlines()) == 31
    status, _, err = run(capsys, "fit", counts, *FAST, "--kappa", "0.5",
                         "--out", tmp_path / "k")
    assert status == 2 and "--family auto picked multinomial" in err
    assert len(err.strip().splitlines()) == 1


def test_auto_leaves_out_a_column_of_numbered_ids(tmp_path, capsys):
    """Numbers with a respondent id: ``auto`` picks ``table``, which leaves the ids out and
    says why (stderr, summary, report), where ``gaussian`` would read them as a feature."""
    data = tmp_path / "survey.csv"
    rng = np.random.default_rng(2)
    ids = rng.choice(np.arange(10_000, 100_000), size=N_ROWS, replace=False)
    data.write_text("RespondentID,a,b\n" + "\n".join(
        f"{i},{x:.3f},{y:.3f}" for i, (x, y) in zip(ids, rng.normal(size=(N_ROWS, 2)))))
    why = "an identifier (a distinct whole number on every row, named like an id)"
    status, _, err = run(capsys, "fit", data, "--family", "auto", *FAST, "--n-iter", "4",
                         "--out", tmp_path / "o")
    assert status == 0, err
    summary = summary_of(tmp_path / "o")
    assert summary["data"]["family_picked"] == "table"
    assert kinds_of(summary) == {"a": "gaussian", "b": "gaussian"}
    assert summary["table"]["dropped"] == [["RespondentID", why]]
    said = [line.split(None, 4) for line in err.splitlines()]
    assert ["dpclust:", "RespondentID", "left", "out", why] in said
    # the reason for the table family is the ids, not "mixed columns with holes"
    assert ("picked table (it leaves out RespondentID, which a family of plain numbers "
            "would read as a feature; --family chooses another)") in err
    assert why in (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    status, text, err = run(capsys, "predict", tmp_path / "o", data)  # the ids are there too
    assert status == 0, err
    assert len(text.splitlines()) == N_ROWS + 1
    status, _, err = run(capsys, "fit", data, "--family", "auto", "--column-type",
                         "RespondentID=gaussian", *FAST, "--n-iter", "4", "--out", tmp_path / "k")
    assert status == 0, err
    summary = summary_of(tmp_path / "k")
    assert kinds_of(summary) == {"RespondentID": "gaussian", "a": "gaussian", "b": "gaussian"}
    assert summary["table"]["dropped"] == []


def test_a_single_kind_family_reads_text(tmp_path, capsys):
    data = tmp_path / "answers.csv"
    data.write_text("q1,q2\n" + "\n".join(f"{a},{b}" for a, b in
                                          zip("abcab" * 4, ["x", "y", "", "z"] * 5)))
    status, _, err = run(capsys, "fit", data, "--family", "categorical", *FAST,
                         "--out", tmp_path / "o")
    assert status == 0, err
    table = summary_of(tmp_path / "o")["table"]
    assert {row["kind"] for row in table["columns"]} == {"categorical"}
    assert table["rules"] == {"empty cells read as missing (cells)": 5}
    assert "--family categorical" in err


# --------------------------------------------------------------------------------------------
# --column-type


def test_column_type_overrides_kinds(messy, tmp_path, capsys):
    status, _, err = run(capsys, "fit", messy, "--family", "table", "--truth", "group",
                         "--column-type", "visits=poisson,zip=categorical",
                         "--column-type", "id=drop", "--columns",
                         "id,age,zip,visits", *FAST, "--out", tmp_path)
    assert status == 0, err
    run_json = json.loads((tmp_path / "run.json").read_text())
    assert run_json["config"]["column_types"] == {"visits": "poisson", "zip": "categorical",
                                                  "id": "drop"}
    table = summary_of(tmp_path)["table"]
    assert kinds_of({"table": table}) == {"age": "gaussian", "zip": "categorical",
                                          "visits": "poisson"}
    zip_row = next(row for row in table["columns"] if row["column"] == "zip")
    assert zip_row["levels"] == 3  # kept as text: 02139, not the number 2139
    assert table["dropped"] == [["id", "left out as asked"]]
    assert "02139" in err and "--column-type" in err


def test_predict_reads_new_rows_with_the_fitted_kinds(messy, tmp_path, capsys):
    out = tmp_path / "run"
    status, _, err = run(capsys, "fit", messy, "--family", "auto", "--columns",
                         "age,smoker,colour", *FAST, "--n-iter", "4", "--out", out)
    assert status == 0, err
    new = tmp_path / "new.csv"
    new.write_text("age;smoker;colour;other\n31,5;yes;red;x\n?;no;purple;y\n")
    status, text, err = run(capsys, "predict", out, new)
    assert status == 0, err
    lines = text.splitlines()
    assert lines[0] == "label,probability" and len(lines) == 3


# --------------------------------------------------------------------------------------------
# --weights


def test_weights_column_is_passed_to_fit(messy, tmp_path, capsys):
    status, _, err = run(capsys, "fit", messy, "--family", "auto", "--weights", "w",
                         "--columns", "age,smoker", *FAST, "--out", tmp_path)
    assert status == 0, err
    summary = summary_of(tmp_path)
    assert summary["data"]["weights_column"] == "w"
    assert "w" not in kinds_of(summary)


# --------------------------------------------------------------------------------------------
# one-line errors, exit status 2


def _bad(tmp_path, messy) -> dict:
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return path

    weights = write("weights.csv", "a,w\n1.0,1\n2.0,x\n3.0,2\n4.0,1\n")
    return {
        "holes-in-gaussian": ([write("holes.csv", "a,b\n1,2\n,4\n3,5\n"), "--family", "gaussian"],
                              "--family auto"),
        "text-in-gaussian": ([write("text.csv", "a,b\n1,x\n2,y\n"), "--family", "gaussian"],
                             "--family auto"),
        "unknown-kind": ([messy, "--family", "auto", "--column-type", "age=normal"],
                         "unknown kind 'normal'"),
        "not-a-pair": ([messy, "--family", "auto", "--column-type", "age"], "NAME=KIND"),
        "unknown-column": ([messy, "--family", "auto", "--column-type", "agee=gaussian"],
                           "no column named 'agee'"),
        "two-kinds": ([messy, "--family", "auto", "--column-type", "age=gaussian",
                       "--column-type", "age=poisson"], "two kinds"),
        "kind-does-not-fit": ([messy, "--family", "table", "--column-type", "colour=poisson"],
                              "'colour' was given the kind 'poisson'"),
        "not-a-count": ([messy, "--family", "table", "--column-type", "income=gaussian",
                         "--column-type", "w=poisson"], "is not a count"),
        "type-of-truth": ([messy, "--family", "table", "--truth", "group", "--column-type",
                           "group=categorical"], "is the --truth column"),
        "type-with-gaussian": ([messy, "--family", "gaussian", "--column-type", "age=gaussian"],
                               "--column-type applies only to --family"),
        "weights-missing": ([messy, "--family", "auto", "--weights", "weight"],
                            "no column named 'weight' (--weights)"),
        "weights-text": ([weights, "--family", "table", "--weights", "w"],
                         "'x' in data row 2, which is not a number"),
        "weights-zero": ([write("zero.csv", "a,w\n1.0,1\n2.0,0\n3.5,1\n"), "--family", "table",
                          "--weights", "w"], "which is not positive"),
        "weights-negative": ([write("neg.csv", "a,w\n1.0,1\n2.0,-1\n3.5,1\n"), "--family",
                              "table", "--weights", "w"], "which is not positive"),
        "weights-holes": ([write("wholes.csv", "a,w\n1.0,1\n2.0,NA\n3.5,1\n"), "--family",
                           "table", "--weights", "w"], "has 1 missing cells"),
        "weights-is-truth": ([messy, "--family", "auto", "--weights", "w", "--truth", "w"],
                             "name the same column"),
        "truth-holes": ([write("tholes.csv", "a,g\n1.0,x\n2.0,\n3.5,y\n"), "--family", "table",
                         "--truth", "g"], "NMI and ARI need every row's label"),
        "auto-on-demo": (["--family", "auto", "--column-type", "a=gaussian"],
                         "name columns of a DATA file"),
    }


@pytest.mark.parametrize("case", ["holes-in-gaussian", "text-in-gaussian", "unknown-kind",
                                  "not-a-pair", "unknown-column", "two-kinds",
                                  "kind-does-not-fit", "not-a-count", "type-of-truth",
                                  "type-with-gaussian",
                                  "weights-missing", "weights-text", "weights-zero",
                                  "weights-negative", "weights-holes", "weights-is-truth",
                                  "truth-holes", "auto-on-demo"])
def test_bad_table_input_is_one_line_and_exit_status_2(tmp_path, messy, capsys, case):
    argv, expected = _bad(tmp_path, messy)[case]
    status, _, err = run(capsys, "fit", *argv, *FAST, "--out", tmp_path / "out")
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpclust: error: ")
    assert expected in lines[0], lines[0]


# --------------------------------------------------------------------------------------------
# Parquet


@pytest.mark.skipif(not HAVE_ARROW, reason="needs pyarrow")
def test_parquet_with_nulls_and_text(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"x": rng.normal(size=24), "kind": rng.choice(["a", "b", "c"], 24),
                          "flag": rng.random(24) < 0.5})
    frame.loc[2, "x"] = np.nan
    frame.loc[4, "kind"] = None
    frame.loc[5, "kind"] = "n/a"
    data = tmp_path / "t.parquet"
    frame.to_parquet(data)
    status, _, err = run(capsys, "fit", data, "--family", "auto", *FAST, "--out", tmp_path / "o")
    assert status == 0, err
    table = summary_of(tmp_path / "o")["table"]
    assert kinds_of({"table": table}) == {"x": "gaussian", "kind": "categorical",
                                          "flag": "bernoulli"}
    assert table["rules"] == {"null cells read as missing (cells)": 2,
                              "'n/a' read as missing (cells)": 1}


def test_resume_a_table_run_with_column_types(messy, tmp_path, capsys):
    out = tmp_path / "run"
    status, _, err = run(capsys, "fit", messy, "--family", "table", "--column-type",
                         "visits=poisson,id=drop", "--columns", "id,age,visits", *FAST,
                         "--n-iter", "10", "--checkpoint-every", "2", "--stop-after", "4",
                         "--out", out)
    assert status == 130, err
    status, _, err = run(capsys, "resume", out, "--no-progress", "--no-plots")
    assert status == 0, err
    table = summary_of(out)["table"]
    assert kinds_of({"table": table}) == {"age": "gaussian", "visits": "poisson"}
    assert table["dropped"] == [["id", "left out as asked"]]


def test_auto_reads_whole_numbers_with_ties_as_rounded_values(tmp_path, capsys):
    """--family auto on whole numbers with ties: the Gaussian of rounded values (the
    settings give each column's cell width, the summary the columns read so); --rounding
    none reads them as exact, and a bad --rounding is refused by name."""
    data = tmp_path / "ints.csv"
    rng = np.random.default_rng(2)
    data.write_text("a,b\n" + "\n".join(f"{x},{y:.3f}" for x, y in
                                        zip(rng.integers(0, 6, 40), rng.normal(size=40))))
    status, _, err = run(capsys, "fit", data, *FAST, "--chains", "1", "--out", tmp_path / "r")
    assert status == 0, err
    summary = summary_of(tmp_path / "r")
    assert summary["settings"]["rounding"] == [1.0, 0.0]
    assert summary["gaussian"]["rounded_columns"].startswith("1 of 2 columns")
    status, _, err = run(capsys, "fit", data, *FAST, "--chains", "1", "--rounding", "none",
                         "--out", tmp_path / "e")
    assert status == 0, err
    assert summary_of(tmp_path / "e")["settings"]["rounding"] is None
    status, _, err = run(capsys, "fit", data, *FAST, "--rounding", "x", "--out", tmp_path / "x")
    assert status != 0 and "--rounding: expected auto, none" in err


def test_a_spreadsheet_export_of_formatted_numbers_is_read_as_numbers(tmp_path, capsys):
    """Amounts with a currency symbol and thousands separators, shares with a percent sign,
    counts grouped by thousands and dates, beside plain numbers with decimal points: the
    thousands' commas are not a decimal mark, every column is read as meant and each mark
    taken off is counted."""
    rng = np.random.default_rng(4)
    lines = ["item;price;share;count;score;laid"]
    for i in range(N_ROWS):
        g = i % 2
        lines.append(f'item {i};"$ {rng.normal(1500 + 3000 * g, 200):,.2f}";'
                     f"{rng.normal(20 + 40 * g, 4):.1f} %;\"{int(rng.integers(1000, 3000)):,}\";"
                     f"{rng.normal(3 * g, 1):.3f};2024-{1 + i % 12:02d}-{1 + i:02d}")
    data = tmp_path / "export.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status, _, err = run(capsys, "fit", data, *FAST, "--chains", "1", "--out", tmp_path / "o")
    assert status == 0, err
    summary = summary_of(tmp_path / "o")
    assert kinds_of(summary) == {"price": "gaussian", "share": "gaussian", "count": "gaussian",
                                 "score": "gaussian", "laid": "gaussian"}
    assert summary["table"]["dropped"] == [["item", "an identifier (a distinct text on every "
                                                    "row)"]]
    rules = summary["table"]["rules"]
    assert rules["currency symbols taken off numbers (cells)"] == N_ROWS
    assert rules["percent signs taken off numbers (cells)"] == N_ROWS
    assert rules["thousands separators taken off numbers (cells)"] == 2 * N_ROWS
    assert rules["dates read as days since the column's first (cells)"] == N_ROWS
    assert "percent signs taken off numbers (cells): 30" in err


def test_rows_with_no_value_to_cluster_on_are_left_out_and_get_empty_labels(tmp_path, capsys):
    """A row whose modelled cells are all missing (a week with no record under its row
    number) is left out of the fit, counted, said on stderr, and given an empty label in
    labels.csv, whose lines stay one a data row."""
    rng = np.random.default_rng(3)
    lines = ["rownames,a,b,kind"]
    for i in range(40):
        a, b = rng.normal(5 * (i % 2), 1, 2)
        cells = f"{a:.3f},{b:.3f},{'xy'[i % 2]}" if i not in (4, 17) else "NA,,NA"
        lines.append(f"{i + 1},{cells}")
    path = tmp_path / "weeks.csv"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    status, _, err = run(capsys, "fit", path, *FAST, "--random-state", "0", "--out", out)
    assert status == 0, err
    assert "2 row(s) have no value in the columns modelled (first: data row 5)" in err
    summary = summary_of(out)
    assert summary["data"]["n_samples"] == 38
    assert summary["table"]["rules"][
        "rows with no value in the columns modelled, left out (rows)"] == 2
    written = (out / "labels.csv").read_text().splitlines()
    assert len(written) == 1 + 40
    assert written[1 + 4] == written[1 + 17] == ","
    assert all(line.split(",")[0] != "" for j, line in enumerate(written[1:])
               if j not in (4, 17))


def test_a_ddcrp_fit_leaves_out_an_empty_row_with_its_distances(tmp_path, capsys):
    """The distances of the file's rows lose the left-out row's line and column, and
    links.csv names the file's rows."""
    rng = np.random.default_rng(4)
    lines = ["rownames,a,b"] + [f"{i + 1},{rng.normal():.3f},{rng.normal():.3f}" if i != 6
                                else f"{i + 1},," for i in range(30)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    i = np.arange(30)
    np.save(tmp_path / "d.npy", np.abs(i[:, None] - i[None, :]).astype(float))
    out = tmp_path / "out"
    status, _, err = run(capsys, "fit", path, "--model", "ddcrp", "--distances",
                         tmp_path / "d.npy", "--decay", "window:2", *FAST, "--out", out)
    assert status == 0, err
    links = np.loadtxt(out / "links.csv", delimiter=",", skiprows=1, dtype=int)
    assert 6 not in links[:, 0] and 6 not in links[:, 1] and len(links) == 29
    assert np.all(np.abs(links[:, 0] - links[:, 1]) <= 2)  # the file rows' distances
