// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dlogis
// @depends: dpq
// @source: the logistic density e^-|z| / (s (1 + e^-|z|)^2), z = (x - l)/s, symmetric in z so
//          that only the non-overflowing exponential is formed.

double dlogis(double x, double location, double scale, int give_log)
{
    if (isnan(x) || isnan(location) || isnan(scale))
        return x + location + scale;
    if (scale <= 0.)
        ML_WARN_return_NAN;
    double z = fabs((x - location) / scale);
    double e = exp(-z);
    double f = 1. + e;
    return give_log ? -(z + log(scale * f * f)) : e / (scale * f * f);
}
