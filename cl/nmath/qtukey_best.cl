// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qtukey_best
// @depends: qinv_best, ptukey_best, dpq, rmath_utils
// @source: the studentized range quantile as the root of log F(q) = log p, F the smaller tail by
//          ptukey_best.cl (Copenhaver & Holland's structure, both integrals to double precision)
//          on the log scale, by qinv_best.cl's bracketing regula falsi in log q from q = 3.
//
// The `best` accuracy mode's qtukey for 0 < p < 1 (qtukey.cl calls it under
// DASKCL_ACCURACY_BEST): about 1e-14 relative in q where R's secant steps stop once two iterates
// differ by 1e-4 and its probabilities are right to about 1e-8 absolute.  NaN where ptukey_best
// or the bracket fails: qtukey then takes R's.  Cost: some 30 to 60 calls of ptukey_best.

double qtukey_best(double p, double rr, double cc, double df, int lower_tail, int log_p)
{
    int lower;
    double lt = qib_target(p, lower_tail, log_p, &lower);
    qib_t s;
    qib_begin(&s, QIB_POS, 3., .25);
    while (s.phase < QIB_DONE) {
        double l = ptukey_best(s.x, rr, cc, df, lower, 1);
        qib_put(&s, lower ? l - lt : lt - l);
    }
    return s.x;
}
