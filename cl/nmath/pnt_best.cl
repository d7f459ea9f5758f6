// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnt_best, dnt_best
// @depends: pnorm, dnorm, stirlerr, dpq, rmath_constants, rmath_utils
// @source: the noncentral t variable T = (Z + ncp) / S, S = sqrt(V / df), V ~ chi^2(df), as an
//          expectation over S (Johnson, Kotz & Balakrishnan, Continuous Univariate
//          Distributions 2, 31.5):
//              P(T <= t) = E[Phi(t S - ncp)],  P(T > t) = E[Phi(ncp - t S)],
//              density f(t) = E[S phi(t S - ncp)],
//          integrals of positive functions, so both tails keep their relative precision
//          (V. Witkovsky (2013), "A note on computing extreme tail probabilities of the
//          noncentral t distribution with large noncentrality parameter", Acta Univ. Palacki.
//          Olomuc., Fac. rer. nat., Mathematica 52(2), 131-143: the integrand's mode first,
//          then quadrature around it).  Here in u = log(V / df), whose log-density is
//          log(k / (2 pi)) / 2 - stirlerr(k) - k (e^u - 1 - u), k = df / 2 (Stirling's formula
//          with its remainder, as in C. Loader (2000), "Fast and accurate computation of
//          binomial probabilities"; e^u - 1 - u by its Taylor series near 0), summed in log space
//          relative to the integrand's maximum, found by Newton's method within a bracket.  The trapezoidal
//          rule on the real line converges geometrically for analytic integrands (L. N.
//          Trefethen & J. A. C. Weideman (2014), "The exponentially convergent trapezoidal
//          rule", SIAM Review 56, 385-458): the step starts at the integrand's curvature scale
//          and is halved until two rules agree to 1e-8 (the error then being about its square).
//
// The `best` accuracy mode's pnt and dnt (pnt.cl and dnt.cl call them under
// DASKCL_ACCURACY_BEST) for finite t, df > 0 and ncp: about 1e-14 relative in both tails and
// on the log scale, where AS 243 (pnt.cl) promises 1e-12 absolute.  NaN where the quadrature
// fails (a probability above one, an infinite integral): the callers then take R's algorithm.

#define NCT_MAXN 20000

typedef struct {
    double t, del, k, c, sg;    // k = df / 2, c = log(k / (2 pi)) / 2 - stirlerr(k); sg: +1
                                // lower tail, -1 upper
    int kind;                   // 0: Phi(sg (t s - del)); 1: s phi(t s - del)
} nct_par;

// e^u - 1 - u to full relative precision: u^2/2 (1 + u/3 (1 + u/4 (1 + ...))) for |u| <= 1/2
static inline double nct_expm1mu(double u)
{
    if (fabs(u) > .5)
        return expm1(u) - u;
    double r = 1.;
    for (int n = 20; n >= 3; n--)
        r = 1. + u * r / n;
    return .5 * u * u * r;
}

// log of the integrand at u = log(V / df) (s = exp(u / 2)), and where g is not null its first
// and second derivatives
static double nct_L(double u, const nct_par *p, double *g, double *H)
{
    double s = exp(.5 * u);
    double L = p->c - p->k * nct_expm1mu(u);            // log density of u
    if (!g) {
        double x = p->t * s - p->del;
        return L + ((p->kind == 0) ? pnorm5(p->sg * x, 0., 1., 1, 1)
                                   : .5 * u + dnorm4(x, 0., 1., 1));
    }
    double gc = -p->k * expm1(u), Hc = -p->k * s * s;
    if (p->kind == 0) {
        double x = p->sg * (p->t * s - p->del), xp = .5 * p->sg * p->t * s;
        double lP = pnorm5(x, 0., 1., 1, 1);
        double m = exp(dnorm4(x, 0., 1., 1) - lP);      // phi / Phi
        *g = gc + m * xp;
        *H = Hc - m * (x + m) * xp * xp + .5 * m * xp;
        return L + lP;
    }
    double x = p->t * s - p->del, xp = .5 * p->t * s;
    *g = gc + .5 - x * xp;
    *H = Hc - xp * xp - .5 * x * xp;
    return L + .5 * u + dnorm4(x, 0., 1., 1);
}

