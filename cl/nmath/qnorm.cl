// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qnorm5
// @depends: dpq, rmath_utils
// @source: M. J. Wichura (1988), "Algorithm AS 241: The percentage points of the normal
//          distribution", Applied Statistics 37(3), 477-484 (PPND16, about 16 digits).
//
// The normal quantile.  With p the lower-tail probability and q = p - 1/2:
//   |q| <= 0.425:  z = q A(r) / B(r),  r = 0.180625 - q^2           (degree 7 / 7)
//   otherwise:     r = sqrt(-log(min(p, 1 - p))),
//                  r <= 5:  z = C(r - 1.6) / D(r - 1.6)             (degree 7 / 7)
//                  r > 5:   z = E(r - 5) / F(r - 5)                 (degree 7 / 7)
//                  r >= 816 (log scale only): z = sqrt(2) r, the leading term of the asymptotic
//                           expansion z^2 ~ -2 log p (as R >= 4.1 does)
//                  with the sign of q.
// On the log scale, log(min(p, 1 - p)) is the argument itself whenever it is the smaller tail,
// so that tails far below the smallest double (log p = -1e5, say) still give finite quantiles.
// p = 0 and 1 give -+Inf, p outside [0, 1] NaN, sd = 0 the mean, sd < 0 NaN.

__constant double qnorm_a[8] = {   // numerator, |q| <= 0.425
    3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
    1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
    3.3430575583588128105e+4, 2.5090809287301226727e+3
};
__constant double qnorm_b[8] = {   // denominator, |q| <= 0.425
    1., 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
    2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4,
    5.2264952788528545610e+3
};
__constant double qnorm_c[8] = {   // numerator, r <= 5
    1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
    3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
    2.27238449892691845833e-2, 7.74545014278341407640e-4
};
__constant double qnorm_d[8] = {   // denominator, r <= 5
    1., 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
    1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
    1.05075007164441684324e-9
};
__constant double qnorm_e[8] = {   // numerator, r > 5
    6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
    2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
    2.71155556874348757815e-5, 2.01033439929228813265e-7
};
__constant double qnorm_f[8] = {   // denominator, r > 5
    1., 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
    7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
    2.04426310338993978564e-15
};

// coefficient k of range r's polynomial (Horner's rule, c[7] first)
#define QNORM_COEF(c0, c1, c2, r, k) ((r) == 0 ? c0[k] : (r) == 1 ? c1[k] : c2[k])

double qnorm5(double p, double mu, double sigma, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(mu) || isnan(sigma))
        return p + mu + sigma;
    R_Q_P01_boundaries(p, ML_NEGINF, ML_POSINF);
    if (sigma < 0)
        ML_WARN_return_NAN;
    if (sigma == 0)
        return mu;

    double p_ = R_DT_qIv(p);   // the lower-tail probability
    double q = p_ - 0.5;
    // The range: 0 central, 1 tail with r <= 5, 2 tail beyond, 3 the asymptotic term.  The
    // three rational functions share one evaluation (coefficients chosen by a select at fixed
    // indices), so that a GPU warp whose elements fall in different ranges evaluates one
    // rational function, not three; each element's operations are those of its own range.
    int range = 0;
    double t, m = 1.;
    if (fabs(q) <= .425) {
        t = .180625 - q * q;
        m = q;
    } else {
        // -log of the smaller tail, taken from the argument itself when that is its log
        double lsmall;
        if (log_p && ((lower_tail && q <= 0) || (!lower_tail && q > 0)))
            lsmall = p;
        else
            lsmall = log((q > 0) ? R_DT_CIv(p) : p_);
        t = sqrt(-lsmall);
        // r >= 816 only on the log scale (log p < -665856): the leading term sqrt(-2 log p) of
        // the asymptotic expansion, better there than E/F (which tends to a constant)
        range = t <= 5. ? 1 : t >= 816 ? 3 : 2;
        if (range == 1)
            t += -1.6;
        else if (range == 2)
            t += -5.;
    }
    double val;
    if (range == 3) {
        val = t * M_SQRT2;
    } else {
        double num = QNORM_COEF(qnorm_a, qnorm_c, qnorm_e, range, 7);
        double den = QNORM_COEF(qnorm_b, qnorm_d, qnorm_f, range, 7);
#pragma unroll
        for (int k = 6; k >= 0; k--) {
            num = num * t + QNORM_COEF(qnorm_a, qnorm_c, qnorm_e, range, k);
            den = den * t + QNORM_COEF(qnorm_b, qnorm_d, qnorm_f, range, k);
        }
        val = m * num / den;
    }
    if (range > 0 && q < 0.0)
        val = -val;
    return mu + sigma * val;
}
