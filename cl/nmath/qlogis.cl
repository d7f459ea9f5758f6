// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qlogis
// @depends: dpq
// @source: the logistic quantile l + s logit(p); on the log scale logit(p) = lp - log(1 - e^lp),
//          with log(1 - e^lp) taken accurately (Maechler 2012).  Built with
//          DASKCL_ACCURACY_BEST, logit(p) near p = 1/2, where it vanishes and both forms cancel,
//          is log1p((2p - 1) / (1 - p)), and on the log scale t - log1p(-expm1(t))
//          with t = lp + log 2 (log 2 in two parts): each term carries the sign of the result.

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
#ifdef DASKCL_ACCURACY_BEST
    if (log_p) {
        double t = (p + 0x1.62e42fefa39efp-1) + 2.319046813846299558e-17; // lp + log 2
        logit = fabs(t) < .25 ? t - log1p(-expm1(t)) : p - R_Log1_Exp(p);
        return location + scale * (lower_tail ? logit : -logit);
    }
    if (p >= .25 && p <= .75) {
        logit = log1p((2. * p - 1.) / (1. - p));   // 2p - 1 exact here
        return location + scale * (lower_tail ? logit : -logit);
    }
#endif
    if (log_p)
        logit = lower_tail ? p - R_Log1_Exp(p) : R_Log1_Exp(p) - p;
    else
        logit = log(lower_tail ? (p / (1. - p)) : ((1. - p) / p));
    return location + scale * logit;
}
