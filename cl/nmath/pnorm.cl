// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnorm_both, pnorm5
// @depends: dpq, rmath_constants, rmath_utils
// @source: W. J. Cody (1969), "Rational Chebyshev approximations for the error function",
//          Math. Comp. 23, 631-637, and Cody (1993), ACM TOMS Algorithm 715 (CALERF):
//          the coefficients of the three rational approximations.
//
// The standard normal distribution function Phi(x) and its complement, both at once if asked
// (i_tail 0: lower, 1: upper, 2: both), on the probability or the log scale:
//   |x| <= 0.67448975 (the quartile):  1/2 +- x R1(x^2)            (pnorm_a, pnorm_b below)
//   |x| <= sqrt(32):                   exp(-x^2/2) R2(|x|)          (pnorm_c, pnorm_d)
//   beyond:                            exp(-x^2/2) (1/sqrt(2pi) - R3(1/x^2) / x^2) / |x|  (pnorm_p, pnorm_q)
// In the two outer ranges exp(-x^2/2) is taken as exp(-s^2/2) exp(-(x - s)(x + s)/2), s = x
// truncated to a multiple of 1/16, so that s^2 is exact and the tail keeps full relative accuracy;
// the complementary tail is 1 - that (log1p(-that) on the log scale).  The far range is used up
// to |x| where the asked-for tail is 0 or 1 in double precision (-37.5193 / 8.2924, Cody's
// limits), and on the log scale up to |x| = 1e170 (beyond, x^2 overflows and the tails are given
// as 0 and 1).

// The two outer ranges: cum = exp(-X^2/2) * factor (on the requested scale) is the tail beyond
// |x| (the lower tail of -|x|), ccum its complement; then swapped for x > 0.  ccum is only
// computed on the log scale where it is asked for.
static inline void pnorm_outer(double X, double factor, double x, int lower, int upper,
                               int log_p, double *cum, double *ccum)
{
    // halving and scaling by 1/16 are exact: multiplications, not ldexp or a division (the same
    // bits, fewer instructions on GPUs)
    double s = trunc(X * 16) * 0.0625;
    double del = (X - s) * (X + s);
    if (log_p) {
        *cum = (-s * (s * 0.5)) - (del * 0.5) + log(factor);
        if ((lower && x > 0.) || (upper && x <= 0.))
            *ccum = log1p(-exp(-s * (s * 0.5)) * exp(-(del * 0.5)) * factor);
    } else {
        *cum = exp(-s * (s * 0.5)) * exp(-(del * 0.5)) * factor;
        *ccum = 1.0 - *cum;
    }
    if (x > 0.) {
        double t = *cum;
        if (lower)
            *cum = *ccum;
        *ccum = t;
    }
}

// Cody's coefficients (TOMS 715, CALERF), as R's pnorm_both numbers them: a/b the central range
// (x R1(x^2)), c/d the middle (R2(|x|)), p/q the far (R3(1/x^2)).
__constant double pnorm_a[5] = {2.2352520354606839287, 161.02823106855587881,
                                1067.6894854603709582, 18154.981253343561249,
                                0.065682337918207449113};
__constant double pnorm_b[4] = {47.20258190468824187, 976.09855173777669322,
                                10260.932208618978205, 45507.789335026729956};
__constant double pnorm_c[9] = {0.39894151208813466764, 8.8831497943883759412,
                                93.506656132177855979, 597.27027639480026226,
                                2494.5375852903726711, 6848.1904505362823326,
                                11602.651437647350124, 9842.7148383839780218,
                                1.0765576773720192317e-8};
__constant double pnorm_d[8] = {22.266688044328115691, 235.38790178262499861,
                                1519.377599407554805, 6485.558298266760755,
                                18615.571640885098091, 34900.952721145977266,
                                38912.003286093271411, 19685.429676859990727};
__constant double pnorm_p[6] = {0.21589853405795699, 0.1274011611602473639,
                                0.022235277870649807, 0.001421619193227893466,
                                2.9112874951168792e-5, 0.02307344176494017303};
__constant double pnorm_q[5] = {1.28426009614491121, 0.468238212480865118,
                                0.0659881378689285515, 0.00378239633202758244,
                                7.29751555083966205e-5};

