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
// so a warp whose elements take four methods pays for all four.  With BIN_WG > 0 a work-group
// owns a tile of BIN_WG * epi consecutive elements (epi, elements per work-item, a kernel
// argument up to BIN_EPI): it evaluates the row's class function (which method each element
// takes, see cl/nmath/pbeta.cl) for all of them, sorts their indices by class in local memory
// (a counting sort: count, prefix sum, then place, evaluating the class again rather than
// keeping it), and computes them in that order, epi rounds of BIN_WG: the warps run one method
// each except where two classes meet.  Results do not depend on it, only the order of work.
// The host launches it with work-groups of exactly BIN_WG work-items (no
// reqd_work_group_size: the attribute overrides -cl-nv-maxrregcount).

__kernel void ${NAME}(const long n, __global double *restrict out, __global int *restrict status
                      ${SHAPE_PARAMS}${INPUT_PARAMS}${FLAG_PARAMS}${EXTRA_PARAMS}${EPI_PARAM})
{
#if ${BIN_WG}
    __local int bin_count[${NCLASS}];
    __local int bin_perm[${BIN_WG} * ${BIN_EPI}];
    const int lid = get_local_id(0);
    const long tile = (long)get_group_id(0) * ${BIN_WG} * epi;
    for (int c = lid; c < ${NCLASS}; c += ${BIN_WG})
        bin_count[c] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int pass = 0; pass < 2; pass++) {
        for (int e = 0; e < epi; e++) {
            const long i = tile + e * ${BIN_WG} + lid;
            int c = ${NCLASS} - 1;                  // past the end: last
            if (i < n) {
${BIN_INDEX}
${BIN_LOADS}
                c = clamp(${CLASS}, 0, ${NCLASS} - 2);
            }
            const int k = atomic_inc(&bin_count[c]);
            if (pass)                               // bin_count[c] is now where class c goes
                bin_perm[k] = e * ${BIN_WG} + lid;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!pass && lid == 0) {                    // counts -> starts
            int start = 0;
            for (int c = 0; c < ${NCLASS}; c++) {
                const int m = bin_count[c];
                bin_count[c] = start;
                start += m;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int e = 0; e < epi; e++) {
        const long i = tile + bin_perm[e * ${BIN_WG} + lid];
        if (i < n) {
${ELEMENT}
        }
    }
#else
    const long i = get_global_id(0);
    if (i < n) {
${ELEMENT}
    }
#endif
}
