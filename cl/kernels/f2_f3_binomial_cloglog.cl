// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the binomial family, complementary log-log link (quasibinomial too).
// @depends_nmath: f2f3_binomial_counts, f2f3_mul
//
// Observation i has n = round(wt), s = round(y wt) (the counts of the objective) and the
// unrounded y, wt of the gradient.  With m = exp(eta), p = -expm1(-m), 1 - p = exp(-m),
// a = exp(eta - m):
//
//   l(eta) = -log dbinom(s; n, p) = -log choose(n, s) - s log p + (n - s) m,
//   g(eta) = -wt [y a / p - (1 - y) a / (1 - p)].
//
// log p = log(1 - exp(-m)) is R_Log1_Exp(-m) (M. Maechler (2012), "Accurately computing
// log(1 - exp(-|a|))"), and eta - m / 2 for eta < -20 (the series log((1 - e^-m) / m) =
// -m/2 + m^2/24 - ..., so that log p stays finite where m underflows); a / (1 - p) = m exactly,
// and a / p = m / expm1(m) (its limit 1 at m = 0, and exp(eta - m) once expm1 would overflow),
// so the ratios stay finite where p or 1 - p underflows.
//
// Table o[] per observation (cl/nmath/f2f3_binomial_counts.cl, once per data set): alpha,
// -log choose(n, s), s, n - s, wt y, wt (1 - y).

#define F2F3_NOBS 6

static inline void f2f3_prepare(const double y, double wt, const double alpha, double *o)
{
    f2f3_binomial_counts(y, wt, alpha, o);
}

static inline void f2f3_term(const double eta, const double *o, double *l, double *g)
{
    const double m = exp(eta);
    const double lp = (eta < -20.0) ? eta - 0.5 * m : R_Log1_Exp(-m);      // log p
    const double ap = (m == 0.0) ? 1.0 : (m < 700.0) ? m / expm1(m) : exp(eta - m);
    *l = o[1] - f2f3_mul0(o[2], lp) + f2f3_mul0(o[3], m);
    *g = f2f3_mul0(o[5], m) - f2f3_mul0(o[4], ap);
}
