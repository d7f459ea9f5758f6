// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: ptukey
// @depends: ptukey_best, pnorm, lgammafn, dpq, rmath_constants, rmath_utils
// @source: C. W. Copenhaver and B. S. Holland (1988), "Computation of the distribution of the
//          maximum studentized range statistic with application to multiple significance
//          testing of simple effects", J. Statist. Comput. Simul. 30, 1-15: Hartley's form of
//          the range distribution integrated by 12-point Gauss-Legendre quadrature, and the
//          studentized range by 16-point Gauss-Legendre quadrature over the chi density of the
//          standard deviation; nodes and weights from Abramowitz & Stegun, table 25.4.
//
// ptukey(q, nranges, nmeans, df): P[studentized range of nmeans means <= q], the maximum over
// nranges independent groups, with df degrees of freedom for the standard deviation (Rmath.h
// argument order).  wprob is the distribution for df = Inf: Hartley's form
//     P[W <= w] = (2 Phi(w/2) - 1)^cc + 2 cc / sqrt(2 pi) * int_{w/2}^{8} e^{-y^2/2}
//                 (Phi(y) - Phi(y - w))^(cc - 1) dy,
// raised to the power nranges.  For df <= 25000 it is integrated against the density of
// s = sqrt(chi^2_df / df) over intervals of length 1, 1/2, 1/4 or 1/8 (by df), stopping once an
// interval contributes less than 1e-14 (at most 50 intervals).  The tolerances, cut-offs and
// interval rules are the paper's, as R uses them.  NaN for df < 2, nranges < 1, nmeans < 2.
// Built with DASKCL_ACCURACY_BEST (config key accuracy = "best"), q > 0 finite goes to
// ptukey_best.cl.

__constant double ptukey_xleg[6] = {
    0.981560634246719250690549090149, 0.904117256370474856678465866119,
    0.769902674194304687036893833213, 0.587317954286617447296702418941,
    0.367831498998180193752691536644, 0.125233408511468915472441369464
};
__constant double ptukey_aleg[6] = {
    0.047175336386511827194615961485, 0.106939325995318430960254718194,
    0.160078328543346226334652529543, 0.203167426723065921749064455810,
    0.233492536538354808760849898925, 0.249147045813402785000562436043
};
__constant double ptukey_xlegq[8] = {
    0.989400934991649932596154173450, 0.944575023073232576077988415535,
    0.865631202387831743880467897712, 0.755404408355003033895101194847,
    0.617876244402643748446671764049, 0.458016777657227386342419442984,
    0.281603550779258913230460501460, 0.950125098376374401853193354250e-1
};
__constant double ptukey_alegq[8] = {
    0.271524594117540948517805724560e-1, 0.622535239386478928628438369944e-1,
    0.951585116824927848099251076022e-1, 0.124628971255533872052476282192,
    0.149595988816576732081501730547,    0.169156519395002538189312079030,
    0.182603415044923588866763667969,    0.189450610455068496285396723208
};

// P[range of cc standard normals <= w]^rr (df = Inf), by Hartley's form
static NMATH_NOINLINE double ptukey_wprob(double w, double rr, double cc)
{
    const double C1 = -30., C2 = -50., C3 = 60., bb = 8., wlar = 3.;
    double qsqz = w * 0.5;
    // for w >= 16 the lower bound of the integral is 0.99999999999995: 1
    if (qsqz >= bb)
        return 1.0;
    // (2 Phi(w/2) - 1)^cc, the first term of Hartley's form; 0 below exp(-50)
    double pr_w = 2 * pnorm5(qsqz, 0., 1., 1, 0) - 1.;
    if (pr_w >= exp(C2 / cc))
        pr_w = pow(pr_w, cc);
    else
        pr_w = 0.0;
    // the second term over (w/2, 8) in 2 (large w) or 3 equal intervals
    double wincr = (w > wlar) ? 2. : 3.;
    double blb = qsqz, binc = (bb - qsqz) / wincr, bub = blb + binc, einsum = 0.0;
    double cc1 = cc - 1.0;
    for (double wi = 1; wi <= wincr; wi++) {
        double elsum = 0.0;
        double a = 0.5 * (bub + blb), b = 0.5 * (bub - blb);
        for (int jj = 1; jj <= 12; jj++) {
            int j;
            double xx;
            if (6 < jj) {
                j = 12 - jj + 1;
                xx = ptukey_xleg[j - 1];
            } else {
                j = jj;
                xx = -ptukey_xleg[j - 1];
            }
            double ac = a + b * xx;
            // exp(-ac^2 / 2) < 9e-14: no contribution from here on
            double qexpo = ac * ac;
            if (qexpo > C3)
                break;
            double pplus = 2 * pnorm5(ac, 0., 1., 1, 0);
            double pminus = 2 * pnorm5(ac, w, 1., 1, 0);
            double rinsum = (pplus * 0.5) - (pminus * 0.5);
            if (rinsum >= exp(C1 / cc1)) {
                rinsum = (ptukey_aleg[j - 1] * exp(-(0.5 * qexpo))) * pow(rinsum, cc1);
                elsum += rinsum;
            }
        }
        elsum *= (((2.0 * b) * cc) * M_1_SQRT_2PI);
        einsum += elsum;
        blb = bub;
        bub += binc;
    }
    pr_w += einsum;
    if (pr_w <= exp(C1 / rr))
        return 0.;
    pr_w = pow(pr_w, rr);
    if (pr_w >= 1.)
        return 1.;
    return pr_w;
}

