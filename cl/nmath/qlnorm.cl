// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qlnorm
// @depends: dpq, qnorm
// @source: the log-normal quantile exp(qnorm(p, meanlog, sdlog)).

double qlnorm(double p, double meanlog, double sdlog, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(meanlog) || isnan(sdlog))
        return p + meanlog + sdlog;
    R_Q_P01_boundaries(p, 0., ML_POSINF);
    return exp(qnorm5(p, meanlog, sdlog, lower_tail, log_p));
}
