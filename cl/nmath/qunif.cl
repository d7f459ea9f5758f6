// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qunif
// @depends: dpq
// @source: the uniform quantile a + p (b - a), p taken to the lower tail on the natural scale.

double qunif(double p, double a, double b, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(a) || isnan(b))
        return p + a + b;
    R_Q_P01_check(p);
    if (!isfinite(a) || !isfinite(b) || b < a)
        ML_WARN_return_NAN;
    if (b == a)
        return a;
    return a + R_DT_qIv(p) * (b - a);
}
