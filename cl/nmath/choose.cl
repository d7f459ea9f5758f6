// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: choose, lchoose
// @depends: choose_best, lbeta, lgammafn, rmath_utils
// @source: binomial coefficients for real n and integer k (k is rounded), as R defines them:
//          choose(n, k) = n (n-1) ... (n-k+1) / k!.  Small k (< 30) by that product (rounded
//          when n is an integer); larger k through log B: choose(n, k) = 1 / ((n+1) B(n-k+1,
//          k+1)), or through log-gamma with its sign when n < k - 1 is not an integer.
//          Negative n use choose(n, k) = (-1)^k choose(k - 1 - n, k) (Graham, Knuth &
//          Patashnik, Concrete Mathematics, (5.14)) and integer n the symmetry
//          choose(n, k) = choose(n, n - k).  R applies both by calling itself; here they are
//          applied in place (each at most once), so there is no recursion.
//
// Built with DASKCL_ACCURACY_BEST (config key accuracy = "best"), finite n go to choose_best.cl.

#define CHOOSE_K_SMALL 30

static inline double lfastchoose(double n, double k)
{
    return -log(n + 1.) - lbeta(n - k + 1., k + 1.);
}

// log|choose(n, k)| and its sign, for n < k - 1 (gamma(n - k + 1) may be negative)
static inline double lfastchoose2(double n, double k, int *s)
{
    double r = lgammafn_sign(n - k + 1., s);
    return lgammafn(n + 1.) - lgammafn(k + 1.) - r;
}

double lchoose(double n, double k)
{
#ifdef DASKCL_ACCURACY_BEST
    if (isfinite(n))
        return lchoose_best(n, k);
#endif
    k = R_forceint(k);
    if (isnan(n) || isnan(k))
        return n + k;
    if (k < 2) {
        if (k < 0)
            return ML_NEGINF;
        if (k == 0)
            return 0.;
        return log(fabs(n)); // k == 1
    }
    // k >= 2
    if (n < 0)
        n = -n + k - 1; // |choose(n, k)| = choose(k - 1 - n, k)
    if (R_IS_INT(n)) {
        n = R_forceint(n);
        if (n < k)
            return ML_NEGINF;
        if (n - k < 2) { // symmetry: choose(n, n - k) with n - k in {0, 1}
            return (n - k == 0) ? 0. : log(fabs(n));
        }
        return lfastchoose(n, k);
    }
    // non-integer n >= 0
    if (n < k - 1) {
        int s;
        return lfastchoose2(n, k, &s);
    }
    return lfastchoose(n, k);
}

double choose(double n, double k)
{
#ifdef DASKCL_ACCURACY_BEST
    if (isfinite(n))
        return choose_best(n, k);
#endif
    k = R_forceint(k);
    if (isnan(n) || isnan(k))
        return n + k;
    double sgn = 1.;
    if (k >= CHOOSE_K_SMALL) {
        if (n < 0) {
            n = -n + k - 1; // choose(n, k) = (-1)^k choose(k - 1 - n, k)
            if (k != 2 * floor(k / 2.))
                sgn = -1.;
        }
        if (R_IS_INT(n)) {
            n = R_forceint(n);
            if (n < k)
                return sgn * 0.;
            if (!(n - k < CHOOSE_K_SMALL)) // (n = k = Inf gives NaN here, as in R)
                return sgn * R_forceint(exp(lfastchoose(n, k)));
            k = n - k; // symmetry, then the product below
        } else if (n < k - 1) {
            int s;
            double r = lfastchoose2(n, k, &s);
            return sgn * (s * exp(r));
        } else {
            return sgn * exp(lfastchoose(n, k));
        }
    } else if (n - k < k && n >= 0 && R_IS_INT(n)) {
        k = R_forceint(n - k); // symmetry
    }
    // k < CHOOSE_K_SMALL: the product n (n-1) ... (n-k+1) / k!
    if (k < 0)
        return sgn * 0.;
    if (k == 0)
        return sgn * 1.;
    double r = n;
    for (int j = 2; j <= (int)k; j++)
        r *= (n - j + 1) / j;
    return sgn * (R_IS_INT(n) ? R_forceint(r) : r);
}

#undef CHOOSE_K_SMALL
