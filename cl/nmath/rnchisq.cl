// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rnchisq
// @depends: rpois, rchisq, rgamma, rmath_utils
// @source: the noncentral chi-squared as a Poisson mixture: K ~ Poisson(ncp / 2), then
//          chi-squared(2K) + chi-squared(df), as R does.
//
// R's domain rules: NaN for NaN or negative df, infinite or negative ncp; +Inf for infinite df
// (through rgamma); for ncp = 0 the central chi-squared (0 for df = 0); a zero K or df
// contributes 0.

double rnchisq(rng_stream *s, double df, double lambda)
{
    if (isnan(df) || !isfinite(lambda) || df < 0.0 || lambda < 0.0)
        ML_WARN_return_NAN;
    if (lambda == 0.0)
        return (df == 0.0) ? 0.0 : rgamma(s, df / 2.0, 2.0);
    double r = rpois(s, lambda / 2.0);
    if (r > 0.0)
        r = rchisq(s, 2.0 * r);
    if (df > 0.0)
        r += rgamma(s, df / 2.0, 2.0);
    return r;
}
