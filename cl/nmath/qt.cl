// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qt
// @depends: pt, dt, pbeta, lgammafn, qnorm, cospi, qpolish, dpq, rmath_constants, rmath_utils
// @source: G. W. Hill (1970), "Algorithm 396: Student's t-quantiles", Comm. ACM 13(10), 619-620,
//          and Hill (1981), "Remark on Algorithm 396", ACM TOMS 7, 250-251: the asymptotic
//          expansion about the normal quantile for moderate P and the power-series start
//          otherwise, followed by up to 10 steps of a two-term Taylor (Halley-like) correction
//          with pt and dt; exact forms for df = 1 (Cauchy: 1/tan(pi P/2)) and df = 2; df > 1e20
//          the normal quantile; df < 1 by bracketing and bisection of pt (as R does).  The
//          log-scale and far-tail extensions follow R (M. Maechler): when P underflows or
//          (d P)^(2/df) is below DBL_EPSILON the start is taken on the log scale.
//          Built with DASKCL_ACCURACY_BEST, |t| is then refined by Newton's method on the log of
//          pt's smaller tail (qpolish.cl): R's bisection for df < 1 stops short in the far tails
//          (and where it answers +-Inf for a quantile below DBL_MAX, the start is the tail's power law).
//          Near the centre (the smaller tail above 0.4), then by Newton's method on the central
//          mass I_{t^2 / (n + t^2)}(1/2, n/2) / 2 (A&S 26.7.1) against |P - 1/2| formed from p
//          unrounded: the tail's log, rounded, moves a t near 0 by 1e-13 relative.

// R's algorithm; built with DASKCL_ACCURACY_BEST, qt below refines its value
static double qt_r(double p, double ndf, int lower_tail, int log_p)
{
    const double eps = 1.e-12;
    double P, q;

    if (isnan(p) || isnan(ndf))
        return p + ndf;
    R_Q_P01_boundaries(p, ML_NEGINF, ML_POSINF);
    if (ndf <= 0)
        ML_WARN_return_NAN;

    if (ndf < 1) {
        // invert pt by bracketing and bisection
        const double accu = 1e-13;
        const double Eps = 1e-11; // (> accu)
        double ux, lx, nx, pp;
        int iter = 0;
        p = R_DT_qIv(p);
        if (p > 1 - DBL_EPSILON)
            return ML_POSINF;
        pp = fmin2(1 - DBL_EPSILON, p * (1 + Eps));
        for (ux = 1.; ux < DBL_MAX && pt(ux, ndf, 1, 0) < pp; ux *= 2)
            ;
        pp = p * (1 - Eps);
        for (lx = -1.; lx > -DBL_MAX && pt(lx, ndf, 1, 0) > pp; lx *= 2)
            ;
        do {
            nx = 0.5 * (lx + ux);
            if (pt(nx, ndf, 1, 0) > p)
                ux = nx;
            else
                lx = nx;
        } while ((ux - lx) / fabs(nx) > accu && ++iter < 1000);
        return 0.5 * (lx + ux);
    }

    if (ndf > 1e20)
        return qnorm5(p, 0., 1., lower_tail, log_p);

    P = R_D_qIv(p); // (if exp(p) underflows, that is handled below)
    int neg = (!lower_tail || P < 0.5) && (lower_tail || P > 0.5);
    int is_neg_lower = (lower_tail == neg);
    // P := 2 min(P', 1 - P'), the two-sided tail probability
    if (neg)
        P = 2 * (log_p ? (lower_tail ? P : -expm1(p)) : R_D_Lval(p));
    else
        P = 2 * (log_p ? (lower_tail ? -expm1(p) : P) : R_D_Cval(p));

    if (fabs(ndf - 2) < eps) {
        // df ~ 2: q = sqrt(2 / (P (2 - P)) - 2)
        if (P > DBL_MIN) {
            if (3 * P < DBL_EPSILON)
                q = 1 / sqrt(P);
            else if (P > 0.9)
                q = (1 - P) * sqrt(2 / (P * (2 - P)));
            else
                q = sqrt(2 / (P * (2 - P)) - 2);
        } else { // P << 1: q = 1 / sqrt(P)
            if (log_p)
                q = is_neg_lower ? exp(-p / 2) / M_SQRT2 : 1 / sqrt(-expm1(p));
            else
                q = ML_POSINF;
        }
    } else if (ndf < 1 + eps) {
        // df ~ 1: Cauchy
        if (P == 1.)
            q = 0;
        else if (P > 0)
            q = 1 / R_tanpi(P / 2.);
        else { // P = 0, perhaps from 2 exp(p) underflowing: 1/tan(e) ~ 1/e
            if (log_p)
                q = is_neg_lower ? M_1_PI * exp(-p) : -1. / (M_PI * expm1(p));
            else
                q = ML_POSINF;
        }
    } else {
        // the usual case (including df = 1.1): Hill's approximation
        double x = 0., y = 0., log_P2 = 0.;
        double a = 1 / (ndf - 0.5);
        double b = 48 / (a * a);
        double c = ((20700 * a / b - 98) * a - 16) * a + 96.36;
        double d = ((94.5 / (b + c) - 3) / b + 1) * sqrt(a * M_PI_2) * ndf;

        int P_ok1 = P > DBL_MIN || !log_p, P_ok = P_ok1;
        if (P_ok1) {
            y = pow(d * P, 2.0 / ndf);
            P_ok = (y >= DBL_EPSILON);
        }
        if (!P_ok) { // log_p and P tiny, or (d P)^(2/df) < eps: start on the log scale
            log_P2 = is_neg_lower ? R_D_log(p) : R_D_LExp(p); // log(P / 2)
            x = (log(d) + M_LN2 + log_P2) / ndf;
            y = exp(2 * x);
        }

        if ((ndf < 2.1 && P > 0.5) || y > 0.05 + a) {
            // asymptotic inverse expansion about the normal
            if (P_ok)
                x = qnorm5(0.5 * P, 0., 1., 1, 0);
            else // log_p and P underflowed
                x = qnorm5(log_P2, 0., 1., lower_tail, 1);
            y = x * x;
            if (ndf < 5)
                c += 0.3 * (ndf - 4.5) * (x + 0.6);
            c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c;
            y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x;
            y = expm1(a * y * y);
            q = sqrt(ndf * y);
        } else if (!P_ok && x < -M_LN2 * DBL_MANT_DIG) {
            // y above might underflow
            q = sqrt(ndf) * exp(-x);
        } else {
            // the power series start, re-using y
            y = ((1 / (((ndf + 6) / (ndf * y) - 0.089 * d - 0.822) * (ndf + 2) * 3)
                  + 0.5 / (ndf + 4)) * y - 1) * (ndf + 1) / (ndf + 2) + 1 / y;
            q = sqrt(ndf * y);
        }

        // two-term Taylor corrections (Hill 1981): q += x (1 + x g(q)) with
        // g(q) = q (df + 1) / (2 (q^2 + df)).  For df just above 1 and tiny P the quantile
        // reaches ~1e156, where q^2 and x q overflow and g would be Inf / Inf = NaN (daskcl
        // gave NaN for qt(3.95e-165, 1.054), R -3.1e155): beyond sqrt(DBL_MAX / 2) (less df)
        // g is taken in the equal form (df + 1) / (2 (q + df / q)); a step that still
        // overflows becomes a Newton step x, and the iteration stops where that overflows too.
        if (P_ok1) {
            const double q_big = fabs(sqrt(DBL_MAX / 2.) - ndf);
            int it = 0;
            while (it++ < 10 && (y = dt(q, ndf, 0)) > 0
                   && isfinite(x = (pt(q, ndf, 0, 0) - P / 2) / y) && fabs(x) > 1e-14 * fabs(q)) {
                const double g = (fabs(q) < q_big) ? q * (ndf + 1) / (2 * (q * q + ndf))
                                                   : (ndf + 1) / (2 * (q + ndf / q));
                const double step = x * (1. + x * g);
                if (isfinite(step) && isfinite(q + step))
                    q += step;
                else if (isfinite(q + x))
                    q += x;
                else
                    break;
            }
        }
    }
    if (neg)
        q = -q;
    return q;
}

