// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnbeta, dnbeta_c
// @depends: dbeta, dpois, ddouble, dpq, rmath_constants, rmath_utils
// @source: the noncentral beta density as a Poisson mixture of beta densities (Johnson, Kotz &
//          Balakrishnan, Continuous Univariate Distributions 2, 30.2),
//              f(x; a, b, ncp) = sum_k dpois(k, ncp/2) dbeta(x; a + k, b),
//          summed from its largest term (k = ceil of the positive root of a quadratic in k,
//          C. Loader's / R's arrangement) outwards in both directions until the terms fall below
//          1e-15 of the sum, the sum scaled by the largest term (so that nothing underflows);
//          for a largest term beyond R's int index (kMax > INT_MAX), Laplace's method.
//
// dnbeta(x, a, b, ncp): NaN for ncp < 0, a <= 0, b <= 0 or non-finite a, b, ncp; 0 outside
// [0, 1]; dbeta for ncp = 0.  The sum is accumulated in double-double (R: long double).
// dnbeta_c(x, x1, ...): the same with 1 - x given as x1 (each beta density by dbeta_c), for
// x so near 1 that 1 - x has lost its digits to the rounding of x (dnf).

static double dnbeta_x(double x, double x1, int has_x1, double a, double b, double ncp,
                       int give_log)
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
        return has_x1 ? dbeta_c(x, x1, a, b, give_log) : dbeta(x, a, b, give_log);

    // the largest term: k = d + sqrt(d^2 + c), the positive root of k^2 - 2 d k - c
    double ncp2 = 0.5 * ncp, dx2 = ncp2 * x;
    double d = (dx2 - a - 1) / 2;
    double c = dx2 * (a + b) - a;
    double D = d * d + c;
    double kMax;
    if (!isfinite(D)) {
        // d^2 or c overflowed (shapes beyond ~1e154): the same root with d and sqrt(c) scaled
        // by S = 2^e ~ max(|d|, sqrt(dx2 (a + b))), exactly (the root was 0 here, far left of
        // the largest term, and the sum from there outgrew the double range: NaN)
        double h = 0.5 * a + 0.5 * b;   // (a + b) / 2
        int e = ilogb(fmax(fabs(d), sqrt(dx2) * sqrt(h)));
        d = ldexp(d, -e);
        c = 2 * ldexp(dx2 * ldexp(h, -e), -e) - ldexp(ldexp(a, -e), -e);
        D = d * d + c;
        kMax = (D <= 0) ? 0. : ldexp((d >= 0) ? d + sqrt(D) : c / (sqrt(D) - d), e);
    } else if (D <= 0) {
        kMax = 0.;
    } else {
        // for d < 0 the root as c / (sqrt(..) - d), the same number without the cancellation
        // that gave 0 for a ~ 1e109 (the sum then started far left of its largest term, grew
        // past the double range and gave NaN, where R's long double holds it)
        double s = sqrt(D);
        kMax = (d >= 0) ? d + s : c / (s - d);
    }
    kMax = (kMax > 0) ? ceil(kMax) : 0.;
    double lterm = has_x1 ? dbeta_c(x, x1, a + kMax, b, 1) : dbeta(x, a + kMax, b, 1);
    double lpk = dpois_raw(kMax, ncp2, 1);
    if (x == 0. || !isfinite(lterm) || !isfinite(lpk))
        return R_D_exp(lpk + lterm);   // (double-double arithmetic would give NaN for Inf)
    if (kMax > INT_MAX) {
        // beyond R's int index (a huge shape2, or ncp > ~4e9; the sum from a largest term cut
        // to INT_MAX outgrew the double range: NaN), and beyond ~6 sqrt(kMax) = 3e5 terms on
        // either side: Laplace's method (N. G. de Bruijn, Asymptotic Methods in Analysis, 1958,
        // ch. 3).  log term(k) is concave with curvature kappa = -d/dk log(term(k+1) / term(k))
        // = 1/(k + 1) + 1/(k + a) - 1/(k + a + b), and the sum is term(kMax) sqrt(2 pi / kappa)
        // to a relative O(1 / kMax) (3e-11 at kMax = 2^31, where the ratios of the sum, in
        // double, have drifted by 1e-11)
        double kappa = 1 / (kMax + 1) + (1 / (kMax + a) - 1 / (kMax + a + b));
        return R_D_exp(lpk + lterm + (M_LN_SQRT_2PI - 0.5 * log(kappa)));
    }
    // log of the largest term, used to rescale at the end; the sum is relative to it
    dd_t p_k = dd_add_d(dd_d(lpk), lterm);
    dd_t sum = dd_d(1.), term = dd_d(1.);
    double k = kMax;
    while (k > 0 && term.hi > sum.hi * eps) {   // from the middle to the left
        k--;
        // (k + a) / dx2 first: for a subnormal shape1 and x, (k + a) / (k + a + b) at k = 0
        // underflowed (a / 2 = 2.5e-324 rounds to 0), losing the k = 0 term (33% of
        // dnbeta(5e-324, 5e-324, 2, 2) = 1.1036; found by a random search against libRmath).
        // It stays finite: the loop runs only below kMax, and kMax >= 1 needs
        // dx2 (a + b) > a, so a / dx2 < a + b and (k + a) / dx2 <= kMax / dx2 ~ a + b
        double q = (k + a) / dx2 * (k + 1) / (k + a + b);
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

double dnbeta(double x, double a, double b, double ncp, int give_log)
{
    return dnbeta_x(x, 0., 0, a, b, ncp, give_log);
}

double dnbeta_c(double x, double x1, double a, double b, double ncp, int give_log)
{
    return dnbeta_x(x, x1, 1, a, b, ncp, give_log);
}
