// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qgeom
// @depends: dpq, rmath_utils
// @source: inversion of P[X > x] = (1 - p)^(x + 1): x = ceil(log P[X > x] / log(1 - p) - 1),
//          with log1p for log(1 - p) and a fuzz of 1e-12 towards the left-continuous quantile.
//
// qgeom(p, prob): NaN for prob outside (0, 1]; 0 for prob = 1.

double qgeom(double p, double prob, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(prob))
        return p + prob;
    if (prob <= 0 || prob > 1)
        ML_WARN_return_NAN;
    R_Q_P01_check(p);
    if (prob == 1)
        return 0;
    R_Q_P01_boundaries(p, 0, ML_POSINF);
    // the fuzz ensures left continuity; the value must be >= 0
    return fmax2(0, ceil(R_DT_Clog(p) / log1p(-prob) - 1 - 1e-12));
}
