// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: philox4x32_10, rng_stream, rng_init, rng_bits64, unif_rand, rng_half, rng_index
// @provides: RNG_MAX_TRIES
// @depends:
// @source: J. K. Salmon, M. A. Moraes, R. O. Dror & D. E. Shaw (2011), "Parallel random numbers:
//          as easy as 1, 2, 3", Proc. SC'11, ACM (the Philox-4x32 bijection, 10 rounds); checked
//          against the known-answer vectors of the Random123 distribution
//          (tests/nmath/test_random_philox.py).
//
// The counter-based generator behind every r-function of daskcl.
//
// philox4x32_10(ctr, key) is a keyed bijection of 128-bit counters.  One round maps the counter
// words (c0, c1, c2, c3) with the key words (k0, k1) to
//     (hi(M1 c2) ^ c1 ^ k0,  lo(M1 c2),  hi(M0 c0) ^ c3 ^ k1,  lo(M0 c0)),
// with M0 = 0xD2511F53, M1 = 0xCD9E8D57 and hi/lo the halves of the 64-bit product; between
// rounds the key is bumped by the Weyl constants (0x9E3779B9, 0xBB67AE85).  All integer
// arithmetic: every OpenCL device gives the same bits.
//
// The stream of one element.  Element k of an r-function call (counting from the call's offset,
// in C order over the output shape) owns the counters (lo(e), hi(e), lo(j), hi(j)) with
// e = offset + k, under the key (lo(seed), hi(seed)); j = 0, 1, 2, ... numbers the blocks the
// element has used.  Each block gives two 64-bit words (words 0|1 and 2|3, low word first), used
// in that order.  A rejection method draws as many words as it needs from its own element's
// stream, so element k depends only on (seed, offset + k) and the parameters: never on chunking,
// launch size, device or worker.
//
// Uniforms from a 64-bit word x:
//   unif_rand   ((x >> 12) + 1/2) 2^-52: the 2^52 midpoints of a grid on (0, 1).  Exactly
//               representable, never 0 or 1, and symmetric (1 - u is in the set and is computed
//               exactly), like R's unif_rand, which also never returns 0 or 1.
//   rng_half    the top bit chooses a half (*upper), the other 63 bits m give p in (0, 1/2):
//               p = (m + 1/2) 2^-64 for m < 2^52, otherwise the midpoint of the bucket of m
//               truncated to its leading 52 bits.  Each value's probability is exactly its
//               bucket's width, so U = p (*upper = 0) or U = 1 - p (*upper = 1) is uniform on
//               (0, 1) with relative resolution 2^-52 near 0 AND near 1, down to 2^-65.  Inversion methods
//               use it with the tail written in p, never forming 1 - p (rnorm, rexp, rlogis,
//               rcauchy): R's inversion for rnorm combines two 32-bit uniforms (BIG = 2^27) for
//               the same purpose.
//   rng_index   an exact uniform integer in [0, n), 1 <= n < 2^64 (rejection of the top partial
//               block of 2^64 mod n values, then x mod n).
//
// The r-functions (rnorm.cl, rgamma.cl, ...) keep Rmath.h's names and parameter order with the
// element's stream as an extra first parameter, e.g. double rnorm(rng_stream *s, double mu,
// double sigma): R's draw from a global generator (unif_rand()), which device code has no place
// for.  norm_rand, exp_rand and unif_rand likewise take the stream.
//
// RNG_MAX_TRIES bounds every rejection loop of the r-functions: a loop that has not accepted
// after that many tries returns NaN (counted as "NaN produced") instead of hanging the device.
// The methods used accept with probability > 1/4 per try, so a correct run never gets there.

#define RNG_MAX_TRIES 1000000

typedef struct {
    uint k0, k1;     // the key: low and high words of the seed
    ulong elem;      // offset + k
    ulong draw;      // the next block of this element
    ulong spare;     // the second word of the last block
    int has_spare;
} rng_stream;

