"""Tests of dpclust.io: round trips for every format and one clear DataError per bad file."""

import gzip
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from dpclust.utils.checks import DataError
from dpclust.io import load_data, load_vocabulary, save_labels_csv

DATA = np.array([[1.5, -2.0, 3.0], [4.0, 5.25, -6.0], [7.0, 8.0, 9.5], [0.0, 1e-3, 2e5]])
COUNTS = np.array([[2, 0, 1, 0], [0, 0, 0, 0], [0, 3, 0, 1]])


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# round trips


@pytest.mark.parametrize(
    "sep, suffix", [(",", ".csv"), ("\t", ".tsv"), (" ", ".txt"), (",", ".txt")]
)
def test_text_round_trip_with_and_without_header(tmp_path, sep, suffix):
    df = pd.DataFrame(DATA, columns=["a", "b", "c"])
    with_header = tmp_path / f"h{suffix}"
    df.to_csv(with_header, sep=sep, index=False)
    X, meta = load_data(with_header)
    np.testing.assert_allclose(X, DATA)
    assert X.dtype == np.float64 and X.flags.c_contiguous
    assert meta["has_header"] is True
    assert meta["column_names"] == ["a", "b", "c"]
    assert (meta["n_samples"], meta["n_features"]) == (4, 3)
    assert meta["format"] == suffix[1:]
    assert meta["path"] == str(with_header)

    no_header = tmp_path / f"n{suffix}"
    np.savetxt(no_header, DATA, delimiter=sep)
    X, meta = load_data(no_header)
    np.testing.assert_allclose(X, DATA)
    assert meta["has_header"] is False
    assert meta["column_names"] is None


def test_header_override(tmp_path):
    path = write(tmp_path / "x.csv", "0,1\n1,2\n3,4\n")  # pandas-style numeric column names
    X, meta = load_data(path)
    assert X.shape == (3, 2) and not meta["has_header"]
    X, meta = load_data(path, header=True)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert meta["column_names"] == ["0", "1"]


def test_text_comments_blank_lines_crlf_quotes_gzip(tmp_path):
    path = write(tmp_path / "x.csv", '# made by hand\n\n"a","b"\r\n"1",2\r\n\r\n3,4\r\n')
    X, meta = load_data(path)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert meta["column_names"] == ["a", "b"]
    gz = tmp_path / "x.csv.gz"
    with gzip.open(gz, "wt") as f:
        f.write("a,b\n1,2\n3,4\n")
    X, meta = load_data(gz)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert meta["format"] == "csv"


def test_single_column_text(tmp_path):
    X, meta = load_data(write(tmp_path / "x.txt", "value\n1\n2\n3\n"))
    assert X.shape == (3, 1) and meta["column_names"] == ["value"]


def test_column_selection(tmp_path):
    path = write(tmp_path / "x.csv", "id,a,b\nu,1,2\nv,3,4\n")
    X, meta = load_data(path, column=["b", "a"])
    np.testing.assert_array_equal(X, [[2, 1], [4, 3]])
    assert meta["column_names"] == ["b", "a"]
    X, _ = load_data(path, column=[1])
    np.testing.assert_array_equal(X, [[1], [3]])
    X, _ = load_data(path, column="a")
    assert X.shape == (2, 1)
    with pytest.raises(DataError, match="no column named 'z'"):
        load_data(path, column=["z"])
    with pytest.raises(DataError, match="out of range"):
        load_data(path, column=[5])
    with pytest.raises(DataError, match="line 2, column 1 \\('id'\\).*'u'"):
        load_data(path)
    no_header = write(tmp_path / "y.csv", "1,2\n3,4\n")
    with pytest.raises(DataError, match="by 0-based index"):
        load_data(no_header, column=["a"])


def test_npy_round_trip(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, DATA.astype(np.float32))
    X, meta = load_data(path)
    np.testing.assert_allclose(X, DATA, rtol=1e-6)
    assert X.dtype == np.float64
    assert meta["format"] == "npy" and meta["column_names"] is None
    X, _ = load_data(path, column=[0, 2])
    assert X.shape == (4, 2)


def test_npz_sparse_round_trip(tmp_path):
    path = tmp_path / "x.npz"
    sp.save_npz(path, sp.csr_matrix(COUNTS.astype(np.int32)))
    X, meta = load_data(path)
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64 and X.has_canonical_format
    np.testing.assert_array_equal(X.toarray(), COUNTS)
    assert meta["format"] == "npz" and (meta["n_samples"], meta["n_features"]) == (3, 4)
    sp.save_npz(tmp_path / "c.npz", sp.coo_matrix(COUNTS))
    X, _ = load_data(tmp_path / "c.npz", kind="counts")
    np.testing.assert_array_equal(X.toarray(), COUNTS)


def test_npz_single_array_round_trip(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, data=DATA)
    X, _ = load_data(path)
    np.testing.assert_array_equal(X, DATA)
    np.savez(path, a=DATA, b=DATA)
    with pytest.raises(DataError, match="2 arrays"):
        load_data(path)


