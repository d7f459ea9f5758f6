// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dnchisq_best
// @depends: dchisq, dpois, ddouble, dpq, rmath_utils
// @source: the noncentral chi-squared density as the Poisson mixture of central ones (Johnson,
//          Kotz & Balakrishnan, Continuous Univariate Distributions 2, 29.2),
//              f(x; df, ncp) = sum_i dpois(i, ncp/2) dchisq(x; df + 2i),
//          summed from the largest term outwards in both directions (Ding 1992; Benton &
//          Krishnamoorthy 2003) by the ratio of consecutive terms (ncp x / 2) / ((i+1)(df+2i)),
//          relative to the largest term, whose logarithm (dpois_raw and dchisq on the log
//          scale) is added at the end, until the terms fall below 1e-17 of the sum.
//
// The `best` accuracy mode's dnchisq for 0 < x < Inf, ncp > 0 (dnchisq.cl calls it under
// DASKCL_ACCURACY_BEST): about 1e-14 relative, on the log scale too, where R stops its sum at
// 5e-15 absolute and replaces a largest term that underflows by a central approximation.  NaN
// beyond its reach (an index beyond 1e15): dnchisq then takes R's algorithm.

double dnchisq_best(double x, double df, double ncp, int give_log)
{
    double lam = .5 * ncp, x2 = .5 * x * lam;   // the ratio: x2 / ((i+1) (df/2 + i))
    double imax = ceil((-(2. + df) + sqrt((2. - df) * (2. - df) + 4. * ncp * x)) / 4.);
    imax = fmax2(imax, (df == 0.) ? 1. : 0.);   // (df = 0: term 0 is the point mass at 0)
    if (!(imax < 1e15))
        return ML_NAN;
    double lmid = dpois_raw(imax, lam, 1) + dchisq(x, df + 2. * imax, 1);
    if (!isfinite(lmid))
        return ML_NAN;
    dd_t sum = dd_d(1.);
    double term = 1., i, q;
    for (i = imax;; i++) {   // upwards
        q = x2 / ((i + 1.) * (.5 * df + i));
        term *= q;
        sum = dd_add_d(sum, term);
        if (q < 1. && term < 1e-17 * sum.hi)
            break;
    }
    term = 1.;
    for (i = imax; i > ((df == 0.) ? 1. : 0.); i--) {   // downwards
        q = i * (.5 * df + i - 1.) / x2;
        term *= q;
        sum = dd_add_d(sum, term);
        if (q < 1. && term < 1e-17 * sum.hi)
            break;
    }
    double l = lmid + dd_log(sum);
    return give_log ? l : exp(l);
}
