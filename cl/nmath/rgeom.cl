// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rgeom
// @depends: rpois, rexp, rmath_utils
// @source: the geometric as a Poisson mixture, Poisson(E (1 - p) / p) with E standard
//          exponential (the gamma-Poisson mixture with shape 1), as R does.
//
// R's domain rules: NaN for p outside (0, 1] or NaN; 0 for p = 1.

double rgeom(rng_stream *s, double p)
{
    if (!isfinite(p) || p <= 0.0 || p > 1.0)
        ML_WARN_return_NAN;
    return rpois(s, exp_rand(s) * ((1.0 - p) / p));
}