def test_parquet_round_trip(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "a": DATA[:, 0],
            "b": DATA[:, 1].astype(np.float32),
            "n": np.arange(4),
            "flag": [True, False, True, False],
        }
    )
    path = tmp_path / "x.parquet"
    pq.write_table(table, path)
    X, meta = load_data(path)
    assert X.shape == (4, 4)
    np.testing.assert_allclose(X[:, 0], DATA[:, 0])
    np.testing.assert_array_equal(X[:, 2], np.arange(4))
    assert meta["column_names"] == ["a", "b", "n", "flag"] and meta["format"] == "parquet"
    X, meta = load_data(path, column=["n", "a"])
    np.testing.assert_array_equal(X[:, 0], np.arange(4))
    assert meta["column_names"] == ["n", "a"]


def test_parquet_from_pandas_skips_index(tmp_path):
    pytest.importorskip("pyarrow")
    df = pd.DataFrame(DATA, columns=["a", "b", "c"], index=[10, 11, 12, 13])
    path = tmp_path / "x.pq"
    df.to_parquet(path)
    X, meta = load_data(path)
    np.testing.assert_array_equal(X, DATA)
    assert meta["column_names"] == ["a", "b", "c"]


def test_parquet_errors(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"a": [1.0, 2.0], "name": ["u", "v"]}), path)
    with pytest.raises(DataError, match="non-numeric column 'name'"):
        load_data(path)
    X, _ = load_data(path, column=["a"])
    assert X.shape == (2, 1)
    pq.write_table(pa.table({"a": [1.0, None, 3.0]}), path)
    with pytest.raises(DataError, match="'a' has 1 missing"):
        load_data(path)
    pq.write_table(pa.table({"a": [1.0, np.nan]}), path)
    with pytest.raises(DataError, match="NaN"):
        load_data(path)
    write(path, "not parquet at all")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        load_data(path)


def test_parquet_missing_pyarrow(tmp_path, monkeypatch):
    path = write(tmp_path / "x.parquet", "whatever")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DataError, match=r"pip install dpclust\[parquet\]"):
        load_data(path)


# --------------------------------------------------------------------------------------------
# bag of words


DOCWORD = """3
5
6
1 1 2
1 3 1
2 2 4
2 5 1
3 1 1
3 4 7
"""
DOCWORD_DENSE = np.array([[2, 0, 1, 0, 0], [0, 4, 0, 0, 1], [1, 0, 0, 7, 0]])


def test_docword_by_name_and_gzip(tmp_path):
    path = write(tmp_path / "docword.tiny.txt", DOCWORD)
    X, meta = load_data(path)
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64 and X.has_canonical_format
    np.testing.assert_array_equal(X.toarray(), DOCWORD_DENSE)
    assert meta["format"] == "docword" and (meta["n_samples"], meta["n_features"]) == (3, 5)
    gz = tmp_path / "docword.tiny.txt.gz"
    with gzip.open(gz, "wt") as f:
        f.write(DOCWORD)
    X, _ = load_data(gz)
    np.testing.assert_array_equal(X.toarray(), DOCWORD_DENSE)


def test_docword_by_content(tmp_path):
    path = write(tmp_path / "corpus.txt", DOCWORD)
    X, meta = load_data(path, kind="counts")
    np.testing.assert_array_equal(X.toarray(), DOCWORD_DENSE)
    X, meta = load_data(path)
    assert meta["format"] == "docword"
    with pytest.raises(DataError, match="kind='counts'"):
        load_data(path, kind="dense")


def test_docword_empty_document_allowed(tmp_path):
    path = write(tmp_path / "docword.txt", "3\n2\n2\n1 1 1\n3 2 5\n")
    X, _ = load_data(path)
    np.testing.assert_array_equal(X.toarray(), [[1, 0], [0, 0], [0, 5]])


