// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dhyper
// @depends: dbinom, dpq, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities": the
//          hypergeometric mass as a ratio of binomial masses with the same p = n / (r + b),
//              f(x) = b(x; r, p) b(n - x; b, p) / b(n; r + b, p),
//          each by the saddle point form (dbinom_raw), which avoids the cancellation of the
//          three binomial coefficients.
//
// dhyper(x, r, b, n): x white balls among n drawn without replacement from r white and b
// black.  NaN for r, b, n negative or non-integer, or n > r + b; mass 0 outside
// max(0, n - b) <= x <= min(n, r) and for x non-integer (R warns; counted by the kernel).

double dhyper(double x, double r, double b, double n, int give_log)
{
    if (isnan(x) || isnan(r) || isnan(b) || isnan(n))
        return x + r + b + n;
    if (R_D_negInonint(r) || R_D_negInonint(b) || R_D_negInonint(n) || n > r + b)
        ML_WARN_return_NAN;
    if (x < 0)
        return R_D__0;
    R_D_nonint_check(x);
    x = R_forceint(x);
    r = R_forceint(r);
    b = R_forceint(b);
    n = R_forceint(n);
    if (n < x || r < x || n - x > b)
        return R_D__0;
    if (n == 0)
        return (x == 0) ? R_D__1 : R_D__0;
    double p = n / (r + b);
    double q = (r + b - n) / (r + b);
    double p1 = dbinom_raw(x, r, p, q, give_log);
    double p2 = dbinom_raw(n - x, b, p, q, give_log);
    double p3 = dbinom_raw(n, r + b, p, q, give_log);
    return give_log ? p1 + p2 - p3 : p1 * p2 / p3;
}
