// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dsignrank_tab, psignrank_tab, qsignrank_tab
// @depends: count_tables, dpq, rmath_utils
// @source: F. Wilcoxon (1945), "Individual comparisons by ranking methods", Biometrics
//          Bulletin 1, 80-83: under the null hypothesis the signed-rank statistic V is the sum
//          of a random subset of 1..n, so P[V = k] = c(k; n) 2^-n with c(k; n) the number of
//          subsets of {1, ..., n} summing to k, the coefficients of prod_{j=1}^{n} (1 + q^j).
//
// dsignrank, psignrank and qsignrank (Rmath.h's arguments, then the count tables of
// kernels/count_tables.cl, see count_tables.cl): the density exp(log c(x) - n log 2); the
// distribution function sums c(i) 2^-n over the shorter tail, as R does, read from the table of
// cumulative sums; the quantile is the first k whose cumulative sum reaches p (a binary search
// over R's non-decreasing sums), with R's fuzz of 10 DBL_EPSILON and its upper-tail search.
// Built with DASKCL_ACCURACY_BEST the quantile is count_table_quantile_best's: a relative fuzz
// and the p of the requested tail, never rounded through 1 - p.
// R's argument checks: n is rounded; NaN for n <= 0; x more than 1e-7 from an integer has
// density 0; psignrank rounds x + 1e-7.  Non-finite n gives NaN (R aborts for dsignrank).
// qsignrank gives NaN (with R's warning) where no cumulative sum reaches p, where R's search
// does not end (n >= 1075).

double dsignrank_tab(double x, double n, int give_log, __global const double *ct_tab,
                     __global const double *ct_keys, __global const long *ct_offs, int ct_nkeys)
{
    if (isnan(x) || isnan(n))
        return x + n;
    n = R_forceint(n);
    if (n <= 0)
        ML_WARN_return_NAN;
    if (fabs(x - R_forceint(x)) > 1e-7)
        return R_D__0;
    x = R_forceint(x);
    if (x < 0 || x > (n * (n + 1) / 2))
        return R_D__0;
    long o = count_table_find(ct_keys, ct_offs, ct_nkeys, 1, n, 0.);
    if (o < 0)
        ML_WARN_return_NAN;
    long u = (long)(n * (n + 1) / 2), c = u / 2, k = (long)x;
    if (k > c)
        k = u - k;
    return R_D_exp(log(ct_tab[o + 1 + k]) - n * M_LN2);
}

double psignrank_tab(double x, double n, int lower_tail, int log_p,
                     __global const double *ct_tab, __global const double *ct_keys,
                     __global const long *ct_offs, int ct_nkeys)
{
    if (isnan(x) || isnan(n))
        return x + n;
    if (!isfinite(n))
        ML_WARN_return_NAN;
    n = R_forceint(n);
    if (n <= 0)
        ML_WARN_return_NAN;
    x = R_forceint(x + 1e-7);
    if (x < 0.0)
        return R_DT_0;
    if (x >= n * (n + 1) / 2)
        return R_DT_1;
    long o = count_table_find(ct_keys, ct_offs, ct_nkeys, 1, n, 0.);
    if (o < 0)
        ML_WARN_return_NAN;
    long u = (long)(n * (n + 1) / 2), c = u / 2;
    __global const double *T = ct_tab + o + 2 + c;
    double p;
    if (x <= (n * (n + 1) / 4)) {   // the sum over the shorter (lower) range
        p = T[(long)x];
    } else {
        x = n * (n + 1) / 2 - x;
        p = T[(long)x - 1];
        lower_tail = !lower_tail;
    }
    return R_DT_val(p);
}

double qsignrank_tab(double x, double n, int lower_tail, int log_p,
                     __global const double *ct_tab, __global const double *ct_keys,
                     __global const long *ct_offs, int ct_nkeys)
{
    if (isnan(x) || isnan(n))
        return x + n;
    if (!isfinite(x) || !isfinite(n))
        ML_WARN_return_NAN;
    R_Q_P01_check(x);
    n = R_forceint(n);
    if (n <= 0)
        ML_WARN_return_NAN;
    if (x == R_DT_0)
        return 0;
    if (x == R_DT_1)
        return n * (n + 1) / 2;
    long o = count_table_find(ct_keys, ct_offs, ct_nkeys, 1, n, 0.);
    if (o < 0)
        ML_WARN_return_NAN;
    long u = (long)(n * (n + 1) / 2), c = u / 2;
    __global const double *T = ct_tab + o + 2 + c;
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
    // no sum reaches x: R's search would step on for ever.  That happens where 2^-n underflows
    // (n >= 1075: every term is 0, or NaN where the count overflowed), and R hangs there
    if (lo == u && !(upper ? (T[u] > x) : (T[u] >= x)))
        ML_WARN_return_NAN;
    return upper ? (double)(u - lo) : (double)lo;
}
