"""Numba kernel face of the table families: per-row operations on cluster slots.

The families of :mod:`dpclust.families.table` (a product of independent columns: Normal–
Gamma for real columns, Dirichlet–categorical for categories and yes/no columns, Gamma–
Poisson for counts) share these functions.  A missing cell (NaN, or code -1) is left out of
both the statistics and the likelihood, which under missing-at-random is the exact
marginal of the observed cells (the columns are independent given the cluster).  Every row
carries a weight ``w`` (1 unless ``sample_weight`` says otherwise): its likelihood is raised
to the power ``w``, so its statistics count ``w`` times.

See :class:`dpclust.families.base.FamilyKernel` for the contract and
:mod:`dpclust.families._table_math` for the same formulas in NumPy.
"""

from __future__ import annotations

import math

from numba import njit

_LOG_2PI = math.log(2.0 * math.pi)

# ------------------------------------------------------------------------- layout
# kdata  = (real (n, dg) shifted by the prior mean, NaN missing;
#           code (n, dc) int64: the level's index among all the coded columns' levels
#           (its index within its column plus the column's offset), -1 missing;
#           count (n, dp), NaN missing;  weight (n,);  log_fact (n,) = sum_j log x_ij!)
# kstats = (rows (cap,), gn, gmean, gm2 (cap, dg), cn (cap, dc), cc (cap, C),
#           pn, ps (cap, dp), plf (cap,),
#           tc, tmu, tsc, te (cap, dg): each real column's Student-t predictive of a row of
#           weight 1, log t(x) = tc - te log(1 + tsc (x - tmu)^2), kept with the slot)
# khyper = (g (4, dg): kappa0, a0, b0, a0 log b0 - lgamma(a0);
#           alpha (C,), alpha_sum (dc,), offsets (dc + 1,) int64;
#           p (3, dp): shape a, rate b, a log b - lgamma(a))


@njit(cache=True, _nrt=False)
def _refresh_t(kstats, k, j, khyper):
    """Slot k's Student-t predictive of real column j for a row of weight 1: ``2 a_n``
    degrees of freedom, location ``m_n``, squared scale ``b_n (kappa_n + 1) / (a_n
    kappa_n)`` (the ratio of marginals in closed form), kept as ``tc - te log(1 + tsc (x -
    tmu)^2)`` so that a prediction costs one logarithm a cell."""
    rows, gn, gmean, gm2, cn, cc, pn, ps, plf, tc, tmu, tsc, te = kstats
    g = khyper[0]
    n = gn[k, j]
    mean = gmean[k, j]
    kn, an, bn = normal_gamma_posterior(n, mean, gm2[k, j], g[0, j], g[1, j], g[2, j])
    tmu[k, j] = n * mean / kn
    tsc[k, j] = kn / (2.0 * bn * (kn + 1.0))
    te[k, j] = an + 0.5
    tc[k, j] = (math.lgamma(an + 0.5) - math.lgamma(an)
                - 0.5 * math.log(2.0 * math.pi * bn * (kn + 1.0) / kn))


@njit(cache=True, _nrt=False)
def _tab_reset(kstats, k, khyper):
    rows, gn, gmean, gm2, cn, cc, pn, ps, plf, tc, tmu, tsc, te = kstats
    rows[k] = 0.0
    plf[k] = 0.0
    for j in range(gn.shape[1]):
        gn[k, j] = 0.0
        gmean[k, j] = 0.0
        gm2[k, j] = 0.0
        _refresh_t(kstats, k, j, khyper)
    for j in range(cn.shape[1]):
        cn[k, j] = 0.0
    for c in range(cc.shape[1]):
        cc[k, c] = 0.0
    for j in range(pn.shape[1]):
        pn[k, j] = 0.0
        ps[k, j] = 0.0


@njit(cache=True, _nrt=False)
def _tab_add(kdata, i, kstats, k, khyper):
    real, code, count, weight, log_fact = kdata
    rows, gn, gmean, gm2, cn, cc, pn, ps, plf, tc, tmu, tsc, te = kstats
    w = weight[i]
    rows[k] += 1.0
    for j in range(real.shape[1]):
        x = real[i, j]
        if x == x:
            n1 = gn[k, j] + w
            delta = x - gmean[k, j]
            gmean[k, j] += w * delta / n1
            gm2[k, j] += w * delta * (x - gmean[k, j])
            gn[k, j] = n1
            _refresh_t(kstats, k, j, khyper)
    for j in range(code.shape[1]):
        c = code[i, j]
        if c >= 0:
            cn[k, j] += w
            cc[k, c] += w
    for j in range(count.shape[1]):
        x = count[i, j]
        if x == x:
            pn[k, j] += w
            ps[k, j] += w * x
    plf[k] += w * log_fact[i]


