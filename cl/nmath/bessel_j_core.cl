// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_j_nonneg
// @depends: bessel_olver, gamma_cody, rmath_utils
// @source: W. J. Cody, RJBESL (netlib SPECFUN, 1990; ACM TOMS Algorithm 715), after D. J.
//          Sookne, "Bessel functions of real argument and integer order", J. Res. NBS 77B
//          (1973) 125-132, and F. W. J. Olver and D. J. Sookne, Math. Comp. 26 (1972) 941-947;
//          the asymptotic expansion (Abramowitz & Stegun 9.2.5, 9.2.9, 9.2.10) for x > 25.
//
// J_nu(x) for x >= 0 and nu >= 0: the cycle-free core of bessel_j and bessel_y.  R's
// bessel_j(x, nu < 0) calls bessel_y(x, -nu) and R's bessel_y(x, nu < 0) calls bessel_j(x, -nu),
// a cycle of calls that OpenCL forbids; here both wrappers (bessel_j.cl, bessel_y.cl) call the
// two cores for nu >= 0 (this file and bessel_y_core.cl), which call nothing of each other.
//
// Below x = 1e-4 two terms of the ascending series; for x > 25 when nu <= x, the asymptotic
// expansion for the fractional order a and a+1 and forward recurrence; otherwise Miller's
// backward recurrence from a starting order found by Olver's P-sequence, normalised by
// sum_k (a + 2k) gamma(a + k) / k! J_{a+2k} = (x/2)^a.  RJBESL stores every order; here only
// the last and the two values each recurrence needs are kept (no allocation).  R's limits:
// x > 1e5 gives 0 (the backward recurrence would need more than x steps), nu > 1e7 NaN (in
// the wrappers).

#define BESSEL_J_NSIG   16
#define BESSEL_J_ENSIG  1e16
#define BESSEL_J_RTNSIG 1e-4
#define BESSEL_J_ENMTEN 8.9e-308
#define BESSEL_J_XLRG   1e5
#define BESSEL_J_PI2    .636619772367581343075535        /* 2 / pi */
#define BESSEL_J_TWOPI1 6.28125                          /* 2 pi = TWOPI1 + TWOPI2 */
#define BESSEL_J_TWOPI2 .001935307179586476925286767

// n!, n = 0..24
__constant double bessel_j_fact[25] = {
    1., 1., 2., 6., 24., 120., 720., 5040., 40320., 362880., 3628800., 39916800., 479001600.,
    6227020800., 87178291200., 1.307674368e12, 2.0922789888e13, 3.55687428096e14,
    6.402373705728e15, 1.21645100408832e17, 2.43290200817664e18, 5.109094217170944e19,
    1.12400072777760768e21, 2.585201673888497664e22, 6.2044840173323943936e23
};

