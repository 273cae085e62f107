"""Running the command line in a test: ``run(capsys, *argv)``."""

from __future__ import annotations

from dpclust.cli import main


def as_written(argv) -> list:
    """``argv`` as the command-line tests were written for it: a ``fit`` without
    ``--chains`` runs one chain and, without ``--iters`` (and without asking to go on until
    it converges), 200 iterations.  The defaults themselves (four chains that go on until
    they converge) have their own tests."""
    argv = [str(a) for a in argv]
    if argv[:1] == ["fit"]:
        if "--chains" not in argv:
            argv += ["--chains", "1"]
        if not {"--iters", "--until-converged", "--max-iters", "--max-time"} & set(argv):
            argv += ["--iters", "200"]
    return argv


def run(capsys, *argv):
    """``main(argv)`` (:func:`as_written`); returns (exit status, stdout, stderr)."""
    status = main(as_written(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err
