"""How long a run is: the first length and the limits of a run that goes on until its
chains converge, and ``run_length``, which reads the parameter that ``n_iter`` and
``max_iter`` replaced (``until_converged``)."""

from __future__ import annotations

import warnings

#: the first length of a run with ``n_iter=None``, which then goes on until it converges
FIRST_LENGTH = 200
#: the longest run of ``n_iter=None`` when ``max_iter`` is None
AUTO_MAX_ITER = 200_000
#: the default ``max_time`` (seconds) of the estimators and of ``dpclust fit``: ten
#: minutes, what the Dublin West ballots' default fit needs to converge (in 364 s and 592 s
#: at seeds 3 and 2; held to 300 s it stopped short at seeds 0 and 1, R-hat 1.009-1.015)
DEFAULT_MAX_TIME = 600.0


def run_length(n_iter, max_iter, until_converged):
    """``n_iter`` and ``max_iter`` saying what ``until_converged`` said (the parameter they
    replaced): True goes on until the chains converge, up to ``max_iter`` (10 ``n_iter``
    when not given); False runs exactly ``n_iter`` (200 when None); None changes
    nothing."""
    if until_converged is None:
        return n_iter, max_iter
    if not until_converged:
        return (FIRST_LENGTH if n_iter is None else n_iter), None
    if max_iter is None and isinstance(n_iter, int) and not isinstance(n_iter, bool):
        max_iter = 10 * n_iter
    return n_iter, max_iter


def renamed_run_length(n_iter, max_iter, renamed: dict):
    """``run_length`` of an estimator given the old ``until_converged=`` (popped from
    ``renamed``, the keywords its signature does not show), with a FutureWarning."""
    if "until_converged" not in renamed:
        return n_iter, max_iter
    warnings.warn("until_converged= is said by n_iter and max_iter now: n_iter=None runs "
                  "until the chains converge; n_iter=N, max_iter=M runs N iterations, then "
                  "on until they converge, up to M (until_converged=True is max_iter=10*N)",
                  FutureWarning, stacklevel=4)
    return run_length(n_iter, max_iter, renamed.pop("until_converged"))
