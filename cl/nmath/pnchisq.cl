// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnchisq_raw, pnchisq
// @depends: pnchisq_best, pchisq, lgammafn, logspace, ddouble, dpq, rmath_constants, rmath_utils
// @source: for ncp < 80 the Poisson mixture of central chi-squared distribution functions,
//          up to 110 terms (until the weights add up to 1 - 1e-15) normalised by the sum of
//          their weights (on the log scale where every term would underflow); for ncp >= 80 the series of C. G. Ding (1992), "Algorithm AS 275:
//          Computing the non-central chi-squared distribution function", Applied Statistics 41,
//          478-482, with R's extensions (M. Maechler): logarithms of the weights while they
//          would underflow, an approximation of the central term for very large df near x, and
//          errmax / reltol / itrmax as arguments.
//
// pnchisq(x, df, ncp) = pnchisq_raw(x, df, ncp, 1e-12, 8 DBL_EPSILON, 1000000, ...), and for
// log_p results within 1e-8 of 0 the other tail, through log1p.  NaN for non-finite or
// negative df or ncp.  The sums are accumulated in double-double (R: long double).  Built with
// DASKCL_ACCURACY_BEST (config key accuracy = "best"), x > 0 finite and ncp > 0 go to
// pnchisq_best.cl.

#define PNCHISQ_DBL_MIN_EXP (M_LN2 * DBL_MIN_EXP)   // about -707.7

// exp(a) for a double-double a: exp(hi) (1 + lo)
static inline dd_t pnchisq_exp_dd(dd_t a)
{
    return dd_mul_d(dd_d(exp(a.hi)), 1. + a.lo);
}

// exp(-lam) to double-double precision (R: expl, which the weights' sum compared with
// 1 - 1e-15 below needs: exp in double moved the last term summed for 1 in 13 values of lam,
// and with it upper tails by 1e-9 to 1e-5, far ones by factors): exp(-lam) = 2^k exp(r),
// r = -lam - k log 2 with log 2 in double-double, |r| <= log(2) / 2 (Cody & Waite's reduction;
// J.-M. Muller, Elementary Functions, 3rd ed. 2016, ch. 11), exp(r) = exp(r / 2^10)^(2^10) by
// 11 terms of its Taylor series and 10 squarings
static dd_t pnchisq_exp_neg_dd(double lam)
{
    const dd_t ln2 = { 0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56 };
    double k = rint(-lam / M_LN2);
    dd_t r = dd_add_d(dd_mul_d(ln2, -k), -lam);   // -lam - k log 2
    r.hi = ldexp(r.hi, -10);
    r.lo = ldexp(r.lo, -10);
    dd_t e = dd_d(1.);
    for (int n = 11; n >= 1; n--)   // Horner: 1 + r (1 + r/2 (1 + r/3 (...)))
        e = dd_add_d(dd_mul(dd_div_d(r, (double)n), e), 1.);
    for (int m = 0; m < 10; m++)
        e = dd_mul(e, e);
    e.hi = ldexp(e.hi, (int)k);
    e.lo = ldexp(e.lo, (int)k);
    return e;
}

