// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnt
// @depends: pnt_best, pt, pnorm, pbeta, lgammafn, ddouble, dpq, rmath_constants, rmath_utils
// @source: R. V. Lenth (1989), "Algorithm AS 243: Cumulative distribution function of the
//          non-central t distribution", Applied Statistics 38, 185-189, after W. C. Guenther
//          (1978), J. Statist. Comput. Simul. 6, 199: twin series of incomplete beta functions
//          (odd and even terms) weighted by the Poisson probabilities of lambda = ncp^2 / 2,
//          with R's extensions: errmax 1e-12 and itrmax 1000 (AS 243: 1e-6 and 100), the
//          normal approximation of Abramowitz & Stegun 26.7.10 for df > 4e5 or ncp^2 > 2 log 2
//          (-DBL_MIN_EXP), a stop when the remaining Poisson mass s becomes negative through
//          rounding, and 0 for t < 0 with ncp > 40 (where pt(q, df, ncp) <= Phi(-ncp) is 0).
//
// pnt(t, df, ncp): NaN for df <= 0; pt for ncp = 0.  The series are accumulated in
// double-double (R: long double).  Built with DASKCL_ACCURACY_BEST (config key accuracy =
// "best"), finite t, df and ncp go to pnt_best.cl.

NMATH_NOINLINE double pnt(double t, double df, double ncp, int lower_tail, int log_p)
{
    const int itrmax = 1000;
    const double errmax = 1.e-12;

    // (no test for NaN, as R: pnt(NaN, ...) is 1 or 0 from the test for infinite t below)
    if (df <= 0.0)
        ML_WARN_return_NAN;
    if (ncp == 0.0)
        return pt(t, df, lower_tail, log_p);
    if (!isfinite(t))
        return (t < 0) ? R_DT_0 : R_DT_1;
#ifdef DASKCL_ACCURACY_BEST
    if (isfinite(df) && isfinite(ncp)) {
        double best = pnt_best(t, df, ncp, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif

    int negdel;
    double tt, del;
    if (t >= 0.) {
        negdel = 0;
        tt = t;
        del = ncp;
    } else {
        // the left tail if extreme: pt(q, df, ncp) <= pt(0, df, ncp) = Phi(-ncp)
        if (ncp > 40 && (!log_p || !lower_tail))
            return R_DT_0;
        negdel = 1;
        tt = -t;
        del = -ncp;
    }

    if (df > 4e5 || del * del > 2 * M_LN2 * (-(DBL_MIN_EXP))) {
        // Abramowitz & Stegun 26.7.10
        double s = 1. / (4. * df);
        return pnorm5(tt * (1. - s), del, sqrt(1. + tt * tt * 2. * s), lower_tail != negdel,
                      log_p);
    }

    // the twin series (Guenther 1978)
    double x = t * t;
    double rxb = df / (x + df);   // 1 - x below, accurately
    x = x / (x + df);             // in [0, 1)
    dd_t tnc;
    if (x > 0.) {   // t != 0
        double lambda = del * del;
        dd_t p = dd_d(.5 * exp(-.5 * lambda));
        if (p.hi == 0.)   // underflow (R warns)
            return R_DT_0;
        // q = sqrt(2/pi) p del in R's order, (sqrt(2/pi) p) del: sqrt(2/pi) del rounded to a
        // double first moved tnc by ~1e-16 relative, and 1 - tnc across a rounding of 1 - 2^-54
        dd_t q = dd_mul_d(dd_mul_d(p, M_SQRT_2dPI), del);
        dd_t s = dd_sub(dd_d(.5), p);
        // s = 0.5 - p = -0.5 expm1(-0.5 lambda)
        if (s.hi < 1e-7)
            s = dd_d(-0.5 * expm1(-0.5 * lambda));
        double a = .5, b = .5 * df;
        rxb = pow(rxb, b);   // (1 - x)^b
        double albeta = M_LN_SQRT_PI + lgammafn(b) - lgammafn(.5 + b);
        dd_t xodd = dd_d(pbeta(x, a, b, 1, 0));
        dd_t godd = dd_d(2. * rxb * exp(a * log(x) - albeta));
        double tnc0 = b * x;
        dd_t xeven = dd_d((tnc0 < DBL_EPSILON) ? tnc0 : 1. - rxb);
        dd_t geven = dd_d(tnc0 * rxb);
        tnc = dd_add(dd_mul(p, xodd), dd_mul(q, xeven));
        // repeat until convergence or the iteration limit
        for (int it = 1; it <= itrmax; it++) {
            a += 1.;
            xodd = dd_sub(xodd, godd);
            xeven = dd_sub(xeven, geven);
            godd = dd_mul_d(godd, x * (a + b - 1.) / a);
            geven = dd_mul_d(geven, x * (a + b - .5) / (a + .5));
            p = dd_mul_d(p, lambda / (2 * it));
            q = dd_mul_d(q, lambda / (2 * it + 1));
            tnc = dd_add(tnc, dd_add(dd_mul(p, xodd), dd_mul(q, xeven)));
            s = dd_sub(s, p);
            // rounding error (R >= 2.4.0 tests this; R warns)
            if (s.hi < -1.e-10)
                break;
            if (s.hi <= 0 && it > 1)
                break;
            double errbd = dd_hi(dd_mul(dd_mul_d(s, 2.), dd_sub(xodd, godd)));
            if (fabs(errbd) < errmax)
                break;   // convergence
        }
        // (no convergence in itrmax iterations: R warns)
    } else {   // x = t = 0
        tnc = dd_d(0.);
    }
    tnc = dd_add_d(tnc, pnorm5(-del, 0., 1., 1, 0));

    lower_tail = lower_tail != negdel;   // xor
    // (R warns when tnc > 1 - 1e-10 for the lower tail)
    return R_DT_val(fmin2(dd_hi(tnc), 1.));
}
