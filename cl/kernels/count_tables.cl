// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 3: the count tables of the Wilcoxon rank-sum and signed-rank distributions, built on the
// device (daskcl/_counts.py launches them; the layout is described in nmath/count_tables.cl).
//
// @depends_nmath: choose
//
// Signed rank (Wilcoxon 1945): the number of subsets of {1..n} with sum k is the coefficient
// of q^k in prod_{j=1}^{n} (1 + q^j) (the 0/1 knapsack count).  Multiplying by one factor is
//     w_j[k] = w_{j-1}[k] + w_{j-1}[k - j],
// a step in which every k is independent: one parallel pass per j.  Only k <= c = floor(u/2),
// u = n(n+1)/2, is kept (the counts are symmetric, w[k] = w[u - k]), and w_j differs from
// w_{j-1} only for j <= k <= min(j(j+1)/2, c).  The two buffers alternate: step j writes
// dst[k] = src[k] + src[k - j] over k in [j - 1, min(j(j+1)/2, c)], where src holds w_{j-1}
// and dst holds w_{j-2}, which equals w_{j-1} outside [j - 1, min((j-1)j/2, c)]; so each step
// touches only the entries that change, the same additions (in the same order for each k)
// as the in-place descending update of the sequential algorithm, and the counts are exact
// integers below 2^53.  O(n^3 / 4) additions in n parallel steps.
//
// Wilcoxon rank sum (Mann & Whitney 1947): the counts c(k; m, n) are the coefficients of the
// Gaussian binomial coefficient [m+n choose m]_q = prod_{i=1}^{a} (1 - q^{b+i}) / (1 - q^i)
// (a = min(m, n), b = max(m, n); Andrews, "The Theory of Partitions", 1976, Thm. 3.1), built
// factor by factor: P_i = [b+i choose i]_q satisfies
//     P_i[k] = P_i[k - i] + P_{i-1}[k] - P_{i-1}[k - b - i],
// a recurrence along each residue class of k mod i: one chain per work-item, the running
// value kept in registers, the i chains of a step in parallel.  Only k <= i b / 2 is
// computed; P_{i-1} is read through its symmetry P[k] = P[D - k] (D = (i-1) b).  The
// subtraction makes this recurrence unstable in floating point, so the counts are exact
// integers of nl 64-bit limbs (arithmetic modulo 2^(64 nl), exact since every count and the
// sum of two fit; daskcl/_counts.py passes nl), converted to correctly rounded doubles at the
// end: below 2^53 they are R's counts; above, R's own recursion rounds, and these are the
// exact values rounded once.  O(a^2 b nl / 4) work in a parallel steps of critical path
// b/2 limb additions.
//
// Then the cumulative probabilities T(k) are summed in R's order by one work-item, in
// bounded pieces (count_tables_*_cum).
//
// Two ways to run the same steps: a small parameter is built whole by one work-group
// (count_tables_*_small, one work-group per parameter, a barrier between steps); a large one
// by one launch per step over the whole device (the host checks for interruption between
// batches of launches).

#define CT_MAXL 16   // limbs of the largest wilcox count (choose(m + n, n) < 2^1020)

// A non-negative integer of nl 64-bit limbs (least significant first) to double, correctly
// rounded (to nearest, ties to even).
static double ct_limbs_to_double(__global const ulong *v, int nl)
{
    int t = nl - 1;
    while (t > 0 && v[t] == 0)
        --t;
    const ulong hi = v[t];
    if (t == 0)
        return (double)hi;
    // the 64 leading bits of the number and a sticky bit for the rest
    const int sh = (int)clz(hi);
    const ulong lo = v[t - 1];
    const ulong top = sh ? (hi << sh) | (lo >> (64 - sh)) : hi;
    int sticky = (sh ? (lo << sh) : lo) != 0;   // the bits of lo below top
    for (int j = t - 2; j >= 0 && !sticky; --j)
        sticky = v[j] != 0;
    ulong mant = top >> 11;
    const ulong rem = top & 0x7FFUL;
    if (rem > 0x400UL || (rem == 0x400UL && (sticky || (mant & 1UL))))
        mant += 1UL;
    return ldexp((double)mant, 64 * t - sh + 11);
}

// ---------------------------------------------------------------------------- signed rank

// One entry of step j: dst[k] = src[k] + src[k - j], for j - 1 <= k <= min(j(j+1)/2, c).
static inline void ct_signrank_entry(__global double *dst, __global const double *src, long j,
                                     long k)
{
    dst[k] = (k >= j) ? src[k] + src[k - j] : src[k];
}

static inline long ct_signrank_end(long j, long c)
{
    return min(j * (j + 1) / 2, c);
}

