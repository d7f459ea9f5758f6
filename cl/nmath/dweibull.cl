// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dweibull
// @depends: dpq
// @source: the Weibull density (shape/scale) (x/scale)^(shape-1) exp(-(x/scale)^shape).

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
    double u = pow(x / scale, shape - 1.); // (x/scale)^(shape-1)
    double v = u * (x / scale);            // (x/scale)^shape
    return give_log ? -v + log(shape * u / scale) : shape * u * exp(-v) / scale;
}