// the integrand's maximum: u, with its log value and second derivative
static double nct_mode(const nct_par *p, double *Lm, double *Hm)
{
    double u = 0., g, H, L = nct_L(u, p, &g, &H);
    if (g == 0.) {
        *Lm = L;
        *Hm = H;
        return u;
    }
    // a bracket [a, b] with g(a) > 0 > g(b)
    double step = fmin2(16., 1. / sqrt(p->k)), a = u, b = u;
    for (int i = 0; i < 80; i++) {
        double v = u + ((g > 0.) ? step : -step), gv, Hv;
        double Lv = nct_L(v, p, &gv, &Hv);
        if ((gv > 0.) == (g > 0.)) {
            u = v;
            L = Lv;
            H = Hv;
            step *= 2.;
            continue;
        }
        if (g > 0.) {
            a = u;
            b = v;
        } else {
            a = v;
            b = u;
        }
        break;
    }
    // Newton's method, bisection where a step leaves the bracket
    u = (g > 0.) ? a : b;
    for (int i = 0; i < 100; i++) {
        double v = (H < 0.) ? u - g / H : ML_NAN;
        if (!(v > a && v < b))
            v = .5 * (a + b);
        double dv = fabs(v - u);
        u = v;
        L = nct_L(u, p, &g, &H);
        if (g > 0.)
            a = u;
        else
            b = u;
        if (g == 0. || (H < 0. && dv * sqrt(-H) < 1e-6) || b - a <= 4. * DBL_EPSILON * fabs(u))
            break;
    }
    *Lm = L;
    *Hm = H;
    return u;
}

// the integrand's values relative to exp(Lm) at u0, u0 + h, u0 + 2h, ..., summed until they
// are negligible and falling
static double nct_side(const nct_par *p, double u0, double h, double Lm)
{
    double sum = 0., prev = ML_POSINF;
    for (int j = 0; j < NCT_MAXN; j++) {
        double e = exp(nct_L(u0 + j * h, p, 0, 0) - Lm);
        sum += e;
        if (e < 1e-18 && e <= prev)
            break;
        prev = e;
    }
    return sum;
}

// log of the integral of exp(nct_L) over the real line
static NMATH_NOINLINE double nct_log_integral(const nct_par *p)
{
    double Lm, Hm;
    double um = nct_mode(p, &Lm, &Hm);
    // the curvature's scale, at most that of the density's exponential tail e^(k u), 1 / k
    double h = fmin2((Hm < 0.) ? 1. / sqrt(-Hm) : 1., 1. / fmin2(p->k, sqrt(p->k)));
    double T = h * (1. + nct_side(p, um + h, h, Lm) + nct_side(p, um - h, -h, Lm));
    for (int level = 0; level < 10; level++) {
        double M = h * (nct_side(p, um + .5 * h, h, Lm) + nct_side(p, um - .5 * h, -h, Lm));
        double T2 = .5 * (T + M);
        int agree = fabs(T2 - T) <= 1e-8 * T2;
        T = T2;
        h *= .5;
        if (agree)
            break;
    }
    return Lm + log(T);
}

double pnt_best(double t, double df, double ncp, int lower_tail, int log_p)
{
    if (t == 0.)   // P(T <= 0) = Phi(-ncp)
        return pnorm5(0., ncp, 1., lower_tail, log_p);
    double k = .5 * df;
    nct_par p = { t, ncp, k, .5 * log(k / M_2PI) - stirlerr(k), lower_tail ? 1. : -1., 0 };
    double l = nct_log_integral(&p);
    if (!(l <= 1e-12))   // not a probability: outside the method's reach (NaN: R's algorithm)
        return ML_NAN;
    l = fmin2(l, 0.);
    if (log_p && l > -0.01) {   // above 0.99: log1p of the other tail, for its digits
        p.sg = -p.sg;
        double q = nct_log_integral(&p);
        return (q <= 1e-12) ? R_Log1_Exp(fmin2(q, 0.)) : ML_NAN;
    }
    return log_p ? l : exp(l);
}

double dnt_best(double x, double df, double ncp, int give_log)
{
    double k = .5 * df;
    nct_par p = { x, ncp, k, .5 * log(k / M_2PI) - stirlerr(k), 1., 1 };
    double l = nct_log_integral(&p);
    if (isnan(l) || l == ML_POSINF)   // outside the method's reach (NaN: R's algorithm)
        return ML_NAN;
    return give_log ? l : exp(l);
}

#undef NCT_MAXN
