// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: lgammafn_sign, lgammafn
// @depends: gammafn, lgammacor, lgamma1p_core, cospi, rmath_constants, rmath_utils
// @source: W. Fullerton, SLATEC routine DLNGAM (1977, rev. 1983); Abramowitz & Stegun 6.1.41
//          (Stirling's formula) and 6.1.17 (reflection).
//
// log|gamma(x)|, and its sign through `sgn` (lgammafn_sign).  For |x| <= 10 it is the log of
// gammafn; above, Stirling's formula plus the remainder lgammacor (dropped where it is below
// rounding: x > 4934720, and the leading term x (log x - 1) alone above 1e17); for x < -10 the
// reflection log(pi / |x sin(pi x)|) - log gamma(|x|).  The poles 0, -1, -2, ... give +Inf (no
// warning: the best answer, as R), denormal |x| gives -log|x|, |x| > 2.53e305 gives +Inf.
// Built with DASKCL_ACCURACY_BEST, 0.5 < x < 2.5 (around the zeros at 1 and 2, where the log of
// gammafn loses the relative accuracy) takes lgamma1p's series: log gamma(1 + a) at a = x - 1,
// or at a = x - 2 plus log1p(a), both a exact.

#define LGAMMAFN_XMAX 2.5327372760800758e+305

NMATH_NOINLINE double lgammafn_sign(double x, int *sgn)
{
    *sgn = 1;
    if (isnan(x))
        return x;
    if (x < 0 && fmod(floor(-x), 2.) == 0)
        *sgn = -1;
    if (x <= 0 && x == trunc(x))
        return ML_POSINF;     // a pole
    double y = fabs(x);
    if (y < 1e-306)
        return -log(y);       // denormal range: gamma(x) ~ 1/x
#ifdef DASKCL_ACCURACY_BEST
    if (x > 0.5 && x < 2.5)
        return x < 1.5 ? lgamma1p_small(x - 1.) : lgamma1p_small(x - 2.) + log1p(x - 2.);
#endif
    if (y <= 10)
        return log(fabs(gammafn(x)));
    if (y > LGAMMAFN_XMAX)
        return ML_POSINF;
    if (x > 0) {
        if (x > 1e17)
            return x * (log(x) - 1.);
        if (x > 4934720.)
            return M_LN_SQRT_2PI + (x - 0.5) * log(x) - x;
        return M_LN_SQRT_2PI + (x - 0.5) * log(x) - x + lgammacor(x);
    }
    // x < -10
    double s = fabs(R_sinpi(y));
    if (s == 0)
        ML_WARN_return_NAN;   // unreachable: the poles are caught above
    return M_LN_SQRT_PId2 + (x - 0.5) * log(y) - x - log(s) - lgammacor(y);
}

double lgammafn(double x)
{
    int sgn;
    return lgammafn_sign(x, &sgn);
}

#undef LGAMMAFN_XMAX
