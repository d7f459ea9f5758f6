// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qchisq_appr, qgamma, qgamma_class
// @depends: pgamma, dgamma, qnorm, lgammafn, lgamma1p, dpq, rmath_utils
// @source: D. J. Best & D. E. Roberts (1975), "Algorithm AS 91: The percentage points of the
//          chi-squared distribution", Appl. Statist. 24, 385-388 (starting value and its
//          seven-term Taylor iteration); E. B. Wilson & M. M. Hilferty (1931) for the starting
//          value at moderate p; then Newton steps on the log scale, as R does since 2.2
//          (M. Welinder, R bug report PR#2214, and M. Maechler).
//
// qchisq_appr(p, nu, g = lgamma(nu/2), ...) is AS 91's starting approximation to the
// chi-squared quantile (three regimes: small chi-squared, Wilson-Hilferty, small nu).
// qgamma refines it by the AS 91 iteration to relative 5e-7, unless p is extreme
// (p < 1e-100 or p > 1 - 1e-14 on the lower tail) or the start is tiny, and then takes up to
// 1 (resp. 7 for shape < 1e-10, 20 or 27 on the fallbacks) Newton steps in x for
// log P(x) - log p, stopping when |delta log p| < 1e-15 |log p| or a step does not improve.
// Built with DASKCL_ACCURACY_BEST, p is first taken in its smaller tail (1 - p exactly, or
// log(1 - e^lp) on the log scale, for p above 1/2), where the Newton steps on log P keep their
// relative accuracy (R's on log P(x) near 0 stall in the far upper tail), and at least three
// Newton steps are taken, on until one does not improve.

// AS 91's starting value
NMATH_NOINLINE double qchisq_appr(double p, double nu, double g, int lower_tail, int log_p, double tol)
{
    const double C7 = 4.67, C8 = 6.66, C9 = 6.73, C10 = 13.32;
    if (isnan(p) || isnan(nu))
        return p + nu;
    R_Q_P01_check(p);
    if (nu <= 0)
        ML_WARN_return_NAN;

    double alpha = 0.5 * nu; // the gamma shape
    double c = alpha - 1;
    double ch, p1 = R_DT_log(p);
    if (nu < (-1.24) * p1) {
        // small chi-squared; log(alpha gamma(alpha)) via lgamma1p for small alpha
        double lgam1pa = (alpha < 0.5) ? lgamma1p(alpha) : (log(alpha) + g);
        ch = exp((lgam1pa + p1) / alpha + M_LN2);
    } else if (nu > 0.32) {
        // Wilson and Hilferty
        double x = qnorm5(p, 0, 1, lower_tail, log_p);
        p1 = 2. / (9 * nu);
        ch = nu * pow(x * sqrt(p1) + 1 - p1, 3);
        if (ch > 2.2 * nu + 6) // p tending to 1
            ch = -2 * (R_DT_Clog(p) - c * log(0.5 * ch) + g);
    } else {
        // small nu: 1.24 * (-log p) <= nu <= 0.32
        ch = 0.4;
        double a = R_DT_Clog(p) + g + c * M_LN2, q;
        do {
            q = ch;
            p1 = 1. / (1 + ch * (C7 + ch));
            double p2 = ch * (C9 + ch * (C8 + ch));
            double t = -0.5 + (C7 + 2 * ch) * p1 - (C9 + ch * (C10 + 3 * ch)) / p2;
            ch -= (1 - exp(a + 0.5 * ch) * p2 * p1) / t;
        } while (fabs(q - ch) > tol * fabs(ch));
    }
    return ch;
}

