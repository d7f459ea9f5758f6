// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dchisq
// @depends: dgamma
// @source: the chi-squared density with df degrees of freedom is the gamma density with shape
//          df/2 and scale 2.

double dchisq(double x, double df, int give_log)
{
    return dgamma(x, df / 2., 2., give_log);
}
