"""Numba kernels of the Generalized Mallows family (Meilă & Chen 2010; Mathematics §5).

Conventions: items are ``0 .. n-1``; a central ranking ``sigma`` is stored both as an order
(``order[p]`` = the item at position p, best first) and as ranks (``rank[item]`` = its
position); a top-t ranking is a row of ``orders`` padded with -1, of length ``t``.  Ranks
``j`` are 0-based here, so the paper's stage ``j + 1`` has ``m = n - j - 1`` and its code takes
the values ``0 .. m``; ``psi_m(theta) = sum_{k=0}^{m} exp(-k theta)``.

Randomness comes in as a SplitMix64 state (:func:`dpclust.kernels.streams.next_uniform`)
seeded from the caller's ``numpy.random.Generator``.  ``stagewise`` (about 120 lines) stays
one compiled function on purpose: its stages share their scratch arrays in one loop.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..streams import next_uniform

#: below this (m + 1) * theta, psi's moments use their Taylor series (no cancellation)
_SERIES = 1e-4
#: most tangent points of the adaptive rejection sampler
_MAX_HULL = 24


# ------------------------------------------------------------------ psi and its moments
@njit(cache=True)
def log_psi(theta, m):
    """``log psi_m(theta) = log sum_{k=0}^{m} exp(-k theta)`` for ``theta >= 0``."""
    if theta * (m + 1) < 1e-12:
        return math.log(m + 1.0)
    return math.log(-math.expm1(-(m + 1.0) * theta)) - math.log(-math.expm1(-theta))


@njit(cache=True)
def code_mean(theta, m):
    """Mean of the code ``k`` under ``P(k) ∝ exp(-k theta)``, k = 0..m (= -d log psi / d theta)."""
    x = (m + 1.0) * theta
    if x < _SERIES:
        return m / 2.0 - m * (m + 2.0) * theta / 12.0
    return 1.0 / math.expm1(theta) - (m + 1.0) / math.expm1(x)


@njit(cache=True)
def code_var(theta, m):
    """Variance of the code under ``P(k) ∝ exp(-k theta)`` (= d² log psi / d theta²)."""
    x = (m + 1.0) * theta
    if x < _SERIES:
        return m * (m + 2.0) / 12.0
    a = math.sinh(theta / 2.0)
    b = math.sinh(x / 2.0)
    return 1.0 / (4.0 * a * a) - (m + 1.0) ** 2 / (4.0 * b * b)


@njit(cache=True)
def log_density_theta(theta, a, b, m):
    """``-a theta - b log psi_m(theta)``: the log density (up to a constant) of one theta_j
    under the conjugate prior (``a = nu r_j``, ``b = nu``) or the posterior (``a = nu r_j +
    S_j``, ``b = nu + N_j``), Mathematics §5."""
    return -a * theta - b * log_psi(theta, m)


@njit(cache=True)
def _slope(theta, a, b, m):
    return -a + b * code_mean(theta, m)


@njit(cache=True)
def theta_mode(a, b, m):
    """Mode of ``exp(-a theta) psi_m(theta)^-b`` on ``theta >= 0`` (log-concave)."""
    if b <= 0.0 or a >= b * m / 2.0:
        return 0.0
    target = a / b  # solve code_mean(theta) = a / b; code_mean falls from m/2 to 0
    lo = 0.0
    hi = 1.0
    while code_mean(hi, m) > target:
        hi *= 2.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if code_mean(mid, m) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-14 * hi:
            break
    return 0.5 * (lo + hi)


@njit(cache=True)
def cum_log_psi_row(theta, n, out):
    """``out[t] = sum_{j<t} log psi_{n-j-1}(theta[j])`` for ``t = 0 .. J`` (one cluster)."""
    out[0] = 0.0
    for j in range(theta.shape[0]):
        out[j + 1] = out[j] + log_psi(theta[j], n - j - 1)


# ------------------------------------------------------------ the theta integral
#: Gauss-Kronrod 7-15 nodes on [-1, 1] (the positive half; QUADPACK's qk15) and weights
_GK_X = np.array([0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                  0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                  0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                  0.207784955007898467600689403773245, 0.0])
_GK_W = np.array([0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
                  0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
                  0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
                  0.204432940075298892414161999234649, 0.209482141084727828012999174891714])
#: the 7-point Gauss weights at the odd Kronrod nodes (_GK_X[1], [3], [5], [7])
_G7_W = np.array([0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
                  0.381830050505118944950369775488975, 0.417959183673469387755102040816327])
#: panels (in units of the integrand's scale) placed around the mode before adapting
_PANELS = np.array([-16.0, -10.0, -6.0, -4.0, -2.5, -1.25, 0.0, 1.25, 2.5, 4.0, 6.0, 10.0,
                    16.0, 24.0, 36.0])


@njit(cache=True)
def _gk15(lo, hi, a, b, m, top):
    """Kronrod and Gauss estimates of ``∫_lo^hi exp(log_density_theta - top)``."""
    c = 0.5 * (lo + hi)
    h = 0.5 * (hi - lo)
    fc = math.exp(log_density_theta(c, a, b, m) - top)
    k = fc * _GK_W[7]
    g = fc * _G7_W[3]
    for q in range(7):
        dx = h * _GK_X[q]
        f = (math.exp(log_density_theta(c - dx, a, b, m) - top)
             + math.exp(log_density_theta(c + dx, a, b, m) - top))
        k += _GK_W[q] * f
        if q % 2 == 1:
            g += _G7_W[q // 2] * f
    return k * h, g * h


@njit(cache=True)
def _adaptive(lo, hi, a, b, m, top, scale, los, his):
    """``∫_lo^hi exp(log_density_theta - top)`` by bisecting until the Kronrod and Gauss
    estimates agree to about 1e-13 (``los``, ``his``: a scratch stack)."""
    los[0] = lo
    his[0] = hi
    n_stack = 1
    total = 0.0
    while n_stack > 0:
        n_stack -= 1
        lo = los[n_stack]
        hi = his[n_stack]
        k, g = _gk15(lo, hi, a, b, m, top)
        if (abs(k - g) <= 1e-14 * scale + 1e-13 * abs(k) or n_stack + 2 > los.shape[0]
                or hi - lo < 1e-12 * scale):
            total += k
        else:
            mid = 0.5 * (lo + hi)
            los[n_stack] = lo
            his[n_stack] = mid
            los[n_stack + 1] = mid
            his[n_stack + 1] = hi
            n_stack += 2
    return total


@njit(cache=True)
def log_theta_integral(a, b, m):
    """``log ∫_0^∞ exp(-a theta) psi_m(theta)^-b d theta`` for ``a > 0``, ``b >= 0``.

    Adaptive Gauss-Kronrod (7-15) quadrature on panels around the mode of the log-concave
    integrand (relative accuracy about 1e-13); past the last panel, panels are added until
    the tail's bound from log-concavity, ``f(x) / |d log f / d x|``, is negligible.  Below
    the first panel (16 scales under the mode) the integrand is under ``e^-128`` of its
    peak.  The compiled twin of :func:`dpclust.families.mallows.log_theta_integral`
    (SciPy's QUADPACK), for the split-merge moves, which need many of these integrals.
    """
    if b == 0.0:
        return -math.log(a)
    mode = theta_mode(a, b, m)
    curv = b * code_var(mode, m)
    scale = 1.0 / math.sqrt(curv) if curv > 0.0 else 1.0 / a
    slope0 = _slope(mode, a, b, m)
    if slope0 < 0.0:  # the mode at 0 with a falling density
        scale = min(scale, 1.0 / -slope0)
    top = log_density_theta(mode, a, b, m)
    los = np.empty(64)
    his = np.empty(64)
    prev = max(0.0, mode + _PANELS[0] * scale)
    total = 0.0
    for q in range(1, _PANELS.shape[0]):
        x = mode + _PANELS[q] * scale
        if x > prev:
            total += _adaptive(prev, x, a, b, m, top, scale, los, his)
            prev = x
    for _ in range(1000):  # the tail
        d = _slope(prev, a, b, m)
        if d < 0.0 and math.exp(log_density_theta(prev, a, b, m) - top) / -d <= 1e-17 * total:
            break
        width = 8.0 * scale if d >= 0.0 else 8.0 / -d
        total += _adaptive(prev, prev + width, a, b, m, top, scale, los, his)
        prev += width
    return top + math.log(total)


# ------------------------------------------------------------- exact draws of theta
@njit(cache=True)
def sample_theta(a, b, m, state, xs, hs, ds):
    """One exact draw of ``theta > 0`` with density ∝ ``exp(-a theta) psi_m(theta)^-b``.

    The density is log-concave (``log psi`` is a log-partition function, hence convex), so
    adaptive rejection sampling with tangent lines (Gilks & Wild 1992) is exact: the
    tangents bound the log density from above; every rejected point becomes a new tangent.
    ``xs``, ``hs``, ``ds`` are scratch arrays of length :data:`_MAX_HULL`.  Needs ``a > 0``.
    Returns ``(state, theta)``.
    """
    mode = theta_mode(a, b, m)
    curv = b * code_var(mode, m)
    slope0 = _slope(mode, a, b, m)
    if curv > 0.0:
        sd = 1.0 / math.sqrt(curv)
    else:
        sd = 1.0 / a
    if slope0 < 0.0:  # mode at 0 with a falling density
        sd = min(sd, 1.0 / -slope0)
    k = 0
    if mode > 0.0:
        left = mode - sd
        if left <= 0.0:
            left = 0.5 * mode
        xs[k] = left
        k += 1
    xs[k] = mode
    k += 1
    xs[k] = mode + sd
    k += 1
    for q in range(k):
        hs[q] = log_density_theta(xs[q], a, b, m)
        ds[q] = _slope(xs[q], a, b, m)
    ref = hs[1] if mode > 0.0 else hs[0]  # the log density's maximum, for scaling
    for _ in range(10000):
        # the envelope: tangent q on [z_{q-1}, z_q], z_{-1} = 0, z_{k-1} = inf
        total = 0.0
        # first pass: segment masses
        for q in range(k):
            lo, hi = _segment(q, k, xs, hs, ds)
            total += _segment_mass(lo, hi, xs[q], hs[q] - ref, ds[q])
        state, u = next_uniform(state)
        target = u * total
        acc = 0.0
        pick = k - 1
        lo = 0.0
        hi = np.inf
        for q in range(k):
            lo, hi = _segment(q, k, xs, hs, ds)
            w = _segment_mass(lo, hi, xs[q], hs[q] - ref, ds[q])
            acc += w
            if acc >= target:
                pick = q
                break
        lo, hi = _segment(pick, k, xs, hs, ds)
        state, u = next_uniform(state)
        x = _sample_segment(lo, hi, ds[pick], u)
        env = hs[pick] + ds[pick] * (x - xs[pick])
        lx = log_density_theta(x, a, b, m)
        state, u = next_uniform(state)
        if math.log(u) <= lx - env:
            return state, x
        if k < xs.shape[0]:  # adapt: the rejected point becomes a tangent
            p = k
            while p > 0 and xs[p - 1] > x:
                xs[p] = xs[p - 1]
                hs[p] = hs[p - 1]
                ds[p] = ds[p - 1]
                p -= 1
            xs[p] = x
            hs[p] = lx
            ds[p] = _slope(x, a, b, m)
            k += 1
    return state, mode  # unreachable in practice: the acceptance rate is high


@njit(cache=True)
def _segment(q, k, xs, hs, ds):
    """Interval on which tangent q is the lowest (the envelope), from the intersections."""
    lo = 0.0 if q == 0 else _intersect(q - 1, xs, hs, ds)
    hi = np.inf if q == k - 1 else _intersect(q, xs, hs, ds)
    lo = max(lo, 0.0)
    hi = max(hi, lo)
    return lo, hi


@njit(cache=True)
def _intersect(q, xs, hs, ds):
    """Where tangents q and q + 1 cross."""
    dd = ds[q] - ds[q + 1]
    if dd <= 1e-300:
        return 0.5 * (xs[q] + xs[q + 1])
    z = (hs[q + 1] - hs[q] - xs[q + 1] * ds[q + 1] + xs[q] * ds[q]) / dd
    z = max(z, xs[q])
    z = min(z, xs[q + 1])
    return z


@njit(cache=True)
def _segment_mass(lo, hi, x0, h0, d):
    """``∫_lo^hi exp(h0 + d (x - x0)) dx``."""
    if hi <= lo:
        return 0.0
    h_lo = h0 + d * (lo - x0)
    if hi == np.inf:
        return math.exp(h_lo) / -d  # d < 0 on the last segment
    width = hi - lo
    if abs(d * width) < 1e-12:
        return math.exp(h_lo) * width
    return math.exp(h_lo) * math.expm1(d * width) / d


@njit(cache=True)
def _sample_segment(lo, hi, d, u):
    """A draw from the density ∝ ``exp(d x)`` on ``[lo, hi)`` with uniform u."""
    if hi == np.inf:
        return lo + math.log1p(-u) / d
    width = hi - lo
    if abs(d * width) < 1e-12:
        return lo + u * width
    x = lo + math.log1p(u * math.expm1(d * width)) / d
    x = min(x, hi)
    return x


@njit(cache=True)
def slice_theta(theta, a, b, m, n_steps, state):
    """``n_steps`` slice-sampling updates (step-out and shrink, Neal 2003) of theta with
    log density :func:`log_density_theta`; the width is the density's scale at its mode,
    which depends on ``a, b, m`` only (not on the current point).  Returns
    ``(state, theta)``."""
    mode = theta_mode(a, b, m)
    curv = b * code_var(mode, m)
    w = 1.0 / math.sqrt(curv) if curv > 0.0 else 1.0 / a
    slope0 = _slope(mode, a, b, m)
    if slope0 < 0.0:
        w = min(w, 1.0 / -slope0)
    for _ in range(n_steps):
        state, u = next_uniform(state)
        level = log_density_theta(theta, a, b, m) + math.log1p(-u)
        state, u = next_uniform(state)
        lo = theta - u * w
        hi = lo + w
        while lo > 0.0 and log_density_theta(lo, a, b, m) > level:
            lo -= w
        while log_density_theta(hi, a, b, m) > level:
            hi += w
        lo = max(lo, 0.0)
        while True:
            state, u = next_uniform(state)
            x = lo + u * (hi - lo)
            if log_density_theta(x, a, b, m) > level:
                theta = x
                break
            if x < theta:
                lo = x
            else:
                hi = x
    return state, theta


@njit(cache=True)
def sample_code(theta, m, u):
    """Code ``k`` in 0..m with ``P(k) ∝ exp(-k theta)`` (inverse CDF with uniform u)."""
    if theta * (m + 1) < 1e-12:
        k = int(u * (m + 1))
    else:
        k = int(math.ceil(math.log1p(u * math.expm1(-(m + 1.0) * theta)) / -theta)) - 1  # noqa: RUF046
    k = max(k, 0)
    k = min(k, m)
    return k


# ------------------------------------------------------------------------- codes
@njit(cache=True, inline="always")
def code_of(orders, i, j, rank):
    """``s_{j+1}(pi_i | sigma)``: the items sigma ranks before ``pi_i(j)`` that are not among
    ``pi_i(0 .. j-1)`` (Mathematics §5), from rank look-ups (``rank[item]`` = its position
    in sigma) in O(j)."""
    r = rank[orders[i, j]]
    s = r
    for q in range(j):
        if rank[orders[i, q]] < r:
            s -= 1
    return s


@njit(cache=True)
def codes(orders, i, t, rank, out):
    """``out[j] = s_{j+1}(pi_i | sigma)`` for ``j < t`` (:func:`code_of`), O(t²)."""
    for j in range(t):
        out[j] = code_of(orders, i, j, rank)


@njit(cache=True)
def gm_log_likelihood(orders, i, t, rank, theta, cum_log_psi):
    """``log GM(pi_i | sigma, theta)`` with ``cum_log_psi[t] = sum_{j<t} log psi(theta_j)``."""
    s_total = 0.0
    for j in range(t):
        s_total += theta[j] * code_of(orders, i, j, rank)
    return -s_total - cum_log_psi[t]


@njit(cache=True)
def place_by_codes(orders, i, t, code, n, state, order, rank, free):
    """A central ranking whose codes for ranking i are ``code[:t]``: ``pi_i(j)`` goes to the
    ``(code[j] + 1)``-th still free position; the other items fill the free positions in a
    uniformly random order (Sample-σ-N1, Meilă & Chen 2010, Figure 4).  Writes ``order`` and
    ``rank``; returns the random state."""
    for p in range(n):
        order[p] = -1
        free[p] = 1
    for item in range(n):
        rank[item] = -1
    for j in range(t):
        c = code[j]
        for p in range(n):
            if free[p] == 1:
                if c == 0:
                    order[p] = orders[i, j]
                    rank[orders[i, j]] = p
                    free[p] = 0
                    break
                c -= 1
    # the rest: a uniformly random order of the unranked items in the free positions
    n_rest = 0
    for item in range(n):
        if rank[item] < 0:
            free[n_rest] = item  # reuse: the unranked items
            n_rest += 1
    p = 0
    for q in range(n_rest):
        state, u = next_uniform(state)
        pick = q + int(u * (n_rest - q))
        if pick >= n_rest:
            pick = n_rest - 1
        item = free[pick]
        free[pick] = free[q]
        free[q] = item
        while order[p] >= 0:
            p += 1
        order[p] = item
        rank[item] = p
    return state


@njit(cache=True)
def draw_given_one(orders, i, t, nu_r, nu, n, state, order, rank, theta, code, free,
                   xs, hs, ds):
    """Exact draw of ``(sigma, theta) ~ P(sigma, theta | pi_i)`` under the conjugate prior
    with uniform sigma: each ``theta_j`` from the prior, the code ``s_j | theta_j`` from its
    truncated geometric distribution, then sigma placed by the codes.

    Exact because summing the posterior over the (n - t)! central rankings with the same
    codes leaves ``prod_j P0(theta_j) exp(-theta_j s_j) / psi(theta_j)``, whose sum over
    ``s_j`` is ``P0(theta_j)`` (the identity behind Lemma 1 of Meilă & Chen 2010).
    """
    J = theta.shape[0]
    for j in range(J):
        state, theta[j] = sample_theta(nu_r[j], nu, n - j - 1, state, xs, hs, ds)
    for j in range(t):
        state, u = next_uniform(state)
        code[j] = sample_code(theta[j], n - j - 1, u)
    return place_by_codes(orders, i, t, code, n, state, order, rank, free)


# -------------------------------------------------------- central ranking | theta
@njit(cache=True)
def cluster_weights(orders, lengths, members, n_members, theta, a, E, present, mark):
    """Row weights ``a[i] = sum over (pi, j) with pi(j) = i of theta_j`` and corrections
    ``E[i, k] = sum over (pi, j) with pi(j) = i and k among pi(0..j-1) of theta_j`` of one
    cluster, so that ``R[i, k] = sum_j theta_j R_j[i, k] = a[i] - E[i, k]`` (k != i).

    ``a``, ``E`` and ``mark`` must be zero on entry for every item; the items that appear are
    listed in ``present`` (returns their number).  :func:`clear_weights` undoes it.
    """
    n_present = 0
    for q in range(n_members):
        n_present = add_ranking(orders, lengths, members[q], 1.0, theta, a, E, present, mark,
                                n_present)
    return n_present


@njit(cache=True)
def add_ranking(orders, lengths, i, weight, theta, a, E, present, mark, n_present):
    """Add ranking ``i``, counted ``weight`` times, to the weights of
    :func:`cluster_weights`; returns the new number of items present."""
    for j in range(lengths[i]):
        item = orders[i, j]
        if mark[item] == 0:
            mark[item] = 1
            present[n_present] = item
            n_present += 1
        w = weight * theta[j]
        a[item] += w
        for p in range(j):
            E[item, orders[i, p]] += w
    return n_present


@njit(cache=True)
def clear_weights(a, E, present, n_present, mark):
    for q in range(n_present):
        x = present[q]
        a[x] = 0.0
        mark[x] = 0
        for r in range(n_present):
            E[x, present[r]] = 0.0


@njit(cache=True)
def stagewise(a, E, present, n_present, mark, n, state, order, replay, col, alive, absent,
              logw):
    """The stagewise draw of a central ranking given theta (Meilă & Chen 2010, Lemma 2;
    Mathematics §5), or, with ``replay=True``, the log probability of proposing ``order``.

    Long on purpose: one compiled loop whose draw and replay share every stage's state
    (split in two, numba would pass that state through calls in the innermost loop).

    At each stage the next item k is drawn with probability ∝ ``exp(-sum_{i left} R[i,
    k])`` with ``R[i, k] = a[i] - E[i, k]`` (:func:`cluster_weights`, whose ``mark`` flags the
    items present).  Items absent from the cluster's data have equal weights at every stage,
    so they form one block: a stage costs O(items present) and a draw O(present² + n),
    never O(n³).  Returns ``(state, log_q, cost)``: ``log_q`` the log probability of
    proposing the order, ``cost = L_sigma(R) = sum over pairs (i' before i) of R[i, i']``;
    the exact conditional of sigma is ∝ ``exp(-cost)``.
    """
    total_a = 0.0
    for q in range(n_present):
        x = present[q]
        total_a += a[x]
        s = 0.0
        for r in range(n_present):
            s += E[present[r], x]
        col[x] = s
        alive[q] = 1
    n_abs = 0
    for x in range(n):
        if mark[x] == 0:
            absent[n_abs] = x
            n_abs += 1
    n_used = 0  # absent items placed so far (moved to the front of `absent`)
    n_left_present = n_present
    log_q = 0.0
    cost = 0.0
    for p in range(n):
        if n_left_present == 0:
            # only absent items remain: equal weights, a uniformly random order
            rem = n - p
            log_q -= math.lgamma(rem + 1.0)
            if not replay:
                for q in range(rem):
                    state, u = next_uniform(state)
                    lo = n_used + q
                    pick = lo + int(u * (n_abs - lo))
                    if pick >= n_abs:
                        pick = n_abs - 1
                    x = absent[pick]
                    absent[pick] = absent[lo]
                    absent[lo] = x
                    order[p + q] = x
            break
        n_abs_left = n_abs - n_used
        # stage weights (log): the present items left and the absent block
        m = -np.inf
        for q in range(n_present):
            if alive[q] == 1:
                x = present[q]
                w = -(total_a - a[x] - col[x])
                logw[q] = w
                m = max(m, w)
        w_abs = -np.inf
        if n_abs_left > 0:
            w_abs = math.log(n_abs_left) - total_a
            m = max(m, w_abs)
        z = 0.0
        for q in range(n_present):
            if alive[q] == 1:
                z += math.exp(logw[q] - m)
        z_present = z
        if n_abs_left > 0:
            z += math.exp(w_abs - m)
        log_z = m + math.log(z)
        chosen = -1
        if replay:
            x = order[p]
            if mark[x] == 1:
                for q in range(n_present):
                    if present[q] == x:
                        chosen = q
                        break
        else:
            state, u = next_uniform(state)
            target = u * z
            if target < z_present or n_abs_left == 0:
                acc = 0.0
                last = -1
                for q in range(n_present):
                    if alive[q] == 1:
                        last = q
                        acc += math.exp(logw[q] - m)
                        if acc >= target:
                            chosen = q
                            break
                if chosen < 0:  # rounding at the top end
                    chosen = last
        if chosen >= 0:
            x = present[chosen]
            c = total_a - a[x] - col[x]
            log_q += -c - log_z
            cost += c
            alive[chosen] = 0
            n_left_present -= 1
            total_a -= a[x]
            for q in range(n_present):
                if alive[q] == 1:
                    col[present[q]] -= E[x, present[q]]
            if not replay:
                order[p] = x
        else:
            # an absent item: the block (probability n_abs_left e^-total_a / Z), then one
            # of its items uniformly, so the item's own probability is e^-total_a / Z
            log_q += -total_a - log_z
            cost += total_a
            if not replay:
                state, u = next_uniform(state)
                pick = n_used + int(u * n_abs_left)
                if pick >= n_abs:
                    pick = n_abs - 1
                x = absent[pick]
                absent[pick] = absent[n_used]
                absent[n_used] = x
                order[p] = x
            n_used += 1
    return state, log_q, cost
