// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: runif
// @depends: philox, rmath_utils
// @source: the uniform on (a, b) as a + (b - a) U, as R does.
//
// U is unif_rand (never 0 or 1).  R's domain rules: NaN for infinite a or b or b < a; a for
// a = b.

double runif(rng_stream *s, double a, double b)
{
    if (!isfinite(a) || !isfinite(b) || b < a)
        ML_WARN_return_NAN;
    if (a == b)
        return a;
    return a + (b - a) * unif_rand(s);
}
