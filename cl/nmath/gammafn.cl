// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: gammafn
// @depends: chebyshev, stirlerr_core, gammafn_best, cospi, rmath_constants, rmath_utils
// @source: W. Fullerton, SLATEC routine DGAMMA (1977, rev. 1983): the Chebyshev coefficients
//          GAMCS of gamma(1 + u) on [0, 1] and the argument limits XMIN, XMAX, XSML;
//          Abramowitz & Stegun 6.1.15-6.1.17 (recurrence and reflection).
//
// For |x| <= 10, gamma(1 + u) with u = x - floor(x) comes from 22 terms of the Chebyshev series
// (plus the constant 0.9375 that GAMCS is centred on) and the recurrence
// gamma(x + 1) = x gamma(x) carries it up or down to x.  For |x| > 10, gamma(y) for y = |x| is
// (y - 1)! for integers up to 50, and otherwise Stirling's formula with its exact error term
// stirlerr(y) (from stirlerr_core, the cycle-free part of stirlerr: see stirlerr_core.cl);
// negative x then uses the reflection gamma(x) = -pi / (y sin(pi y) gamma(y)).
// Built with DASKCL_ACCURACY_BEST, Stirling's exponent is summed in double-double (gammafn_best.cl).
//
// NaN at 0 and the negative integers (the poles; R warns), +-Inf next to 0 where 1/x overflows,
// +Inf above XMAX, 0 below XMIN (underflow).

__constant double gammafn_gamcs[22] = {
    +.8571195590989331421920062399942e-2,
    +.4415381324841006757191315771652e-2,
    +.5685043681599363378632664588789e-1,
    -.4219835396418560501012500186624e-2,
    +.1326808181212460220584006796352e-2,
    -.1893024529798880432523947023886e-3,
    +.3606925327441245256578082217225e-4,
    -.6056761904460864218485548290365e-5,
    +.1055829546302283344731823509093e-5,
    -.1811967365542384048291855891166e-6,
    +.3117724964715322277790254593169e-7,
    -.5354219639019687140874081024347e-8,
    +.9193275519859588946887786825940e-9,
    -.1577941280288339761767423273953e-9,
    +.2707980622934954543266540433089e-10,
    -.4646818653825730144081661058933e-11,
    +.7973350192007419656460767175359e-12,
    -.1368078209830916025799499172309e-12,
    +.2347319486563800657233471771688e-13,
    -.4027432614949066932766570534699e-14,
    +.6910051747372100912138336975257e-15,
    -.1185584500221992907052387126192e-15
};

#define GAMMAFN_NGAM 22
#define GAMMAFN_XMIN (-170.5674972726612)
#define GAMMAFN_XMAX 171.61447887182298
#define GAMMAFN_XSML 2.2474362225598545e-308

NMATH_NOINLINE double gammafn(double x)
{
    if (isnan(x))
        return x;
    if (x == 0 || (x < 0 && x == round(x)))
        ML_WARN_return_NAN;   // a pole

    double y = fabs(x);
    if (y <= 10) {
        // x = (n + 1) + u with n + 1 = floor(x), u in [0, 1)
        int n = (int)x;
        if (x < 0)
            --n;
        double u = x - n;
        --n;
        double value = chebyshev_eval(u * 2 - 1, gammafn_gamcs, GAMMAFN_NGAM) + .9375;
        if (n == 0)
            return value;     // x in [1, 2)
        if (n > 0) {
            // x in [2, 10]: gamma(x) = gamma(1 + u) (1 + u) (2 + u) ... (n + u)
            for (int i = 1; i <= n; i++)
                value *= (u + i);
            return value;
        }
        // x in [-10, 1): divide by x (x + 1) ... down from gamma(1 + u)
        if (u < GAMMAFN_XSML)
            return (x > 0) ? ML_POSINF : ML_NEGINF;   // x so close to 0 that 1/x overflows
        for (int i = 0; i < -n; i++)
            value /= (x + i);
        return value;
    }

    if (x > GAMMAFN_XMAX)
        return ML_POSINF;
    if (x < GAMMAFN_XMIN)
        return 0.;

    double value;
    if (y <= 50 && y == (int)y) {
        value = 1.;           // (y - 1)!
        for (int i = 2; i < y; i++)
            value *= i;
    } else {
#ifdef DASKCL_ACCURACY_BEST     // gammafn_best.cl is in the program in that mode only
        value = gammafn_stirling_dd(y);
#else
        value = exp((y - 0.5) * log(y) - y + M_LN_SQRT_2PI + stirlerr_core(y));
#endif
    }
    if (x > 0)
        return value;

    double s = R_sinpi(y);
    if (s == 0)
        return ML_POSINF;
    return -M_PI / (y * s * value);
}

#undef GAMMAFN_NGAM
#undef GAMMAFN_XMIN
#undef GAMMAFN_XMAX
#undef GAMMAFN_XSML
