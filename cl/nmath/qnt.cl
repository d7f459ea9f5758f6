// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnt
// @depends: qnt_best, pnt, qt, qnorm, dpq, rmath_utils
// @source: inversion of pnt by bisection (R's qnt): a bracket by doubling from max(1, ncp) and
//          min(-1, -ncp) with a relative margin of 1e-11 on p, then bisection until the bracket
//          is narrower than 1e-13 of its larger end (or its ends are adjacent doubles); the
//          normal limit N(ncp, 1) for df = Inf.
//
// qnt(p, df, ncp): NaN for df <= 0; qt for ncp = 0 and df >= 1.  Built with
// DASKCL_ACCURACY_BEST (config key accuracy = "best"), finite df and ncp go to qnt_best.cl.

double qnt(double p, double df, double ncp, int lower_tail, int log_p)
{
    const double accu = 1e-13;
    const double Eps = 1e-11;   // > accu

    if (isnan(p) || isnan(df) || isnan(ncp))
        return p + df + ncp;
    if (df <= 0.0)
        ML_WARN_return_NAN;
    if (ncp == 0.0 && df >= 1.0)
        return qt(p, df, lower_tail, log_p);
    R_Q_P01_boundaries(p, ML_NEGINF, ML_POSINF);
    if (!isfinite(df))   // df = Inf: N(ncp, 1)
        return qnorm5(p, ncp, 1., lower_tail, log_p);
#ifdef DASKCL_ACCURACY_BEST
    if (isfinite(ncp)) {
        double best = qnt_best(p, df, ncp, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif
    p = R_DT_qIv(p);

    // 1. an upper and a lower bound
    if (p > 1 - DBL_EPSILON)
        return ML_POSINF;
    double ux, lx, nx;
    double pp = fmin2(1 - DBL_EPSILON, p * (1 + Eps));
    for (ux = fmax2(1., ncp); ux < DBL_MAX && pnt(ux, df, ncp, 1, 0) < pp; ux *= 2)
        ;
    pp = p * (1 - Eps);
    for (lx = fmin2(-1., -ncp); lx > -DBL_MAX && pnt(lx, df, ncp, 1, 0) > pp; lx *= 2)
        ;
    // 2. bisection, until no double lies between the ends: a bracket closing in on 0 (pnt 0
    // left of 0, e.g. p = 1e-315, df = 4e5, ncp = 9.3) never meets the relative width, and R's
    // loop never ends there
    do {
        nx = 0.5 * (lx + ux);   // may be zero
        if (!(lx < nx && nx < ux))
            break;
        if (pnt(nx, df, ncp, 1, 0) > p)
            ux = nx;
        else
            lx = nx;
    } while ((ux - lx) > fmax2(fabs(lx), fabs(ux)) * accu);
    return 0.5 * (lx + ux);
}
