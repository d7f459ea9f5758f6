// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: psigamma, digamma, trigamma, tetragamma, pentagamma
// @depends: cospi, dpq
// @source: D. E. Amos (1983), "A portable Fortran subroutine for derivatives of the psi
//          function", Algorithm 610, ACM TOMS 9(4), 494-502; Abramowitz & Stegun 6.3.5, 6.3.18,
//          6.4.6-6.4.10 (recurrence, asymptotic expansion, reflection).
//
// Amos' DPSIFN computes the scaled derivative  w(n, x) = (-1)^(n+1) / n! * psi^(n)(x)  for x > 0:
//   - directly by the series sum_k (x + k)^-(n+1) when x is small and n >= 1 and the series is
//     short,
//   - otherwise by the asymptotic expansion (Bernoulli numbers) at x + xinc >= xmin, recurred
//     backwards to x.
// Only the member m = 1 of the sequence (kode = 1) is computed here: that is all R's psigamma,
// digamma, trigamma, tetragamma and pentagamma use.  R adds two things that are kept: for huge x
// the leading term is returned at once (-log x, resp. x^-n / n), and for x <= 0 the reflection
// psi(n, x) = (-1)^n psi(n, 1 - x) - pi^(n+1) d^n/dx^n cot(pi x) for n <= 5 (NaN for n > 5, and
// +Inf / NaN by the parity of n at the poles).  The reflection evaluates the x > 0 routine once;
// it is written as two functions (dpsifn_pos below, dpsifn_m1 calling it) so that no call cycles.
//
// Built with DASKCL_ACCURACY_BEST: the reflection takes cos and sin of pi x by R_cospi and
// R_sinpi (exact argument reduction; R rounds pi x, which costs |x| ulp), and digamma within
// 0.1 of its positive zero x0 = 1.46163... is its Taylor series there in x - x0 (x0 in two
// parts; the coefficients psi^(k)(x0) / k! computed to 22 digits with mpmath), where the
// absolute error of the general routine is not small beside the value.

#define DPSI_NMAX 100

// Bernoulli numbers B_0, B_1, B_2, B_4, ..., B_40 (Amos' table B(1..22)).
__constant double dpsi_bern[22] = {
    1.00000000000000000e+00, -5.00000000000000000e-01, 1.66666666666666667e-01,
    -3.33333333333333333e-02, 2.38095238095238095e-02, -3.33333333333333333e-02,
    7.57575757575757576e-02, -2.53113553113553114e-01, 1.16666666666666667e+00,
    -7.09215686274509804e+00, 5.49711779448621554e+01, -5.29124242424242424e+02,
    6.19212318840579710e+03, -8.65802531135531136e+04, 1.42551716666666667e+06,
    -2.72982310678160920e+07, 6.01580873900642368e+08, -1.51163157670921569e+10,
    4.29614643061166667e+11, -1.37116552050883328e+13, 4.88332318973593167e+14,
    -1.92965793419400681e+16};

