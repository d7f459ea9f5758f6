// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 3: raw Philox4x32-10 blocks, for the known-answer tests of daskcl.kernels._random
// (philox4x32_10): out[4 j .. 4 j + 3] is the bijection of counter ctr[4 j .. 4 j + 3] under key
// key[2 j], key[2 j + 1].
//
// @depends_nmath: philox

__kernel void philox4x32_10_raw(const long n, __global const uint *restrict ctr,
                                __global const uint *restrict key, __global uint *restrict out)
{
    for (long j = get_global_id(0); j < n; j += get_global_size(0)) {
        const uint4 r = philox4x32_10(vload4(j, ctr), key[2 * j], key[2 * j + 1]);
        vstore4(r, j, out);
    }
}
