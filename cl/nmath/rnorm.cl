// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: norm_rand, rnorm
// @depends: philox, rng_math, rmath_utils
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

__constant double rnorm_as241_a[8] = {   // numerator, |q| <= 0.425
    3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
    1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
    3.3430575583588128105e+4, 2.5090809287301226727e+3
};
__constant double rnorm_as241_b[8] = {   // denominator, |q| <= 0.425
    1., 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
    2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4,
    5.2264952788528545610e+3
};
__constant double rnorm_as241_c[8] = {   // numerator, r <= 5
    1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
    3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
    2.27238449892691845833e-2, 7.74545014278341407640e-4
};
__constant double rnorm_as241_d[8] = {   // denominator, r <= 5
    1., 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
    1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
    1.05075007164441684324e-9
};
__constant double rnorm_as241_e[8] = {   // numerator, r > 5
    6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
    2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
    2.71155556874348757815e-5, 2.01033439929228813265e-7
};
__constant double rnorm_as241_f[8] = {   // denominator, r > 5
    1., 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
    7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
    2.04426310338993978564e-15
};

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
        return q * rnorm_poly7(rnorm_as241_a, r) / rnorm_poly7(rnorm_as241_b, r);
    }
    double r = sqrt(-rng_log(p));
    if (r <= 5.0) {
        r -= 1.6;
        return -(rnorm_poly7(rnorm_as241_c, r) / rnorm_poly7(rnorm_as241_d, r));
    }
    r -= 5.0;
    return -(rnorm_poly7(rnorm_as241_e, r) / rnorm_poly7(rnorm_as241_f, r));
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
