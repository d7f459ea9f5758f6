// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnbeta
// @depends: qnbeta_best, pnbeta, dpq, rmath_utils
// @source: inversion of pnbeta by bisection (R's qnbeta): bracket the quantile by halving the
//          distance to 1 (upper bound) and to 0 (lower bound) from 1/2, with a relative margin
//          of 1e-14 on p, then bisect until the bracket is narrower than 1e-15 of the midpoint.
//
// qnbeta(p, a, b, ncp): NaN for non-finite a, ncp < 0, a <= 0, b <= 0; 1 for p > 1 - DBL_EPSILON
// (lower tail).  Built with DASKCL_ACCURACY_BEST (config key accuracy = "best"), finite b and
// ncp > 0 go to qnbeta_best.cl.

double qnbeta(double p, double a, double b, double ncp, int lower_tail, int log_p)
{
    const double accu = 1e-15;
    const double Eps = 1e-14;   // > accu

    if (isnan(p) || isnan(a) || isnan(b) || isnan(ncp))
        return p + a + b + ncp;
    if (!isfinite(a))
        ML_WARN_return_NAN;
    if (ncp < 0. || a <= 0. || b <= 0.)
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0, 1);
#ifdef DASKCL_ACCURACY_BEST
    if (isfinite(b) && ncp > 0. && isfinite(ncp)) {
        double best = qnbeta_best(p, a, b, ncp, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif
    p = R_DT_qIv(p);

    // 1. an upper and a lower bound
    if (p > 1 - DBL_EPSILON)
        return 1.0;
    double ux, lx, nx;
    double pp = fmin2(1 - DBL_EPSILON, p * (1 + Eps));
    for (ux = 0.5; ux < 1 - DBL_EPSILON && pnbeta(ux, a, b, ncp, 1, 0) < pp; ux = 0.5 * (1 + ux))
        ;
    pp = p * (1 - Eps);
    for (lx = 0.5; lx > DBL_MIN && pnbeta(lx, a, b, ncp, 1, 0) > pp; lx *= 0.5)
        ;
    // 2. bisection
    do {
        nx = 0.5 * (lx + ux);
        const double v = pnbeta(nx, a, b, ncp, 1, 0);
        if (isnan(v))   // pnbeta's series cannot count its terms (ncp beyond ~1.8e16): the
            return ML_NAN;   // comparisons with NaN gave 0.5
        if (v > p)
            ux = nx;
        else
            lx = nx;
    } while ((ux - lx) / nx > accu);
    return 0.5 * (ux + lx);
}
