// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rt
// @depends: rnorm, rchisq, rmath_utils
// @source: Student's t as Z / sqrt(X / df), Z normal, X chi-squared(df), as R does.
//
// R's domain rules: NaN for NaN or non-positive df; a normal variate for infinite df.

double rt(rng_stream *s, double df)
{
    if (isnan(df) || df <= 0.0)
        ML_WARN_return_NAN;
    if (!isfinite(df))
        return norm_rand(s);
    const double num = norm_rand(s);
    return num / sqrt(rchisq(s, df) / df);
}
