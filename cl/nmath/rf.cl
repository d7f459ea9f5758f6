// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rf
// @depends: rchisq, rmath_utils
// @source: F as (X1 / n1) / (X2 / n2), X1, X2 chi-squared, as R does.
//
// R's domain rules: NaN for NaN or non-positive df; an infinite df contributes the factor 1.

double rf(rng_stream *s, double n1, double n2)
{
    if (isnan(n1) || isnan(n2) || n1 <= 0.0 || n2 <= 0.0)
        ML_WARN_return_NAN;
    const double a = isfinite(n1) ? rchisq(s, n1) / n1 : 1.0;
    const double b = isfinite(n2) ? rchisq(s, n2) / n2 : 1.0;
    return a / b;
}
