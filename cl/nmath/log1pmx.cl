// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: log1pmx
// @depends: logcf
// @source: M. Welinder (2004), pgamma for R (PR#7307); the series
//          log(1 + x) - x = r (2 y S(y) - x),  r = x / (2 + x),  y = r^2,
//          S(y) = sum_k y^k / (2k + 3)   (Abramowitz & Stegun 4.1.28 with z = 1 + x).
//
// log(1 + x) - x, accurate where the difference cancels (small |x|).  Outside
// [-0.79149064, 1] the plain difference is accurate; inside, the series in y = (x / (2 + x))^2,
// its first four terms for |x| < 0.01 and otherwise the continued fraction logcf(y, 3, 2).

NMATH_NOINLINE double log1pmx(double x)
{
    const double minLog1Value = -0.79149064;
    if (x > 1 || x < minLog1Value)
        return log1p(x) - x;
    double r = x / (2 + x);
    double y = r * r;
    if (fabs(x) < 1e-2) {
        const double two = 2;
        return r * ((((two / 9 * y + two / 7) * y + two / 5) * y + two / 3) * y - x);
    }
    return r * (2 * y * logcf(y, 3, 2, 1e-14) - x);
}
