// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_y_nonneg
// @depends: rmath_utils
// @source: W. J. Cody, RYBESL (netlib SPECFUN, 1990; ACM TOMS Algorithm 715), after N. M.
//          Temme, "On the numerical evaluation of the ordinary Bessel function of the second
//          kind", J. Comput. Phys. 21 (1976) 343-350, and J. B. Campbell, "Bessel functions
//          J_nu(x) and Y_nu(x) of real order and real argument", Comp. Phys. Comm. 18 (1979)
//          133-142.  The Chebyshev coefficients CH of 1/gamma(1 - a) are RYBESL's.
//
// Y_nu(x) for x >= 0 and nu >= 0: the cycle-free core of bessel_y and bessel_j (see
// bessel_j_core.cl for why the wrappers are split from the cores).  Y_a and Y_{a+1} for the
// fractional order a in [-1/2, 1/2) come from Temme's series (x < 3), Temme's continued
// fraction (3 <= x < 16) or Campbell's asymptotic expansion (x >= 16); forward recurrence gives
// the order asked for, only the last two values being kept (no allocation).  R's conventions:
// -Inf below x = DBL_MIN and where the recurrence overflows, 0 for x > 1e8 (where sin and cos of x
// have lost half their digits).

__constant double bessel_y_ch[21] = {
    -6.7735241822398840964e-24, -6.1455180116049879894e-23, 2.9017595056104745456e-21,
    1.3639417919073099464e-19,  2.3826220476859635824e-18,  -9.0642907957550702534e-18,
    -1.4943667065169001769e-15, -3.3919078305362211264e-14, -1.7023776642512729175e-13,
    9.1609750938768647911e-12,  2.4230957900482704055e-10,  1.7451364971382984243e-9,
    -3.3126119768180852711e-8,  -8.6592079961391259661e-7,  -4.9717367041957398581e-6,
    7.6309597585908126618e-5,   .0012719271366545622927,    .0017063050710955562222,
    -.07685284084478667369,     -.28387654227602353814,     .92187029365045265648
};

#define BESSEL_Y_FIVPI  15.707963267948966192    /* 5 pi */
#define BESSEL_Y_PIBY2  1.5707963267948966192    /* pi / 2 */
#define BESSEL_Y_PI     3.1415926535897932385
#define BESSEL_Y_SQ2BPI .79788456080286535588    /* sqrt(2 / pi) */
#define BESSEL_Y_PIM5   .70796326794896619231    /* 5 pi - 15 */
#define BESSEL_Y_ONBPI  .31830988618379067154    /* 1 / pi */
#define BESSEL_Y_DEL    1e-8
#define BESSEL_Y_XMIN   DBL_MIN
#define BESSEL_Y_XLRG   1e8
#define BESSEL_Y_THRESH 16.

