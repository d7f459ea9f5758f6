// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnbeta
// @depends: dbeta, dpois, ddouble, dpq, rmath_utils
// @source: the noncentral beta density as a Poisson mixture of beta densities (Johnson, Kotz &
//          Balakrishnan, Continuous Univariate Distributions 2, 30.2),
//              f(x; a, b, ncp) = sum_k dpois(k, ncp/2) dbeta(x; a + k, b),
//          summed from its largest term (k = ceil of the positive root of a quadratic in k,
//          C. Loader's / R's arrangement) outwards in both directions until the terms fall below
//          1e-15 of the sum, the sum scaled by the largest term (so that nothing underflows).
//
// dnbeta(x, a, b, ncp): NaN for ncp < 0, a <= 0, b <= 0 or non-finite a, b, ncp; 0 outside
// [0, 1]; dbeta for ncp = 0.  The sum is accumulated in double-double (R: long double).

double dnbeta(double x, double a, double b, double ncp, int give_log)
{
    const double eps = 1.e-15;
    if (isnan(x) || isnan(a) || isnan(b) || isnan(ncp))
        return x + a + b + ncp;
    if (ncp < 0 || a <= 0 || b <= 0)
        ML_WARN_return_NAN;
    if (!isfinite(a) || !isfinite(b) || !isfinite(ncp))
        ML_WARN_return_NAN;
    if (x < 0 || x > 1)
        return R_D__0;
    if (ncp == 0)
        return dbeta(x, a, b, give_log);

    // the largest term
    double ncp2 = 0.5 * ncp, dx2 = ncp2 * x;
    double d = (dx2 - a - 1) / 2;
    double c = dx2 * (a + b) - a;
    double D = d * d + c;
    int kMax;
    if (D <= 0) {
        kMax = 0;
    } else {
        // the root d + sqrt(d^2 + c), c = dx2 (a + b) - a; for d < 0 as c / (sqrt(..) - d),
        // the same number without the cancellation that gave 0 for a ~ 1e109 (the sum then
        // started far left of its largest term, grew past the double range and gave NaN,
        // where R's long double holds it)
        double s = sqrt(D);
        D = ceil(d >= 0 ? d + s : c / (s - d));
        kMax = (D > 0) ? (D < INT_MAX ? (int)D : INT_MAX) : 0;
    }
    double lterm = dbeta(x, a + kMax, b, 1);
    double lpk = dpois_raw(kMax, ncp2, 1);
    if (x == 0. || !isfinite(lterm) || !isfinite(lpk))
        return R_D_exp(lpk + lterm);   // (double-double arithmetic would give NaN for Inf)
    // log of the largest term, used to rescale at the end; the sum is relative to it
    dd_t p_k = dd_add_d(dd_d(lpk), lterm);
    dd_t sum = dd_d(1.), term = dd_d(1.);
    double k = kMax;
    while (k > 0 && term.hi > sum.hi * eps) {   // from the middle to the left
        k--;
        double q = (k + 1) * (k + a) / (k + a + b) / dx2;
        term = dd_mul_d(term, q);
        sum = dd_add(sum, term);
    }
    term = dd_d(1.);
    k = kMax;
    do {   // from the middle to the right
        double q = dx2 * (k + a + b) / (k + a) / (k + 1);
        k++;
        term = dd_mul_d(term, q);
        sum = dd_add(sum, term);
    } while (term.hi > sum.hi * eps);
    double lsum = dd_log(sum);
    return R_D_exp(dd_hi(dd_add_d(p_k, lsum)));
}
