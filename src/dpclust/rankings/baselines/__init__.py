"""Nonparametric baselines for top-t rankings: a Mallows-kernel density estimate and
exponential blurring mean shift (the competitors of Meilă & Chen 2010, section 7 and Figure 8).

* :class:`RankingKDE` -- the kernel density estimate of Lebanon & Mao (2008) with a Mallows
  (GM^s, all ``theta_j = theta``) kernel of a single width ``theta``;
* :class:`RankingEBMS` -- exponential blurring mean shift (Meilă & Bao 2008): every point is
  moved to the weighted central ranking of its neighbours until the points collapse into
  clusters; scored as a mixture of the same kernels centred at the clusters' central rankings.

The package: :mod:`.kernel` (the kernel, and densities of mixtures of it), :mod:`.kde`,
:mod:`.ebms` with its blurring steps in :mod:`.blurring`, and :mod:`._base` (the estimators'
shared edge).

The kernel
----------
Items are ``0 .. n-1``; a top-t ranking ``pi`` lists ``t <= n - 1`` items, best first.  With all
``theta_j = theta`` the GM^s model of Mathematics §5,

    GM(pi | sigma, theta) = exp(-theta sum_{j<=t} s_j(pi | sigma)) / prod_{j<=t} psi_{n-j}(theta),

is the probability, under the Mallows model with Kendall's distance centred at the full
permutation ``sigma``, that a permutation begins with ``pi`` (Fligner & Verducci 1986).  A
training ranking ``pi_i`` of length ``t_i`` is not a full permutation, so the kernel centred at
it averages the GM^s over the ``(n - t_i)!`` permutations that begin with ``pi_i`` (``pi_i``
completed uniformly at random; Lebanon & Mao's treatment of a partial ranking as the uniform
distribution on its coset):

    K_theta(pi | pi_i) = 1/(n - t_i)!  sum_{sigma begins with pi_i}  GM(pi | sigma, theta).

Each ``GM(. | sigma, theta)`` is a distribution over the top-t rankings of every length t, so
``K_theta(. | pi_i)`` is one too.  The average has a closed form.  Let ``a`` be the number of items
of ``pi`` that ``pi_i`` does not list, ``m = n - t_i``, and

    D(pi | pi_i) = sum_{j<=t} #{x in pi_i, x not among pi(1..j-1), pi_i ranks x before pi(j)},

where an item that ``pi_i`` does not list counts as ranked after all of ``pi_i`` (so it scores
``t_i`` minus the items of ``pi_i`` already placed by ``pi``).  Then

    log K_theta(pi | pi_i) = -theta D(pi | pi_i) - sum_{j=1}^{t} log psi_{n-j}(theta)
                             + sum_{q=1}^{a} [log psi_{m-q}(theta) - log(m - q + 1)].

Proof: for every completion ``sigma``, ``sum_j s_j(pi | sigma)`` counts the pairs ``(x, pi(j))``,
``x`` not among ``pi(1..j-1)``, that ``sigma`` orders ``x`` first.  A pair with an item of
``pi_i`` is ordered the same way by every completion, which gives ``D``.  The pairs of items
outside ``pi_i`` are counted by the codes of the ``a`` items of ``pi`` outside ``pi_i`` (in
``pi``'s order) against the uniformly random order of those ``m`` items; by the Lehmer code these
codes are independent and uniform on ``0 .. m - q``, and ``E exp(-theta s) = psi_{m-q}(theta) /
(m - q + 1)``.  At ``theta = 0`` the kernel is uniform, ``(n - t)!/n!``.

References
----------
Lebanon, G. & Mao, Y. (2008). Non-parametric modeling of partially ranked data. JMLR 9,
2401-2429 (Mallows kernel smoothing of partial rankings, each a coset of permutations).
Meilă, M. & Bao, L. (2008). Estimation and clustering with infinite rankings. UAI; and (2010)
An exponential model for infinite rankings. JMLR 11, 3481-3518 (EBMS).
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI,
section 7 and Figure 8 (both as baselines).
Fligner, M. A. & Verducci, J. S. (1986). Distance based ranking models. JRSS B 48, 359-369.
Carreira-Perpiñán, M. Á. (2006). Fast nonparametric clustering with Gaussian blurring
mean-shift. ICML.
"""

from __future__ import annotations

from ._base import DEFAULT_THETA_GRID
from .ebms import DEFAULT_BLUR_GRID, RankingEBMS
from .kde import RankingKDE
from .kernel import log_mallows_kernel

__all__ = ["RankingEBMS", "RankingKDE", "log_mallows_kernel"]
