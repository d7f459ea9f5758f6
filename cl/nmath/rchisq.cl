// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rchisq
// @depends: rgamma, rmath_utils
// @source: chi-squared(df) = Gamma(df / 2, scale 2), as R does.
//
// R's domain rules: NaN for infinite or negative df; 0 for df = 0.

double rchisq(rng_stream *s, double df)
{
    if (!isfinite(df) || df < 0.0)
        ML_WARN_return_NAN;
    return rgamma(s, df / 2.0, 2.0);
}
