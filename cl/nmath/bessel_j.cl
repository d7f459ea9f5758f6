// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: bessel_j
// @depends: bessel_j_core, bessel_y_core, cospi, rmath_utils
// @source: Abramowitz & Stegun 9.1.2: J_{-nu}(x) = cos(nu pi) J_nu(x) - sin(nu pi) Y_nu(x);
//          the cores are Cody's RJBESL and RYBESL (see bessel_j_core.cl, bessel_y_core.cl).
//
// J_nu(x) for x >= 0 and real nu.  Negative orders use the reflection formula through the two
// cycle-free cores for nu >= 0 (R's bessel_j and bessel_y call each other for negative orders;
// see bessel_j_core.cl).  The cosine term is dropped at half-integer nu and the sine term at
// integer nu, where they vanish.  As in R: NaN for x < 0 and for nu > 1e7 ("nu too large for
// the bessel_j() algorithm").

#define BESSEL_J_NU_MAX 1e7

double bessel_j(double x, double alpha)
{
    if (isnan(x) || isnan(alpha))
        return x + alpha;
    if (x < 0)
        ML_WARN_return_NAN;
    double na = floor(alpha);
    if (alpha < 0) {
        if (-alpha > BESSEL_J_NU_MAX)
            ML_WARN_return_NAN;
        return ((alpha - na == 0.5) ? 0 : bessel_j_nonneg(x, -alpha) * R_cospi(alpha)) +
               ((alpha == na) ? 0 : bessel_y_nonneg(x, -alpha) * R_sinpi(alpha));
    }
    if (alpha > BESSEL_J_NU_MAX)
        ML_WARN_return_NAN;
    return bessel_j_nonneg(x, alpha);
}

#undef BESSEL_J_NU_MAX
