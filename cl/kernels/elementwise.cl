// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 3: the elementwise kernel template behind every function of daskcl.nmath.
// daskcl/_elementwise.py fills the placeholder fields (dollar-brace names) from one row of the function table
// (daskcl/_nmath_table.py) and the number of dimensions of the (collapsed) broadcast shape.
//
// @depends_nmath: ${DEPENDS}
//
// Each input arrives either as a scalar kernel argument (mode 0) or as a buffer read through
// its own element strides over the broadcast shape (mode 1; a stride of 0 broadcasts), so
// broadcast inputs are never materialised.  One work-item computes one element (a grid-stride
// loop defeats PoCL's vectorisation across work-items and the CPU caches: see
// benchmarks/bench_template.py).  status[0] counts NaN results from non-NaN inputs (R's "NaNs
// produced"), status[1] arguments R would warn are not integers; the host turns them into one
// RuntimeWarning each.  Parameters after the flags (EXTRA_PARAMS) carry per-call device data of
// rows with their own implementation, e.g. the count tables of the Wilcoxon and signed-rank rows
// (daskcl/_counts.py); for every other row they are empty.
//
// Grouping by method (rows with a class function, on GPUs): functions such as pbeta and pgamma
// choose one of several methods per element, and the work-items of a GPU warp run in lock-step,
// so a warp whose elements take four methods pays for all four.  With SORT > 0 the host runs
// a counting sort of the element indices by the row's class function (which method each
// element takes, see cl/nmath/pbeta.cl) before the computation, over a whole launch of up to
// 2^26 elements (daskcl/_elementwise.py):
//   ${NAME}_class   each work-group of SORT work-items takes a block of SORT * epi elements,
//                   stores their classes and counts them per class (counts[c * nblocks + block]);
//   ${NAME}_scan    one work-group turns the counts into offsets (an exclusive prefix sum);
//   ${NAME}_place   each block writes its element indices into perm at its classes' offsets;
//   ${NAME}         work-item g computes element perm[g].
// The warps then run one method each, and the whole device runs the same method at a time
// (sorting tile by tile left the multiprocessors switching between methods: 2x slower on an
// H100, benchmarks/tune_nmath.py --presort).  Results do not depend on it, only the order of
// work; the order within a class in a block is that of the local atomics.

#if ${SORT}
__kernel void ${NAME}_class(const long base, const int len, const int epi,
                            __global uchar *restrict cls, __global int *restrict counts,
                            const int nblocks
                            ${SHAPE_PARAMS}${INPUT_PARAMS}${FLAG_PARAMS}${EXTRA_PARAMS})
{
    __local int hist[${NCLASS}];
    const int lid = get_local_id(0), block = get_group_id(0);
    for (int c = lid; c < ${NCLASS}; c += ${SORT})
        hist[c] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = 0; e < epi; e++) {
        const int j = (block * epi + e) * ${SORT} + lid;
        if (j < len) {
            const long i = base + j;
${SORT_INDEX}
${SORT_LOADS}
            const int c = clamp(${CLASS}, 0, ${NCLASS} - 1);
            cls[j] = (uchar)c;
            atomic_inc(&hist[c]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int c = lid; c < ${NCLASS}; c += ${SORT})
        counts[c * nblocks + block] = hist[c];
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

__kernel void ${NAME}(const long n, __global double *restrict out, __global int *restrict status
                      ${SHAPE_PARAMS}${INPUT_PARAMS}${FLAG_PARAMS}${EXTRA_PARAMS},
                      const long base, const int len, __global const int *restrict perm)
{
    const int g = get_global_id(0);
    if (g < len) {
        const long i = base + perm[g];
${ELEMENT}
    }
}
#else
__kernel void ${NAME}(const long n, __global double *restrict out, __global int *restrict status
                      ${SHAPE_PARAMS}${INPUT_PARAMS}${FLAG_PARAMS}${EXTRA_PARAMS})
{
    const long i = get_global_id(0);
    if (i < n) {
${ELEMENT}
    }
}
#endif
