// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: lgamma1p
// @depends: lgammafn, lgamma1p_core
// @source: Abramowitz & Stegun 6.1.33 (the series of lgamma1p_core.cl).
//
// log(gamma(1 + a)), accurate for small |a| where lgammafn(1 + a) loses digits to the rounding
// of 1 + a.  For |a| >= 1/2 it is lgammafn(a + 1), otherwise the series (lgamma1p_core.cl).

double lgamma1p(double a)
{
    if (fabs(a) >= 0.5)
        return lgammafn(a + 1);
    return lgamma1p_small(a);
}
