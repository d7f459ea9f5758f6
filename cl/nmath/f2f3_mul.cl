// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: f2f3_mul0, f2f3_mul_big_exp
// @depends:
//
// Products of the GLM kernels' terms (cl/kernels/f2_f3_<family>_<link>.cl), which share them.

// c v for a count or weight c, 0 where c is 0 even for an infinite v (IEEE's 0 * Inf is NaN),
// so that a zero count or weight drops its term
static inline double f2f3_mul0(const double c, const double v)
{
    return (c == 0.0) ? 0.0 : c * v;
}

// c e^s where e^s overflows and the product need not: (c e^(s/2)) e^(s/2), the halving exact,
// to a few ulp (for s up to 1419; the -1 of expm1 is below the last bit there)
static inline double f2f3_mul_big_exp(const double c, const double s)
{
    const double h = exp(0.5 * s);
    return (c * h) * h;
}
