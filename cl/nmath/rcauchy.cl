// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rcauchy
// @depends: philox, rng_math, rmath_utils
// @source: inversion, the Cauchy quantile tan(pi (U - 1/2)) = -cot(pi U) (e.g. L. Devroye
//          (1986), "Non-Uniform Random Variate Generation", Springer, section II.2).
//
// With p, upper from rng_half: -cot(pi p) for U = p (lower), cot(pi p) for U = 1 - p (upper), so both tails
// come from the finely resolved small p (|x| up to 1.2e19).  R's domain rules: NaN for NaN
// location, infinite or negative scale; location itself for scale = 0 or infinite location.

double rcauchy(rng_stream *s, double location, double scale)
{
    if (isnan(location) || !isfinite(scale) || scale < 0.0)
        ML_WARN_return_NAN;
    if (scale == 0.0 || !isfinite(location))
        return location;
    int upper;
    const double p = rng_half(s, &upper);
    const double c = rng_cotpi(p);
    return location + scale * (upper ? c : -c);
}
