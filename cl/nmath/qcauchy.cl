// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qcauchy
// @depends: dpq, cospi
// @source: the Cauchy quantile l - s / tan(pi p) = l + s tan(pi (p - 1/2)); p is first reduced
//          to the smaller tail (p <= 1/2, swapping the tail), with 1 - exp(p) taken as -expm1(p)
//          on the log scale, and tan(pi p) exact at the quarter points (R_tanpi).

double qcauchy(double p, double location, double scale, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(location) || isnan(scale))
        return p + location + scale;
    R_Q_P01_check(p);
    if (scale <= 0. || !isfinite(scale)) {
        if (scale == 0.)
            return location;
        ML_WARN_return_NAN;
    }
    // p -> natural scale, at most 1/2, tail swapped where needed
    if (log_p) {
        if (p > -1.) {
            if (p == 0.)
                return location + (lower_tail ? scale : -scale) * ML_POSINF;
            lower_tail = !lower_tail;
            p = -expm1(p);
        } else {
            p = exp(p);
        }
    } else if (p > 0.5) {
        if (p == 1.)
            return location + (lower_tail ? scale : -scale) * ML_POSINF;
        p = 1. - p;
        lower_tail = !lower_tail;
    }
    if (p == 0.5)
        return location;
    if (p == 0.)
        return location + (lower_tail ? scale : -scale) * ML_NEGINF;
    return location + (lower_tail ? -scale : scale) / R_tanpi(p);
}
