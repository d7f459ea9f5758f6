// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: R_cospi, R_sinpi, R_tanpi
// @depends: rmath_utils
// @source: the trigonometric functions of pi x with exact period reduction (IEEE 754-2008,
//          section 9.2, "cosPi", "sinPi", "tanPi"); R's values at the special points.
//
// cos(pi x), sin(pi x) and tan(pi x).  The argument is reduced with fmod, which is exact, so
// large arguments keep their accuracy, and the values at integers, half integers (and
// quarter integers for tan) are exact, as in R: sin(pi k) = 0, cos(pi (k + 1/2)) = 0,
// tan(pi/4) = 1, and tan(pi/2) is NaN (R's choice: the pole has no sign).  +-Inf gives NaN.
// The names carry the prefix R_ because cospi, sinpi and tanpi are OpenCL C built-ins.

double R_cospi(double x)
{
    if (isnan(x))
        return x;
    if (!isfinite(x))
        ML_WARN_return_NAN;
    double r = fmod(fabs(x), 2.);   // cos is even and 2-periodic: r in [0, 2)
    if (fmod(r, 1.) == 0.5)
        return 0.;
    if (r == 1.)
        return -1.;
    if (r == 0.)
        return 1.;
    return cos(M_PI * r);
}

double R_sinpi(double x)
{
    if (isnan(x))
        return x;
    if (!isfinite(x))
        ML_WARN_return_NAN;
    double r = fmod(x, 2.);         // r in (-2, 2), then moved to (-1, 1]
    if (r <= -1)
        r += 2.;
    else if (r > 1.)
        r -= 2.;
    if (r == 0. || r == 1.)
        return 0.;
    if (r == 0.5)
        return 1.;
    if (r == -0.5)
        return -1.;
    return sin(M_PI * r);
}

double R_tanpi(double x)
{
    if (isnan(x))
        return x;
    if (!isfinite(x))
        ML_WARN_return_NAN;
    double r = fmod(x, 1.);         // r in (-1, 1), then moved to (-1/2, 1/2]
    if (r <= -0.5)
        r++;
    else if (r > 0.5)
        r--;
    if (r == 0.)
        return 0.;
    if (r == 0.5)
        return ML_NAN;
    if (r == 0.25)
        return 1.;
    if (r == -0.25)
        return -1.;
    return tan(M_PI * r);
}
