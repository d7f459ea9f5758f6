// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: beta
// @depends: gammafn, lbeta, beta_best, rmath_utils
// @source: B(a, b) = gamma(a) gamma(b) / gamma(a + b) while a + b is below the overflow bound of
//          gamma (171.61...), exp(lbeta(a, b)) beyond (SLATEC DBETA, W. Fullerton 1977).
//          Built with DASKCL_ACCURACY_BEST, beta_best.cl's where it applies.

double beta(double a, double b)
{
    const double xmax = 171.61447887182298; // gamma(xmax) is the largest finite value
    if (isnan(a) || isnan(b))
        return a + b;
    if (a < 0 || b < 0)
        ML_WARN_return_NAN;
    if (a == 0 || b == 0)
        return ML_POSINF;
    if (!isfinite(a) || !isfinite(b))
        return 0;
#ifdef DASKCL_ACCURACY_BEST     // beta_best.cl is in the program in that mode only
    const double r = beta_best(a, b);
    if (!isnan(r))
        return r;
#endif
    if (a + b < xmax)
        return (1 / gammafn(a + b)) * gammafn(a) * gammafn(b); // in this order: no overflow
    return exp(lbeta(a, b));
}
