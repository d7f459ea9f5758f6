// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pbeta_shift
// @depends: dbeta, dpq
// @source: the first-order Taylor expansion I_{x + dx}(a, b) = I_x(a, b) + dx f(x; a, b) + O(dx^2),
//          f the beta density (Abramowitz & Stegun 26.5.1), by dbeta.
//
// For the `best` accuracy mode (pf.cl calls it under DASKCL_ACCURACY_BEST): a caller that forms
// the beta argument x of its own argument rounds it by up to an ulp; in the tails, where
// |a - (a + b) x| is in the thousands, that ulp moves I_x(a, b) by 1e-13 relative.  The caller
// passes the remainder dx (x + dx is the argument in double-double) and the tail p it got at x.

// the tail p (lower_tail, log_p as pbeta's) at x + dx, from p at x; |dx| <= ulp(x).  p = 0 and
// p = 1 (log: -Inf and 0) stay as they are, for the caller to refine
static inline double pbeta_shift(double p, double x, double dx, double a, double b,
                                 int lower_tail, int log_p)
{
    if (dx == 0. || !(x > 0. && x < 1.) || !(log_p ? p > ML_NEGINF && p < 0. : p > 0. && p < 1.))
        return p;
    const double d = exp(dbeta(x, a, b, 1) - (log_p ? p : log(p))) * (lower_tail ? dx : -dx);
    return log_p ? p + d : p * (1. + d);
}
