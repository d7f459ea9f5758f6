// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnbinom, dnbinom_mu
// @depends: dbinom, dpois, ddouble, lgammafn, lgamma1p, dpq, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities": the
//          negative binomial mass as a binomial one,
//              f(x; n, p) = n / (n + x) dbinom(n; n + x, p);
//          for the mean parametrisation (p = n / (n + mu)) the binomial is formed with
//          p = n / (n + mu) and q = mu / (n + mu) separately (no cancellation in 1 - p), x = 0 as
//          (n / (n + mu))^n through log1p, the Poisson limit for n = Inf, and for x < 1e-10 n
//          the expansion  log f = x log(mu / (1 + mu / n)) - mu - log x! + log(1 + x (x-1) / (2n))
//          (M. Maechler, R's dnbinom_mu, 2005-2019); for x < 1e-10 n with the probability
//          parametrisation  log f = n log p + x (log n + log(1 - p)) - log x! + log(1 + x (x-1)/(2n)).
//          Built with DASKCL_ACCURACY_BEST, the binomial's size n + x, 1 - p and the mean
//          parametrisation's p, q go to dbinom_raw_dd unrounded (double-double).
//
// dnbinom(x, size, prob) and dnbinom_mu(x, size, mu).  NaN for prob outside (0, 1], mu < 0 or
// size < 0; mass 0 for x non-integer (R warns; counted by the kernel), negative or infinite;
// size = 0 is the point mass at 0; size = Inf is treated as DBL_MAX (dnbinom) or as the Poisson
// limit (dnbinom_mu).

double dnbinom(double x, double size, double prob, int give_log)
{
    if (isnan(x) || isnan(size) || isnan(prob))
        return x + size + prob;
    if (prob <= 0 || prob > 1 || size < 0)
        ML_WARN_return_NAN;
    R_D_nonint_check(x);
    if (x < 0 || !isfinite(x))
        return R_D__0;
    x = R_forceint(x);
    // the limit as size -> 0 is the point mass at zero; also for x within R's fuzz of 0
    // (1e-300 before it is rounded: 0 * log(prob) gave log 1 as -0)
    if (x == 0 && size == 0)
        return R_D__1;
    if (x == 0)   // prob^size, as R (before size = Inf becomes DBL_MAX)
        return give_log ? size * log(prob) : pow(prob, size);
    if (!isfinite(size))
        size = DBL_MAX;
    if (x < 1e-10 * size) {
        // x + size would round to size: two terms of the expansion of log f (as R)
        return R_D_exp(size * log(prob) + x * (log(size) + log1p(-prob)) - lgamma1p(x) +
                       log1p(x * (x - 1) / (2 * size)));
    }
#ifdef DASKCL_ACCURACY_BEST
    // the size x + size and 1 - prob unrounded (dbinom.cl's dbinom_raw_dd)
    if (x + size < 1e300 && prob < 1) {
        const double p = size / (size + x),
                     ans = dbinom_raw_dd(size, x, dd_add_d(dd_d(size), x), dd_d(prob),
                                         dd_add_d(dd_d(1.), -prob), give_log);
        return give_log ? log(p) + ans : p * ans;
    }
#endif
    double ans = dbinom_raw(size, x + size, prob, 1 - prob, give_log);
    double p = size / (size + x);
    return give_log ? log(p) + ans : p * ans;
}

double dnbinom_mu(double x, double size, double mu, int give_log)
{
    if (isnan(x) || isnan(size) || isnan(mu))
        return x + size + mu;
    if (mu < 0 || size < 0)
        ML_WARN_return_NAN;
    R_D_nonint_check(x);
    if (x < 0 || !isfinite(x))
        return R_D__0;
    // the limit as size -> 0 is the point mass at zero, even with mu fixed
    if (x == 0 && size == 0)
        return R_D__1;
    x = R_forceint(x);
    if (!isfinite(size))   // the Poisson limit
        return dpois_raw(x, mu, give_log);
    if (x == 0)   // accurate both for size << mu and size >> mu
        return R_D_exp(size * (size < mu ? log(size / (size + mu)) : log1p(-mu / (size + mu))));
    if (x < 1e-10 * size) {
        double p = (size < mu ? log(size / (1 + size / mu)) : log(mu / (1 + mu / size)));
        return R_D_exp(x * p - mu - lgammafn(x + 1) + log1p(x * (x - 1) / (2 * size)));
    }
#ifdef DASKCL_ACCURACY_BEST
    // the size x + size and size / (size + mu), mu / (size + mu) unrounded (dbinom_raw_dd)
    if (x + size < 1e300 && size + mu < 1e300 && mu > 0) {
        const dd_t s = dd_add_d(dd_d(size), mu);
        const double p = size / (size + x),
                     ans = dbinom_raw_dd(size, x, dd_add_d(dd_d(size), x), dd_div(dd_d(size), s),
                                         dd_div(dd_d(mu), s), give_log);
        return give_log ? log(p) + ans : p * ans;
    }
#endif
    // no cancellation in dbinom_raw when size and x + size are close
    double p = size / (size + x);
    double ans = dbinom_raw(size, x + size, size / (size + mu), mu / (size + mu), give_log);
    return give_log ? log(p) + ans : p * ans;
}
