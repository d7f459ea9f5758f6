// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pgamma_raw, pgamma, pgamma_raw_class, pgamma_class
// @depends: dpois, bd0_best, ddouble, lgammafn, lgamma1p, log1pmx, dnorm, pnorm, dpq, rmath_constants, rmath_utils
// @source: M. Welinder (2004/2005), "pgamma: the regularised incomplete gamma function", the
//          algorithm R has used since 2.1 (R bug reports PR#7307): Abramowitz & Stegun 6.5.29
//          (series for small x), 6.5.31/Legendre's continued fraction and the Poisson-sum
//          series for the tails, and, for x near the shape, Temme's uniform asymptotic
//          expansion in the form of I. Smith's Poisson approximation (coefficients of
//          N. M. Temme (1987), "On the computation of the incomplete gamma functions for large
//          values of the parameters"); A&S 26.2.12 for the ratio dnorm/pnorm.
//
// pgamma_raw(x, alph, lower_tail, log_p) assumes alph > 0 and x not NaN.  It chooses
//   x < 1                                    series in x (pgamma_smallx)
//   x <= alph - 1 and x < 0.8 (alph + 50)    lower tail = dpois(alph - 1, x) * upper series
//   alph - 1 < x and alph < 0.8 (x + 50)     upper tail = dpois(alph - 1, x) * lower series
//                                            (continued fraction when alph < 1)
//   otherwise (x and alph both large, close) Temme's expansion (pgamma_ppois_asymp)
// and, when the natural-scale result falls below DBL_MIN / DBL_EPSILON, recomputes it on the
// log scale and exponentiates.  R does that by calling pgamma_raw from itself; here the core is
// a separate function (pgamma_raw_core), called at most twice, so there is no recursion.
// Built with DASKCL_ACCURACY_BEST, pgamma undoes the rounding of x / scale to first order
// (Taylor: the density times the remainder of the division, by fma): in the tails of a shape
// beyond 1e4 that ulp moves the result by 1e-13 relative; and the series for x < 1 takes
// alph log x in double-double (dd_log_full, bd0_best.cl), an ulp of which is 1e-14 for tiny x.

// |x| > |k| * PGAMMA_M_CUTOFF  ==>  log(exp(-x) k^x) ~= -x
#define PGAMMA_M_CUTOFF (M_LN2 * DBL_MAX_EXP / DBL_EPSILON)
// 2^256: rescaling of the continued fraction's convergents
#define PGAMMA_SCALE 1.157920892373162e+77
#define PGAMMA_MAX_IT 200000

// dpois(x_plus_1 - 1, lambda), for real x_plus_1 > 0
static inline double pgamma_dpois_wrap(double x_plus_1, double lambda, int give_log)
{
    if (!isfinite(lambda))
        return R_D__0;
    if (x_plus_1 > 1)
        return dpois_raw(x_plus_1 - 1, lambda, give_log);
    if (lambda > fabs(x_plus_1 - 1) * PGAMMA_M_CUTOFF)
        return R_D_exp(-lambda - lgammafn(x_plus_1));
    double d = dpois_raw(x_plus_1, lambda, give_log);
    return give_log ? d + log(x_plus_1 / lambda) : d * (x_plus_1 / lambda);
}

