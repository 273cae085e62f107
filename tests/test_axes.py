"""A table's real columns in their principal axes (``axes="principal"``): the map, the
working form, and a fit that is the diagonal family's on the turned columns, reported in
the columns as given."""

import json

import numpy as np
import pandas as pd
import pytest

from dpclust import DPMixture
from dpclust.families import DiagonalGaussian, TableFamily
from dpclust.tables.axes import PrincipalAxes, as_given


def _elongated(n=300, seed=0):
    """Two groups of three columns that grow together, apart along the long axis."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, n)
    size = rng.normal(size=n) + 4.0 * z
    X = np.column_stack([10 + 2 * size, 5 + size, 1 + 0.5 * size])
    X = X + 0.3 * rng.normal(size=X.shape)
    return pd.DataFrame(X, columns=["height", "arm", "hand"]), z


def test_the_map_and_its_inverse():
    X, _ = _elongated()
    axes = PrincipalAxes.of(X.to_numpy())
    Z = axes.forward(X.to_numpy())
    np.testing.assert_allclose(axes.backward(Z), X.to_numpy(), atol=1e-10)
    np.testing.assert_allclose(np.cov(Z.T, bias=True), np.diag(np.var(Z, axis=0)), atol=1e-10)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-10)
    var = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]])
    cov = axes.covariances(var)
    np.testing.assert_allclose(np.diagonal(cov, axis1=1, axis2=2), axes.column_variances(var))
    # a cluster's covariance in the columns as given: that of its rows mapped back
    rng = np.random.default_rng(1)
    z = rng.normal(size=(200_000, 3)) * np.sqrt(var[0])
    np.testing.assert_allclose(np.cov(axes.backward(z).T), cov[0], rtol=0.03, atol=0.01)
    assert axes.log_jacobian == pytest.approx(-np.log(X.to_numpy().std(axis=0)).sum())


def test_fewer_rows_than_columns_keep_every_axis():
    rng = np.random.default_rng(2)
    real = rng.normal(size=(6, 10)) + rng.normal(size=(6, 1))
    axes = PrincipalAxes.of(real)
    np.testing.assert_allclose(axes.rotation.T @ axes.rotation, np.eye(10), atol=1e-10)
    np.testing.assert_allclose(axes.backward(axes.forward(real)), real, atol=1e-10)
    z = axes.forward(real)
    assert np.all(np.diff(z.var(axis=0)) <= 1e-10)  # by decreasing variance


def test_new_rows_are_turned_by_the_training_axes():
    X, _ = _elongated()
    fam = DiagonalGaussian(axes="principal")
    Xw = fam.validate(X)
    resolved = fam.resolve(Xw)
    again = resolved.validate(X.iloc[:7])
    np.testing.assert_allclose(again.real, Xw.real[:7])
    np.testing.assert_allclose(as_given(again).real, X.to_numpy()[:7])
    assert resolved.validate(Xw) is Xw  # the working form stays as it is


@pytest.mark.filterwarnings("ignore:.*has not converged")
def test_the_fit_is_the_diagonal_one_on_the_turned_columns():
    """Same chains as the diagonal family on the turned columns, with the clusters and the
    density reported in the columns as given."""
    X, z = _elongated()
    kw = dict(n_iter=60, n_chains=2, random_state=3, progress=False)
    turned = DPMixture(family=DiagonalGaussian(axes="principal"), **kw).fit(X)
    axes = turned.family_.schema_.axes
    Z = pd.DataFrame(axes.forward(X.to_numpy()), columns=X.columns)
    plain = DPMixture(family=DiagonalGaussian(), **kw).fit(Z)
    np.testing.assert_array_equal(turned.labels_, plain.labels_)
    np.testing.assert_allclose(turned.score_samples(X),
                               plain.score_samples(Z) + axes.log_jacobian)
    assert turned.n_clusters_ == 2
    drawn, y = turned.sample(20_000, random_state=0)  # rows in the columns as given
    for k in range(2):  # within four posterior deviations of the cluster's mean
        rows = X.to_numpy()[turned.labels_ == k]
        gap = np.abs(drawn.real[y == k].mean(axis=0) - rows.mean(axis=0))
        assert np.all(gap < 4 * rows.std(axis=0) / np.sqrt(len(rows))), gap
    for k in range(2):
        rows = X.to_numpy()[turned.labels_ == k]
        np.testing.assert_allclose(turned.cluster_params_["means"][k], rows.mean(axis=0),
                                   rtol=0.02)
        np.testing.assert_allclose(turned.cluster_params_["covariances"][k],
                                   np.cov(rows.T), rtol=0.3, atol=0.05)


def test_what_it_refuses_says_why():
    X, _ = _elongated()
    holes = X.copy()
    holes.iloc[3, 1] = np.nan
    with pytest.raises(ValueError, match="holes in its real columns"):
        DiagonalGaussian(axes="principal").validate(holes)
    with pytest.raises(ValueError, match="at least two real columns"):
        DiagonalGaussian(axes="principal").validate(X[["arm"]])
    with pytest.raises(ValueError, match="None \\('none'\\), 'principal' or 'auto'"):
        DiagonalGaussian(axes="pca").validate(X)
    with pytest.raises(ValueError, match="covariance='diagonal'"):
        fam = TableFamily(covariance="full", axes="principal")
        fam.resolve(fam.validate(X))
    fam = DiagonalGaussian(axes="principal")
    a, b = fam.summarize(fam.validate(X[:150])), fam.summarize(fam.validate(X[150:]))
    with pytest.raises(ValueError, match="every row at once"):
        fam.merge_summaries(a, b)


def test_the_command_line_option(tmp_path):
    from dpclust.cli import main

    X, _ = _elongated(120)
    path = tmp_path / "body.csv"
    X.to_csv(path, index=False)
    out = tmp_path / "out"
    assert main(["fit", str(path), "--family", "diagonal", "--axes", "principal",
                 "--n-iter", "20", "--n-chains", "1", "--no-progress", "--no-plots",
                 "--out", str(out)]) == 0
    lead = (out / "report.html").read_text()
    assert "principal axes" in lead


def test_the_command_line_names_the_file_with_holes(tmp_path, capsys):
    from dpclust.cli import main

    X, _ = _elongated(60)
    X.iloc[3, 1] = np.nan
    path = tmp_path / "body.csv"
    X.to_csv(path, index=False)
    assert main(["fit", str(path), "--family", "diagonal", "--axes", "principal",
                 "--n-iter", "20", "--n-chains", "1", "--no-progress", "--no-plots",
                 "--out", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert f"{path} has holes in its real columns" in err and "Traceback" not in err


def test_auto_turns_a_few_row_table_of_numbers():
    """``family="auto"`` on complete numbers with fewer rows than columns squared (and at
    least three a column) fits diagonal clusters in the principal axes, and finds the two
    groups along the columns' common growth (one axis of evidence, not eight copies of it:
    at 5 and 8 standard deviations apart it keeps one cluster, at 12 it finds both)."""
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(5)
    z = np.repeat([0, 1], 20)
    size = rng.normal(size=40) + 12.0 * z
    X = np.column_stack([a + b * size for a, b in zip(range(8), np.linspace(0.5, 2, 8))])
    X = X + 0.3 * rng.normal(size=X.shape)
    fit = DPMixture(n_iter=100, n_chains=2, random_state=0, progress=False).fit(X)
    assert type(fit.family_).__name__ == "DiagonalGaussian" and fit.family_.axes == "principal"
    assert adjusted_rand_score(z, fit.labels_) > 0.9
    assert fit.cluster_params_["means"].shape[1] == 8  # in the columns as given


def test_auto_turns_the_real_columns_of_a_few_row_mixed_table():
    """A mixed table's real columns follow the rule of a table of numbers
    (``TableFamily(axes="auto")``, what ``family="auto"`` gives): turned where they are
    complete with at least three rows a column and fewer than the columns squared; as
    given with a hole, with as many rows as the columns squared, or with ``axes=None``."""
    from dpclust.families import TableFamily, choose_family

    X, _ = _elongated(40)  # 40 rows, 3 real columns: 40 >= 3 ** 2, so as given
    X["group"] = np.where(np.arange(len(X)) % 2, "a", "b")
    assert choose_family(X).axes == "auto"
    fam = TableFamily(axes="auto")
    assert fam.validate(X).schema.axes is None
    wide = X.copy()
    for j in range(4):  # 7 real columns: 21 <= 40 < 49
        wide[f"copy{j}"] = X.iloc[:, j % 3] * 2.0 + np.random.default_rng(j).normal(size=len(X))
    assert fam.validate(wide).schema.axes is not None
    assert TableFamily().validate(wide).schema.axes is None
    holes = wide.copy()
    holes.iloc[3, 1] = np.nan
    assert fam.validate(holes).schema.axes is None
    assert fam.validate(wide.iloc[:20]).schema.axes is None  # fewer than 3 rows a column
    fit = DPMixture(n_iter=20, n_chains=1, random_state=0, progress=False).fit(wide)
    assert fit.family_.settings()["axes"] == "principal"
    assert fit.cluster_params_["means"].shape[1] == 7  # the real columns as given
    assert np.isfinite(fit.score(wide))  # new rows through the fitted axes


def test_the_command_line_turns_by_default_and_none_keeps_the_columns(tmp_path):
    from dpclust.cli import main

    X, _ = _elongated(40)
    for j in range(4):
        X[f"copy{j}"] = X.iloc[:, j % 3] * 2.0 + np.random.default_rng(j).normal(size=len(X))
    X["group"] = np.where(np.arange(len(X)) % 2, "a", "b")
    path = tmp_path / "mixed.csv"
    X.to_csv(path, index=False)
    leads = {}
    for name, extra in (("auto", []), ("none", ["--axes", "none"])):
        out = tmp_path / name
        assert main(["fit", str(path), *extra, "--n-iter", "20", "--n-chains", "1",
                     "--no-progress", "--no-plots", "--out", str(out)]) == 0
        leads[name] = (out / "report.html").read_text()
        settings = json.loads((out / "summary.json").read_text())["settings"]
        assert settings["axes"] == ("principal" if name == "auto" else "none")
    said = "in the data's principal axes"
    assert said in leads["auto"] and said not in leads["none"]
