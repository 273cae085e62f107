"""The partition-prior contract: what every sampler asks of the prior on partitions.

A partition prior is an exchangeable partition probability function (EPPF) ``p(z)`` over the
partitions of N points.  The samplers never branch on which prior they target; they read
four things from it:

* :meth:`PartitionPrior.log_eppf` — ``log p(z)`` from the block sizes (log joints, exact
  enumeration, split–merge targets);
* :meth:`PartitionPrior.log_seat_weights` — the restaurant's weights of seating the N-th
  point given the other N - 1: joining a cluster that holds ``c`` of them, ``log_join[c]``,
  or opening a new one when they fill ``K`` clusters, ``log_new[K]``.  These are the tables
  the compiled Gibbs sweeps read (one look-up per cluster and point);
* :meth:`PartitionPrior.log_split_ratio` — ``log p(split) - log p(merged)`` of a split of one
  cluster into two when there are K clusters before it (every split–merge move), and the
  same as two tables, :meth:`PartitionPrior.log_split_terms` (the compiled Gibbs+SAMS
  proposals);
* :meth:`PartitionPrior.update_alpha` — a draw of the prior's resampled concentration given
  the partition (the Dirichlet process with a :class:`GammaPrior` on alpha), or the value
  unchanged.

Every prior here is of *Gibbs type* (Gnedin & Pitman 2006): ``p(z) = V_n(K) prod_c W(n_c)``,
so joining a cluster depends on its size alone and opening one on K and n alone — which is
what makes the two tables enough.  Every state of a sampler carries one scalar ``alpha``,
the prior's concentration (the DP's alpha, Pitman–Yor's strength, the MFM's gamma, the
finite Dirichlet's total mass); the Dirichlet process and Pitman–Yor resample it
(:meth:`update_alpha`), and a prior's other parameters may be learned too
(:attr:`PartitionPrior.learnable`).

A new prior is one module: subclass :class:`PartitionPrior`, implement ``log_eppf``,
``log_seat_weights``, ``log_split_ratio`` and ``log_split_terms`` (derive them from one
``V_n(K)`` and ``W(c)``
and test them against each other: ``tests/test_priors.py`` does, for every registered
prior), and register it in :data:`dpclust.priors.PRIORS`.

References
----------
Pitman, J. (2006). Combinatorial Stochastic Processes, chapters 2-3 (EPPFs, Gibbs type).
Miller, J. W. & Harrison, M. T. (2018). Mixture models with a prior on the number of
    components. JASA 113(521), section 3 (the restaurant process of any Gibbs-type prior).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln


@dataclass(frozen=True)
class GammaPrior:
    """A Gamma(shape, rate) prior on the DP concentration ``alpha`` (pass it as ``alpha=``)
    or on a learned hyperparameter.

    Parameters
    ----------
    shape : float, default=1.0
    rate : float, default=1.0
        Prior mean ``shape / rate``.
    initial : float, optional
        Starting value (default: the prior mean, or ``lower`` if that is above it).
    lower : float, default=0.0
        The prior truncated to ``[lower, inf)`` (a family sets it where smaller values
        cannot be computed in double precision: Plackett–Luce's worth shape).
    """

    shape: float = 1.0
    rate: float = 1.0
    initial: float | None = None
    lower: float = 0.0

    def __post_init__(self):
        if not (0 < self.shape < math.inf and 0 < self.rate < math.inf):
            raise ValueError(f"GammaPrior needs finite shape > 0 and rate > 0, got {self}")
        if self.initial is not None and not (0 < self.initial < math.inf
                                             and self.initial >= self.lower):
            raise ValueError(f"GammaPrior initial value must be positive, finite and at "
                             f"least the lower bound {self.lower:g}, got {self.initial}")
        if not 0 <= self.lower < math.inf:
            raise ValueError(f"GammaPrior's lower bound must be finite and >= 0, got "
                             f"{self.lower}")

    @classmethod
    def parse(cls, value) -> GammaPrior | None:
        """A GammaPrior from itself or from its text ``"gamma:SHAPE,RATE"`` (as
        ``--alpha`` and a family's learnable options read it; ``gamma:SHAPE:RATE`` in a
        ``--prior`` spec, whose arguments are split on commas), else None."""
        return _parse_two(cls, value, r"gamma:\s*([^,:\s]+)\s*[,:]\s*([^,:\s]+)",
                          "the Gamma shape and rate")

    @property
    def start(self) -> float:
        if self.initial is not None:
            return float(self.initial)
        return max(self.shape / self.rate, self.lower)

    def log_pdf(self, alpha: float) -> float:
        """The log density (of the untruncated Gamma: truncation changes a constant)."""
        if alpha < self.lower:
            return -math.inf
        a, b = self.shape, self.rate
        return a * math.log(b) - math.lgamma(a) + (a - 1) * math.log(alpha) - b * alpha

    def sample(self, rng) -> float:
        """One draw from the prior (above ``lower``: by inversion of the Gamma's
        distribution function)."""
        if self.lower <= 0:
            return float(rng.gamma(self.shape, 1.0 / self.rate))
        from scipy import stats

        dist = stats.gamma(self.shape, scale=1.0 / self.rate)
        return float(dist.isf(rng.random() * dist.sf(self.lower)))

    def untruncated(self, what: str) -> GammaPrior:
        """This prior, refused when truncated, for ``what`` (a concentration: its update,
        Escobar & West's auxiliary variable, and the calibration's draws take the whole
        Gamma)."""
        if self.lower > 0:
            raise ValueError(f"{what}'s GammaPrior cannot be truncated (lower="
                             f"{self.lower:g}); lower= is for a family's learned "
                             f"hyperparameter")
        return self

    def truncated(self, lower: float) -> GammaPrior:
        """This prior truncated to ``[lower, inf)`` (unchanged where it already is)."""
        if self.lower >= lower:
            return self
        initial = None if self.initial is None else max(self.initial, lower)
        return GammaPrior(self.shape, self.rate, initial, lower)

    def slice(self, rng, log_density, value: float) -> float:
        """One slice-sampling update of a value on (0, inf) with unnormalised log density
        ``log_density`` (on its logarithm, the Jacobian included)."""
        from ..utils.slice import slice_positive

        return slice_positive(rng, log_density, value)

    def describe(self) -> dict:
        out = {"gamma_shape": self.shape, "gamma_rate": self.rate}
        return {**out, "lower": self.lower} if self.lower > 0 else out


@dataclass(frozen=True)
class BetaPrior:
    """A Beta(a, b) prior on a parameter in (0, 1): the Pitman–Yor discount.

    Parameters
    ----------
    a, b : float, default=1.0
        Prior mean ``a / (a + b)``; ``BetaPrior(1, 1)`` is uniform.
    initial : float, optional
        Starting value (default: the prior mean).
    """

    a: float = 1.0
    b: float = 1.0
    initial: float | None = None

    def __post_init__(self):
        if not (0 < self.a < math.inf and 0 < self.b < math.inf):
            raise ValueError(f"BetaPrior needs finite a > 0 and b > 0, got {self}")
        if self.initial is not None and not 0 < self.initial < 1:
            raise ValueError(f"BetaPrior initial value must be in (0, 1), got {self.initial}")

    @classmethod
    def parse(cls, value) -> BetaPrior | None:
        """A BetaPrior from itself or from its text ``"beta:A,B"`` (``beta:A:B`` in a
        ``--prior`` spec, whose arguments are split on commas), else None."""
        return _parse_two(cls, value, r"beta:\s*([^,:\s]+)\s*[,:]\s*([^,:\s]+)",
                          "the Beta parameters")

    @property
    def start(self) -> float:
        return float(self.initial) if self.initial is not None else self.a / (self.a + self.b)

    def log_pdf(self, x: float) -> float:
        if not 0 < x < 1:
            return -math.inf
        a, b = self.a, self.b
        return (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                + (a - 1) * math.log(x) + (b - 1) * math.log1p(-x))

    def sample(self, rng) -> float:
        """One draw from the prior."""
        return float(rng.beta(self.a, self.b))

    def slice(self, rng, log_density, value: float) -> float:
        """One slice-sampling update of a value in (0, 1) with unnormalised log density
        ``log_density`` (on its logit, the Jacobian included)."""
        from ..utils.slice import slice_unit

        return slice_unit(rng, log_density, value)

    def describe(self) -> dict:
        return {"beta_a": self.a, "beta_b": self.b}


def _parse_two(cls, value, pattern: str, what: str):
    """``cls`` itself, or ``cls(x, y)`` from a text matching ``pattern`` (two groups, any
    case, spaces around), else None."""
    if isinstance(value, cls):
        return value
    if not isinstance(value, str):
        return None
    m = re.fullmatch(r"\s*" + pattern + r"\s*", value, flags=re.IGNORECASE)
    if m is None:
        return None
    try:
        return cls(float(m.group(1)), float(m.group(2)))
    except ValueError:
        raise ValueError(f"in {value!r} {what} must be positive numbers") from None


def parse_hyperprior(value):
    """A :class:`GammaPrior` or :class:`BetaPrior` from itself or its text, else None."""
    return GammaPrior.parse(value) or BetaPrior.parse(value)


def gamma_or_number(text):
    """A ``--prior`` argument that is a number or a learned value (``gamma:SHAPE:RATE``):
    the :class:`GammaPrior`, else ``float(text)`` (which raises ``ValueError``)."""
    return GammaPrior.parse(text) or float(text)


class PartitionPrior:
    """Base class of the priors on partitions (see the module docstring for the contract).

    Subclasses are frozen dataclasses; ``name`` is the key of :data:`dpclust.priors.PRIORS`.
    """

    name: str = ""
    #: a short phrase for summaries and reports ("Dirichlet process", ...)
    title: str = ""
    #: whether this is the Dirichlet process (the prior whose algebra the sub-cluster
    #: sampler and the concentration's resampling use); read instead of ``name``
    is_dirichlet_process = False

    # ------------------------------------------------------------------ the contract
    @property
    def alpha_start(self) -> float:
        """The concentration a chain starts from (the state's ``alpha``)."""
        raise NotImplementedError

    @property
    def alpha_prior(self) -> GammaPrior | None:
        """The prior on the concentration when it is resampled, else None."""
        return None

    def log_eppf(self, sizes, alpha: float) -> float:
        """``log p(z)`` of a partition with block sizes ``sizes`` (zeros are ignored)."""
        raise NotImplementedError

    def log_seat_weights(self, n_samples: int, alpha: float, max_clusters: int | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
        """``(log_join, log_new)``: the unnormalised log weights of seating the
        ``n_samples``-th point given the other ``n_samples - 1``: ``log_join[c]`` (shape
        (n_samples + 1,)) to join a cluster holding c of them (``c >= 1``; entry 0 unused),
        ``log_new[K]`` to open a new cluster when they fill K clusters (``-inf`` where the
        prior allows no more clusters).  ``log_new`` covers K = 0 .. n_samples, or, given
        ``max_clusters``, at least K = 0 .. max_clusters: a prior whose table costs a series
        per K (the MFM) may stop there, and a sampler that reaches more clusters than the
        table covers asks again with a larger ``max_clusters``."""
        raise NotImplementedError

    def log_split_ratio(self, n_left: int, n_right: int, n_clusters: int, n_samples: int,
                        alpha: float) -> float:
        """``log p(split) - log p(merged)``: one cluster of ``n_left + n_right`` points split
        into two, with ``n_clusters`` clusters before the split among ``n_samples`` points
        (the other blocks cancel)."""
        raise NotImplementedError

    def log_split_terms(self, n_samples: int, alpha: float, max_clusters: int
                        ) -> tuple[np.ndarray, np.ndarray]:
        """``(log_k, log_w)``: :meth:`log_split_ratio` as tables, ``log_split_ratio(N_l, N_r,
        K, n, alpha) = log_k[K] + log_w[N_l] + log_w[N_r] - log_w[N_l + N_r]`` for K = 0 ..
        ``max_clusters`` and sizes 1 .. ``n_samples`` (entry 0 of ``log_w`` unused).  Every
        prior here is of Gibbs type, ``p(z) = V(n, K) prod_k W(N_k)`` (Gnedin & Pitman
        2006), whose split ratio factorises so: ``log_k[K] = log V(n, K + 1) - log V(n, K)``
        and ``log_w = log W``.  The compiled Gibbs+SAMS proposals read these tables."""
        raise NotImplementedError

    def update_alpha(self, rng, alpha: float, n_clusters: int, n_samples: int) -> float:
        """The concentration after one update given the partition (unchanged by default)."""
        return alpha

    # ------------------------------------------------ learned parameters of the prior
    #: the parameters (besides the concentration ``alpha``) that a hyperprior may be given
    #: in place of a number: each is then a variable of the chain, resampled every iteration
    #: from ``p(h | z) ∝ p(h) p(z | h)`` (:meth:`log_eppf` of the block sizes) beside the
    #: family's learned hyperparameters (:mod:`dpclust.samplers.hyper`)
    learnable: tuple = ()

    def hyperpriors(self) -> dict:
        """The learned parameters of :attr:`learnable` and their hyperpriors, by name
        (empty: none)."""
        kept = self.__dict__.get("_hyperpriors")  # a copy made by :meth:`at` keeps them
        if kept is not None:
            return dict(kept)
        out = {}
        for name in self.learnable:
            hp = parse_hyperprior(getattr(self, name))
            if hp is not None:
                out[name] = hp
        return out

    def learned_values(self) -> dict:
        """The values the learned parameters hold in this prior: their hyperpriors'
        starting values, until :meth:`at` sets them."""
        kept = self.__dict__.get("_hyperpriors")
        if kept is not None:
            return {name: self.value(name) for name in kept}
        return {name: hp.start for name, hp in self.hyperpriors().items()}

    def at(self, values: dict) -> PartitionPrior:
        """This prior with its learned parameters at ``values`` (numbers by name).  The copy
        still declares the same hyperpriors, so that a chain moves from one value to the
        next."""
        if not values:
            return self
        learned = self.hyperpriors()
        unknown = set(values) - set(learned)
        if unknown:
            raise ValueError(f"{type(self).__name__} learns {sorted(learned) or 'nothing'}, "
                             f"not {sorted(unknown)}")
        out = dataclasses.replace(self, **self._fields_at(values))
        object.__setattr__(out, "_hyperpriors", learned)
        return out

    def _fields_at(self, values: dict) -> dict:
        """The dataclass fields that hold the learned ``values`` (each a field of the same
        name unless a prior says otherwise)."""
        return {k: float(v) for k, v in values.items()}

    def value(self, name: str) -> float:
        """The number a parameter holds: itself, or its hyperprior's starting value."""
        v = getattr(self, name)
        hp = parse_hyperprior(v)
        return hp.start if hp is not None else float(v)

    def describe(self) -> dict:
        """What the summary, the report and ``to_arviz`` say about the prior."""
        return {"name": self.name, "title": self.title}

    def label(self) -> str:
        """A short phrase naming the prior and its parameters, for summaries and reports
        (``"Pitman–Yor process (discount 0.25, strength 1)"``)."""
        def value(v):
            if isinstance(v, float):
                return f"{v:g}"
            if isinstance(v, dict) and "gamma_shape" in v:  # a learned parameter's prior
                return f"learned (Gamma({v['gamma_shape']:g}, {v['gamma_rate']:g}) prior)"
            if isinstance(v, dict) and "beta_a" in v:
                return f"learned (Beta({v['beta_a']:g}, {v['beta_b']:g}) prior)"
            return str(v)

        params = ", ".join(f"{k.replace('_', ' ')} {value(v)}"
                           for k, v in self.describe().items() if k not in ("name", "title"))
        return f"{self.title} ({params})" if params else self.title

    @classmethod
    def from_spec(cls, args: list[str]) -> PartitionPrior:
        """The prior from the command line's ``--prior NAME:ARG,ARG`` (``args`` split on
        commas); each prior documents its own arguments in ``spec_help``."""
        raise NotImplementedError

    #: the arguments of ``--prior NAME:...``, for the command line's help
    spec_help: str = ""

    # ------------------------------------------------------------------ derived
    def sample_partition(self, rng: np.random.Generator, n_samples: int,
                         alpha: float | None = None) -> np.ndarray:
        """Labels of a partition of ``n_samples`` points drawn from the prior, by seating
        the points one at a time (the prior's restaurant process)."""
        alpha = self.alpha_start if alpha is None else float(alpha)
        labels = np.zeros(int(n_samples), dtype=np.int64)
        sizes: list[int] = []
        for m in range(int(n_samples)):
            log_join, log_new = self.log_seat_weights(m + 1, alpha, max_clusters=len(sizes))
            logw = np.array([log_join[s] for s in sizes] + [log_new[len(sizes)]])
            w = np.exp(logw - logw.max())
            k = int(rng.choice(len(w), p=w / w.sum()))
            if k == len(sizes):
                sizes.append(0)
            sizes[k] += 1
            labels[m] = k
        return labels

    def log_predictive_weights(self, sizes, alpha: float) -> tuple[np.ndarray, float]:
        """``(log w_k, log w_new)``, normalised: the probability that one more point joins
        each cluster of sizes ``sizes`` or opens a new one (the posterior predictive's
        mixing weights of a fitted partition)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        n = int(sizes.sum())
        log_join, log_new = self.log_seat_weights(n + 1, alpha, max_clusters=len(sizes))
        logw = np.append(log_join[sizes], log_new[len(sizes)])
        logw = logw - np.logaddexp.reduce(logw)
        return logw[:-1], float(logw[-1])


def split_learned(values: dict, own) -> tuple[dict, dict]:
    """Learned values by name as those that are not the partition prior's and those that
    are (``own``: the names of its :meth:`PartitionPrior.hyperpriors`)."""
    values = values or {}
    return ({k: v for k, v in values.items() if k not in own},
            {k: v for k, v in values.items() if k in own})


def positive_sizes(sizes) -> np.ndarray:
    """The non-zero block sizes as floats."""
    sizes = np.asarray(sizes, dtype=np.float64)
    return sizes[sizes > 0]


@functools.lru_cache(maxsize=8)
def log_gamma_counts(n: int, shift: float = 0.0) -> np.ndarray:
    """``lgamma(c + shift) - lgamma(1 + shift)`` for c = 0..n (entry 0 is 0, unused): the
    ``log W(c)`` of a Gibbs-type prior's cluster of c points, the Dirichlet process's
    ``lgamma(c)`` at ``shift = 0`` (read-only, cached)."""
    c = np.arange(n + 1, dtype=np.float64)
    out = gammaln(c + shift) - math.lgamma(1.0 + shift)
    out[0] = 0.0
    out.flags.writeable = False
    return out


def log_counts(n: int) -> np.ndarray:
    """``log c`` for c = 0..n (entry 0 is ``-inf``; read-only), each by the C library's
    ``log`` as the compiled sweeps computed it themselves before the tables (NumPy's
    vectorised ``log`` differs from it in the last bit for a few integers).

    A view of one table for the next power of two above ``n``: points seated one at a
    time (``sample``, ``sample_partition``) ask for every n in turn, and each costs a
    slice, not a new table."""
    n = int(n)
    return _log_counts_table(max(64, 1 << n.bit_length()))[: n + 1]


@functools.lru_cache(maxsize=8)
def _log_counts_table(size: int) -> np.ndarray:
    out = np.empty(size + 1)
    out[0] = -math.inf
    out[1:] = [math.log(c) for c in range(1, size + 1)]
    out.flags.writeable = False
    return out
