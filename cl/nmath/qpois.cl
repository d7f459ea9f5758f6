// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qpois
// @depends: qdiscrete, ppois, dpq, rmath_utils
// @source: the discrete quantile search of qdiscrete.cl over ppois, started from the
//          Cornish-Fisher expansion with the Poisson mean lambda, standard deviation
//          sqrt(lambda) and skewness 1 / sqrt(lambda).
//
// qpois(p, lambda): the smallest x with P[X <= x] >= p (the same integers as R, including its
// fuzz).  NaN for lambda < 0 or non-finite; 0 for lambda = 0.

#define QPOIS_P(y_, a_, b_, lt_, lg_) ppois(y_, a_, lt_, lg_)
QDISCRETE_DEFINE(qpois_q, QPOIS_P, 0)
#undef QPOIS_P

double qpois(double p, double lambda, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(lambda))
        return p + lambda;
    if (!isfinite(lambda))
        ML_WARN_return_NAN;
    if (lambda < 0)
        ML_WARN_return_NAN;
    R_Q_P01_check(p);
    if (lambda == 0)
        return 0;
    if (p == R_DT_0)
        return 0;
    if (p == R_DT_1)
        return ML_POSINF;
    double mu = lambda, sigma = sqrt(lambda), gamma = 1.0 / sigma;
    return qpois_q_body(p, lambda, 0., mu, sigma, gamma, lower_tail, log_p);
}
