// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dwilcox_tab, pwilcox_tab, qwilcox_tab
// @depends: count_tables, dpq, rmath_utils
// @source: H. B. Mann and D. R. Whitney (1947), "On a test of whether one of two random
//          variables is stochastically larger than the other", Ann. Math. Statist. 18, 50-60:
//          the null distribution of W = #{(i, j): x_i > y_j} for samples of sizes m and n is
//          c(k; m, n) / choose(m + n, n), with c(k; m, n) the number of partitions of k into at
//          most m parts of size at most n.
//
// dwilcox, pwilcox and qwilcox (Rmath.h's arguments, then the count tables of
// kernels/count_tables.cl, see count_tables.cl): the density c(x) / choose(m+n, n) (log: log
// c(x) - lchoose(m+n, n)); the distribution function sums probabilities over the shorter tail,
// as R does, and reads that sum from the table of cumulative sums; the quantile is the first k
// whose cumulative sum reaches p (R's linear search, here a binary search over the same
// non-decreasing sums), with R's fuzz of 10 DBL_EPSILON and its upper-tail search.
// Built with DASKCL_ACCURACY_BEST the quantile is count_table_quantile_best's: a relative fuzz
// and the p of the requested tail, never rounded through 1 - p.  R's
// argument checks: m and n are rounded; NaN for m or n <= 0; x more than 1e-7 from an integer
// has density 0.  Non-finite m or n give NaN (R's integer conversion is undefined there).

double dwilcox_tab(double x, double m, double n, int give_log, __global const double *ct_tab,
                   __global const double *ct_keys, __global const long *ct_offs, int ct_nkeys)
{
    if (isnan(x) || isnan(m) || isnan(n))
        return x + m + n;
    m = R_forceint(m);
    n = R_forceint(n);
    if (m <= 0 || n <= 0)
        ML_WARN_return_NAN;
    if (fabs(x - R_forceint(x)) > 1e-7)
        return R_D__0;
    x = R_forceint(x);
    if (x < 0 || x > m * n)
        return R_D__0;
    long o = count_table_find(ct_keys, ct_offs, ct_nkeys, 2, m, n);
    if (o < 0)
        ML_WARN_return_NAN;
    __global const double *head = ct_tab + o;
    long u = (long)(m * n), c = u / 2, k = (long)x;
    if (k > c)
        k = u - k;
    double cnt = head[2 + k];
    return give_log ? log(cnt) - head[1] : cnt / head[0];
}

double pwilcox_tab(double q, double m, double n, int lower_tail, int log_p,
                   __global const double *ct_tab, __global const double *ct_keys,
                   __global const long *ct_offs, int ct_nkeys)
{
    if (isnan(q) || isnan(m) || isnan(n))
        return q + m + n;
    if (!isfinite(m) || !isfinite(n))
        ML_WARN_return_NAN;
    m = R_forceint(m);
    n = R_forceint(n);
    if (m <= 0 || n <= 0)
        ML_WARN_return_NAN;
    q = floor(q + 1e-7);
    if (q < 0.0)
        return R_DT_0;
    if (q >= m * n)
        return R_DT_1;
    long o = count_table_find(ct_keys, ct_offs, ct_nkeys, 2, m, n);
    if (o < 0)
        ML_WARN_return_NAN;
    long u = (long)(m * n), c = u / 2;
    __global const double *T = ct_tab + o + 3 + c;
    double p;
    if (q <= (m * n / 2)) {   // the sum over the shorter (lower) range
        p = T[(long)q];
    } else {
        q = m * n - q;
        p = T[(long)q - 1];
        lower_tail = !lower_tail;
    }
    return R_DT_val(p);
}

double qwilcox_tab(double x, double m, double n, int lower_tail, int log_p,
                   __global const double *ct_tab, __global const double *ct_keys,
                   __global const long *ct_offs, int ct_nkeys)
{
    if (isnan(x) || isnan(m) || isnan(n))
        return x + m + n;
    if (!isfinite(x) || !isfinite(m) || !isfinite(n))
        ML_WARN_return_NAN;
    R_Q_P01_check(x);
    m = R_forceint(m);
    n = R_forceint(n);
    if (m <= 0 || n <= 0)
        ML_WARN_return_NAN;
    if (x == R_DT_0)
        return 0;
    if (x == R_DT_1)
        return m * n;
    long o = count_table_find(ct_keys, ct_offs, ct_nkeys, 2, m, n);
    if (o < 0)
        ML_WARN_return_NAN;
    long u = (long)(m * n), c = u / 2;
    __global const double *T = ct_tab + o + 3 + c;
#ifdef DASKCL_ACCURACY_BEST
    {
        double q = count_table_quantile_best(T, u, x, lower_tail, log_p);
        if (isnan(q))
            ML_WARN_return_NAN;
        return q;
    }
#endif
    if (log_p || !lower_tail)
        x = R_DT_qIv(x);   // lower tail, natural scale
    // the first k with T[k] >= x (lower) or T[k] > x (upper); T is non-decreasing
    int upper = !(x <= 0.5);
    x = upper ? 1 - x + 10 * DBL_EPSILON : x - 10 * DBL_EPSILON;
    long lo = 0, hi = u;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (upper ? (T[mid] > x) : (T[mid] >= x))
            hi = mid;
        else
            lo = mid + 1;
    }
    return upper ? (double)(u - lo) : (double)lo;
}
