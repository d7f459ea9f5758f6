// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qexp
// @depends: dpq
// @source: the exponential quantile -scale * log(1 - p), with log(1 - p) taken accurately on
//          every tail and scale (R_DT_Clog).

double qexp(double p, double scale, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(scale))
        return p + scale;
    if (scale < 0.)
        ML_WARN_return_NAN;
    R_Q_P01_check(p);
    if (p == R_DT_0)
        return 0.;
    return -scale * R_DT_Clog(p);
}