double qgamma(double p, double alpha, double scale, int lower_tail, int log_p)
{
    const double EPS1 = 1e-2;  // tolerance of the starting value
    const double EPS2 = 5e-7;  // final precision of AS 91
#ifdef DASKCL_ACCURACY_BEST
    const double EPS_N = 1e-18; // on until a step does not improve (1e-15 of log p leaves
                                // 1e-15 |log p| / shape relative in x)
#else
    const double EPS_N = 1e-15; // precision of the Newton steps
#endif
    const int MAXIT = 1000;
    const double pMIN = 1e-100, pMAX = (1 - 1e-14);
    const double i420 = 1. / 420., i2520 = 1. / 2520., i5040 = 1. / 5040;

    if (isnan(p) || isnan(alpha) || isnan(scale))
        return p + alpha + scale;
    R_Q_P01_boundaries(p, 0., ML_POSINF);
    if (alpha < 0 || scale <= 0)
        ML_WARN_return_NAN;
    if (alpha == 0) // all mass at 0
        return 0.;

#ifdef DASKCL_ACCURACY_BEST
    if (log_p ? p > -M_LN2 : p > 0.5) {
        p = log_p ? R_Log1_Exp(p) : 0.5 - p + 0.5;
        lower_tail = !lower_tail;
    }
#endif
    int max_it_Newton = (alpha < 1e-10) ? 7 : 1;
    double p_ = R_DT_qIv(p); // lower-tail probability
    double g = lgammafn(alpha);

    // Phase I: the starting approximation
    double ch = qchisq_appr(p, 2 * alpha, g, lower_tail, log_p, EPS1);
    if (!isfinite(ch)) {
        max_it_Newton = 0;
    } else if (ch < EPS2 || p_ > pMAX || p_ < pMIN) {
        max_it_Newton = 20;
    } else {
        // Phase II: AS 91's iteration, pgamma and a seven-term Taylor series
        double c = alpha - 1;
        double s6 = (120 + c * (346 + 127 * c)) * i5040;
        double ch0 = ch;
        for (int i = 1; i <= MAXIT; i++) {
            double q = ch;
            double p1 = 0.5 * ch;
            double p2 = p_ - pgamma_raw(p1, alpha, 1, 0);
            if (!isfinite(p2) || ch <= 0) {
                ch = ch0;
                max_it_Newton = 27;
                break;
            }
            double t = p2 * exp(alpha * M_LN2 + g + p1 - c * log(ch));
            double b = t / ch;
            double a = 0.5 * t - b * c;
            double s1 = (210 + a * (140 + a * (105 + a * (84 + a * (70 + 60 * a))))) * i420;
            double s2 = (420 + a * (735 + a * (966 + a * (1141 + 1278 * a)))) * i2520;
            double s3 = (210 + a * (462 + a * (707 + 932 * a))) * i2520;
            double s4 = (252 + a * (672 + 1182 * a) + c * (294 + a * (889 + 1740 * a))) * i5040;
            double s5 = (84 + 2264 * a + c * (1175 + 606 * a)) * i2520;
            ch += t * (1 + 0.5 * t * s1
                       - b * c * (s1 - b * (s2 - b * (s3 - b * (s4 - b * (s5 - b * s6))))));
            if (fabs(q - ch) < EPS2 * ch)
                break;
            if (fabs(q - ch) > 0.1 * ch) // diverging? (also keeps ch > 0)
                ch = (ch < q) ? 0.9 * q : 1.1 * q;
        }
        // (no convergence in MAXIT steps: the Newton steps follow all the same)
    }

    double x = 0.5 * scale * ch;
#ifdef DASKCL_ACCURACY_BEST
    if (max_it_Newton)
        max_it_Newton = max(max_it_Newton, 3);
#endif
    if (max_it_Newton) {
        // Newton steps, always on the log scale
        if (!log_p) {
            p = log(p);
            log_p = 1;
        }
        if (x == 0) {
            const double _1_p = 1. + 1e-7;
            const double _1_m = 1. - 1e-7;
            x = DBL_MIN;
            p_ = pgamma(x, alpha, scale, lower_tail, log_p);
            if ((lower_tail && p_ > p * _1_p) || (!lower_tail && p_ < p * _1_m))
                return 0.;
            // else continue from x = DBL_MIN
        } else {
            p_ = pgamma(x, alpha, scale, lower_tail, log_p);
        }
        if (p_ == ML_NEGINF)
            return 0;
        for (int i = 1; i <= max_it_Newton; i++) {
            double p1 = p_ - p;
            if (fabs(p1) < fabs(EPS_N * p))
                break;
            double d = dgamma(x, alpha, scale, log_p);
            if (d == R_D__0)
                break;
            // delta x = f / f' with f = log P(x) - p, f' = P'/P
            double t = log_p ? p1 * exp(p_ - d) : p1 / d;
            t = lower_tail ? x - t : x + t;
            p_ = pgamma(t, alpha, scale, lower_tail, log_p);
            if (fabs(p_ - p) > fabs(p1) || (i > 1 && fabs(p_ - p) == fabs(p1)))
                break; // no improvement (or flip-flop)
            x = t;
        }
    }
    return x;
}
// The method of pgamma at the quantile (class functions: see pbeta.cl), which most of qgamma's
// Newton steps take: at the Wilson-Hilferty approximation of the quantile.
int qgamma_class(double p, double alpha, double scale, int lower_tail, int log_p)
{
    if (isnan(p) || !(alpha > 0.0) || !isfinite(alpha) || !(scale > 0.0)
        || (log_p ? !(p < 0.0) : !(p > 0.0 && p < 1.0)))
        return 0;
    const double z = qnorm5(p, 0., 1., lower_tail, log_p), c = 1. / (9. * alpha);
    const double w = 1. - c + z * sqrt(c);
    return pgamma_raw_class(fmax(alpha * w * w * w, DBL_MIN), alpha);
}

