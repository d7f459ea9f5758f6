// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: stirlerr
// @depends: stirlerr_core, lgammafn, rmath_constants
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities".
//
// stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n), the error of Stirling's formula, for
// n >= 0.
//
// Breaking a cycle.  For n <= 15 that is not a half integer this is the definition itself,
// lgammafn(n + 1) - (n + 1/2) log n + n - log sqrt(2 pi); but lgammafn -> gammafn needs stirlerr
// for |x| > 10, a cycle between files.  So the function is split: stirlerr_core.cl has the
// table, the series, and the range 9 < n <= 15 by lgammacor, with no gamma calls, and gammafn
// calls it; this file adds the small non-half-integer n through lgammafn and defers to the core
// for the rest.  The call graph is  stirlerr -> {stirlerr_core, lgammafn -> gammafn ->
// stirlerr_core -> lgammacor}: no cycle.

double stirlerr(double n)
{
    if (n <= 15.0) {
        double nn = n + n;
        if (nn != (int)nn)
            return lgammafn(n + 1.) - (n + 0.5) * log(n) + n - M_LN_SQRT_2PI;
    }
    return stirlerr_core(n);
}
