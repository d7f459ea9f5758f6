// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qbeta_best, qbeta_best_from
// @depends: qinv_best, pbeta, dpq, rmath_utils
// @source: the beta quantile as the root of log F(x) = log p, F the smaller tail by TOMS 708
//          (bratio, through pbeta, on the log scale: A. R. DiDonato & A. H. Morris (1992), ACM
//          TOMS 18, 360-373), by qinv_best.cl's bracketing regula falsi in logit x.
//
// The `best` accuracy mode's qbeta for finite shapes p, q > 0 and 0 < alpha < 1 (qbeta.cl
// polishes its own result with qbeta_best_from under DASKCL_ACCURACY_BEST): about 1e-15
// relative in x, in both tails to 1e-300 and beyond on the log scale, where R's Newton
// iterations can stop far from the root (qbeta(5.2e-243, 1.09, 4.1e18, lower_tail = FALSE):
// R 0.39, the quantile 1.36e-16).  qbeta_best_from starts at x0 (R's value) with small steps;
// qbeta_best at 1/2.  NaN where the bracket fails (a quantile beyond the normal doubles, or
// within 2^-53 of 1): qbeta then keeps R's value.

double qbeta_best_from(double x0, double alpha, double p, double q, int lower_tail, int log_p)
{
    int lower;
    double lt = qib_target(alpha, lower_tail, log_p, &lower);
    int near = x0 > 0. && x0 < 1.;
    qib_t s;
    qib_begin(&s, QIB_UNIT, near ? x0 : .5, near ? 1e-3 : 1.);
    while (s.phase < QIB_DONE) {
        double l = pbeta(s.x, p, q, lower, 1);
        qib_put(&s, lower ? l - lt : lt - l);
    }
    return s.x;
}

double qbeta_best(double alpha, double p, double q, int lower_tail, int log_p)
{
    return qbeta_best_from(.5, alpha, p, q, lower_tail, log_p);
}
