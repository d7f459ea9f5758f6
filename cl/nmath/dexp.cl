// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dexp
// @depends: dpq
// @source: the exponential density exp(-x / scale) / scale (Rmath.h parametrises by scale = 1/rate).

double dexp(double x, double scale, int give_log)
{
    if (isnan(x) || isnan(scale))
        return x + scale;
    if (scale <= 0.)
        ML_WARN_return_NAN;
    if (x < 0.)
        return R_D__0;
    return give_log ? (-x / scale) - log(scale) : exp(-x / scale) / scale;
}
