// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: lbeta
// @depends: gammafn, lgammafn, lgammacor, rmath_constants, rmath_utils
// @source: log B(a, b) = log gamma(a) + log gamma(b) - log gamma(a + b), evaluated as in the
//          SLATEC routine DLBETA (W. Fullerton, 1977): with p = min(a,b), q = max(a,b), for
//          p >= 10 Stirling's formula for all three terms with the remainders lgammacor and
//          log1p for log(q/(p+q)); for q >= 10 > p Stirling for the two large terms only; for
//          both < 10 the log of a product of gamma functions.

double lbeta(double a, double b)
{
    double p = fmin(a, b), q = fmax(a, b); // NaNs are caught next
    if (isnan(a) || isnan(b))
        return a + b;
    if (p < 0)
        ML_WARN_return_NAN;
    if (p == 0)
        return ML_POSINF;
    if (!isfinite(q)) // q == Inf
        return ML_NEGINF;

    if (p >= 10) {
        // all three by Stirling's formula
        double corr = lgammacor(p) + lgammacor(q) - lgammacor(p + q);
        return log(q) * -0.5 + M_LN_SQRT_2PI + corr + (p - 0.5) * log(p / (p + q))
               + q * log1p(-p / (p + q));
    }
    if (q >= 10) {
        // q and p + q by Stirling's formula
        double corr = lgammacor(q) - lgammacor(p + q);
        return lgammafn(p) + corr + p - p * log(p + q) + (q - 0.5) * log1p(-p / (p + q));
    }
    // p and q small
    if (p < 1e-306) // gamma(p) overflows
        return lgammafn(p) + (lgammafn(q) - lgammafn(p + q));
    return log(gammafn(p) * (gammafn(q) / gammafn(p + q)));
}
