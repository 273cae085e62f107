"""Running the command line in a test: ``run(capsys, *argv)``."""

from __future__ import annotations

from dpclust.cli import main


def as_written(argv) -> list:
    """``argv`` as the command-line tests were written for it: a ``fit`` without
    ``--n-chains`` runs one chain and, without ``--n-iter`` (and without asking to go on until
    it converges), 200 iterations, and without ``--random-state`` the seed 0.  The defaults
    themselves (four chains that go on until they converge, a seed drawn at random) have
    their own tests."""
    argv = [str(a) for a in argv]
    if argv[:1] == ["fit"]:
        if "--n-chains" not in argv:
            argv += ["--n-chains", "1"]
        if not {"--n-iter", "--until-converged", "--max-iter", "--max-time"} & set(argv):
            argv += ["--n-iter", "200"]
        if "--random-state" not in argv:
            argv += ["--random-state", "0"]
    return argv


def run(capsys, *argv):
    """``main(argv)`` (:func:`as_written`); returns (exit status, stdout, stderr)."""
    status = main(as_written(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err
