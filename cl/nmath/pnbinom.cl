// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnbinom, pnbinom_mu, pnbinom_class, pnbinom_mu_class
// @depends: pbeta, pbeta_best, toms708, ppois, ddouble, dpq, rmath_utils
// @source: P[X <= x] = I_p(n, x + 1) for X ~ NegBinomial(n, p) (Johnson, Kemp & Kotz, Univariate
//          Discrete Distributions, 5.31), by the incomplete beta function of Didonato & Morris
//          (ACM TOMS 708, bratio); in the mean parametrisation p = n / (n + mu) and
//          1 - p = mu / (n + mu) go to bratio separately (no cancellation), and n = Inf is the
//          Poisson limit.
//
// pnbinom(x, size, prob) and pnbinom_mu(x, size, mu): NaN for non-finite size or prob (mu),
// size < 0, prob outside (0, 1], mu < 0; size = 0 is the point mass at 0; x is floored after a
// fuzz of 1e-7.

double pnbinom(double x, double size, double prob, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(size) || isnan(prob))
        return x + size + prob;
    if (!isfinite(size) || !isfinite(prob))
        ML_WARN_return_NAN;
    if (size < 0 || prob <= 0 || prob > 1)
        ML_WARN_return_NAN;
    // the limit as size -> 0: point mass at zero
    if (size == 0)
        return (x >= 0) ? R_DT_1 : R_DT_0;
    if (x < 0)
        return R_DT_0;
    if (!isfinite(x))
        return R_DT_1;
    x = floor(x + 1e-7);
    return pbeta(prob, size, x + 1, lower_tail, log_p);
}

double pnbinom_mu(double x, double size, double mu, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(size) || isnan(mu))
        return x + size + mu;
    if (!isfinite(mu))
        ML_WARN_return_NAN;
    if (size < 0 || mu < 0)
        ML_WARN_return_NAN;
    // the limit as size -> 0: point mass at zero
    if (size == 0)
        return (x >= 0) ? R_DT_1 : R_DT_0;
    if (x < 0)
        return R_DT_0;
    if (!isfinite(x))
        return R_DT_1;
    if (!isfinite(size))   // the Poisson limit
        return ppois(x, mu, lower_tail, log_p);
    x = floor(x + 1e-7);
    double w, wc;
    int ierr;
    bratio(size, x + 1, size / (size + mu), mu / (size + mu), &w, &wc, &ierr, log_p);
#ifdef DASKCL_ACCURACY_BEST
    // the rounding of the beta argument undone to first order (pbeta_best.cl): bratio's factor
    // takes the smaller of p = size / (size + mu) and 1 - p as exact (toms708_best.cl), and
    // here that one's remainder comes from the quotient in double-double
    const double p = size / (size + mu), q = mu / (size + mu);
    const dd_t s = dd_add_d(dd_d(size), mu);
    const double dp = (p <= q) ? dd_hi(dd_sub(dd_div(dd_d(size), s), dd_d(p)))
                               : -dd_hi(dd_sub(dd_div(dd_d(mu), s), dd_d(q)));
    if (isfinite(s.hi) && ierr == 0)
        return pbeta_shift(lower_tail ? w : wc, p, dp, size, x + 1, lower_tail, log_p);
#endif
    return lower_tail ? w : wc;
}

// the pbeta (bratio) methods of pnbinom and pnbinom_mu (class functions: see pbeta.cl)
int pnbinom_class(double x, double size, double prob, int lower_tail, int log_p)
{
    if (!isfinite(x) || !isfinite(size) || !(size > 0) || !(prob > 0 && prob <= 1) || x < 0)
        return 0;
    return pbeta_class(prob, size, floor(x + 1e-7) + 1, lower_tail, log_p);
}

int pnbinom_mu_class(double x, double size, double mu, int lower_tail, int log_p)
{
    if (!isfinite(x) || !isfinite(size) || !isfinite(mu) || !(size > 0) || !(mu >= 0) || x < 0)
        return 0;
    return bratio_class(size, floor(x + 1e-7) + 1, size / (size + mu), mu / (size + mu), log_p);
}
