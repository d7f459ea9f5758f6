// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnt
// @depends: pnt_best, pnt, dt, dnorm, lgammafn, dpq, rmath_constants, rmath_utils
// @source: the noncentral t density from the distribution function (Johnson, Kotz &
//          Balakrishnan, Continuous Univariate Distributions 2, 31.15):
//              f(x; df, ncp) = df / x (F(x sqrt((df + 2) / df); df + 2, ncp) - F(x; df, ncp)),
//          on the log scale; at x near 0 the limit
//              gamma((df + 1) / 2) / (gamma(df / 2) sqrt(pi df)) exp(-ncp^2 / 2);
//          the normal density N(ncp, 1) for df > 1e8 or infinite.
//
// dnt(x, df, ncp): NaN for df <= 0; dt for ncp = 0; 0 at x = +-Inf.  Built with
// DASKCL_ACCURACY_BEST (config key accuracy = "best"), finite df and ncp go to pnt_best.cl.

double dnt(double x, double df, double ncp, int give_log)
{
    if (isnan(x) || isnan(df))
        return x + df;
    if (df <= 0.0)
        ML_WARN_return_NAN;
    if (ncp == 0.0)
        return dt(x, df, give_log);
    if (!isfinite(x))
        return R_D__0;
#ifdef DASKCL_ACCURACY_BEST
    if (isfinite(df) && isfinite(ncp)) {
        double best = dnt_best(x, df, ncp, give_log);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif
    // the formula loses accuracy around df = 1e9: the normal limit
    if (!isfinite(df) || df > 1e8)
        return dnorm4(x, ncp, 1., give_log);
    double u;
    if (fabs(x) > sqrt(df * DBL_EPSILON)) {
        u = log(df) - log(fabs(x)) +
            log(fabs(pnt(x * sqrt((df + 2) / df), df + 2, ncp, 1, 0) - pnt(x, df, ncp, 1, 0)));
    } else {   // x ~= 0: the value at x = 0
        u = lgammafn((df + 1) / 2) - lgammafn(df / 2) - (M_LN_SQRT_PI + .5 * (log(df) + ncp * ncp));
    }
    return give_log ? u : exp(u);
}
