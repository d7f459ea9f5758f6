// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dpois_raw, dpois_raw_dd, dpois
// @depends: stirlerr, bd0, bd0_best, ddouble, lgammafn, dpq, rmath_constants, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities":
//          the saddle point form  f(x; lambda) = exp(-stirlerr(x) - bd0(x, lambda)) / sqrt(2 pi x);
//          M. Welinder (2014), R bug report PR#15628 (bd0 as an unevaluated sum, ebd0).
//
// dpois_raw(x, lambda) is the Poisson mass for any real x >= 0 (gamma densities and pgamma use
// non-integer x): exp(-lambda) for x = 0 (and whenever x <= lambda DBL_MIN),
// lambda^x e^-lambda / x! through lgamma where lambda < x DBL_MIN (bd0 would overflow), and
// otherwise Loader's saddle point form with the deviance split as yh + yl (ebd0), so that the
// mass keeps full relative accuracy deep in the tails.  For x >= 2^1023 / pi, 2 pi x overflows:
// sqrt(2 pi x) is formed as sqrt(2 pi) sqrt(x) instead.
//
// Built with DASKCL_ACCURACY_BEST, dpois_raw for 0 < x, lambda < 1e300 is dpois_raw_dd: the
// deviance in double-double (bd0_dd, bd0_best.cl), so that exp(-bd0) keeps its digits for x
// and lambda beyond 1e4, where ebd0's parts (each as large as x) round by ulp(x); dgamma passes
// x / scale to it unrounded.
//
// dpois(x, lambda) checks the arguments: NaN for lambda < 0, mass 0 for x non-integer (R warns;
// daskcl counts these, see the function table), negative or infinite, then rounds x.

#define DPOIS_X_LRG 2.86111748575702815380240589208115399625e+307   // 2^1023 / pi

// R's algorithm; built with DASKCL_ACCURACY_BEST, dpois_raw below takes dpois_raw_dd instead
static double dpois_raw_r(double x, double lambda, int give_log)
{
    if (lambda == 0)
        return (x == 0) ? R_D__1 : R_D__0;
    if (!isfinite(lambda))
        return R_D__0;
    if (x < 0)
        return R_D__0;
    if (x <= lambda * DBL_MIN)
        return R_D_exp(-lambda);
    if (lambda < x * DBL_MIN) {
        if (!isfinite(x))
            return R_D__0;
        return R_D_exp(-lambda + x * log(lambda) - lgammafn(x + 1));
    }
    double yh, yl;
    ebd0(x, lambda, &yh, &yl);
    yl += stirlerr(x);
    int large = (x >= DPOIS_X_LRG);
    double r = large ? M_SQRT_2PI * sqrt(x) : M_2PI * x;   // sqrt(2 pi x), or its square
    if (give_log)
        return -yl - yh - (large ? log(r) : 0.5 * log(r));
    return exp(-yl) * exp(-yh) / (large ? r : sqrt(r));
}

#ifdef DASKCL_ACCURACY_BEST     // bd0_best.cl is in the program in that mode only
// the Poisson mass at x > 0 for lambda = lambda.hi + lambda.lo > 0 (both below 1e300) with
// the deviance in double-double
double dpois_raw_dd(double x, dd_t lambda, int give_log)
{
    dd_t D = bd0_dd(x, lambda);
    double lo = D.lo + stirlerr(x), r = M_2PI * x;
    if (give_log)
        return -D.hi - lo - 0.5 * log(r);
    return exp(-D.hi) * exp(-lo) / sqrt(r);
}
#endif

double dpois_raw(double x, double lambda, int give_log)
{
#ifdef DASKCL_ACCURACY_BEST
    if (x > 0 && x < 1e300 && lambda > 0 && lambda < 1e300 && x > lambda * DBL_MIN
        && lambda > x * DBL_MIN)
        return dpois_raw_dd(x, dd_d(lambda), give_log);
#endif
    return dpois_raw_r(x, lambda, give_log);
}

double dpois(double x, double lambda, int give_log)
{
    if (isnan(x) || isnan(lambda))
        return x + lambda;
    if (lambda < 0)
        ML_WARN_return_NAN;
    R_D_nonint_check(x);
    if (x < 0 || !isfinite(x))
        return R_D__0;
    x = R_forceint(x);
    return dpois_raw(x, lambda, give_log);
}

#undef DPOIS_X_LRG
