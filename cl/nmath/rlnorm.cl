// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rlnorm
// @depends: rnorm, rng_math, rmath_utils
// @source: exp of a normal variate, as R does.
//
// R's domain rules: NaN for NaN meanlog, infinite or negative sdlog.

double rlnorm(rng_stream *s, double meanlog, double sdlog)
{
    if (isnan(meanlog) || !isfinite(sdlog) || sdlog < 0.0)
        ML_WARN_return_NAN;
    return rng_exp(rnorm(s, meanlog, sdlog));
}