NMATH_NOINLINE double pnchisq_raw(double x, double f, double theta, double errmax, double reltol, int itrmax,
                   int lower_tail, int log_p)
{
    if (x <= 0.) {
        if (x == 0. && f == 0.) {
            double L = -0.5 * theta;
            return lower_tail ? R_D_exp(L) : (log_p ? R_Log1_Exp(L) : -expm1(L));
        }
        // x < 0, or x = 0 with f > 0
        return lower_tail ? R_D__0 : R_D__1;
    }
    if (!isfinite(x))
        return lower_tail ? R_D__1 : R_D__0;

    if (theta < 80) {
        // pchisq(x, f + 2i) < (x/2)^(f/2) / gamma(f/2 + 1): below the underflow for every i?
        if (lower_tail && f > 0. &&
            log(x) < M_LN2 + 2 / f * (lgammafn(f / 2. + 1) + PNCHISQ_DBL_MIN_EXP)) {
            // then work on the log scale
            double lambda = 0.5 * theta;   // < 40
            double sum = ML_NEGINF, sum2 = ML_NEGINF, pr = -lambda;
            for (int i = 0; i < 110;) {
                sum2 = logspace_add(sum2, pr);
                sum = logspace_add(sum, pr + pchisq(x, f + 2 * i, lower_tail, 1));
                if (sum2 >= -1e-15)   // the weights add up to 1 - 1e-15
                    break;
                pr += log(lambda) - log((double)++i);
            }
            double ans = sum - sum2;
            return log_p ? ans : exp(ans);
        }
        dd_t lambda = dd_d(0.5 * theta);
        dd_t sum, sum2;
        // R sums in long double, whose exponent range keeps the products pr pchisq below DBL_MIN
        // (tails whose logs R gives down to ~-800): where the sum is below 2^-968 (its low part
        // subnormal), sum again with the pchisq values scaled by 2^600 (exactly), and unscale
        double sc = 1.;
        for (;;) {
            dd_t pr = pnchisq_exp_neg_dd(lambda.hi);
            sum = dd_d(0.);
            sum2 = dd_d(0.);
            // renormalised by the sum of the weights: the result may be very close to 1
            for (int i = 0; i < 110;) {
                // pr = dpois(i, lambda)
                sum2 = dd_add(sum2, pr);
                sum = dd_add(sum, dd_mul_d(pr, sc * pchisq(x, f + 2 * i, lower_tail, 0)));
                // the weights add up to 1 - 1e-15 (the double-double compared, as R's long double)
                if (sum2.hi > 1 - 1e-15 || (sum2.hi == 1 - 1e-15 && sum2.lo >= 0.))
                    break;
                ++i;
                pr = dd_mul(pr, dd_div_d(lambda, (double)i));
            }
            if (sc > 1. || !(sum.hi < 0x1p-968))
                break;
            sc = 0x1p+600;
        }
        dd_t ans = dd_div(sum, sum2);
        if (sc > 1.) {
            if (ans.hi * 0x1p-600 < DBL_MIN)   // (unscaled where it stays normal)
                return log_p ? dd_log(ans) - 600 * M_LN2 : dd_hi(ans) * 0x1p-600;
            ans = dd_mul_d(ans, 0x1p-600);
        }
        return log_p ? dd_log(ans) : dd_hi(ans);
    }

    // theta >= 80: Ding's series (log_p and lower_tail applied at the end)
    double lam = .5 * theta, l_lam = -1., l_x = -1.;
    int lamSml = (-lam < PNCHISQ_DBL_MIN_EXP), tSml, is_b, is_r;
    dd_t u, v, t, ans;
    dd_t lu = dd_d(-1.), lt;   // logs of u and t, accumulated as R's long doubles
    double term;
    if (lamSml) {
        u = dd_d(0.);
        lu = dd_d(-lam);   // log(u)
        l_lam = log(lam);
    } else {
        u = dd_d(exp(-lam));
    }
    // the first term of the expansion
    v = u;
    double x2 = .5 * x, f2 = .5 * f, f_x_2n = f - x, tt;
    if (f2 * DBL_EPSILON > 0.125 && fabs(tt = x2 - f2) < sqrt(DBL_EPSILON) * f2) {
        // very large f with x near f: against cancellation
        lt = dd_d((1 - tt) * (2 - tt / (f2 + 1)) - M_LN_SQRT_2PI - 0.5 * log(f2 + 1));
    } else {
        lt = dd_d(f2 * log(x2) - x2 - lgammafn(f2 + 1));   // the usual case, no overflow
    }
    tSml = (lt.hi < PNCHISQ_DBL_MIN_EXP);
    if (tSml) {
        if (x > f + theta + 5 * sqrt(2 * (f + 2 * theta)))
            return R_DT_1;   // x > E[X] + 5 sigma(X)
        l_x = log(x);
        ans = dd_d(0.);
        term = 0.;
        t = dd_d(0.);
    } else {
        t = pnchisq_exp_dd(lt);
        term = dd_hi(dd_mul(v, t));
        ans = dd_d(term);
    }
    int n;
    double f_2n, bound;
    for (n = 1, f_2n = f + 2., f_x_2n += 2.; n <= itrmax; n++, f_2n += 2, f_x_2n += 2) {
        // f_2n = f + 2n, f_x_2n = f - x + 2n > 0 <==> f + 2n > x
        if (f_x_2n > 0) {
            // convergence only if both the absolute and the relative error are small
            bound = dd_hi(dd_mul_d(t, x / f_x_2n)) ;
            is_r = 0;
            if ((is_b = (bound <= errmax)) && (is_r = (term <= reltol * dd_hi(ans))))
                break;
        }
        // the next term of the expansion and the partial sum
        if (lamSml) {
            lu = dd_add_d(lu, l_lam - log((double)n));   // u = u lam / n
            if (lu.hi >= PNCHISQ_DBL_MIN_EXP) {   // no underflow any more: change regime
                v = u = pnchisq_exp_dd(lu);
                lamSml = 0;
            }
        } else {
            u = dd_mul_d(u, lam / n);
            v = dd_add(v, u);
        }
        if (tSml) {
            lt = dd_add_d(lt, l_x - log(f_2n));   // t = t x / f2n
            if (lt.hi >= PNCHISQ_DBL_MIN_EXP) {   // no underflow any more: change regime
                t = pnchisq_exp_dd(lt);
                tSml = 0;
            }
        } else {
            t = dd_mul_d(t, x / f_2n);
        }
        if (!lamSml && !tSml) {
            term = dd_hi(dd_mul(v, t));
            ans = dd_add_d(ans, term);
        }
    }
    // (n > itrmax: R warns that the series did not converge)
    double dans = dd_hi(ans);
    return R_DT_val(dans);
}

double pnchisq(double x, double df, double ncp, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(df) || isnan(ncp))
        return x + df + ncp;
    if (!isfinite(df) || !isfinite(ncp))
        ML_WARN_return_NAN;
    if (df < 0. || ncp < 0.)
        ML_WARN_return_NAN;
#ifdef DASKCL_ACCURACY_BEST
    if (x > 0. && isfinite(x) && ncp > 0.) {
        double best = pnchisq_best(x, df, ncp, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif

    double ans = pnchisq_raw(x, df, ncp, 1e-12, 8 * DBL_EPSILON, 1000000, lower_tail, log_p);
    if (x <= 0. || x == ML_POSINF)
        return ans;
    if (ncp >= 80) {
        if (lower_tail) {
            ans = fmin2(ans, R_D__1);
        } else {
            // the other tail was computed: cancellation is likely (R warns below 1e-10)
            if (!log_p && ans < 0.)
                ans = 0.;
        }
    }
    if (!log_p || ans < -1e-8)
        return ans;
    // log_p and -1e-8 < ans <= 0: the probability is near one, better from the other tail
    ans = pnchisq_raw(x, df, ncp, 1e-12, 8 * DBL_EPSILON, 1000000, !lower_tail, 0);
    return log1p(-ans);
}

#undef PNCHISQ_DBL_MIN_EXP
