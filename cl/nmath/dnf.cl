// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnf
// @depends: dnbeta, dnchisq, dgamma, dpq, rmath_utils
// @source: the noncentral F density through the noncentral beta one: with y = (df1 / df2) x,
//          f(x; df1, df2, ncp) = dnbeta(y / (1 + y); df1/2, df2/2, ncp) (df1 / df2) / (1 + y)^2;
//          the limits df2 = Inf (df1 dnchisq(df1 x; df1, ncp)) and df1 > 1e14 with ncp < 1e7
//          (a gamma density in 1 / x), as R.
//
// dnf(x, df1, df2, ncp): NaN for df1, df2 <= 0, ncp < 0 or ncp = Inf; 0 for x < 0.

double dnf(double x, double df1, double df2, double ncp, int give_log)
{
    if (isnan(x) || isnan(df1) || isnan(df2) || isnan(ncp))
        return x + df2 + df1 + ncp;
    if (df1 <= 0. || df2 <= 0. || ncp < 0)
        ML_WARN_return_NAN;
    if (x < 0.)
        return R_D__0;
    if (!isfinite(ncp))
        ML_WARN_return_NAN;
    if (!isfinite(df1) && !isfinite(df2)) {   // both +Inf
        if (x == 1.)
            return ML_POSINF;
        return R_D__0;
    }
    if (!isfinite(df2))   // df2 = +Inf
        return df1 * dnchisq(x * df1, df1, ncp, give_log);
    if (df1 > 1e14 && ncp < 1e7) {
        // includes df1 = +Inf, where the formula below is inaccurate
        double f = 1 + ncp / df1;   // assumes ncp << df1
        double z = dgamma(1. / x / f, df2 / 2, 2. / df2, give_log);
        return give_log ? z - 2 * log(x) - log(f) : z / (x * x) / f;
    }
    double y = (df1 / df2) * x;
    // For y > 1 (x = y / (1 + y) > 1/2) 1 - x is passed as 1 / (1 + y): R's 1 - x keeps only
    // the digits that the rounding of x left, and the density depends on it through
    // x^(df1/2 + k) = exp((df1/2 + k) log1p(-(1 - x))), about df1 1e-16 relative:
    // dnf(0.5, d, 2, d) is e^-4 8 = 0.1465 in the limit, and gave 0.1470 at d = 1e14, 0.094 at
    // 1e16 and 8 from 1e17 (y / (1 + y) = 1; R: 0 from d = 1e10); at d = 1e7 it was off by
    // 2.8e-10 as R is, now 5e-13 (40-digit sums).  For y <= 1, R's own arithmetic.
    double z = y > 1 ? dnbeta_c(y / (1 + y), 1 / (1 + y), df1 / 2., df2 / 2., ncp, give_log)
                     : dnbeta(y / (1 + y), df1 / 2., df2 / 2., ncp, give_log);
    return give_log ? z + log(df1) - log(df2) - 2 * log1p(y) : z * (df1 / df2) / (1 + y) / (1 + y);
}
