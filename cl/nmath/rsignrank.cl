// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rsignrank
// @depends: philox, rmath_utils
// @source: the Wilcoxon signed rank statistic as sum_{i=1}^{n} i B_i with independent fair
//          bits B_i, as R does (R draws each bit as floor(U + 1/2)).
//
// The bits are those of the element's 64-bit words, low bit first.  R's domain rules: NaN
// stays NaN (not counted as produced); n rounded to the nearest integer; NaN for n < 0; 0 for
// n = 0.

double rsignrank(rng_stream *s, double n)
{
    if (isnan(n))
        return n;
    n = R_forceint(n);
    if (n < 0.0)
        ML_WARN_return_NAN;
    const ulong k = (ulong)n;
    ulong r = 0, bits = 0;
    for (ulong i = 0; i < k; i++) {
        if ((i & 63) == 0)
            bits = rng_bits64(s);
        if (bits & 1)
            r += i + 1;
        bits >>= 1;
    }
    return (double)r;
}
