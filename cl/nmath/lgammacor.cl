// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: lgammacor
// @depends: chebyshev, rmath_utils
// @source: W. Fullerton, SLATEC routine D9LGMC (1977, rev. 1983): the Chebyshev coefficients
//          ALGMCS of  x * lgammacor(x)  in  t = 2 (10/x)^2 - 1.
//
// lgammacor(x) = log Gamma(x) - ((x - 1/2) log x - x + log sqrt(2 pi))  for x >= 10, the
// remainder of Stirling's formula.  Five terms of ALGMCS suffice in double precision; from
// XBIG = 94906265.62 on, the first Stirling term 1/(12 x) is exact to rounding (it underflows
// gracefully from 3.745e306 on).  NaN for x < 10, where the series is not meant to be used (as
// R).

__constant double lgammacor_algmcs[15] = {
    +.1666389480451863247205729650822e+0,
    -.1384948176067563840732986059135e-4,
    +.9810825646924729426157171547487e-8,
    -.1809129475572494194263306266719e-10,
    +.6221098041892605227126015543416e-13,
    -.3399615005417721944303330599666e-15,
    +.2683181998482698748957538846666e-17,
    -.2868042435101595971574869333333e-19,
    +.3962837061046434803679306666666e-21,
    -.6831888753985766870111999999999e-23,
    +.1429227355942498147573333333333e-24,
    -.3547598158101070547199999999999e-26,
    +.1025680058010470912000000000000e-27,
    -.3401102254316748799999999999999e-29,
    +.1276642195630062933333333333333e-30
};

#define LGAMMACOR_NALGM 5
#define LGAMMACOR_XBIG  94906265.62425156

double lgammacor(double x)
{
    if (x < 10)
        ML_WARN_return_NAN;
    if (x < LGAMMACOR_XBIG) {
        double t = 10 / x;
        return chebyshev_eval(t * t * 2 - 1, lgammacor_algmcs, LGAMMACOR_NALGM) / x;
    }
    // x >= XBIG: the first term of Stirling's series
    return 1 / (x * 12);
}

#undef LGAMMACOR_NALGM
#undef LGAMMACOR_XBIG
