// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dgamma
// @depends: dpois, ddouble, dpq, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities", section
//          on the gamma density: f(x; a, s) = dpois(a - 1, x/s) / s, the Poisson mass at a
//          non-integer count computed by the saddle point form.
//
// The gamma density with shape a and scale s.  For a >= 1 it is dpois_raw(a - 1, x/s) / s; for
// a < 1 (where a - 1 < 0) it is dpois_raw(a, x/s) a / x.  Both keep full relative accuracy in
// the tails.  a = 0 is the point mass at 0; at x = 0 the density is +Inf, 0 or 1/s for a < 1,
// a > 1, a = 1.  NaN for a < 0 or s <= 0.  Built with DASKCL_ACCURACY_BEST, a > 1 takes
// dpois_raw_dd with x / s as a double-double: its rounding would cost |x/s - a + 1| ulps.

double dgamma(double x, double shape, double scale, int give_log)
{
    if (isnan(x) || isnan(shape) || isnan(scale))
        return x + shape + scale;
    if (shape < 0 || scale <= 0)
        ML_WARN_return_NAN;
    if (x < 0)
        return R_D__0;
    if (shape == 0)
        return (x == 0) ? ML_POSINF : R_D__0;
    if (x == 0) {
        if (shape < 1)
            return ML_POSINF;
        if (shape > 1)
            return R_D__0;
        return give_log ? -log(scale) : 1 / scale;
    }
    double pr;
    if (shape < 1) {
        pr = dpois_raw(shape, x / scale, give_log);
        if (give_log) {
            // shape/x can overflow (to +Inf) but not underflow here
            return pr + (isfinite(shape / x) ? log(shape / x) : log(shape) - log(x));
        }
        return pr * shape / x;
    }
#ifdef DASKCL_ACCURACY_BEST
    // x / scale unrounded, as a double-double
    if (shape > 1 && x < 1e300 && x / scale < 1e300 && x / scale > (shape - 1) * DBL_MIN
        && shape - 1 > (x / scale) * DBL_MIN) {
        pr = dpois_raw_dd(shape - 1, dd_div_d(dd_d(x), scale), give_log);
        return give_log ? pr - log(scale) : pr / scale;
    }
#endif
    pr = dpois_raw(shape - 1, x / scale, give_log);
    return give_log ? pr - log(scale) : pr / scale;
}
