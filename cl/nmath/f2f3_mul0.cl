// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: f2f3_mul0
// @depends:
//
// The product c v of a GLM term's count or weight c and a value v, 0 where c is 0 even for an
// infinite v (IEEE's 0 * Inf is NaN), so that a zero count or weight drops its term: the GLM
// kernels' (cl/kernels/f2_f3_<family>_<link>.cl) share it.

static inline double f2f3_mul0(const double c, const double v)
{
    return (c == 0.0) ? 0.0 : c * v;
}
