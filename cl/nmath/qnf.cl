// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnf
// @depends: qnbeta, qnchisq, dpq, rmath_utils
// @source: the noncentral F quantile from the noncentral beta one: x = y / (1 - y) (df2 / df1)
//          with y = qnbeta(p, df1/2, df2/2, ncp); qnchisq(p, df1, ncp) / df1 for df2 > 1e8.
//
// qnf(p, df1, df2, ncp): NaN for df1, df2 <= 0, ncp < 0 or ncp = Inf, and for df1 = df2 = Inf.

double qnf(double p, double df1, double df2, double ncp, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(df1) || isnan(df2) || isnan(ncp))
        return p + df1 + df2 + ncp;
    if (df1 <= 0. || df2 <= 0. || ncp < 0)
        ML_WARN_return_NAN;
    if (!isfinite(ncp))
        ML_WARN_return_NAN;
    if (!isfinite(df1) && !isfinite(df2))
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0, ML_POSINF);
    if (df2 > 1e8)   // avoids +Inf and loss of accuracy
        return qnchisq(p, df1, ncp, lower_tail, log_p) / df1;
    double y = qnbeta(p, df1 / 2., df2 / 2., ncp, lower_tail, log_p);
    return y / (1 - y) * (df2 / df1);
}