@njit(cache=True, _nrt=False)
def _tab_remove(kdata, i, kstats, k, khyper):
    real, code, count, weight, log_fact = kdata
    rows, gn, gmean, gm2, cn, cc, pn, ps, plf, tc, tmu, tsc, te = kstats
    if rows[k] <= 1.0:
        _tab_reset(kstats, k, khyper)
        return
    w = weight[i]
    rows[k] -= 1.0
    for j in range(real.shape[1]):
        x = real[i, j]
        if x == x:
            n0 = gn[k, j] - w
            if n0 <= 1e-12 * w:
                gn[k, j] = 0.0
                gmean[k, j] = 0.0
                gm2[k, j] = 0.0
            else:
                old = gmean[k, j]
                gmean[k, j] = (gn[k, j] * old - w * x) / n0
                gm2[k, j] = max(gm2[k, j] - w * (x - gmean[k, j]) * (x - old), 0.0)
                gn[k, j] = n0
            _refresh_t(kstats, k, j, khyper)
    for j in range(code.shape[1]):
        c = code[i, j]
        if c >= 0:
            cn[k, j] = max(cn[k, j] - w, 0.0)
            cc[k, c] = max(cc[k, c] - w, 0.0)
    for j in range(count.shape[1]):
        x = count[i, j]
        if x == x:
            pn[k, j] = max(pn[k, j] - w, 0.0)
            ps[k, j] = max(ps[k, j] - w * x, 0.0)
    plf[k] -= w * log_fact[i]


# ----------------------------------------------------- one column's log marginal
@njit(cache=True, _nrt=False)
def normal_gamma_posterior(n, mean, m2, kappa0, a0, b0):
    """``(kappa_n, a_n, b_n)`` of a real column's cells in one cluster (weighted count
    ``n``, mean and centred sum of squares ``m2``, shifted by the prior mean)."""
    kn = kappa0 + n
    return kn, a0 + 0.5 * n, b0 + 0.5 * m2 + 0.5 * kappa0 * n * mean * mean / kn


@njit(cache=True, _nrt=False)
def normal_gamma_log_marginal(n, mean, m2, kappa0, a0, b0, const):
    """``log f`` of a real column's cells in one cluster (weighted count ``n``, mean and
    centred sum of squares ``m2``, in units shifted by the prior mean), Normal–Gamma prior
    ``mu | tau ~ N(0, 1 / (kappa0 tau))``, ``tau ~ Gamma(a0, rate b0)``; ``const = a0 log b0
    - lgamma(a0)``."""
    if n <= 0.0:
        return 0.0
    kn, an, bn = normal_gamma_posterior(n, mean, m2, kappa0, a0, b0)
    return (const + math.lgamma(an) - an * math.log(bn) + 0.5 * math.log(kappa0 / kn)
            - 0.5 * n * _LOG_2PI)


@njit(cache=True, _nrt=False)
def gamma_poisson_log_marginal(n, s, a, b, const):
    """``log f`` of a count column's cells in one cluster without the ``log x!`` terms
    (weighted count ``n``, weighted sum ``s``), ``lambda ~ Gamma(a, rate b)``, ``const = a
    log b - lgamma(a)``."""
    if n <= 0.0:
        return 0.0
    return const + math.lgamma(a + s) - (a + s) * math.log(b + n)


@njit(cache=True, _nrt=False)
def _tab_log_marginal(kstats, k, khyper):
    rows, gn, gmean, gm2, cn, cc, pn, ps, plf, tc, tmu, tsc, te = kstats
    g, alpha, alpha_sum, offsets, p = khyper
    s = 0.0
    for j in range(gn.shape[1]):
        s += normal_gamma_log_marginal(gn[k, j], gmean[k, j], gm2[k, j], g[0, j], g[1, j],
                                       g[2, j], g[3, j])
    for j in range(cn.shape[1]):
        if cn[k, j] > 0.0:
            s += math.lgamma(alpha_sum[j]) - math.lgamma(alpha_sum[j] + cn[k, j])
            for c in range(offsets[j], offsets[j + 1]):
                if cc[k, c] > 0.0:
                    s += math.lgamma(alpha[c] + cc[k, c]) - math.lgamma(alpha[c])
    for j in range(pn.shape[1]):
        s += gamma_poisson_log_marginal(pn[k, j], ps[k, j], p[0, j], p[1, j], p[2, j])
    return s - plf[k]


