// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnchisq
// @depends: dnchisq_best, dchisq, dpois, ddouble, dpq, rmath_utils
// @source: the noncentral chi-squared density as a Poisson mixture of central ones (Johnson,
//          Kotz & Balakrishnan, Continuous Univariate Distributions 2, 29.2),
//              f(x; df, ncp) = sum_i dpois(i, ncp/2) dchisq(x; df + 2i),
//          summed from its largest term (i = the positive root of a quadratic) outwards with
//          the term ratios, until they fall below 5e-15 (R's arrangement); where the largest term
//          underflows, the central approximation of Abramowitz & Stegun 26.4.27 for ncp > 1000
//          or the log scale.
//
// dnchisq(x, df, ncp): NaN for non-finite or negative df, ncp; +Inf at x = 0 for df < 2.  The
// sum is accumulated in double-double (R: long double).  Built with DASKCL_ACCURACY_BEST
// (config key accuracy = "best"), finite x > 0 go to dnchisq_best.cl.

double dnchisq(double x, double df, double ncp, int give_log)
{
    const double eps = 5e-15;
    if (isnan(x) || isnan(df) || isnan(ncp))
        return x + df + ncp;
    if (!isfinite(df) || !isfinite(ncp) || ncp < 0 || df < 0)
        ML_WARN_return_NAN;
    if (x < 0)
        return R_D__0;
    if (x == 0 && df < 2.)
        return ML_POSINF;
    if (ncp == 0)
        return (df > 0) ? dchisq(x, df, give_log) : R_D__0;
    if (x == ML_POSINF)
        return R_D__0;
#ifdef DASKCL_ACCURACY_BEST
    if (x > 0.) {
        double best = dnchisq_best(x, df, ncp, give_log);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif

    double ncp2 = 0.5 * ncp;
    // the largest term
    double imax = ceil((-(2 + df) + sqrt((2 - df) * (2 - df) + 4 * ncp * x)) / 4);
    if (imax < 0)
        imax = 0;
    double dfmid = 0., mid;
    if (isfinite(imax)) {
        dfmid = df + 2 * imax;
        mid = dpois_raw(imax, ncp2, 0) * dchisq(x, dfmid, 0);
    } else {
        mid = 0;
    }
    if (mid == 0) {
        // underflow: the central chi-squared approximation where it is appropriate
        if (give_log || ncp > 1000.) {
            double nl = df + ncp, ic = nl / (nl + ncp);
            return dchisq(x * ic, nl * ic, give_log);
        }
        return R_D__0;
    }
    // R sums in long double, whose exponent range keeps the terms of a denormal mid (down to
    // ~1e-322) at full precision: scale such sums by 2^600 (exactly) and compare unscaled
    double sc = (mid < 0x1p-900) ? 0x1p+600 : 1., usc = 1. / sc;
    dd_t sum = dd_d(mid * sc), term = dd_d(mid * sc);
    // the upper tail of the sum
    double dfr = dfmid, i = imax, q;
    double x2 = x * ncp2;
    do {
        i++;
        q = x2 / i / dfr;
        dfr += 2;
        term = dd_mul_d(term, q);
        sum = dd_add(sum, term);
    } while (q >= 1 || term.hi * usc * q > (1 - q) * eps || term.hi > 1e-10 * sum.hi);
    // the lower tail
    term = dd_d(mid * sc);
    dfr = dfmid;
    i = imax;
    while (i != 0) {
        dfr -= 2;
        q = i * dfr / x2;
        i--;
        term = dd_mul_d(term, q);
        sum = dd_add(sum, term);
        if (q < 1 && term.hi * usc * q <= (1 - q) * eps)
            break;
    }
    return R_D_val(dd_hi(sum) * usc);
}
