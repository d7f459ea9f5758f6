// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_i
// @depends: bessel_k, bessel_i_best, bessel_olver, gamma_cody, cospi, rmath_utils
// @source: W. J. Cody, "Algorithm 597: Sequence of modified Bessel functions of the first kind",
//          ACM TOMS 9 (1983) 242-245 (RIBESL, netlib SPECFUN, rev. 1989 by Cody and Stoltz);
//          F. W. J. Olver and D. J. Sookne, "Note on backward recurrence algorithms", Math.
//          Comp. 26 (1972) 941-947; Abramowitz & Stegun 9.6.2 and 9.6.6 (negative orders).
//
// I_nu(x) for x >= 0; expo = 2 gives exp(-x) I_nu(x).  For x >= 1e-4, Miller's backward
// recurrence from a starting order chosen by Olver's forward P-sequence (with Sookne's
// significance test), normalised by the Neumann sum sum_k (k + nu) gamma(k + 2nu) / k! I_{k+nu}
// = (x/2)^nu e^x / gamma(1 + nu); below 1e-4, two terms of the ascending series.  RIBESL
// stores every order a, a+1, ..., nu; here only the last and the two values the recurrence
// needs are kept, so there is no allocation and no limit on nu beyond R's int count of orders
// (NaN for |nu| >= 2^31 - 1, where R's conversion overflows); the recurrences stop early where
// the values underflow.
//
// R's conventions: +Inf for x > 709 unscaled, 0 for x > 1e5 scaled (the limit of the backward
// recurrence), NaN for x < 0; R's guard against overflow of the backward recurrence for large
// x (a rescaling by 2^-900 above order nb only, so that R's normalising sum can still overflow
// below nb and give 0); R's small-x series without RIBESL's underflow guards on x/2 and (x/2)^2.
// Negative orders: I_{-nu} = I_nu + (2/pi) sin(nu pi) K_nu (bessel_k; the scaled form
// multiplies K's exp(x) scaling by exp(-2x)).
//
// Built with DASKCL_ACCURACY_BEST, x >= 500 and nu >= 0 take Hankel's asymptotic expansion
// (bessel_i_best.cl) where it converges (else the recurrence as R): R's recurrence loses up to
// 5e-12 relative there.

#define BESSEL_I_NSIG   16
#define BESSEL_I_ENSIG  1e16
#define BESSEL_I_RTNSIG 1e-4
#define BESSEL_I_ENMTEN 8.9e-308
#define BESSEL_I_EXPARG 709.
#define BESSEL_I_XLRG   1e5
#define BESSEL_I_CONST  1.585
#define BESSEL_I_SMALL  0x1p-900

