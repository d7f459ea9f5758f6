// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: punif
// @depends: dpq
// @source: the uniform distribution function on [a, b]; the upper tail is computed as
//          (b - x) / (b - a) directly, not as 1 - P, so that it keeps its relative accuracy.

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
    return R_D_val(num / (b - a));
}
