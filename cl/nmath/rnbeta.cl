// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rnbeta
// @depends: rnchisq, rchisq, rmath_utils
// @source: the noncentral beta as X / (X + Y), X ~ noncentral chi-squared(2 shape1, ncp),
//          Y ~ chi-squared(2 shape2), as R's rbeta(n, shape1, shape2, ncp) does.
//
// Domain as R's: through the two chi-squared variates (NaN for infinite or negative shapes or
// ncp).

double rnbeta(rng_stream *s, double shape1, double shape2, double ncp)
{
    const double x = rnchisq(s, 2.0 * shape1, ncp);
    return x / (x + rchisq(s, 2.0 * shape2));
}
