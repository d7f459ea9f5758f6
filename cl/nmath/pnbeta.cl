// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnbeta_raw, pnbeta2, pnbeta
// @depends: pnbeta_best, toms708, lbeta, lgammafn, ddouble, dpq, rmath_utils
// @source: R. V. Lenth (1987), "Algorithm AS 226: Computing noncentral beta probabilities",
//          Applied Statistics 36, 241-244, with H. Frick's (1990) improvement "Algorithm AS R84",
//          Applied Statistics 39, 311-312: the Poisson mixture of incomplete beta functions,
//          started at the Poisson mode minus 7 standard deviations and summed upwards with the
//          recurrence I_x(a + j + 1, b) = I_x(a + j, b) - x^(a+j) (1-x)^b / ((a + j) B(a + j, b)),
//          until the error bound falls below errmax = 1e-9 (R's value; AS 226: 1e-6) or after
//          10000 terms (R; AS 226: 100).  I_x(a0, b) from TOMS 708 (bratio).
//
// pnbeta(x, a, b, ncp); pnbeta2(x, 1 - x, ...) (pnf passes 1 - x accurately); pnbeta_raw the
// lower tail as a double-double (R: long double), so that the upper tail 1 - P keeps R's
// digits, times 1 / *usc (a power of 2: tails below DBL_MIN keep their digits, as in R's long
// double).  NaN for ncp < 0, a <= 0 or b <= 0.  Built with DASKCL_ACCURACY_BEST (config key
// accuracy = "best"), pnbeta2 of 0 < x < 1 and finite a, b > 0, 0 < ncp < 1e15 goes to
// pnbeta_best.cl.

// (double) g for a double-double g scaled by 2^600: R's I_x is a double, whose decrements
// below DBL_MIN are rounded to multiples of 2^-1074, 2^-474 scaled (ties by the low part)
static inline double pnbeta_subnormal(dd_t g)
{
    if (fabs(g.hi) >= 0x1p-421)
        return g.hi;
    double t = g.hi * 0x1p+474, r = rint(t), f = t - floor(t);
    if (f == 0.5 && g.lo != 0.)
        r = (g.lo > 0.) ? floor(t) + 1. : floor(t);
    return r * 0x1p-474;
}

dd_t pnbeta_raw(double x, double o_x, double a, double b, double ncp, double *usc)
{
    const double errmax = 1.0e-9;
    const int itrmax = 10000;

    *usc = 1.;
    if (ncp < 0. || a <= 0. || b <= 0.)
        return dd_d(ML_NAN);
    if (x < 0. || o_x > 1. || (x == 0. && o_x == 1.))
        return dd_d(0.);
    if (x > 1. || o_x < 0. || (x == 1. && o_x == 0.))
        return dd_d(1.);

    double c = ncp / 2.;
    // the series starts 7 standard deviations below the Poisson mode
    double x0 = floor(fmax2(c - 7. * sqrt(c), 0.));
    // its index j runs to x0 + itrmax, and beyond 2^53 (ncp above ~1.8e16) j + 1 == j: the
    // terms' recurrences no longer hold and R's loop never ends (pnbeta(0.04, 5.8e93, 1.2e176,
    // 1e20) did not return, in R and in daskcl; found by a random search against libRmath,
    // 2026-11-28).  NaN, with R's warning, instead of a hang or a wrong value
    if (x0 + itrmax >= 0x1p53)
        return dd_d(ML_NAN);
    double a0 = a + x0;
    double lb = lbeta(a0, b);
    double temp, tmp_c;
    int ierr;
    bratio(a0, b, x, o_x, &temp, &tmp_c, &ierr, 0);   // I_x(a0, b) through (x, 1 - x)

    // log x as R, except where x rounded to 1 and 1 - x = o_x > 0 (pnf's huge df1 / df2 x):
    // there a0 log(x) = 0 for -a0 o_x, which gave gx = Inf and NaN (R: -Inf or Inf)
    double lgx = a0 * (x == 1. ? log1p(-o_x) : log(x)) + b * (x < .5 ? log1p(-x) : log(o_x))
                 - lb - log(a0);
    // R sums in long double, whose exponent range keeps the products q I_x(a0 + j, b) below
    // DBL_MIN (lower tails down to ~1e-340, whose logs R gives): where I_x(a0, b) < 2^-400,
    // sum I_x and its decrements gx scaled by 2^600 (exactly; exp(lgx) 2^600 as
    // exp(lgx + 416) (2^600 e^-416) where exp(lgx) would be subnormal), and unscale at the end;
    // I_x itself stays R's double, subnormal below DBL_MIN (pnbeta_subnormal)
    double sc = 1.;
    dd_t gx;
    if (temp > 0. && temp < 0x1p-400) {
        sc = 0x1p+600;
        *usc = 0x1p-600;
        temp *= sc;
        gx = dd_d(lgx > -700. ? exp(lgx) * sc : exp(lgx + 416.) * 0.89431996600444021542);
    } else {
        gx = dd_d(exp(lgx));
    }
    dd_t q;
    if (a0 > a)
        q = dd_d(exp(-c + x0 * log(c) - lgammafn(x0 + 1.)));
    else
        q = dd_d(exp(-c));
    dd_t sumq = dd_sub(dd_d(1.), q);
    dd_t ans = dd_mul_d(q, temp);

    // the following terms until convergence
    double errbd, j = floor(x0);   // x0 may be in the billions
    do {
        j++;
        temp -= (sc == 1.) ? dd_hi(gx) : pnbeta_subnormal(gx);
        gx = dd_mul_d(gx, x * (a + b + j - 1.) / (a + j));
        q = dd_mul_d(q, c / j);
        sumq = dd_sub(sumq, q);
        ans = dd_add(ans, dd_mul_d(q, temp));
        errbd = dd_hi(dd_mul(dd_sub(dd_d(temp), gx), sumq)) * *usc;
    } while (errbd > errmax && j < itrmax + x0);
    // (errbd > errmax: R warns about precision; j >= itrmax + x0: no convergence)
    return ans;
}

