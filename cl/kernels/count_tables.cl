// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 3: the count tables of the Wilcoxon rank-sum and signed-rank distributions, built on the
// device, one work-group per distinct parameter (daskcl/_counts.py launches them; the layout
// is described in nmath/count_tables.cl).
//
// @depends_nmath: choose
//
// Wilcoxon rank sum (Mann & Whitney 1947): the counts c(k; m, n) are the coefficients of the
// Gaussian binomial coefficient [m+n choose m]_q = prod_{i=1}^{a} (1 - q^{b+i}) / (1 - q^i)
// (a = min(m, n), b = max(m, n); Andrews, "The Theory of Partitions", 1976, Thm. 3.1), built
// factor by factor: P_i = [b+i choose i]_q satisfies
//     P_i[k] = P_i[k - i] + P_{i-1}[k] - P_{i-1}[k - b - i],
// a recurrence along each residue class of k mod i (one chain per work-item).  Only the lower
// half k <= i b / 2 is computed; the upper half follows from the symmetry P_i[k] = P_i[i b - k],
// which also keeps the work to the lower half.  The subtraction makes this recurrence unstable
// in floating point (errors grow from one factor to the next), so the counts are exact
// integers of as many 64-bit limbs as choose(m+n, n) needs (daskcl/_counts.py passes the
// number), converted to correctly rounded doubles at the end: below 2^53 they are R's counts;
// above, R's own recursion rounds, and these are the exact values rounded once.
// O(a m n / 2 * limbs) work.
//
// Signed rank (Wilcoxon 1945): the coefficients of prod_{j=1}^{n} (1 + q^j), one factor per
// step: w_j[k] = w_{j-1}[k] + w_{j-1}[k - j] for j <= k <= min(j (j+1) / 2, n (n+1) / 4), the
// same additions as R's in-place update, in parallel over k.  O(n^3 / 4) work.
//
// Then one work-item sums the cumulative probabilities in R's order.  The signed-rank ping-pong
// buffers are the table's count area and a scratch area of the same size; the parity of the
// number of steps decides which holds the first factor, so that the last one ends in the
// table.  The wilcox limbs live in scratch (two arrays of (c + 1) * limbs).

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

__kernel void count_tables_wilcox(__global const double *restrict keys,
                                  __global const long *restrict offs, __global double *restrict tab,
                                  __global ulong *restrict scratch,
                                  __global const long *restrict soffs)
{
    const int g = get_group_id(0);
    const long lid = get_local_id(0), nw = get_local_size(0);
    const double m = keys[2 * g], n = keys[2 * g + 1];
    const long a = (long)fmin(m, n), b = (long)fmax(m, n);
    const long u = a * b, c = u / 2;
    const int nl = (int)soffs[2 * g + 1];   // limbs per count
    __global double *head = tab + offs[g];
    __global double *w = head + 2, *T = w + c + 1;
    __global ulong *s0 = scratch + soffs[2 * g], *s1 = s0 + (c + 1) * nl;

    for (long k = lid; k < (c + 1) * nl; k += nw) {
        s0[k] = 0UL;
        s1[k] = 0UL;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0)
        s0[0] = 1UL;   // P_0 = 1
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (long i = 1; i <= a; ++i) {
        __global ulong *cur = (i & 1) ? s1 : s0;
        __global const ulong *prev = (i & 1) ? s0 : s1;
        const long h = i * b / 2, top = min(c, i * b);
        for (long r = lid; r < i && r <= h; r += nw) {
            for (long k = r; k <= h; k += i) {
                // cur[k] = cur[k - i] + prev[k] - prev[k - b - i], exactly
                __global ulong *v = cur + k * nl;
                __global const ulong *x = prev + k * nl;
                ulong carry = 0UL;
                for (int l = 0; l < nl; ++l) {
                    const ulong y = (k >= i) ? cur[(k - i) * nl + l] : 0UL;
                    const ulong t1 = y + x[l];
                    const ulong t2 = t1 + carry;
                    carry = (ulong)((t1 < y) | (t2 < t1));
                    v[l] = t2;
                }
                if (k >= b + i) {
                    __global const ulong *z = prev + (k - b - i) * nl;
                    ulong borrow = 0UL;
                    for (int l = 0; l < nl; ++l) {
                        const ulong d1 = v[l] - z[l];
                        const ulong d2 = d1 - borrow;
                        borrow = (ulong)((v[l] < z[l]) | (d1 < borrow));
                        v[l] = d2;
                    }
                }
            }
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (long k = h + 1 + lid; k <= top; k += nw)
            for (int l = 0; l < nl; ++l)
                cur[k * nl + l] = cur[(i * b - k) * nl + l];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    __global const ulong *fin = (a & 1) ? s1 : s0;
    for (long k = lid; k <= c; k += nw)
        w[k] = ct_limbs_to_double(fin + k * nl, nl);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
        const double ch = choose(m + n, n);
        head[0] = ch;
        head[1] = lchoose(m + n, n);
        double p = 0.;
        for (long k = 0; k <= u; ++k) {
            p += ((k <= c) ? w[k] : w[u - k]) / ch;
            T[k] = p;
        }
    }
}

__kernel void count_tables_signrank(__global const double *restrict keys,
                                    __global const long *restrict offs,
                                    __global double *restrict tab,
                                    __global double *restrict scratch,
                                    __global const long *restrict soffs)
{
    const int g = get_group_id(0);
    const long lid = get_local_id(0), nw = get_local_size(0);
    const double nd = keys[g];
    const long n = (long)nd, u = n * (n + 1) / 2, c = u / 2;
    __global double *head = tab + offs[g];
    __global double *w = head + 1, *T = w + c + 1;
    __global double *s = scratch + soffs[2 * g];   // (offset, unused) per key

    for (long k = lid; k <= c; k += nw) {
        w[k] = 0.;
        s[k] = 0.;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {   // the first factor, 1 + q
        __global double *first = ((n & 1) == 1) ? w : s;
        first[0] = 1.;
        if (c >= 1)
            first[1] = 1.;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (long j = 2; j <= n; ++j) {
        __global double *cur = ((j & 1) == (n & 1)) ? w : s;
        __global const double *prev = ((j & 1) == (n & 1)) ? s : w;
        const long end = min(j * (j + 1) / 2, c);
        for (long k = lid; k <= c; k += nw)
            cur[k] = (k >= j && k <= end) ? prev[k] + prev[k - j] : prev[k];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    if (lid == 0) {
        const double f = exp(-nd * M_LN2);
        head[0] = f;
        double p = 0.;
        for (long k = 0; k <= u; ++k) {
            p += ((k <= c) ? w[k] : w[u - k]) * f;
            T[k] = p;
        }
    }
}
