// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the poisson family, log link (quasipoisson too).
// @depends_nmath: dpois_raw, f2f3_mul
//
// With m = exp(eta):   l(eta) = wt [m - y log m + lgamma(y + 1)],   g(eta) = wt (m - y).
//
// y need not be an integer (quasipoisson).  For y > 0 the value is split at the mode
// eta0 = log y, t = eta - eta0:
//
//   l = wt (y - y log y + lgamma(y + 1)) + wt y (expm1(t) - t),     g = wt y expm1(t),
//
// the first term being -wt log dpois(y; y), computed once per observation by f2f3_prepare with
// the library's dpois_raw (C. Loader (2000): Stirling's error and no cancellation), the second
// vanishing to second order at the mode without cancellation beyond a few ulp of wt y |t|, and
// g free of the cancellation of wt m - wt y.  For y = 0, l = wt m and g = wt m (t = eta).
// y < 0 is outside the support: +Inf, as -log of R's dpois.  wt < 0 gives NaN.
//
// Table o[] per observation: alpha, eta0, a, b, K, c, e with E = expm1(t) (e = 1, y > 0) or
// exp(t) (e = 0, y <= 0), l = K + a E - b t and g = a E + c: for y > 0 a = b = wt y, c = 0;
// for y <= 0 a = wt, b = wt y, c = -wt y.

#define F2F3_NOBS 7

static inline void f2f3_prepare(const double y, double wt, const double alpha, double *o)
{
    if (wt < 0)
        wt = ML_NAN;
    double eta0 = 0.0, a = wt, b = wt * y, c = -b, e = 0.0, k;
    if (isnan(y) || isnan(wt)) {
        k = y + wt;
    } else if (y > 0) {
        eta0 = log(y);
        a = b;
        c = 0.0;
        e = 1.0;
        k = (wt == 0.0) ? 0.0 : -wt * dpois_raw(y, y, 1);
    } else {
        k = (y < 0) ? ML_POSINF : 0.0;      // y = 0: l = wt exp(eta)
    }
    o[0] = alpha;
    o[1] = eta0;
    o[2] = a;
    o[3] = b;
    o[4] = k;
    o[5] = c;
    o[6] = e;
}

static inline void f2f3_term(const double eta, const double *o, double *l, double *g)
{
    const double t = eta - o[1];
    const double E = (o[6] != 0.0) ? expm1(t) : exp(t);
    double am = f2f3_mul0(o[2], E);
    // t = eta - log y exceeds eta for y < 1, and a tiny wt scales the term down: e^t overflowed
    // where wt y e^t is finite (qf was +Inf at y = 0.5, eta = 709.5)
    if (isinf(E) && isfinite(t) && o[2] != 0.0)
        am = f2f3_mul_big_exp(o[2], t);
    *l = (o[4] + am) - f2f3_mul0(o[3], t);
    *g = am + o[5];
}
