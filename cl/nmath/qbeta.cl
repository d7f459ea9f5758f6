// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qbeta, qbeta_class
// @depends: qbeta_best, pbeta, lbeta, qnorm, dpq, rmath_utils
// @source: G. W. Cran, K. J. Martin & G. E. Thomas (1977), "Remark AS R19 and Algorithm AS 109:
//          A remark on Algorithms AS 63 and AS 64", Appl. Statist. 26, 111-114;
//          K. L. Majumder & G. P. Bhattacharjee (1973), "Algorithm AS 64: Inverse of the
//          incomplete beta function ratio", Appl. Statist. 22, 411-414; A. H. Carter (1947)
//          for the starting value when both shapes exceed 1; with R's extensions
//          (M. Maechler, 2015-2016: the choice of tail by the starting value, Newton
//          iterations for log(x) when the quantile is small (below e^-5), the checks at the
//          smallest positive number, and a final Newton step on the x scale).
//
// qbeta(alpha, p, q) solves pbeta(x, p, q) = alpha:
//   1. boundaries and point masses (p or q zero or infinite);
//   2. a starting value, for the tail where the quantile is below 1/2 (swap p, q and take
//      the other tail when alpha > 1/2): in the far left tail the power approximation
//      x0 = (a p B(p, q))^(1/p) with one correction term; otherwise Carter's approximation
//      for p, q > 1, or AS 64's chi-squared (Wilson-Hilferty) or power approximations, with
//      u = log(x); the tail is chosen again from the starting value;
//   3. a modified Newton-Raphson (AS 109, with step halving by thirds after the first
//      n_N = 4 steps and a target accuracy acu depending on p and alpha) either for x or,
//      when log(x) < -5, for log(x) on the log-probability scale;
//   4. the returned quantile, mirrored back when the tail was swapped.
// When a Newton step is not finite, R restarts from step 2 (goto); here that is a loop that
// runs at most three times.  Everything is iterative; nothing calls itself.  Built with
// DASKCL_ACCURACY_BEST (config key accuracy = "best"), R's result for finite shapes and
// 0 < alpha < 1 is the start of qbeta_best.cl's inversion on the log scale.

#define QBETA_USE_LOG_X_CUTOFF -5.
#define QBETA_N_NEWTON_FREE 4
#define QBETA_DBL_very_MIN (DBL_MIN / 4.)
#define QBETA_DBL_log_v_MIN (M_LN2 * (DBL_MIN_EXP - 2))
#define QBETA_fpu 3e-308
#define QBETA_acu_min 1e-300
#define QBETA_p_lo QBETA_fpu
#define QBETA_p_hi (1 - 2.22e-16)

// The x-scale Newton step (F(x) - a) / F'(x), or on the log scale (log F - la) F / F'
static inline double qbeta_newton_w(double y, double xinbta, double a, double la, double logbeta,
                                    double r, double t, int log_p)
{
    return log_p ? (y - la) * exp(y + logbeta + r * log(xinbta) + t * log1p(-xinbta))
                 : (y - a) * exp(logbeta + r * log(xinbta) + t * log1p(-xinbta));
}

