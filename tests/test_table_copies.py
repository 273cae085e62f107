"""Columns that copy an earlier one (:mod:`dpclust.tables.copies`): a transform of a column of
numbers (``ISLR::Wage``'s ``wage`` beside ``logwage``), a label beside its code, a 0/1
column beside its complement are left out, the first of each kept; columns that differ in
their holes, map many values to one, pair real numbers in another order, or are few are
kept."""

import numpy as np
import pandas as pd

from dpclust.families import choose_family
from dpclust.tables import columns_left_out, infer_schema
from dpclust.tables.copies import COPY_MIN_ROWS, find_copies

N_ROWS = 60


def wage_like(n=N_ROWS, seed=0) -> pd.DataFrame:
    """A real column, its exponential, a label with its code and a 0/1 dummy of it."""
    rng = np.random.default_rng(seed)
    log_wage = rng.normal(4.6, 0.3, size=n)
    sector = rng.choice(["1. Industrial", "2. Information"], size=n)
    grade = rng.choice(["low", "mid", "high"], size=n)
    return pd.DataFrame({"age": rng.integers(18, 80, size=n), "logwage": log_wage,
                         "grade": grade, "sector": sector, "wage": np.exp(log_wage),
                         "grade_code": pd.Series(grade).map({"low": 1, "mid": 2, "high": 3}),
                         "information": (sector == "2. Information").astype(int)})


def kinds_of(schema) -> dict:
    return {c.name: c.kind for c in schema.columns}


def test_a_transform_a_code_and_a_dummy_are_left_out_the_first_kept():
    schema = infer_schema(wage_like())
    assert kinds_of(schema) == {"age": "gaussian", "logwage": "gaussian",
                                "grade": "categorical", "sector": "bernoulli"}
    assert schema.dropped == (
        ("wage", "a copy of 'logwage': a transform of it (its values follow that column's "
                 "order one to one)"),
        ("grade_code", "a copy of 'grade': a recoding of it (its 3 values pair one to one "
                       "with that column's)"),
        ("information", "a copy of 'sector': a recoding of it (its 2 values pair one to one "
                        "with that column's)"))


def test_a_falling_transform_is_a_copy_and_a_kind_given_keeps_a_column():
    df = wage_like()[["logwage"]].assign(minus=lambda d: 10 - 2 * d.logwage)
    assert [name for name, _ in infer_schema(df).dropped] == ["minus"]
    assert kinds_of(infer_schema(df, kinds={"minus": "gaussian"})) == {
        "logwage": "gaussian", "minus": "gaussian"}


def test_the_same_values_twice():
    df = wage_like()[["logwage"]].assign(again=lambda d: d.logwage.copy())
    assert infer_schema(df).dropped == (
        ("again", "a copy of 'logwage' (the same values on every row)"),)


def test_real_numbers_in_another_order_are_kept():
    """Each city's statistics repeated on its rows pair one to one, but place the cities
    in different orders: as real numbers each says something the other does not."""
    rng = np.random.default_rng(4)
    city = rng.integers(0, 8, size=N_ROWS)
    population = np.array([5.1, 0.3, 2.2, 9.0, 1.1, 4.4, 7.2, 0.8])[city]
    income = np.array([41.0, 55.5, 38.2, 61.0, 47.3, 35.0, 52.4, 44.1])[city]
    df = pd.DataFrame({"population": population, "income": income,
                       "city": np.array(list("abcdefgh"))[city]})
    schema = infer_schema(df)
    assert [c.name for c in schema.columns] == ["population", "income"]
    assert schema.dropped == (
        ("city", "a copy of 'population': a recoding of it (its 8 values pair one to one "
                 "with that column's)"),)


def test_columns_that_are_not_copies_are_kept():
    rng = np.random.default_rng(1)
    x = rng.normal(size=N_ROWS)
    region = rng.choice(list("abcdef"), size=N_ROWS)
    holed = x.copy()
    holed[3] = np.nan
    df = pd.DataFrame({
        "x": x,
        "y": rng.normal(size=N_ROWS),  # distinct values pair one to one, in no order
        "square": x ** 2,  # a function of x, but not one to one (x and -x meet)
        "holed": holed + 1,  # x + 1 with a hole where x has none
        "region": region,
        "zone": pd.Series(region).map({"a": "n", "b": "n", "c": "s", "d": "s", "e": "e",
                                       "f": "w"}),  # many regions to one zone
    })
    schema = infer_schema(df)
    assert schema.dropped == ()
    assert columns_left_out(df.drop(columns=["region", "zone"])) == []


