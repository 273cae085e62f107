"""Tests of dpclust.rankings: the Rankings container, check_rankings, the CSV and PrefLib
loaders, and the bundled Dublin West ballots.  One clear DataError per kind of bad input."""

import gzip
import warnings

import numpy as np
import pandas as pd
import pytest

from dpclust.utils.checks import DataError
from dpclust.datasets import load_dublin_west
from dpclust.io import read_preflib, read_rankings_csv
from dpclust.rankings import Rankings, check_rankings


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# Rankings


def test_rankings_constructor_lengths_padding_and_read_only():
    orders = np.array([[2, 0, -1, -1], [1, -1, -1, -1], [0, 3, 1, -1]])
    r = Rankings(orders, n_items=5)
    assert r.orders.dtype == np.int64 and r.lengths.dtype == np.int64
    assert r.shape == (3, 3) and len(r) == 3 and r.max_length == 3  # trimmed to the longest
    assert r.lengths.tolist() == [2, 1, 3]
    assert r.to_lists() == [[2, 0], [1], [0, 3, 1]]
    assert r.items is None and r.n_items == 5
    assert not r.orders.flags.writeable and not r.lengths.flags.writeable
    orders[0, 0] = 4  # the input was copied
    assert r.orders[0, 0] == 2
    assert repr(r) == "Rankings(n=3, n_items=5, max length=3)"


def test_full_rankings_are_stored_without_their_implied_last_item():
    r = Rankings([[2, 0, 1], [1, -1, -1]], n_items=3, items=["a", "b", "c"])
    assert r.lengths.tolist() == [2, 1]
    assert r.shape == (2, 2)
    assert r.to_lists() == [["c", "a"], ["b"]]
    assert r.to_lists(names=False) == [[2, 0], [1]]
    r = check_rankings([["x", "y"], ["y"]])  # two items: a full ranking has length 1
    assert r.lengths.tolist() == [1, 1] and r.to_lists() == [["x"], ["y"]]


def test_array_protocol_hashing_iteration_and_item_name():
    r = Rankings([[1, 0], [2, -1]], n_items=4, items=["a", "b", "c", "d"])
    arr = np.asarray(r)
    assert arr is r.orders
    np.testing.assert_array_equal(np.asarray(r, dtype=np.float64), [[1, 0], [2, -1]])
    assert np.ascontiguousarray(r).tobytes() == r.orders.tobytes()
    assert [row.tolist() for row in r] == [[1, 0], [2]]
    assert r[1].tolist() == [2]
    assert r.item_name(3) == "d"
    assert Rankings([[1, 0]], n_items=2).item_name(1) == "1"
    with pytest.raises(IndexError):
        r.item_name(4)


def test_subsets_keep_items_and_trim_padding():
    r = check_rankings([["a", "b", "c"], ["b"], ["c", "a"], ["d", "a", "b"]])
    assert r.items == ("a", "b", "c", "d")
    for sub in (r[[1, 2]], r[np.array([False, True, True, False])], r[1:3]):
        assert isinstance(sub, Rankings)
        assert sub.items == r.items and sub.n_items == 4
        assert sub.shape == (2, 2)
        assert sub.to_lists() == [["b"], ["c", "a"]]
    assert r[::-1].to_lists()[0] == ["d", "a", "b"]
    empty = r[np.zeros(4, dtype=bool)]
    assert len(empty) == 0 and empty.shape == (0, 0)


# --------------------------------------------------------------------------------------------
# check_rankings: accepted forms


def test_names_round_trip_items_sorted_by_default():
    lists = [["pear", "apple"], ["fig"], ["apple", "fig", "kiwi"]]
    r = check_rankings(lists)
    assert r.items == ("apple", "fig", "kiwi", "pear")
    assert r.to_lists() == lists
    assert r.orders.tolist() == [[3, 0, -1], [1, -1, -1], [0, 1, 2]]
    again = check_rankings(r.to_lists(), items=r.items)
    np.testing.assert_array_equal(again.orders, r.orders)


def test_names_with_explicit_items_keep_unranked_items_and_their_order():
    r = check_rankings([["b", "a"], ["c"]], items=["c", "b", "a", "z"])
    assert r.n_items == 4 and r.orders.tolist() == [[1, 2], [0, -1]]
    assert r.to_lists() == [["b", "a"], ["c"]]


