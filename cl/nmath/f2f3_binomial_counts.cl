// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: f2f3_binomial_counts
// @depends: dbinom
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities" (the
//          library's dbinom_raw, at p0 = s / n, where the saddle point's deviance terms vanish).
//
// The observation table of the binomial family's probit and cloglog GLM kernels
// (cl/kernels/f2_f3_binomial_<link>.cl, F2F3_NOBS 6): with n = round(wt) and s = round(y wt),
//
//   o = alpha, -log choose(n, s), s, n - s, wt y, wt (1 - y),
//
// -log choose(n, s) = s log p0 + (n - s) log(1 - p0) - log dbinom(s; n, p0).  s outside [0, n]
// (y outside [0, 1]) gives +Inf, as R's dbinom (s and n - s then 0); wt < 0 gives NaN.

void f2f3_binomial_counts(const double y, double wt, const double alpha, double *o)
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
