// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: beta_best
// @depends: gammafn, lgammacor, bd0_best, ddouble
// @source: B(a, b) = gamma(a) gamma(b) / gamma(a + b), and for min(a, b) >= 10 Stirling's
//          formula for the three log-gammas with the remainders lgammacor (SLATEC DLBETA,
//          W. Fullerton 1977; Abramowitz & Stegun 6.1.40-41); gamma(s + ds) = gamma(s)
//          (1 + psi(s) ds + O(ds^2)) with psi(s) = log s - 1/(2 s) - 1/(12 s^2) + ...
//          (A&S 6.3.18); T. J. Dekker (1971), Numer. Math. 18, 224-242 (double-double).
//
// The `best` accuracy mode's beta (beta.cl calls it under DASKCL_ACCURACY_BEST): about 1e-15
// relative where R's loses up to 1e-13, in gamma(a + b) at a + b rounded (psi(a + b) times
// the rounding) and in exp(lbeta) (an ulp of lbeta, up to 700).  For a, b > 0 finite; NaN
// where the caller is to take R's formula (min(a, b) < 10 and a + b beyond gamma's range).

double beta_best(double a, double b)
{
    const double xmax = 171.61447887182298, p = fmin(a, b), q = fmax(a, b);
    const dd_t s = dd_add_d(dd_d(p), q);
    if (s.hi < xmax) {
        // gamma(s.hi) (1 + psi(s.hi) s.lo); the correction is below 1e-13, so 3 digits of psi do
        const double psi = (s.hi > 2.) ? log(s.hi) - 0.5 / s.hi - 1. / (12. * s.hi * s.hi) : 0.;
        return (1 / gammafn(s.hi)) * gammafn(p) * gammafn(q) * (1. - psi * s.lo);
    }
    if (p < 10. || !(q < 0x1p52))
        return ML_NAN;
    // log B = -log(q)/2 + log sqrt(2 pi) + (p - 1/2) log(p / s) + q log(q / s) + corrections
    const dd_t ln_sqrt_2pi = { 0x1.d67f1c864beb5p-1, -0x1.65b5a1b7ff5dfp-55 };
    dd_t l = dd_mul_d(dd_log_full(dd_div(dd_d(p), s)), p - 0.5);
    l = dd_add(l, dd_mul_d(dd_log_full(dd_div(dd_d(q), s)), q));
    l = dd_add(l, dd_mul_d(dd_log_full(dd_d(q)), -0.5));
    l = dd_add(l, ln_sqrt_2pi);
    l = dd_add_d(l, lgammacor(p) + lgammacor(q) - lgammacor(s.hi));
    return exp(l.hi) * exp(l.lo);
}