def test_ids_padded_ragged_dataframe_and_float_forms_agree():
    expected = [[2, 0, -1], [1, -1, -1], [0, 1, 3]]
    forms = [
        np.array(expected),
        expected,
        [[2, 0], [1], [0, 1, 3]],
        ((2, 0), (1,), (0, 1, 3)),
        [np.array([2, 0]), [np.int32(1)], [0, 1, 3]],
        pd.DataFrame(expected),
        np.array(expected, dtype=np.float64),
        np.array(expected, dtype=np.int32),
    ]
    for X in forms:
        r = check_rankings(X)
        assert r.n_items == 4
        assert r.orders.tolist() == expected


def test_n_items_and_items_with_ids():
    r = check_rankings([[0, 1]], n_items=6)
    assert r.n_items == 6 and r.items is None
    r = check_rankings([[0, 1]], items=["a", "b", "c"])
    assert r.n_items == 3 and r.to_lists() == [["a", "b"]]


def test_names_in_an_array_or_dataframe_with_empty_padding():
    X = pd.DataFrame([["a", "b", None], ["c", np.nan, None], ["b", "", ""]])
    r = check_rankings(X)
    assert r.to_lists() == [["a", "b"], ["c"], ["b"]]
    r = check_rankings(np.array([["a", "b"], ["c", ""]]))
    assert r.to_lists() == [["a", "b"], ["c"]]


def test_rankings_rechecked_against_n_items_and_items():
    r = check_rankings([[0, 1], [2]])
    assert check_rankings(r) is r
    assert check_rankings(r, n_items=3) is r
    assert check_rankings(r, n_items=5).n_items == 5
    with pytest.raises(DataError, match="X has 3 items, more than n_items=2"):
        check_rankings(r, n_items=2)
    named = check_rankings([["a", "b"], ["c"]])
    remapped = check_rankings(named, items=["c", "b", "a"])
    assert remapped.orders.tolist() == [[2, 1], [0, -1]]
    assert remapped.to_lists() == named.to_lists()
    with pytest.raises(DataError, match="X has the item 'c', which is not in items"):
        check_rankings(named, items=["a", "b", "d"])


def test_speed_sanity_1e5_rankings_of_length_10():
    rng = np.random.default_rng(0)
    orders = np.argsort(rng.random((100_000, 30)), axis=1)[:, :10]
    r = check_rankings(orders)
    assert r.shape == (100_000, 10) and r.n_items <= 30
    names = [f"item{k}" for k in range(30)]
    lists = [[names[j] for j in row] for row in orders[:20_000].tolist()]
    assert len(check_rankings(lists, items=names)) == 20_000


# --------------------------------------------------------------------------------------------
# check_rankings: errors


@pytest.mark.parametrize(
    "X, kwargs, message",
    [
        ([], {}, "X is empty: it holds no rankings"),
        (np.empty((0, 3), dtype=int), {}, "X is empty"),
        ([[0, 1], [1], []], {}, "ranking 2 is empty"),
        (np.array([[0, 1], [-1, -1]]), {}, "ranking 1 is empty"),
        ([["A", "B"], ["A"], ["C"], ["A", "B", "C", "D", "B"]], {},
         r"ranking 3 lists item 'B' twice \(positions 1 and 4\)"),
        ([[0, 1], [2, 1, 0, 3, 1]], {}, r"ranking 1 lists item 1 twice \(positions 1 and 4\)"),
        ([[0, 1], [0, 9]], {"n_items": 5}, "ranking 1 has an unknown item 9 at position 1"),
        ([[0, -3]], {}, "ranking 0 has an unknown item -3 at position 1"),
        ([[0, 5]], {"items": ["a", "b", "c"]}, "ranking 0 has an unknown item 5"),
        ([["A", "Z"]], {"items": ["A", "B"]},
         "ranking 0 has an unknown item 'Z' at position 1; the items are 'A', 'B'"),
        ([[1, 0], [0, 1], [0, 1], [0, 1], [0, 1], [0, -1, 1]], {},
         "ranking 5 has an item after the padding -1 at position 2"),
        (np.array([[0, 1.0], [0, np.nan]]), {}, r"ranking 1 has a missing value \(NaN\)"),
        ([[0, 1], [0, 1.5]], {}, "ranking 1 has a non-integer item id 1.5 at position 1"),
        (np.array([[0, 2.5]]), {}, "ranking 0 has a non-integer item id 2.5"),
        ([[0, None]], {}, r"ranking 0 has a missing value \(None\)"),
        (np.array([0, 1, 2]), {}, "X must be 2-D, one ranking per row, but it is a 1-D array"),
        (np.zeros((2, 2, 2), dtype=int), {}, "but it is a 3-D array of shape"),
        ([0, 1, 2], {}, r"ranking 0 is 0 \(wrap a single ranking as \[ranking\]\)"),
        (["abc"], {}, "ranking 0 is the string 'abc'"),
        ("abc", {}, "X is a single string"),
        (np.array([[True, False]]), {}, "X holds booleans"),
        ([[1, True]], {}, "ranking 0 has the boolean True at position 1"),
        ([["A", "B"], [0, 1]], {}, "X mixes item names and item ids: ranking 1 has the id 0"),
        ([["A", "B"]], {"n_items": 3},
         "X holds item names but only n_items=3 was given; pass items="),
        ([[0, 1]], {"items": ["a", "b", "c"], "n_items": 4},
         "items has 3 names, but n_items is 4"),
        ([[0, 1]], {"items": ["a", "b", "a"]}, "items lists 'a' twice"),
        ([[0]], {}, "X lists only item 0; at least 2 items are needed"),
        ([["a"], ["a"]], {}, "X names 1 distinct item"),
        ([[0, 1]], {"n_items": 1}, "n_items must be at least 2"),
        ([[0, [1]]], {}, r"ranking 0 has \[1\] at position 1, which is not an item"),
    ],
)
def test_check_rankings_errors(X, kwargs, message):
    with pytest.raises(DataError, match=message):
        check_rankings(X, **kwargs)


