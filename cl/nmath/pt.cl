// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pt
// @depends: pbeta, lbeta, pnorm, dpq
// @source: P(|T| > |x|) = I_{n/(n+x^2)}(n/2, 1/2) (Abramowitz & Stegun 26.7.1 and 26.5.27), by
//          TOMS 708 (pbeta) on the better-conditioned of the two complementary arguments; for
//          x^2 > 1e100 n the first term of the series, A&S 26.5.4:
//          I_z(a, b) ~ z^a / (a B(a, b)); n = Inf is the normal distribution.  Works for every
//          real n > 0, including non-integers and huge n.

NMATH_NOINLINE double pt(double x, double n, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(n))
        return x + n;
    if (n <= 0.0)
        ML_WARN_return_NAN;
    if (!isfinite(x))
        return (x < 0) ? R_DT_0 : R_DT_1;
    if (!isfinite(n))
        return pnorm5(x, 0.0, 1.0, lower_tail, log_p);

    // val = P(|T| > |x|), on the log scale if log_p
    double val;
    double nx = 1 + (x / n) * x;
    if (nx > 1e100) { // x^2 > 1e100 n: the leading term, on the log scale (no underflow)
        double lval = -0.5 * n * (2 * log(fabs(x)) - log(n)) - lbeta(0.5 * n, 0.5) - log(0.5 * n);
        val = log_p ? lval : exp(lval);
    } else {
        // one call of pbeta, not one per branch (a GPU warp would run both inlined copies)
        const int central = n > x * x;
        val = pbeta(central ? x * x / (n + x * x) : 1. / nx, central ? 0.5 : n / 2.,
                    central ? n / 2. : 0.5, !central, log_p);
    }
    // P(T <= x) = 1 - val/2 for x > 0 (lower tail), val/2 otherwise
    if (x <= 0.)
        lower_tail = !lower_tail;
    if (log_p) {
        if (lower_tail)
            return log1p(-0.5 * exp(val));
        return val - M_LN2;
    }
    val /= 2.;
    return R_D_Cval(val);
}