// one round on the words c0..c3 with the key k0, k1 (the 64-bit products give hi and lo; a
// full unrolling of scalar code lets CPU compilers vectorise across work-items)
#define PHILOX_ROUND {                                                  \
        const ulong p0 = (ulong)0xD2511F53u * (ulong)c0;                \
        const ulong p1 = (ulong)0xCD9E8D57u * (ulong)c2;                \
        c0 = (uint)(p1 >> 32) ^ c1 ^ k0;                                \
        c1 = (uint)p1;                                                  \
        c2 = (uint)(p0 >> 32) ^ c3 ^ k1;                                \
        c3 = (uint)p0;                                                  \
    }
#define PHILOX_BUMP { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }

uint4 philox4x32_10(uint4 ctr, uint k0, uint k1)
{
    uint c0 = ctr.x, c1 = ctr.y, c2 = ctr.z, c3 = ctr.w;
    PHILOX_ROUND PHILOX_BUMP PHILOX_ROUND PHILOX_BUMP PHILOX_ROUND PHILOX_BUMP
    PHILOX_ROUND PHILOX_BUMP PHILOX_ROUND PHILOX_BUMP PHILOX_ROUND PHILOX_BUMP
    PHILOX_ROUND PHILOX_BUMP PHILOX_ROUND PHILOX_BUMP PHILOX_ROUND PHILOX_BUMP
    PHILOX_ROUND
    return (uint4)(c0, c1, c2, c3);
}

#undef PHILOX_ROUND
#undef PHILOX_BUMP

void rng_init(rng_stream *s, ulong seed, ulong elem)
{
    s->k0 = (uint)seed;
    s->k1 = (uint)(seed >> 32);
    s->elem = elem;
    s->draw = 0;
    s->spare = 0;
    s->has_spare = 0;
}

ulong rng_bits64(rng_stream *s)
{
    if (s->has_spare) {
        s->has_spare = 0;
        return s->spare;
    }
    const uint4 c = (uint4)((uint)s->elem, (uint)(s->elem >> 32), (uint)s->draw,
                            (uint)(s->draw >> 32));
    const uint4 r = philox4x32_10(c, s->k0, s->k1);
    s->draw += 1;
    s->spare = ((ulong)r.w << 32) | (ulong)r.z;
    s->has_spare = 1;
    return ((ulong)r.y << 32) | (ulong)r.x;
}

// (double)v for v < 2^52, exactly, through the bits of 2^52 + v (no integer conversion, which
// some CPUs cannot vectorise for 64-bit integers)
static inline double rng_u52_to_double(ulong v)
{
    return as_double(0x4330000000000000UL | v) - 0x1.0p52;
}

double unif_rand(rng_stream *s)
{
    // 1 + m 2^-52 has the bits of 1.0 with mantissa m; minus 1 and plus 2^-53: all exact
    return (as_double(0x3FF0000000000000UL | (rng_bits64(s) >> 12)) - 1.0) + 0x1.0p-53;
}

double rng_half(rng_stream *s, int *upper)
{
    const ulong x = rng_bits64(s);
    const ulong m = x & 0x7FFFFFFFFFFFFFFFUL;
    *upper = (int)(x >> 63);
    const int len = 64 - (int)clz(m);                 // bit length of m (0 for m = 0)
    const int sh = len > 52 ? len - 52 : 0;
    const double mant = rng_u52_to_double(m >> sh) + 0.5;   // < 2^52 + 1/2: exact
    return mant * as_double((ulong)(1023 + sh - 64) << 52);   // times 2^(sh - 64), exact
}

ulong rng_index(rng_stream *s, ulong n)
{
    const ulong lim = (0UL - n) % n;                   // 2^64 mod n
    for (;;) {
        const ulong x = rng_bits64(s);
        if (x >= lim) return x % n;
    }
}