// A&S 6.5.29 for x < 1; the series terms are multiplied by alph and the leading 1 left out.
static inline NMATH_NOINLINE double pgamma_smallx(double x, double alph, int lower_tail, int log_p)
{
    double sum = 0, c = alph, n = 0, term;
    do {
        n++;
        c *= -x / n;
        term = c / (alph + n);
        sum += term;
    } while (fabs(term) > DBL_EPSILON * fabs(sum));

    if (lower_tail) {
        double f1 = log_p ? log1p(sum) : 1 + sum;
        double f2;
        if (alph > 1) {
            f2 = dpois_raw(alph, x, log_p);
            f2 = log_p ? f2 + x : f2 * exp(x);
        } else {
#ifdef DASKCL_ACCURACY_BEST
            // x^alph / gamma(alph + 1) with alph log x in double-double (dd_log_full)
            const dd_t l = dd_add_d(dd_mul_d(dd_log_full(dd_d(x)), alph), -lgamma1p(alph));
            f2 = log_p ? l.hi + l.lo : exp(l.hi) * exp(l.lo);
#else
            f2 = alph * log(x) - lgamma1p(alph);
            f2 = log_p ? f2 : exp(f2);
#endif
        }
        return log_p ? f1 + f2 : f1 * f2;
    }
    double lf2 = alph * log(x) - lgamma1p(alph);
#ifdef DASKCL_ACCURACY_BEST
    if (log_p) {
        // log(1 - P), P = exp(l) tiny, with l in double-double as above
        const dd_t l = dd_add_d(dd_add_d(dd_mul_d(dd_log_full(dd_d(x)), alph), -lgamma1p(alph)),
                                log1p(sum));
        return (l.hi < -M_LN2) ? log1p(-(exp(l.hi) * exp(l.lo))) : R_Log1_Exp(l.hi + l.lo);
    }
#else
    if (log_p)
        return R_Log1_Exp(log1p(sum) + lf2);
#endif
    double f2m1 = expm1(lf2);
    return -(sum + f2m1 + sum * f2m1);
}

// sum_{n>=1} x^n / (y (y+1) ... (y+n-1))
static inline NMATH_NOINLINE double pgamma_upper_series(double x, double y, int log_p)
{
    double term = x / y;
    double sum = term;
    do {
        y++;
        term *= x / y;
        sum += term;
    } while (term > sum * DBL_EPSILON);
    return log_p ? log(sum) : sum;
}

// The continued fraction of the scaled upper tail, ~ (y/d) (1 + (1-y)/d + ...)
static inline NMATH_NOINLINE double pgamma_lower_cf(double y, double d)
{
    if (y == 0)
        return 0;
    double f0 = y / d;
    if (fabs(y - 1) < fabs(d) * DBL_EPSILON) // includes y < d = Inf
        return f0;
    if (f0 > 1.)
        f0 = 1.;
    double c2 = y, c4 = d; // the original (y, d), not the rescaled ones
    double a1 = 0, b1 = 1, a2 = y, b2 = d;
    while (b2 > PGAMMA_SCALE) {
        a1 /= PGAMMA_SCALE;
        b1 /= PGAMMA_SCALE;
        a2 /= PGAMMA_SCALE;
        b2 /= PGAMMA_SCALE;
    }
    double i = 0, of = -1., f = 0.;
    while (i < PGAMMA_MAX_IT) {
        double c3;
        // two steps of the recurrence: c2 = y - i, c3 = i (y - i), c4 = d + 2 i
        i++;
        c2--;
        c3 = i * c2;
        c4 += 2;
        a1 = c4 * a2 + c3 * a1;
        b1 = c4 * b2 + c3 * b1;
        i++;
        c2--;
        c3 = i * c2;
        c4 += 2;
        a2 = c4 * a1 + c3 * a2;
        b2 = c4 * b1 + c3 * b2;
        if (b2 > PGAMMA_SCALE) {
            a1 /= PGAMMA_SCALE;
            b1 /= PGAMMA_SCALE;
            a2 /= PGAMMA_SCALE;
            b2 /= PGAMMA_SCALE;
        }
        if (b2 != 0) {
            f = a2 / b2;
            // relative convergence; "absolute" for very small f
            if (fabs(f - of) <= DBL_EPSILON * fmax2(f0, fabs(f)))
                return f;
            of = f;
        }
    }
    return f; // no convergence (not expected)
}

