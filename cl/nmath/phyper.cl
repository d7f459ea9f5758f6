// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: phyper
// @depends: dhyper, dpq, rmath_utils
// @source: I. Wichura's and R's pdhyper (R 2.?: PR#8112), after C. Loader's dhyper: the lower
//          tail divided by the mass at x, a sum of ratios of successive masses,
//              P[X <= x] / P[X = x] = 1 + sum_{k >= 1} prod_{j=0}^{k-1}
//                  (x - j)(b - n + x - j) / ((n + 1 - x + j)(r + 1 - x + j)),
//          summed until a term falls below DBL_EPSILON times the sum.
//
// phyper(x, r, b, n): x white balls among n drawn from r white and b black.  The tail with the
// shorter sum is summed (swapping white and black when x (r + b) > n r).  R accumulates the
// ratios in long double (80-bit on x86-64); OpenCL C has none, so they are accumulated here in
// double-double arithmetic (Dekker 1971; Knuth TAOCP 4.2.2), which is at least as accurate, so
// that long sums (large populations) do not lose digits that R keeps.  NaN for r, b, n < 0,
// r + b non-finite or n > r + b; x is floored after a fuzz of 1e-7.

// double-double helpers: (hi, lo) with |lo| <= ulp(hi) / 2
static inline void phyper_two_sum(double a, double b, double *s, double *e)
{
    double t = a + b, bb = t - a;
    *s = t;
    *e = (a - (t - bb)) + (b - bb);
}

// (h, l) * f, renormalised
static inline void phyper_dd_mul(double *h, double *l, double f)
{
    double p = *h * f;
    double e = fma(*h, f, -p) + *l * f;
    phyper_two_sum(p, e, h, l);
}

// (h, l) + (th, tl), renormalised
static inline void phyper_dd_add(double *h, double *l, double th, double tl)
{
    double s, e;
    phyper_two_sum(*h, th, &s, &e);
    e += *l + tl;
    phyper_two_sum(s, e, h, l);
}

// P[X <= x] / P[X = x] (or its log), for x (r + b) <= n r
static double phyper_pdhyper(double x, double NR, double NB, double n, int log_p)
{
    double sh = 0., sl = 0., th = 1., tl = 0.;
    while (x > 0 && th >= DBL_EPSILON * sh) {
        phyper_dd_mul(&th, &tl, x * (NB - n + x) / (n + 1 - x) / (NR + 1 - x));
        phyper_dd_add(&sh, &sl, th, tl);
        x--;
    }
    double ss = sh + sl;
    return log_p ? log1p(ss) : 1 + ss;
}

double phyper(double x, double NR, double NB, double n, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(NR) || isnan(NB) || isnan(n))
        return x + NR + NB + n;
    x = floor(x + 1e-7);
    NR = R_forceint(NR);
    NB = R_forceint(NB);
    n = R_forceint(n);
    if (NR < 0 || NB < 0 || !isfinite(NR + NB) || n < 0 || n > NR + NB)
        ML_WARN_return_NAN;
    if (x * (NR + NB) > n * NR) {   // swap tails
        double oldNB = NB;
        NB = NR;
        NR = oldNB;
        x = n - x - 1;
        lower_tail = !lower_tail;
    }
    // the support is max(0, n - b) <= x <= min(n, r)
    if (x < 0 || x < n - NB)
        return R_DT_0;
    if (x >= NR || x >= n)
        return R_DT_1;
    double d = dhyper(x, NR, NB, n, log_p);
    // d > 0 mathematically, but not always numerically
    if ((!log_p && d == 0.) || (log_p && d == ML_NEGINF))
        return R_DT_0;
    double pd = phyper_pdhyper(x, NR, NB, n, log_p);
    return log_p ? R_DT_Log(d + pd) : R_D_Lval(d * pd);
}
