// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: choose_best, lchoose_best
// @depends: lgammafn, lgammacor, log1pmx, cospi, ddouble, rmath_constants, rmath_utils
// @source: choose(n, k) = gamma(n+1) / (gamma(k+1) gamma(n-k+1)) for real n (k rounded), with
//          the ratio of two gamma functions of large arguments z and z + s from Stirling's
//          series: log gamma(z + s) - log gamma(z) = s log z + z log1pmx(s / z)
//          + (s - 1/2) log1p(s / z) + lgammacor(z + s) - lgammacor(z) (Abramowitz & Stegun
//          6.1.40-41; the remainder lgammacor as in W. Fullerton, SLATEC D9LGMC), so that no two
//          large logarithms cancel; s log z in double-double (log z = e log 2 + log m), and the
//          sum exponentiated as exp(hi) (1 + lo).  For n < k - 1 not an integer the reflection
//          gamma(x) gamma(1 - x) = pi / sin(pi x) (A&S 6.1.17) and for n < 0
//          choose(n, k) = (-1)^k choose(k - 1 - n, k) (Graham, Knuth & Patashnik, Concrete
//          Mathematics, (5.14)), both written so that no argument is rounded (k - 1 - n is
//          never formed).  k < 30 by the product n (n-1) ... (n-k+1) / k!, as choose.cl.
//
// The `best` accuracy mode's choose and lchoose for finite n (choose.cl calls them under
// DASKCL_ACCURACY_BEST): about 1e-15 relative where R's log-gamma differences lose up to 1e-8.
// n is an integer only when it is one exactly (R: within 1e-7 relative, and rounds it).

#define CB_K_SMALL 30

// log(x) in double-double for x > 0: x = m 2^e, m in [sqrt(1/2), sqrt(2)), e log 2 with log 2
// in double-double; the error is that of log(m), |log m| <= log(2) / 2
static inline dd_t cb_log_dd(double x)
{
    const dd_t ln2 = { 0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56 };
    int e;
    double m = frexp(x, &e);
    if (m < M_SQRT1_2) {
        m *= 2.;
        e -= 1;
    }
    return dd_add_d(dd_mul_d(ln2, (double)e), log(m));
}

// log gamma(z + s) - log gamma(z), z >= 11, -z / 2 <= s <= z (Stirling's series, above)
static inline dd_t cb_lgamma_ratio(double z, double s)
{
    double q = s / z;
    dd_t r = dd_mul_d(cb_log_dd(z), s);
    r = dd_add_d(r, z * log1pmx(q));
    r = dd_add_d(r, (s - .5) * log1p(q));
    return dd_add_d(r, lgammacor(z + s) - lgammacor(z));
}

// log gamma(x) for x > 0: Stirling's series in double-double from 10 on
static inline dd_t cb_lgamma(double x)
{
    const dd_t ln_sqrt_2pi = { 0x1.d67f1c864beb5p-1, -0x1.65b5a1b7ff5dfp-55 };
    if (x < 10.)
        return dd_d(lgammafn(x));
    dd_t r = dd_mul_d(cb_log_dd(x), x - .5);
    r = dd_add_d(r, -x);
    r = dd_add(r, ln_sqrt_2pi);
    return dd_add_d(r, lgammacor(x));
}

// log gamma(k + c + 1) - log gamma(k + 1) - log gamma(c + 1), c > -1, k >= 0 (so
// log choose(k + c, k)): the larger of k, c is the base z of the ratio
static inline dd_t cb_lchoose_pos(double k, double c)
{
    double z = fmax2(k, c) + 1., s = fmin2(k, c);
    if (z < 11.)
        return dd_d(lgammafn(k + c + 1.) - lgammafn(k + 1.) - lgammafn(c + 1.));
    return dd_sub(cb_lgamma_ratio(z, s), cb_lgamma(s + 1.));
}

// log|choose(n, k)| (double-double) and its sign, k >= 1 an integer, choose(n, k) != 0 unless
// *sgn is 0
static dd_t cb_lchoose(double n, double k, int *sgn)
{
    int odd = k != 2. * floor(k / 2.);
    if (n >= k - 1.) {          // n - k + 1 >= 0 (0 only for an integer n: zero, said before)
        *sgn = 1;
        return cb_lchoose_pos(k, n - k);
    }
    if (n <= -1.) {             // (-1)^k choose(k - 1 - n, k) = (-1)^k choose(k + c, k)
        *sgn = odd ? -1 : 1;
        return cb_lchoose_pos(k, -n - 1.);
    }
    // -1 < n < k - 1: 1 / gamma(n - k + 1) = sin(pi (n - k + 1)) gamma(k - n) / pi, and
    // sin(pi (n - k + 1)) = (-1)^(k+1) sin(pi n); gamma(n + 1) gamma(k - n) / gamma(k + 1) with
    // the larger of n + 1, k - n (>= (k + 1) / 2) as the ratio's z + s, z = k + 1
    double sp = R_sinpi(n);
    if (sp == 0.) {
        *sgn = 0;
        return dd_d(ML_NEGINF);
    }
    *sgn = ((sp > 0.) != odd) ? -1 : 1;
    double small = (n + 1. <= k - n) ? n + 1. : k - n;   // exact: k - n only for n >= k / 2 - 1
    dd_t r = dd_add(cb_lgamma_ratio(k + 1., -small), cb_lgamma(small));
    return dd_add_d(r, log(fabs(sp)) - 2. * M_LN_SQRT_PI);
}

// the product n (n-1) ... (n-k+1) / k! for 0 <= k < CB_K_SMALL
static inline double cb_product(double n, double k)
{
    if (k < 0)
        return 0.;
    if (k == 0)
        return 1.;
    double r = n;
    for (int j = 2; j <= (int)k; j++)
        r *= (n - j + 1) / j;
    return (n == floor(n)) ? R_forceint(r) : r;
}

double choose_best(double n, double k)
{
    k = R_forceint(k);
    if (isnan(n) || isnan(k))
        return n + k;
    if (k < 0)
        return 0.;
    int isint = (n == floor(n));   // exactly (R: within 1e-7 relative)
    if (isint) {
        n = R_forceint(n);
        if (n >= 0 && n < k)
            return 0.;
        if (n >= 0 && n - k < k)
            k = n - k;          // symmetry
    }
    if (k < CB_K_SMALL)
        return cb_product(n, k);
    int s;
    dd_t l = cb_lchoose(n, k, &s);
    if (s == 0)
        return 0.;
    double r = s * (exp(l.hi) * (1. + l.lo));
    return (isint && fabs(r) < 0x1p53) ? R_forceint(r) : r;
}

double lchoose_best(double n, double k)
{
    k = R_forceint(k);
    if (isnan(n) || isnan(k))
        return n + k;
    if (k < 2) {
        if (k < 0)
            return ML_NEGINF;
        if (k == 0)
            return 0.;
        return log(fabs(n));
    }
    if (n == floor(n)) {
        if (n >= 0 && n < k)
            return ML_NEGINF;
        if (n >= 0 && n - k < k)
            k = n - k;
        if (k < 2)
            return (k == 0) ? 0. : log(fabs(n));
    }
    int s;
    return dd_hi(cb_lchoose(n, k, &s));
}

#undef CB_K_SMALL
