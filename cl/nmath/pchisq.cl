// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pchisq, pchisq_class
// @depends: pgamma
// @source: the chi-squared distribution with df degrees of freedom is the gamma distribution
//          with shape df/2 and scale 2.

double pchisq(double x, double df, int lower_tail, int log_p)
{
    return pgamma(x, df / 2., 2., lower_tail, log_p);
}

// pgamma's method (class functions: see pbeta.cl)
int pchisq_class(double x, double df, int lower_tail, int log_p)
{
    return pgamma_raw_class(x / 2., df / 2.);
}
