// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dcauchy
// @depends: dpq
// @source: the Cauchy density 1 / (pi s (1 + ((x - l)/s)^2)).  Built with
//          DASKCL_ACCURACY_BEST, |z| > 1e100 takes log(pi s) + 2 log|z| + log1p(1 / z^2), where
//          z^2 overflows (R: a log density of -Inf).

double dcauchy(double x, double location, double scale, int give_log)
{
    if (isnan(x) || isnan(location) || isnan(scale))
        return x + location + scale;
    if (scale <= 0.)
        ML_WARN_return_NAN;
    double z = (x - location) / scale;
#ifdef DASKCL_ACCURACY_BEST
    if (fabs(z) > 1e100 && isfinite(z)) {
        double lden = log(M_PI * scale) + 2. * log(fabs(z)) + log1p(1. / (z * z));
        return give_log ? -lden : exp(-lden);
    }
#endif
    double den = M_PI * scale * (1. + z * z);
    return give_log ? -log(den) : 1. / den;
}
