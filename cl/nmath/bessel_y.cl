// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_y
// @depends: bessel_y_core, bessel_j_core, cospi, rmath_utils
// @source: Abramowitz & Stegun 9.1.2: Y_{-nu}(x) = sin(nu pi) J_nu(x) + cos(nu pi) Y_nu(x);
//          the cores are Cody's RYBESL and RJBESL (see bessel_y_core.cl, bessel_j_core.cl).
//
// Y_nu(x) for x >= 0 and real nu.  Negative orders use the reflection formula through the two
// cycle-free cores for nu >= 0 (R's bessel_y and bessel_j call each other for negative orders;
// see bessel_j_core.cl).  The cosine term is dropped at half-integer nu and the sine term at
// integer nu, where they vanish.  As in R: NaN for x < 0 and for nu > 1e7 ("nu too large for
// the bessel_y() algorithm").

#define BESSEL_Y_NU_MAX 1e7

double bessel_y(double x, double alpha)
{
    if (isnan(x) || isnan(alpha))
        return x + alpha;
    if (x < 0)
        ML_WARN_return_NAN;
    double na = floor(alpha);
    if (alpha < 0) {
        if (-alpha > BESSEL_Y_NU_MAX)
            ML_WARN_return_NAN;
        return ((alpha - na == 0.5) ? 0 : bessel_y_nonneg(x, -alpha) * R_cospi(alpha)) -
               ((alpha == na) ? 0 : bessel_j_nonneg(x, -alpha) * R_sinpi(alpha));
    }
    if (alpha > BESSEL_Y_NU_MAX)
        ML_WARN_return_NAN;
    return bessel_y_nonneg(x, alpha);
}

#undef BESSEL_Y_NU_MAX
