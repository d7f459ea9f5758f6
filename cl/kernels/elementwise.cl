// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 3: the elementwise kernel template behind every function of daskcl.nmath.
// daskcl/_elementwise.py fills the placeholder fields (dollar-brace names) from one row of the function table
// (daskcl/_nmath_table.py) and the number of dimensions of the (collapsed) broadcast shape.
//
// @depends_nmath: ${DEPENDS}
//
// Each input arrives either as a scalar kernel argument (mode 0) or as a buffer read through
// its own element strides over the broadcast shape (mode 1; a stride of 0 broadcasts), so
// broadcast inputs are never materialised.  The loop is grid-stride over the flat output, so any
// size works with any launch size.  status[0] counts NaN results from non-NaN inputs (R's
// "NaNs produced"), status[1] arguments R would warn are not integers; the host turns them into
// one RuntimeWarning each.

__kernel void ${NAME}(const long n, __global double *restrict out, __global int *restrict status
                      ${SHAPE_PARAMS}${INPUT_PARAMS}${FLAG_PARAMS})
{
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
${INDEX}
${LOADS}
        const double r = ${CALL};
        if (isnan(r) && !(${ANY_NAN})) atomic_inc(status);
${NONINT}
        out[i] = r;
    }
}
