// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pgeom
// @depends: dpq, rmath_utils
// @source: the geometric distribution function P[X <= x] = 1 - (1 - p)^(x + 1), formed as
//          -expm1((x + 1) log1p(-p)) so that it keeps its accuracy for small p and in both
//          tails (and on the log scale through log(1 - exp(.)), Maechler 2012).
//
// pgeom(x, p): NaN for p outside (0, 1]; x is floored after a fuzz of 1e-7.

double pgeom(double x, double p, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(p))
        return x + p;
    if (p <= 0 || p > 1)
        ML_WARN_return_NAN;
    if (x < 0.)
        return R_DT_0;
    if (p == 1.) {
        x = lower_tail ? 1 : 0;
        return log_p ? log(x) : x;
    }
    x = floor(x + 1e-7);
    if (!isfinite(x))
        return R_DT_1;
    x = log1p(-p) * (x + 1);   // log P[X > x]
    if (log_p)
        return R_DT_Clog(x);
    return lower_tail ? -expm1(x) : exp(x);
}
