// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_k
// @depends: rmath_utils
// @source: W. J. Cody and L. Stoltz, RKBESL (netlib SPECFUN, 1989; ACM TOMS Algorithm 715),
//          after J. B. Campbell, "On Temme's algorithm for the modified Bessel functions of the
//          third kind", ACM TOMS 6 (1980) 581-586, and N. M. Temme, J. Comput. Phys. 19 (1975)
//          324-337.  The coefficient tables P, Q, R, S, T, ESTM, ESTF are RKBESL's.
//
// K_nu(x) for x >= 0 and real nu (K_{-nu} = K_nu, Abramowitz & Stegun 9.6.6); expo = 2 gives
// exp(x) K_nu(x).  RKBESL computes K_{a}(x) and K_{a+1}(x) for the fractional order a in
// (-1/2, 1/2] (Temme's series for x <= 1, Campbell's backward recurrences and the Wronskian for
// 1 < x <= 4, a continued fraction for x > 4), then recurs forward to the order asked for; when
// the values would overflow it carries ratios K_{n+1}/K_n and multiplies them up at the end.
// RKBESL fills an array of all orders a, a+1, ..., nu; here only the last is kept (the
// recurrences need just the two previous values), so any order works without allocation: the
// work is O(nu) at most, less when the values overflow to +Inf first.  NaN for |nu| >= 2^31 - 1,
// beyond R's int count of orders.
//
// R's conventions kept: K = +Inf at x = 0 and where the values overflow; 0 for x > 705.342
// unscaled (underflow); for x > 1/DBL_EPSILON the scaled value is sqrt(pi / (2x)) for every
// order (RKBESL's asymptotic form); NaN for x < 0.

__constant double bessel_k_p[8] = {
    .805629875690432845,   20.4045500205365151,   157.705605106676174,  536.671116469207504,
    900.382759291288778,   730.923886650660393,   229.299301509425145,  .822467033424113231
};
__constant double bessel_k_q[7] = {
    29.4601986247850434,   277.577868510221208,   1206.70325591027438,  2762.91444159791519,
    3443.74050506564618,   2210.63190113378647,   572.267338359892221
};
__constant double bessel_k_r[5] = {
    -.48672575865218401848,  13.079485869097804016,  -101.96490580880537526,
    347.65409106507813131,   3.4958981245219347820e-4
};
__constant double bessel_k_s[4] = {
    -25.579105509976461286,  212.57260432226544008,  -610.69018684944109624,
    422.69668805777760407
};
__constant double bessel_k_t[6] = {
    1.6125990452916363814e-10, 2.5051878502858255354e-8, 2.7557319615147964774e-6,
    1.9841269840928373686e-4,  .0083333333333334751799,  .16666666666666666446
};
__constant double bessel_k_estm[6] = { 52.0583, 5.7607, 2.7782, 14.4303, 185.3004, 9.3715 };
__constant double bessel_k_estf[7] = { 41.8341, 7.1075, 6.4306, 42.511, 1.35633, 84.5096, 20. };

#define BESSEL_K_A      .11593151565841244881   /* log(2) - Euler's constant */
#define BESSEL_K_D      .797884560802865364     /* sqrt(2 / pi) */
#define BESSEL_K_XMAX   705.342
#define BESSEL_K_SQXMIN 1.49e-154
#define BESSEL_K_TINYX  1e-10