double qt(double p, double ndf, int lower_tail, int log_p)
{
#ifdef DASKCL_ACCURACY_BEST
    double x = qt_r(p, ndf, lower_tail, log_p);
    const int inner = log_p ? (p < 0. && p > ML_NEGINF) : (p > 0. && p < 1.);
    if (!(isfinite(x) || (isinf(x) && inner && ndf > 0.)) || x == 0. || !isfinite(ndf)
        || isnan(p))
        return x;
    // the smaller tail: the upper one beyond |x|
    double lt = log_p ? p : log(p);
    if (lt > -M_LN2)
        lt = log_p ? R_Log1_Exp(p) : log1p(-p);
    if (isinf(x)) {
        // R's bisection for df < 1 gave up: start from the tail P(T > t) ~ C t^-n (A&S 26.7.1
        // integrated), log C = lgamma((n+1)/2) - lgamma(n/2) + (n/2 - 1) log n - log(pi)/2
        const double lt0 = (lgammafn(0.5 * (ndf + 1.)) - lgammafn(0.5 * ndf)
                            + (0.5 * ndf - 1.) * log(ndf) - M_LN_SQRT_PI - lt) / ndf;
        if (!(lt0 < M_LN2 * DBL_MAX_EXP))
            return x;
        x = (x > 0.) ? exp(lt0) : -exp(lt0);
    }
    double y = fabs(x);
#define QT_LOGP(t) pt(t, ndf, 0, 1)
#define QT_LOGD(t) dt(t, ndf, 1)
    Q_POLISH_POSITIVE(y, lt, 1, QT_LOGP, QT_LOGD);
#undef QT_LOGP
#undef QT_LOGD
    if (lt > -0.9 && ndf < 1e15) {
        // near the centre the tail's log is too coarse: Newton's method on the central mass
        // P(0 < T < y) = I_{y^2 / (n + y^2)}(1/2, n/2) / 2 = c, with c = |P - 1/2| from p
        // unrounded (log 2 in two parts: p + ln2_hi is exact, Sterbenz)
        const double c = log_p ? 0.5 * fabs(expm1((p + 0x1.62e42fefa39efp-1) + 0x1.abc9e3b39803fp-56))
                               : fabs(p - 0.5);
        if (c == 0.)
            y = 0.;
        for (int i = 0; i < 4 && y > 0.; i++) {
            const double y2 = y * y,
                         step = (0.5 * pbeta(y2 / (ndf + y2), 0.5, 0.5 * ndf, 1, 0) - c) / dt(y, ndf, 0);
            y -= step;
            if (!(fabs(step) > 1e-17 * y))
                break;
        }
    }
    return x < 0 ? -y : y;
#else
    return qt_r(p, ndf, lower_tail, log_p);
#endif
}
