// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: norm_rand, rnorm
// @depends: as241, philox, rng_math, rmath_utils
// @source: inversion, R's default normal generator (INVERSION in R's RNGkind), with the
//          normal quantile of M. J. Wichura (1988), "Algorithm AS 241: The percentage points
//          of the normal distribution", Applied Statistics 37(3), 477-484 (PPND16).
//
// norm_rand(s) = Phi^-1(U) with U from rng_half: p in (0, 1/2) with relative resolution 2^-52
// down to 2^-65 and a random half, so the variate is -z(p) or z(p) with z(p) = Phi^-1(p) < 0:
// exactly symmetric, and the tails reach |z| = 9.1 (R's two-uniform construction, BIG = 2^27,
// serves the same purpose).  Phi^-1 is AS 241's three rational approximations of degree 7
// (about 16 digits); the log in the tails is rng_log, so every device gives the same bits.
//
// rnorm(s, mu, sigma), R's domain rules: NaN for NaN mu, infinite or negative sigma; mu itself
// for sigma = 0 or infinite mu.

static inline double rnorm_poly7(__constant double *c, double t)
{
    double s = c[7];
    for (int k = 6; k >= 0; k--)
        s = s * t + c[k];
    return s;
}

// Phi^-1(p) for 0 < p < 1/2 (negative)
static inline double rnorm_lower(double p)
{
    const double q = p - 0.5;
    if (q >= -0.425) {
        const double r = 0.180625 - q * q;
        return q * rnorm_poly7(as241_a, r) / rnorm_poly7(as241_b, r);
    }
    double r = sqrt(-rng_log(p));
    if (r <= 5.0) {
        r -= 1.6;
        return -(rnorm_poly7(as241_c, r) / rnorm_poly7(as241_d, r));
    }
    r -= 5.0;
    return -(rnorm_poly7(as241_e, r) / rnorm_poly7(as241_f, r));
}

double norm_rand(rng_stream *s)
{
    int upper;
    const double p = rng_half(s, &upper);
    const double z = rnorm_lower(p);
    return upper ? -z : z;
}

double rnorm(rng_stream *s, double mu, double sigma)
{
    if (isnan(mu) || !isfinite(sigma) || sigma < 0.0)
        ML_WARN_return_NAN;
    if (sigma == 0.0 || !isfinite(mu))
        return mu;
    return mu + sigma * norm_rand(s);
}
