// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: df
// @depends: dbinom, dgamma, ddouble, dpq
// @source: the F density through the binomial mass (C. Loader (2000), "Fast and accurate
//          computation of binomial probabilities"): with p = m x / (n + m x), q = 1 - p,
//          f(x) = (m q / 2) dbinom((m-2)/2; (m+n-2)/2, p) for m >= 2 (a similar form for m < 2),
//          which is accurate for large degrees of freedom; n = Inf (or huge m) through the gamma
//          density.  Built with DASKCL_ACCURACY_BEST, the binomial mass takes p, q and the
//          size m/2 + n/2 as double-doubles (dbinom_raw_dd): their rounding costs about
//          (m + n) ulps for degrees of freedom beyond 1e4.

double df(double x, double m, double n, int give_log)
{
    if (isnan(x) || isnan(m) || isnan(n))
        return x + m + n;
    if (m <= 0 || n <= 0)
        ML_WARN_return_NAN;
    if (x < 0.)
        return R_D__0;
    if (x == 0.)
        return m > 2 ? R_D__0 : (m == 2 ? R_D__1 : ML_POSINF);
    if (!isfinite(m) && !isfinite(n)) // both +Inf: mass at 1
        return (x == 1.) ? ML_POSINF : R_D__0;
    if (!isfinite(n)) // m chi^2_m / m
        return dgamma(x, m / 2, 2. / m, give_log);
    if (m > 1e14) { // the code below is inaccurate there
        double dens = dgamma(1. / x, n / 2, 2. / n, give_log);
        return give_log ? dens - 2 * log(x) : dens / (x * x);
    }
#ifdef DASKCL_ACCURACY_BEST
    if (x < 1e300 && m + n < 1e300 && x * m > 0) {
        dd_t s = dd_add_d(dd_mul_d(dd_d(x), m), n);    // n + x m
        dd_t pd = dd_div(dd_mul_d(dd_d(x), m), s), qd = dd_div(dd_d(n), s);
        const double xb = (m >= 2) ? (m - 2) / 2 : m / 2, yb = n / 2;
        if (xb > 0) {
            double dens = dbinom_raw_dd(xb, yb, dd_add_d(dd_d(xb), yb), pd, qd, give_log);
            double f = (m >= 2) ? m * qd.hi / 2 : m * m * qd.hi / (2 * pd.hi * (m + n));
            return give_log ? log(f) + dens : f * dens;
        }
    }
#endif
    double f = 1. / (n + x * m);
    double q = n * f;
    double p = x * m * f;
    double dens;
    if (m >= 2) {
        f = m * q / 2;
        dens = dbinom_raw((m - 2) / 2, (m + n - 2) / 2, p, q, give_log);
    } else {
        f = m * m * q / (2 * p * (m + n));
        dens = dbinom_raw(m / 2, (m + n) / 2, p, q, give_log);
    }
    return give_log ? log(f) + dens : f * dens;
}
