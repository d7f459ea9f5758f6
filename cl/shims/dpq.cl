// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: give_log, R_D__0, R_D__1, R_DT_0, R_DT_1, R_D_half, R_D_Lval, R_D_Cval, R_D_val, R_D_qIv, R_D_exp, R_D_log, R_D_Clog, R_Log1_Exp, R_D_LExp, R_DT_val, R_DT_Cval, R_DT_qIv, R_DT_CIv, R_DT_exp, R_DT_Cexp, R_DT_log, R_DT_Clog, R_DT_Log, R_D_fexp, R_Q_P01_check, R_Q_P01_boundaries, R_P_bounds_01, R_P_bounds_Inf_01, R_D_negInonint, R_D_nonint_check
// @depends: rmath_utils
//
// The "d/p/q" conventions of R's Mathlib as macros: every density takes a flag `log_p`
// (spelled `give_log` in density code, an alias), every distribution and quantile function
// takes `lower_tail` and `log_p`, and these macros express values and boundary results in
// whichever of the four scales the flags select.  They read the variables `log_p` and
// `lower_tail` of the calling function by name, exactly as R's own dpq conventions do
// (documented in R's nmath/dpq.h and in "Writing R Extensions", 6.7.1).  Each macro is
// written here from that documented meaning:
//
//   R_D__0, R_D__1     0 and 1 on the density / probability scale (log scale if log_p)
//   R_DT_0, R_DT_1     0 and 1 of the *tail* asked for (lower_tail swaps them)
//   R_D_val(x)         x, put on the requested scale;    R_D_Clog(p): 1 - p likewise
//   R_DT_val(x)        x is a lower-tail probability; give the requested tail and scale
//   R_DT_qIv(p)        p on the requested tail/scale -> lower-tail probability, natural scale
//   R_DT_CIv(p)        likewise -> upper-tail probability, natural scale
//   R_Log1_Exp(x)      log(1 - exp(x)) for x <= 0, accurately (Maechler 2012, "Accurately
//                      computing log(1 - exp(-|a|))", the Rmpfr vignette)

#define give_log log_p

#define R_D__0   (log_p ? ML_NEGINF : 0.)
#define R_D__1   (log_p ? 0. : 1.)
#define R_DT_0   (lower_tail ? R_D__0 : R_D__1)
#define R_DT_1   (lower_tail ? R_D__1 : R_D__0)
#define R_D_half (log_p ? -M_LN2 : 0.5)

#define R_D_Lval(p) (lower_tail ? (p) : (0.5 - (p) + 0.5))
#define R_D_Cval(p) (lower_tail ? (0.5 - (p) + 0.5) : (p))

#define R_D_val(x)  (log_p ? log(x) : (x))
#define R_D_qIv(p)  (log_p ? exp(p) : (p))
#define R_D_exp(x)  (log_p ? (x) : exp(x))
#define R_D_log(p)  (log_p ? (p) : log(p))
#define R_D_Clog(p) (log_p ? log1p(-(p)) : (0.5 - (p) + 0.5))

#define R_Log1_Exp(x) ((x) > -M_LN2 ? log(-expm1(x)) : log1p(-exp(x)))
#define R_D_LExp(x)   (log_p ? R_Log1_Exp(x) : log1p(-x))

#define R_DT_val(x)  (lower_tail ? R_D_val(x) : R_D_Clog(x))
#define R_DT_Cval(x) (lower_tail ? R_D_Clog(x) : R_D_val(x))

#define R_DT_qIv(p) (log_p ? (lower_tail ? exp(p) : -expm1(p)) : R_D_Lval(p))
#define R_DT_CIv(p) (log_p ? (lower_tail ? -expm1(p) : exp(p)) : R_D_Cval(p))

#define R_DT_exp(x)  R_D_exp(R_D_Lval(x))
#define R_DT_Cexp(x) R_D_exp(R_D_Cval(x))

#define R_DT_log(p)  (lower_tail ? R_D_log(p) : R_D_LExp(p))
#define R_DT_Clog(p) (lower_tail ? R_D_LExp(p) : R_D_log(p))
#define R_DT_Log(p)  (lower_tail ? (p) : R_Log1_Exp(p))

// exp(x) / sqrt(f) on the density scale, without overflow in the log case
#define R_D_fexp(f, x) (give_log ? -0.5 * log(f) + (x) : exp(x) / sqrt(f))

// A probability argument of a quantile function outside [0, 1] (or > 0 on the log scale)
#define R_Q_P01_check(p)                                        \
    if ((log_p && (p) > 0) || (!log_p && ((p) < 0 || (p) > 1))) \
        ML_WARN_return_NAN

// The quantile at p = 0 and p = 1 of a distribution with support [LEFT, RIGHT]
#define R_Q_P01_boundaries(p, LEFT, RIGHT)                  \
    if (log_p) {                                            \
        if ((p) > 0) ML_WARN_return_NAN;                    \
        if ((p) == 0) return lower_tail ? (RIGHT) : (LEFT); \
        if ((p) == ML_NEGINF) return lower_tail ? (LEFT) : (RIGHT); \
    } else {                                                \
        if ((p) < 0 || (p) > 1) ML_WARN_return_NAN;         \
        if ((p) == 0) return lower_tail ? (LEFT) : (RIGHT); \
        if ((p) == 1) return lower_tail ? (RIGHT) : (LEFT); \
    }

// The distribution function at or beyond the ends of the support
#define R_P_bounds_01(x, x_min, x_max) \
    if ((x) <= (x_min)) return R_DT_0; \
    else if ((x) >= (x_max)) return R_DT_1

#define R_P_bounds_Inf_01(x)        \
    if (!isfinite(x)) {             \
        if ((x) > 0) return R_DT_1; \
        return R_DT_0;              \
    }

// Discrete densities: a negative or non-integer x has mass 0 (R also warns for non-integer x;
// the elementwise kernel counts those cases from the argument, see the table's `nonint`).
#define R_D_negInonint(x) ((x) < 0. || R_nonint(x))
#define R_D_nonint_check(x) \
    if (R_nonint(x)) return R_D__0
