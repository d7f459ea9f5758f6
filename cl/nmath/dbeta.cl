// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dbeta, dbeta_c
// @depends: dbinom, ddouble, lbeta, dpq
// @source: the beta density x^(a-1) (1-x)^(b-1) / B(a, b); for a, b > 2 through the binomial
//          mass (a + b - 1) dbinom(a - 1; a + b - 2, x), evaluated by Loader's saddle point
//          method (C. Loader (2000), "Fast and accurate computation of binomial
//          probabilities"), which keeps full relative accuracy for large shapes.  Limit
//          shapes (0 or Inf) are point masses (infinite density there), as in R.  Built with
//          DASKCL_ACCURACY_BEST, the mass takes its size a + b - 2 and 1 - x unrounded, as
//          double-doubles (dbinom_raw_dd).

// log((a + b - 1) dbinom(a - 1; a + b - 2, x)) for a, b > 2, q = 1 - x (exact in best mode)
static inline double dbeta_binom(double x, dd_t q, double a, double b)
{
#ifdef DASKCL_ACCURACY_BEST
    if (a + b < 1e300)
        return log(a + b - 1)
               + dbinom_raw_dd(a - 1, b - 1, dd_add_d(dd_d(a - 1), b - 1), dd_d(x), q, 1);
#endif
    return log(a + b - 1) + dbinom_raw(a - 1, a + b - 2, x, dd_hi(q), 1);
}

double dbeta(double x, double a, double b, int give_log)
{
    if (isnan(x) || isnan(a) || isnan(b))
        return x + a + b;
    if (a < 0 || b < 0)
        ML_WARN_return_NAN;
    if (x < 0 || x > 1)
        return R_D__0;

    if (a == 0 || b == 0 || !isfinite(a) || !isfinite(b)) {
        // limit cases: point masses
        if (a == 0 && b == 0) // 1/2 at 0 and at 1
            return (x == 0 || x == 1) ? ML_POSINF : R_D__0;
        if (a == 0 || b / a == ML_POSINF) // at 0
            return (x == 0) ? ML_POSINF : R_D__0;
        if (b == 0 || a / b == ML_POSINF) // at 1
            return (x == 1) ? ML_POSINF : R_D__0;
        // a = b = Inf: at 1/2
        return (x == 0.5) ? ML_POSINF : R_D__0;
    }

    if (x == 0) {
        if (a > 1)
            return R_D__0;
        if (a < 1)
            return ML_POSINF;
        return R_D_val(b); // a == 1
    }
    if (x == 1) {
        if (b > 1)
            return R_D__0;
        if (b < 1)
            return ML_POSINF;
        return R_D_val(a); // b == 1
    }

    double lval;
    if (a <= 2 || b <= 2)
        lval = (a - 1) * log(x) + (b - 1) * log1p(-x) - lbeta(a, b);
    else
        lval = dbeta_binom(x, dd_add_d(dd_d(1.), -x), a, b);
    return R_D_exp(lval);
}

// The density with 1 - x given, as x1, where x is so near 1 that 1 - x has lost digits to the
// rounding of x (dnf's y / (1 + y) for a large y: with x1 = 1 / (1 + y) its own rounding only).
// x^(a-1) is taken as exp((a - 1) log1p(-x1)), and the binomial mass gets q = x1.  Where x1 is
// 1/2 or more (1 - x is exact or accurate) and at the edges, dbeta's own value (R's bits).
double dbeta_c(double x, double x1, double a, double b, int give_log)
{
    if (!(x1 < 0.5) || !(x1 > 0) || !(x > 0.5) || isnan(a) || isnan(b) || !(a > 0)
        || !(b > 0) || !isfinite(a) || !isfinite(b))
        return dbeta(x, a, b, give_log);
    double lval;
    if (a <= 2 || b <= 2)
        lval = (a - 1) * log1p(-x1) + (b - 1) * log(x1) - lbeta(a, b);
    else
        lval = dbeta_binom(x, dd_d(x1), a, b);
    return R_D_exp(lval);
}
