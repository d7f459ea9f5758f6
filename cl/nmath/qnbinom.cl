// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnbinom, qnbinom_mu
// @depends: qdiscrete, pnbinom, qpois, dpq, rmath_utils
// @source: the discrete quantile search of qdiscrete.cl over pnbinom (pnbinom_mu), started
//          from the Cornish-Fisher expansion with the negative binomial mean n P, standard
//          deviation sqrt(n P Q) and skewness (Q + P) / sigma, Q = 1 / prob, P = Q - 1
//          (Johnson, Kemp & Kotz, Univariate Discrete Distributions, 5.5).
//
// qnbinom(p, size, prob) and qnbinom_mu(p, size, mu): the smallest x with P[X <= x] >= p (the
// same integers as R, including its fuzz).  NaN for prob outside (0, 1], size < 0, mu < 0;
// 0 for prob = 1, size = 0 or mu = 0; size = Inf in qnbinom_mu is the Poisson limit.

#define QNBINOM_P(y_, a_, b_, lt_, lg_) pnbinom(y_, a_, b_, lt_, lg_)
QDISCRETE_DEFINE(qnbinom_q, QNBINOM_P, 0)
#undef QNBINOM_P
#define QNBINOM_MU_P(y_, a_, b_, lt_, lg_) pnbinom_mu(y_, a_, b_, lt_, lg_)
QDISCRETE_DEFINE(qnbinom_mu_q, QNBINOM_MU_P, 0)
#undef QNBINOM_MU_P

// sqrt(n P Q) as R forms it, and where n P Q overflows the product of the square roots: the
// start was +Inf there (qnbinom(0.7, 1e-200, 1e-300) gave Inf, in R too, where
// pnbinom(0, ...) = 1 makes 0 the quantile; found by a random search against libRmath)
static inline double qnbinom_sigma(double size, double P, double Q)
{
    const double s = sqrt(size * P * Q);
    return isinf(s) ? sqrt(size) * sqrt(P) * sqrt(Q) : s;
}

// the skewness (Q + P) / sigma, as R forms it, and where Q + P overflows (P = mu / size from
// about 9e307) the sum of the quotients: the start was +Inf there and so was the quantile
// (qnbinom_mu(0.1, 1e-300, 1e8) is 0, since pnbinom_mu(0, ...) = 1; R gives NaN)
static inline double qnbinom_gamma(double P, double Q, double sigma)
{
    const double g = (Q + P) / sigma;
    return isinf(Q + P) ? Q / sigma + P / sigma : g;
}

double qnbinom(double p, double size, double prob, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(size) || isnan(prob))
        return p + size + prob;
    // prob = size / (size + mu) with size = mu = 0
    if (prob == 0 && size == 0)
        return 0;
    if (prob <= 0 || prob > 1 || size < 0)
        ML_WARN_return_NAN;
    if (prob == 1 || size == 0)
        return 0;
    R_Q_P01_boundaries(p, 0, ML_POSINF);
    double Q = 1.0 / prob, P = (1.0 - prob) * Q;
    double mu = size * P, sigma = qnbinom_sigma(size, P, Q);
    double gamma = qnbinom_gamma(P, Q, sigma);
    return qnbinom_q_body(p, size, prob, mu, sigma, gamma, lower_tail, log_p);
}

double qnbinom_mu(double p, double size, double mu, int lower_tail, int log_p)
{
    if (size == ML_POSINF)   // the Poisson limit
        return qpois(p, mu, lower_tail, log_p);
    if (isnan(p) || isnan(size) || isnan(mu))
        return p + size + mu;
    if (mu == 0 || size == 0)
        return 0;
    if (mu < 0 || size < 0)
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0, ML_POSINF);
    double Q = 1 + mu / size, P = mu / size;
    double sigma = qnbinom_sigma(size, P, Q), gamma = qnbinom_gamma(P, Q, sigma);
    return qnbinom_mu_q_body(p, size, mu, mu, sigma, gamma, lower_tail, log_p);
}