static double qbeta_r(double alpha, double p, double q, int lower_tail, int log_p)
{
    const double const1 = 2.30753, const2 = 0.27061, const3 = 0.99229, const4 = 0.04481;
    const double log_q_cut = QBETA_USE_LOG_X_CUTOFF;
    const double log_eps_c = M_LN2 * (1. - DBL_MANT_DIG); // log(DBL_EPSILON)
    const int n_N = QBETA_N_NEWTON_FREE;

    if (isnan(p) || isnan(q) || isnan(alpha))
        return p + q + alpha;
    if (p < 0. || q < 0.)
        ML_WARN_return_NAN;

    if (alpha == R_DT_0)
        return 0.;
    if (alpha == R_DT_1)
        return 1.;
    if ((log_p && alpha > 0) || (!log_p && (alpha < 0 || alpha > 1)))
        ML_WARN_return_NAN;

    // p == 0, q == 0, p = Inf, q = Inf: one- or two-point masses
    if (p == 0 || q == 0 || !isfinite(p) || !isfinite(q)) {
        if (p == 0 && q == 0) { // 1/2 at 0 and at 1
            if (alpha < R_D_half)
                return 0.;
            if (alpha > R_D_half)
                return 1.;
            return 0.5;
        }
        if (p == 0 || p / q == 0) // mass at 0
            return 0.;
        if (q == 0 || q / p == 0) // mass at 1
            return 1.;
        return 0.5; // p = q = Inf: mass at 1/2
    }

    double p_ = R_DT_qIv(alpha); // lower-tail probability (may round to 0 or 1)
    double logbeta = lbeta(p, q);

    // work on the tail where the quantile is small: swap when p_ > 1/2
    int swap_tail = (p_ > 0.5);
    int use_log_x = 0, add_N_step = 1;
    double a, la, pp, qq, r, s, t, h, w, y = -1., u, xinbta, tx, u_n;

    // The whole computation is retried (at most twice) from a new starting value, with the
    // tail chosen again, when a Newton step is not finite (R's "maybe_swap").
    for (int n_maybe_swaps = 1;; n_maybe_swaps++) {
        if (swap_tail) {
            a = R_DT_CIv(alpha);   // 1 - p_
            la = R_DT_Clog(alpha); // log(1 - p_) without cancellation
            pp = q;
            qq = p;
        } else {
            a = p_;
            la = R_DT_log(alpha);
            pp = p;
            qq = q;
        }

        // accuracy of the Newton iterations (AS 109's remark, adapted: its square root)
        double acu = fmax2(QBETA_acu_min, pow(10., -13. - 2.5 / (pp * pp) - 0.5 / (a * a)));

        // the power approximation u0 = log(x0), x0 = (a p B(p, q))^(1/p), for the far left tail
        double u0 = (la + log(pp) + logbeta) / pp;
        double rp = pp * (1. - qq) / (pp + 1.);
        int u0_maybe = (M_LN2 * DBL_MIN_EXP < u0 && u0 < -0.01);
        u_n = 1.; // log(x) of the Newton iterate; 1 is impossible
        int early_exit = 0;

        t = 0.2;
        if (u0_maybe
            && u0 < (t * log_eps_c - log(fabs(pp * (1. - qq) * (2. - qq) / (2. * (pp + 2.))))) / 2.) {
            // Maechler's one-step correction of u0, then Newton on the log(x) scale
            rp = rp * exp(u0);
            u = (rp > -1.) ? u0 - log1p(rp) / pp : u0;
            tx = xinbta = exp(u);
            use_log_x = 1;
        } else {
            // AS 64 / AS 109 starting values; y: Hastings' approximation of qnorm(1 - a)
            r = sqrt(-2 * la);
            y = r - (const1 + const2 * r) / (1. + (const3 + const4 * r) * r);
            if (pp > 1 && qq > 1) {
                // Carter (1947), AS 109 remark 5
                r = (y * y - 3.) / 6.;
                s = 1. / (pp + pp - 1.);
                t = 1. / (qq + qq - 1.);
                h = 2. / (s + t);
                w = y * sqrt(h + r) / h - (t - s) * (r + 5. / 6. - 2. / (3. * h));
                if (w > 300) { // exp(w + w) is huge or overflows
                    t = w + w + log(qq) - log(pp);
                    u = (t <= 18) ? -log1p(exp(t)) : -t - exp(-t); // -log(1 + e^t)
                    xinbta = exp(u);
                } else {
                    xinbta = pp / (pp + qq * exp(w + w));
                    u = -log1p(qq / pp * exp(w + w));
                }
            } else {
                // AS 64: Wilson-Hilferty chi-squared, in a stabler form
                r = qq + qq;
                t = 1. / (3. * sqrt(qq));
                t = r * R_pow_di(1. + t * (-t + y), 3); // chi^2_alpha of AS 64
                s = 4. * pp + r - 2.;
                if (t == 0 || (t < 0. && s >= t)) {
                    // no chi-squared approximation: x0 = 1 - ((1-a) q B(p,q))^(1/q) (AS 65)
                    double l1ma = swap_tail ? R_DT_log(alpha) : R_DT_Clog(alpha); // log(1-a)
                    double xx = (l1ma + log(qq) + logbeta) / qq;
                    if (xx <= 0.) {
                        xinbta = -expm1(xx);
                        u = R_Log1_Exp(xx);
                    } else { // 1 - e^xx < 0 is nonsense: u0, corrected if possible
                        double r_ = rp * exp(u0);
                        u = (r_ > -1.) ? u0 - log1p(r_) / pp : u0;
                        xinbta = exp(u);
                    }
                } else {
                    t = s / t;
                    if (t <= 1.) { // the power approximation
                        u = u0;
                        xinbta = exp(u);
                    } else { // (1 + x0) / (1 - x0) = t
                        xinbta = 1. - 2. / (t + 1.);
                        u = log1p(-2. / (t + 1.));
                    }
                }
            }

            // the starting value may show that the other tail is the better one
            if ((swap_tail && u >= -exp(log_q_cut))
                || (!swap_tail && u >= -exp(4 * log_q_cut) && pp / qq < 1000.)) {
                swap_tail = !swap_tail;
                if (swap_tail) {
                    a = R_DT_CIv(alpha);
                    la = R_DT_Clog(alpha);
                    pp = q;
                    qq = p;
                } else {
                    a = p_;
                    la = R_DT_log(alpha);
                    pp = p;
                    qq = q;
                }
                u = R_Log1_Exp(u);
                xinbta = exp(u);
            }

            if (!use_log_x)
                use_log_x = (u < log_q_cut); // x < e^-5: Newton for log(x)
            int bad_u = !isfinite(u);
            int bad_init = bad_u || xinbta > QBETA_p_hi;
            tx = xinbta;

            if (bad_u || u < log_q_cut) {
                // try the left border quickly: the smallest positive number
                w = pbeta_raw(QBETA_DBL_very_MIN, pp, qq, 1, log_p);
                if (w > (log_p ? la : a)) {
                    if (log_p || fabs(w - a) < fabs(0 - a)) { // better than 0
                        tx = QBETA_DBL_very_MIN;
                        u_n = QBETA_DBL_log_v_MIN;
                    } else {
                        tx = 0.;
                        u_n = ML_NEGINF;
                    }
                    use_log_x = log_p;
                    add_N_step = 0;
                    early_exit = 1;
                } else if (u < QBETA_DBL_log_v_MIN) {
                    u = QBETA_DBL_log_v_MIN;
                    xinbta = QBETA_DBL_very_MIN;
                }
            }

            // a negative (or zero) starting value is not usable
            if (!early_exit && bad_init && !(use_log_x && tx > 0)) {
                if (u == ML_NEGINF) {
                    u = M_LN2 * DBL_MIN_EXP;
                    xinbta = DBL_MIN;
                } else {
                    xinbta = (xinbta > 1.1) ? 0.5
                                            : ((xinbta < QBETA_p_lo) ? exp(u) : QBETA_p_hi);
                    if (bad_u)
                        u = log(xinbta);
                }
            }
        }
        if (early_exit)
            break;

        // modified Newton-Raphson with pbeta_raw
        r = 1 - pp;
        t = 1 - qq;
        double wprev = 0., prev = 1., adj = 1.;
        int retry = 0;
        if (use_log_x) {
            // Newton for L(u) = log F(e^u) - la, u = log(x)
            for (int i_pb = 0; i_pb < 1000; i_pb++) {
                y = pbeta_raw(xinbta, pp, qq, 1, 1);
                // step (L - la) / L'(u), L'(u) = e^u F'(e^u) / F(e^u)
                w = (y == ML_NEGINF)
                        ? 0.
                        : (y - la) * exp(y - u + logbeta + r * u + t * R_Log1_Exp(u));
                if (!isfinite(w)) {
                    if (n_maybe_swaps <= 1) {
                        retry = 1;
                        break;
                    }
                    ML_WARN_return_NAN;
                }
                if (i_pb >= n_N && w * wprev <= 0.)
                    prev = fmax2(fabs(adj), QBETA_fpu);
                double g = 1;
                int conv = 0;
                for (int i_inn = 0; i_inn < 1000; i_inn++) {
                    adj = g * w;
                    if (fabs(adj) < prev) { // steps must shrink, from the start
                        u_n = u - adj;
                        if (u_n <= 0.) { // 0 < e^u_n <= 1
                            if (prev <= acu || fabs(w) <= acu)
                                conv = 1;
                            break;
                        }
                    }
                    g /= 3;
                }
                if (conv)
                    break;
                double D = fmin2(fabs(adj), fabs(u_n - u)); // (u_n - u may cancel)
                if (D <= 4e-16 * fabs(u_n + u))
                    break;
                u = u_n;
                xinbta = exp(u);
                wprev = w;
            }
        } else {
            // Newton for F(x) - a (or log F(x) - la)
            for (int i_pb = 0; i_pb < 1000; i_pb++) {
                y = pbeta_raw(xinbta, pp, qq, 1, log_p);
                w = qbeta_newton_w(y, xinbta, a, la, logbeta, r, t, log_p);
                if (!isfinite(w)) {
                    if (n_maybe_swaps <= 2) {
                        if (!log_p && n_maybe_swaps == 2)
                            use_log_x = 1;
                        if (!log_p || n_maybe_swaps <= 1) {
                            retry = 1;
                            break;
                        }
                    }
                    ML_WARN_return_NAN;
                }
                if (i_pb >= n_N && w * wprev <= 0.)
                    prev = fmax2(fabs(adj), QBETA_fpu);
                double g = 1;
                int conv = 0;
                for (int i_inn = 0; i_inn < 1000; i_inn++) {
                    adj = g * w;
                    // full Newton steps at first; then only steps that shrink
                    if (i_pb < n_N || fabs(adj) < prev) {
                        tx = xinbta - adj;
                        if (0. <= tx && tx <= 1.) {
                            if (prev <= acu || fabs(w) <= acu) {
                                conv = 1;
                                break;
                            }
                            if (tx != 0. && tx != 1)
                                break;
                        }
                    }
                    g /= 3;
                }
                if (conv)
                    break;
                if (fabs(tx - xinbta) <= 4e-16 * (tx + xinbta))
                    break;
                xinbta = tx;
                if (tx == 0) // lost
                    break;
                wprev = w;
            }
        }
        if (retry)
            continue;

        // converged (or given up)
        int log_ = log_p || use_log_x;
        if ((log_ && y == ML_NEGINF) || (!log_ && y == 0)) {
            // stuck at the left: is the smallest positive number better?
            w = pbeta_raw(QBETA_DBL_very_MIN, pp, qq, 1, log_);
            if (log_ || fabs(w - a) <= fabs(y - a)) {
                tx = QBETA_DBL_very_MIN;
                u_n = QBETA_DBL_log_v_MIN;
            }
            add_N_step = 0;
        }
        break;
    }

    if (use_log_x) {
        if (!add_N_step)
            return swap_tail ? -expm1(u_n) : exp(u_n);
        // one last Newton step on the x scale
        if (u_n != 1.)
            xinbta = exp(u_n);
        y = pbeta_raw(xinbta, pp, qq, 1, log_p);
        w = qbeta_newton_w(y, xinbta, a, la, logbeta, 1 - pp, 1 - qq, log_p);
        tx = isfinite(w) ? xinbta - w : xinbta;
    }
    // a quantile lies in [0, 1]: the last Newton step (or one of the search's, at shapes
    // such as 3e-18 and 3e-149 where R itself warns "not accurate") stepped out of it, to
    // 1346 or 7e139 where R gives 1: the nearest end is taken
    tx = fmin(fmax(tx, 0.), 1.);
    return swap_tail ? 1 - tx : tx;
}

