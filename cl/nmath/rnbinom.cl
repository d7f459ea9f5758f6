// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rnbinom, rnbinom_mu
// @depends: rpois, rgamma, rmath_utils
// @source: the negative binomial as the gamma-Poisson mixture Poisson(G), G ~ Gamma(size,
//          scale (1 - prob) / prob) (resp. scale mu / size), as R does.
//
// R's domain rules: NaN for NaN or non-positive size, prob outside (0, 1] or NaN (rnbinom),
// infinite or negative mu (rnbinom_mu); an infinite size is replaced by DBL_MAX / 2 as R does;
// 0 for prob = 1 or mu = 0.

double rnbinom(rng_stream *s, double size, double prob)
{
    if (!isfinite(prob) || isnan(size) || size <= 0.0 || prob <= 0.0 || prob > 1.0)
        ML_WARN_return_NAN;
    if (!isfinite(size))
        size = DBL_MAX / 2.0;
    return (prob == 1.0) ? 0.0 : rpois(s, rgamma(s, size, (1.0 - prob) / prob));
}

double rnbinom_mu(rng_stream *s, double size, double mu)
{
    if (!isfinite(mu) || isnan(size) || size <= 0.0 || mu < 0.0)
        ML_WARN_return_NAN;
    if (!isfinite(size))
        size = DBL_MAX / 2.0;
    return (mu == 0.0) ? 0.0 : rpois(s, rgamma(s, size, mu / size));
}
