// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pweibull
// @depends: dpq
// @source: the Weibull distribution function 1 - exp(-(x/scale)^shape), with expm1 and
//          log(1 - exp(t)) (Maechler 2012) for the lower tail.  Built with
//          DASKCL_ACCURACY_BEST, x / scale is taken in two parts (the remainder of the division
//          exact by fma) and (x/scale)^shape corrected to first order for the low part: R's
//          rounded quotient costs the upper tail about shape (x/scale)^shape ulp.

double pweibull(double x, double shape, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(shape) || isnan(scale))
        return x + shape + scale;
    if (shape <= 0. || scale <= 0.)
        ML_WARN_return_NAN;
    if (x <= 0.)
        return R_DT_0;
#ifdef DASKCL_ACCURACY_BEST
    double r = x / scale;
    double e = (r > 0. && isfinite(r)) ? (fma(-r, scale, x) / scale) / r : 0.; // low part / r
    double z = pow(r, shape);
    double t = -(z + z * (shape * e)); // log of the upper tail
#else
    double t = -pow(x / scale, shape); // log of the upper tail
#endif
    if (!lower_tail)
        return R_D_exp(t);
    return log_p ? R_Log1_Exp(t) : -expm1(t);
}
