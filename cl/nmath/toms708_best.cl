// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: t708_log_dd, t708_dev_dd
// @depends: bd0_best, ddouble
// @source: A. R. DiDonato & A. H. Morris, Jr. (1992), "Algorithm 708: Significant digit
//          computation of the incomplete beta function ratios", ACM TOMS 18(3), 360-373 (the
//          factor x^a y^b / B(a, b) of brcomp, brcmp1, basym and bgrat, and for a, b >= 8 its
//          exponent a rlog1(-lambda / a) + b rlog1(lambda / b), lambda = a - (a + b) x);
//          C. Loader (2000), "Fast and accurate computation of binomial probabilities" (that
//          exponent as the sum of two deviances bd0(a, (a + b) x) + bd0(b, (a + b) y),
//          bd0_best.cl); T. J. Dekker (1971), Numer. Math. 18, 224-242 (double-double).
//
// The exponents of TOMS 708's factor in double-double, for the `best` accuracy mode (toms708.cl
// takes them under DASKCL_ACCURACY_BEST).  In double, a log x + b log y and the exponent above
// (with lambda rounded) are as large as the tail is deep, hundreds for shapes beyond 1e5, and
// lose an ulp of that: 1e-13 relative in the factor.  x + y = 1 is taken exactly from the
// smaller of the two, the other as 1 minus it (the larger rounds where the caller formed it).

// log(x) in double-double, x = 1 - y exactly where y < x (x, y > 0)
static inline dd_t t708_log_dd(double x, double y)
{
    return dd_log_full(y < x ? dd_add_d(dd_d(1.), -y) : dd_d(x));
}

// bd0(a, (a + b) x) + bd0(b, (a + b) y) in double-double, for a, b > 0, a + b < 1e300 and
// min(x, y) > 1e-280 (a / ((a + b) x) stays finite)
static inline dd_t t708_dev_dd(double a, double b, double x, double y)
{
    dd_t s = dd_add_d(dd_d(a), b), mx, my;
    if (x <= y) {
        mx = dd_mul_d(s, x);
        my = dd_sub(s, mx);
    } else {
        my = dd_mul_d(s, y);
        mx = dd_sub(s, my);
    }
    return dd_add(bd0_dd(a, mx), bd0_dd(b, my));
}
