// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rbinom
// @depends: dbinom, philox, rng_math, rmath_utils
// @source: W. Hormann (1993), "The generation of binomial random variates", J. Statist.
//          Comput. Simul. 46, 101-110 (algorithm BTRS, transformed rejection with squeeze,
//          for n min(p, 1-p) >= 10); inversion by sequential search from 0 otherwise
//          (V. Kachitvichyanukul & B. W. Schmeiser (1988), "Binomial random variate generation",
//          Comm. ACM 31(2), 216-222, algorithm BINV).  R uses BTPE and BINV of the latter.
//
// With p = min(prob, 1 - prob) (the variate is n - X when prob > 1/2), q = 1 - p:
// BTRS: s = sqrt(n p q), b = 1.15 + 2.53 s, a = -0.0873 + 0.0248 b + 0.01 p, c = n p + 1/2,
// alpha = (2.83 + 5.1 / b) s, v_r = 0.92 - 4.2 / b, m = floor((n + 1) p): draw U uniform on
// (-1/2, 1/2) and V on (0, 1), u_s = 1/2 - |U|, k = floor((2a / u_s + b) U + c); accept at once
// if u_s >= 0.07 and V <= v_r; reject k outside [0, n]; otherwise accept if
// log(V alpha / (a / u_s^2 + b)) <= log(f(k) / f(m)), f the binomial mass, computed as
// dbinom_raw(k) - dbinom_raw(m) on the log scale (Loader's saddle point: no cancellation of
// large log-factorials, so the test stays exact for any n).
// BINV: U compared with f(0) = q^n, then U - f(0) with f(1) = f(0) (a/1 - r), ...,
// r = p / q, a = (n + 1) r; a U beyond the accumulated mass (rounding, or k > 200) is drawn
// again.  n is handled in double precision, so n >= 2^31 needs no special path.
//
// R's domain rules: NaN for infinite or non-integer n, n < 0, prob outside [0, 1] or NaN;
// 0 for n = 0 or prob = 0; n for prob = 1.

static inline double rbinom_inversion(rng_stream *s, double n, double p, double q)
{
    const double r = p / q, a = (n + 1.0) * r;
    const double f0 = rng_exp(n * rng_log1p(-p));
    for (int t = 0; t < RNG_MAX_TRIES; t++) {
        double u = unif_rand(s), f = f0;
        for (int k = 0; k <= 200 && (double)k <= n; k++) {
            if (u <= f)
                return (double)k;
            u -= f;
            f *= a / (double)(k + 1) - r;
        }
    }
    return ML_NAN;
}

static inline double rbinom_btrs(rng_stream *s, double n, double p, double q)
{
    const double spq = sqrt(n * p * q);
    const double b = 1.15 + 2.53 * spq;
    const double a = -0.0873 + 0.0248 * b + 0.01 * p;
    const double c = n * p + 0.5;
    const double alpha = (2.83 + 5.1 / b) * spq;
    const double vr = 0.92 - 4.2 / b;
    const double m = floor((n + 1.0) * p);
    const double lfm = dbinom_raw(m, n, p, q, 1);
    for (int t = 0; t < RNG_MAX_TRIES; t++) {
        const double U = unif_rand(s) - 0.5;
        double V = unif_rand(s);
        const double us = 0.5 - fabs(U);
        const double k = floor((2.0 * a / us + b) * U + c);
        if (k < 0.0 || k > n)
            continue;
        if (us >= 0.07 && V <= vr)
            return k;
        V *= alpha / (a / (us * us) + b);
        if (rng_log(V) <= dbinom_raw(k, n, p, q, 1) - lfm)
            return k;
    }
    return ML_NAN;
}

double rbinom(rng_stream *s, double nin, double pp)
{
    if (!isfinite(nin))
        ML_WARN_return_NAN;
    const double n = R_forceint(nin);
    if (n != nin)
        ML_WARN_return_NAN;
    if (!isfinite(pp) || n < 0.0 || pp < 0.0 || pp > 1.0)
        ML_WARN_return_NAN;
    if (n == 0.0 || pp == 0.0)
        return 0.0;
    if (pp == 1.0)
        return n;
    const int flip = pp > 0.5;
    const double p = flip ? 1.0 - pp : pp;   // exact when pp > 1/2
    const double q = flip ? pp : 1.0 - pp;
    const double x = (n * p < 10.0) ? rbinom_inversion(s, n, p, q) : rbinom_btrs(s, n, p, q);
    return flip ? n - x : x;
}
