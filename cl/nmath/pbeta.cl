// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pbeta_raw, pbeta, pbeta_class
// @depends: toms708, dpq, rmath_utils
// @source: the beta distribution function I_x(a, b) by DiDonato & Morris (1992), ACM TOMS 708
//          (bratio, in toms708.cl), with R's limit cases: a = 0 or b = 0 or infinite shapes are
//          point masses at 0, 1 or 1/2.

NMATH_NOINLINE double pbeta_raw(double x, double a, double b, int lower_tail, int log_p)
{
    if (a == 0 || b == 0 || !isfinite(a) || !isfinite(b)) {
        // limit cases; here 0 < x < 1
        if (a == 0 && b == 0) // mass 1/2 at 0 and at 1
            return log_p ? -M_LN2 : 0.5;
        if (a == 0 || b / a == ML_POSINF) // mass 1 at 0
            return R_DT_1;
        if (b == 0 || a / b == ML_POSINF) // mass 1 at 1
            return R_DT_0;
        // a = b = Inf: mass 1 at 1/2
        return (x < 0.5) ? R_DT_0 : R_DT_1;
    }
    if (x >= 1) // (from qbeta)
        return R_DT_1;
    double x1 = 0.5 - x + 0.5, w, wc;
    int ierr;
    bratio(a, b, x, x1, &w, &wc, &ierr, log_p);
    return lower_tail ? w : wc;
}

double pbeta(double x, double a, double b, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(a) || isnan(b))
        return x + a + b;
    if (a < 0 || b < 0)
        ML_WARN_return_NAN;
    if (x <= 0)
        return R_DT_0;
    // x >= 1 goes through pbeta_raw's limit cases first, as in R (pbeta(1, a, 0) is 0)
    return pbeta_raw(x, a, b, lower_tail, log_p);
}

// The class functions (*_class) return which of the unit's methods an element takes, as a small
// integer (0: invalid, NaN or trivial arguments): on GPUs a launch sorts its elements by it
// before computing them, so that the work-items of a warp run one method at a time instead of
// every method present in the warp (cl/kernels/elementwise.cl).  They only order work: no
// result depends on them.
int pbeta_class(double x, double a, double b, int lower_tail, int log_p)
{
    if (!(x > 0.0) || !(x < 1.0) || !isfinite(a) || !isfinite(b))
        return 0;
    return bratio_class(a, b, x, 0.5 - x + 0.5, log_p);
}
