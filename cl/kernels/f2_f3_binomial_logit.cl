// SPDX-License-Identifier: GPL-2.0-or-later
// f2_f3 term of the binomial family, logit link (quasibinomial too).
// @depends_nmath: dbinom_raw
//
// Observation i has n = round(wt), s = round(y wt) (the counts of the objective) and the
// unrounded y, wt of the gradient.  With p = 1 / (1 + exp(-eta)):
//
//   l(eta) = -log dbinom(s; n, p),        g(eta) = wt (p - y).
//
// Evaluated in Loader's saddle-point form (C. Loader (2000), "Fast and accurate computation of
// binomial probabilities"), split into a part independent of eta and a deviance:
//
//   -log dbinom(s; n, p) = -log dbinom(s; n, p0) + D,   p0 = s / n,
//   D = s log(p0 / p) + (n - s) log(q0 / q) >= 0.
//
// The first term is computed once per observation by f2f3_prepare with the library's
// dbinom_raw at p = p0 (where Loader's bd0 terms vanish).  D is computed from eta in logit
// coordinates without forming p: with t = eta - logit(p0), tau = -|t| and c = p0 (t <= 0) or
// q0 (t > 0),
//
//   D = n (log1p(c expm1(tau)) - c tau),   p - p0 = sign(-t) p0 q0 expm1(tau) / (1 + c expm1(tau)),
//
// both free of overflow for any eta, D accurate to a few ulp of n p0 |t| (it vanishes to
// second order at the mode, where a naive n log(1 + e^eta) - s eta + ... loses n ulp), and
// p - p0 free of cancellation.  For s = 0 (s = n) D = n log(1 + e^{+eta}) (e^{-eta}), through
// e = exp(-|eta|).  The branch depends only on the observation, so every work-item of a
// work-group takes the same one.  No clamping of p is needed: it is never formed.
//
// log1p(v) (v = c expm1(tau) in (-1, 0], or e in (0, 1]) is evaluated as log(w) + (v - (w - 1)) / w
// with w = 1 + v rounded: v - (w - 1) is that rounding error, exactly (Sterbenz's lemma and
// Dekker's Fast2Sum, |v| <= 1), and the first-order correction restores log1p's accuracy
// (D. Goldberg (1991), "What every computer scientist should know about floating-point
// arithmetic", sec. 4.1).  The reciprocal 1 / w is the one p - p0 needs anyway, so log1p costs
// a log and two operations; on an H200 the whole term is about 20% faster than with log1p.
//
// Table o[] per observation (f2f3_prepare): alpha, logit(p0), p0, q0, n, -log dbinom(s; n, p0),
// wt, wt (p0 - y).  s outside [0, n] (y outside [0, 1]) has -log dbinom = +Inf, as R's dbinom
// gives; wt < 0 gives NaN (R: a negative size is NaN).

#define F2F3_NOBS 8

static inline void f2f3_prepare(const double y, double wt, const double alpha, double *o)
{
    if (wt < 0)
        wt = ML_NAN;
    const double n = rint(wt), s = rint(y * wt);
    double p0 = 0.0, q0 = 1.0, eta0 = 0.0, negc = 0.0;
    if (isnan(n) || isnan(s)) {
        p0 = q0 = eta0 = negc = n + s;
    } else if (s < 0 || s > n) {
        negc = ML_POSINF;             // dbinom = 0; D computed as for s = 0 with n = 0
    } else if (s == n && s > 0) {
        p0 = 1.0;
        q0 = 0.0;
    } else if (s > 0) {
        p0 = s / n;
        q0 = (n - s) / n;
        eta0 = log(s / (n - s));
        negc = -dbinom_raw(s, n, p0, q0, 1);
    }
    o[0] = alpha;
    o[1] = eta0;
    o[2] = p0;
    o[3] = q0;
    o[4] = (s < 0 || s > n) ? 0.0 : n;
    o[5] = negc;
    o[6] = wt;
    o[7] = wt * p0 - wt * y;
}

// log1p(v) for -1 < v <= 1, given w = 1 + v (rounded) and r = 1 / w
static inline double f2f3_log1p_w(const double v, const double w, const double r)
{
    return fma(v - (w - 1.0), r, log(w));
}

static inline void f2f3_term(const double eta, const double *o, double *l, double *g)
{
    const double p0 = o[2], q0 = o[3], n = o[4], negc = o[5], wt = o[6], gc = o[7];
    if (p0 == 0.0 || q0 == 0.0) {
        // s = 0: D = n log(1 + e^eta), p - p0 = p;  s = n: D = n log(1 + e^-eta), p - p0 = -q
        const double z = (p0 == 0.0) ? eta : -eta;
        const double e = exp(-fabs(z));
        const double w = 1.0 + e, r = 1.0 / w;
        const double sp = fmax(z, 0.0) + f2f3_log1p_w(e, w, r);    // log(1 + e^z)
        const double sig = (z >= 0.0) ? r : e * r;         // 1 / (1 + e^-z)
        *l = (n == 0.0) ? negc : fma(n, sp, negc);
        *g = fma(wt, (p0 == 0.0) ? sig : -sig, gc);
    } else {
        const double t = eta - o[1];
        const double tau = -fabs(t);
        const double c = (t <= 0.0) ? p0 : q0;
        const double em = expm1(tau);
        const double u = c * em;
        const double w = 1.0 + u, r = 1.0 / w;
        *l = fma(n, f2f3_log1p_w(u, w, r) - c * tau, negc);
        const double dp = p0 * q0 * em * r;
        *g = fma(wt, (t <= 0.0) ? dp : -dp, gc);
    }
}
