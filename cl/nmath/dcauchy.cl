// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dcauchy
// @depends: dpq
// @source: the Cauchy density 1 / (pi s (1 + ((x - l)/s)^2)).

double dcauchy(double x, double location, double scale, int give_log)
{
    if (isnan(x) || isnan(location) || isnan(scale))
        return x + location + scale;
    if (scale <= 0.)
        ML_WARN_return_NAN;
    double z = (x - location) / scale;
    double den = M_PI * scale * (1. + z * z);
    return give_log ? -log(den) : 1. / den;
}
