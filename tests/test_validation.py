"""Tests of dpclust._validation: each bad input gives one DataError naming the problem."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from dpclust._validation import (
    DataError,
    check_counts,
    check_dense,
    check_int,
    check_labels,
    check_positive,
    check_random_state,
)

# --------------------------------------------------------------------------------------------
# check_dense


def test_dense_accepts_list_array_dataframe():
    expected = np.array([[1.0, 2.0], [3.0, 4.0]])
    frame = pd.DataFrame(expected, columns=["a", "b"])
    for X in ([[1, 2], [3, 4]], expected.astype(np.int32), frame):
        out = check_dense(X)
        assert out.dtype == np.float64 and out.flags.c_contiguous
        np.testing.assert_array_equal(out, expected)


def test_dense_no_copy_when_not_needed_and_contiguous_otherwise():
    X = np.ones((5, 3))
    assert check_dense(X) is X
    F = np.asfortranarray(np.arange(6.0).reshape(3, 2))
    out = check_dense(F)
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, F)


def test_dense_rejects_sparse():
    with pytest.raises(DataError, match="sparse"):
        check_dense(sp.csr_matrix(np.eye(3)))


def test_dense_1d_suggests_reshape():
    with pytest.raises(DataError, match=r"1-D.*reshape\(-1, 1\)"):
        check_dense([1.0, 2.0, 3.0])


def test_dense_rejects_scalar_and_3d():
    with pytest.raises(DataError, match="scalar"):
        check_dense(3.0)
    with pytest.raises(DataError, match="3-D"):
        check_dense(np.zeros((2, 2, 2)))


def test_dense_rejects_strings_naming_the_cell():
    with pytest.raises(DataError, match=r"'abc' at row 1, column 0"):
        check_dense(np.array([["1", "2"], ["abc", "3"]]))
    with pytest.raises(DataError, match="stored as strings"):
        check_dense(np.array([["1", "2"]]))


def test_dense_rejects_object_entries():
    with pytest.raises(DataError, match=r"missing value \(None\) at row 0, column 1"):
        check_dense(np.array([[1.0, None]], dtype=object))
    df = pd.DataFrame({"a": [1.0, 2.0], "name": ["x", "y"]})
    with pytest.raises(DataError, match=r"'x' at row 0, column 1 \('name'\)"):
        check_dense(df)
    # object arrays of plain numbers are fine
    out = check_dense(np.array([[1, 2.5]], dtype=object))
    np.testing.assert_array_equal(out, [[1.0, 2.5]])


def test_dense_rejects_complex():
    with pytest.raises(DataError, match="complex"):
        check_dense(np.ones((2, 2), dtype=complex))


def test_dense_ragged():
    with pytest.raises(DataError, match="different lengths"):
        check_dense([[1, 2], [3]])


def test_dense_nan_and_inf_counted_with_first_position():
    X = np.ones((5, 2))
    X[3, 1] = np.nan
    X[4, 0] = np.nan
    X[4, 1] = np.inf
    with pytest.raises(DataError) as info:
        check_dense(X, what="data")
    message = str(info.value)
    assert "2 NaN and 1 infinite" in message
    assert "row 3, column 1" in message
    assert message.startswith("data ")


def test_dense_shape_checks():
    with pytest.raises(DataError, match="0 samples"):
        check_dense(np.ones((0, 2)))
    with pytest.raises(DataError, match="at least 3 are required"):
        check_dense(np.ones((2, 2)), min_samples=3)
    with pytest.raises(DataError, match=r"0 feature\(s\)"):
        check_dense(np.ones((2, 0)))
    with pytest.raises(DataError, match="X has 3 features, but the model was fitted with 2"):
        check_dense(np.ones((4, 3)), n_features=2)
    assert check_dense(np.ones((4, 2)), n_features=2).shape == (4, 2)


# --------------------------------------------------------------------------------------------
# check_counts


def _is_canonical_float_csr(X):
    return (
        isinstance(X, sp.csr_matrix)
        and X.dtype == np.float64
        and X.has_canonical_format
        and np.all(X.data != 0)
    )


def test_counts_from_dense():
    out = check_counts([[0, 2, 1], [0, 0, 0], [3, 0, 0]])
    assert _is_canonical_float_csr(out)
    np.testing.assert_array_equal(out.toarray(), [[0, 2, 1], [0, 0, 0], [3, 0, 0]])


@pytest.mark.parametrize("fmt", ["coo", "csc", "csr", "lil", "dok"])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_counts_from_any_sparse(fmt, container):
    dense = np.array([[0, 2, 1], [0, 0, 0], [3, 0, 4]])
    X = container(dense).asformat(fmt)
    out = check_counts(X)
    assert _is_canonical_float_csr(out)
    np.testing.assert_array_equal(out.toarray(), dense)


def test_counts_canonicalises_without_touching_input():
    # duplicates, unsorted indices and an explicit zero
    data = np.array([1.0, 0.0, 2.0, 3.0])
    indices = np.array([2, 0, 2, 1])
    indptr = np.array([0, 3, 4])
    X = sp.csr_matrix((data.copy(), indices.copy(), indptr.copy()), shape=(2, 3))
    out = check_counts(X)
    assert _is_canonical_float_csr(out)
    np.testing.assert_array_equal(out.toarray(), [[0, 0, 3], [0, 3, 0]])
    np.testing.assert_array_equal(X.data, data)
    np.testing.assert_array_equal(X.indices, indices)


def test_counts_never_densifies(monkeypatch):
    X = sp.random(50, 40, density=0.1, format="csr", random_state=0)
    X.data = np.ceil(X.data * 5)

    def boom(*args, **kwargs):
        raise AssertionError("densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", boom)
    monkeypatch.setattr(sp.csr_matrix, "todense", boom)
    assert check_counts(X).nnz == X.nnz


def test_counts_empty_rows_allowed():
    out = check_counts(sp.csr_matrix((3, 4)))
    assert out.shape == (3, 4) and out.nnz == 0


def test_counts_negative_named():
    with pytest.raises(DataError, match=r"negative.*-2.*row 1, column 0"):
        check_counts(np.array([[1, 0], [-2, 1]]))
    X = sp.coo_matrix(([1, -5], ([0, 2], [1, 3])), shape=(3, 4))
    with pytest.raises(DataError, match=r"negative.*-5.*row 2, column 3"):
        check_counts(X)


def test_counts_fractional_named():
    with pytest.raises(DataError, match=r"non-integer count 0.5 at row 0, column 1"):
        check_counts(sp.csr_matrix(np.array([[0.0, 0.5]])))
    with pytest.raises(DataError, match=r"non-integer count 2.5 at row 1, column 0"):
        check_counts([[1.0, 0.0], [2.5, 0.0]])


def test_counts_nan_named():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    X.data[1] = np.nan
    with pytest.raises(DataError, match=r"NaN or infinite.*row 1, column 1"):
        check_counts(X)
    with pytest.raises(DataError, match="NaN"):
        check_counts([[np.nan, 1.0]])


def test_counts_shape_and_dtype_checks():
    with pytest.raises(DataError, match="fitted with 5"):
        check_counts(sp.csr_matrix((2, 4)), n_features=5)
    with pytest.raises(DataError, match="0 samples"):
        check_counts(sp.csr_matrix((0, 4)))
    with pytest.raises(DataError, match="dtype"):
        check_counts(sp.csr_matrix(np.ones((2, 2), dtype=complex)))


# --------------------------------------------------------------------------------------------
# check_labels


def test_labels():
    out = check_labels([0, 2, 1.0], 3)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [0, 2, 1])
    with pytest.raises(DataError, match="length 2, but there are 3"):
        check_labels([0, 1], 3)
    with pytest.raises(DataError, match="1-D"):
        check_labels([[0], [1]], 2)
    with pytest.raises(DataError, match=r"negative value -1 at index 1"):
        check_labels([0, -1], 2)
    with pytest.raises(DataError, match=r"non-integer value 1.5 at index 1"):
        check_labels([0, 1.5], 2)
    with pytest.raises(DataError, match="non-integer value nan"):
        check_labels([0, np.nan], 2)
    with pytest.raises(DataError, match="dtype"):
        check_labels(["a", "b"], 2)


# --------------------------------------------------------------------------------------------
# small helpers


def test_random_state():
    rng = np.random.default_rng(1)
    assert check_random_state(rng) is rng
    assert isinstance(check_random_state(None), np.random.Generator)
    a = check_random_state(7).random(3)
    b = check_random_state(np.int64(7)).random(3)
    c = check_random_state(np.random.SeedSequence(7)).random(3)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    with pytest.raises(ValueError, match="Generator or an int"):
        check_random_state(np.random.RandomState(0))
    with pytest.raises(ValueError, match="random_state"):
        check_random_state("seed")
    with pytest.raises(ValueError, match="non-negative"):
        check_random_state(-1)


def test_check_positive_and_int():
    assert check_positive(2, "alpha") == 2.0
    for bad in (0, -1.0, np.inf, np.nan, "1", True, None):
        with pytest.raises(ValueError, match="alpha"):
            check_positive(bad, "alpha")
    assert check_int(np.int32(3), "n_iter", 1) == 3
    for bad in (0, 2.0, True, "3", None):
        with pytest.raises(ValueError, match="n_iter"):
            check_int(bad, "n_iter", 1)