void pnorm_both(double x, double *cum, double *ccum, int i_tail, int log_p)
{
    if (isnan(x)) {
        *cum = *ccum = x;
        return;
    }
    const double eps = DBL_EPSILON * 0.5;
    int lower = i_tail != 1;
    int upper = i_tail != 0;
    *cum = *ccum = ML_NAN;   // each is set where it is asked for
    double y = fabs(x);
    // the range: 0 central, 1 middle, 2 far, 3 beyond (the tails are exactly 0 and 1)
    int r = y <= 0.67448975 ? 0 : y <= M_SQRT_32 ? 1
          : ((log_p && y < 1e170) || (lower && -37.5193 < x && x < 8.2924)
             || (upper && -8.2924 < x && x < 37.5193)) ? 2 : 3;
    if (r == 3) {
        *cum = x > 0 ? R_D__1 : R_D__0;
        *ccum = x > 0 ? R_D__0 : R_D__1;
        return;
    }
    // The central and middle rational functions are both evaluated, in straight lines, and the
    // element's one chosen: the elements of a GPU warp nearly always fall in both ranges, and
    // two fixed polynomials cost fewer instructions than one whose coefficients are chosen per
    // element (indexed constant loads and selects: benchmarks/README.md, "Cheap kernels").
    // Each is evaluated as Cody's loops do (xnum, xden from the leading coefficient), so the
    // bits are those of the separate ranges.  The far one, with its division, only where an
    // element of the warp needs it.  t = m * num / den is the range's rational function.
    double xsq = y > eps ? x * x : 0.;
    double n0 = pnorm_a[4] * xsq, d0 = xsq;
#pragma unroll
    for (int i = 0; i < 3; ++i) {
        n0 = (n0 + pnorm_a[i]) * xsq;
        d0 = (d0 + pnorm_b[i]) * xsq;
    }
    double n1 = pnorm_c[8] * y, d1 = y;
#pragma unroll
    for (int i = 0; i < 7; ++i) {
        n1 = (n1 + pnorm_c[i]) * y;
        d1 = (d1 + pnorm_d[i]) * y;
    }
    double num = r == 0 ? n0 + pnorm_a[3] : n1 + pnorm_c[7];
    double den = r == 0 ? d0 + pnorm_b[3] : d1 + pnorm_d[7];
    double m = r == 0 ? x : 1.;
    if (r == 2) {
        double z = 1.0 / (x * x);
        double n2 = pnorm_p[5] * z, d2 = z;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            n2 = (n2 + pnorm_p[i]) * z;
            d2 = (d2 + pnorm_q[i]) * z;
        }
        num = n2 + pnorm_p[4];
        den = d2 + pnorm_q[4];
        m = z;
    }
    double t = m * num / den;
    if (r == 0) {
        if (lower)
            *cum = 0.5 + t;
        if (upper)
            *ccum = 0.5 - t;
        if (log_p) {
            if (lower)
                *cum = log(*cum);
            if (upper)
                *ccum = log(*ccum);
        }
        return;
    }
    if (r == 2)
        t = (M_1_SQRT_2PI - t) / y;
    // exp(-x^2/2) by the split of pnorm_outer, the same for x and |x|
    pnorm_outer(y, t, x, lower, upper, log_p, cum, ccum);
}

double pnorm5(double x, double mu, double sigma, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(mu) || isnan(sigma))
        return x + mu + sigma;
    if (!isfinite(x) && mu == x)
        return ML_NAN;   // x - mu is NaN (R returns it without warning)
    if (sigma <= 0) {
        if (sigma < 0)
            ML_WARN_return_NAN;
        return (x < mu) ? R_DT_0 : R_DT_1;   // the point mass at mu
    }
    // sigma == 1 (the standard normal, the common call): dividing by 1 is exact, so it is
    // skipped; a GPU's double division is about 20 instructions (benchmarks/README.md,
    // "Cheap kernels")
    double z = sigma == 1. ? x - mu : (x - mu) / sigma;
    if (!isfinite(z))
        return (x < mu) ? R_DT_0 : R_DT_1;
    double p, cp;
    pnorm_both(z, &p, &cp, lower_tail ? 0 : 1, log_p);
    return lower_tail ? p : cp;
}
