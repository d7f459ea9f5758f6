// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qhyper
// @depends: lbeta, dpq, rmath_utils
// @source: inversion of the hypergeometric distribution by summing its masses upwards from
//          the lower end of the support, each from the previous one by the ratio
//              P[X = x + 1] / P[X = x] = (r - x) (n - x) / ((x + 1) (b - n + x + 1)),
//          started from  P[X = x0] = choose(r, x0) choose(b, n - x0) / choose(r + b, n)  through
//          log choose(n, k) = -log(n + 1) - log B(n - k + 1, k + 1); on the log scale when
//          r + b >= 1000 (against underflow), as R does.
//
// qhyper(p, r, b, n): the smallest x with P[X <= x] >= p (1 - 1000 DBL_EPSILON) (R's fuzz).
// NaN for non-finite arguments, r, b, n < 0 or n > r + b (after rounding r, b, n).
//
// The walk takes a step per unit of x, as R's does: qhyper(0.5, 1e8, 1e8, 1e8) is 5e7 steps
// (2 s for R and for PoCL on one core), and at r = b = n = 1e12 R's search runs for hours, with
// no way to stop a launch in its middle.  A walk of more than QHYPER_MAX_STEPS (2^27, about 5 s
// on a CPU core and minutes for one GPU thread) stops and gives NaN with R's warning.
//
// Built with DASKCL_ACCURACY_BEST, where the upper tail's probability pu is below 1/2 (an
// upper-tail p, or 1 - p of a lower-tail one, taken without rounding through 1 - p) the masses
// are summed downwards from the upper end of the support by the inverse ratio, to the largest
// x whose upper tail P[X > x - 1] exceeds pu (1 + 64 DBL_EPSILON): R rounds a small upper tail
// through 1 - p, which loses it below 1e-16.
#define QHYPER_MAX_STEPS 134217728.0

// log choose(n, k) for 0 <= k <= n
static inline double qhyper_lfastchoose(double n, double k)
{
    return -log(n + 1.) - lbeta(n - k + 1., k + 1.);
}

double qhyper(double p, double NR, double NB, double n, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(NR) || isnan(NB) || isnan(n))
        return p + NR + NB + n;
    if (!isfinite(p) || !isfinite(NR) || !isfinite(NB) || !isfinite(n))
        ML_WARN_return_NAN;
    NR = R_forceint(NR);
    NB = R_forceint(NB);
    double N = NR + NB;
    n = R_forceint(n);
    if (NR < 0 || NB < 0 || n < 0 || n > N)
        ML_WARN_return_NAN;

    // find xr (white balls in the sample) with phyper(xr) >= p > phyper(xr - 1)
    double xstart = fmax2(0, n - NB), xend = fmin2(n, NR);
    R_Q_P01_boundaries(p, xstart, xend);
    double xr = xstart, xb = n - xr;   // xb: black balls in the sample
    int small_N = (N < 1000);          // no underflow in the product
    double term = qhyper_lfastchoose(NR, xr) + qhyper_lfastchoose(NB, xb) - qhyper_lfastchoose(N, n);
    if (small_N)
        term = exp(term);
#ifdef DASKCL_ACCURACY_BEST
    {
        double pt = log_p ? exp(p) : p;   // the requested tail on the probability scale
        double pu = lower_tail ? (log_p ? -expm1(p) : 0.5 - p + 0.5) : pt;
        if (pt <= 1 && pu < 0.5) {
            pu *= 1 + 64 * DBL_EPSILON;
            double x = xend, S = 0.;      // S = P[X > x]
            double lt = qhyper_lfastchoose(NR, x) + qhyper_lfastchoose(NB, n - x)
                        - qhyper_lfastchoose(N, n);
            const double xlow = fmax2(xstart, xend - QHYPER_MAX_STEPS);
            while (x > xstart) {
                if (x <= xlow)
                    ML_WARN_return_NAN;
                double t = exp(lt);       // P[X = x]
                if (S + t > pu)
                    break;
                S += t;
                // P[X = x - 1] / P[X = x] = x (NB - n + x) / ((NR - x + 1) (n - x + 1))
                lt += log((x / (NR - x + 1.)) * ((NB - n + x) / (n - x + 1.)));
                x--;
            }
            return x;
        }
    }
#endif
    NR -= xr;
    NB -= xb;
    if (!lower_tail || log_p)
        p = R_DT_qIv(p);
    p *= 1 - 1000 * DBL_EPSILON;
    double sum = small_N ? term : exp(term);
    const double xcap = xstart + QHYPER_MAX_STEPS;
    while (sum < p && xr < xend) {
        if (xr >= xcap)
            ML_WARN_return_NAN;
        xr++;
        NB++;
        if (small_N)
            term *= (NR / xr) * (xb / NB);
        else {  /* R's bits; where the ratio overflows (beyond 1e308), the sum of two logs
                   (qhyper(0.3, 1e160, 1e160, 1e160) stopped at its first step, 1, silently) */
            const double ratio = (NR / xr) * (xb / NB);
            term += isinf(ratio) ? log(NR / xr) + log(xb / NB) : log(ratio);
        }
        sum += small_N ? term : exp(term);
        xb--;
        NR--;
    }
    return xr;
}

#undef QHYPER_MAX_STEPS