@pytest.mark.parametrize(
    "text, message",
    [
        ("3\n5\n7\n" + DOCWORD.split("\n", 3)[3], "NNZ = 7, but 6"),
        ("3\n5\n1\n4 1 1\n", "line 4: document id 4 is out of range 1..3"),
        ("3\n5\n1\n1 6 1\n", "line 4: word id 6 is out of range 1..5"),
        ("3\n5\n1\n1 0 1\n", "word id 0 is out of range"),
        ("3\n5\n1\n1 1 -2\n", "line 4: negative count -2"),
        ("3\n5\n1\n1 1 2.5\n", "line 4 should be three integers"),
        ("3\n5\n2\n1 1 2\n1 1\n", "line 5 should be three integers"),
        ("3\nfive\n1\n1 1 1\n", "line 2 should hold W"),
        ("3\n5\n", "found only 2"),
    ],
)
def test_docword_errors(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        load_data(write(tmp_path / "docword.bad.txt", text))


def test_dense_counts_table_as_counts(tmp_path):
    path = tmp_path / "x.csv"
    pd.DataFrame(COUNTS, columns=list("wxyz")).to_csv(path, index=False)
    X, meta = load_data(path, kind="counts")
    assert isinstance(X, sp.csr_matrix)
    np.testing.assert_array_equal(X.toarray(), COUNTS)
    assert meta["column_names"] == list("wxyz")
    write(path, "a,b\n1,2\n3,-1\n")
    with pytest.raises(DataError, match="negative"):
        load_data(path, kind="counts")


# --------------------------------------------------------------------------------------------
# bad files: one DataError naming the path and the problem


def test_missing_directory_empty(tmp_path):
    with pytest.raises(DataError, match="no such file") as info:
        load_data(tmp_path / "nope.csv")
    assert str(tmp_path / "nope.csv") in str(info.value)
    with pytest.raises(DataError, match="is a directory"):
        load_data(tmp_path)
    empty = write(tmp_path / "empty.csv", "")
    with pytest.raises(DataError, match=r"empty \(0 bytes\)"):
        load_data(empty)
    with pytest.raises(DataError, match="empty"):
        load_data(write(tmp_path / "empty.npy", ""))


def test_no_data_rows(tmp_path):
    with pytest.raises(DataError, match="header row but no data rows") as info:
        load_data(write(tmp_path / "h.csv", "a,b\n"))
    assert "h.csv" in str(info.value)
    with pytest.raises(DataError, match="no data"):
        load_data(write(tmp_path / "c.csv", "# only a comment\n\n"))
    np.save(tmp_path / "e.npy", np.zeros((0, 3)))
    with pytest.raises(DataError, match="0 samples"):
        load_data(tmp_path / "e.npy")


def test_text_cell_errors(tmp_path):
    with pytest.raises(DataError, match=r"line 3, column 2 \('b'\) holds the non-numeric value"):
        load_data(write(tmp_path / "a.csv", "a,b\n1,2\n3,x\n"))
    with pytest.raises(DataError, match=r"line 3, column 2 is empty; missing values"):
        load_data(write(tmp_path / "b.csv", "1,2\n3,4\n5,\n"))
    with pytest.raises(DataError, match=r"2 NaN or infinite values.*'nan'.*line 3, column 1"):
        load_data(write(tmp_path / "c.csv", "1,2\n3,4\nnan,5\n6,inf\n"))
    with pytest.raises(DataError, match="line 2 has 3 fields, but line 1 has 2"):
        load_data(write(tmp_path / "d.txt", "1 2\n3 4 5\n"))


def test_garbled_and_unsupported_files(tmp_path):
    binary = tmp_path / "g.csv"
    binary.write_bytes(b"\x00\xff\xfe\x89garbage")
    with pytest.raises(DataError, match="not a UTF-8 text file") as info:
        load_data(binary)
    assert str(binary) in str(info.value)
    with pytest.raises(DataError, match="not a NumPy .npy file"):
        load_data(write(tmp_path / "g.npy", "hello"))
    truncated = tmp_path / "t.npy"
    np.save(truncated, DATA)
    truncated.write_bytes(truncated.read_bytes()[:-10])
    with pytest.raises(DataError, match="t.npy"):
        load_data(truncated)
    with pytest.raises(DataError, match="not a .npz file"):
        load_data(write(tmp_path / "g.npz", "hello"))
    bad_gz = tmp_path / "g.csv.gz"
    bad_gz.write_bytes(b"not gzip at all")
    with pytest.raises(DataError, match="cannot be read"):
        load_data(bad_gz)
    with pytest.raises(DataError, match="unsupported file type '.ods'"):
        load_data(write(tmp_path / "g.ods", "x"))
    with pytest.raises(DataError, match="g.xlsx cannot be read: File is not a zip file"):
        load_data(write(tmp_path / "g.xlsx", "x"))


def test_object_npy_rejected(tmp_path):
    path = tmp_path / "o.npy"
    np.save(path, np.array([[1, "a"]], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="object array"):
        load_data(path)


def test_npy_data_errors_name_path(tmp_path):
    path = tmp_path / "x.npy"
    X = DATA.copy()
    X[2, 1] = np.nan
    np.save(path, X)
    with pytest.raises(DataError, match=r"x.npy contains 1 NaN entry .*row 2, column 1"):
        load_data(path)
    np.save(path, np.arange(3.0))
    with pytest.raises(DataError, match="1-D"):
        load_data(path)
    sp.save_npz(tmp_path / "s.npz", sp.csr_matrix(COUNTS))
    with pytest.raises(DataError, match="kind='counts'"):
        load_data(tmp_path / "s.npz", kind="dense")


def test_bad_arguments(tmp_path):
    path = write(tmp_path / "x.csv", "1,2\n")
    with pytest.raises(ValueError, match="kind"):
        load_data(path, kind="sparse")
    with pytest.raises(ValueError, match="header"):
        load_data(path, header="yes")


# --------------------------------------------------------------------------------------------
# labels and vocabulary


def test_save_labels_round_trip(tmp_path):
    path = tmp_path / "labels.csv"
    save_labels_csv(path, np.array([0, 2, 1, 2]))
    assert path.read_text() == "label\n0\n2\n1\n2\n"
    X, meta = load_data(path)
    np.testing.assert_array_equal(X[:, 0], [0, 2, 1, 2])
    assert meta["column_names"] == ["label"]
    save_labels_csv(path, [1.0, 0.0], header="cluster")
    assert path.read_text() == "cluster\n1\n0\n"
    with pytest.raises(DataError, match="whole numbers"):
        save_labels_csv(path, [0.5])
    with pytest.raises(DataError, match="1-D"):
        save_labels_csv(path, [[0, 1]])
    with pytest.raises(DataError, match="cannot write labels"):
        save_labels_csv(tmp_path / "missing" / "labels.csv", [0])


def test_load_vocabulary(tmp_path):
    path = write(tmp_path / "vocab.txt", "alpha\r\nbeta \ngamma\n\n")
    assert load_vocabulary(path) == ["alpha", "beta", "gamma"]
    with pytest.raises(DataError, match="empty"):
        load_vocabulary(write(tmp_path / "empty.txt", ""))
    with pytest.raises(DataError, match="no such file"):
        load_vocabulary(tmp_path / "nope.txt")
    with pytest.raises(DataError, match="no words"):
        load_vocabulary(write(tmp_path / "blank.txt", "\n\n"))


def test_load_data_with_labels_reads_word_labels(tmp_path):
    from dpclust.io import load_data_with_labels

    path = tmp_path / "t.csv"
    path.write_text("x,species,y\n1.0,red,2.0\n3.0,blue,4.0\n5.0,red,6.5\n")
    X, meta, labels = load_data_with_labels(path, "species")
    np.testing.assert_array_equal(X, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]])
    assert list(labels) == ["red", "blue", "red"]
    X, _, labels = load_data_with_labels(path, 1, column=["y"])
    np.testing.assert_array_equal(X, [[2.0], [4.0], [6.5]])
    with pytest.raises(DataError, match="no column named 'kind'"):
        load_data_with_labels(path, "kind")
    with pytest.raises(DataError, match="include the label column"):
        load_data_with_labels(path, "species", column=["x", "species"])


