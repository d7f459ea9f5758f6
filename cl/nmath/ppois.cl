// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: ppois, ppois_class
// @depends: pgamma, dpq, rmath_utils
// @source: Abramowitz & Stegun 26.4.21: P[X <= x] = Q(x + 1, lambda), the upper regularised
//          incomplete gamma function, for X ~ Poisson(lambda) (pgamma; Morten Welinder's
//          algorithm, as R).
//
// ppois(x, lambda): NaN for lambda < 0; 1 for lambda = 0 or x = +Inf; x is floored after a fuzz
// of 1e-7.

double ppois(double x, double lambda, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(lambda))
        return x + lambda;
    if (lambda < 0.)
        ML_WARN_return_NAN;
    if (x < 0)
        return R_DT_0;
    if (lambda == 0.)
        return R_DT_1;
    if (!isfinite(x))
        return R_DT_1;
    x = floor(x + 1e-7);
    return pgamma(lambda, x + 1, 1., !lower_tail, log_p);
}

// pgamma's method (class functions: see pbeta.cl)
int ppois_class(double x, double lambda, int lower_tail, int log_p)
{
    if (!isfinite(x) || x < 0)
        return 0;
    return pgamma_raw_class(lambda, floor(x + 1e-7) + 1);
}
