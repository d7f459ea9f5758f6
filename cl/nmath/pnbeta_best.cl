// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnbeta_best
// @depends: toms708, lbeta, dpois, dpq, rmath_constants, rmath_utils
// @source: the noncentral beta distribution as the Poisson mixture
//              P(X > x) = sum_j dpois(j, ncp / 2) (1 - I_x(a + j, b))
//          (and P(X <= x) with I_x), I_x the regularised incomplete beta function (TOMS 708,
//          bratio, on the log scale), each tail summed from near the largest term outwards
//          (D. Benton & K. Krishnamoorthy (2003), "Computing discrete mixtures of continuous
//          distributions: noncentral chisquare, noncentral t and the distribution of the square
//          of the sample multiple correlation coefficient", Comput. Statist. Data Anal. 43,
//          249-267; for the beta mixture, H. Frick (1990), Algorithm AS R84, Applied Statistics
//          39, 311-312).  The terms are carried by the recurrence
//          I_x(a + j + 1, b) = I_x(a + j, b) - d_j, d_j = x^(a+j) (1-x)^b / ((a + j) B(a + j, b))
//          (A&S 26.5.16), d_(j+1) = d_j x (a + b + j) / (a + j + 1), in the direction in which
//          it adds positive numbers (upwards for 1 - I_x, downwards for I_x), through the ratio
//          of d_j to the tail (which it contracts), from a start whose term is e^-40 or less of
//          the Poisson mode's; everything relative to that term's logarithm.
//
// The `best` accuracy mode's pnbeta and pnf for 0 < x < 1 given with 1 - x (pnbeta.cl's pnbeta2
// calls it under DASKCL_ACCURACY_BEST): about 1e-14 relative in both tails and on the log
// scale, where R sums the lower tail to 1e-9 absolute and takes the upper as one minus it.
// NaN where the sum fails (a term or a ratio beyond the doubles): pnbeta2 then takes R's.

// log of term j: log dpois(j, lam) + log I_x(a + j, b) (lower) or log(1 - I_x) (upper)
static inline double pnbb_logterm(double j, double x, double o_x, double a, double b,
                                  double lam, int upper)
{
    double w, w1;
    int ierr;
    bratio(a + j, b, x, o_x, &w, &w1, &ierr, 1);
    return dpois_raw(j, lam, 1) + (upper ? w1 : w);
}

// log d_j / (tail j) for the term of shape al = a + j: upper d_j / (1 - I_x(al, b)), lower
// d_(j-1) / I_x(al, b)
static inline double pnbb_ratio(double x, double o_x, double al, double b, int upper)
{
    double w, w1;
    int ierr;
    bratio(al, b, x, o_x, &w, &w1, &ierr, 1);
    double lx = (x < .5) ? log(x) : log1p(-o_x), lo = (x < .5) ? log1p(-x) : log(o_x);
    double d = upper ? al : al - 1.;   // d_j of shape d: x^d (1-x)^b / (d B(d, b))
    return exp(d * lx + b * lo - log(d) - lbeta(d, b) - (upper ? w1 : w));
}

static NMATH_NOINLINE double pnbb_log_tail(double x, double o_x, double a, double b,
                                           double ncp, int upper)
{
    double lam = .5 * ncp, j0 = floor(lam);
    double A0 = pnbb_logterm(j0, x, o_x, a, b, lam, upper);
    double d = fmax2(1., ceil(2. * sqrt(j0 + 1.))), jn = j0, An = A0, jf = j0;
    for (int i = 0; i < 64; i++) {
        jf = upper ? fmax2(0., j0 - d) : j0 + d;
        An = pnbb_logterm(jf, x, o_x, a, b, lam, upper);
        if (An < A0 - 40. || jf == 0.)
            break;
        jn = jf;
        d *= 2.;
    }
    for (int i = 0; i < 64 && An < A0 - 300. && fabs(jf - jn) > 1.; i++) {
        double jm = floor(.5 * (jf + jn));
        double Am = pnbb_logterm(jm, x, o_x, a, b, lam, upper);
        if (Am < A0 - 40.) {
            jf = jm;
            An = Am;
        } else {
            jn = jm;
        }
    }
    // the lower tail's first step needs d_(j-1): none at j = 0
    double j = jf, al = a + j, t = 1., sum = 0., off = 0., prev = 0.;
    double r = (upper || j > 0.) ? pnbb_ratio(x, o_x, al, b, upper) : 0.;
    for (long n = 0; n < 10000000L; n++) {
        sum += t;
        if (sum > 1e280) {
            sum *= 1e-280;
            t *= 1e-280;
            prev *= 1e-280;
            off += 280. * M_LN10;
        }
        if ((t < 1e-18 * sum && t <= prev) || (!upper && j == 0.))
            break;
        prev = t;
        if (!isfinite(t) || !isfinite(r))
            return ML_NAN;
        if (upper) {   // 1 - I_x(al + 1) = (1 - I_x(al)) (1 + r), r = d_j / (1 - I_x(al))
            t *= lam / (j + 1.) * (1. + r);
            r *= x * (al + b) / ((al + 1.) * (1. + r));
            j += 1.;
            al += 1.;
        } else {       // I_x(al - 1) = I_x(al) (1 + r), r = d_(j-1) / I_x(al)
            t *= j / lam * (1. + r);
            r *= (al - 1.) / (x * (al + b - 2.) * (1. + r));
            j -= 1.;
            al -= 1.;
        }
    }
    double l = An + off + log(sum);
    return (l <= 1e-12) ? fmin2(l, 0.) : ML_NAN;   // (NaN: not a probability)
}

double pnbeta_best(double x, double o_x, double a, double b, double ncp, int lower_tail,
                   int log_p)
{
    double l = pnbb_log_tail(x, o_x, a, b, ncp, !lower_tail);
    if (isnan(l))   // outside the method's reach: the caller takes R's algorithm
        return l;
    if (log_p && l > -M_LN2) {   // above 1/2: log1p of the other tail
        double q = pnbb_log_tail(x, o_x, a, b, ncp, lower_tail);
        return isnan(q) ? q : R_Log1_Exp(q);
    }
    return log_p ? l : exp(l);
}
