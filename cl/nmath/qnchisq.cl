// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnchisq
// @depends: qnchisq_best, pnchisq, qchisq, dpq, rmath_utils
// @source: inversion of pnchisq (R's qnchisq): a start from Pearson's (1959) approximation by a
//          scaled central chi-squared distribution, ux = b + c qchisq(p, ff) with
//          b = ncp^2 / (df + 3 ncp), c = (df + 3 ncp) / (df + 2 ncp), ff = (df + 2 ncp) / c^2
//          (Abramowitz & Stegun 26.4.27), a bracket found by doubling and halving with
//          tolerances 1e-11 / 1e-10, then bisection to a relative width of 1e-13 (or to adjacent
//          doubles, for subnormal quantiles) with
//          pnchisq_raw(., 1e-13, 4 DBL_EPSILON, 100000).
//
// qnchisq(p, df, ncp): NaN for non-finite df, df < 0 or ncp < 0.  For the upper tail with
// ncp >= 80 the lower tail is inverted (pnchisq computes it).  Built with DASKCL_ACCURACY_BEST
// (config key accuracy = "best"), df > 0 and ncp > 0 go to qnchisq_best.cl.

double qnchisq(double p, double df, double ncp, int lower_tail, int log_p)
{
    const double accu = 1e-13, racc = 4 * DBL_EPSILON;
    // for the bracketing, less accuracy
    const double Eps = 1e-11, rEps = 1e-10;

    if (isnan(p) || isnan(df) || isnan(ncp))
        return p + df + ncp;
    if (!isfinite(df))
        ML_WARN_return_NAN;
    if (df < 0 || ncp < 0)
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0, ML_POSINF);
#ifdef DASKCL_ACCURACY_BEST
    if (df > 0. && ncp > 0. && isfinite(ncp)) {
        double best = qnchisq_best(p, df, ncp, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif

    double pp = R_D_qIv(p);
    if (pp > 1 - DBL_EPSILON)
        return lower_tail ? ML_POSINF : 0.0;

    double ux, lx, ux0, nx;
    {   // Pearson's approximation, usually good to 4 figures or so
        double b = (ncp * ncp) / (df + 3 * ncp);
        double c = (df + 3 * ncp) / (df + 2 * ncp);
        double ff = (df + 2 * ncp) / (c * c);
        ux = b + c * qchisq(p, ff, lower_tail, log_p);
        // a start of 0 (a quantile that underflows: ncp = 0 and p ~ 1e-300) would keep the
        // doubling below at 0 for ever (the call never returned): start at 1 instead, as a
        // negative start does, and let the halving find the bracket
        if (ux <= 0)
            ux = 1;
        ux0 = ux;
    }
    if (!lower_tail && ncp >= 80) {
        // pnchisq works through the lower tail here (R warns for pp < 1e-10)
        p = log_p ? -expm1(p) : (0.5 - (p) + 0.5);
        lower_tail = 1;
    } else {
        p = pp;
    }
    pp = fmin2(1 - DBL_EPSILON, p * (1 + Eps));
    if (lower_tail) {
        for (; ux < DBL_MAX && pnchisq_raw(ux, df, ncp, Eps, rEps, 10000, 1, 0) < pp; ux *= 2)
            ;
        pp = p * (1 - Eps);
        for (lx = fmin2(ux0, DBL_MAX);
             lx > DBL_MIN && pnchisq_raw(lx, df, ncp, Eps, rEps, 10000, 1, 0) > pp; lx *= 0.5)
            ;
    } else {
        for (; ux < DBL_MAX && pnchisq_raw(ux, df, ncp, Eps, rEps, 10000, 0, 0) > pp; ux *= 2)
            ;
        pp = p * (1 - Eps);
        for (lx = fmin2(ux0, DBL_MAX);
             lx > DBL_MIN && pnchisq_raw(lx, df, ncp, Eps, rEps, 10000, 0, 0) < pp; lx *= 0.5)
            ;
    }
    // bisection, until the bracket is narrower than 1e-13 of its midpoint, or (a subnormal
    // quantile, below 1e-310: R's loop never ends there) no double lies between its ends
    if (lower_tail) {
        do {
            nx = 0.5 * (lx + ux);
            if (!(lx < nx && nx < ux))
                break;
            if (pnchisq_raw(nx, df, ncp, accu, racc, 100000, 1, 0) > p)
                ux = nx;
            else
                lx = nx;
        } while ((ux - lx) / nx > accu);
    } else {
        do {
            nx = 0.5 * (lx + ux);
            if (!(lx < nx && nx < ux))
                break;
            if (pnchisq_raw(nx, df, ncp, accu, racc, 100000, 0, 0) < p)
                ux = nx;
            else
                lx = nx;
        } while ((ux - lx) / nx > accu);
    }
    return 0.5 * (ux + lx);
}
