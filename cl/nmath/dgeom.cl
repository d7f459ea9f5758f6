// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dgeom
// @depends: dbinom, dpq, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities":
//          (1 - p)^x is the binomial mass of 0 successes in x trials, dbinom_raw(0, x, p, 1 - p),
//          which is accurate for small p.
//
// dgeom(x, p): p (1 - p)^x, the probability of x failures before the first success.  NaN for
// p outside (0, 1]; mass 0 for x non-integer (R warns; counted by the kernel), negative or
// infinite.

double dgeom(double x, double p, int give_log)
{
    if (isnan(x) || isnan(p))
        return x + p;
    if (p <= 0 || p > 1)
        ML_WARN_return_NAN;
    R_D_nonint_check(x);
    if (x < 0 || !isfinite(x) || p == 0)
        return R_D__0;
    x = R_forceint(x);
    // (1 - p)^x, stable for small p
    double prob = dbinom_raw(0., x, p, 1 - p, give_log);
    return give_log ? log(p) + prob : p * prob;
}