// w(n, x) for x > 0; *ierr = 2 when (n+1) log x underflows the exponent range.
static inline NMATH_NOINLINE double dpsifn_pos(double x, int n, int *ierr)
{
    const double wdtol = DBL_EPSILON * 0.5;          // max(d1mach(4)/2, 0.5e-18)
    const double r1m5 = M_LOG10_2;                   // d1mach(5)
    const double elim = 2.302 * (1021 * r1m5 - 3.0); // exponent range, ~700.6
    const double lrg = 1. / (2. * DBL_EPSILON);
    *ierr = 0;
    double xln = log(x);
    // R: the first term of the asymptotic expansion suffices for huge x
    if (n == 0 && x * xln > lrg)
        return -xln;
    if (n >= 1 && x > n * lrg)
        return exp(-n * xln) / n;

    double fn = (double)n;
    double t = (fn + 1) * xln;
    if (fabs(t) > elim) {
        if (t > 0.)
            return 0.; // underflow for large x
        *ierr = 2;
        return ML_NAN;
    }
    if (x < wdtol)
        return pow(x, (double)(-n - 1));

    // xmin, beyond which the asymptotic expansion is used, and the length of the direct series
    double rln = fmin(r1m5 * 53, 18.06); // 53 = digits of the double mantissa
    double fln = fmax(rln, 3.0) - 3.0;
    double yint = 3.50 + 0.40 * fln;
    double slope = 0.21 + fln * (0.0006038 * fln + 0.008677);
    double xmin = (double)((int)(yint + slope * fn) + 1);
    if (n != 0) {
        double arg = fmin(0.0, (-2.302 * rln - fmin(0.0, xln)) / n);
        double eps = exp(arg);
        double xm = (fabs(arg) < 1.0e-3) ? -arg : 1.0 - eps;
        fln = x * xm / eps;
        if (xmin - x > 7.0 && fln < 15.0) {
            // direct series: sum_{k=0}^{nn} (x + k)^-(n+1)
            int nn = (int)fln + 1;
            double np = (double)(n + 1);
            double s = exp(-np * xln);
            double den = x;
            for (int i = 1; i <= nn; i++) {
                den += 1.0;
                s += pow(den, -np);
            }
            return s;
        }
    }

    // asymptotic expansion at xdmy = x + xinc >= xmin
    double xdmy = x, xdmln = xln, xinc = 0.0;
    if (x < xmin) {
        int nx = (int)x;
        xinc = xmin - nx;
        xdmy = x + xinc;
        xdmln = log(xdmy);
    }
    t = fn * xdmln;
    double t1 = xdmln + xdmln;
    double t2 = t + xdmln;
    if (fmax(fabs(t), fmax(fabs(t1), fabs(t2))) > elim)
        return 0.; // underflow
    double tss = exp(-t);
    double tt = 0.5 / xdmy;
    double tst = wdtol * tt;
    t1 = (n != 0) ? tt + 1.0 / fn : tt;
    double rxsq = 1.0 / (xdmy * xdmy);
    t = (fn + 1) * 0.5 * rxsq;
    double s = t * dpsi_bern[2];
    if (fabs(s) >= tst) {
        double tk = 2.0;
        for (int k = 4; k <= 22; k++) {
            t = t * ((tk + fn + 1) / (tk + 1.0)) * ((tk + fn) / (tk + 2.0)) * rxsq;
            double trm = t * dpsi_bern[k - 1];
            if (fabs(trm) < tst)
                break;
            s += trm;
            tk += 2.0;
        }
    }
    s = (s + t1) * tss;

    if (xinc != 0.0) {
        // backward recurrence from xdmy down to x
        int nx = (int)xinc;
        if (nx > DPSI_NMAX) {
            *ierr = 3;
            return ML_NAN;
        }
        if (n == 0) {
            for (int i = 1; i <= nx; i++)
                s += 1.0 / (x + (nx - i)); // smallest terms first, no cancellation
        } else {
            double np = (double)(n + 1);
            double xm = xinc - 1.0;
            double fx = x + xm; // accurate for small x
            for (int i = 1; i <= nx; i++) {
                s += pow(fx, -np);
                xm -= 1.0;
                fx = x + xm;
            }
        }
    }
    return (n == 0) ? s - xdmln : s;
}

