// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnorm_both, pnorm5
// @depends: dpq, rmath_constants, rmath_utils
// @source: W. J. Cody (1969), "Rational Chebyshev approximations for the error function",
//          Math. Comp. 23, 631-637, and Cody (1993), ACM TOMS Algorithm 715 (CALERF):
//          the coefficients of the three rational approximations.
//
// The standard normal distribution function Phi(x) and its complement, both at once if asked
// (i_tail 0: lower, 1: upper, 2: both), on the probability or the log scale:
//   |x| <= 0.67448975 (the quartile):  1/2 +- x R1(x^2)            (row 0 below)
//   |x| <= sqrt(32):                   exp(-x^2/2) R2(|x|)          (row 1)
//   beyond:                            exp(-x^2/2) (1/sqrt(2pi) - R3(1/x^2) / x^2) / |x|  (row 2)
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

// The three rational functions as one Horner loop of 8 steps (xnum, xden from 0; the shorter
// ones padded with leading zero coefficients, and the denominators' leading 1, which leave
// every rounding as in the separate loops: 0 * z = 0 and 0 + c = c exactly), so that a GPU warp
// whose elements fall in different ranges evaluates one rational function, not three
// (benchmarks/README.md, "Cheap kernels").  Row r: the coefficients of range r, the last one
// added after the loop.  Each coefficient is chosen by a select on r at a fixed index (not
// indexed by r), so that the lanes of a warp read the same constant addresses.
__constant double pnorm_num[3][9] = {
    {0., 0., 0., 0., 0.065682337918207449113, 2.2352520354606839287, 161.02823106855587881,
     1067.6894854603709582, 18154.981253343561249},
    {1.0765576773720192317e-8, 0.39894151208813466764, 8.8831497943883759412,
     93.506656132177855979, 597.27027639480026226, 2494.5375852903726711,
     6848.1904505362823326, 11602.651437647350124, 9842.7148383839780218},
    {0., 0., 0., 0.02307344176494017303, 0.21589853405795699, 0.1274011611602473639,
     0.022235277870649807, 0.001421619193227893466, 2.9112874951168792e-5}
};
__constant double pnorm_den[3][9] = {
    {0., 0., 0., 0., 1., 47.20258190468824187, 976.09855173777669322, 10260.932208618978205,
     45507.789335026729956},
    {1., 22.266688044328115691, 235.38790178262499861, 1519.377599407554805,
     6485.558298266760755, 18615.571640885098091, 34900.952721145977266,
     38912.003286093271411, 19685.429676859990727},
    {0., 0., 0., 1., 1.28426009614491121, 0.468238212480865118, 0.0659881378689285515,
     0.00378239633202758244, 7.29751555083966205e-5}
};

#define PNORM_COEF(c, r, i) ((r) == 0 ? c[0][i] : (r) == 1 ? c[1][i] : c[2][i])

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
    // the variable of the rational function and the factor before its division
    double z, m;
    if (r == 0) {
        z = y > eps ? x * x : 0.;
        m = x;
    } else if (r == 1) {
        z = y;
        m = 1.;
    } else {
        z = 1.0 / (x * x);
        m = z;
    }
    double xnum = 0., xden = 0.;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        xnum = (xnum + PNORM_COEF(pnorm_num, r, i)) * z;
        xden = (xden + PNORM_COEF(pnorm_den, r, i)) * z;
    }
    double t = m * (xnum + PNORM_COEF(pnorm_num, r, 8)) / (xden + PNORM_COEF(pnorm_den, r, 8));
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
    double z = (x - mu) / sigma;
    if (!isfinite(z))
        return (x < mu) ? R_DT_0 : R_DT_1;
    double p, cp;
    pnorm_both(z, &p, &cp, lower_tail ? 0 : 1, log_p);
    return lower_tail ? p : cp;
}
