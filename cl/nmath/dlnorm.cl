// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dlnorm
// @depends: dpq, rmath_constants
// @source: the log-normal density phi((log x - m)/s) / (x s); sdlog = 0 is the point mass at
//          exp(meanlog) (infinite density there, 0 elsewhere), as in R.

double dlnorm(double x, double meanlog, double sdlog, int give_log)
{
    if (isnan(x) || isnan(meanlog) || isnan(sdlog))
        return x + meanlog + sdlog;
    if (sdlog < 0.)
        ML_WARN_return_NAN;
    if (!isfinite(x) && log(x) == meanlog)
        return ML_NAN; // log(x) - meanlog is Inf - Inf
    if (sdlog == 0.)
        return (log(x) == meanlog) ? ML_POSINF : R_D__0;
    if (x <= 0.)
        return R_D__0;
    double z = (log(x) - meanlog) / sdlog;
    return give_log ? -(M_LN_SQRT_2PI + 0.5 * z * z + log(x * sdlog))
                    : M_1_SQRT_2PI * exp(-0.5 * z * z) / (x * sdlog);
}
