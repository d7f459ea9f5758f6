// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rhyper
// @depends: dbinom, philox, rng_math, rmath_utils
// @source: inversion by search from the mode: C. D. Kemp (1986), "A modal method for
//          generating binomial variables", Commun. Statist. Theory Meth. 15(3), 805-813,
//          applied to the hypergeometric mass (R uses V. Kachitvichyanukul & B. W. Schmeiser
//          (1985), J. Statist. Comput. Simul. 22, 127-145, HIN and H2PE).
//
// X = number of white balls among k drawn from m white and n black.  With U uniform, subtract
// f(M) at the mode M = floor((k + 1)(m + 1) / (m + n + 2)), then alternately the next mass
// above and below it, returning the point at which U is used up: inversion in that fixed
// order of the support, so exact.  f(M) is computed as R's dhyper does, from three binomial
// masses (Loader's saddle point, dbinom_raw); the neighbours by the ratios
// f(x+1)/f(x) = (m - x)(k - x) / ((x + 1)(n - k + x + 1)).  Expected work is of the order of
// the standard deviation.  A U left over once both tails fall below 1e-25 (rounding) is drawn
// again.
//
// R's domain rules: NaN for infinite arguments, negative ones, or k > m + n after rounding
// each to the nearest integer.  m + n above RHYPER_MAX_N = 2^45 gives NaN too, counted as
// produced: the walk takes of the order of sqrt(m + n) steps (a standard deviation is at most
// sqrt(m + n) / 4, 1.5e6 at the limit), and beyond 2^53 neighbouring integers are not even
// representable (R switches to inverting phyper above 2^31).

double rhyper(rng_stream *s, double nn1, double nn2, double kk)
{
    if (!isfinite(nn1) || !isfinite(nn2) || !isfinite(kk))
        ML_WARN_return_NAN;
    const double m = R_forceint(nn1), n = R_forceint(nn2), k = R_forceint(kk);
    if (m < 0.0 || n < 0.0 || k < 0.0 || k > m + n)
        ML_WARN_return_NAN;
    const double N = m + n;
    if (N > 35184372088832.0)            // N > RHYPER_MAX_N
        ML_WARN_return_NAN;
    if (k == 0.0 || m == 0.0)
        return 0.0;
    if (n == 0.0)
        return k;
    if (k == N)
        return m;
    const double xmin = fmax(0.0, k - n), xmax = fmin(k, m);
    const double mode = fmin(xmax, fmax(xmin, floor((k + 1.0) * (m + 1.0) / (N + 2.0))));
    const double p = k / N, q = (N - k) / N;
    const double lfm = dbinom_raw(mode, m, p, q, 1) + dbinom_raw(k - mode, n, p, q, 1)
                       - dbinom_raw(k, N, p, q, 1);
    const double fm = rng_exp(lfm);
    for (int t = 0; t < RNG_MAX_TRIES; t++) {
        double u = unif_rand(s) - fm;
        if (u <= 0.0)
            return mode;
        double lo = mode, hi = mode, flo = fm, fhi = fm;
        for (;;) {
            int moved = 0;
            if (hi < xmax) {
                fhi *= (m - hi) * (k - hi) / ((hi + 1.0) * (n - k + hi + 1.0));
                hi += 1.0;
                u -= fhi;
                if (u <= 0.0)
                    return hi;
                moved = 1;
            }
            if (lo > xmin) {
                flo *= lo * (n - k + lo) / ((m - lo + 1.0) * (k - lo + 1.0));
                lo -= 1.0;
                u -= flo;
                if (u <= 0.0)
                    return lo;
                moved = 1;
            }
            if (!moved || (fhi < 1e-25 && flo < 1e-25))
                break;
        }
    }
    return ML_NAN;
}