// The cumulative probabilities T(k0..k1-1) of signrank(n), continuing T(k0 - 1).
static void ct_signrank_cum(__global double *head, long n, long k0, long k1)
{
    const long u = n * (n + 1) / 2, c = u / 2;
    __global const double *w = head + 1;
    __global double *T = head + 1 + c + 1;
    double f, p;
    if (k0 == 0) {
        f = exp(-(double)n * M_LN2);
        head[0] = f;
        p = 0.;
    } else {
        f = head[0];
        p = T[k0 - 1];
    }
    for (long k = k0; k < k1; ++k) {
        p += ((k <= c) ? w[k] : w[u - k]) * f;
        T[k] = p;
    }
}

// One work-group per parameter g0 + group: the whole table.  soffs: the scratch offset of
// each parameter (pairs, the second unused).
__kernel void count_tables_signrank_small(__global const double *restrict keys,
                                          __global const long *restrict offs,
                                          __global double *restrict tab,
                                          __global double *restrict scratch,
                                          __global const long *restrict soffs, const int g0)
{
    const int g = g0 + (int)get_group_id(0);
    const long lid = get_local_id(0), nw = get_local_size(0);
    const long n = (long)keys[g], u = n * (n + 1) / 2, c = u / 2;
    __global double *head = tab + offs[g];
    __global double *w = head + 1;
    __global double *s = scratch + soffs[2 * g];

    for (long k = lid; k <= c; k += nw) {   // both buffers hold w_1 = 1 + q
        w[k] = (k <= 1) ? 1. : 0.;
        s[k] = w[k];
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (long j = 2; j <= n; ++j) {
        const int to_w = ((n - j) & 1) == 0;   // the last step (j = n) writes w
        __global double *dst = to_w ? w : s;
        __global const double *src = to_w ? s : w;
        const long end = ct_signrank_end(j, c);
        for (long k = j - 1 + lid; k <= end; k += nw)
            ct_signrank_entry(dst, src, j, k);
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    if (lid == 0)
        ct_signrank_cum(head, n, 0, u + 1);
}

// A large parameter, its table at tab + off and its other buffer at the start of scratch:
// both buffers set to w_1 (entry k = global id <= c).
__kernel void count_tables_signrank_init(__global double *restrict tab, const long off,
                                         __global double *restrict scratch, const long c)
{
    const long k = get_global_id(0);
    if (k <= c) {
        tab[off + 1 + k] = (k <= 1) ? 1. : 0.;
        scratch[k] = (k <= 1) ? 1. : 0.;
    }
}

// A large parameter: step j of n over k = j - 1 + global id.
__kernel void count_tables_signrank_step(__global double *restrict tab, const long off,
                                         __global double *restrict scratch, const long n,
                                         const long j)
{
    const long c = n * (n + 1) / 4;
    const long k = j - 1 + (long)get_global_id(0);
    const int to_w = ((n - j) & 1) == 0;
    __global double *w = tab + off + 1;
    if (k <= ct_signrank_end(j, c))
        ct_signrank_entry(to_w ? w : scratch, to_w ? scratch : w, j, k);
}

// A large parameter on a CPU device: steps j0 .. j1 - 1 in place, one work-item, as R's own
// loop: w[k] += w[k - j] for k from min(j(j+1)/2, c) down to j (each entry read before it is
// written in the step, so every step adds the previous step's values, as the parallel step
// kernel does: the same sums).  One table of c + 1 doubles stays in the CPU's caches, where
// the two tables of the parallel steps do not.
__kernel void count_tables_signrank_seq(__global double *restrict tab, const long off,
                                        const long n, const long j0, const long j1)
{
    const long c = n * (n + 1) / 4;
    __global double *w = tab + off + 1;
    for (long j = j0; j < j1; ++j)
        for (long k = ct_signrank_end(j, c); k >= j; --k)
            w[k] += w[k - j];
}

// A large parameter: T(k0..k1-1), one work-item.
__kernel void count_tables_signrank_cum(__global double *restrict tab, const long off,
                                        const long n, const long k0, const long k1)
{
    ct_signrank_cum(tab + off, n, k0, k1);
}

// --------------------------------------------------------------------------- rank sum

// The limbs of P_{i-1}[x] (degree D, lower half stored), or 0 where the coefficient is 0.
static inline __global const ulong *ct_wilcox_prev(__global const ulong *prev, long x, long D,
                                                   int nl)
{
    if (x < 0 || x > D)
        return 0;
    return prev + ((2 * x > D) ? D - x : x) * nl;
}

// Chain r of step i: cur[k] = cur[k - i] + prev[k] - prev[k - b - i] for k = r, r + i, ...
// <= h, modulo 2^(64 nl), the running value in registers.
static void ct_wilcox_chain(__global ulong *cur, __global const ulong *prev, int nl, long i,
                            long b, long r, long h)
{
    ulong acc[CT_MAXL];
    for (int l = 0; l < CT_MAXL; ++l)
        acc[l] = 0UL;
    const long D = (i - 1) * b;
    for (long k = r; k <= h; k += i) {
        __global const ulong *x = ct_wilcox_prev(prev, k, D, nl);
        __global const ulong *z = ct_wilcox_prev(prev, k - b - i, D, nl);
        __global ulong *v = cur + k * nl;
        ulong carry = 0UL, borrow = 0UL;
        for (int l = 0; l < nl; ++l) {
            // acc + x - z, limb l: the sum's carry and the difference's borrow ripple upward
            const ulong y = x ? x[l] : 0UL, zl = z ? z[l] : 0UL;
            const ulong t1 = acc[l] + y;
            const ulong t2 = t1 + carry;
            carry = (ulong)((t1 < y) | (t2 < t1));
            const ulong d1 = t2 - zl;
            const ulong d2 = d1 - borrow;
            borrow = (ulong)((t2 < zl) | (d1 < borrow));
            acc[l] = d2;
            v[l] = d2;
        }
    }
}

// T(k0..k1-1) of wilcox(m, n), continuing T(k0 - 1); the header at k0 = 0.
static void ct_wilcox_cum(__global double *head, double m, double n, long k0, long k1)
{
    const long u = (long)m * (long)n, c = u / 2;
    __global const double *w = head + 2;
    __global double *T = head + 2 + c + 1;
    double ch, p;
    if (k0 == 0) {
        ch = choose(m + n, n);
        head[0] = ch;
        head[1] = lchoose(m + n, n);
        p = 0.;
    } else {
        ch = head[0];
        p = T[k0 - 1];
    }
    for (long k = k0; k < k1; ++k) {
        p += ((k <= c) ? w[k] : w[u - k]) / ch;
        T[k] = p;
    }
}

// One work-group per parameter g0 + group: the whole table.  soffs: (scratch offset, limbs)
// of each parameter; the scratch holds two arrays of (c + 1) nl limbs.
__kernel void count_tables_wilcox_small(__global const double *restrict keys,
                                        __global const long *restrict offs,
                                        __global double *restrict tab,
                                        __global ulong *restrict scratch,
                                        __global const long *restrict soffs, const int g0)
{
    const int g = g0 + (int)get_group_id(0);
    const long lid = get_local_id(0), nw = get_local_size(0);
    const double m = keys[2 * g], n = keys[2 * g + 1];
    const long a = (long)fmin(m, n), b = (long)fmax(m, n);
    const long c = a * b / 2;
    const int nl = (int)soffs[2 * g + 1];
    __global double *head = tab + offs[g];
    __global ulong *s0 = scratch + soffs[2 * g], *s1 = s0 + (c + 1) * nl;

    for (long k = lid; k < (c + 1) * nl; k += nw)
        s0[k] = (k == 0) ? 1UL : 0UL;   // P_0 = 1
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (long i = 1; i <= a; ++i) {
        __global ulong *cur = (i & 1) ? s1 : s0;
        __global const ulong *prev = (i & 1) ? s0 : s1;
        const long h = i * b / 2;
        for (long r = lid; r < i && r <= h; r += nw)
            ct_wilcox_chain(cur, prev, nl, i, b, r, h);
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    __global const ulong *fin = (a & 1) ? s1 : s0;
    for (long k = lid; k <= c; k += nw)
        head[2 + k] = ct_limbs_to_double(fin + k * nl, nl);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0)
        ct_wilcox_cum(head, m, n, 0, a * b + 1);
}

// A large parameter, its two limb arrays of (c + 1) nl words at the start of scratch:
// P_0 = 1 (word k = global id of the first array).
__kernel void count_tables_wilcox_init(__global ulong *restrict scratch, const long words)
{
    const long k = get_global_id(0);
    if (k < words)
        scratch[k] = (k == 0) ? 1UL : 0UL;
}

// A large parameter: step i, chain r = global id.
__kernel void count_tables_wilcox_step(__global ulong *restrict scratch, const long c,
                                       const int nl, const long i, const long b)
{
    __global ulong *s0 = scratch, *s1 = scratch + (c + 1) * nl;
    const long r = get_global_id(0), h = i * b / 2;
    if (r < i && r <= h)
        ct_wilcox_chain((i & 1) ? s1 : s0, (i & 1) ? s0 : s1, nl, i, b, r, h);
}

// A large parameter after a steps: the counts k = global id <= c as doubles.
__kernel void count_tables_wilcox_convert(__global double *restrict tab, const long off,
                                          __global const ulong *restrict scratch,
                                          const long c, const int nl, const long a)
{
    const long k = get_global_id(0);
    __global const ulong *fin = scratch + ((a & 1) ? (c + 1) * nl : 0);
    if (k <= c)
        tab[off + 2 + k] = ct_limbs_to_double(fin + k * nl, nl);
}

// A large parameter: T(k0..k1-1), one work-item.
__kernel void count_tables_wilcox_cum(__global double *restrict tab, const long off,
                                      const double m, const double n, const long k0,
                                      const long k1)
{
    ct_wilcox_cum(tab + off, m, n, k0, k1);
}

#undef CT_MAXL