double ptukey(double q, double rr, double cc, double df, int lower_tail, int log_p)
{
    const double eps1 = -30.0, eps2 = 1.0e-14;
    const double dhaf = 100.0, dquar = 800.0, deigh = 5000.0, dlarg = 25000.0;

    if (isnan(q) || isnan(rr) || isnan(cc) || isnan(df))
        ML_WARN_return_NAN;
    if (q <= 0)
        return R_DT_0;
    // df > 1, at least two means
    if (df < 2 || rr < 1 || cc < 2)
        ML_WARN_return_NAN;
    if (!isfinite(q))
        return R_DT_1;
#ifdef DASKCL_ACCURACY_BEST
    {
        double best = ptukey_best(q, rr, cc, df, lower_tail, log_p);
        if (!isnan(best))   // (NaN: beyond its reach: R's algorithm below)
            return best;
    }
#endif
    if (df > dlarg)
        return R_DT_val(ptukey_wprob(q, rr, cc));

    // log of the leading constant of the density of s, and the interval length
    double f2 = df * 0.5;
    double f2lf = ((f2 * log(df)) - (df * M_LN2)) - lgammafn(f2);
    double f21 = f2 - 1.0;
    double ff4 = df * 0.25;
    double ulen;
    if (df <= dhaf)
        ulen = 1.0;
    else if (df <= dquar)
        ulen = 0.5;
    else if (df <= deigh)
        ulen = 0.25;
    else
        ulen = 0.125;
    f2lf += log(ulen);

    double ans = 0.0, otsum = 0.0;
    for (int i = 1; i <= 50; i++) {
        otsum = 0.0;
        double twa1 = (2 * i - 1) * ulen;
        for (int jj = 1; jj <= 16; jj++) {
            int j;
            double t1;
            if (8 < jj) {
                j = jj - 8 - 1;
                t1 = (f2lf + (f21 * log(twa1 + (ptukey_xlegq[j] * ulen)))) -
                     (((ptukey_xlegq[j] * ulen) + twa1) * ff4);
            } else {
                j = jj - 1;
                t1 = (f2lf + (f21 * log(twa1 - (ptukey_xlegq[j] * ulen)))) +
                     (((ptukey_xlegq[j] * ulen) - twa1) * ff4);
            }
            // exp(t1) < 9e-14: no contribution
            if (t1 >= eps1) {
                double qsqz;
                if (8 < jj)
                    qsqz = q * sqrt(((ptukey_xlegq[j] * ulen) + twa1) * 0.5);
                else
                    qsqz = q * sqrt(((-(ptukey_xlegq[j] * ulen)) + twa1) * 0.5);
                double wprb = ptukey_wprob(qsqz, rr, cc);
                otsum += (wprb * ptukey_alegq[j]) * exp(t1);
            }
        }
        // stop once an interval adds less than 1e-14, but integrate at least up to s^2 = 1
        if (i * ulen >= 1.0 && otsum <= eps2)
            break;
        ans += otsum;
    }
    // (otsum > eps2 here: not converged in 50 intervals; R warns and returns the sum)
    if (ans > 1.)
        ans = 1.;
    return R_DT_val(ans);
}
