// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: plogis
// @depends: dpq, log1pexp
// @source: the logistic distribution function 1 / (1 + e^-z), z = (x - l)/s; its log is
//          -log(1 + e^-z), taken with log1pexp (Maechler 2012) to avoid overflow.

double plogis(double x, double location, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(location) || isnan(scale))
        return x + location + scale;
    if (scale <= 0.)
        ML_WARN_return_NAN;
    double z = (x - location) / scale;
    if (isnan(z))
        ML_WARN_return_NAN;
    R_P_bounds_Inf_01(z);
    double mz = lower_tail ? -z : z;
    return log_p ? -log1pexp(mz) : 1. / (1. + exp(mz));
}
