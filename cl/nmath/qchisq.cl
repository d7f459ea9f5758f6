// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qchisq
// @depends: qgamma
// @source: the chi-squared quantile is the gamma quantile with shape df/2 and scale 2.

double qchisq(double p, double df, int lower_tail, int log_p)
{
    return qgamma(p, 0.5 * df, 2.0, lower_tail, log_p);
}
