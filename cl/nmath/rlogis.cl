// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rlogis
// @depends: philox, rng_math, rmath_utils
// @source: inversion, the logistic quantile log(U / (1 - U)), as R does.
//
// With p, upper from rng_half: log p - log1p(-p) for U = p (lower), its negative for
// U = 1 - p (upper).
// R's domain rules: NaN for NaN location or infinite scale; location itself for scale = 0 or
// infinite location (R accepts a negative scale, and so does this).

double rlogis(rng_stream *s, double location, double scale)
{
    if (isnan(location) || !isfinite(scale))
        ML_WARN_return_NAN;
    if (scale == 0.0 || !isfinite(location))
        return location;
    int upper;
    const double p = rng_half(s, &upper);
    const double l = rng_log(p) - rng_log1p(-p);
    return location + scale * (upper ? -l : l);
}
