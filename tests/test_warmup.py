"""The install-time warm-up (``python -m dpclust.cli.warmup``): it runs each default path,
and a case that fails is reported without stopping the others (never an install)."""

import io

from dpclust.cli.warmup import DEFAULT_CASES, warm_up


def test_warm_up_runs_every_case_and_survives_a_broken_one():
    def broken():
        raise OSError("no such data")

    cases = (DEFAULT_CASES[0], ("broken", "gaussian", "gibbs", broken), DEFAULT_CASES[5])
    out = io.StringIO()
    took = warm_up(cases, out=out)
    assert isinstance(took[DEFAULT_CASES[0][0]], float)
    assert isinstance(took[DEFAULT_CASES[5][0]], float)
    assert took["broken"] == "OSError: no such data"
    assert "broken: not warmed (OSError: no such data)" in out.getvalue()


def test_the_default_cases_cover_the_default_paths():
    names = " ".join(c[0] for c in DEFAULT_CASES)
    for path in ("gaussian, gibbs", "gibbs+sams", "collapsed pass", "instantiated pass",
                 "blocked pass", "documents", "table", "rankings"):
        assert path in names
