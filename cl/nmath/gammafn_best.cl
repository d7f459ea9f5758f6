// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: gammafn_stirling_dd
// @depends: bd0_best, ddouble, stirlerr_core
// @source: Stirling's formula with its exact error term, log gamma(y) = (y - 1/2) log y - y
//          + log sqrt(2 pi) + stirlerr(y) (Abramowitz & Stegun 6.1.40; stirlerr as
//          stirlerr_core.cl); T. J. Dekker (1971), Numer. Math. 18, 224-242 (double-double).
//
// gamma(y) for 10 < y < 2^52 with the exponent in double-double, for the `best` accuracy mode
// (gammafn.cl calls it under DASKCL_ACCURACY_BEST): in double, exp of a log of up to 700 loses
// an ulp of that, 1e-13 relative.  The sum is exponentiated as exp(hi) exp(lo).

static inline double gammafn_stirling_dd(double y)
{
    const dd_t ln_sqrt_2pi = { 0x1.d67f1c864beb5p-1, -0x1.65b5a1b7ff5dfp-55 };
    dd_t l = dd_mul_d(dd_log_full(dd_d(y)), y - 0.5);     // y - 1/2 is exact
    l = dd_add(dd_add_d(l, -y), ln_sqrt_2pi);
    l = dd_add_d(l, stirlerr_core(y));
    return exp(l.hi) * exp(l.lo);
}