def test_load_data_with_columns_reads_labels_and_positions(tmp_path):
    from dpclust.io import load_data_with_columns

    path = write(tmp_path / "t.csv", "x,day,kind,y\n1,2024-01-01,a,2\n3,2024-01-03,b,4\n")
    X, meta, values = load_data_with_columns(path, {"label": "kind", "positions": 1})
    np.testing.assert_array_equal(X, [[1.0, 2.0], [3.0, 4.0]])
    assert meta["column_names"] == ["x", "y"]
    assert values == {"label": ["a", "b"], "positions": ["2024-01-01", "2024-01-03"]}
    with pytest.raises(DataError, match="label and positions columns are the same column"):
        load_data_with_columns(path, {"label": "kind", "positions": 2})
    with pytest.raises(DataError, match="include the positions column 'day'"):
        load_data_with_columns(path, {"positions": "day"}, column=["x", "day"])
    table = tmp_path / "t.npy"
    np.save(table, np.array([[1.0, 10.0, 2.0], [3.0, 20.0, 4.0]]))
    X, _, values = load_data_with_columns(table, {"positions": 1})
    np.testing.assert_array_equal(X, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(values["positions"], [10.0, 20.0])
    with pytest.raises(DataError, match="positions column as a 0-based column index"):
        load_data_with_columns(table, {"positions": "day"})


def test_parse_positions_numbers_dates_and_errors():
    from dpclust.io import parse_positions

    np.testing.assert_array_equal(parse_positions(["1", "2.5", "4"]), [1.0, 2.5, 4.0])
    times = parse_positions(["2024-01-01", "2024-01-02 12:00", "2024-01-03T01:00:00+01:00"])
    assert times.dtype == np.dtype("datetime64[s]")
    days = (times - times[0]) / np.timedelta64(1, "D")
    np.testing.assert_allclose(days, [0.0, 1.5, 2.0])  # the time zone is converted to UTC
    with pytest.raises(DataError, match=r"x: 'soon' \(value 2 of 2\) is not a number"):
        parse_positions(["2024-01-01", "soon"], what="x")
    with pytest.raises(DataError, match="a number among dates"):
        parse_positions(["2024-01-01", "3"])
    with pytest.raises(DataError, match="NaN or infinite"):
        parse_positions(np.array([1.0, np.nan]))


def test_load_distances_dense_and_sparse(tmp_path):
    from dpclust.io import load_distances

    D = np.array([[0.0, 1.0, np.inf], [1.0, 0.0, 2.0], [np.inf, 2.0, 0.0]])
    np.save(tmp_path / "d.npy", D)
    np.testing.assert_array_equal(load_distances(tmp_path / "d.npy", n=3), D)
    sp.save_npz(tmp_path / "d.npz", sp.csr_matrix(np.nan_to_num(D, posinf=0.0)))
    S = load_distances(tmp_path / "d.npz")
    assert sp.issparse(S) and S.nnz == 4
    with pytest.raises(DataError, match="3 x 3 distance matrix, but the data have 4 rows"):
        load_distances(tmp_path / "d.npy", n=4)
    np.save(tmp_path / "r.npy", np.ones((2, 3)))
    with pytest.raises(DataError, match="must be square"):
        load_distances(tmp_path / "r.npy")
    np.save(tmp_path / "neg.npy", -D)
    with pytest.raises(DataError, match=">= 0"):
        load_distances(tmp_path / "neg.npy")
    with pytest.raises(DataError, match="not a csv file"):
        load_distances(write(tmp_path / "d.csv", "0,1\n1,0\n"))


# ---------------------------------------------------------------- headers and separators
def test_a_first_row_that_mixes_numbers_and_text_is_refused(tmp_path):
    """A typo in the first data row must not turn it into a header: refused, naming the
    line and the cell; a row of words above numbers is still a header."""
    typo = write(tmp_path / "typo.csv", "1,2x\n3,4\n5,6\n7,8\n")
    with pytest.raises(DataError, match=r"line 1 mixes numbers and text: column 2 holds '2x'"):
        load_data(typo)
    assert load_data(typo, header=True)[0].shape == (3, 2)
    X, meta = load_data(write(tmp_path / "named.csv", "a,b\n1,2\n3,4\n"))
    assert meta["column_names"] == ["a", "b"] and X.shape == (2, 2)


@pytest.mark.parametrize("sep", ["\t", ";", " "])
def test_tab_semicolon_and_space_separated_files_named_csv(tmp_path, sep):
    path = write(tmp_path / "x.csv", f"x{sep}y\n1.5{sep}2\n3{sep}4.25\n")
    X, meta = load_data(path)
    np.testing.assert_array_equal(X, [[1.5, 2.0], [3.0, 4.25]])
    assert meta["column_names"] == ["x", "y"]


def test_decimal_commas_are_read_and_the_dialect_is_reported(tmp_path):
    """Semicolon- or tab-separated files with decimal commas (spreadsheets in many locales)
    are read as they are meant, and the summary says how the file was read."""
    dec = write(tmp_path / "dec.csv", "1,5;2,5\n3,1;4,2\n")
    X, meta = load_data(dec)
    np.testing.assert_array_equal(X, [[1.5, 2.5], [3.1, 4.2]])
    assert (meta["separator"], meta["decimal"]) == ("semicolon", ",")
    assert meta["dialect"] == "separated by semicolons, decimal commas (found in the file)"
    X, meta = load_data(write(tmp_path / "tab.csv", "a\tb\n-1,25\t2\n3\t1e3\n"))
    np.testing.assert_array_equal(X, [[-1.25, 2.0], [3.0, 1000.0]])
    assert meta["column_names"] == ["a", "b"] and meta["separator"] == "tab"
    X, meta = load_data(write(tmp_path / "plain.csv", "a,b\n1.5,2\n"))
    assert (meta["separator"], meta["decimal"]) == ("comma", ".")
    assert "dialect" not in load_data(write_npy(tmp_path))[1]


@pytest.mark.parametrize("cell, decimal, expected", [
    ("$ 4,460.37", ".", (4460.37, ("currency symbols", "thousands separators"))),
    ("-$5.00", ".", (-5.0, ("currency symbols",))),
    ("12 €", ".", (12.0, ("currency symbols",))),
    ("63.2 %", ".", (63.2, ("percent signs",))),
    ("1,234,567", ".", (1234567.0, ("thousands separators",))),
    ("1.234,56 €", ",", (1234.56, ("currency symbols", "thousands separators"))),
    ("12,34", ".", None), ("1,2345", ".", None), ("2.5", ".", None), ("$", ".", None),
    ("%", ".", None), ("1,234", ",", None)])
def test_numbers_written_for_reading(cell, decimal, expected):
    from dpclust.io.text import formatted_number

    assert formatted_number(cell, decimal) == expected


def test_commas_that_group_thousands_are_not_a_decimal_mark(tmp_path):
    """A semicolon-separated export whose counts are grouped by thousands (``2,237``) and
    whose other numbers have decimal points reads its commas as thousands; without decimal
    points, ``2,237`` stays a decimal comma (2.237), as it has always been read."""
    from dpclust.io.frames import read_frame

    frame, meta = read_frame(write(tmp_path / "k.csv", 'n;x\n"2,237";3.105\n"12,001";0.5\n'))
    assert meta["decimal"] == "."
    np.testing.assert_array_equal(frame["n"], [2237, 12001])
    assert meta["rules"] == {"n": {"thousands separators taken off numbers (cells)": 2}}
    frame, meta = read_frame(write(tmp_path / "d.csv", "n;x\n2,237;3\n12,001;1\n"))
    assert meta["decimal"] == ","
    np.testing.assert_array_equal(frame["n"], [2.237, 12.001])


def test_none_is_a_hole_among_numbers_and_a_level_among_text(tmp_path):
    """MASS's survey writes exercise as ``Freq``, ``Some`` or ``None``: beside text,
    ``None`` is an answer; in a column of numbers it marks a hole, and is counted so.  The
    same holds for a DataFrame handed to the table family."""
    from dpclust.io.frames import read_frame
    from dpclust.tables import infer_schema

    text = "Exer,pulse,smoke\nFreq,72,NA\nNone,None,Never\nSome,80,none\nNone,66,Heavy\n"
    frame, meta = read_frame(write(tmp_path / "s.csv", text))
    assert frame["Exer"].tolist() == ["Freq", "None", "Some", "None"]
    assert frame["smoke"].tolist() == [None, "Never", "none", "Heavy"]
    np.testing.assert_array_equal(frame["pulse"], [72, np.nan, 80, 66])
    assert meta["rules"] == {"pulse": {"'None' read as missing (cells)": 1},
                             "smoke": {"'NA' read as missing (cells)": 1}}
    df = pd.DataFrame({"Exer": ["Freq", "None", "Some", "None"] * 5,
                       "pulse": ["72", "None", "80", "66"] * 5})
    schema = infer_schema(df)
    kinds = {c.name: c.kind for c in schema.columns}
    assert kinds == {"Exer": "categorical", "pulse": "gaussian"}
    assert schema.columns[0].levels == ("Freq", "None", "Some")


def test_a_carriage_return_inside_a_line_is_a_break_in_its_cell(tmp_path):
    """pandas writes a tweet holding a carriage return unquoted: in a file whose lines end
    in line feeds it is a line break inside the cell (read as a space and counted), not the
    end of a row; a file whose lines end in carriage returns alone is read line by line."""
    from dpclust.io.frames import read_frame

    path = tmp_path / "tweets.csv"
    path.write_bytes(b"id,text,likes\n1,one line,5\n2,two\rlines,7\n3,\"quoted\rtoo\",9\n")
    frame, meta = read_frame(path)
    assert frame["text"].tolist() == ["one line", "two lines", "quoted too"]
    assert frame["likes"].tolist() == [5, 7, 9]
    assert meta["rules"] == {"text": {"line breaks inside a cell read as spaces (cells)": 2}}
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(b"id,text\r\n1,a\rb\r\n2,c\r\n")
    assert read_frame(crlf)[0]["text"].tolist() == ["a b", "c"]
    mac = tmp_path / "mac.csv"
    mac.write_bytes(b"id,text\r1,a\r2,b\r")
    frame, meta = read_frame(mac)
    assert frame["text"].tolist() == ["a", "b"] and not meta["rules"]


def write_npy(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.ones((3, 2)))
    return path


def test_separator_and_decimal_can_be_given(tmp_path):
    dec = write(tmp_path / "dec.csv", "1,5;2,5\n3,1;4,2\n")
    with pytest.raises(DataError, match=r"'1,5' looks like a number with a decimal comma: the "
                                        r"columns are separated by semicolons \(found\); read "
                                        r"it with decimal=','"):
        load_data(dec, decimal=".")
    X, meta = load_data(write(tmp_path / "s.txt", "1;2\n3;4\n"), sep="semicolon")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert meta["dialect"] == "separated by semicolons, decimal points (given)"
    with pytest.raises(DataError, match=r"this cell holds semicolons.*or give it with --sep"):
        load_data(write(tmp_path / "t.csv", "1;2\n3;4\n"), sep=",")
    assert load_data(write(tmp_path / "w.csv", "1 2\n3 4\n"), sep="whitespace")[0].shape == (2, 2)
    with pytest.raises(DataError, match="cannot have a decimal comma"):
        load_data(write(tmp_path / "c.csv", "1,2\n"), decimal=",")
    with pytest.raises(ValueError, match="sep must be one of"):
        load_data(dec, sep="|")
    with pytest.raises(ValueError, match="decimal must be"):
        load_data(dec, decimal="'")
    with pytest.raises(ValueError, match="apply to text tables"):
        load_data(write_npy(tmp_path), sep=",")


def test_mixed_decimal_marks_and_separators_are_named(tmp_path):
    mixed_marks = write(tmp_path / "m.csv", "a;b\n1,5;2\n3;2.5\n")
    with pytest.raises(DataError, match=r"line 3, column 2 \('b'\).*'2.5' has a decimal point: "
                                        r"use one decimal mark throughout"):
        load_data(mixed_marks)
    mixed = write(tmp_path / "mixed.csv", "1,2\n3\t4\n")
    with pytest.raises(DataError, match=r"this cell holds tabs: is the file separated by "
                                        r"tabs\?"):
        load_data(mixed)
    spaced = write(tmp_path / "spaced.txt", "1,5 2,5\n3,5 4\n")
    with pytest.raises(DataError, match=r"'5 2' looks like two numbers separated by "
                                        r"whitespace.*--sep whitespace --decimal ,"):
        load_data(spaced)
    X, _ = load_data(spaced, sep="whitespace", decimal=",")
    np.testing.assert_array_equal(X, [[1.5, 2.5], [3.5, 4.0]])
    comma = write(tmp_path / "comma.csv", '1,"2,5"\n3,4\n')
    with pytest.raises(DataError, match=r"'2,5' looks like a number with a decimal comma, but "
                                        r"the columns are separated by commas"):
        load_data(comma)


def test_quoted_decimal_commas_and_empty_first_row_cells(tmp_path):
    X, meta = load_data(write(tmp_path / "q.csv", '"a";"b"\n"1,5";"2"\n"3";"4,25"\n'))
    np.testing.assert_array_equal(X, [[1.5, 2.0], [3.0, 4.25]])
    assert meta["decimal"] == ","
    with pytest.raises(DataError, match=r"line 1, column 3 is empty; missing values are not "
                                        r"supported \(every line ending in a separator"):
        load_data(write(tmp_path / "trail.csv", "1,2,\n3,4,\n"))
    with pytest.raises(DataError, match=r"line 1, column 1 is empty; missing values"):
        load_data(write(tmp_path / "lead.csv", ",2\n3,4\n"))
    X, meta = load_data(write(tmp_path / "index.csv", ",a,b\n0,1,2\n1,3,4\n"))
    assert meta["column_names"] == ["Unnamed: 0", "a", "b"] and X.shape == (2, 3)


def test_the_table_reader_reads_what_numpy_writes_exactly(tmp_path):
    rng = np.random.default_rng(3)
    Y = rng.standard_normal((500, 4)) * 10.0 ** rng.integers(-8, 8, (500, 4))
    path = tmp_path / "y.csv"
    np.savetxt(path, Y, delimiter=",", fmt="%.17g")
    np.testing.assert_array_equal(load_data(path)[0], Y)
    with pytest.raises(DataError, match="line 1, column 1 holds the non-numeric value '1_000'"):
        load_data(write(tmp_path / "u.csv", "1_000,2\n3,4\n"), header=False)


# --------------------------------------------------------------- files without pickle
def test_safe_files_round_trip_and_refuse_foreign_classes(tmp_path):
    from dpclust.utils import safe_io as _safe_io
    from dpclust.families import NormalInverseWishart
    from dpclust.samplers.base import StepInfo

    fam = NormalInverseWishart().resolve(np.random.default_rng(0).normal(size=(20, 2)))
    obj = {"a": np.arange(3), 1: (2.5, float("nan"), None),
           "info": StepInfo(1.0, 2, 0.5, log_likelihood=-3.0),
           "family": fam, "big": 2**70, "rng": np.random.default_rng(7),
           "scalar": np.float32(1.5), "nested": [[np.zeros((2, 2))], {"x": "y"}]}
    path = tmp_path / "o.npz"
    _safe_io.save(path, obj)
    back = _safe_io.load(path)
    np.testing.assert_array_equal(back["a"], obj["a"])
    assert back[1][0] == 2.5 and np.isnan(back[1][1]) and back[1][2] is None
    assert back["info"] == obj["info"] and type(back["info"]) is StepInfo
    assert type(back["family"]) is NormalInverseWishart
    np.testing.assert_array_equal(back["family"].scale, fam.scale)
    assert back["big"] == 2**70 and back["scalar"].dtype == np.float32
    assert back["rng"].random() == np.random.default_rng(7).random()
    # a file that names a class outside dpclust is refused, not imported
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    skeleton = arrays["__skeleton__"].tobytes().replace(b"dpclust.samplers.base:StepInfo",
                                                        b"os:system")
    arrays["__skeleton__"] = np.frombuffer(skeleton, dtype=np.uint8)
    arrays["__sha256__"] = np.frombuffer(
        _safe_io._digest(skeleton, {k: v for k, v in arrays.items()
                                    if not k.startswith("__")}).encode(), dtype=np.uint8)
    np.savez(tmp_path / "evil.npz", **arrays)
    with pytest.raises(DataError, match="not dpclust's"):
        _safe_io.load(tmp_path / "evil.npz")
    with pytest.raises(TypeError, match="cannot save"):
        _safe_io.save(tmp_path / "x.npz", {"f": lambda: 0})


def test_an_excel_workbook_is_read_from_its_first_sheet(tmp_path):
    """A workbook's first sheet as a table of mixed columns: typed cells (numbers, text,
    dates), empty cells and text markers of a hole counted, empty rows skipped; a table of
    numbers for the families of plain numbers; the old .xls format refused by name."""
    pytest.importorskip("openpyxl")
    import pandas as pd

    from dpclust.io.frames import read_frame

    path = tmp_path / "survey.xlsx"
    first = pd.DataFrame({"age": [31.0, None, 45.0, 52.0], "smoker": ["no", "yes", "NA", "no"],
                          "seen": pd.to_datetime(["2024-01-02", "2024-02-03", None,
                                                  "2024-03-04"])})
    with pd.ExcelWriter(path, engine="openpyxl") as book:
        first.to_excel(book, sheet_name="answers", index=False)
        pd.DataFrame({"other": [1, 2]}).to_excel(book, sheet_name="notes", index=False)
    frame, meta = read_frame(path)
    assert (meta["format"], meta["sheet"], meta["sheets"], meta["has_header"]) == (
        "excel", "answers", 2, True)
    assert list(frame.columns) == ["age", "smoker", "seen"]
    assert frame["smoker"].tolist() == ["no", "yes", None, "no"]
    assert pd.api.types.is_datetime64_any_dtype(frame["seen"].dtype)
    assert meta["rules"] == {"age": {"empty cells read as missing (cells)": 1},
                             "smoker": {"'NA' read as missing (cells)": 1},
                             "seen": {"empty cells read as missing (cells)": 1}}
    numbers = tmp_path / "numbers.xlsx"
    pd.DataFrame({"a": [1.5, 2.0, 3.0], "b": [4, 5, 6]}).to_excel(numbers, index=False)
    X, meta = load_data(numbers)
    np.testing.assert_array_equal(X, [[1.5, 4.0], [2.0, 5.0], [3.0, 6.0]])
    assert meta["column_names"] == ["a", "b"] and meta["format"] == "excel"
    with pytest.raises(DataError, match="column 'age' of the sheet 'answers' has 1 empty"):
        load_data(path)
    with pytest.raises(DataError, match="column 'smoker' of the sheet 'answers' holds text"):
        load_data(path, column=["smoker"])
    old = write(tmp_path / "old.xls", "x")
    with pytest.raises(DataError, match="the old Excel format .xls is not read"):
        load_data(old)


def test_excel_without_openpyxl_says_which_extra_to_install(tmp_path, monkeypatch):
    import builtins

    from dpclust.io.frames import read_frame

    real_import = builtins.__import__

    def no_openpyxl(name, *args, **kwargs):
        if name == "openpyxl":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openpyxl)
    with pytest.raises(DataError, match=r"pip install dpclust\[excel\]"):
        read_frame(write(tmp_path / "book.xlsx", "not really a workbook"))


