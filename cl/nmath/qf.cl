// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qf
// @depends: qbeta, qchisq, dpq
// @source: the F quantile from the beta quantile: F = (1/B - 1) n/m with B the quantile of
//          Beta(n/2, m/2) on the other tail (Abramowitz & Stegun 26.6.2); for more than 4e5
//          degrees of freedom on the larger side the chi-squared limits, as R does.

double qf(double p, double df1, double df2, int lower_tail, int log_p)
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
