"""Identifier columns of a table (:func:`dpclust.tables.infer_schema`): whole numbers with a
distinct value on every row, named like an id or consecutive, are left out like a text id,
and so are whole numbers named like an id whose many values repeat (a panel's units);
other distinct whole numbers, small tables and the user's own kinds are not touched.  So are
constants and text labels (a distinct text on more than half the rows)."""

import numpy as np
import pandas as pd
import pytest

from dpclust.tables import infer_schema, numbered_ids
from dpclust.tables.columns import ID_MIN_ROWS, named_like_an_id

N_ROWS = 30
NAMED = "an identifier (a distinct whole number on every row, named like an id)"


def table(ids, name="id") -> pd.DataFrame:
    """A column ``name`` of ``ids`` beside a real feature."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({name: ids, "height": rng.normal(size=len(ids))})


def kinds_of(schema) -> dict:
    return {c.name: c.kind for c in schema.columns}


def scattered(n=N_ROWS, seed=1) -> np.ndarray:
    """``n`` distinct whole numbers, not consecutive, in no order."""
    return np.random.default_rng(seed).choice(np.arange(1000, 100_000), size=n, replace=False)


@pytest.mark.parametrize("name", ["id", "ID", "uid", "uuid", "Key", "index", "respondent_id",
                                  "RespondentID", "respondentId", "user.id", "person id",
                                  "id_person", "ID-number", "PID", "rownames", "row.names",
                                  "Unnamed: 0", "rowid", "hid", "HHID", "Ketchup.hid",
                                  "person_uid", "Ketchup.id", "Subject", "patient"])
def test_distinct_whole_numbers_named_like_an_id_are_left_out(name):
    schema = infer_schema(table(scattered(), name))
    assert kinds_of(schema) == {"height": "gaussian"}
    assert schema.dropped == ((name, NAMED),)


@pytest.mark.parametrize("name", ["paid", "valid", "PAID", "squid", "idle", "identity",
                                  "kidney", "income", "price_index", "hidden", "kid"])
def test_words_that_merely_contain_id_are_not_ids(name):
    assert not named_like_an_id(name)
    assert kinds_of(infer_schema(table(scattered(), name)))[name] == "gaussian"


def test_consecutive_whole_numbers_in_any_order_are_left_out_whatever_the_name():
    rows = np.random.default_rng(2).permutation(np.arange(1001, 1001 + N_ROWS))
    schema = infer_schema(table(rows, "q7"))
    assert kinds_of(schema) == {"height": "gaussian"}
    assert schema.dropped == (("q7", "an identifier (consecutive whole numbers, 1001 to 1030, "
                                     "one per row)"),)
    # a row number written as floats, or as text, is one too
    assert infer_schema(table(rows.astype(float), "row")).dropped[0][0] == "row"
    assert infer_schema(table([f" {r} " for r in rows], "row")).dropped[0][0] == "row"


def test_distinct_whole_numbers_neither_named_nor_consecutive_stay_a_feature():
    schema = infer_schema(table(scattered(), "income"))
    assert kinds_of(schema) == {"income": "gaussian", "height": "gaussian"}
    assert schema.dropped == () and numbered_ids(table(scattered(), "income")) == []


def test_row_names_with_decimals_are_ids():
    """R writes row names as a column, and they may be numbers with decimals (a site 7
    and its neighbour 7.1): distinct, they are the rows' names; an ``id`` so written is
    not taken, nor are row names that repeat."""
    names = np.arange(N_ROWS) + np.where(np.arange(N_ROWS) % 3 == 0, 0.1, 0.0)
    schema = infer_schema(table(names, "rownames"))
    assert schema.dropped == (("rownames", "an identifier (row names, a distinct number on "
                                           "every row)"),)
    assert kinds_of(infer_schema(table(names, "id")))["id"] == "gaussian"
    repeated = np.repeat(names[: N_ROWS // 2], 2)
    assert kinds_of(infer_schema(table(repeated, "rownames")))["rownames"] == "gaussian"


def test_numbers_that_are_not_whole_are_not_ids():
    rows = np.arange(N_ROWS) + 0.5  # consecutive, but halves
    assert kinds_of(infer_schema(table(rows, "id")))["id"] == "gaussian"


@pytest.mark.parametrize("kind", ["gaussian", "categorical"])
def test_a_kind_given_for_the_column_wins(kind):
    schema = infer_schema(table(np.arange(N_ROWS)), kinds={"id": kind})
    assert kinds_of(schema)["id"] == kind and schema.dropped == ()
    assert schema.columns[0].why == "given"


def test_a_small_table_keeps_its_numbers():
    small = table(np.arange(ID_MIN_ROWS))
    assert kinds_of(infer_schema(small)) == {"id": "gaussian", "height": "gaussian"}
    assert numbered_ids(small) == []
    assert infer_schema(table(np.arange(ID_MIN_ROWS + 1))).dropped[0][0] == "id"


def test_a_repeat_a_gap_or_missing_cells_keep_the_column():
    rows = np.arange(N_ROWS)
    repeat = rows.copy()
    repeat[5] = repeat[6]
    gap = np.append(rows[:-1], N_ROWS + 5)  # 0 .. 28, then 35
    hole = rows.astype(float)
    hole[3] = np.nan  # 1 cell in 30: more than 1 in 100
    assert kinds_of(infer_schema(table(repeat, "row")))["row"] == "gaussian"
    assert kinds_of(infer_schema(table(gap, "row")))["row"] == "gaussian"
    assert kinds_of(infer_schema(table(hole, "id")))["id"] == "gaussian"
    # a gap does not matter when the name says id; one missing cell in 300 rows is "very few"
    assert infer_schema(table(gap, "id")).dropped == (("id", NAMED),)
    many = np.arange(300, dtype=float)
    many[7] = np.nan
    assert infer_schema(table(many, "id")).dropped == (("id", NAMED),)


def test_repeated_whole_numbers_named_like_an_id_are_the_units_of_a_panel():
    """A person's id on each of their years (13 people or more) names units: left out; a
    column so named with a few values is a code, read as levels; one not so named stays."""
    people = np.repeat(scattered(20), 3)  # 20 people, 3 rows each
    schema = infer_schema(table(people, "person_id"))
    assert kinds_of(schema) == {"height": "gaussian"}
    assert schema.dropped == (("person_id", "an identifier of units (named like an id; 20 "
                                            "whole numbers, each on 3.0 rows on average)"),)
    assert numbered_ids(table(people, "person_id")) == list(schema.dropped)
    # a study's subjects numbered (HSAUR's respiratory: 111 patients, 5 visits each)
    assert kinds_of(infer_schema(table(people, "subject"))) == {"height": "gaussian"}
    code = np.repeat(np.arange(1, 6), 12)  # 5 values, 12 rows each: a code
    assert kinds_of(infer_schema(table(code, "id")))["id"] == "categorical"
    assert kinds_of(infer_schema(table(people, "weight")))["weight"] == "gaussian"


def test_a_yes_no_column_is_never_an_id():
    schema = infer_schema(table(np.arange(N_ROWS) % 2, "id"))
    assert kinds_of(schema)["id"] == "bernoulli" and schema.dropped == ()


def test_numbered_ids_lists_what_infer_schema_leaves_out():
    df = table(scattered(), "respondent_id").assign(
        row=np.arange(N_ROWS)[::-1], text=[f"r{i}" for i in range(N_ROWS)],
        income=scattered(seed=3))
    assert numbered_ids(df) == [("respondent_id", NAMED),
                                ("row", "an identifier (consecutive whole numbers, 0 to 29, one "
                                        "per row)")]
    schema = infer_schema(df)
    assert [name for name, _ in schema.dropped] == ["respondent_id", "row", "text"]
    assert kinds_of(schema) == {"height": "gaussian", "income": "gaussian"}


def test_a_constant_column_is_left_out_with_its_value():
    """R's ``ISLR::Wage`` has a ``region`` every one of its 3,000 rows shares; penguins_raw
    a ``Region`` and a ``Stage``.  Read as yes/no, such a column showed one level as two."""
    df = table(scattered(), "income").assign(region="2. Middle Atlantic",
                                             score=[np.nan] * 3 + [4.0] * (N_ROWS - 3),
                                             flag=True)
    schema = infer_schema(df)
    assert kinds_of(schema) == {"income": "gaussian", "height": "gaussian"}
    assert dict(schema.dropped) == {
        "region": "a constant ('2. Middle Atlantic' on every row: it cannot tell rows apart)",
        "score": "a constant (4 on every row that has one: it cannot tell rows apart)",
        "flag": "a constant (True on every row: it cannot tell rows apart)"}
    # a kind given for it wins, and a table of constants only is refused by name
    assert kinds_of(infer_schema(df, {"region": "categorical"}))["region"] == "categorical"
    with pytest.raises(ValueError, match="no column left"):
        infer_schema(pd.DataFrame({"a": ["x"] * 5, "b": [2.0] * 5}))


def test_text_with_a_distinct_value_on_most_rows_is_a_label():
    """``ggplot2::midwest``'s ``county`` (320 names in 437 rows), penguins_raw's
    ``Individual ID`` (190 in 344): most levels on one row, so the column cannot group rows
    and its unseen levels would favour small clusters."""
    n = 60
    labels = [f"c{i % 40}" for i in range(n)]  # 40 texts in 60 rows
    codes = [f"k{i % 25}" for i in range(n)]  # 25 in 60: a code that repeats, kept
    df = table(np.linspace(0.0, 1.0, n), "x").assign(county=labels, code=codes)
    schema = infer_schema(df)
    assert kinds_of(schema)["code"] == "categorical"
    assert dict(schema.dropped) == {
        "county": "a label or an identifier (40 distinct texts in 60 rows, fewer than two "
                  "rows a text)"}
    # a few rows are too few to tell (ID_MIN_ROWS), and a pandas categorical is the user's
    assert kinds_of(infer_schema(df.head(20)))["county"] == "categorical"
    assert "county" in kinds_of(infer_schema(df.astype({"county": "category"})))


def test_dates_are_read_as_days_since_the_first():
    """penguins_raw's ``Date Egg`` (50 dates as text in a CSV) was 50 categories; a datetime
    column was refused.  Both are real numbers now, in days since the column's first date,
    and new data are read from the same origin."""
    from dpclust.tables import encode

    days = np.array([0, 3, 10, 400, 41, 7, 90, 5, 60, 33, 12, 250, 18, 2, 77] * 2)
    text = [str(np.datetime64("2007-11-09") + d) for d in days]
    text[4] = ""  # a hole
    df = table(scattered(), "income").assign(laid=text,
                                             seen=pd.to_datetime(text).tz_localize("UTC"))
    schema = infer_schema(df)
    laid = next(c for c in schema.columns if c.name == "laid")
    assert (laid.kind, laid.origin, laid.why) == ("gaussian", "2007-11-09",
                                                  "dates, read as days since 2007-11-09")
    assert schema.rules["dates read as days since the column's first (cells)"] == 2 * 29
    data = encode(df, schema)
    j = [c.name for c in schema.real].index("laid")
    expected = days.astype(float)
    expected[4] = np.nan
    np.testing.assert_array_equal(data.real[:, j], expected)
    np.testing.assert_array_equal(data.real[:, [c.name for c in schema.real].index("seen")],
                                  expected)
    new = df.head(2).assign(laid=["2008-01-01T12:00", "2007-11-08"])
    np.testing.assert_allclose(encode(new, schema).real[:, j], [53.5, -1.0])
    empty = encode(df.head(2).assign(laid=[None, ""]), schema).real[:, j]
    assert np.isnan(empty).all()  # new rows with no date: holes, not an error
    with pytest.raises(ValueError, match="'laid' holds dates but 'soon' is not"):
        encode(df.head(2).assign(laid=["soon", "2007-11-08"]), schema)
    # a few dates (survey waves) are categories, as whole numbers of few levels are
    waves = table(scattered(), "income").assign(wave=["2020-01-01", "2021-06-01"] * 15)
    assert kinds_of(infer_schema(waves))["wave"] == "bernoulli"
    # text that only partly reads as dates stays text
    mixed = table(scattered(), "income").assign(when=text[:-1] + ["later"])
    assert kinds_of(infer_schema(mixed))["when"] == "categorical"


def test_a_numbered_yes_is_the_yes_level():
    """``ISLR::Wage``'s ``health_ins`` holds "1. Yes" and "2. No": the yes is the answer,
    whatever number comes before it."""
    df = table(scattered(), "income").assign(insured=["1. Yes", "2. No", "2. No"] * 10)
    insured = next(c for c in infer_schema(df).columns if c.name == "insured")
    assert insured.levels == ("2. No", "1. Yes")


def test_a_family_of_one_kind_leaves_a_tables_ids_out_too():
    """``family="diagonal"`` (every column real) on an R export: its row names are still
    an identifier, left out and said; an array's columns are all data."""
    from dpclust.families import DiagonalGaussian

    df = table(np.arange(1, N_ROWS + 1), name="rownames")
    data = DiagonalGaussian().validate(df)
    assert [c.name for c in data.schema.columns] == ["height"]
    assert data.schema.dropped == (("rownames", NAMED),)
    assert DiagonalGaussian().validate(df.to_numpy()).real.shape == (N_ROWS, 2)
