"""What the families of top-t rankings share (:class:`RankingsFamily`): the data, the items,
the resolved item count and longest ranking, the new-cluster term, and the refusals of a
family without a collapsed form.

Generalized Mallows (:mod:`dpclust.families.mallows`) and Plackett–Luce
(:mod:`dpclust.families.plackett_luce`) components read the same :class:`~dpclust.rankings.
Rankings`; each adds its parameters, its hyperparameters and its samplers' hooks.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .base import ConjugateFamily


class RankingsFamily(ConjugateFamily):
    """Base class of the families of top-t rankings of ``n_items`` items.

    Subclasses set their hyperparameters in ``__init__`` (after calling this one) and in
    ``resolve`` check them and call :meth:`_resolved` for a copy with the items fixed.
    """

    data_kind = "rankings"
    #: a short ballot says little about its bloc, so under plain VI the Bayes partition of
    #: a real election is one cluster (Dublin West: every draw holds 5 to 11 blocs, the VI
    #: estimate none); VI with a = 0.5, which charges joining two ballots the draws keep
    #: apart three times as much as splitting them, keeps the blocs the draws hold
    default_loss = "vi(a=0.5)"
    noun = "ranking"
    #: no closed-form cluster marginal: the samplers in ``samplers`` instantiate it
    collapsible = False
    kmeans_start = False

    def __init__(self, n_items=None, items=None):
        self.n_items = n_items
        self.items = items
        self._n = None
        self._max_length = None
        self._items = None

    # --------------------------------------------------------------- set-up
    def validate(self, X, *, what="X"):
        from ..rankings.data import check_rankings

        n_items = self._n if self._n is not None else self.n_items
        items = self._items if self._items is not None else self.items
        return check_rankings(X, n_items=n_items, items=items, what=what)

    @property
    def is_resolved(self) -> bool:
        return self._n is not None

    def _resolved(self, X):
        """A copy with the constructor's arguments and the data's item count, longest
        ranking and item names."""
        n = int(X.n_items)
        if n < 2:
            raise ValueError(f"rankings need at least 2 items, got n_items={n}")
        out = type(self)(**self.get_params())
        out._n = n
        out._max_length = max(int(X.shape[1]), 1)
        out._items = tuple(X.items) if X.items is not None else (
            tuple(self.items) if self.items is not None else None)
        return out

    def _need_resolved(self):
        if self._n is None:
            raise ValueError("the family has no item count until it is resolved on data")

    def n_features(self) -> int:
        self._need_resolved()
        return self._n

    @property
    def n_items_(self) -> int:
        """Number of items ``n`` (resolved)."""
        self._need_resolved()
        return self._n

    @property
    def max_length_(self) -> int:
        """The longest training ranking (resolved)."""
        self._need_resolved()
        return self._max_length

    @property
    def items_(self):
        """Item names (or None)."""
        return self._items

    def item_name(self, i: int) -> str:
        return self._items[i] if self._items is not None else str(int(i))

    def n_points(self, X) -> int:
        return len(X)

    def subset(self, X, index):
        return X[np.asarray(index)]

    def init_features(self, X):
        return None

    # ----------------------------------------------------------- statistics
    #: the NumPy face's exact statistics and marginal likelihood: up to this many items,
    #: and how they are computed (for the message beyond)
    max_exact_items = 0
    exact_how = ""

    def _check_small(self, what):
        if self._n > self.max_exact_items:
            raise ValueError(
                f"{what} {self.exact_how}; it is offered up to {self.max_exact_items} items. "
                f"Fit larger problems with sampler {', '.join(map(repr, self.samplers))}, "
                "which never need it")

    def _labels(self, X, labels, n_clusters):
        """``(labels, n_clusters)`` of the exact face's ``stats``: one cluster without
        labels, one more than the largest label without ``n_clusters``."""
        self._need_resolved()
        N = len(X)
        labels = np.zeros(N, dtype=np.int64) if labels is None else np.asarray(labels)
        K = (int(labels.max()) + 1 if N else 1) if n_clusters is None else int(n_clusters)
        return labels, K

    def combine(self, a, b):
        return type(a)(*(x + y for x, y in zip(a, b)))

    def subtract(self, a, b):
        return type(a)(*(x - y for x, y in zip(a, b)))

    def count(self, stats) -> np.ndarray:
        return np.asarray(stats.n)

    def posterior(self, stats):
        """The posterior's statistics (its normaliser has no closed form)."""
        return stats

    def log_prior_predictive(self, X) -> np.ndarray:
        """``log P(pi_i) = log((n - t_i)! / n!)``, shape (N,): under a prior that treats the
        items alike every top-t ranking is equally likely (Meilă & Chen 2010, Lemma 1),
        the new-cluster term of the instantiated samplers."""
        self._need_resolved()
        return gammaln(self._n - np.asarray(X.lengths) + 1.0) - math.lgamma(self._n + 1.0)

    def sample_posterior(self, stats, rng):
        """Prior draws for empty clusters; a cluster's parameters given its rankings are
        Markov chain steps of the samplers, not one exact draw."""
        if np.all(np.asarray(stats.n) == 0):
            return self.sample_prior(rng, len(stats.n))
        raise NotImplementedError(
            f"{type(self).__name__} parameters given a cluster are drawn by Markov chain "
            f"steps (the samplers {', '.join(self.samplers)}), not in one exact draw")

    def mean_params(self, stats) -> dict:
        raise NotImplementedError(
            f"{type(self).__name__} clusters are summarised by their sampled parameters "
            "(DPMixture.cluster_params_), not by posterior means")

    def kernel(self, X):
        raise TypeError(f"{type(self).__name__} has no collapsed form (its cluster marginal "
                        f"has no closed form): use sampler {', '.join(self.samplers)}")

    @staticmethod
    def _cluster_counts(sizes) -> dict:
        """What ``describe_fit`` says of the clusters' sizes: how many hold at least 1 % of
        the rankings, how many one ranking, and the largest one's share."""
        sizes = np.asarray(sizes)
        n = int(sizes.sum())
        return {"substantial_clusters": int(np.sum(sizes >= 0.01 * n)),
                "singletons": int(np.sum(sizes == 1)),
                "largest_share": float(f"{sizes.max() / n:.4g}") if n else None}

    def _hellinger(self, params, length, n_samples, random_state, longest):
        """:func:`~dpclust.families._rankings_hellinger.rankings_hellinger` with the
        arguments checked."""
        from ..utils.checks import check_int, check_random_state
        from ._rankings_hellinger import rankings_hellinger

        self._need_resolved()
        return rankings_hellinger(self, params, length=length, longest=longest,
                                  n_samples=check_int(n_samples, "n_samples", 1),
                                  rng=check_random_state(random_state))


def number_or_nan(value) -> float:
    """``float(value)``, or NaN where it is not a number (a hyperparameter's check then
    refuses it with its own message)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")
