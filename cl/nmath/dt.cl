// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dt
// @depends: bd0, stirlerr, dnorm, dpq, rmath_constants
// @source: the t density in C. Loader's (2000) saddle-point form ("Fast and accurate computation
//          of binomial probabilities"): with stirlerr (Stirling's remainder) and bd0 (the
//          deviance term), the ratio gamma((n+1)/2) / gamma(n/2) and the kernel
//          (1 + x^2/n)^-((n+1)/2) keep full relative accuracy for large n and in the tails;
//          log(1 + x^2/n) is split by the size of x^2/n, and n = Inf is the normal density.

double dt(double x, double n, int give_log)
{
    if (isnan(x) || isnan(n))
        return x + n;
    if (n <= 0)
        ML_WARN_return_NAN;
    if (!isfinite(x))
        return R_D__0;
    if (!isfinite(n))
        return dnorm4(x, 0., 1., give_log);

    // log(gamma((n+1)/2) / (gamma(n/2) sqrt(n/2))) in Loader's form
    double t = -bd0(n / 2., (n + 1) / 2.) + stirlerr((n + 1) / 2.) - stirlerr(n / 2.);
    double x2n = x * x / n; // in [0, Inf]
    double ax = 0., l_x2n, u; // l_x2n = log(1 + x2n) / 2; u = n l_x2n (less its x^2/2 part)
    int lrg_x2n = (x2n > 1. / DBL_EPSILON);
    if (lrg_x2n) {
        ax = fabs(x);
        l_x2n = log(ax) - log(n) / 2.;
        u = n * l_x2n;
    } else if (x2n > 0.2) {
        l_x2n = log(1 + x2n) / 2.;
        u = n * l_x2n;
    } else {
        l_x2n = log1p(x2n) / 2.;
        u = -bd0(n / 2., (n + x * x) / 2.) + x * x / 2.;
    }
    if (give_log)
        return t - u - (M_LN_SQRT_2PI + l_x2n);
    // 1 / sqrt(1 + x2n), or sqrt(n) / |x| when 1 is negligible
    double i_sqrt = lrg_x2n ? sqrt(n) / ax : exp(-l_x2n);
    return exp(t - u) * M_1_SQRT_2PI * i_sqrt;
}