// sum_{n>=0} y (y-1) ... (y-n) / lambda^(n+1), completed by the continued fraction when y is
// not an integer (the terms would start to grow for y < -lambda)
static inline NMATH_NOINLINE double pgamma_lower_series(double lambda, double y)
{
    double term = 1, sum = 0;
    while (y >= 1 && term > sum * DBL_EPSILON) {
        term *= y / lambda;
        sum += term;
        y--;
    }
    if (y != floor(y))
        sum += term * pgamma_lower_cf(y, lambda + 1 - y);
    return sum;
}

// dnorm(x) / pnorm(x, lower_tail) with lp = pnorm(x, lower_tail, log) given (A&S 26.2.12
// for the far upper tail)
static inline double pgamma_dpnorm(double x, int lower_tail, double lp)
{
    if (x < 0) {
        x = -x;
        lower_tail = !lower_tail;
    }
    if (x > 10 && !lower_tail) {
        double term = 1 / x;
        double sum = term;
        double x2 = x * x;
        double i = 1;
        do {
            term *= -i / x2;
            sum += term;
            i += 2;
        } while (fabs(term) > DBL_EPSILON * sum);
        return 1 / sum;
    }
    double d = dnorm4(x, 0., 1., 0);
    return d / exp(lp);
}

// Temme's uniform asymptotic expansion, as an approximation of P(Poisson(lambda) <= x)
// (I. Smith; coefficients from Temme 1987)
__constant double pgamma_coefs_a[8] = {
    -1e99, // (1-indexed)
    2 / 3., -4 / 135., 8 / 2835., 16 / 8505., -8992 / 12629925., -334144 / 492567075.,
    698752 / 1477701225.};
__constant double pgamma_coefs_b[8] = {
    -1e99, // (1-indexed)
    1 / 12., 1 / 288., -139 / 51840., -571 / 2488320., 163879 / 209018880.,
    5246819 / 75246796800., -534703531 / 902961561600.};

static inline NMATH_NOINLINE double pgamma_ppois_asymp(double x, double lambda, int lower_tail, int log_p)
{
    double dfm = lambda - x;
    // lambda large: the distribution is concentrated about lambda, and the representation
    // error of x or lambda can make pt_ large
    double pt_ = -log1pmx(dfm / x);
    double s2pt = sqrt(2 * x * pt_);
    if (dfm < 0)
        s2pt = -s2pt;

    double res12 = 0;
    double res1_term = sqrt(x), res1_ig = res1_term;
    double res2_term = s2pt, res2_ig = res2_term;
    for (int i = 1; i < 8; i++) {
        res12 += res1_ig * pgamma_coefs_a[i];
        res12 += res2_ig * pgamma_coefs_b[i];
        res1_term *= pt_ / i;
        res2_term *= 2 * pt_ / (2 * i + 1);
        res1_ig = res1_ig / x + res1_term;
        res2_ig = res2_ig / x + res2_term;
    }
    double elfb = x, elfb_term = 1;
    for (int i = 1; i < 8; i++) {
        elfb += elfb_term * pgamma_coefs_b[i];
        elfb_term /= x;
    }
    if (!lower_tail)
        elfb = -elfb;
    double f = res12 / elfb;

    double np = pnorm5(s2pt, 0.0, 1.0, !lower_tail, log_p);
    if (log_p) {
        double n_d_over_p = pgamma_dpnorm(s2pt, !lower_tail, np);
        return np + log1p(f * n_d_over_p);
    }
    double nd = dnorm4(s2pt, 0., 1., log_p);
    return np + f * nd;
}

