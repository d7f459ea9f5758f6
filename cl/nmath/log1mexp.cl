// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: log1mexp
// @depends: dpq
// @source: M. Maechler (2012), "Accurately computing log(1 - exp(-|a|))", the Rmpfr package
//          vignette.
//
// log(1 - exp(-x)) for x >= 0: log(-expm1(-x)) for x <= log 2, log1p(-exp(-x)) above
// (Maechler's switch point a0 = log 2).  NaN for x < 0, where 1 - exp(-x) < 0.

double log1mexp(double x)
{
    return R_Log1_Exp(-x);
}
