// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 3: the kernel template behind every r-function of daskcl.nmath (random variates).
// daskcl/random.py fills the placeholder fields (dollar-brace names) from one row of its table
// and the number of dimensions of the (collapsed) output shape.
//
// @depends_nmath: philox, ${DEPENDS}
//
// Work-item i computes output element i (flat, C order over this launch's part of the output,
// starting at flat index i0), which owns the Philox stream of counter
// cbase + sum_d idx_d cst_d: the element's flat index in the whole requested array plus the
// call's offset, whatever part of it (chunk, slab) this launch computes.  Each parameter
// arrives either as a scalar kernel argument (mode 0) or as a buffer read through its own
// element strides (mode 1; stride 0 broadcasts).  One element per work-item (the global size is
// n rounded up to the work-group size): rejection loops run independently, and CPU compilers
// vectorise across work-items.  status[0] counts NaN results from non-NaN parameters (R's
// "NaNs produced"); the host turns it into one RuntimeWarning.

__kernel void ${NAME}(const long n, const long i0, __global double *restrict out,
                      __global int *restrict status, const ulong seed, const ulong cbase
                      ${SHAPE_PARAMS}${INPUT_PARAMS})
{
    const long i = get_global_id(0);
    if (i >= n)
        return;
${INDEX}
${LOADS}
    rng_stream rng_;
    rng_init(&rng_, seed, cbase + (ulong)oc_);
    const double r = ${CALL};
    if (isnan(r)${NOT_ANY_NAN}) atomic_inc(status);
    out[i] = r;
}

// Raw Philox4x32-10 blocks, for the known-answer tests: out[4 j .. 4 j + 3] is the bijection of
// counter ctr[4 j .. 4 j + 3] under key key[2 j], key[2 j + 1].
__kernel void philox4x32_10_raw(const long n, __global const uint *restrict ctr,
                                __global const uint *restrict key, __global uint *restrict out)
{
    for (long j = get_global_id(0); j < n; j += get_global_size(0)) {
        const uint4 r = philox4x32_10(vload4(j, ctr), key[2 * j], key[2 * j + 1]);
        vstore4(r, j, out);
    }
}
