// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qbinom
// @depends: qdiscrete, pbinom, dpq, rmath_utils
// @source: the discrete quantile search of qdiscrete.cl over pbinom, started from the
//          Cornish-Fisher expansion with the binomial mean n p, standard deviation
//          sqrt(n p (1 - p)) and skewness (1 - 2p) / sigma.
//
// qbinom(p, n, pr): the smallest x with P[X <= x] >= p (the same integers as R, including its
// fuzz).  n is rounded; NaN for non-finite n or pr, n < 0 or pr outside [0, 1], and for
// p = +-Inf on the probability scale; 0 for pr = 0 or n = 0, n for pr = 1.

#define QBINOM_P(y_, a_, b_, lt_, lg_) pbinom(y_, a_, b_, lt_, lg_)
QDISCRETE_DEFINE(qbinom_q, QBINOM_P, 1)
#undef QBINOM_P

double qbinom(double p, double n, double pr, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(n) || isnan(pr))
        return p + n + pr;
    if (!isfinite(n) || !isfinite(pr))
        ML_WARN_return_NAN;
    // on the log scale p = -Inf is a legitimate value
    if (!isfinite(p) && !log_p)
        ML_WARN_return_NAN;
    n = R_forceint(n);
    if (pr < 0 || pr > 1 || n < 0)
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0, n);
    if (pr == 0. || n == 0)
        return 0.;
    double q = 1 - pr;
    if (q == 0.)
        return n;   // covers the full support
    double mu = n * pr, sigma = sqrt(n * pr * q), gamma = (q - pr) / sigma;
    return qbinom_q_body(p, n, pr, mu, sigma, gamma, lower_tail, log_p);
}
