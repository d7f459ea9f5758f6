// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: plnorm
// @depends: dpq, pnorm
// @source: P(X <= x) = Phi((log x - meanlog) / sdlog) for x > 0.

double plnorm(double x, double meanlog, double sdlog, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(meanlog) || isnan(sdlog))
        return x + meanlog + sdlog;
    if (sdlog < 0.)
        ML_WARN_return_NAN;
    if (x > 0.)
        return pnorm5(log(x), meanlog, sdlog, lower_tail, log_p);
    return R_DT_0;
}
