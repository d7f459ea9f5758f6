// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qf
// @depends: qbeta, qchisq, pf, df, qpolish, dpq
// @source: the F quantile from the beta quantile: F = (1/B - 1) n/m with B the quantile of
//          Beta(n/2, m/2) on the other tail (Abramowitz & Stegun 26.6.2); for more than 4e5
//          degrees of freedom on the larger side the chi-squared limits, as R does.
//          Built with DASKCL_ACCURACY_BEST, that value (or, where it is 0 or not finite, the
//          beta form taken on the side where B is below 1/2) is refined by Newton's method on
//          the log of pf's smaller tail (qpolish.cl): the chi-squared limits are off by 1e-5
//          relative at 4e5 degrees of freedom, and 1/B - 1 loses B's digits where B is near 1.

// R's algorithm; built with DASKCL_ACCURACY_BEST, qf below refines its value
static double qf_r(double p, double df1, double df2, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(df1) || isnan(df2))
        return p + df1 + df2;
    if (df1 <= 0. || df2 <= 0.)
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0, ML_POSINF);

    if (df1 <= df2 && df2 > 4e5) {
        if (!isfinite(df1)) // df1 = df2 = Inf
            return 1.;
        return qchisq(p, df1, lower_tail, log_p) / df1;
    }
    if (df1 > 4e5) // and df2 < df1
        return df2 / qchisq(p, df2, !lower_tail, log_p);

    // a quantile of the beta at 1 is an F quantile of 0, also where df2 / df1 overflows
    // (df1 = 1e-310: 0 * Inf was NaN with a warning; R's qbeta there steps above 1, and its
    // qf gives -Inf)
    const double t = 1. / qbeta(p, df2 / 2, df1 / 2, !lower_tail, log_p) - 1.;
    p = (t == 0.) ? 0. : t * (df2 / df1);
    return isnan(p) ? ML_NAN : p;
}

double qf(double p, double df1, double df2, int lower_tail, int log_p)
{
#ifdef DASKCL_ACCURACY_BEST
    double x = qf_r(p, df1, df2, lower_tail, log_p);
    if (isnan(x) && !isnan(p + df1 + df2) && !(df1 <= 0. || df2 <= 0.)
        && !(log_p ? p > 0 : (p < 0 || p > 1)))
        x = 0.;     // R's NaN where 1/B - 1 failed: from the beta form below
    if (!(isfinite(df1) && isfinite(df2)) || !(x >= 0.) || !isfinite(x) || isnan(p))
        return x;
    if (log_p ? (p == 0. || p == ML_NEGINF) : (p == 0. || p == 1.))
        return x;
    if (!(x > 0.) || !isfinite(x)) {
        double b = qbeta(p, df1 / 2, df2 / 2, lower_tail, log_p);
        x = (b < 0.5) ? (df2 / df1) * (b / (1. - b))
                      : (df2 / df1) / qbeta(p, df2 / 2, df1 / 2, !lower_tail, log_p) - df2 / df1;
        if (!(x > 0.) || !isfinite(x))
            return qf_r(p, df1, df2, lower_tail, log_p);
    }
    // the smaller tail and the log of its probability
    int up = !lower_tail;
    double lt = log_p ? p : log(p);
    if (lt > -M_LN2) {
        lt = log_p ? R_Log1_Exp(p) : log1p(-p);
        up = !up;
    }
#define QF_LOGP(y) pf(y, df1, df2, !up, 1)
#define QF_LOGD(y) df(y, df1, df2, 1)
    Q_POLISH_POSITIVE(x, lt, up, QF_LOGP, QF_LOGD);
#undef QF_LOGP
#undef QF_LOGD
    return x;
#else
    return qf_r(p, df1, df2, lower_tail, log_p);
#endif
}