// I_{alpha + nb - 1}(x) (times exp(-x) if ize == 2) for 0 <= alpha < 1, nb >= 1: RIBESL's
// value B(NB).
static NMATH_NOINLINE double bessel_i_last(double x, double alpha, int nb, int ize, int *ncalc)
{
    if (!(nb > 0 && x >= 0. && alpha >= 0. && alpha < 1. && ize >= 1 && ize <= 2)) {
        *ncalc = imin2(nb, 0) - 1;
        return 0.;
    }
    *ncalc = nb;
    if (ize == 1 && x > BESSEL_I_EXPARG)
        return ML_POSINF;
    if (ize == 2 && x > BESSEL_I_XLRG)
        return 0.;

    int magx = (int)x;
    if (x < BESSEL_I_RTNSIG) {
        // two-term ascending series for small x
        // (R halves x unconditionally: with IEEE arithmetic there is no underflow to guard)
        double tempa = 1., empal = 1. + alpha, halfx = .5 * x;
        if (alpha != 0.)
            tempa = pow(halfx, alpha) / gamma_cody(empal);
        if (ize == 2)
            tempa *= exp(-x);
        // R squares halfx even where x + 1 == 1 (RIBESL leaves tempb = 0 there); it sets the
        // underflow threshold tover below
        double tempb = halfx * halfx;
        double b = tempa + tempa * tempb / empal;
        if (nb == 1 || x == 0.)
            return (nb == 1) ? b : 0.;
        double tempc = halfx, tover = (BESSEL_I_ENMTEN + BESSEL_I_ENMTEN) / x;
        if (tempb != 0.)
            tover = BESSEL_I_ENMTEN / tempb;
        for (int n = 2; n <= nb; ++n) {
            tempa /= empal;
            empal += 1.;
            tempa *= tempc;
            if (tempa <= tover * empal)
                return 0.;   // underflow: this and all higher orders are 0
            b = tempa + tempa * tempb / empal;
        }
        return b;
    }

    // Olver's P-sequence forward from n = magx + 1 to find the starting order
    int n = magx + 1;
    double en = (double)(n + n) + (alpha + alpha);
    double test = BESSEL_I_ENSIG + BESSEL_I_ENSIG;
    if (2 * magx > 5 * BESSEL_I_NSIG)
        test = sqrt(test * (en / x));
    else
        test /= R_pow_di(BESSEL_I_CONST, magx);
    double p = bessel_olver(x, alpha, 1., nb, magx, test, &n, &en, ncalc);

    // backward recursion and the normalisation sum
    ++n;
    en += 2.;
    double tempb = 0., tempa = 1. / p;
    double em = (double)n - 1., empal = em + alpha, emp2al = em - 1. + (alpha + alpha);
    double sum = tempa * empal * emp2al / em;
    int nend = n - nb;
    if (nend < 0)
        return 0.;   // the starting order is below nb: B(nb) = 0
    double bnb, bcur, bnext;   // B(nb); B(n), B(n+1)
    for (int l = 1; l <= nend; ++l) {
        --n;
        en -= 2.;
        double tempc = tempb;
        tempb = tempa;
        // R's guard against overflow for large x (not in RIBESL): rescale by 2^-900 (exact)
        // while above order nb; below nb there is none, so R's sum may overflow to +Inf there
        // and give 0, as here
        if (nend > 100 && tempb > 1e200) {
            tempc *= BESSEL_I_SMALL;
            tempb *= BESSEL_I_SMALL;
            sum *= BESSEL_I_SMALL;
        }
        tempa = en * tempb / x + tempc;
        em -= 1.;
        emp2al -= 1.;
        if (n == 1)
            break;
        if (n == 2)
            emp2al = 1.;
        empal -= 1.;
        sum = (sum + tempa * empal) * emp2al / em;
    }
    bnb = tempa;
    if (nb <= 1) {
        sum = sum + sum + tempa;
    } else {
        // B(nb - 1)
        --n;
        en -= 2.;
        bcur = en * tempa / x + tempb;
        bnext = tempa;
        if (n == 1) {
            sum = sum + sum + bcur;
        } else {
            em -= 1.;
            emp2al -= 1.;
            if (n == 2)
                emp2al = 1.;
            empal -= 1.;
            sum = (sum + bcur * empal) * emp2al / em;
            while (n > 2) {   // down to B(2)
                --n;
                en -= 2.;
                double b = en * bcur / x + bnext;
                bnext = bcur;
                bcur = b;
                em -= 1.;
                emp2al -= 1.;
                if (n == 2)
                    emp2al = 1.;
                empal -= 1.;
                sum = (sum + bcur * empal) * emp2al / em;
            }
            double b1 = 2. * empal * bcur / x + bnext;
            sum = sum + sum + b1;
        }
    }
    // normalise
    if (alpha != 0.)
        sum = sum * gamma_cody(1. + alpha) * pow(x * .5, -alpha);
    if (ize == 1)
        sum *= exp(-x);
    tempa = BESSEL_I_ENMTEN;
    if (sum > 1.)
        tempa *= sum;
    if (bnb < tempa)
        return 0.;
    return bnb / sum;
}

// I_nu(x) for nu >= 0 (R's bessel_i without the reflection)
static double bessel_i_nonneg(double x, double alpha, int ize)
{
    if (alpha >= 2147483647.)
        return ML_NAN;   // beyond R's int number of orders
    int nb = 1 + (int)floor(alpha);   // nb - 1 <= alpha < nb
    alpha -= (double)(nb - 1);
    int ncalc;
    return bessel_i_last(x, alpha, nb, ize, &ncalc);
}

double bessel_i(double x, double alpha, double expo)
{
    if (isnan(x) || isnan(alpha))
        return x + alpha;
    if (x < 0)
        ML_WARN_return_NAN;
    int ize = (int)expo;
    double na = floor(alpha);
#ifdef DASKCL_ACCURACY_BEST     // bessel_i_best.cl is in the program in that mode only
    if (x >= 500. && alpha >= 0. && (ize == 2 || x <= BESSEL_I_EXPARG)) {
        const double v = bessel_i_hankel(x, alpha);
        if (!isnan(v))
            return ize == 2 ? v : v * exp(x);
    }
#endif
    if (alpha < 0) {
        // Abramowitz & Stegun 9.6.2 and 9.6.6
        return bessel_i_nonneg(x, -alpha, ize) +
               ((alpha == na) ? 0 :
                bessel_k(x, -alpha, expo) * ((ize == 1) ? 2. : 2. * exp(-2. * x)) / M_PI *
                R_sinpi(-alpha));
    }
    return bessel_i_nonneg(x, alpha, ize);
}

#undef BESSEL_I_NSIG
#undef BESSEL_I_ENSIG
#undef BESSEL_I_RTNSIG
#undef BESSEL_I_ENMTEN
#undef BESSEL_I_EXPARG
#undef BESSEL_I_XLRG
#undef BESSEL_I_CONST
#undef BESSEL_I_SMALL
