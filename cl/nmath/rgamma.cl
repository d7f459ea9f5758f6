// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rgamma
// @depends: rnorm, philox, rng_math, rmath_utils
// @source: G. Marsaglia & W. W. Tsang (2000), "A simple method for generating gamma
//          variables", ACM Trans. Math. Software 26(3), 363-372 (R uses J. H. Ahrens &
//          U. Dieter (1974, 1982) instead; both are exact).
//
// For shape a >= 1, with d = a - 1/3 and c = 1 / sqrt(9 d): draw a normal x until
// v = (1 + c x)^3 > 0 and a uniform u; accept d v if u < 1 - 0.0331 x^4 (the squeeze) or
// log u < x^2 / 2 + d (1 - v + log v).  For a < 1, Gamma(a) = Gamma(a + 1) U^(1/a)
// (Marsaglia & Tsang, section 6), U^(1/a) computed as exp(log(U) / a).  The result is
// multiplied by scale.  The normals are norm_rand (inversion), the logs rng_log.
//
// R's domain rules: NaN for NaN shape or scale; 0 for shape = 0 or scale = 0 (even with the
// other negative); NaN for other non-positive shape or scale; +Inf for infinite shape or scale.

static inline double rgamma_mt(rng_stream *s, double a)   // a >= 1, scale 1
{
    const double d = a - 1.0 / 3.0;
    const double c = 1.0 / sqrt(9.0 * d);
    for (int t = 0; t < RNG_MAX_TRIES; t++) {
        double x, v;
        do {
            x = norm_rand(s);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        const double u = unif_rand(s);
        const double x2 = x * x;
        if (u < 1.0 - 0.0331 * (x2 * x2))
            return d * v;
        if (rng_log(u) < 0.5 * x2 + d * (1.0 - v + rng_log(v)))
            return d * v;
    }
    return ML_NAN;
}

double rgamma(rng_stream *s, double a, double scale)
{
    if (isnan(a) || isnan(scale))
        ML_WARN_return_NAN;
    if (a <= 0.0 || scale <= 0.0) {
        if (scale == 0.0 || a == 0.0)
            return 0.0;
        ML_WARN_return_NAN;
    }
    if (!isfinite(a) || !isfinite(scale))
        return ML_POSINF;
    if (a >= 1.0)
        return scale * rgamma_mt(s, a);
    const double g = rgamma_mt(s, a + 1.0);
    return scale * (g * rng_exp(rng_log(unif_rand(s)) / a));
}
