// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: logspace_add, logspace_sub
// @depends: dpq, rmath_utils
// @source: M. Maechler (2012), "Accurately computing log(1 - exp(-|a|))", the Rmpfr package
//          vignette (log1p and log(1 - e^-a) used for sums and differences on the log scale).
//
// log(exp(logx) + exp(logy)) and log(exp(logx) - exp(logy)) without leaving the log scale:
//   logspace_add = max(logx, logy) + log1p(exp(-|logx - logy|)),
//   logspace_sub = logx + log(1 - exp(logy - logx))   (logy <= logx; NaN otherwise).

double logspace_add(double logx, double logy)
{
    return fmax2(logx, logy) + log1p(exp(-fabs(logx - logy)));
}

double logspace_sub(double logx, double logy)
{
    return logx + R_Log1_Exp(logy - logx);
}
