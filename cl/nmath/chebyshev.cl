// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: chebyshev_init, chebyshev_eval
// @depends: rmath_utils
// @source: W. Fullerton (1977), "Portable special function routines", in Portability of Numerical
//          Software, LNCS 57, 452-483 (the SLATEC routines INITDS and DCSEVL); the Clenshaw
//          (1955) recurrence for sums of Chebyshev polynomials.
//
// A Chebyshev series here is  f(x) = a[0]/2 + sum_{k>=1} a[k] T_k(x)  on [-1, 1], the convention
// of the SLATEC coefficient tables (gamma, lgammacor) that use it.  The tables live in __constant
// memory, hence the address space of the pointer arguments.

// The number of terms of the series `dos[0 .. nos-1]` needed for an error below `eta`: the
// index of the last coefficient at which the sum of the dropped |coefficients| first exceeds eta.
int chebyshev_init(__constant double *dos, int nos, double eta)
{
    if (nos < 1)
        return 0;
    double err = 0.;
    int i = 0;
    for (int ii = 1; ii <= nos; ii++) {
        i = nos - ii;
        err += fabs(dos[i]);
        if (err > eta)
            return i;
    }
    return i;
}

// The series `a[0 .. n-1]` at x, by Clenshaw's recurrence b_k = 2x b_{k+1} - b_{k+2} + a_k;
// NaN outside [-1.1, 1.1] or for an unreasonable number of terms.
double chebyshev_eval(double x, __constant double *a, const int n)
{
    if (n < 1 || n > 1000)
        ML_WARN_return_NAN;
    if (x < -1.1 || x > 1.1)
        ML_WARN_return_NAN;
    const double twox = x * 2;
    double b0 = 0., b1 = 0., b2 = 0.;
    for (int k = n - 1; k >= 0; k--) {
        b2 = b1;
        b1 = b0;
        b0 = twox * b1 - b2 + a[k];
    }
    return (b0 - b2) * 0.5;
}
