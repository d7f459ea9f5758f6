// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the gaussian family, identity link.
// @depends_nmath:
//
//   l(eta) = 0.5 log(2 pi) - 0.5 log wt + 0.5 wt (y - eta)^2,     g(eta) = wt (eta - y),
//
// that is -log dnorm(y; eta, 1 / sqrt(wt)) (the dispersion is folded into wt).  It calls no
// Mathlib unit; the constant comes from the shims.  wt = 0 gives +Inf (the density of an
// infinite standard deviation is 0, as R's dnorm); wt < 0 gives NaN.
//
// Table o[] per observation: alpha, y, wt, 0.5 log(2 pi) - 0.5 log wt.

#define F2F3_NOBS 4

static inline void f2f3_prepare(const double y, double wt, const double alpha, double *o)
{
    if (wt < 0)
        wt = ML_NAN;
    o[0] = alpha;
    o[1] = y;
    o[2] = wt;
    o[3] = M_LN_SQRT_2PI - 0.5 * log(wt);
}

static inline void f2f3_term(const double eta, const double *o, double *l, double *g)
{
    const double r = eta - o[1];
    *l = o[3] + 0.5 * o[2] * (r * r);
    *g = o[2] * r;
}