// K_{alpha + nb - 1}(x) (times exp(x) if ize == 2) for 0 <= alpha < 1, nb >= 1: RKBESL's
// value BK(NB).  *ncalc as RKBESL's NCALC (only R's warnings depend on it).
static NMATH_NOINLINE double bessel_k_last(double x, double alpha, int nb, int ize, int *ncalc)
{
    double ex = x, nu = alpha;
    *ncalc = imin2(nb, 0) - 2;
    if (!(nb > 0 && nu >= 0. && nu < 1. && ize >= 1 && ize <= 2))
        return 0.;
    if (ex <= 0. || (ize == 1 && ex > BESSEL_K_XMAX)) {
        *ncalc = nb;
        return (ex <= 0.) ? ML_POSINF : 0.;
    }

    int k = 0;
    if (nu < BESSEL_K_SQXMIN)
        nu = 0.;
    else if (nu > .5) {
        k = 1;
        nu -= 1.;
    }
    double twonu = nu + nu;
    int iend = nb + k - 1;
    double c = nu * nu, d3 = -c;
    double bk1 = 0., bk2 = 0., ratio = 0., wminf = 0.;
    double d1, d2, t1, t2, f0, f1, f2, p0, q0;

    if (ex <= 1.) {
        // P0 = gamma(1 + nu) (2/x)^nu, Q0 = gamma(1 - nu) (x/2)^nu
        d1 = 0.;
        d2 = bessel_k_p[0];
        t1 = 1.;
        t2 = bessel_k_q[0];
        for (int i = 2; i <= 7; i += 2) {
            d1 = c * d1 + bessel_k_p[i - 1];
            d2 = c * d2 + bessel_k_p[i];
            t1 = c * t1 + bessel_k_q[i - 1];
            t2 = c * t2 + bessel_k_q[i];
        }
        d1 = nu * d1;
        t1 = nu * t1;
        f1 = log(ex);
        f0 = BESSEL_K_A + nu * (bessel_k_p[7] - nu * (d1 + d2) / (t1 + t2)) - f1;
        q0 = exp(-nu * (BESSEL_K_A - nu * (bessel_k_p[7] + nu * (d1 - d2) / (t1 - t2)) - f1));
        f1 = nu * f0;
        p0 = exp(f1);
        // F0
        d1 = bessel_k_r[4];
        t1 = 1.;
        for (int i = 0; i < 4; ++i) {
            d1 = c * d1 + bessel_k_r[i];
            t1 = c * t1 + bessel_k_s[i];
        }
        if (fabs(f1) <= .5) {
            f1 *= f1;
            d2 = 0.;
            for (int i = 0; i < 6; ++i)
                d2 = f1 * d2 + bessel_k_t[i];
            d2 = f0 + f0 * f1 * d2;
        } else {
            d2 = sinh(f1) / nu;
        }
        f0 = d2 - nu * d1 / (t1 * p0);
        if (ex <= BESSEL_K_TINYX) {
            // K(nu, x) and the ratios x K(nu+1, x) / K(nu, x) = 2 (nu + 1), ...
            double bk = f0 + ex * f0;
            if (ize == 1)
                bk -= ex * bk;
            ratio = p0 / f0;
            c = ex * DBL_MAX;
            // RKBESL gives up (NCALC = -1) when K(nu+1, x) or a ratio overflows; R then returns
            // its zero-filled array (or K(nu, x), already stored, when nb == 1): 0
            if (k != 0) {
                *ncalc = -1;
                if (bk >= c / ratio)
                    return (nb == 1) ? bk : 0.;
                bk = ratio * bk / ex;
                twonu += 2.;
                ratio = twonu;
            }
            *ncalc = 1;
            if (nb == 1)
                return bk;
            // BK(I) = ratio / x for I = 2..NB (RKBESL gives up if a ratio reaches c), then
            // their running product
            // (the ratios grow by 2 per order: the loop is needed only near the limit c)
            if ((ratio + 2. * (double)nb) * (1. + 1e-12) >= c) {
                double tw = twonu, rt = ratio;
                for (int i = 2; i <= nb; ++i) {
                    if (rt >= c) {
                        *ncalc = -1;
                        return 0.;
                    }
                    tw += 2.;
                    rt = tw;
                }
            }
            for (int i = 2; i <= nb; ++i) {
                double r = ratio / ex;
                twonu += 2.;
                ratio = twonu;
                bk *= r;   // may overflow to +Inf, as in R
                if (isinf(bk))
                    return bk;
            }
            *ncalc = nb;
            return bk;
        }
        // 1e-10 < x <= 1: Temme's series
        c = 1.;
        double x2by4 = ex * ex / 4.;
        p0 = .5 * p0;
        q0 = .5 * q0;
        d1 = -1.;
        d2 = 0.;
        bk1 = 0.;
        bk2 = 0.;
        f1 = f0;
        f2 = p0;
        do {
            d1 += 2.;
            d2 += 1.;
            d3 = d1 + d3;
            c = x2by4 * c / d2;
            f0 = (d2 * f0 + p0 + q0) / d3;
            p0 /= d2 - nu;
            q0 /= d2 + nu;
            t1 = c * f0;
            t2 = c * (p0 - d2 * f0);
            bk1 += t1;
            bk2 += t2;
        } while (fabs(t1 / (f1 + bk1)) > DBL_EPSILON || fabs(t2 / (f2 + bk2)) > DBL_EPSILON);
        bk1 = f1 + bk1;
        bk2 = 2. * (f2 + bk2) / ex;
        if (ize == 2) {
            d1 = exp(ex);
            bk1 *= d1;
            bk2 *= d1;
        }
        wminf = bessel_k_estf[0] * ex + bessel_k_estf[1];
    } else if (DBL_EPSILON * ex > 1.) {
        // x > 1/eps: the leading term of the asymptotic expansion, for every order
        *ncalc = nb;
        return 1. / (BESSEL_K_D * sqrt(ex));
    } else {
        double twox = ex + ex, blpha = 0.;
        ratio = 0.;
        if (ex <= 4.) {
            // K(nu+1, x) / K(nu, x) by backward recurrence, 1 < x <= 4
            d2 = trunc(bessel_k_estm[0] / ex + bessel_k_estm[1]);
            int m = (int)d2;
            d1 = d2 + d2;
            d2 -= .5;
            d2 *= d2;
            for (int i = 2; i <= m; ++i) {
                d1 -= 2.;
                d2 -= d1;
                ratio = (d3 + d2) / (twox + d1 - ratio);
            }
            // I(|nu|, x), I(|nu|+1, x) by backward recurrence, K(nu, x) from the Wronskian
            d2 = trunc(bessel_k_estm[2] * ex + bessel_k_estm[3]);
            m = (int)d2;
            c = fabs(nu);
            d3 = c + c;
            d1 = d3 - 1.;
            f1 = DBL_MIN;
            f0 = (2. * (c + d2) / ex + .5 * ex / (c + d2 + 1.)) * DBL_MIN;
            for (int i = 3; i <= m; ++i) {
                d2 -= 1.;
                f2 = (d3 + d2 + d2) * f0;
                blpha = (1. + d1 / d2) * (f2 + blpha);
                f2 = f2 / ex + f1;
                f1 = f0;
                f0 = f2;
            }
            f1 = (d3 + 2.) * f0 / ex + f1;
            d1 = 0.;
            t1 = 1.;
            for (int i = 0; i < 7; ++i) {
                d1 = c * d1 + bessel_k_p[i];
                t1 = c * t1 + bessel_k_q[i];
            }
            p0 = exp(c * (BESSEL_K_A + c * (bessel_k_p[7] - c * d1 / t1) - log(ex))) / ex;
            f2 = (c + .5 - ratio) * f1 / ex;
            bk1 = p0 + (d3 * f0 - f2 + f0 + blpha) / (f2 + f1 + f0) * p0;
            if (ize == 1)
                bk1 *= exp(-ex);
            wminf = bessel_k_estf[2] * ex + bessel_k_estf[3];
        } else {
            // K(nu, x) and K(nu+1, x) / K(nu, x) by a continued fraction, x > 4
            double dm = trunc(bessel_k_estm[4] / ex + bessel_k_estm[5]);
            int m = (int)dm;
            d2 = dm - .5;
            d2 *= d2;
            d1 = dm + dm;
            for (int i = 2; i <= m; ++i) {
                dm -= 1.;
                d1 -= 2.;
                d2 -= d1;
                ratio = (d3 + d2) / (twox + d1 - ratio);
                blpha = (ratio + ratio * blpha) / dm;
            }
            bk1 = 1. / ((BESSEL_K_D + BESSEL_K_D * blpha) * sqrt(ex));
            if (ize == 1)
                bk1 *= exp(-ex);
            wminf = bessel_k_estf[4] * (ex - fabs(ex - bessel_k_estf[6])) + bessel_k_estf[5];
        }
        // K(nu+1, x) from K(nu, x) and the ratio
        bk2 = bk1 + bk1 * (nu + .5 - ratio) / ex;
    }

    // forward recurrence from K(nu, x), K(nu+1, x) up to the order asked for
    *ncalc = nb;
    if (iend == 0)
        return bk1;
    if (iend == 1)
        return bk2;
    int m = imin2((int)(wminf - nu), iend);
    int itemp = 1;
    for (int i = 2; i <= m; ++i) {
        t1 = bk1;
        bk1 = bk2;
        twonu += 2.;
        if (ex < 1.) {
            if (bk1 >= (DBL_MAX / twonu) * ex)
                break;
        } else {
            if (bk1 / ex >= DBL_MAX / twonu)
                break;
        }
        bk2 = twonu / ex * bk1 + t1;
        itemp = i;
    }
    m = itemp;
    if (m == iend)
        return bk2;
    // the rest as ratios K(n+1)/K(n), multiplied onto the last value while it stays finite
    ratio = bk2 / bk1;
    int mplus1 = m + 1;
    double val = bk2;
    for (int i = mplus1; i <= iend; ++i) {
        twonu += 2.;
        ratio = twonu / ex + 1. / ratio;
        val *= ratio;   // may overflow to +Inf, as in R
        if (isinf(val))
            return val;
    }
    return val;
}

double bessel_k(double x, double alpha, double expo)
{
    if (isnan(x) || isnan(alpha))
        return x + alpha;
    if (x < 0)
        ML_WARN_return_NAN;
    int ize = (int)expo;
    if (alpha < 0)
        alpha = -alpha;   // K_{-nu} = K_nu
    if (alpha >= 2147483647.)
        ML_WARN_return_NAN;   // beyond R's int number of orders
    int nb = 1 + (int)floor(alpha);   // nb - 1 <= alpha < nb
    alpha -= (double)(nb - 1);
    int ncalc;
    return bessel_k_last(x, alpha, nb, ize, &ncalc);
}

#undef BESSEL_K_A
#undef BESSEL_K_D
#undef BESSEL_K_XMAX
#undef BESSEL_K_SQXMIN
#undef BESSEL_K_TINYX
