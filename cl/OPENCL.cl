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
//                        (benchmarks/bench_build.py --census).

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

#define ML_NAN    ((double)NAN)
#define ML_POSINF ((double)INFINITY)
#define ML_NEGINF (-(double)INFINITY)
