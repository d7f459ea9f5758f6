// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the binomial family, probit link (quasibinomial too).
// @depends_nmath: dbinom_raw, pnorm_both
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
// phi / Phi = exp(log phi - log Phi) stay finite where Phi underflows.  -log choose(n, s) is
// computed once per observation by f2f3_prepare from the library's dbinom_raw at p = s / n
// (Loader's saddle point, where the deviance terms vanish):
// log choose(n, s) = log dbinom(s; n, s/n) - s log(s/n) - (n - s) log(1 - s/n).
//
// Table o[] per observation: alpha, -log choose(n, s), s, n - s, wt y, wt (1 - y).  s outside
// [0, n] (y outside [0, 1]) gives +Inf, as R's dbinom; wt < 0 gives NaN.

#define F2F3_NOBS 6

static inline double f2f3_mul0(const double c, const double v)
{
    return (c == 0.0) ? 0.0 : c * v;    // 0 * (+-Inf) = 0: a zero count or weight drops the term
}

static inline void f2f3_prepare(const double y, double wt, const double alpha, double *o)
{
    if (wt < 0)
        wt = ML_NAN;
    const double n = rint(wt), s = rint(y * wt);
    double a = 0.0, s_ = s, f_ = n - s;
    if (isnan(n) || isnan(s)) {
        a = n + s;
    } else if (s < 0 || s > n) {
        a = ML_POSINF;
        s_ = f_ = 0.0;
    } else if (s > 0 && s < n) {
        const double p0 = s / n, q0 = (n - s) / n;
        a = s * log(p0) + (n - s) * log1p(-p0) - dbinom_raw(s, n, p0, q0, 1);
    }
    o[0] = alpha;
    o[1] = a;
    o[2] = s_;
    o[3] = f_;
    o[4] = wt * y;
    o[5] = wt * (1.0 - y);
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
