// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pexp
// @depends: dpq
// @source: the exponential distribution function 1 - exp(-x / scale), computed with expm1 and
//          log(1 - exp(t)) (Maechler 2012) so that both tails keep full relative accuracy.

double pexp(double x, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(scale))
        return x + scale;
    if (scale < 0.)
        ML_WARN_return_NAN;
    if (x <= 0.)
        return R_DT_0;
    double t = -(x / scale); // log of the upper tail
    if (!lower_tail)
        return R_D_exp(t);
    return log_p ? R_Log1_Exp(t) : -expm1(t);
}
