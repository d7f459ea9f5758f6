// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: Q_POLISH_POSITIVE
// @depends:
// @source: Newton's method on the log of a tail probability against the log of the quantile
//          (the log-scale steps of qgamma since R 2.2, M. Welinder and M. Maechler), for
//          DASKCL_ACCURACY_BEST.
//
// Q_POLISH_POSITIVE(x, LT, UP, LOGP, LOGD) refines a positive quantile x in place: LT is the
// log of the target probability of the smaller tail (the upper one if UP), LOGP(y) and LOGD(y)
// name function-like macros giving that tail's log probability and the log density at y.  With
// g = LOGP(x) - LT and r = x f(x) / P(x) (the derivative of log P in log x), a step is
// x (1 -+ g / r), or x exp(-+ g / r) where |g / r| >= 1/2; it stops when a step does not
// reduce |g| (the start is kept where the first does not), so it never makes x worse.

#define Q_POLISH_POSITIVE(x, LT, UP, LOGP, LOGD)                                            \
    do {                                                                                   \
        double qp_lp = LOGP(x), qp_g = qp_lp - (LT);                                       \
        for (int qp_i = 0; qp_i < 40 && isfinite(qp_g) && qp_g != 0.; qp_i++) {            \
            double qp_s = qp_g / exp(LOGD(x) + log(x) - qp_lp);                            \
            if (!isfinite(qp_s))                                                           \
                break;                                                                     \
            if (!(UP))                                                                     \
                qp_s = -qp_s;                                                              \
            double qp_t = fabs(qp_s) < 0.5 ? (x) * (1. + qp_s) : (x) * exp(qp_s);          \
            double qp_lt = LOGP(qp_t), qp_gt = qp_lt - (LT);                               \
            if (!(qp_t > 0. && isfinite(qp_t) && fabs(qp_gt) < fabs(qp_g)))                \
                break;                                                                     \
            (x) = qp_t;                                                                    \
            qp_lp = qp_lt;                                                                 \
            qp_g = qp_gt;                                                                  \
        }                                                                                  \
    } while (0)
