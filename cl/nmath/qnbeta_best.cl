// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnbeta_best, qnf_best
// @depends: qinv_best, pnbeta_best, qbeta, dpq, rmath_utils
// @source: the noncentral beta and F quantiles as the roots of log F(x) = log p, F the smaller
//          tail by pnbeta_best.cl (Benton & Krishnamoorthy 2003; Frick 1990) on the log scale,
//          by qinv_best.cl's bracketing regula falsi (in logit x, log x for F); the start from
//          Patnaik's (1949) approximation of the noncentral chi-squared chi'^2(2a, ncp) by
//          k chi^2(nu), k = (a + ncp) / (a + ncp / 2), nu = 2 (a + ncp / 2)^2 / (a + ncp)
//          (Biometrika 36, 202-232), the beta's numerator replaced by it.
//
// The `best` accuracy mode's qnbeta and qnf for finite shapes (degrees of freedom) and ncp > 0,
// 0 < p < 1 (qnbeta.cl, qnf.cl call them under DASKCL_ACCURACY_BEST): about 1e-14 relative in
// x where R bisects pnbeta on the probability scale (R's pnbeta: 1e-9 absolute).  For F the
// beta's x = y / (1 + y) and 1 - x = 1 / (1 + y), y = df1 x / df2, as pnf passes them.  NaN
// where pnbeta_best or the bracket fails: the caller then takes R's.

// the start: the central beta of Patnaik's approximation, its x scaled back by k
static inline double qnbb_start(double p, double a, double b, double ncp, int lower_tail,
                                int log_p)
{
    double h = a + .5 * ncp, k = (a + ncp) / h, nu2 = h * h / (a + ncp);   // nu / 2
    double y = qbeta(p, nu2, b, lower_tail, log_p);
    double r = k * y / (1. - y);   // the ratio chi'^2 / chi^2(2b)
    return (r > 0. && isfinite(r)) ? r : (a + .5 * ncp) / b;
}

double qnbeta_best(double p, double a, double b, double ncp, int lower_tail, int log_p)
{
    int lower;
    double lt = qib_target(p, lower_tail, log_p, &lower);
    double r = qnbb_start(p, a, b, ncp, lower_tail, log_p);
    qib_t s;
    qib_begin(&s, QIB_UNIT, r / (1. + r), .5);
    while (s.phase < QIB_DONE) {
        double l = pnbeta_best(s.x, 1. - s.x, a, b, ncp, lower, 1);
        qib_put(&s, lower ? l - lt : lt - l);
    }
    return s.x;
}

double qnf_best(double p, double df1, double df2, double ncp, int lower_tail, int log_p)
{
    int lower;
    double lt = qib_target(p, lower_tail, log_p, &lower);
    double a = .5 * df1, b = .5 * df2;
    double r = qnbb_start(p, a, b, ncp, lower_tail, log_p);
    qib_t s;
    qib_begin(&s, QIB_POS, r * (df2 / df1), .5);
    while (s.phase < QIB_DONE) {
        double y = (df1 / df2) * s.x;
        double l = pnbeta_best(y / (1. + y), 1. / (1. + y), a, b, ncp, lower, 1);
        qib_put(&s, lower ? l - lt : lt - l);
    }
    return s.x;
}