// J_{alpha + nb - 1}(x) for 0 <= alpha < 1, nb >= 1: RJBESL's value B(NB)
static NMATH_NOINLINE double bessel_j_last(double x, double alpha, int nb, int *ncalc)
{
    if (!(nb > 0 && x >= 0. && alpha >= 0. && alpha < 1.)) {
        *ncalc = imin2(nb, 0) - 1;
        return 0.;
    }
    *ncalc = nb;
    if (x > BESSEL_J_XLRG)
        return 0.;
    int magx = (int)x;

    if (x < BESSEL_J_RTNSIG) {
        // two-term ascending series for small x
        double tempa = 1., alpem = 1. + alpha, halfx = 0.;
        if (x > BESSEL_J_ENMTEN)
            halfx = .5 * x;
        // alpha gamma(alpha) = gamma(1 + alpha), which is 1 where alpha + 1 == 1 (and gamma
        // of a subnormal alpha overflows)
        if (alpha + 1. == 1.)
            tempa = pow(halfx, alpha);
        else
            tempa = pow(halfx, alpha) / (alpha * gamma_cody(alpha));
        double tempb = 0.;
        if (x + 1. > 1.)
            tempb = -halfx * halfx;
        double b = tempa + tempa * tempb / alpem;
        if (nb == 1)
            return b;
        if (x <= 0.)
            return 0.;
        double tempc = halfx, tover = (BESSEL_J_ENMTEN + BESSEL_J_ENMTEN) / x;
        if (tempb != 0.)
            tover = BESSEL_J_ENMTEN / tempb;
        for (int n = 2; n <= nb; ++n) {
            tempa /= alpem;
            alpem += 1.;
            tempa *= tempc;
            if (tempa <= tover * alpem)
                tempa = 0.;
            b = tempa + tempa * tempb / alpem;
            if (b == 0.)
                return 0.;   // underflow: this and all higher orders are 0
        }
        return b;
    }

    if (x > 25. && nb <= magx + 1) {
        // asymptotic series for J(a, x), J(a+1, x), then forward recurrence
        double xc = sqrt(BESSEL_J_PI2 / x);
        double xin = .125 / x;
        xin *= xin;
        int m = 11;
        if (x >= 35.)
            m = 8;
        if (x >= 130.)
            m = 4;
        double xm = 4. * (double)m;
        double t = trunc(x / (BESSEL_J_TWOPI1 + BESSEL_J_TWOPI2) + .5);
        double z = ((x - t * BESSEL_J_TWOPI1) - t * BESSEL_J_TWOPI2) - (alpha + .5) / BESSEL_J_PI2;
        double vsin = sin(z), vcos = cos(z), gnu = alpha + alpha;
        double b[2];
        for (int i = 0; i < 2; ++i) {
            double s = ((xm - 1.) - gnu) * ((xm - 1.) + gnu) * xin * .5;
            t = (gnu - (xm - 3.)) * (gnu + (xm - 3.));
            double capp = s * t / bessel_j_fact[2 * m];
            double t1 = (gnu - (xm + 1.)) * (gnu + (xm + 1.));
            double capq = s * t1 / bessel_j_fact[2 * m + 1];
            double xk = xm;
            int k = m + m;
            t1 = t;
            for (int j = 2; j <= m; ++j) {
                xk -= 4.;
                s = ((xk - 1.) - gnu) * ((xk - 1.) + gnu);
                t = (gnu - (xk - 3.)) * (gnu + (xk - 3.));
                capp = (capp + 1. / bessel_j_fact[k - 2]) * s * t * xin;
                capq = (capq + 1. / bessel_j_fact[k - 1]) * s * t1 * xin;
                k -= 2;
                t1 = t;
            }
            capp += 1.;
            capq = (capq + 1.) * (gnu * gnu - 1.) * (.125 / x);
            b[i] = xc * (capp * vcos - capq * vsin);
            if (nb == 1)
                return b[0];
            t = vsin;
            vsin = -vcos;
            vcos = t;
            gnu += 2.;
        }
        double bm2 = b[0], bm1 = b[1];
        gnu = alpha + alpha + 2.;
        for (int j = 3; j <= nb; ++j) {
            double bj = gnu * bm1 / x - bm2;
            bm2 = bm1;
            bm1 = bj;
            gnu += 2.;
        }
        return bm1;
    }

    // Olver's P-sequence forward from n = magx + 1 to find the starting order
    int n = magx + 1;
    double en = (double)(n + n) + (alpha + alpha);
    double p = bessel_olver(x, alpha, -1., nb, magx, BESSEL_J_ENSIG + BESSEL_J_ENSIG, &n, &en,
                            ncalc);

    // backward recursion and the normalisation sum (over the even orders)
    ++n;
    en += 2.;
    double tempb = 0., tempa = 1. / p;
    int m = 2 * n - 4 * (n / 2);
    double sum = 0., em = (double)(n / 2);
    double alpem = (em - 1.) + alpha, alp2em = (em + em) + alpha;
    if (m != 0)
        sum = tempa * alpem * alp2em / em;
    int nend = n - nb;
    int done = 0;   // reached B(1) (RJBESL's jump to label 240)
    for (int l = 1; l <= nend; ++l) {
        --n;
        en -= 2.;
        double tempc = tempb;
        tempb = tempa;
        tempa = en * tempb / x - tempc;
        m = 2 - m;
        if (m != 0) {
            em -= 1.;
            alp2em = (em + em) + alpha;
            if (n == 1)
                break;
            alpem = (em - 1.) + alpha;
            if (alpem + 1. == 1.)
                alpem = 1.;
            sum = (sum + tempa * alp2em) * alpem / em;
        }
    }
    // B(n) = tempa, B(n+1) = tempb (0 above the starting order)
    double bnb = (nend >= 0) ? tempa : 0.;
    double bcur = tempa, bnext = tempb;
    if (nend >= 0) {
        if (nb <= 1) {
            alp2em = alpha;
            if (alpha + 1. == 1.)
                alp2em = 1.;
            sum += bcur * alp2em;
            done = 2;   // straight to the normalisation
        } else {
            --n;
            en -= 2.;
            double b = en * tempa / x - tempb;
            bnext = bcur;
            bcur = b;
            if (n == 1) {
                done = 1;
            } else {
                m = 2 - m;
                if (m != 0) {
                    em -= 1.;
                    alp2em = (em + em) + alpha;
                    alpem = (em - 1.) + alpha;
                    if (alpem + 1. == 1.)
                        alpem = 1.;
                    sum = (sum + bcur * alp2em) * alpem / em;
                }
            }
        }
    }
    if (!done) {
        while (n > 2) {   // down to B(2)
            --n;
            en -= 2.;
            double b = en * bcur / x - bnext;
            bnext = bcur;
            bcur = b;
            m = 2 - m;
            if (m != 0) {
                em -= 1.;
                alp2em = (em + em) + alpha;
                alpem = (em - 1.) + alpha;
                if (alpem + 1. == 1.)
                    alpem = 1.;
                sum = (sum + bcur * alp2em) * alpem / em;
            }
        }
        // B(1)
        double b1 = 2. * (alpha + 1.) * bcur / x - bnext;
        bcur = b1;
        done = 1;
    }
    if (done == 1) {
        em -= 1.;
        alp2em = (em + em) + alpha;
        if (alp2em + 1. == 1.)
            alp2em = 1.;
        sum += bcur * alp2em;
    }
    // normalise.  Where alpha + 1 == 1 the factor gamma(alpha) (x/2)^-alpha (about 1 / alpha)
    // is left out, so the sum is taken as for alpha = 0: its coefficients alpha and alpha + 0
    // (alpem and alp2em of the last orders) are then 1, as RJBESL sets them for alpha = 0.
    // RJBESL (and R, whose bessel_j(2, 1e-17) is 1) replaced them only where they are exactly
    // 0, so that an order 0 < nu < 1.1e-16 kept a factor alpha in every other term of the sum
    // and gave J_nu(x) = 1 for every x; now J_nu(x) = J_0(x) + O(nu) there.
    if (alpha + 1. != 1.)
        sum *= gamma_cody(alpha) * pow(x * .5, -alpha);
    tempa = BESSEL_J_ENMTEN;
    if (sum > 1.)
        tempa *= sum;
    if (fabs(bnb) < tempa)
        bnb = 0.;
    return bnb / sum;
}

// J_nu(x) for x >= 0, nu >= 0 (no argument checks beyond RJBESL's)
double bessel_j_nonneg(double x, double alpha)
{
    int nb = 1 + (int)floor(alpha);   // nb - 1 <= alpha < nb
    alpha -= (double)(nb - 1);
    int ncalc;
    return bessel_j_last(x, alpha, nb, &ncalc);
}

#undef BESSEL_J_NSIG
#undef BESSEL_J_ENSIG
#undef BESSEL_J_RTNSIG
#undef BESSEL_J_ENMTEN
#undef BESSEL_J_XLRG
#undef BESSEL_J_PI2
#undef BESSEL_J_TWOPI1
#undef BESSEL_J_TWOPI2
