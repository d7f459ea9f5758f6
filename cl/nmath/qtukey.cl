// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qtukey
// @depends: qtukey_best, ptukey, dpq, rmath_utils
// @source: R. E. Lund and J. R. Lund (1983), "Algorithm AS 190: Probabilities and upper
//          quantiles for the studentized range", Applied Statistics 32, 204-210: the initial
//          value (qinv, from Odeh and Evans' normal-quantile approximation, AS 70, and Gleason's
//          correction for df) and the secant iteration; probabilities from ptukey
//          (Copenhaver & Holland 1988).
//
// qtukey(p, nranges, nmeans, df): the q with ptukey(q, ...) = p, by secant steps from AS 190's
// initial value until two iterates differ by less than 1e-4 (at most 50 steps; R warns and
// returns the last iterate if they do not converge).  NaN for df < 2, nranges < 1, nmeans < 2.
// Built with DASKCL_ACCURACY_BEST (config key accuracy = "best"), 0 < p < 1 goes to
// qtukey_best.cl.

// AS 190's initial approximation to the quantile
static double qtukey_qinv(double p, double c, double v)
{
    const double p0 = 0.322232421088, q0 = 0.993484626060e-01;
    const double p1 = -1.0, q1 = 0.588581570495;
    const double p2 = -0.342242088547, q2 = 0.531103462366;
    const double p3 = -0.204231210125, q3 = 0.103537752850;
    const double p4 = -0.453642210148e-04, q4 = 0.38560700634e-02;
    const double c1 = 0.8832, c2 = 0.2368, c3 = 1.214, c4 = 1.208, c5 = 1.4142;
    const double vmax = 120.0;

    double ps = 0.5 - 0.5 * p;
    double yi = sqrt(log(1.0 / (ps * ps)));
    double t = yi + ((((yi * p4 + p3) * yi + p2) * yi + p1) * yi + p0) /
                    ((((yi * q4 + q3) * yi + q2) * yi + q1) * yi + q0);
    if (v < vmax)
        t += (t * t * t + t) / v / 4.0;
    double q = c1 - c2 * t;
    if (v < vmax)
        q += -c3 / v + c4 * t / v;
    return t * (q * log(c - 1.0) + c5);
}

double qtukey(double p, double rr, double cc, double df, int lower_tail, int log_p)
{
    const double eps = 0.0001;
    const int maxiter = 50;

    if (isnan(p) || isnan(rr) || isnan(cc) || isnan(df))
        return p + rr + cc + df;
    // df > 1, at least two means
    if (df < 2 || rr < 1 || cc < 2)
        ML_WARN_return_NAN;
    R_Q_P01_boundaries(p, 0, ML_POSINF);
#ifdef DASKCL_ACCURACY_BEST
    {
        double best = qtukey_best(p, rr, cc, df, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif

    p = R_DT_qIv(p);   // lower tail, natural scale

    // the initial value and P[W <= x0] - p
    double x0 = qtukey_qinv(p, cc, df);
    double valx0 = ptukey(x0, rr, cc, df, 1, 0) - p;
    // the second iterate, one below x0 if P[W <= x0] > p, else one above
    double x1 = (valx0 > 0.0) ? fmax2(0.0, x0 - 1.0) : x0 + 1.0;
    double valx1 = ptukey(x1, rr, cc, df, 1, 0) - p;

    double ans = 0.0;
    for (int iter = 1; iter < maxiter; iter++) {
        ans = x1 - ((valx1 * (x1 - x0)) / (valx1 - valx0));
        valx0 = valx1;
        x0 = x1;
        if (ans < 0.0)   // iterates stay >= 0
            ans = 0.0;
        valx1 = ptukey(ans, rr, cc, df, 1, 0) - p;
        x1 = ans;
        if (fabs(x1 - x0) < eps)
            return ans;
    }
    return ans;   // not converged (R warns)
}
