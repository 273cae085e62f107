"""The parameters an estimator replaced, still read: it takes them in a ``**renamed`` that
its signature does not show (:func:`without_renamed`), maps them with a ``FutureWarning``
(``until_converged``: :func:`~dpclust.chains.length.renamed_run_length`; ``backend`` and
``client``: ``DPMixture``'s ``executor``) and refuses any other keyword
(:func:`no_other_keywords`)."""

from __future__ import annotations

import inspect


def no_other_keywords(owner: str, renamed: dict) -> None:
    """Refuse the keywords left in ``renamed`` (none of the spellings an estimator still
    reads), as Python refuses an unexpected keyword."""
    if renamed:
        raise TypeError(f"{owner} got an unexpected keyword argument {sorted(renamed)[0]!r}")


def without_renamed(init):
    """``init`` shown without its ``**renamed`` (the old spellings it still reads), so
    that scikit-learn's introspection (get_params, clone, the estimator checks) and help()
    see the parameters alone."""
    signature = inspect.signature(init)
    init.__signature__ = signature.replace(parameters=[
        p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD])
    return init
