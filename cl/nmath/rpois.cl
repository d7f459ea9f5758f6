// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rpois
// @depends: dpois, philox, rng_math, rmath_utils
// @source: W. Hormann (1993), "The transformed rejection method for generating Poisson random
//          variables", Insurance: Mathematics and Economics 12, 39-45 (algorithm PTRS, for
//          mu >= 10); inversion by sequential search from 0 for mu < 10 (e.g. L. Devroye
//          (1986), "Non-Uniform Random Variate Generation", Springer, section X.3).  R uses
//          J. H. Ahrens & U. Dieter (1982), ACM TOMS 8, 163-179; all are exact.
//
// PTRS: with b = 0.931 + 2.53 sqrt(mu), a = -0.059 + 0.02483 b, 1/alpha = 1.1239 +
// 1.1328 / (b - 3.4), v_r = 0.9277 - 3.6224 / (b - 2): draw U uniform on (-1/2, 1/2) and V on
// (0, 1), u_s = 1/2 - |U|, k = floor((2a / u_s + b) U + mu + 0.43); accept at once if
// u_s >= 0.07 and V <= v_r; reject if k < 0 or (u_s < 0.013 and V > u_s); otherwise accept if
// log(V / alpha / (a / u_s^2 + b)) <= log p(k), where log p(k) = -mu + k log mu - log k! is
// computed as dpois_raw(k, mu, log) (Loader's saddle point, free of the cancellation of the
// three large terms, so the test stays exact for any mu).
//
// Inversion: U compared with p(0) = e^-mu, then U - p(0) with p(1) = p(0) mu, ... (chop-down);
// a U beyond the accumulated mass (rounding, or k > 200) is drawn again.
//
// R's domain rules: NaN for infinite or negative mu; 0 for mu = 0.

static inline double rpois_inversion(rng_stream *s, double mu)
{
    const double p0 = rng_exp(-mu);
    for (int t = 0; t < RNG_MAX_TRIES; t++) {
        double u = unif_rand(s), p = p0;
        for (int k = 0; k <= 200; k++) {
            if (u <= p)
                return (double)k;
            u -= p;
            p *= mu / (double)(k + 1);
        }
    }
    return ML_NAN;
}

static inline double rpois_ptrs(rng_stream *s, double mu)
{
    const double smu = sqrt(mu);
    const double b = 0.931 + 2.53 * smu;
    const double a = -0.059 + 0.02483 * b;
    const double log_inv_alpha = rng_log(1.1239 + 1.1328 / (b - 3.4));
    const double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (int t = 0; t < RNG_MAX_TRIES; t++) {
        const double U = unif_rand(s) - 0.5;
        const double V = unif_rand(s);
        const double us = 0.5 - fabs(U);
        const double k = floor((2.0 * a / us + b) * U + mu + 0.43);
        if (us >= 0.07 && V <= vr)
            return k;
        if (k < 0.0 || (us < 0.013 && V > us))
            continue;
        if (rng_log(V) + log_inv_alpha - rng_log(a / (us * us) + b) <= dpois_raw(k, mu, 1))
            return k;
    }
    return ML_NAN;
}

double rpois(rng_stream *s, double mu)
{
    if (!isfinite(mu) || mu < 0.0)
        ML_WARN_return_NAN;
    if (mu <= 0.0)
        return 0.0;
    return (mu < 10.0) ? rpois_inversion(s, mu) : rpois_ptrs(s, mu);
}
