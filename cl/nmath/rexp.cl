// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: exp_rand, rexp
// @depends: philox, rng_math, rmath_utils
// @source: inversion, E = -log U (e.g. L. Devroye (1986), "Non-Uniform Random Variate
//          Generation", Springer, section II.2); R uses the exact method of J. H. Ahrens &
//          U. Dieter (1972), Comm. ACM 15, 873-882, which serves a 32-bit generator.
//
// exp_rand(s): with p, upper from rng_half, U = p (lower) gives -log p and U = 1 - p (upper)
// gives -log1p(-p), so both the tail (down to e^-45) and the values near 0 keep full relative
// resolution.  rexp(s, scale) = scale E, R's parametrisation by scale (Rmath.h's rexp); R's
// domain rules: 0 for scale = 0, NaN for infinite or negative scale.

double exp_rand(rng_stream *s)
{
    int upper;
    const double p = rng_half(s, &upper);
    return upper ? -rng_log1p(-p) : -rng_log(p);
}

double rexp(rng_stream *s, double scale)
{
    if (!isfinite(scale) || scale <= 0.0) {
        if (scale == 0.0)
            return 0.0;
        ML_WARN_return_NAN;
    }
    return scale * exp_rand(s);
}
