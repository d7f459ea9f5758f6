// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: pnchisq_best
// @depends: pgamma, dpois, dpq, rmath_constants, rmath_utils
// @source: the noncentral chi-squared distribution as the Poisson mixture
//              P(X > x) = sum_j dpois(j, ncp / 2) Q(f / 2 + j, x / 2)
//          (and P(X <= x) with P = 1 - Q), Q and P the regularised incomplete gamma
//          functions, summed from near the largest term outwards, as C. G. Ding (1992),
//          "Algorithm AS 275", Applied Statistics 41, 478-482, and D. Benton & K. Krishnamoorthy
//          (2003), "Computing discrete mixtures of continuous distributions: noncentral
//          chisquare, noncentral t and the distribution of the square of the sample multiple
//          correlation coefficient", Comput. Statist. Data Anal. 43, 249-267, propose.  The
//          largest term's index solves j (j + f / 2) = (ncp / 2) (x / 2) in a tail (the ratio of
//          consecutive terms, Q(a+1, y) / Q(a, y) -> y / a, set to one), ncp / 2 in the bulk.
//          The terms are carried by the recurrences Q(a+1, y) = Q(a, y) + y^a e^-y / gamma(a+1)
//          and P(a-1, y) = P(a, y) + y^(a-1) e^-y / gamma(a) (A&S 6.5.21), each in the direction in
//          which it adds positive numbers, through the ratio r = y^a e^-y / (gamma(a+1) Q(a, y))
//          (which they contract), from a start whose term is e^-40 or less of the largest;
//          everything relative to that term's logarithm (pgamma and dpois_raw on the log
//          scale), so that no term underflows and neither tail loses its relative precision.
//
// The `best` accuracy mode's pnchisq for x > 0 finite and ncp > 0 (pnchisq.cl calls it under
// DASKCL_ACCURACY_BEST): about 1e-14 relative in both tails and on the log scale, where
// R's upper tail subtracts the lower from one.  NaN where the sum fails (a term or a ratio
// beyond the doubles, an index beyond 1e15): pnchisq then takes R's algorithm.

// log of term j: log dpois(j, lam) + log Q (upper) or log P (lower) of shape h + j at y
static inline double pncb_logterm(double j, double h, double y, double lam, int upper)
{
    return dpois_raw(j, lam, 1) + pgamma(y, h + j, 1., !upper, 1);
}

// log of the upper (upper = 1) or lower tail
static NMATH_NOINLINE double pncb_log_tail(double x, double f, double ncp, int upper)
{
    double y = .5 * x, h = .5 * f, lam = .5 * ncp;
    double js = .5 * (sqrt(h * h + 4. * lam * y) - h);
    double j0 = floor(upper ? fmax2(lam, js) : fmin2(lam, js));
    double jmin = (upper && h == 0.) ? 1. : 0.;   // Q(0, y) = 0: no term 0 in the upper tail
    j0 = fmax2(j0, jmin);
    if (!(j0 < 1e15))   // the terms' index cannot be counted in doubles
        return ML_NAN;
    double A0 = pncb_logterm(j0, h, y, lam, upper);
    // the start: a term e^-40 or less of term j0 (or the first), bisected back from too far
    double d = fmax2(1., ceil(2. * sqrt(j0 + 1.))), jn = j0, An = A0, jf = j0;
    for (int i = 0; i < 64; i++) {
        jf = upper ? fmax2(jmin, j0 - d) : j0 + d;
        An = pncb_logterm(jf, h, y, lam, upper);
        if (An < A0 - 40. || jf == jmin)
            break;
        jn = jf;
        d *= 2.;
    }
    for (int i = 0; i < 64 && An < A0 - 300. && fabs(jf - jn) > 1.; i++) {
        double jm = floor(.5 * (jf + jn));
        double Am = pncb_logterm(jm, h, y, lam, upper);
        if (Am < A0 - 40.) {
            jf = jm;
            An = Am;
        } else {
            jn = jm;
        }
    }
    double j = jf, a = h + j, t = 1., sum = 0., off = 0., prev = 0.;
    // r: y^a e^-y / gamma(a+1) over Q(a, y) (upper), y^(a-1) e^-y / gamma(a) over P(a, y)
    double r = exp((upper ? dpois_raw(a, y, 1) : dpois_raw(a - 1., y, 1))
                   - pgamma(y, a, 1., !upper, 1));
    for (long n = 0; n < 10000000L; n++) {
        sum += t;
        if (sum > 1e280) {   // rescaled: the largest term may be far above the start's
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
        if (upper) {
            t *= lam / (j + 1.) * (1. + r);
            r *= y / ((a + 1.) * (1. + r));
            j += 1.;
            a += 1.;
        } else {
            t *= j / lam * (1. + r);
            r *= (a - 1.) / (y * (1. + r));
            j -= 1.;
            a -= 1.;
        }
    }
    double l = An + off + log(sum);
    return (l <= 1e-12) ? fmin2(l, 0.) : ML_NAN;   // (NaN: not a probability)
}

double pnchisq_best(double x, double df, double ncp, int lower_tail, int log_p)
{
    double l = pncb_log_tail(x, df, ncp, !lower_tail);
    if (isnan(l))   // outside the method's reach: the caller takes R's algorithm
        return l;
    if (log_p && l > -M_LN2) {   // above 1/2: log1p of the other tail
        double q = pncb_log_tail(x, df, ncp, lower_tail);
        return isnan(q) ? q : R_Log1_Exp(q);
    }
    return log_p ? l : exp(l);
}
