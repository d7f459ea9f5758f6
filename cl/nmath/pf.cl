// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pf, pf_class
// @depends: pbeta, pbeta_best, toms708, pchisq, ddouble, dpq
// @source: P(F <= x) = I_{m x / (n + m x)}(m/2, n/2) (Abramowitz & Stegun 26.6.2), by TOMS 708
//          (pbeta), taking the complementary argument when m x > n so that the first argument
//          of pbeta is not squeezed against 1; infinite degrees of freedom through pchisq.
//          Built with DASKCL_ACCURACY_BEST, a tail that bratio returns as 0 (-Inf on the log
//          scale; its power series and bgrat underflow for df1 beyond 1e5 and a small df2) is
//          taken by TOMS 708's continued fraction alone on the log scale (bratio_bfrac), with
//          the beta argument of that tail, n / (n + m x) or m x / (n + m x), formed directly.
//          And q's rounding is undone to first order (pbeta_shift, pbeta_best.cl).

// pbeta's arguments for pf: q = m x / (n + m x), shapes (m/2, n/2), or where m x > n the
// complement n / (n + m x) with shapes (n/2, m/2) and the other tail (returns 1)
static inline int pf_beta_args(double x, double df1, double df2, double *q, double *a, double *b)
{
    const int swap = df1 * x > df2;
    *q = swap ? df2 / (df2 + df1 * x) : df1 * x / (df2 + df1 * x);
    *a = (swap ? df2 : df1) / 2.;
    *b = (swap ? df1 : df2) / 2.;
    return swap;
}

double pf(double x, double df1, double df2, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(df1) || isnan(df2))
        return x + df2 + df1;
    if (df1 <= 0. || df2 <= 0.)
        ML_WARN_return_NAN;
    R_P_bounds_01(x, 0., ML_POSINF);

    if (df2 == ML_POSINF) {
        if (df1 == ML_POSINF) { // mass at 1
            if (x < 1.)
                return R_DT_0;
            if (x == 1.)
                return log_p ? -M_LN2 : .5;
            if (x > 1.)
                return R_DT_1;
        }
        return pchisq(x * df1, df1, lower_tail, log_p);
    }
    if (df1 == ML_POSINF)
        return pchisq(df2 / x, df2, !lower_tail, log_p);

    // one call of pbeta, not one per branch: a GPU warp would run both inlined copies
    double q, a, b;
    const int swap = pf_beta_args(x, df1, df2, &q, &a, &b);
    const int tail = swap ? !lower_tail : lower_tail;
#ifdef DASKCL_ACCURACY_BEST
    // q's rounding to first order: q + dq = m x / (n + m x) or n / (n + m x) in double-double
    const double mx = df1 * x;
    const dd_t den = dd_add_d(dd_add_d(dd_d(df2), mx), fma(df1, x, -mx));
    const dd_t qd = dd_div(swap ? dd_d(df2) : dd_add_d(dd_d(mx), fma(df1, x, -mx)), den);
    const double r = pbeta_shift(pbeta(q, a, b, tail, log_p), q, (qd.hi - q) + qd.lo, a, b,
                                 tail, log_p);
#else
    const double r = pbeta(q, a, b, tail, log_p);
#endif
#ifdef DASKCL_ACCURACY_BEST
    // t: the log of the asked tail (lo = 1) or of the other one (lo = 0) where that is tiny
    const int lo = log_p ? r == ML_NEGINF : r == 0.;
    if (lo || (log_p && r == 0.)) {
        // that tail is I_y(a', b') with y below the mean: y = q (lower) or 1 - q (upper)
        const double qc = swap ? df1 * x / (df2 + df1 * x) : df2 / (df2 + df1 * x);
        const double t = (tail == lo) ? bratio_bfrac(a, b, q, qc, 1) : bratio_bfrac(b, a, qc, q, 1);
        if (!isnan(t))
            return lo ? (log_p ? t : exp(t)) : -exp(t);
    }
#endif
    return isnan(r) ? ML_NAN : r;
}

// pf's pbeta method (class functions: see pbeta.cl); the pchisq limits are class 0
int pf_class(double x, double df1, double df2, int lower_tail, int log_p)
{
    if (!(x > 0.0) || !(df1 > 0.0) || !(df2 > 0.0) || !isfinite(x) || !isfinite(df1)
        || !isfinite(df2))
        return 0;
    double q, a, b;
    const int swap = pf_beta_args(x, df1, df2, &q, &a, &b);
    return pbeta_class(q, a, b, swap ? !lower_tail : lower_tail, log_p);
}
