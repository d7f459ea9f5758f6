// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the Gamma family, log link.
// @depends_nmath: dgamma, f2f3_mul
//
// With m = exp(eta):   l(eta) = -log dgamma(y; shape = wt, scale = m / wt),   g = wt (1 - y / m).
//
// For y > 0, wt > 0 the value is split at the mode eta0 = log y, t = eta - eta0:
//
//   l = -log dgamma(y; wt, y / wt) + wt (t + expm1(-t)),     g = -wt expm1(-t),
//
// the first term computed once per observation by f2f3_prepare with the library's dgamma
// (C. Loader (2000): the saddle point form through dpois_raw), the second vanishing to second
// order at the mode, g free of the cancellation of 1 - y / m, and neither overflowing for any
// finite eta.  R's dgamma cases at the edges of the support give the rest: y < 0 has density 0
// (+Inf); y = 0 has density +Inf, 0 or 1 / scale for wt < 1, wt > 1, wt = 1 (l = -Inf, +Inf,
// eta); wt = 0 is the point mass at 0 (l = -Inf at y = 0, +Inf elsewhere); wt < 0 is NaN.
//
// Table o[] per observation: alpha, eta0, wt, a, K with l = K + wt t + a expm1(-t) and
// g = (wt - a) - a expm1(-t); an infinite K is the value whatever eta.

#define F2F3_NOBS 5

static inline void f2f3_prepare(const double y, double wt, const double alpha, double *o)
{
    if (wt < 0)
        wt = ML_NAN;
    double eta0 = 0.0, a = 0.0, k;
    if (isnan(y) || isnan(wt)) {
        k = a = y + wt;
    } else if (y < 0) {
        k = ML_POSINF;
        a = wt * y;                          // g = wt (1 - y e^-eta)
    } else if (wt == 0.0) {
        k = (y == 0.0) ? ML_NEGINF : ML_POSINF;
    } else if (y == 0.0) {
        k = (wt < 1.0) ? ML_NEGINF : (wt > 1.0) ? ML_POSINF : 0.0;
    } else {
        eta0 = log(y);
        a = wt;
        k = -dgamma(y, wt, y / wt, 1);
    }
    o[0] = alpha;
    o[1] = eta0;
    o[2] = wt;
    o[3] = a;
    o[4] = k;
}

static inline void f2f3_term(const double eta, const double *o, double *l, double *g)
{
    const double t = eta - o[1];
    const double E = expm1(-t);
    double am = f2f3_mul0(o[3], E);
    // a tiny wt scales the term down: e^-t overflowed where wt e^-t is finite (qf was +Inf at
    // y = 2, wt = 1e-300, eta = -710)
    if (isinf(E) && isfinite(t) && o[3] != 0.0)
        am = f2f3_mul_big_exp(o[3], -t);
    *l = isinf(o[4]) ? o[4] : fma(o[2], t, o[4]) + am;
    *g = (o[2] - o[3]) - am;
}
