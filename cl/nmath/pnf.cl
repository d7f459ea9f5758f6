// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnf
// @depends: pnbeta, pnchisq, dpq, rmath_utils
// @source: the noncentral F distribution function through the noncentral beta one (Johnson,
//          Kotz & Balakrishnan, Continuous Univariate Distributions 2, 30.6): with
//          y = (df1 / df2) x, P[F <= x] = pnbeta(y / (1 + y), df1/2, df2/2, ncp), 1 - y / (1 + y)
//          passed as 1 / (1 + y); pnchisq(df1 x, df1, ncp) for df2 > 1e8.
//
// pnf(q, df1, df2, ncp): NaN for df1, df2 <= 0, ncp < 0 or ncp = Inf, and for df1 = df2 = Inf.

double pnf(double x, double df1, double df2, double ncp, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(df1) || isnan(df2) || isnan(ncp))
        return x + df2 + df1 + ncp;
    if (df1 <= 0. || df2 <= 0. || ncp < 0)
        ML_WARN_return_NAN;
    if (!isfinite(ncp))
        ML_WARN_return_NAN;
    if (!isfinite(df1) && !isfinite(df2))   // both +Inf
        ML_WARN_return_NAN;
    R_P_bounds_01(x, 0., ML_POSINF);
    if (df2 > 1e8)   // avoids +Inf and loss of accuracy
        return pnchisq(x * df1, df1, ncp, lower_tail, log_p);
    double y = (df1 / df2) * x;
    return pnbeta2(y / (1. + y), 1. / (1. + y), df1 / 2., df2 / 2., ncp, lower_tail, log_p);
}
