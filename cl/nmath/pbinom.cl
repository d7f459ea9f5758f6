// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pbinom, pbinom_class
// @depends: pbeta, dpq, rmath_utils
// @source: Abramowitz & Stegun 26.5.24: P[X <= x] = I_{1-p}(n - x, x + 1) = 1 - I_p(x + 1, n - x)
//          for X ~ Binomial(n, p), by the incomplete beta function of pbeta (Didonato & Morris,
//          ACM TOMS 708).
//
// pbinom(x, n, p): NaN for n or p non-finite, n not an integer (R warns), n < 0 or p outside
// [0, 1]; x is floored after a fuzz of 1e-7 (so 3 - 1e-8 counts as 3).

double pbinom(double x, double n, double p, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(n) || isnan(p))
        return x + n + p;
    if (!isfinite(n) || !isfinite(p))
        ML_WARN_return_NAN;
    if (R_nonint(n))
        ML_WARN_return_NAN;
    n = R_forceint(n);
    // n = 0 is a valid value
    if (n < 0 || p < 0 || p > 1)
        ML_WARN_return_NAN;
    if (x < 0)
        return R_DT_0;
    x = floor(x + 1e-7);
    if (n <= x)
        return R_DT_1;
    return pbeta(p, x + 1, n - x, !lower_tail, log_p);
}

// pbinom's pbeta method (class functions: see pbeta.cl)
int pbinom_class(double x, double n, double p, int lower_tail, int log_p)
{
    if (!isfinite(x) || !isfinite(n) || !(p >= 0.0 && p <= 1.0) || n < 0 || x < 0)
        return 0;
    n = R_forceint(n);
    x = floor(x + 1e-7);
    if (n <= x)
        return 0;
    return pbeta_class(p, x + 1, n - x, !lower_tail, log_p);
}
