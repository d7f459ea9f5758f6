// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rwilcox
// @depends: philox, rmath_utils
// @source: the Wilcoxon rank sum statistic as the rank sum of a uniformly random n-subset of
//          {0, ..., m + n - 1}, less n (n - 1) / 2, as R does; the subset by selection
//          sampling (C. T. Fan, M. E. Muller & I. Rezucha (1962), J. Amer. Statist. Assoc. 57,
//          387-402; D. E. Knuth, TAOCP vol. 2, section 3.4.2, Algorithm S), which needs no
//          array (R shuffles an array of m + n integers).
//
// Candidate i (0-based) of N = m + n is taken with probability (still needed) / (N - i),
// decided by an exact uniform integer (rng_index); once every remaining candidate is needed
// they are all taken.  Work is of the order of m + n.
//
// R's domain rules: NaN for NaN m or n (returned as m + n, and counted as produced: R warns
// "NAs produced" for it too); m and n rounded to the nearest integer; NaN for negative m or n;
// 0 for m = 0 or n = 0.  R's range ends where m + n leaves a C int; here m + n above
// RWILCOX_MAX_N = 2^22 (and infinite m or n) gives NaN, counted as produced, which bounds the
// work of one variate (one exact uniform integer per candidate) to 4.2e6 draws (a fraction of
// a second on one CPU core).

double rwilcox(rng_stream *s, double m, double n)
{
    if (isnan(m) || isnan(n))
        return m + n;
    m = R_forceint(m);
    n = R_forceint(n);
    if (m < 0.0 || n < 0.0)
        ML_WARN_return_NAN;
    if (m == 0.0 || n == 0.0)
        return 0.0;
    if (m + n > 4194304.0)               // m + n > RWILCOX_MAX_N
        ML_WARN_return_NAN;
    const ulong N = (ulong)(m + n);
    ulong need = (ulong)n;
    double r = 0.0;
    for (ulong i = 0; need > 0; i++) {
        if (need == N - i) {                 // take i, ..., N - 1
            r += (double)need * ((double)i + (double)(N - 1)) / 2.0;
            break;
        }
        if (rng_index(s, N - i) < need) {
            r += (double)i;
            need--;
        }
    }
    return r - n * (n - 1.0) / 2.0;
}