# ------------------------------------------------------------ one row's predictive
@njit(cache=True, _nrt=False)
def _tab_log_predictive(kdata, i, kstats, k, khyper):
    """``log f(x_i | X_k)``: a ratio of marginals per observed cell (for ``w = 1`` the
    Student-t, the categorical share and the negative binomial)."""
    real, code, count, weight, log_fact = kdata
    rows, gn, gmean, gm2, cn, cc, pn, ps, plf, tc, tmu, tsc, te = kstats
    g, alpha, alpha_sum, offsets, p = khyper
    w = weight[i]
    s = -w * log_fact[i]
    # a row of weight 1: sum_j tc - te log(1 + u_j), with the factors (1 + u_j) of equal
    # exponents multiplied before one logarithm (the exponents differ only where the
    # columns' observed counts do)
    prod = 1.0
    e = 0.0
    for j in range(real.shape[1]):
        x = real[i, j]
        if x == x and w == 1.0:
            d = x - tmu[k, j]
            if te[k, j] != e or prod > 1e150:
                s -= e * math.log(prod)
                prod = 1.0
                e = te[k, j]
            prod *= 1.0 + tsc[k, j] * d * d
            s += tc[k, j]
        elif x == x:  # another weight: the ratio of the marginals with and without x
            n = gn[k, j]
            mean = gmean[k, j]
            n1 = n + w
            mean1 = mean + w * (x - mean) / n1
            m21 = gm2[k, j] + w * (x - mean) * (x - mean1)
            s += (normal_gamma_log_marginal(n1, mean1, m21, g[0, j], g[1, j], g[2, j], g[3, j])
                  - normal_gamma_log_marginal(n, mean, gm2[k, j], g[0, j], g[1, j], g[2, j],
                                              g[3, j]))
    s -= e * math.log(prod)
    for j in range(code.shape[1]):
        c = code[i, j]
        if c >= 0:
            a = alpha[c] + cc[k, c]
            t = alpha_sum[j] + cn[k, j]
            if w == 1.0:
                s += math.log(a / t)
            else:
                s += math.lgamma(a + w) - math.lgamma(a) - math.lgamma(t + w) + math.lgamma(t)
    for j in range(count.shape[1]):
        x = count[i, j]
        if x == x:
            a = p[0, j] + ps[k, j]
            b = p[1, j] + pn[k, j]
            s += (math.lgamma(a + w * x) - math.lgamma(a) + a * math.log(b)
                  - (a + w * x) * math.log(b + w))
    return s


@njit(cache=True, _nrt=False)
def _tab_log_join_gain(kstats, a, b, khyper):
    """``log f(X_a ∪ X_b) - log f(X_a) - log f(X_b)`` from the two slots' statistics."""
    rows, gn, gmean, gm2, cn, cc, pn, ps, plf, tc, tmu, tsc, te = kstats
    g, alpha, alpha_sum, offsets, p = khyper
    if rows[a] == 0.0 or rows[b] == 0.0:
        return 0.0
    s = 0.0
    for j in range(gn.shape[1]):
        na = gn[a, j]
        nb = gn[b, j]
        if na > 0.0 and nb > 0.0:
            n = na + nb
            delta = gmean[b, j] - gmean[a, j]
            mean = gmean[a, j] + nb * delta / n
            m2 = gm2[a, j] + gm2[b, j] + delta * delta * na * nb / n
            s += (normal_gamma_log_marginal(n, mean, m2, g[0, j], g[1, j], g[2, j], g[3, j])
                  - normal_gamma_log_marginal(na, gmean[a, j], gm2[a, j], g[0, j], g[1, j],
                                              g[2, j], g[3, j])
                  - normal_gamma_log_marginal(nb, gmean[b, j], gm2[b, j], g[0, j], g[1, j],
                                              g[2, j], g[3, j]))
    for j in range(cn.shape[1]):
        if cn[a, j] > 0.0 and cn[b, j] > 0.0:
            t = alpha_sum[j]
            s += (math.lgamma(t + cn[a, j]) + math.lgamma(t + cn[b, j]) - math.lgamma(t)
                  - math.lgamma(t + cn[a, j] + cn[b, j]))
            for c in range(offsets[j], offsets[j + 1]):
                if cc[a, c] > 0.0 and cc[b, c] > 0.0:
                    s += (math.lgamma(alpha[c] + cc[a, c] + cc[b, c]) + math.lgamma(alpha[c])
                          - math.lgamma(alpha[c] + cc[a, c]) - math.lgamma(alpha[c] + cc[b, c]))
    for j in range(pn.shape[1]):
        if pn[a, j] > 0.0 and pn[b, j] > 0.0:
            s += (gamma_poisson_log_marginal(pn[a, j] + pn[b, j], ps[a, j] + ps[b, j], p[0, j],
                                             p[1, j], p[2, j])
                  - gamma_poisson_log_marginal(pn[a, j], ps[a, j], p[0, j], p[1, j], p[2, j])
                  - gamma_poisson_log_marginal(pn[b, j], ps[b, j], p[0, j], p[1, j], p[2, j]))
    return s


