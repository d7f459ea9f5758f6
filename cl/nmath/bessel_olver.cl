// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_olver
// @depends: rmath_utils
// @source: F. W. J. Olver and D. J. Sookne, "Note on backward recurrence algorithms", Math.
//          Comp. 26 (1972) 941-947, as W. J. Cody's RIBESL (ACM TOMS 9 (1983) 242-245) and
//          RJBESL (netlib SPECFUN) use it.
//
// The starting order of Miller's backward recurrence for I_{a+k}(x) (sign = +1, bessel_i.cl)
// or J_{a+k}(x) (sign = -1, bessel_j_core.cl), 0 <= a < 1, k < nb: Olver's P-sequence
// p_{n+1} = en p_n / x + sign p_{n-1}, en = 2 (n + a), run forward from order *n = magx + 1
// (*en its en, p = en / x) until p reaches test, or, once past order nb - 1, Sookne's
// significance test max(test, sqrt(p_{n-1} 1e16) sqrt(2 p_n)).  Where p would overflow it is
// rescaled by 1e308 and run on until it exceeds 1 (*ncalc = -2: R's "precision lost" warning).
// Returns p at the order reached, *n and *en that order and its en.

#define BESSEL_OLVER_ENSIG 1e16
#define BESSEL_OLVER_ENTEN 1e308
// one step forward: the next order n, its en, and p at it from the two before
#define BESSEL_OLVER_STEP                     \
    do {                                      \
        ++n;                                  \
        en += 2.;                             \
        pold = plast;                         \
        plast = p;                            \
        p = en * plast / x + sign * pold;     \
    } while (0)

static inline double bessel_olver(double x, double alpha, double sign, int nb, int magx,
                                  double test, int *n_, double *en_, int *ncalc)
{
    int n = *n_;   // magx + 1
    double en = *en_;
    double plast = 1., p = en / x, pold;
    int restart = 0;   // the P-sequence was rescaled against overflow (RIBESL's label 120)
    if (nb - magx >= 3) {
        double tover = BESSEL_OLVER_ENTEN / BESSEL_OLVER_ENSIG;
        int nstart = magx + 2, nend = nb - 1;
        for (int k = nstart; k <= nend; ++k) {   // n = k
            BESSEL_OLVER_STEP;
            if (p > tover) {
                // rescale, and continue until p > 1; the backward test (NCALC) only decides
                // R's "precision lost" warning and is not needed for the value
                tover = BESSEL_OLVER_ENTEN;
                p /= tover;
                plast /= tover;
                do {
                    BESSEL_OLVER_STEP;
                } while (p <= 1.);
                p = plast * tover;
                --n;
                en -= 2.;
                *ncalc = -2;   // precision lost in some orders (R warns)
                restart = 1;
                break;
            }
        }
        if (!restart) {
            n = nend;
            en = (double)(n + n) + (alpha + alpha);
            test = fmax2(test, sqrt(plast * BESSEL_OLVER_ENSIG) * sqrt(p + p));
        }
    }
    if (!restart) {
        do {
            BESSEL_OLVER_STEP;
        } while (p < test);
    }
    *n_ = n;
    *en_ = en;
    return p;
}

#undef BESSEL_OLVER_ENSIG
#undef BESSEL_OLVER_ENTEN
#undef BESSEL_OLVER_STEP
