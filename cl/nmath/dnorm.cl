// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnorm4
// @depends: dpq, rmath_constants, rmath_utils
// @source: the normal density exp(-z^2/2) / (sigma sqrt(2 pi)), z = (x - mu) / sigma; for
//          |z| >= 5, M. Welinder's splitting z = z1 + z2 with z1 a multiple of 2^-16 (R bug
//          report PR#15620) so that z1^2 is exact and exp(-z^2/2) keeps full relative accuracy.
//
// sigma = 0 is the point mass at mu (+Inf there, 0 elsewhere); sigma = +Inf gives 0; x = mu =
// +-Inf gives NaN (x - mu undefined; R returns it without warning); sigma < 0 gives NaN.
// Beyond |z| = sqrt(2 log 2 (1073)) = 38.57 the density underflows to 0.

double dnorm4(double x, double mu, double sigma, int give_log)
{
    if (isnan(x) || isnan(mu) || isnan(sigma))
        return x + mu + sigma;
    if (sigma < 0)
        ML_WARN_return_NAN;
    if (!isfinite(sigma))
        return R_D__0;
    if (!isfinite(x) && mu == x)
        return ML_NAN;   // x - mu is NaN
    if (sigma == 0)
        return (x == mu) ? ML_POSINF : R_D__0;

    double z = sigma == 1. ? x - mu : (x - mu) / sigma;   // dividing by 1 is exact: skipped
    if (!isfinite(z))
        return R_D__0;
    z = fabs(z);
    if (z >= 2 * sqrt(DBL_MAX))
        return R_D__0;
    if (give_log)
        return -(M_LN_SQRT_2PI + 0.5 * z * z + log(sigma));
    if (z < 5)
        return sigma == 1. ? M_1_SQRT_2PI * exp(-0.5 * z * z)
                           : M_1_SQRT_2PI * exp(-0.5 * z * z) / sigma;
    // below the smallest denormal for z > sqrt(-2 log 2 (DBL_MIN_EXP + 1 - DBL_MANT_DIG))
    if (z > sqrt(-2 * M_LN2 * (DBL_MIN_EXP + 1 - DBL_MANT_DIG)))
        return 0.;
    // z = z1 + z2, z1 = z rounded to a multiple of 2^-16, so z1 * z1 is exact
    double z1 = rint(z * 65536.) * 0x1p-16;   // exact scalings, as ldexp
    double z2 = z - z1;
    return M_1_SQRT_2PI / sigma * (exp(-0.5 * z1 * z1) * exp((-0.5 * z2 - z1) * z2));
}