static inline NMATH_NOINLINE double pgamma_raw_core(double x, double alph, int lower_tail, int log_p)
{
    R_P_bounds_01(x, 0., ML_POSINF);

    if (x < 1)
        return pgamma_smallx(x, alph, lower_tail, log_p);

    if (x <= alph - 1 && x < 0.8 * (alph + 50)) {
        // large alph compared to x: the lower tail is the smaller one
        double sum = pgamma_upper_series(x, alph, log_p); // = x/alph + o(x/alph)
        double d = pgamma_dpois_wrap(alph, x, log_p);
        if (!lower_tail)
            return log_p ? R_Log1_Exp(d + sum) : 1 - d * sum;
        return log_p ? sum + d : sum * d;
    }

    if (alph - 1 < x && alph < 0.8 * (x + 50)) {
        // large x compared to alph: the upper tail is the smaller one
        double sum;
        double d = pgamma_dpois_wrap(alph, x, log_p);
        if (alph < 1) {
            if (x * DBL_EPSILON > 1 - alph) {
                sum = R_D__1;
            } else {
                double f = pgamma_lower_cf(alph, x - (alph - 1)) * x / alph;
                sum = log_p ? log(f) : f;
            }
        } else {
            sum = pgamma_lower_series(x, alph - 1); // = (alph-1)/x + o((alph-1)/x)
            sum = log_p ? log1p(sum) : 1 + sum;
        }
        if (!lower_tail)
            return log_p ? sum + d : sum * d;
        return log_p ? R_Log1_Exp(d + sum) : 1 - d * sum;
    }

    // x >= 1 and x fairly near alph
    return pgamma_ppois_asymp(alph - 1, x, !lower_tail, log_p);
}

NMATH_NOINLINE double pgamma_raw(double x, double alph, int lower_tail, int log_p)
{
    // underflow costs accuracy close to DBL_MIN: redo such results on the log scale.  A loop
    // rather than two calls, so that the core is inlined once (half the code on a GPU).
    for (int lg = log_p;; lg = 1) {
        const double res = pgamma_raw_core(x, alph, lower_tail, lg);
        if (lg && !log_p)
            return exp(res);
        if (log_p || !(res < DBL_MIN / DBL_EPSILON))
            return res;
    }
}

double pgamma(double x, double alph, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(alph) || isnan(scale))
        return x + alph + scale;
    if (alph < 0. || scale <= 0.)
        ML_WARN_return_NAN;
#ifdef DASKCL_ACCURACY_BEST
    const double x0 = x;
#endif
    x /= scale;
    if (isnan(x)) // e.g. x = scale = Inf
        return x;
    if (alph == 0.) // the limit: all mass at 0
        return (x <= 0) ? R_DT_0 : R_DT_1;
#ifdef DASKCL_ACCURACY_BEST
    // x / scale's rounding dx undone to first order: P(x + dx) = P(x) +- f(x) dx, f the density
    const double r = pgamma_raw(x, alph, lower_tail, log_p),
                 dx = isfinite(x) && x > 0. ? fma(-x, scale, x0) / scale : 0.;
    if (dx == 0. || !(log_p ? r > ML_NEGINF && r < 0. : r > 0. && r < 1.))
        return r;
    const double d = exp(pgamma_dpois_wrap(alph, x, 1) - (log_p ? r : log(r)))
                     * (lower_tail ? dx : -dx);
    return log_p ? r + d : r * (1. + d);
#else
    return pgamma_raw(x, alph, lower_tail, log_p);
#endif
}

// The method pgamma_raw_core takes (class functions: see pbeta.cl): 1 series in x, 2 upper
// series, 3 continued fraction, 4 lower series, 5 Temme's expansion; 0 invalid or trivial.
int pgamma_raw_class(double x, double alph)
{
    if (!(x > 0.0) || !isfinite(x) || !(alph > 0.0) || !isfinite(alph))
        return 0;
    if (x < 1)
        return 1;
    if (x <= alph - 1 && x < 0.8 * (alph + 50))
        return 2;
    if (alph - 1 < x && alph < 0.8 * (x + 50))
        return (alph < 1) ? 3 : 4;
    return 5;
}

int pgamma_class(double x, double alph, double scale, int lower_tail, int log_p)
{
    return (scale > 0.0) ? pgamma_raw_class(x / scale, alph) : 0;
}

#undef PGAMMA_M_CUTOFF
#undef PGAMMA_SCALE
#undef PGAMMA_MAX_IT
