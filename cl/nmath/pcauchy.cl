// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pcauchy
// @depends: dpq
// @source: the Cauchy distribution function 1/2 + atan(z)/pi.  For |z| > 1 the tail is taken
//          as atan(1/z)/pi (= 1/2 - atan(z)/pi for z > 0), which keeps relative accuracy far
//          out in the tails; the upper tail is the lower tail at -z.

double pcauchy(double x, double location, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(location) || isnan(scale))
        return x + location + scale;
    if (scale <= 0.)
        ML_WARN_return_NAN;
    double z = (x - location) / scale;
    if (isnan(z))
        ML_WARN_return_NAN;
    if (!isfinite(z))
        return (z < 0.) ? R_DT_0 : R_DT_1;
    if (!lower_tail)
        z = -z;
    if (fabs(z) <= 1.)
        return R_D_val(0.5 + atan(z) / M_PI);
    double t = atan(1. / z) / M_PI; // the far tail, signed like z
    return (z > 0.) ? R_D_Clog(t) : R_D_val(-t);
}
