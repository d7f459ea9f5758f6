// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: count_table_find, count_table_quantile_best
// @depends:
// @source: daskcl's layout of the count tables of the Wilcoxon rank-sum and signed-rank
//          distributions (built by kernels/count_tables.cl, read by wilcox_tab.cl and
//          signrank_tab.cl).
//
// R computes these distributions from tables of counts that it allocates on the host and
// keeps between calls.  daskcl builds one table per distinct parameter in device memory, once
// per call (daskcl/kernels/_counts.py; any elementwise kernel calling dwilcox, psignrank, ...
// gets them, daskcl/kernels/_elementwise.py), and every element reads its parameter's table:
//
//   keys   the distinct parameters, sorted: pairs (m, n) for wilcox, n for signrank
//   offs   where each parameter's table starts in tab
//   tab    wilcox:   choose(m+n, n), lchoose(m+n, n), counts c(0..floor(mn/2)), then the
//                    cumulative probabilities T(0..mn) (T(k) = sum_{i <= k} c(i) / choose)
//          signrank: 2^-n, counts c(0..floor(n(n+1)/4)), then T(0..n(n+1)/2)
//                    (T(k) = sum_{i <= k} c(i) 2^-n)
//
// The counts are symmetric, c(k) = c(max - k), and only the lower half is stored.  T is summed
// in R's order, so the distribution functions give R's sums exactly.

// The offset in tab of the table of parameter (a, b) (width 2) or a (width 1), -1 if absent.
long count_table_find(__global const double *keys, __global const long *offs, int nkeys,
                      int width, double a, double b)
{
    if (width == 1)
        b = 0.;
    int lo = 0, hi = nkeys - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        double ka = keys[width * mid], kb = (width == 2) ? keys[width * mid + 1] : 0.;
        if (ka == a && kb == b)
            return offs[mid];
        if (ka < a || (ka == a && kb < b))
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

// The quantile from T (cumulative probabilities of a distribution symmetric on 0..u), for
// DASKCL_ACCURACY_BEST: p is taken in its own tail (the other tail's 1 - p where p > 1/2, so
// that a small upper-tail or log-scale p is never rounded through 1 - p), the fuzz is relative
// (64 DBL_EPSILON) where R's is 10 DBL_EPSILON absolute, and the upper tail P(W > k) is read
// as T(u - k - 1) by the symmetry.  NaN where no sum reaches p (a table that underflowed).
double count_table_quantile_best(__global const double *T, long u, double x, int lower_tail,
                                 int log_p)
{
    int up = !lower_tail;
    double p = log_p ? exp(x) : x;
    if (p > 0.5) {
        p = log_p ? -expm1(x) : 0.5 - x + 0.5;
        up = !up;
    }
    // lower: the first k with T(k) >= p; upper: the first k with T(u - k - 1) <= p, that is
    // u minus the number of j in 0..u-1 with T(j) <= p
    double tp = up ? p * (1 + 64 * DBL_EPSILON) : p * (1 - 64 * DBL_EPSILON);
    long lo = 0, hi = u;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (up ? (T[mid] > tp) : (T[mid] >= tp))
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo == u && !(up ? (T[u] > tp) : (T[u] >= tp)))
        return ML_NAN;
    return up ? (double)(u - lo) : (double)lo;
}
