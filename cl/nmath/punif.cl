// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: punif
// @depends: dpq
// @source: the uniform distribution function on [a, b]; the upper tail is computed as
//          (b - x) / (b - a) directly, not as 1 - P, so that it keeps its relative accuracy.
//          Built with DASKCL_ACCURACY_BEST, a log tail above 1/2 is log1p of minus the other
//          tail, which keeps its relative accuracy near 0 (R: the log of the rounded ratio).

double punif(double x, double a, double b, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(a) || isnan(b))
        return x + a + b;
    if (b < a || !isfinite(a) || !isfinite(b))
        ML_WARN_return_NAN;
    if (x >= b)
        return R_DT_1;
    if (x <= a)
        return R_DT_0;
    double num = lower_tail ? (x - a) : (b - x);
#ifdef DASKCL_ACCURACY_BEST
    if (log_p && num > 0.5 * (b - a))
        return log1p(-(lower_tail ? (b - x) : (x - a)) / (b - a));
#endif
    return R_D_val(num / (b - a));
}
