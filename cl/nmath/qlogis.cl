// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qlogis
// @depends: dpq
// @source: the logistic quantile l + s logit(p); on the log scale logit(p) = lp - log(1 - e^lp),
//          with log(1 - e^lp) taken accurately (Maechler 2012).

double qlogis(double p, double location, double scale, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(location) || isnan(scale))
        return p + location + scale;
    R_Q_P01_boundaries(p, ML_NEGINF, ML_POSINF);
    if (scale < 0.)
        ML_WARN_return_NAN;
    if (scale == 0.)
        return location;
    double logit;
    if (log_p)
        logit = lower_tail ? p - R_Log1_Exp(p) : R_Log1_Exp(p) - p;
    else
        logit = log(lower_tail ? (p / (1. - p)) : ((1. - p) / p));
    return location + scale * logit;
}
