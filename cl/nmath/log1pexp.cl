// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: log1pexp
// @depends:
// @source: M. Maechler (2012), "Accurately computing log(1 - exp(-|a|))", the Rmpfr package
//          vignette, section on log1pexp.
//
// log(1 + exp(x)) without overflow: exp(x) up to x = -37, log1p(exp(x)) up to x = 18, then
// x + exp(-x) (the next term exp(-2x)/2 is below rounding), and x itself above 33.3 (exp(-x)
// below rounding of x).

double log1pexp(double x)
{
    // below -37, exp(x) < 2^-53 and log1p(exp(x)) rounds to exp(x) itself (the next term is
    // exp(x)/2 relative): taken as it is, which also keeps it where it is subnormal and a
    // device's log1p flushes it (PoCL: log1pexp(-745) was 0, R's is 5e-324)
    if (x <= -37.)
        return exp(x);
    if (x <= 18.)
        return log1p(exp(x));
    if (x > 33.3)
        return x;
    return x + exp(-x);
}