#undef QBETA_USE_LOG_X_CUTOFF
#undef QBETA_N_NEWTON_FREE
#undef QBETA_DBL_very_MIN
#undef QBETA_DBL_log_v_MIN
#undef QBETA_fpu
#undef QBETA_acu_min
#undef QBETA_p_lo
#undef QBETA_p_hi

double qbeta(double alpha, double p, double q, int lower_tail, int log_p)
{
    double r = qbeta_r(alpha, p, q, lower_tail, log_p);
#ifdef DASKCL_ACCURACY_BEST
    if (p > 0. && q > 0. && isfinite(p) && isfinite(q)
        && (log_p ? alpha < 0. : (alpha > 0. && alpha < 1.))) {
        double best = qbeta_best_from(r, alpha, p, q, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's value)
            return best;
    }
#endif
    return r;
}

// The method of pbeta at the quantile (class functions: see pbeta.cl), which qbeta's Newton
// steps take: at the normal approximation of the quantile (mean and standard deviation of the
// beta distribution), kept inside (0, 1).
int qbeta_class(double alpha, double p, double q, int lower_tail, int log_p)
{
    if (isnan(alpha) || !(p > 0.0) || !(q > 0.0) || !isfinite(p) || !isfinite(q)
        || (log_p ? !(alpha < 0.0) : !(alpha > 0.0 && alpha < 1.0)))
        return 0;
    const double z = qnorm5(alpha, 0., 1., lower_tail, log_p), s = p + q;
    const double x = p / s + z * sqrt(p * q / (s * s * (s + 1.)));
    return pbeta_class(fmin(fmax(x, 1e-300), 1. - DBL_EPSILON), p, q, 1, 0);
}
