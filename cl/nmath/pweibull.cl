// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pweibull
// @depends: dpq
// @source: the Weibull distribution function 1 - exp(-(x/scale)^shape), with expm1 and
//          log(1 - exp(t)) (Maechler 2012) for the lower tail.

double pweibull(double x, double shape, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(shape) || isnan(scale))
        return x + shape + scale;
    if (shape <= 0. || scale <= 0.)
        ML_WARN_return_NAN;
    if (x <= 0.)
        return R_DT_0;
    double t = -pow(x / scale, shape); // log of the upper tail
    if (!lower_tail)
        return R_D_exp(t);
    return log_p ? R_Log1_Exp(t) : -expm1(t);
}