def test_error_messages_use_what():
    with pytest.raises(DataError, match="ranking 1 of train is empty"):
        check_rankings([[0, 1], []], what="train")
    with pytest.raises(DataError, match="train is empty"):
        check_rankings([], what="train")


def test_constructor_errors():
    with pytest.raises(DataError, match="orders holds item names"):
        Rankings([["a", "b"]], n_items=2)
    with pytest.raises(DataError, match=r"ranking 0 of orders lists item 1 twice \(positions 0 and 1\)"):
        Rankings([[1, 1]], n_items=3)
    with pytest.raises(DataError, match="ranking 0 of orders has an unknown item 3"):
        Rankings([[0, 3]], n_items=3)
    with pytest.raises(DataError, match="items has 2 names, but n_items is 3"):
        Rankings([[0, 1]], n_items=3, items=["a", "b"])
    with pytest.raises(TypeError, match="n_items must be an int"):
        Rankings([[0, 1]], n_items=2.0)


# --------------------------------------------------------------------------------------------
# CSV


DUBLIN_STYLE = """Rank_1,Rank_2,Rank_3,Rank_4
3,1,0,0
2,0,0,0
4,3,1,2
1,4,2,0
"""


def test_csv_dublin_style_ids_with_zero_marker_and_header(tmp_path):
    path = write(tmp_path / "ballots.csv", DUBLIN_STYLE)
    r = read_rankings_csv(path, missing=("0",), index_base=1)
    assert r.n_items == 4 and r.items is None
    assert r.to_lists() == [[2, 0], [1], [3, 2, 0], [0, 3, 1]]  # the full ballot is cut to 3
    named = read_rankings_csv(path, missing="0", index_base=1, items=["a", "b", "c", "d"])
    assert named.to_lists()[0] == ["c", "a"]
    assert read_rankings_csv(path, missing=("0",), index_base=1, n_items=6).n_items == 6
    gz = tmp_path / "ballots.csv.gz"
    with gzip.open(gz, "wt") as f:
        f.write(DUBLIN_STYLE)
    np.testing.assert_array_equal(
        read_rankings_csv(gz, missing=("0",), index_base=1).orders, r.orders)


def test_csv_names_without_header_ragged_rows_and_comments(tmp_path):
    path = write(tmp_path / "fruit.csv", "# favourite fruit\npear,apple\n\nfig\r\napple,fig,kiwi,\n")
    r = read_rankings_csv(path)
    assert r.items == ("apple", "fig", "kiwi", "pear")
    assert r.to_lists() == [["pear", "apple"], ["fig"], ["apple", "fig", "kiwi"]]
    r = read_rankings_csv(path, items=["kiwi", "fig", "apple", "pear", "plum"])
    assert r.n_items == 5 and r.to_lists()[0] == ["pear", "apple"]


