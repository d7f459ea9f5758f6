// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnf
// @depends: qnbeta_best, qnbeta, qnchisq, dpq, rmath_utils
// @source: the noncentral F quantile from the noncentral beta one: x = y / (1 - y) (df2 / df1)
//          with y = qnbeta(p, df1/2, df2/2, ncp); qnchisq(p, df1, ncp) / df1 for df2 > 1e8.
//
// qnf(p, df1, df2, ncp): NaN for df1, df2 <= 0, ncp < 0 or ncp = Inf, and for df1 = df2 = Inf.
// Built with DASKCL_ACCURACY_BEST (config key accuracy = "best"), finite df1, df2 <= 1e8 and
// ncp > 0 go to qnbeta_best.cl's qnf_best (on the F scale, not through 1 - x).

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
#ifdef DASKCL_ACCURACY_BEST
    if (isfinite(df1) && df2 <= 1e8 && ncp > 0.) {
        double best = qnf_best(p, df1, df2, ncp, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif
    if (df2 > 1e8)   // avoids +Inf and loss of accuracy
        return qnchisq(p, df1, ncp, lower_tail, log_p) / df1;
    double y = qnbeta(p, df1 / 2., df2 / 2., ncp, lower_tail, log_p);
    return y / (1 - y) * (df2 / df1);
}
