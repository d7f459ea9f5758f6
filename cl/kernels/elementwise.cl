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

__kernel void ${NAME}(const long n, __global double *restrict out, __global int *restrict status
                      ${SHAPE_PARAMS}${INPUT_PARAMS}${FLAG_PARAMS}${EXTRA_PARAMS})
{
    const long i = get_global_id(0);
    if (i >= n) return;
${INDEX}
${LOADS}
    const double r = ${CALL};
    if (isnan(r) && !(${ANY_NAN})) atomic_inc(status);
${NONINT}
    out[i] = r;
}
