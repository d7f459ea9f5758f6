// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bd0_dd, dd_log_full
// @depends: ddouble, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities" (the
//          deviance term bd0 and its series in v = (x - M) / (x + M)); T. J. Dekker (1971), "A
//          floating-point technique for extending the available precision", Numer. Math. 18,
//          224-242 (double-double arithmetic, ddouble.cl); the logarithm by the series
//          log m = 2 atanh((m - 1) / (m + 1)) after taking out the power of 2 (Abramowitz &
//          Stegun 4.1.27).
//
// bd0_dd(x, M) = x log(x / M) + M - x in double-double (about 1e-30 relative), with M given
// as a double-double (a product n p or a quotient x / s kept exact): for |x - M| <= (x + M) / 2
// Loader's series, every term positive but the first pair's mild cancellation; otherwise
// x log(x / M) - (x - M) with the logarithm in double-double.  The saddle-point densities
// (dpois, dbinom and the densities built on them) use it under DASKCL_ACCURACY_BEST: exp(-bd0)
// then loses only the rounding of the leading double, where bd0 in double loses ulp(x) of it.
// For finite x > 0 and 0 < M < 1e300.

// log(a) in double-double for a > 0: a = m 2^e with m in [sqrt(1/2), sqrt 2), then
// log m = 2 (u + u^3/3 + u^5/5 + ...), u = (m - 1) / (m + 1), |u| < 0.172
static inline dd_t dd_log_full(dd_t a)
{
    const dd_t ln2 = { 0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56 };
    int e;
    double m = frexp(a.hi, &e);
    if (m < M_SQRT1_2) {
        m *= 2.;
        e -= 1;
    }
    dd_t mm = { m, ldexp(a.lo, -e) };
    dd_t u = dd_div(dd_add_d(mm, -1.), dd_add_d(mm, 1.));
    dd_t u2 = dd_mul(u, u), t = u, s = u;
    for (int k = 3; k < 100; k += 2) {
        t = dd_mul(t, u2);
        dd_t term = dd_div_d(t, (double)k);
        s = dd_add(s, term);
        if (!(fabs(term.hi) > 1e-33 * fabs(s.hi)))
            break;
    }
    return dd_add(dd_mul_d(s, 2.), dd_mul_d(ln2, (double)e));
}

static inline dd_t bd0_dd(double x, dd_t M)
{
    dd_t d = dd_add_d(dd_d(-M.hi), x);
    d = dd_add_d(d, -M.lo);           // x - M
    dd_t S = dd_add_d(M, x);          // x + M
    if (fabs(d.hi) <= 0.5 * S.hi) {
        dd_t v = dd_div(d, S);
        dd_t s = dd_mul(d, v);
        dd_t ej = dd_mul_d(v, 2. * x);
        dd_t v2 = dd_mul(v, v);
        for (int j = 1; j < 200; j++) {   // the terms fall by v^2 <= 1/4 each
            ej = dd_mul(ej, v2);
            dd_t term = dd_div_d(ej, (double)(2 * j + 1));
            s = dd_add(s, term);
            if (!(fabs(term.hi) > 1e-32 * fabs(s.hi)))
                break;
        }
        return s;
    }
    return dd_sub(dd_mul_d(dd_log_full(dd_div(dd_d(x), M)), x), d);
}
