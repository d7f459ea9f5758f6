// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnorm5
// @depends: as241, dpq, rmath_utils
// @source: M. J. Wichura (1988), "Algorithm AS 241: The percentage points of the normal
//          distribution", Applied Statistics 37(3), 477-484 (PPND16, about 16 digits).
//
// The normal quantile.  With p the lower-tail probability and q = p - 1/2:
//   |q| <= 0.425:  z = q A(r) / B(r),  r = 0.180625 - q^2           (degree 7 / 7)
//   otherwise:     r = sqrt(-log(min(p, 1 - p))),
//                  r <= 5:  z = C(r - 1.6) / D(r - 1.6)             (degree 7 / 7)
//                  r > 5:   z = E(r - 5) / F(r - 5)                 (degree 7 / 7)
//                  r >= 816 (log scale only): z = sqrt(2) r, the leading term of the asymptotic
//                           expansion z^2 ~ -2 log p (as R >= 4.1 does)
//                  with the sign of q.
// On the log scale, log(min(p, 1 - p)) is the argument itself whenever it is the smaller tail,
// so that tails far below the smallest double (log p = -1e5, say) still give finite quantiles.
// p = 0 and 1 give -+Inf, p outside [0, 1] NaN, sd = 0 the mean, sd < 0 NaN.
// Built with DASKCL_ACCURACY_BEST, q = p - 1/2 in the central range is taken without rounding
// through p: 1/2 - p for an upper-tail p, and from log p = lp, q = +-expm1(lp + log 2) / 2
// with log 2 in two parts (R rounds exp(lp) or 1 - p first, which costs q its relative
// accuracy where the quantile is small).

// coefficient k of range r's polynomial (Horner's rule, c[7] first)
#define QNORM_COEF(c0, c1, c2, r, k) ((r) == 0 ? c0[k] : (r) == 1 ? c1[k] : c2[k])

double qnorm5(double p, double mu, double sigma, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(mu) || isnan(sigma))
        return p + mu + sigma;
    R_Q_P01_boundaries(p, ML_NEGINF, ML_POSINF);
    if (sigma < 0)
        ML_WARN_return_NAN;
    if (sigma == 0)
        return mu;

    double p_ = R_DT_qIv(p);   // the lower-tail probability
    double q = p_ - 0.5;
#ifdef DASKCL_ACCURACY_BEST
    if (fabs(q) <= .425) {
        // log 2 in two parts (Cody & Waite 1980): lp + LN2_HI is exact near lp = -log 2
        const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
        if (log_p)
            q = expm1((p + LN2_HI) + LN2_LO) / 2;
        else if (!lower_tail)
            q = 0.5 - p;
        if (log_p && !lower_tail)
            q = -q;
    }
#endif
    // The range: 0 central, 1 tail with r <= 5, 2 tail beyond, 3 the asymptotic term.  The
    // three rational functions share one evaluation (coefficients chosen by a select at fixed
    // indices), so that a GPU warp whose elements fall in different ranges evaluates one
    // rational function, not three; each element's operations are those of its own range.
    int range = 0;
    double t, m = 1.;
    if (fabs(q) <= .425) {
        t = .180625 - q * q;
        m = q;
    } else {
        // -log of the smaller tail, taken from the argument itself when that is its log
        double lsmall;
        if (log_p && ((lower_tail && q <= 0) || (!lower_tail && q > 0)))
            lsmall = p;
        else
            lsmall = log((q > 0) ? R_DT_CIv(p) : p_);
        t = sqrt(-lsmall);
        // r >= 816 only on the log scale (log p < -665856): the leading term sqrt(-2 log p) of
        // the asymptotic expansion, better there than E/F (which tends to a constant)
        range = t <= 5. ? 1 : t >= 816 ? 3 : 2;
        if (range == 1)
            t += -1.6;
        else if (range == 2)
            t += -5.;
    }
    double val;
    if (range == 3) {
        val = t * M_SQRT2;
    } else {
        double num = QNORM_COEF(as241_a, as241_c, as241_e, range, 7);
        double den = QNORM_COEF(as241_b, as241_d, as241_f, range, 7);
#pragma unroll
        for (int k = 6; k >= 0; k--) {
            num = num * t + QNORM_COEF(as241_a, as241_c, as241_e, range, k);
            den = den * t + QNORM_COEF(as241_b, as241_d, as241_f, range, k);
        }
        val = m * num / den;
    }
    if (range > 0 && q < 0.0)
        val = -val;
    return mu + sigma * val;
}