def test_a_header_with_empty_names_is_a_header(tmp_path):
    """pandas' ``to_csv`` writes its index under an empty name, and a trailing separator
    leaves one at the end: the first row is still the header, and the empty names are
    ``Unnamed: j``, as pandas reads them (the table family then leaves the index out as
    an identifier).  A first row holding a number is data, as before."""
    from dpclust.io.frames import read_frame
    from dpclust.tables import infer_schema

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=30), "g": rng.choice(["x", "y", "z"], 30)})
    df.to_csv(tmp_path / "indexed.csv")
    frame, meta = read_frame(tmp_path / "indexed.csv")
    assert meta["has_header"] and list(frame.columns) == ["Unnamed: 0", "a", "g"]
    assert [name for name, _ in infer_schema(frame).dropped] == ["Unnamed: 0"]
    trailing = write(tmp_path / "trailing.csv", "a,g,\n" + "".join(
        f"{x:.3f},{g},\n" for x, g in zip(df.a, df.g)))
    frame, _ = read_frame(trailing)
    assert list(frame.columns) == ["a", "g", "Unnamed: 2"]
    assert infer_schema(frame).dropped == (("Unnamed: 2", "empty (every cell is missing)"),)
    data_first = write(tmp_path / "data.csv", ",x,1.5\nb,y,2.5\n")
    assert not read_frame(data_first)[1]["has_header"]
    numbers = tmp_path / "numbers.csv"
    pd.DataFrame({"a": [1.5, 2.0], "b": [3.0, 4.0]}).to_csv(numbers)
    X, meta = load_data(numbers)
    assert meta["column_names"] == ["Unnamed: 0", "a", "b"] and X.shape == (2, 3)
    pytest.importorskip("openpyxl")  # the same sheet as a workbook
    df.to_excel(tmp_path / "indexed.xlsx")
    frame, meta = read_frame(tmp_path / "indexed.xlsx")
    assert meta["has_header"] and list(frame.columns) == ["Unnamed: 0", "a", "g"]


def test_labels_of_some_rows_leave_the_others_empty(tmp_path):
    """``rows``/``n_rows``: the labels go on their lines, the other lines hold empty cells."""
    from dpclust.io import save_labels_csv

    path = tmp_path / "labels.csv"
    save_labels_csv(path, [0, 1, 1], certainty=[0.5, 1.0, 0.25], rows=[0, 2, 3], n_rows=5)
    assert path.read_text().splitlines() == ["label,certainty", "0,0.5000", ",", "1,1.0000",
                                             "1,0.2500", ","]
    with pytest.raises(ValueError, match="increasing line numbers"):
        save_labels_csv(path, [0, 1], rows=[2, 1], n_rows=5)
    with pytest.raises(ValueError, match="increasing line numbers"):
        save_labels_csv(path, [0, 1], rows=[0, 5], n_rows=5)
