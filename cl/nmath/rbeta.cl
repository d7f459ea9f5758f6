// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rbeta
// @depends: rgamma, philox, rng_math, rmath_utils
// @source: R. C. H. Cheng (1978), "Generating beta variates with nonintegral shape
//          parameters", Comm. ACM 21(4), 317-322: algorithm BB for min(a, b) > 1 and
//          algorithm BC for min(a, b) <= 1 (as R does); for a + b > 1e6 the ratio
//          G1 / (G1 + G2) of gamma variates (L. Devroye (1986), "Non-Uniform Random Variate
//          Generation", Springer, section IX.4).
//
// Both propose V = beta log(U1 / (1 - U1)), W = a0 e^V (a0 = the smaller shape in BB, the
// larger in BC) and deliver X = W / (b0 + W), a Beta(a0, b0) variate, or b0 / (b0 + W) = 1 - X
// when the shapes were given the other way round.  BB accepts by the squeeze
// S + 1 + log 5 >= 5 Z, then S >= log Z, then r + alpha log(alpha / (b0 + W)) >= log Z; BC by
// its two rejection squeezes (k1, k2) and alpha (log(alpha / (b0 + W)) + V) - log 4 >= log Z.
// 1 + log 5 and log 4 are used to full precision; k1 and k2 with the paper's constants.  W is
// capped at DBL_MAX where e^V overflows, as R does.
//
// Cheng's acceptance tests subtract terms of the size of a + b to get values of order 1, so
// their rounding error grows like (a + b) DBL_EPSILON; beyond a + b = 1e6 (error 2e-10) the
// variate is X = G1 / (G1 + G2) from two gamma variates (rgamma, Marsaglia & Tsang), exact and
// free of cancellation for any shapes (formed as 1 / (1 + G2/G1), so that it cannot overflow).
//
// R's domain rules: NaN for NaN or negative shapes; 1/2 for two infinite shapes; 0 or 1 with
// probability 1/2 each for two zero shapes; 1 for infinite shape1 or zero shape2; 0 for
// infinite shape2 or zero shape1.

#define RBETA_LOG4 1.3862943611198906
#define RBETA_1PLOG5 2.6094379124341003

static inline double rbeta_w(double a0, double v)
{
    const double w = a0 * rng_exp(v);
    return isfinite(w) ? w : DBL_MAX;
}

double rbeta(rng_stream *s, double aa, double bb)
{
    if (isnan(aa) || isnan(bb) || aa < 0.0 || bb < 0.0)
        ML_WARN_return_NAN;
    if (!isfinite(aa) && !isfinite(bb))
        return 0.5;
    if (aa == 0.0 && bb == 0.0)
        return (unif_rand(s) < 0.5) ? 0.0 : 1.0;
    if (!isfinite(aa) || bb == 0.0)
        return 1.0;
    if (!isfinite(bb) || aa == 0.0)
        return 0.0;

    if (aa + bb > 1e6) {                            // two gamma variates
        const double g1 = rgamma(s, aa, 1.0), g2 = rgamma(s, bb, 1.0);
        return (g1 >= g2) ? 1.0 / (1.0 + g2 / g1) : (g1 / g2) / (1.0 + g1 / g2);
    }
    double a0, b0, w = 0.0;
    int accepted = 0;
    if (fmin(aa, bb) > 1.0) {                       // algorithm BB
        a0 = fmin(aa, bb);
        b0 = fmax(aa, bb);
        const double alpha = a0 + b0;
        const double beta = sqrt((alpha - 2.0) / (2.0 * a0 * b0 - alpha));
        const double gamma = a0 + 1.0 / beta;
        for (int t = 0; t < RNG_MAX_TRIES && !accepted; t++) {
            const double u1 = unif_rand(s), u2 = unif_rand(s);
            const double v = beta * rng_log(u1 / (1.0 - u1));
            w = rbeta_w(a0, v);
            const double z = u1 * u1 * u2;
            const double r = gamma * v - RBETA_LOG4;
            const double sv = a0 + r - w;
            if (sv + RBETA_1PLOG5 >= 5.0 * z) {
                accepted = 1;
            } else {
                const double tz = rng_log(z);
                if (sv >= tz || r + alpha * rng_log(alpha / (b0 + w)) >= tz)
                    accepted = 1;
            }
        }
    } else {                                        // algorithm BC
        a0 = fmax(aa, bb);
        b0 = fmin(aa, bb);
        const double alpha = a0 + b0;
        const double beta = 1.0 / b0;
        const double delta = 1.0 + a0 - b0;
        const double k1 = delta * (0.0138889 + 0.0416667 * b0) / (a0 * beta - 0.777778);
        const double k2 = 0.25 + (0.5 + 0.25 / delta) * b0;
        for (int t = 0; t < RNG_MAX_TRIES && !accepted; t++) {
            const double u1 = unif_rand(s), u2 = unif_rand(s);
            double z;
            if (u1 < 0.5) {
                const double y = u1 * u2;
                z = u1 * y;
                if (0.25 * u2 + z - y >= k1)
                    continue;
            } else {
                z = u1 * u1 * u2;
                if (z <= 0.25) {
                    w = rbeta_w(a0, beta * rng_log(u1 / (1.0 - u1)));
                    accepted = 1;
                    continue;
                }
                if (z >= k2)
                    continue;
            }
            const double v = beta * rng_log(u1 / (1.0 - u1));
            w = rbeta_w(a0, v);
            if (alpha * (rng_log(alpha / (b0 + w)) + v) - RBETA_LOG4 >= rng_log(z))
                accepted = 1;
        }
    }
    if (!accepted)
        return ML_NAN;
    return (aa == a0) ? w / (b0 + w) : b0 / (b0 + w);
}

#undef RBETA_LOG4
#undef RBETA_1PLOG5
