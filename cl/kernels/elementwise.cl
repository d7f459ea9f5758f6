// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 3: the elementwise kernel template behind every function of daskcl.nmath, every random
// generator and every daskcl.ElementwiseKernel.  daskcl/kernels/_elementwise.py fills the
// placeholder fields (dollar-brace names) from the kernel's definition: its inputs, outputs,
// integer arguments and operation.
//
// @depends_nmath: ${DEPENDS}
//
// Work-item g computes element k of this launch (k = g, or perm[g] in a sorted launch), element
// i = base + k of the call.  The launch covers a block of the (collapsed) broadcast shape of up
// to ${DIMS} axes, of which the first `nd` are used (N0 is implicit); each input arrives either
// as a scalar kernel argument (mode 0) or as a buffer read from its own offset through its own
// element strides (mode 1; a stride of 0 broadcasts), so broadcast inputs are never
// materialised.  One work-item computes one element (a grid-stride loop defeats PoCL's
// vectorisation across work-items and the CPU caches: see benchmarks/bench_template.py).
// status[0] counts elements with a NaN result from non-NaN inputs (R's "NaNs produced"),
// status[1] arguments R would warn are not integers; the host turns them into one
// RuntimeWarning each.
//
// Grouping by method (functions with a class function, on GPUs): functions such as pbeta and
// pgamma choose one of several methods per element, and the work-items of a GPU warp run in
// lock-step, so a warp whose elements take four methods pays for all four.  With SORT > 0 the
// host runs a counting sort of the element indices by the class function (which method each
// element takes, see cl/nmath/pbeta.cl) before the computation, over a whole launch
// (daskcl/kernels/_elementwise.py):
//   ${NAME}_class   each work-group of SORT work-items takes a block of SORT * epi elements,
//                   stores their classes and counts them per class (counts[c * nblocks + block]);
//   ${NAME}_scan    one work-group turns the counts into offsets (an exclusive prefix sum);
//   ${NAME}_place   each block writes its element indices into perm at its classes' offsets;
//   ${NAME}         work-item g computes element perm[g].
// The warps then run one method each, and the whole device runs the same method at a time
// (sorting tile by tile left the multiprocessors switching between methods: 2x slower on an
// H100, benchmarks/tune_nmath.py --presort).  Results do not depend on it, only the order of
// work; the order within a class in a block is that of the local atomics.

${PREAMBLE}

#if ${SORT}
__kernel void ${NAME}_class(const int dk_len, const int dk_epi, __global uchar *restrict dk_cls,
                            __global int *restrict dk_counts, const int dk_nblocks,
                            const long dk_base${IN_PARAMS})
{
    __local int hist[${NCLASS}];
    const int lid = get_local_id(0), block = get_group_id(0);
    for (int c = lid; c < ${NCLASS}; c += ${SORT})
        hist[c] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = 0; e < dk_epi; e++) {
        const int j = (block * dk_epi + e) * ${SORT} + lid;
        if (j < dk_len) {
            const long dk_k = j;
${SORT_INDEX}
${SORT_LOADS}
            const int c = clamp(${CLASS}, 0, ${NCLASS} - 1);
            dk_cls[j] = (uchar)c;
            atomic_inc(&hist[c]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int c = lid; c < ${NCLASS}; c += ${SORT})
        dk_counts[c * dk_nblocks + block] = hist[c];
}

// in place: counts[k] := counts[0] + ... + counts[k - 1], one work-group of SORT, each
// work-item over its own run of m / SORT counts
__kernel void ${NAME}_scan(const int m, __global int *restrict counts)
{
    __local int part[${SORT}];
    const int lid = get_local_id(0), per = (m + ${SORT} - 1) / ${SORT};
    const int lo = min(lid * per, m), hi = min(lo + per, m);
    int s = 0;
    for (int k = lo; k < hi; k++)
        s += counts[k];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int acc = 0;
        for (int k = 0; k < ${SORT}; k++) {
            const int t = part[k];
            part[k] = acc;
            acc += t;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    s = part[lid];
    for (int k = lo; k < hi; k++) {
        const int t = counts[k];
        counts[k] = s;
        s += t;
    }
}

__kernel void ${NAME}_place(const int len, const int epi, __global const uchar *restrict cls,
                            __global const int *restrict counts, const int nblocks,
                            __global int *restrict perm)
{
    __local int next[${NCLASS}];
    const int lid = get_local_id(0), block = get_group_id(0);
    for (int c = lid; c < ${NCLASS}; c += ${SORT})
        next[c] = counts[c * nblocks + block];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = 0; e < epi; e++) {
        const int j = (block * epi + e) * ${SORT} + lid;
        if (j < len)
            perm[atomic_inc(&next[cls[j]])] = j;
    }
}

__kernel void ${NAME}(const long dk_n, __global int *restrict dk_status${OUT_PARAMS},
                      const long dk_base${IN_PARAMS}, __global const int *restrict dk_perm)
{
    const int g = get_global_id(0);
    if (g < dk_n) {
        const long dk_k = dk_perm[g];
${ELEMENT}
    }
}
#else
__kernel void ${NAME}(const long dk_n, __global int *restrict dk_status${OUT_PARAMS},
                      const long dk_base${IN_PARAMS})
{
    const long dk_k = get_global_id(0);
    if (dk_k < dk_n) {
${ELEMENT}
    }
}
#endif
