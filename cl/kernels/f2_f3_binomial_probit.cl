// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the binomial family, probit link (quasibinomial too).
// @depends_nmath: f2f3_binomial_counts, f2f3_mul, pnorm_both
//
// Observation i has n = round(wt), s = round(y wt) (the counts of the objective) and the
// unrounded y, wt of the gradient.  With p = Phi(eta), 1 - p = Phi(-eta), phi the standard
// normal density:
//
//   l(eta) = -log dbinom(s; n, p) = -log choose(n, s) - s log Phi(eta) - (n - s) log Phi(-eta),
//   g(eta) = -wt [y phi / Phi(eta) - (1 - y) phi / Phi(-eta)].
//
// Both tails come on the log scale from one pnorm_both call (W. J. Cody (1969), the library's
// pnorm unit), so neither p nor 1 - p is formed by cancellation and the Mills ratios
// phi / Phi = exp(log phi - log Phi) stay finite where Phi underflows.
//
// Table o[] per observation (cl/nmath/f2f3_binomial_counts.cl, once per data set): alpha,
// -log choose(n, s), s, n - s, wt y, wt (1 - y).

#define F2F3_NOBS 6

static inline void f2f3_prepare(const double y, double wt, const double alpha, double *o)
{
    f2f3_binomial_counts(y, wt, alpha, o);
}

// phi(x) / Phi(-x) for x >= 5: Laplace's continued fraction x + 1/(x + 2/(x + 3/(x + ...)))
// (M. Abramowitz and I. A. Stegun (1964), Handbook of Mathematical Functions, 26.2.14),
// evaluated backward from K terms, K the fewest that reach 1.2e-16 relative over each range
// of x (found against 40-digit values).  exp(log phi - log Phi(-x)) subtracts two numbers near
// x^2 / 2 and keeps only |x|^2 / 2 ulps: 1.3e-9 relative at x = 1e4.
static inline double f2f3_mills_inv(const double x)
{
    const int K = x < 8.0 ? 24 : x < 12.0 ? 15 : x < 20.0 ? 10 : x < 40.0 ? 7 : 5;
    double f = x;
    for (int k = K; k > 0; --k)
        f = x + k / f;
    return f;
}

static inline void f2f3_term(const double eta, const double *o, double *l, double *g)
{
    double lp, lq;
    pnorm_both(eta, &lp, &lq, 2, 1);                 // log Phi(eta), log Phi(-eta)
    const double lphi = -M_LN_SQRT_2PI - 0.5 * eta * eta;
    *l = o[1] - f2f3_mul0(o[2], lp) - f2f3_mul0(o[3], lq);
    // the Mills ratios phi / Phi(-eta) and phi / Phi(eta); in the far tail of each, the
    // continued fraction (infinite eta as before: NaN)
    double rq = exp(lphi - lq), rp = exp(lphi - lp);
    if (eta > 5.0 && eta < INFINITY)
        rq = f2f3_mills_inv(eta);
    else if (eta < -5.0 && eta > -INFINITY)
        rp = f2f3_mills_inv(-eta);
    *g = f2f3_mul0(o[5], rq) - f2f3_mul0(o[4], rp);
}
