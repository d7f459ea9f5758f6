// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rweibull
// @depends: rexp, rng_math, rmath_utils
// @source: inversion, scale (-log U)^(1/shape), as R does.
//
// -log U is exp_rand; the power is exp(log(E) / shape).  R's domain rules: 0 for scale = 0,
// NaN for infinite or non-positive shape or scale.

double rweibull(rng_stream *s, double shape, double scale)
{
    if (!isfinite(shape) || !isfinite(scale) || shape <= 0.0 || scale <= 0.0) {
        if (scale == 0.0)
            return 0.0;
        ML_WARN_return_NAN;
    }
    return scale * rng_exp(rng_log(exp_rand(s)) / shape);
}
