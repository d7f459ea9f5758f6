// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: ISNAN, R_FINITE, R_forceint, R_nonint, R_IS_INT, fmax2, fmin2, imax2, imin2, fsign, R_pow, R_pow_di, ML_WARN_return_NAN
// @depends: rmath_constants
//
// The R-compatibility helpers every Mathlib unit may use.
//
// Semantics follow R's documented behaviour (R Internals / Writing R Extensions, section
// "Numerical analysis subroutines"): fmax2/fmin2 return NaN when either argument is NaN
// (unlike OpenCL's fmax/fmin, which return the non-NaN argument); R_forceint rounds half to
// even as C99 nearbyint does; R_nonint tolerates a relative 1e-7 (R's documented fuzz for
// "non-integer x" checks); R_pow follows R's R_pow: 1 when y == 0 or x == 1, and pow otherwise
// with R's conventions for zero and infinite arguments.
//
// Warnings: OpenCL has no way to print, and daskcl keeps no mutable global state in device
// code. A unit that would, in R, "warn and return NaN" simply returns NaN (ML_WARN_return_NAN);
// the elementwise kernels count NaN results whose inputs were not NaN and the host raises one
// RuntimeWarning per call saying how many (see daskcl/_elementwise.py).

#define ISNAN(x)      isnan(x)
#define R_FINITE(x)   isfinite(x)
#define R_forceint(x) rint(x)
#define R_nonint(x)   (fabs((x) - R_forceint(x)) > 1e-7 * fmax(1., fabs(x)))
#define R_IS_INT(x)   (!R_nonint(x))
#define ML_WARN_return_NAN return ML_NAN

static inline double fmax2(double x, double y)
{
    if (isnan(x) || isnan(y)) return x + y;
    return (x < y) ? y : x;
}

static inline double fmin2(double x, double y)
{
    if (isnan(x) || isnan(y)) return x + y;
    return (x < y) ? x : y;
}

static inline int imax2(int x, int y) { return (x < y) ? y : x; }
static inline int imin2(int x, int y) { return (x < y) ? x : y; }

// |x| with the sign of y (R's fsign); NaN if either is NaN.
static inline double fsign(double x, double y)
{
    if (isnan(x) || isnan(y)) return x + y;
    return (y >= 0) ? fabs(x) : -fabs(x);
}

// x^n for integer n by binary powering, as R's R_pow_di (exact for small n).
static inline double R_pow_di(double x, int n)
{
    double pow_ = 1.0;
    if (isnan(x)) return x;
    if (n != 0) {
        if (!isfinite(x)) return pow(x, (double)n);
        int neg = n < 0;
        if (neg) n = -n;
        for (;;) {
            if (n & 01) pow_ *= x;
            if (n >>= 1) x *= x; else break;
        }
        if (neg) pow_ = 1. / pow_;
    }
    return pow_;
}

// x^y with R's conventions (R_pow): 1 if y == 0 or x == 1; 0^y is 0, Inf or NaN by the sign
// of y; (-Inf)^y for integer y keeps the sign of odd powers.
static inline double R_pow(double x, double y)
{
    if (x == 1. || y == 0.) return 1.;
    if (x == 0.) {
        if (y > 0.) return 0.;
        else if (y < 0) return ML_POSINF;
        else return y; /* NaN */
    }
    if (isfinite(x) && isfinite(y)) {
        if (y == 2.0) return x * x;
        return pow(x, y);
    }
    if (isnan(x) || isnan(y)) return x + y;
    if (!isfinite(x)) {
        if (x > 0) return (y < 0.) ? 0. : ML_POSINF;
        else {
            if (isfinite(y) && y == floor(y))
                return (y < 0.) ? 0. : (fmod(y, 2.) != 0 ? x : -x);
        }
    }
    if (!isfinite(y)) {
        if (x >= 0) {
            if (y > 0) return (x >= 1) ? ML_POSINF : 0.;
            else return (x < 1) ? ML_POSINF : 0.;
        }
    }
    return ML_NAN;
}
