// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dweibull
// @depends: dpq
// @source: the Weibull density (shape/scale) (x/scale)^(shape-1) exp(-(x/scale)^shape).
//          Built with DASKCL_ACCURACY_BEST, x / scale in two parts, as pweibull.cl.

double dweibull(double x, double shape, double scale, int give_log)
{
    if (isnan(x) || isnan(shape) || isnan(scale))
        return x + shape + scale;
    if (shape <= 0. || scale <= 0.)
        ML_WARN_return_NAN;
    if (x < 0. || !isfinite(x))
        return R_D__0;
    if (x == 0. && shape < 1.)
        return ML_POSINF;
#ifdef DASKCL_ACCURACY_BEST
    double r = x / scale;
    double e = (r > 0. && isfinite(r)) ? (fma(-r, scale, x) / scale) / r : 0.; // low part / r
    double u = pow(r, shape - 1.), v = pow(r, shape);
    u += u * ((shape - 1.) * e);
    v += v * (shape * e);
#else
    double u = pow(x / scale, shape - 1.); // (x/scale)^(shape-1)
    double v = u * (x / scale);            // (x/scale)^shape
#endif
    return give_log ? -v + log(shape * u / scale) : shape * u * exp(-v) / scale;
}