def test_csv_ids_base_is_inferred_and_no_item_invented(tmp_path):
    """Ids 1..n with no 0 are read as 1-based (with a warning); a file that uses 0 is
    0-based; either way no item nobody ranked appears unless items= or n_items= says so."""
    path = write(tmp_path / "one.csv", "1,3,2\n2,1\n3\n")
    with pytest.warns(UserWarning, match="no ranking uses the item id 0"):
        r = read_rankings_csv(path)
    assert r.n_items == 3 and r.items == ("1", "2", "3")
    assert r.to_lists() == [["1", "3"], ["2", "1"], ["3"]]  # the last of 3 items is implied
    path = write(tmp_path / "zero.csv", "0,2\n1,0\n")
    r = read_rankings_csv(path)
    assert r.n_items == 3 and r.items == ("0", "1", "2")
    gap = write(tmp_path / "gap.csv", "1,4\n2,1\n")
    with pytest.warns(UserWarning), pytest.raises(DataError, match="the id 3; to keep"):
        read_rankings_csv(gap)
    assert read_rankings_csv(gap, index_base=1, n_items=4).n_items == 4
    assert read_rankings_csv(gap, index_base=1, items=list("abcd")).items == tuple("abcd")


def test_csv_header_options(tmp_path):
    path = write(tmp_path / "h.csv", "first,second\npear,apple\nfig,pear\n")
    assert len(read_rankings_csv(path)) == 3  # a header of words above names is not detected
    r = read_rankings_csv(path, header=True)
    assert r.to_lists() == [["pear", "apple"], ["fig", "pear"]]
    path = write(tmp_path / "ids.csv", "best,next\n0,1\n2,0\n")
    assert read_rankings_csv(path).to_lists() == [["0", "1"], ["2", "0"]]  # words above ids
    path = write(tmp_path / "ranks.csv", "rank 1;rank 2\npear;apple\nfig\n")
    assert read_rankings_csv(path).to_lists() == [["pear", "apple"], ["fig"]]
    path = write(tmp_path / "no.csv", "0,1\n1,0\n")
    assert len(read_rankings_csv(path, header=False)) == 2
    assert len(read_rankings_csv(path, header=True)) == 1
    with pytest.raises(ValueError, match="header must be"):
        read_rankings_csv(path, header="yes")


@pytest.mark.parametrize(
    "text, kwargs, message",
    [
        ("Rank_1,Rank_2,Rank_3\n1,2,0\n2,0,3\n", {"missing": ("0",), "index_base": 1},
         r"x.csv: line 3: the item '3' in column 3 follows the missing marker '0' in column 2"),
        ("a,b,c\nb,,c\n", {}, "x.csv: line 2: the item 'c' in column 3 follows an empty cell"),
        ("Rank_1,Rank_2,Rank_3\n1,2,3\n2,0,0\n", {"index_base": 1},
         (r"x.csv: line 3 ends with '0' repeated \(columns 2 and 3\); if '0' marks an "
          r"unranked position, pass missing=\('0',\)")),
        ("1,2\n0,1\n", {"index_base": 1},
         r"x.csv: line 2: item id 0 in column 1 is below index_base=1 \(if 0 marks"),
        ("1,2,3\n2,1,2\n", {"index_base": 1},
         r"x.csv: line 2 lists item 2 twice \(columns 1 and 3\)"),
        ("1,2,4\n2,1\n", {"index_base": 1},
         r"ids run from 1 to 4, but no ranking uses the id 3; to keep items that nobody "),
        ("1,2,3\n2,1\n", {"index_base": 0},
         r"no ranking uses the id 0 \(ids that start at 1: pass index_base=1\)"),
        ("b,a\nc,b,c\n", {}, r"x.csv: line 2 lists item 'c' twice \(columns 1 and 3\)"),
        ("1,2\n3,5\n", {"index_base": 1, "n_items": 4},
         "x.csv: line 2 has an unknown item 5 at column 2; ids run from 1 to 4"),
        ("a,b\nc,zed\n", {"items": ["a", "b", "c"]},
         "x.csv: line 2: unknown item 'zed' in column 2; the items are 'a', 'b', 'c'"),
        ("a,b\n1,b\n", {}, ("x.csv mixes item names and item ids: line 2 has the id '1' "
                             "in column 1, while line 1 has the name 'a'")),
        ("a,b\n,,\n", {}, "x.csv: line 2 is an empty ranking"),
        ("a,b\n", {"n_items": 3}, "x.csv holds item names but only n_items=3 was given"),
        ("Rank_1,Rank_2\n", {}, "x.csv has a header row but no rankings"),
        ("# nothing\n\n", {}, "x.csv contains no data"),
    ],
)
def test_csv_errors(tmp_path, text, kwargs, message):
    path = write(tmp_path / "x.csv", text)
    with pytest.raises(DataError, match=message):
        read_rankings_csv(path, **kwargs)