def test_small_tables_are_not_compared():
    df = wage_like(n=COPY_MIN_ROWS)
    assert infer_schema(df).dropped == ()
    # ``grade_code`` on 21 rows is real numbers (too few rows for 3 levels), in no order
    assert [n for n, _ in infer_schema(wage_like(n=COPY_MIN_ROWS + 1)).dropped] == [
        "wage", "information"]


def test_copies_of_copies_name_the_first_column():
    codes = [np.array([0, 1, 1, 0] * 10), np.array([0, 1, 1, 0] * 10),
             np.array([1, 0, 0, 1] * 10)]
    found = find_copies(["a", "b", "c"], codes, [None] * 3, coded=[True] * 3)
    assert list(found) == ["b", "c"] and all("'a'" in why for why in found.values())


def test_a_table_of_numbers_with_a_copy_is_read_a_column_at_a_time():
    """``auto`` on numbers with a copy picks the table family, which leaves the copy out;
    a plain Gaussian would read both, its clusters' covariance singular along the copy."""
    rng = np.random.default_rng(3)
    celsius = rng.normal(15, 8, size=N_ROWS)
    df = pd.DataFrame({"celsius": celsius, "rain": rng.gamma(2.0, size=N_ROWS),
                       "fahrenheit": 32 + 1.8 * celsius})
    assert choose_family(df.drop(columns="fahrenheit")).name == "gaussian"
    assert choose_family(df).name == "table"
    assert [name for name, _ in columns_left_out(df)] == ["fahrenheit"]


def test_dummies_of_a_column_of_categories_are_left_out_in_either_order():
    """``Stat2Data::LostLetter``'s ``DesMoines``, ``GrinnellTown`` … beside ``Location``,
    and a panel's year dummies written before the year: each marks one level of a column
    of categories, which says it already."""
    rng = np.random.default_rng(4)
    place = rng.choice(["DesMoines", "GrinnellTown", "GrinnellCampus"], size=N_ROWS)
    year = rng.choice([81, 82, 83, 84], size=N_ROWS)
    df = pd.DataFrame({"y82": (year == 82).astype(int), "place": place,
                       "returned": rng.integers(0, 2, size=N_ROWS), "year": year,
                       "desmoines": np.where(place == "DesMoines", "yes", "no"),
                       "not_town": (place != "GrinnellTown").astype(int)})
    schema = infer_schema(df)
    assert kinds_of(schema) == {"place": "categorical", "returned": "bernoulli",
                                "year": "categorical"}
    assert schema.dropped == tuple(
        (name, f"an indicator of one of the {m} levels of {of!r} (its value tells that "
               "level's rows from the others, which that column says already)")
        for name, m, of in (("y82", 4, "year"), ("desmoines", 3, "place"),
                            ("not_town", 3, "place")))
    # a kind given keeps a dummy
    assert "y82" in kinds_of(infer_schema(df, kinds={"y82": "bernoulli"}))


def test_a_yes_no_column_that_is_not_a_dummy_is_kept():
    """Kept: a yes/no column that takes both values within a level, one whose odd value is
    on fewer than five rows (a chance match with a level of that size), and one whose holes
    differ from the categories'."""
    from dpclust.tables.copies import INDICATOR_MIN_ROWS

    levels = np.repeat(["a", "b", "c"], N_ROWS // 3)
    odd = INDICATOR_MIN_ROWS - 1
    site = np.array(["z"] * odd + list(np.tile(["p", "q", "r"], N_ROWS))[:N_ROWS - odd])
    holed = (levels == "a").astype(float)
    holed[-1] = np.nan
    df = pd.DataFrame({"site": site, "group": levels, "mixed": np.tile([0, 1], N_ROWS // 2),
                       "rare": (site == "z").astype(int), "holed": holed})
    assert infer_schema(df).dropped == ()
    # one more row of that level, and the match is no longer left to chance
    site = np.array(["z"] * (odd + 1) + list(np.tile(["p", "q", "r"], N_ROWS))[:N_ROWS - odd - 1])
    more = df.assign(site=site, rare=(site == "z").astype(int))
    assert [name for name, _ in infer_schema(more).dropped] == ["rare"]
