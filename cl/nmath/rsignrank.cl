// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rsignrank
// @depends: philox, rmath_utils
// @source: the Wilcoxon signed rank statistic as sum_{i=1}^{n} i B_i with independent fair
//          bits B_i, as R does (R draws each bit as floor(U + 1/2)).
//
// The bits are those of the element's 64-bit words, low bit first: word q holds B_{64q+1} ..
// B_{64q+64}.  A whole word w adds sum_j (64q + j + 1) w_j = (64q + 1) popcount(w) +
// sum_k 2^k popcount(w & M_k), where M_k selects the bit positions j whose bit k is set
// (the binary digits of j), so a word costs a few popcounts instead of 64 steps.  The sum is
// an exact 64-bit integer for every n up to the limit below (n (n + 1) / 2 < 2^62), rounded
// once to double.
//
// R's domain rules: NaN stays NaN (counted as produced: R warns "NAs produced" for it too); n
// rounded to the nearest integer; NaN for n < 0; 0 for n = 0.  R converts n to a C int, so its
// range ends at 2^31 - 1; here n above RSIGNRANK_MAX_N = 2^28 (and n = Inf) gives NaN, counted
// as produced: the work is n / 64 words per variate, 4.2e6 words (a fraction of a second on
// one CPU core) at the limit.

double rsignrank(rng_stream *s, double n)
{
    if (isnan(n))
        return n;
    n = R_forceint(n);
    if (n < 0.0 || n > 268435456.0)    // n > RSIGNRANK_MAX_N
        ML_WARN_return_NAN;
    const ulong k = (ulong)n;
    const ulong words = k >> 6, rest = k & 63;
    ulong r = 0;
    for (ulong q = 0; q <= words; q++) {
        if (q == words && rest == 0)
            break;
        ulong w = rng_bits64(s);
        if (q == words)
            w &= (1UL << rest) - 1UL;
        r += (64UL * q + 1UL) * (ulong)popcount(w)
             + (ulong)popcount(w & 0xAAAAAAAAAAAAAAAAUL)
             + 2UL * (ulong)popcount(w & 0xCCCCCCCCCCCCCCCCUL)
             + 4UL * (ulong)popcount(w & 0xF0F0F0F0F0F0F0F0UL)
             + 8UL * (ulong)popcount(w & 0xFF00FF00FF00FF00UL)
             + 16UL * (ulong)popcount(w & 0xFFFF0000FFFF0000UL)
             + 32UL * (ulong)popcount(w & 0xFFFFFFFF00000000UL);
    }
    return (double)r;
}
