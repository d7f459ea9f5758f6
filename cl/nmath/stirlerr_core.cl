// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: stirlerr_core
// @depends: lgammacor, rmath_constants, rmath_utils
// @source: C. Loader (2000), "Fast and accurate computation of binomial probabilities"
//          (the error of Stirling's formula, its values at half integers and its asymptotic
//          series); Abramowitz & Stegun 6.1.40 (the Stirling series in Bernoulli numbers).
//
// stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n) = lgamma(n + 1) - (n + 1/2) log n + n
//               - log sqrt(2 pi).
//
// Breaking a cycle.  The full stirlerr (stirlerr.cl) evaluates lgamma(n + 1) for small n that
// are not half integers, and lgammafn -> gammafn needs stirlerr for |x| > 10: a cycle between
// files, which OpenCL forbids even when it is never taken.  This file is the cycle-free core
// that gammafn uses; it is exact (the same operations as the full function) for every n > 9:
//   - n <= 15 with 2n an integer: the tabulated value (Loader's table, recomputed to 25 digits);
//   - 9 < n <= 15 otherwise: lgamma(n + 1) by Stirling's formula plus its Chebyshev remainder
//     lgammacor (valid as n + 1 > 10), the same expression lgammafn evaluates there;
//   - n > 15: the Stirling series 1/(12n) - 1/(360n^3) + 1/(1260n^5) - 1/(1680n^7)
//     + 1/(1188n^9), truncated to fewer terms as n grows.
// Other n (n <= 9, not a half integer) give NaN here; stirlerr.cl handles them with lgammafn.

__constant double stirlerr_halves[31] = {
    0.0,                            // n = 0: a placeholder, as in R
    0.1534264097200273452913839,    // 0.5
    0.08106146679532725821967026,   // 1.0
    0.0548141210519176538961387,    // 1.5
    0.04134069595540929409382208,   // 2.0
    0.03316287351993628748511051,   // 2.5
    0.02767792568499833914878929,   // 3.0
    0.02374616365629749597133028,   // 3.5
    0.02079067210376509311152277,   // 4.0
    0.01848845053267318523077936,   // 4.5
    0.01664469118982119216319487,   // 5.0
    0.01513497322191737887351384,   // 5.5
    0.01387612882307074799874573,   // 6.0
    0.01281046524292022692425066,   // 6.5
    0.01189670994589177009505572,   // 7.0
    0.01110455975820691732663076,   // 7.5
    0.01041126526197209649747857,   // 8.0
    0.009799416126158803298390373,  // 8.5
    0.009255462182712732917728637,  // 9.0
    0.008768700134139385462955047,  // 9.5
    0.008330563433362871256469319,  // 10.0
    0.007934114564314020547249562,  // 10.5
    0.007573675487951840794972024,  // 11.0
    0.007244554301320383179546197,  // 11.5
    0.006942840107209529865664153,  // 12.0
    0.006665247032707682442356181,  // 12.5
    0.006408994188004207068439631,  // 13.0
    0.006171712263039457647534605,  // 13.5
    0.005951370112758847735624416,  // 14.0
    0.005746216513010115682026102,  // 14.5
    0.00555473355196280137103869    // 15.0
};

// Coefficients of the Stirling series: B_2k / (2k (2k - 1)), k = 1..5
#define STIRLERR_S0 0.083333333333333333333333       // 1/12
#define STIRLERR_S1 0.00277777777777777777777778     // 1/360
#define STIRLERR_S2 0.00079365079365079365079365     // 1/1260
#define STIRLERR_S3 0.000595238095238095238095238    // 1/1680
#define STIRLERR_S4 0.0008417508417508417508417508   // 1/1188

NMATH_NOINLINE double stirlerr_core(double n)
{
    if (n <= 15.0) {
        double nn = n + n;
        if (n >= 0 && nn == (int)nn)
            return stirlerr_halves[(int)nn];
        if (n > 9) {
            // lgamma(n + 1) as lgammafn computes it for arguments above 10
            double n1 = n + 1;
            double lg = M_LN_SQRT_2PI + (n1 - 0.5) * log(n1) - n1 + lgammacor(n1);
            return lg - (n + 0.5) * log(n) + n - M_LN_SQRT_2PI;
        }
        return ML_NAN;
    }
    double nn = n * n;
    if (n > 500)
        return (STIRLERR_S0 - STIRLERR_S1 / nn) / n;
    if (n > 80)
        return (STIRLERR_S0 - (STIRLERR_S1 - STIRLERR_S2 / nn) / nn) / n;
    if (n > 35)
        return (STIRLERR_S0 - (STIRLERR_S1 - (STIRLERR_S2 - STIRLERR_S3 / nn) / nn) / nn) / n;
    // 15 < n <= 35
    return (STIRLERR_S0
            - (STIRLERR_S1 - (STIRLERR_S2 - (STIRLERR_S3 - STIRLERR_S4 / nn) / nn) / nn) / nn)
           / n;
}

#undef STIRLERR_S0
#undef STIRLERR_S1
#undef STIRLERR_S2
#undef STIRLERR_S3
#undef STIRLERR_S4
