// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: rng_log, rng_log1p, rng_exp, rng_cotpi
// @depends: rmath_constants
// @source: textbook argument reduction and series (e.g. J.-M. Muller (2016), "Elementary
//          Functions: Algorithms and Implementation", 3rd ed., Birkhauser, ch. 11); the form
//          log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f), R the tail of
//          2 atanh(s) / s, follows from f - 2s = s f.
//
// Elementary functions for the r-functions, built only from IEEE-754 operations that OpenCL
// requires to be correctly rounded in double precision (+, -, *, /, sqrt, conversions, exact
// bit manipulation), so that every device computes the same bits: the built-in log, exp and
// tan may differ by an ulp between devices (OpenCL allows several), which would make variates
// differ between PoCL and a GPU.  Accuracy is about 1 ulp (tests/nmath/test_random_math.py
// measures it against NumPy).  These need the default FP_CONTRACT OFF (OPENCL.cl); with
// DASKCL_FP_CONTRACT a device may fuse a*b+c and results agree only to rounding.
//
//   rng_log(x)     log x: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log m = log(1 + f), f = m - 1
//                  exact, by the atanh series (11 terms: |s| <= 0.1716, s^2 <= 0.0295); plus
//                  e log 2 in two parts (log 2 = LN2_HI + LN2_LO, e LN2_HI exact).
//   rng_log1p(x)   log(1 + x): the same series with f = x itself where 1 + x is in
//                  [sqrt(1/2), sqrt(2)); otherwise log(u) + c/u with u = 1 + x rounded and
//                  c = x - (u - 1) its rounding error.
//   rng_exp(x)     e^x: x = k log 2 + r, |r| <= log(2)/2, Taylor series of e^r - 1 to degree
//                  13 (remainder < 4e-18), scaled by 2^k exactly (twice where 2^k is subnormal).
//   rng_cotpi(p)   cot(pi p) for 0 < p <= 1/2: cos/sin of x = pi p by their Taylor series for
//                  p <= 1/4, else tan(pi (1/2 - p)) (1/2 - p exact), |x| <= pi/4.

#define RNG_LN2_HI 0x1.62e42fee00000p-1     // log 2 to 32 bits (k LN2_HI exact for |k| < 2^21)
#define RNG_LN2_LO 0x1.a39ef35793c76p-33    // log 2 - LN2_HI

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1), f exact
static inline double rng_log1p_core(double f)
{
    const double s = f / (2.0 + f);
    const double z = s * s;
    // R = 2 (z/3 + z^2/5 + ... + z^11/23)
    const double R = z * (0.6666666666666666 + z * (0.4 + z * (0.2857142857142857
                   + z * (0.2222222222222222 + z * (0.18181818181818182 + z * (0.15384615384615385
                   + z * (0.13333333333333333 + z * (0.11764705882352941 + z * (0.10526315789473684
                   + z * (0.09523809523809523 + z * 0.08695652173913043))))))))));
    const double hfsq = 0.5 * f * f;
    return f - (hfsq - s * (hfsq + R));
}

double rng_log(double x)
{
    if (!(x > 0.0)) return (x == 0.0) ? ML_NEGINF : ML_NAN;   // NaN stays NaN
    if (isinf(x)) return x;
    int adj = 0;
    if (x < 0x1.0p-1022) {          // subnormal: scale up exactly
        x *= 0x1.0p54;
        adj = -54;
    }
    const ulong b = as_ulong(x);
    int e = (int)((b >> 52) & 0x7FF) - 1022 + adj;                        // x = 2^e m
    double m = as_double((b & 0x000FFFFFFFFFFFFFUL) | 0x3FE0000000000000UL);  // m in [1/2, 1)
    if (m < M_SQRT1_2) {
        m *= 2.0;
        e -= 1;
    }
    const double f = m - 1.0;        // exact (Sterbenz)
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double R = z * (0.6666666666666666 + z * (0.4 + z * (0.2857142857142857
                   + z * (0.2222222222222222 + z * (0.18181818181818182 + z * (0.15384615384615385
                   + z * (0.13333333333333333 + z * (0.11764705882352941 + z * (0.10526315789473684
                   + z * (0.09523809523809523 + z * 0.08695652173913043))))))))));
    const double hfsq = 0.5 * f * f;
    const double dk = (double)e;
    return dk * RNG_LN2_HI + (f - (hfsq - (s * (hfsq + R) + dk * RNG_LN2_LO)));
}

double rng_log1p(double x)
{
    if (isnan(x)) return x;
    if (x <= -1.0) return (x == -1.0) ? ML_NEGINF : ML_NAN;
    if (x >= -0.2928932188134524 && x < 0.41421356237309503) return rng_log1p_core(x);
    if (isinf(x)) return x;
    const double u = 1.0 + x;
    const double c = x - (u - 1.0);   // the rounding error of u
    return rng_log(u) + c / u;
}

double rng_exp(double x)
{
    if (isnan(x)) return x;
    if (x > 709.782712893384) return ML_POSINF;
    if (x < -745.1332191019412) return 0.0;
    const double k = rint(x * 1.4426950408889634);
    const double hi = x - k * RNG_LN2_HI;           // exact
    const double lo = k * RNG_LN2_LO;
    const double r = hi - lo;
    // e^r - 1 = r + r^2 (1/2! + r (1/3! + ... + r / 13!))
    const double q = 0.5 + r * (0.16666666666666666 + r * (0.041666666666666664
                   + r * (0.008333333333333333 + r * (0.001388888888888889 + r * (0.0001984126984126984
                   + r * (2.48015873015873e-05 + r * (2.7557319223985893e-06 + r * (2.755731922398589e-07
                   + r * (2.505210838544172e-08 + r * (2.08767569878681e-09 + r * (1.6059043836821613e-10
                   + r * 1.1470745597729725e-11)))))))))));
    const double c = (hi - r) - lo;                  // what r lost
    const double p = 1.0 + (r + (r * r * q + c * (1.0 + r)));
    const int ki = (int)k;
    if (ki >= -1021 && ki <= 1023) return p * as_double((ulong)(ki + 1023) << 52);
    if (ki > 1023) return (p * 2.0) * as_double((ulong)(ki - 1 + 1023) << 52);
    return (p * as_double((ulong)(ki + 54 + 1023) << 52)) * 0x1.0p-54;   // subnormal result
}

// sin x and cos x for |x| <= pi/4 by their Taylor series (remainders below 1e-19)
static inline double rng_sin_small(double x)
{
    const double z = x * x;
    return x + x * z * (-0.16666666666666666 + z * (0.008333333333333333
           + z * (-0.0001984126984126984 + z * (2.755731922398589e-06 + z * (-2.505210838544172e-08
           + z * (1.6059043836821613e-10 + z * (-7.647163731819816e-13 + z * (2.8114572543455206e-15
           + z * -8.22063524662433e-18))))))));
}

static inline double rng_cos_small(double x)
{
    const double z = x * x;
    return 1.0 + z * (-0.5 + z * (0.041666666666666664 + z * (-0.001388888888888889
           + z * (2.48015873015873e-05 + z * (-2.755731922398589e-07 + z * (2.08767569878681e-09
           + z * (-1.1470745597729725e-11 + z * (4.779477332387385e-14
           + z * -1.5619206968586225e-16))))))));
}

double rng_cotpi(double p)
{
    if (p <= 0.25) {
        const double x = M_PI * p;
        return rng_cos_small(x) / rng_sin_small(x);
    }
    const double y = M_PI * (0.5 - p);
    return rng_sin_small(y) / rng_cos_small(y);
}

#undef RNG_LN2_HI
#undef RNG_LN2_LO
