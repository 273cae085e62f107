"""Decay functions of the distance dependent CRP (Blei & Frazier 2010, section 2).

A decay ``f`` maps a distance ``d >= 0`` to a non-negative link weight: customer ``i`` links
to customer ``j != i`` with probability proportional to ``f(d_ij)`` and to itself with
probability proportional to ``alpha`` (Mathematics §4).  Every decay here is
non-increasing, with ``f(inf) = 0``.
"""

from __future__ import annotations

import math
import re

import numpy as np


class Decay:
    """Base class: a non-increasing function ``f(d) >= 0`` with ``f(inf) = 0``.

    Subclasses implement :meth:`log_weight`; :attr:`reach` is the smallest distance beyond
    which ``f`` is zero (``inf`` when ``f`` is positive everywhere), so that candidate
    links can be found without touching all pairs.
    """

    #: distances at or beyond this have f = 0
    reach: float = math.inf
    #: short name used in reports and by :func:`parse_decay`
    name: str = "decay"

    def log_weight(self, d) -> np.ndarray:
        """``log f(d)`` elementwise (``-inf`` where ``f(d) = 0``)."""
        raise NotImplementedError

    def __call__(self, d) -> np.ndarray:
        """``f(d)`` elementwise."""
        return np.exp(self.log_weight(d))

    @property
    def formula(self) -> str:
        """The decay as a formula with its parameters, e.g. ``"f(d) = exp(-d / 5)"``."""
        return repr(self)

    @property
    def title(self) -> str:
        """A short description for plot titles, e.g. ``"exponential decay, a = 5"``."""
        params = ", ".join(f"{k} = {v:g}" for k, v in self.__dict__.items())
        return f"{self.name} decay, {params}" if params else f"{self.name} decay"

    @property
    def is_constant(self) -> bool:
        """True for ``f = 1`` at every finite distance (the ordinary CRP when sequential)."""
        return False

    def _check(self, d):
        d = np.asarray(d, dtype=np.float64)
        if np.isnan(d).any():
            raise ValueError("distances contain NaN")
        if (d < 0).any():
            raise ValueError("distances must be non-negative; found "
                             f"{float(d[d < 0].min())}")
        return d

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.__dict__.items()))))


def _positive(value, what: str) -> float:
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{what} must be a positive finite number, got {value!r}")
    return value


class Constant(Decay):
    """``f(d) = 1`` for every finite distance.

    With sequential distances (links only to earlier customers) this is the ordinary CRP:
    a customer joins a table with probability proportional to the number of customers
    already there (Blei & Frazier 2010, section 2).
    """

    name = "constant"
    formula = "f(d) = 1"
    title = "traditional CRP (constant decay)"

    def log_weight(self, d):
        d = self._check(d)
        return np.where(np.isfinite(d), 0.0, -np.inf)

    @property
    def is_constant(self) -> bool:
        return True


class Window(Decay):
    """Window decay ``f(d) = 1[d < a]``: only customers closer than ``a`` can be linked.

    Sparse: candidate links are found from the positions without touching all pairs.
    """

    name = "window"

    def __init__(self, a):
        self.a = _positive(a, "the window width a")

    @property
    def reach(self) -> float:
        return self.a

    @property
    def formula(self) -> str:
        return f"f(d) = 1[d < {self.a:g}]"

    def log_weight(self, d):
        d = self._check(d)
        return np.where(d < self.a, 0.0, -np.inf)


class Exponential(Decay):
    """Exponential decay ``f(d) = exp(-d / a)``."""

    name = "exponential"

    def __init__(self, a):
        self.a = _positive(a, "the decay length a")

    @property
    def formula(self) -> str:
        return f"f(d) = exp(-d / {self.a:g})"

    def log_weight(self, d):
        d = self._check(d)
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(d), -d / self.a, -np.inf)


class Logistic(Decay):
    """Logistic decay ``f(d) = 1 / (1 + exp((d - a) / slope))``, a smooth window of width a.

    With ``slope=1`` this is the paper's ``exp(-d + a) / (1 + exp(-d + a))``; ``slope`` sets
    the width of the transition around ``a`` in distance units.
    """

    name = "logistic"

    def __init__(self, a, slope=1.0):
        self.a = _positive(a, "the logistic midpoint a")
        self.slope = _positive(slope, "the logistic slope")

    @property
    def formula(self) -> str:
        return f"f(d) = 1 / (1 + exp((d - {self.a:g}) / {self.slope:g}))"

    def log_weight(self, d):
        d = self._check(d)
        z = (d - self.a) / self.slope
        with np.errstate(invalid="ignore", over="ignore"):
            # log f = -log(1 + e^z), computed without overflow
            out = -np.logaddexp(0.0, z)
        return np.where(np.isfinite(d), out, -np.inf)


DECAYS = {"constant": Constant, "crp": Constant, "window": Window,
          "exponential": Exponential, "exp": Exponential, "logistic": Logistic}


def parse_decay(spec) -> Decay:
    """A decay from an object or a string such as ``"window:10"``, ``"exponential:5"``,
    ``"logistic:14"``, ``"logistic:14:2"`` (midpoint and slope) or ``"constant"``."""
    if isinstance(spec, Decay):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"decay must be a Decay or a string like 'logistic:14', got {spec!r}")
    parts = spec.strip().lower().split(":")
    kind = parts[0]
    if kind not in DECAYS:
        raise ValueError(f"unknown decay {parts[0]!r}: use one of "
                         f"{sorted(set(DECAYS) - {'crp', 'exp'})}")
    args = []
    for p in parts[1:]:
        if not re.fullmatch(r"[-+0-9.eE]+", p):
            raise ValueError(f"decay {spec!r}: {p!r} is not a number")
        args.append(float(p))
    cls = DECAYS[kind]
    n_args = {Constant: (0, 0), Window: (1, 1), Exponential: (1, 1), Logistic: (1, 2)}[cls]
    if not n_args[0] <= len(args) <= n_args[1]:
        raise ValueError(f"decay {spec!r}: {cls.__name__} takes {n_args[0]}"
                         + (f" to {n_args[1]}" if n_args[1] != n_args[0] else "")
                         + " parameter(s), e.g. 'window:10'")
    return cls(*args)