def test_csv_file_errors(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_rankings_csv(tmp_path / "missing.csv")
    with pytest.raises(DataError, match=r"is empty \(0 bytes\)"):
        read_rankings_csv(write(tmp_path / "e.csv", ""))
    np.save(tmp_path / "a.npy", np.zeros((2, 2)))
    with pytest.raises(DataError, match="rankings are read from a text table"):
        read_rankings_csv(tmp_path / "a.npy")


# --------------------------------------------------------------------------------------------
# PrefLib


CURRENT_SOI = """# FILE NAME: 00001-00000001.soi
# TITLE: Test election
# DATA TYPE: soi
# NUMBER ALTERNATIVES: 4
# NUMBER VOTERS: 6
# NUMBER UNIQUE ORDERS: 3
# ALTERNATIVE NAME 1: Joan Burton
# ALTERNATIVE NAME 2: Leo Varadkar
# ALTERNATIVE NAME 3: Joe Higgins
# ALTERNATIVE NAME 4: Brian Lenihan
3: 1,3,2
2: 2
1: 4,3,1,2
"""

OLD_SOI = """4
1,Joan Burton
2,Leo Varadkar
3,Joe Higgins
4,Brian Lenihan
6,6,3
3,1,3,2
2,2
1,4,3,1,2
"""


@pytest.mark.parametrize("text, suffix", [(CURRENT_SOI, ".soi"), (OLD_SOI, ".soi"),
                                          (CURRENT_SOI, ".soi.gz")])
def test_preflib_soi_both_formats_counts_and_names(tmp_path, text, suffix):
    path = tmp_path / f"e{suffix}"
    if suffix.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        write(path, text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = read_preflib(path)
    assert r.n_items == 4
    assert r.items == ("Joan Burton", "Leo Varadkar", "Joe Higgins", "Brian Lenihan")
    assert r.to_lists(names=False) == [[0, 2, 1]] * 3 + [[1]] * 2 + [[3, 2, 0]]
    assert r.lengths.tolist() == [3, 3, 3, 1, 1, 3]  # the complete order is cut to 3


CURRENT_TOI = """# FILE NAME: x.toi
# DATA TYPE: toi
# NUMBER ALTERNATIVES: 4
# ALTERNATIVE NAME 1: A
# ALTERNATIVE NAME 2: B
# ALTERNATIVE NAME 3: C
# ALTERNATIVE NAME 4: D
2: 1,{2,3}
4: {4,1},2
1: 3,4,{1,2}
5: 2,{1},4
"""

OLD_TOI = """4
1,A
2,B
3,C
4,D
12,12,4
2,1,{2,3}
4,{4,1},2
1,3,4,{1,2}
5,2,{1},4
"""


@pytest.mark.parametrize("text", [CURRENT_TOI, OLD_TOI])
def test_preflib_toi_ties_cut_or_dropped_with_a_warning(tmp_path, text):
    path = write(tmp_path / "x.toi", text)
    with pytest.warns(UserWarning, match=r"2 ranking\(s\) \(1 line\(s\)\) with a tie below the "
                                         r"top were cut.*4 ranking\(s\) \(1 line\(s\)\) that "
                                         r"begin with a tie were dropped"):
        r = read_preflib(path)
    # 1,{2,3} -> [1]; {4,1},2 dropped; 3,4,{1,2} ties the last two: same as unranked, not
    # counted as a cut; 2,{1},4: a tie of one is a plain rank.
    assert r.to_lists() == [["A"]] * 2 + [["C", "D"]] + [["B", "A", "D"]] * 5
    assert len(r) == 8


def test_preflib_without_names_and_repeated_names(tmp_path):
    path = write(tmp_path / "a.soc", "# NUMBER ALTERNATIVES: 3\n1: 1,2,3\n2: 3,1,2\n")
    r = read_preflib(path)
    assert r.items is None and r.to_lists() == [[0, 1], [2, 0], [2, 0]]
    path = write(tmp_path / "b.soi", "3\n1,X\n2,X\n3,Y\n1,1,1\n1,2,1\n")
    assert read_preflib(path).items == ("X", "X (2)", "Y")


@pytest.mark.parametrize(
    "text, message",
    [
        ("# NUMBER ALTERNATIVES: 3\n1: 1,4\n", "x.soi: line 2: alternative 4 does not exist"),
        ("# NUMBER ALTERNATIVES: 3\n1: 1,2\n2: 2,1,2\n", "x.soi: line 3 lists alternative 2 twice"),
        ("# NUMBER ALTERNATIVES: 3\n0: 1,2\n", "x.soi: line 2: the count '0' is not a positive"),
        ("# NUMBER ALTERNATIVES: 3\n1: 1,x\n", "x.soi: line 2: 'x' is not an alternative"),
        ("# NUMBER ALTERNATIVES: 3\n1: 1,,2\n", "x.soi: line 2: an empty entry is not an"),
        ("# NUMBER ALTERNATIVES: 3\n1: 1,{2,3\n", "x.soi: line 2: a '{' is never closed"),
        ("# NUMBER ALTERNATIVES: 3\n1:\n", "x.soi: line 2: the order is empty"),
        ("# NUMBER ALTERNATIVES: 3\n1 1,2\n", "x.soi: line 2: expected 'count: order'"),
        ("# TITLE: no size\n1: 1,2\n", "has no '# NUMBER ALTERNATIVES: n' line"),
        ("# NUMBER ALTERNATIVES: 3\n", "x.soi holds no orders"),
        ("3\n1,A\n2,B\n", "x.soi ends before its 3 alternative lines"),
        ("3\n1,A\n2,B\n3,C\n1,1\n1,1,2\n", "x.soi: line 5: expected the line 'voters,sum,unique'"),
        ("2\n1,A\nB\n1,1,1\n1,1,2\n", "x.soi: line 3: expected an alternative line 'id,name'"),
        ("hello\n", "x.soi: line 1: expected the number of alternatives"),
        ("# NUMBER ALTERNATIVES: 3\n1: {1,2},3\n", "every order begins with a tie"),
    ],
)
def test_preflib_errors(tmp_path, text, message):
    path = write(tmp_path / "x.soi", text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(DataError, match=message):
            read_preflib(path)


def test_preflib_file_type(tmp_path):
    with pytest.raises(DataError, match="unsupported PrefLib file type '.csv'"):
        read_preflib(write(tmp_path / "x.csv", "1,2\n"))


# --------------------------------------------------------------------------------------------
# bundled data


def test_load_dublin_west():
    r = load_dublin_west()
    assert isinstance(r, Rankings)
    assert len(r) == 29_988 and r.n_items == 9 and r.shape == (29_988, 8)
    assert r.items[0] == "Robert Bonnie (G.P.)" and r.items[8] == "Sheila Terry (F.G.)"
    assert len(set(r.items)) == 9
    counts = dict(zip(*np.unique(r.lengths, return_counts=True), strict=True))
    assert counts == {1: 1_743, 2: 3_243, 3: 8_753, 4: 5_157, 5: 3_389, 6: 1_866,
                      7: 1_027, 8: 4_810}
    assert r.to_lists()[0] == ["Tom Morrissey (P.D.)", "Sheila Terry (F.G.)",
                               "Joe Higgins (S.P.)", "Joan Burton (Lab)",
                               "John Thomas Smyth (C.C. Csp)"]


def test_the_estimate_keeps_identical_ballots_together():
    """Identical ballots are exchangeable: the draws may seat them apart, the point estimate
    (VI with a = 0.5 for rankings) never does."""
    from dpclust import DPMixture

    X = load_dublin_west()[np.arange(400)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(family="plackett-luce", n_chains=1, n_iter=60, random_state=0,
                          progress=False, store_labels=True).fit(X)
    first, inverse = X.distinct()
    repeated = np.flatnonzero(np.bincount(inverse) > 1)
    draws = np.asarray(model.trace_.labels)[0]
    apart = sum(len(np.unique(d[inverse == g])) > 1 for d in draws for g in repeated)
    assert apart > 0  # the draws do seat some identical ballots apart
    for g in repeated:
        assert len(np.unique(model.labels_[inverse == g])) == 1
