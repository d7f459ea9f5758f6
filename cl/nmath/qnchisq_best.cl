// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnchisq_best
// @depends: qinv_best, pnchisq_best, qchisq, dpq, rmath_utils
// @source: the noncentral chi-squared quantile as the root of log F(x) = log p, F the smaller
//          tail by pnchisq_best.cl (Ding 1992; Benton & Krishnamoorthy 2003) on the log scale,
//          by qinv_best.cl's bracketing regula falsi, from Pearson's (1959) approximation by a
//          scaled central chi-squared distribution (Abramowitz & Stegun 26.4.27) as R's.
//
// The `best` accuracy mode's qnchisq for df > 0 and ncp > 0 finite, 0 < p < 1 (qnchisq.cl
// calls it under DASKCL_ACCURACY_BEST): about 1e-14 relative in x where R bisects pnchisq on
// the probability scale (1e-11 absolute in the bracket, and the upper tail as one minus the
// lower for ncp >= 80).  NaN where pnchisq_best or the bracket fails: qnchisq then takes R's.

double qnchisq_best(double p, double df, double ncp, int lower_tail, int log_p)
{
    int lower;
    double lt = qib_target(p, lower_tail, log_p, &lower);
    double b = ncp * ncp / (df + 3. * ncp), c = (df + 3. * ncp) / (df + 2. * ncp);
    double x0 = b + c * qchisq(p, (df + 2. * ncp) / (c * c), lower_tail, log_p);
    if (!(x0 > 0. && x0 < DBL_MAX))
        x0 = df + ncp;
    qib_t s;
    qib_begin(&s, QIB_POS, x0, .25);
    while (s.phase < QIB_DONE) {
        double l = pnchisq_best(s.x, df, ncp, lower, 1);
        qib_put(&s, lower ? l - lt : lt - l);
    }
    return s.x;
}
