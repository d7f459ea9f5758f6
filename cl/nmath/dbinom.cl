// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dbinom_raw, dbinom_raw_dd, dbinom
// @depends: stirlerr, bd0, bd0_best, ddouble, dpq, rmath_constants, rmath_utils
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
// Built with DASKCL_ACCURACY_BEST, dbinom_raw for 0 < x < n < 1e300 is dbinom_raw_dd: both
// deviances in double-double (bd0_dd, bd0_best.cl) at n p and n q formed exactly, where R's
// bd0 loses ulp(x) of each and the rounding of n p costs |x - n p| ulps.
//
// dbinom(x, n, p) checks the arguments: NaN for p outside [0, 1] or n negative or not an
// integer; mass 0 for x non-integer (R warns; daskcl counts these), negative or infinite.

// R's algorithm; built with DASKCL_ACCURACY_BEST, dbinom_raw below takes dbinom_raw_dd
static double dbinom_raw_r(double x, double n, double p, double q, int give_log)
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

#ifdef DASKCL_ACCURACY_BEST     // bd0_best.cl is in the program in that mode only
// the mass at x of a size n = x + y (0 < x, y; n < 1e300) given as a double-double, with p
// and q = 1 - p as double-doubles, both > 0 (df and dbeta pass their sizes and probabilities
// unrounded this way)
double dbinom_raw_dd(double x, double y, dd_t n, dd_t p, dd_t q, int give_log)
{
    dd_t D = dd_add(bd0_dd(x, dd_mul(p, n)), bd0_dd(y, dd_mul(q, n)));
    double lo = stirlerr(n.hi) - stirlerr(x) - stirlerr(y) - D.lo
              - 0.5 * (M_LN_2PI + log(x) + log(y / n.hi));
    return give_log ? lo - D.hi : exp(-D.hi) * exp(lo);
}
#endif

double dbinom_raw(double x, double n, double p, double q, int give_log)
{
#ifdef DASKCL_ACCURACY_BEST
    if (x > 0 && x < n && n < 1e300 && p > 0 && q > 0)
        return dbinom_raw_dd(x, n - x, dd_d(n), dd_d(p), dd_d(q), give_log);
#endif
    return dbinom_raw_r(x, n, p, q, give_log);
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
