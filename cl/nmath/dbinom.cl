// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dbinom_raw, dbinom
// @depends: stirlerr, bd0, dpq, rmath_constants, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities":
//          f(x; n, p) = exp(stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, np)
//                           - bd0(n - x, nq)) sqrt(n / (2 pi x (n - x))).
//
// dbinom_raw(x, n, p, q) is the binomial mass with q = 1 - p given separately (so that it can
// be exact when p is near 1); x and n need not be integers (dbeta, pbeta use it that way).
// The ends x = 0 and x = n are n log q and n log p, through bd0 when q (resp. p) is small;
// the middle is Loader's saddle point form with log(2 pi x (n - x) / n) computed as
// log(2 pi) + log x + log1p(-x/n), accurate for x << n.
//
// dbinom(x, n, p) checks the arguments: NaN for p outside [0, 1] or n negative or not an
// integer; mass 0 for x non-integer (R warns; daskcl counts these), negative or infinite.

double dbinom_raw(double x, double n, double p, double q, int give_log)
{
    if (p == 0)
        return (x == 0) ? R_D__1 : R_D__0;
    if (q == 0)
        return (x == n) ? R_D__1 : R_D__0;

    double lc;
    if (x == 0) {
        if (n == 0)
            return R_D__1;
        lc = (p < 0.1) ? -bd0(n, n * q) - n * p : n * log(q);
        return R_D_exp(lc);
    }
    if (x == n) {
        lc = (q < 0.1) ? -bd0(n, n * p) - n * q : n * log(p);
        return R_D_exp(lc);
    }
    if (x < 0 || x > n)
        return R_D__0;

    lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, n * p) - bd0(n - x, n * q);
    double lf = M_LN_2PI + log(x) + log1p(-x / n);   // log(2 pi x (n - x) / n)
    return R_D_exp(lc - 0.5 * lf);
}

double dbinom(double x, double n, double p, int give_log)
{
    if (isnan(x) || isnan(n) || isnan(p))
        return x + n + p;
    if (p < 0 || p > 1 || R_D_negInonint(n))
        ML_WARN_return_NAN;
    R_D_nonint_check(x);
    if (x < 0 || !isfinite(x))
        return R_D__0;
    n = R_forceint(n);
    x = R_forceint(x);
    return dbinom_raw(x, n, p, 1 - p, give_log);
}
