// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnt_best
// @depends: qinv_best, pnt_best, qt, dpq, rmath_utils
// @source: the noncentral t quantile as the root of log F(t) = log p, F the smaller tail by
//          pnt_best.cl (Witkovsky 2013's quadrature) on the log scale, by qinv_best.cl's
//          bracketing regula falsi in asinh t, from the central quantile shifted by ncp.
//
// The `best` accuracy mode's qnt for finite df > 0 and ncp, 0 < p < 1 (qnt.cl calls it under
// DASKCL_ACCURACY_BEST): about 1e-14 relative in t where R bisects AS 243 (1e-12 absolute) on
// the probability scale.  NaN where pnt_best or the bracket fails: qnt then takes R's.

double qnt_best(double p, double df, double ncp, int lower_tail, int log_p)
{
    int lower;
    double lt = qib_target(p, lower_tail, log_p, &lower);
    double t0 = qt(p, df, lower_tail, log_p) + ncp;
    if (!isfinite(t0))
        t0 = ncp;
    qib_t s;
    qib_begin(&s, QIB_REAL, t0, .5);
    while (s.phase < QIB_DONE) {
        double l = pnt_best(s.x, df, ncp, lower, 1);
        qib_put(&s, lower ? l - lt : lt - l);
    }
    return s.x;
}