double pnbeta2(double x, double o_x, double a, double b, double ncp, int lower_tail, int log_p)
{
#ifdef DASKCL_ACCURACY_BEST
    if (x > 0. && o_x > 0. && x < 1. && o_x < 1. && a > 0. && b > 0. && isfinite(a) &&
        isfinite(b) && ncp > 0. && ncp < 1e15) {
        double best = pnbeta_best(x, o_x, a, b, ncp, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif
    double usc;
    dd_t ans = pnbeta_raw(x, o_x, a, b, ncp, &usc);
    if (isnan(ans.hi))
        ML_WARN_return_NAN;
    if (lower_tail) {
        // a probability is at most 1: for ncp/2 below an ulp of 1, exp(-ncp/2) rounds to 1 and
        // the series' next terms (ncp/2) I_x(a + 1, b) ... push the double-double sum to
        // 1 + ncp/2 (R's long double rounds that back to 1 below ncp/2 = 2^-64, giving
        // log P = 0; daskcl gave log P = +ncp/2 > 0, found by a random search against
        // libRmath; a scaled sum, usc < 1, is below 2^-400 unscaled)
        if (usc == 1. && (ans.hi > 1. || (ans.hi == 1. && ans.lo > 0.)))
            ans = dd_d(1.);
        if (!log_p)
            return dd_hi(ans) * usc;
        // (unscaled where it stays normal)
        return (ans.hi * usc >= DBL_MIN) ? dd_log(dd_mul_d(ans, usc)) : dd_log(ans) - 600 * M_LN2;
    }
    ans = dd_mul_d(ans, usc);   // (a lower tail below 2^-400 leaves 1 - ans = 1)
    // (R warns when ans > 1 - 1e-10: the upper tail loses precision)
    if (ans.hi > 1. || (ans.hi == 1. && ans.lo > 0.))
        ans = dd_d(1.);
    dd_t r = dd_sub(dd_d(1.), ans);
    return log_p ? dd_log(r) : dd_hi(r);
}

double pnbeta(double x, double a, double b, double ncp, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(a) || isnan(b) || isnan(ncp))
        return x + a + b + ncp;
    R_P_bounds_01(x, 0., 1.);
    return pnbeta2(x, 1 - x, a, b, ncp, lower_tail, log_p);
}
