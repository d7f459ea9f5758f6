// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the binomial family, complementary log-log link (quasibinomial too).
// @depends_nmath: dbinom_raw
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
// -m/2 + m^2/24 - ..., so that log p stays finite where m underflows); a / (1 - p) = m exactly, and a / p = m / expm1(m) (its limit 1 at
// m = 0, and exp(eta - m) once expm1 would overflow), so the ratios stay finite where p or
// 1 - p underflows.  -log choose(n, s) is computed once per observation by f2f3_prepare from the
// library's dbinom_raw at p = s / n (Loader's saddle point).
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

static inline void f2f3_term(const double eta, const double *o, double *l, double *g)
{
    const double m = exp(eta);
    const double lp = (eta < -20.0) ? eta - 0.5 * m : R_Log1_Exp(-m);      // log p
    const double ap = (m == 0.0) ? 1.0 : (m < 700.0) ? m / expm1(m) : exp(eta - m);
    *l = o[1] - f2f3_mul0(o[2], lp) + f2f3_mul0(o[3], m);
    *g = f2f3_mul0(o[5], m) - f2f3_mul0(o[4], ap);
}
