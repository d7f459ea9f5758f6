// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: logcf
// @depends: rmath_utils
// @source: M. Welinder (2004), pgamma for R (R bug report PR#7307): the series
//          sum_k x^k / (i + k d) = 2F1(1, i/d; 1 + i/d; x) / i evaluated as Gauss's continued
//          fraction (H. S. Wall (1948), Analytic Theory of Continued Fractions, ch. XVIII).
//
// logcf(x, i, d, eps) = sum_{k >= 0} x^k / (i + k d)  for |x| < 1, i > 0, d >= 0, to relative
// accuracy eps.  For i = 1, d = 1 it is -log(1 - x) / x, hence the name.  The convergents
// A_n / B_n of the continued fraction are advanced two partial quotients per step (one with
// numerator (i + (k-1) d)^2 x, one with (k d)^2 x) and rescaled by 2^256 whenever B leaves
// [2^-256, 2^256].  Used by log1pmx and lgamma1p (and pgamma).

#define LOGCF_SCALE 0x1p256

NMATH_NOINLINE double logcf(double x, double i, double d, double eps)
{
    double c1 = 2 * d;
    double c2 = i + d;
    double c4 = c2 + d;
    // the first two convergents
    double a1 = c2;
    double b1 = i * (c2 - i * x);
    double b2 = d * d * x;
    double a2 = c4 * c2 - b2;
    b2 = c4 * b1 - i * b2;

    while (fabs(a2 * b1 - a1 * b2) > fabs(eps * b1 * b2)) {
        double c3 = c2 * c2 * x;
        c2 += d;
        c4 += d;
        a1 = c4 * a2 - c3 * a1;
        b1 = c4 * b2 - c3 * b1;

        c3 = c1 * c1 * x;
        c1 += d;
        c4 += d;
        a2 = c4 * a1 - c3 * a2;
        b2 = c4 * b1 - c3 * b2;

        double ab2 = fabs(b2);
        if (ab2 > LOGCF_SCALE) {
            a1 /= LOGCF_SCALE;
            b1 /= LOGCF_SCALE;
            a2 /= LOGCF_SCALE;
            b2 /= LOGCF_SCALE;
        } else if (ab2 < 1 / LOGCF_SCALE) {
            a1 *= LOGCF_SCALE;
            b1 *= LOGCF_SCALE;
            a2 *= LOGCF_SCALE;
            b2 *= LOGCF_SCALE;
        }
    }
    return a2 / b2;
}

#undef LOGCF_SCALE
