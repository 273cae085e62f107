"""Frequency tables (:mod:`dpclust.tables.frequency`): R's data frame of a contingency table,
one row per combination of levels and a column ``Freq`` counting its people, is read as
that many rows of people; anything else that has a ``Freq`` column keeps it as a feature."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from dpclust import DPMixture
from dpclust.tables import infer_schema
from dpclust.tables.frequency import FREQUENCY_REASON


def hair_eye() -> pd.DataFrame:
    """Part of R's ``HairEyeColor`` as ``as.data.frame`` writes it, row names included."""
    hair = ["Black", "Brown", "Red", "Blond"] * 2
    eye = ["Brown"] * 4 + ["Blue"] * 4
    freq = [32, 53, 10, 3, 11, 50, 10, 30]
    return pd.DataFrame({"rownames": np.arange(1, 9), "Hair": hair, "Eye": eye,
                         "Freq": freq})


def test_a_frequency_table_is_read_as_its_people():
    schema = infer_schema(hair_eye())
    assert schema.weights == "Freq"
    assert ("Freq", FREQUENCY_REASON) in schema.dropped
    assert [c.name for c in schema.columns] == ["Hair", "Eye"]
    # the cells per level count the people: 5 whole-number levels over 10 rows of 300
    # people are levels, not numbers
    coded = pd.DataFrame({"year": np.repeat(np.arange(1, 6), 2), "sex": ["F", "M"] * 5,
                          "Freq": np.full(10, 30)})
    schema = infer_schema(coded)
    assert schema.weights == "Freq"
    assert {c.name: c.kind for c in schema.columns} == {"year": "categorical",
                                                        "sex": "bernoulli"}


def test_other_tables_keep_their_freq_column():
    base = hair_eye()
    repeated = pd.concat([base, base.iloc[:1]], ignore_index=True)  # a combination twice
    repeated["rownames"] = np.arange(1, 10)
    measured = base.assign(Hair=np.linspace(0.5, 4.2, 8))  # a measurement beside it
    fractional = base.assign(Freq=base["Freq"] + 0.5)
    holed = base.assign(Freq=base["Freq"].astype(float).where(base.index != 2))
    for frame in (repeated, measured, fractional, holed):
        schema = infer_schema(frame)
        assert schema.weights is None and "Freq" in [c.name for c in schema.columns]
    given = infer_schema(base, kinds={"Freq": "poisson"})  # the user's kind wins
    assert given.weights is None and "Freq" in [c.name for c in given.columns]


def test_dpmixture_fits_the_people_of_a_frequency_table():
    """Each row counts as its Freq rows (``"repeat"``), the labels are one per row, and the
    summary, the lead and the closing line say so."""
    from dpclust.cli.commands import _print_done
    from dpclust.estimators.summary import weights_summary
    from dpclust.report.lead import weights_words

    frame = hair_eye()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(n_chains=1, n_iter=30, random_state=0, progress=False).fit(frame)
    assert model.sample_weight_mode_ == "repeat"
    assert model.loss_ == "vi(a=0.75)"  # the default for rows repeated as copies
    assert len(model._model_labels) == frame["Freq"].sum() == 199
    assert model.labels_.shape == (8,)
    block = weights_summary(model, None, 199)
    assert block == {"mode": "repeat", "column": "Freq", "counted": True,
                     "n_model_rows": 199}
    summary = {"n_clusters": 2, "cluster_sizes": [150, 49], "data": {"n_samples": 8},
               "settings": {"family": "table"}, "weights": block}
    assert weights_words(summary) == ("199 as the column Freq counts them, the table's "
                                      "counts of its rows")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = DPMixture(n_chains=1, n_iter=5, random_state=0, progress=False).fit(
            frame, sample_weight=np.ones(8))
    assert len(given._model_labels) == 8 and not given._counted
    assert given.loss_ == "vi"  # no row repeats


def test_the_estimate_keeps_the_copies_of_a_row_together():
    """The draws split a row's people among clusters; the point estimate does not, even
    under a loss that favours many clusters: at most one cluster per row."""
    frame = hair_eye()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(n_chains=1, n_iter=60, random_state=0, progress=False,
                          point_estimate="vi(a=0.5)", store_labels=True).fit(frame)
    rows = model._model_rows
    draws = np.asarray(model.trace_.labels)[0]
    split = [len(np.unique(draw[rows == 0])) > 1 for draw in draws]
    assert np.mean(split) > 0.2  # the draws do split the first row's 32 people
    for r in range(8):
        assert len(np.unique(model._model_labels[rows == r])) == 1
    np.testing.assert_array_equal(model.label_share_, 1.0)
    assert model.n_clusters_ <= 8


def test_fused_clusters_keep_the_copies_of_a_row_together():
    """Fusing goes by the draws' blocks, which split a row's people; the fused clusters
    keep each row's people in one cluster, as the estimate does."""
    frame = hair_eye()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPMixture(n_chains=1, n_iter=60, random_state=0, progress=False,
                          point_estimate="vi(a=0.5)", store_labels=True).fit(frame)
    fusion = model.fuse()
    rows = model._model_rows
    for r in range(int(rows.max()) + 1):
        assert len(np.unique(fusion.labels[rows == r])) == 1
    assert fusion.n_clusters <= model.n_clusters_


def test_the_closing_line_counts_the_people(capsys):
    from dpclust.cli.commands import _print_done

    summary = {"n_clusters": 3, "cluster_sizes": [150, 48, 1], "data": {"n_samples": 8},
               "settings": {"family": "table"},
               "weights": {"mode": "repeat", "column": "Freq", "counted": True,
                           "n_model_rows": 199}}
    _print_done(Path("out"), summary)
    out = capsys.readouterr().out
    assert ("3 clusters in 8 rows (199 as the column Freq counts them, the table's counts "
            "of its rows; 2 holding at least 1 % of the rows)") in out


def test_a_frequency_table_run_resumes_with_its_counts(tmp_path):
    """The counts are read again from the table on resume: same model rows, same chain."""
    frame = hair_eye()
    path = tmp_path / "run.ckpt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = DPMixture(n_chains=1, n_iter=20, burn_in=5, random_state=3,
                          progress=False).fit(frame)
        DPMixture(n_chains=1, n_iter=10, burn_in=5, random_state=3, progress=False,
                  checkpoint=str(path), checkpoint_every=5).fit(frame)
        resumed = DPMixture.resume(path, frame, n_iter=20)
    assert len(resumed._model_labels) == 199
    np.testing.assert_array_equal(resumed.labels_, whole.labels_)


def test_the_command_line_fits_a_large_frequency_table(tmp_path, capsys):
    """A few rows counting more people than the co-clustering figure takes: the run ends
    with its report (the figure left out), and says what it counted."""
    from cli_helpers import run

    rows = "\n".join(f"{i},{a},{b},{c}" for i, (a, b, c) in enumerate(
        [("yes", "low", 700), ("yes", "high", 500), ("no", "low", 650),
         ("no", "high", 450)], 1))
    path = tmp_path / "table.csv"
    path.write_text("rownames,Smoker,Income,Freq\n" + rows + "\n")
    status, out, err = run(capsys, "fit", path, "--n-iter", "4", "--no-progress",
                           "--out", tmp_path / "o")
    assert status == 0, err
    assert "in 4 rows (2,300 as the column Freq counts them" in out
    assert "picked table (a frequency table: its column Freq counts its rows" in err
    assert (tmp_path / "o" / "report.html").exists()
    assert not (tmp_path / "o" / "similarity.png").exists()
