// SPDX-License-Identifier: GPL-2.0-or-later
// Layer 0 of every daskcl program: double precision, strict IEEE evaluation order, and the
// special values. Always emitted first; it has no annotation block because it is not a unit.
//
// Configuration macros (set with -D in the build options):
//   DASKCL_FP_CONTRACT   define to allow a*b+c to be contracted into fma.  Off by default, so
//                        that expressions round as they do in R's C code on x86-64; the
//                        R-agreement tests run with it off.
//   DASKCL_NOINLINE      define to keep the heavy shared routines of the library (TOMS 708's
//                        bratio and its parts, the incomplete gamma core, log-gamma and
//                        Stirling's error, the noncentral, Tukey and Bessel cores) out of line.
//                        A kernel that reaches bratio through several call sites (qbeta's
//                        Newton steps, pf, the method classifier of a sorted launch) then holds
//                        one copy of it instead of one per site: less for the compiler to
//                        optimise, at the cost of a call.  Chosen per device by measurement
//                        (benchmarks/bench_build.py --census).  It also keeps the costly math
//                        built-ins (log, exp, log1p, expm1, pow, sin, cos, tan, atan, lgamma,
//                        erfc; log1p and expm1 with their guards below) out of line in the
//                        library's units: each call of a built-in was
//                        expanded in place, 60-100 PTX instructions for a log, which made up
//                        half to two thirds of the GPU programs (qf: 1.95 MB of PTX, 0.63 MB so).
//                        The same bits; kernels ran at 0.95-1.4x the speed of the expanded ones
//                        on an H200 (benchmarks/README.md).  OPENCL_END.cl, emitted after the
//                        units, restores the built-ins for the kernel's own code.

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifdef DASKCL_FP_CONTRACT
#pragma OPENCL FP_CONTRACT ON
#else
#pragma OPENCL FP_CONTRACT OFF
#endif

#ifdef DASKCL_NOINLINE
#define NMATH_NOINLINE __attribute__((noinline))
#else
#define NMATH_NOINLINE
#endif

#ifdef DASKCL_NOINLINE
// One out-of-line copy of each costly built-in for the library's units: the built-in's own
// definition (a macro on some platforms, saved here and restored by OPENCL_END.cl) is used
// once, inside the wrapper, and every later call in the units goes through the wrapper.
#define DASKCL_OUT_OF_LINE_1(f)                                                              \
    static __attribute__((noinline)) double daskcl_##f(double x) { return f(x); }
DASKCL_OUT_OF_LINE_1(log)
DASKCL_OUT_OF_LINE_1(exp)
DASKCL_OUT_OF_LINE_1(sin)
DASKCL_OUT_OF_LINE_1(cos)
DASKCL_OUT_OF_LINE_1(tan)
DASKCL_OUT_OF_LINE_1(atan)
DASKCL_OUT_OF_LINE_1(lgamma)
DASKCL_OUT_OF_LINE_1(erfc)
static __attribute__((noinline)) double daskcl_pow(double x, double y) { return pow(x, y); }
#undef DASKCL_OUT_OF_LINE_1
#pragma push_macro("log")
#pragma push_macro("exp")
#pragma push_macro("sin")
#pragma push_macro("cos")
#pragma push_macro("tan")
#pragma push_macro("atan")
#pragma push_macro("lgamma")
#pragma push_macro("erfc")
#pragma push_macro("pow")
#undef log
#undef exp
#undef sin
#undef cos
#undef tan
#undef atan
#undef lgamma
#undef erfc
#undef pow
#define log(x)    daskcl_log(x)
#define exp(x)    daskcl_exp(x)
#define sin(x)    daskcl_sin(x)
#define cos(x)    daskcl_cos(x)
#define tan(x)    daskcl_tan(x)
#define atan(x)   daskcl_atan(x)
#define lgamma(x) daskcl_lgamma(x)
#define erfc(x)   daskcl_erfc(x)
#define pow(x, y) daskcl_pow(x, y)
#endif

// The head of the guards below: out of line with DASKCL_NOINLINE (as the built-ins above),
// else inline
#ifdef DASKCL_NOINLINE
#define DASKCL_GUARD static __attribute__((noinline)) double
#else
#define DASKCL_GUARD static inline double
#endif

// log1p for the library's units, in both modes: x itself where |x| < 2^-53, which is log1p(x)
// to the last bit (x^2 / 2 is below half an ulp of x), because a device's log1p may lose a
// subnormal x (PoCL's log1p(5e-324) is 0 and log1p(-1.33877e-319) -1.3387e-319; through
// R_Log1_Exp(x) = log1p(-exp(x)) for x < -37 that made qexp(5e-324, 1.7e9) 0, R's 8.5e-315,
// and pnorm(38.46, log_p = TRUE) 0, R's -5e-324).  Restored by OPENCL_END.cl.
DASKCL_GUARD daskcl_log1p(double x)
{
    return (fabs(x) < 0x1p-53) ? x : log1p(x);
}
#pragma push_macro("log1p")
#undef log1p
#define log1p(x)  daskcl_log1p(x)

// expm1 for the library's units, in both modes (out of line with DASKCL_NOINLINE): below -36,
// -1 + exp(x), which rounds to the double nearest expm1(x) (exp(x) < 2.4e-16, and its own
// error, below 1e-31, moves the sum only at a tie), because a device's expm1 may round the
// wrong way next to -1: PoCL's expm1 is -1 on [-37.43, -36.74], where the nearest double is
// -1 + 2^-53 (R's, glibc's).  R's discrete quantile searches of the upper tail on the log
// scale take 1 - x from it: qsignrank(-37.42848898216495, 200, FALSE, TRUE) was 16185, R's
// 16180 (a random search, 2026-11-28).  Restored by OPENCL_END.cl.
DASKCL_GUARD daskcl_expm1(double x)
{
    return (x < -36.0) ? -1.0 + exp(x) : expm1(x);
}
#pragma push_macro("expm1")
#undef expm1
#define expm1(x)  daskcl_expm1(x)
#undef DASKCL_GUARD

#define ML_NAN    ((double)NAN)
#define ML_POSINF ((double)INFINITY)
#define ML_NEGINF (-(double)INFINITY)
