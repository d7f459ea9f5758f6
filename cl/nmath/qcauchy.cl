// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qcauchy
// @depends: dpq, cospi
// @source: the Cauchy quantile l - s / tan(pi p) = l + s tan(pi (p - 1/2)); p is first reduced
//          to the smaller tail (p <= 1/2, swapping the tail), with 1 - exp(p) taken as -expm1(p)
//          on the log scale, and tan(pi p) exact at the quarter points (R_tanpi).  Built with
//          DASKCL_ACCURACY_BEST, near the median (where the quantile vanishes and p's reduction
//          cancels) it is s tan(pi d) with d = p - 1/2 exact, or on the log scale
//          d = expm1(lp + log 2) / 2 (log 2 in two parts).

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
#ifdef DASKCL_ACCURACY_BEST
    {
        double d = 1.;               // P - 1/2, where it is taken without cancelling
        if (log_p) {
            double t = (p + 0x1.62e42fefa39efp-1) + 2.319046813846299558e-17; // lp + log 2
            if (fabs(t) < .25)
                d = .5 * expm1(t);
        } else if (p >= .25 && p <= .75) {
            d = p - .5;
        }
        if (d != 1.)
            return location + (lower_tail ? scale : -scale) * tan(M_PI * d);
    }
#endif
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
