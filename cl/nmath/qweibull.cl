// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qweibull
// @depends: dpq
// @source: the Weibull quantile scale * (-log(1 - p))^(1/shape).

double qweibull(double p, double shape, double scale, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(shape) || isnan(scale))
        return p + shape + scale;
    if (shape <= 0. || scale <= 0.)
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0., ML_POSINF);
    return scale * pow(-R_DT_Clog(p), 1. / shape);
}