// Y_{alpha + nb - 1}(x) for 0 <= alpha < 1, nb >= 1: RYBESL's value BY(NB)
static NMATH_NOINLINE double bessel_y_last(double x, double alpha, int nb, int *ncalc)
{
    double ex = x, enu = alpha;
    if (!(nb > 0 && 0. <= enu && enu < 1.)) {
        *ncalc = imin2(nb, 0) - 1;
        return 0.;
    }
    if (ex < BESSEL_Y_XMIN) {
        *ncalc = nb;
        return ML_NEGINF;
    }
    if (ex > BESSEL_Y_XLRG) {
        *ncalc = nb;
        return 0.;
    }
    double xna = trunc(enu + .5);
    int na = (int)xna;
    if (na == 1)
        enu -= xna;
    double ya, ya1;
    double b, c, d, e, f, g, h, p, q, r, s, en, en1, x2;
    if (enu == -.5) {
        p = BESSEL_Y_SQ2BPI / sqrt(ex);
        ya = p * sin(ex);
        ya1 = -p * cos(ex);
    } else if (ex < 3.) {
        // Temme's series for small x
        b = ex * .5;
        d = -log(b);
        f = enu * d;
        e = pow(b, -enu);
        if (fabs(enu) < BESSEL_Y_DEL)
            c = BESSEL_Y_ONBPI;
        else
            c = enu / sin(enu * BESSEL_Y_PI);
        // sinh(f) / f
        if (fabs(f) < 1.) {
            x2 = f * f;
            en = 19.;
            s = 1.;
            for (int i = 1; i <= 9; ++i) {
                s = s * x2 / en / (en - 1.) + 1.;
                en -= 2.;
            }
        } else {
            s = (e - 1. / e) * .5 / f;
        }
        // 1 / gamma(1 - a) by its Chebyshev series
        x2 = enu * enu * 8.;
        double aye = bessel_y_ch[0], even = 0., alfa = bessel_y_ch[1], odd = 0.;
        for (int i = 3; i <= 19; i += 2) {
            even = -(aye + aye + even);
            aye = -even * x2 - aye + bessel_y_ch[i - 1];
            odd = -(alfa + alfa + odd);
            alfa = -odd * x2 - alfa + bessel_y_ch[i];
        }
        even = (even * .5 + aye) * x2 - aye + bessel_y_ch[20];
        odd = (odd + alfa) * 2.;
        double gamma = odd * enu + even;
        g = e * gamma;
        e = (e + 1. / e) * .5;
        f = 2. * c * (odd * e + even * s * d);
        e = enu * enu;
        p = g * c;
        q = BESSEL_Y_ONBPI / g;
        c = enu * BESSEL_Y_PIBY2;
        if (fabs(c) < BESSEL_Y_DEL)
            r = 1.;
        else
            r = sin(c) / c;
        r = BESSEL_Y_PI * c * r * r;
        c = 1.;
        d = -b * b;
        h = 0.;
        ya = f + r * q;
        ya1 = p;
        en = 1.;
        while (fabs(g / (1. + fabs(ya))) + fabs(h / (1. + fabs(ya1))) > DBL_EPSILON) {
            f = (f * en + p + q) / (en * en - e);
            c = c * d / en;
            p /= en - enu;
            q /= en + enu;
            g = c * (f + r * q);
            h = c * p - en * g;
            ya += g;
            ya1 += h;
            en += 1.;
        }
        ya = -ya;
        ya1 = -ya1 / b;
    } else if (ex < BESSEL_Y_THRESH) {
        // Temme's continued fraction for moderate x
        c = (.5 - enu) * (.5 + enu);
        b = ex + ex;
        e = ex * BESSEL_Y_ONBPI * cos(enu * BESSEL_Y_PI) / DBL_EPSILON;
        e *= e;
        p = 1.;
        q = -ex;
        r = 1. + ex * ex;
        s = r;
        en = 2.;
        while (r * en * en < e) {
            en1 = en + 1.;
            d = (en - 1. + c / en) / s;
            p = (en + en - p * d) / en1;
            q = (-b + q * d) / en1;
            s = p * p + q * q;
            r *= s;
            en = en1;
        }
        f = p / s;
        p = f;
        g = -q / s;
        q = g;
        for (;;) {
            en -= 1.;
            if (en <= 0.)
                break;
            r = en1 * (2. - p) - 2.;
            s = b + en1 * q;
            d = (en - 1. + c / en) / (r * r + s * s);
            p = d * r;
            q = d * s;
            e = f + 1.;
            f = p * e - g * q;
            g = q * e + p * g;
            en1 = en;
        }
        f = 1. + f;
        d = f * f + g * g;
        double pa = f / d, qa = -g / d;
        d = enu + .5 - p;
        q += ex;
        double pa1 = (pa * q - qa * d) / ex, qa1 = (qa * q + pa * d) / ex;
        b = ex - BESSEL_Y_PIBY2 * (enu + .5);
        c = cos(b);
        s = sin(b);
        d = BESSEL_Y_SQ2BPI / sqrt(ex);
        ya = d * (pa * s + qa * c);
        ya1 = d * (qa1 * s - pa1 * c);
    } else {
        // Campbell's asymptotic expansion for large x
        na = 0;
        double d1 = trunc(ex / BESSEL_Y_FIVPI);
        int i = (int)d1;
        double dmu = ex - 15. * d1 - d1 * BESSEL_Y_PIM5 - (alpha + .5) * BESSEL_Y_PIBY2;
        double cosmu, sinmu;
        if (i - 2 * (i / 2) == 0) {
            cosmu = cos(dmu);
            sinmu = sin(dmu);
        } else {
            cosmu = -cos(dmu);
            sinmu = -sin(dmu);
        }
        double ddiv = 8. * ex, den = sqrt(ex);
        dmu = alpha;
        ya = 0.;
        ya1 = 0.;
        for (int k = 1; k <= 2; ++k) {
            p = cosmu;
            cosmu = sinmu;
            sinmu = -p;
            d1 = (2. * dmu - 1.) * (2. * dmu + 1.);
            double d2 = 0., div = ddiv, term;
            p = 0.;
            q = 0.;
            double q0 = d1 / div;
            term = q0;
            for (int ii = 2; ii <= 20; ++ii) {
                d2 += 8.;
                d1 -= d2;
                div += ddiv;
                term = -term * d1 / div;
                p += term;
                d2 += 8.;
                d1 -= d2;
                div += ddiv;
                term = term * d1 / div;
                q += term;
                if (fabs(term) <= DBL_EPSILON)
                    break;
            }
            p += 1.;
            q += q0;
            if (k == 1)
                ya = BESSEL_Y_SQ2BPI * (p * cosmu - q * sinmu) / den;
            else
                ya1 = BESSEL_Y_SQ2BPI * (p * cosmu - q * sinmu) / den;
            dmu += 1.;
        }
    }
    if (na == 1) {
        h = 2. * (enu + 1.) / ex;
        if (h > 1.) {
            if (fabs(ya1) > DBL_MAX / h) {
                h = 0.;
                ya = 0.;
            }
        }
        h = h * ya1 - ya;
        ya = ya1;
        ya1 = h;
    }
    // now Y(alpha, x) = ya, Y(alpha + 1, x) = ya1: recur forward
    *ncalc = nb;
    if (nb == 1)
        return ya;
    if (ya1 == 0.) {
        *ncalc = 1;
        return ML_NEGINF;
    }
    double aye = 1. + alpha, twobyx = 2. / ex;
    double bm2 = ya, bm1 = ya1;
    for (int i = 3; i <= nb; ++i) {
        if (twobyx < 1.) {
            if (fabs(bm1) * twobyx >= DBL_MAX / aye) {
                *ncalc = i - 1;
                return ML_NEGINF;
            }
        } else {
            if (fabs(bm1) >= DBL_MAX / aye / twobyx) {
                *ncalc = i - 1;
                return ML_NEGINF;
            }
        }
        double by = twobyx * aye * bm1 - bm2;
        bm2 = bm1;
        bm1 = by;
        aye += 1.;
    }
    return bm1;
}

// Y_nu(x) for x >= 0, nu >= 0 (no argument checks beyond RYBESL's)
double bessel_y_nonneg(double x, double alpha)
{
    int nb = 1 + (int)floor(alpha);   // nb - 1 <= alpha < nb
    alpha -= (double)(nb - 1);
    int ncalc;
    return bessel_y_last(x, alpha, nb, &ncalc);
}

#undef BESSEL_Y_FIVPI
#undef BESSEL_Y_PIBY2
#undef BESSEL_Y_PI
#undef BESSEL_Y_SQ2BPI
#undef BESSEL_Y_PIM5
#undef BESSEL_Y_ONBPI
#undef BESSEL_Y_DEL
#undef BESSEL_Y_XMIN
#undef BESSEL_Y_XLRG
#undef BESSEL_Y_THRESH
