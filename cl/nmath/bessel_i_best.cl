// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_i_hankel
// @depends: ddouble
// @source: Hankel's asymptotic expansion (Abramowitz & Stegun 9.7.1)
//          I_nu(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k,
//          a_k(nu) / a_(k-1)(nu) = (4 nu^2 - (2k - 1)^2) / (8 k); T. J. Dekker (1971), Numer.
//          Math. 18, 224-242 (double-double).
//
// For the `best` accuracy mode (bessel_i.cl calls it under DASKCL_ACCURACY_BEST), x >= 500:
// R's recurrence loses up to 5e-12 relative there.  The terms and their sum are carried in
// double-double (4 nu^2 exact by fma), so that terms up to 1e12 times the sum (nu^2 / (2 x)
// up to about 30) cancel without losing the sum's digits.

// exp(-x) I_nu(x) for x >= 500, nu >= 0: summed while the terms fall below 1e-17 of the sum
// (k stays below x, where they would turn to grow again); NaN where they do not within 400
// terms or exceed 1e12 times the sum
static inline double bessel_i_hankel(double x, double nu)
{
    const double nu2 = nu * nu;
    const dd_t mu = dd_mul_d(dd_add_d(dd_d(nu2), fma(nu, nu, -nu2)), 4.);
    dd_t t = dd_d(1.), s = dd_d(1.);
    double tmax = 1.;
    for (int k = 1; k <= 400; k++) {
        const double j = 2. * k - 1.;       // j^2 exact below 2^26
        t = dd_mul(t, dd_div_d(dd_div_d(dd_add_d(mu, -j * j), -8. * k), x));   // 8 k x unrounded
        s = dd_add(s, t);
        tmax = fmax(tmax, fabs(t.hi));
        if (fabs(t.hi) <= 1e-17 * fabs(s.hi))
            return (tmax <= 1e12 * fabs(s.hi)) ? dd_hi(s) / sqrt(2. * M_PI * x) : ML_NAN;
    }
    return ML_NAN;
}
