// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dunif
// @depends: dpq
// @source: the uniform density on [a, b]: 1 / (b - a) inside, 0 outside (R's conventions:
//          NaN for b <= a).

double dunif(double x, double a, double b, int give_log)
{
    if (isnan(x) || isnan(a) || isnan(b))
        return x + a + b;
    if (b <= a)
        ML_WARN_return_NAN;
    if (x < a || x > b)
        return R_D__0;
    return give_log ? -log(b - a) : 1. / (b - a);
}