# ------------------------------------------------------- instantiated-parameter pass
# kparams = (mu (K, dg) shifted, half_log_tau (K, dg) = 0.5 log tau - 0.5 log 2 pi,
#            half_tau (K, dg), log_prob (K, C), log_rate (K, dp), rate (K, dp));
# raw statistics row = [rows, gn (dg), sum w x (dg), sum w x^2 (dg), cn (dc), cc (C),
#                       pn (dp), ps (dp), plf].

@njit(cache=True, _nrt=False)
def _tab_log_likelihood(kdata, i, kparams, k):
    real, code, count, weight, log_fact = kdata
    mu, half_log_tau, half_tau, log_prob, log_rate, rate = kparams
    s = 0.0
    for j in range(real.shape[1]):
        x = real[i, j]
        if x == x:
            d = x - mu[k, j]
            s += half_log_tau[k, j] - half_tau[k, j] * d * d
    for j in range(code.shape[1]):
        c = code[i, j]
        if c >= 0:
            s += log_prob[k, c]
    for j in range(count.shape[1]):
        x = count[i, j]
        if x == x:
            s += x * log_rate[k, j] - rate[k, j]
    return weight[i] * (s - log_fact[i])


@njit(cache=True, _nrt=False)
def _tab_log_likelihoods(kdata, i, kparams, comps, start, m, out):
    """``out[a] = log f(x_i; theta_{comps[start + a]})`` for ``a < m``."""
    for a in range(m):
        out[a] = _tab_log_likelihood(kdata, i, kparams, comps[start + a])


@njit(cache=True, _nrt=False)
def _tab_accumulate(kdata, i, acc, slot):
    real, code, count, weight, log_fact = kdata
    w = weight[i]
    dg = real.shape[1]
    dc = code.shape[1]
    dp = count.shape[1]
    acc[slot, 0] += 1.0
    for j in range(dg):
        x = real[i, j]
        if x == x:
            acc[slot, 1 + j] += w
            acc[slot, 1 + dg + j] += w * x
            acc[slot, 1 + 2 * dg + j] += w * x * x
    base = 1 + 3 * dg
    width = acc.shape[1]
    n_cat = width - (base + dc + 2 * dp + 1)
    for j in range(dc):
        c = code[i, j]
        if c >= 0:
            acc[slot, base + j] += w
    for j in range(dc):
        c = code[i, j]
        if c >= 0:
            acc[slot, base + dc + c] += w
    base2 = base + dc + n_cat
    for j in range(dp):
        x = count[i, j]
        if x == x:
            acc[slot, base2 + j] += w
            acc[slot, base2 + dp + j] += w * x
    acc[slot, width - 1] += w * log_fact[i]


# ------------------------------------------------------------ batched statistics
@njit(cache=True)
def table_stats_kernel(real, code, count, weight, log_fact, offsets, labels, rows, gn, gmean,
                       gm2, cn, cc, pn, ps, plf):
    """Every cluster's statistics (the NumPy face's ``TableStats``, arrays zeroed by the
    caller) in two passes over the rows: weighted sums, then the centred sums of squares
    about each cluster's mean (no cancellation far from the origin).  ``code`` holds each
    level's index within its column."""
    n = real.shape[0]
    for i in range(n):
        k = labels[i]
        w = weight[i]
        rows[k] += 1.0
        for j in range(real.shape[1]):
            x = real[i, j]
            if x == x:
                gn[k, j] += w
                gmean[k, j] += w * x
        for j in range(code.shape[1]):
            c = code[i, j]
            if c >= 0:
                cn[k, j] += w
                cc[k, offsets[j] + c] += w
        for j in range(count.shape[1]):
            x = count[i, j]
            if x == x:
                pn[k, j] += w
                ps[k, j] += w * x
        plf[k] += w * log_fact[i]
    for k in range(gn.shape[0]):
        for j in range(gn.shape[1]):
            if gn[k, j] > 0.0:
                gmean[k, j] /= gn[k, j]
    for i in range(n):
        k = labels[i]
        w = weight[i]
        for j in range(real.shape[1]):
            x = real[i, j]
            if x == x:
                d = x - gmean[k, j]
                gm2[k, j] += w * d * d