// w(n, x) for any x, with R's reflection for x <= 0; *ierr != 0 means NaN.
static inline NMATH_NOINLINE double dpsifn_m1(double x, int n, int *ierr)
{
    *ierr = 0;
    if (n < 0) {
        *ierr = 1;
        return ML_NAN;
    }
    if (x > 0.)
        return dpsifn_pos(x, n, ierr);
    if (x == round(x)) // a pole (or -Inf): +Inf or NaN by the parity of n
        return (n % 2) ? ML_POSINF : ML_NAN;
    double ans = dpsifn_pos(1. - x, n, ierr);
    if (n > 5) { // the reflection is implemented for n <= 5 only, as in R
        *ierr = 4;
        return ML_NAN;
    }
    // tt = d^n/dy^n cot(y) at y = pi x
#ifdef DASKCL_ACCURACY_BEST
    double cy = R_cospi(x), sy = R_sinpi(x), tt;
#else
    double y = M_PI * x, tt;
    double cy = cos(y), sy = sin(y);
#endif
    if (n == 0)
        tt = cy / sy;
    else if (n == 1)
        tt = -1 / R_pow_di(sy, 2);
    else if (n == 2)
        tt = 2 * cy / R_pow_di(sy, 3);
    else if (n == 3)
        tt = -2 * (2 * R_pow_di(cy, 2) + 1.) / R_pow_di(sy, 4);
    else if (n == 4)
        tt = 8 * cy * (R_pow_di(cy, 2) + 2.) / R_pow_di(sy, 5);
    else
        tt = -8 * (2 * R_pow_di(cy, 4) + 11 * R_pow_di(cy, 2) + 2) / R_pow_di(sy, 6);
    // ans <- (-1)^n (ans + pi^(n+1) / n! * tt)
    double s = 1., pik = 1., fact = 1.;
    for (int k = 0; k <= n; k++) {
        pik *= M_PI;
        if (k >= 2)
            fact *= k;
        if (k == n)
            ans = s * (ans + pik / fact * tt);
        s = -s;
    }
    return ans;
}

double psigamma(double x, double deriv)
{
    if (isnan(x))
        return x;
    deriv = R_forceint(deriv);
    if (!(deriv >= 0. && deriv <= DPSI_NMAX)) // NaN, negative or beyond Amos' n_max
        return ML_NAN;
    int n = (int)deriv, ierr;
    double ans = dpsifn_m1(x, n, &ierr);
    if (ierr != 0)
        return ML_NAN;
    // psi^(n)(x) = (-1)^(n+1) n! w(n, x), multiplied in R's order
    ans = -ans;
    for (int k = 1; k <= n; k++)
        ans *= (-k);
    return ans;
}

#ifdef DASKCL_ACCURACY_BEST
// psi^(k)(x0) / k!, k = 1..15, at the zero x0 of digamma
__constant double digamma_root_taylor[15] = {
    0.9676722454476211704274, -0.4427631689835921060929, 0.2584997609556510106244,
    -0.1639427054424065275043, 0.1078240506912623657572, -0.07219956125645471092612,
    0.04880428816414310722509, -0.03316112647484735929226, 0.02259764823221810465962,
    -0.0154247659049489591388, 0.01053879161661217538812, -0.00720453438635686824097,
    0.004926781395729853446354, -0.003369801655439328082793, 0.002305126326734927836938};
#endif

double digamma(double x)
{
    if (isnan(x))
        return x;
#ifdef DASKCL_ACCURACY_BEST
    // x - x0, x0 = 1.4616321449683623412626595423257 in two parts (the first difference exact)
    double d = (x - 1.4616321449683622) - 9.549995429965697e-17;
    if (fabs(d) < 0.1) {
        double s = 0.;
        for (int k = 14; k >= 0; k--)
            s = s * d + digamma_root_taylor[k];
        return s * d;
    }
#endif
    int ierr;
    double ans = dpsifn_m1(x, 0, &ierr);
    return (ierr != 0) ? ML_NAN : -ans;
}

double trigamma(double x)
{
    if (isnan(x))
        return x;
    int ierr;
    double ans = dpsifn_m1(x, 1, &ierr);
    return (ierr != 0) ? ML_NAN : ans;
}

double tetragamma(double x)
{
    if (isnan(x))
        return x;
    int ierr;
    double ans = dpsifn_m1(x, 2, &ierr);
    return (ierr != 0) ? ML_NAN : -2.0 * ans;
}

double pentagamma(double x)
{
    if (isnan(x))
        return x;
    int ierr;
    double ans = dpsifn_m1(x, 3, &ierr);
    return (ierr != 0) ? ML_NAN : 6.0 * ans;
}

#undef DPSI_NMAX
