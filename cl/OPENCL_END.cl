// SPDX-License-Identifier: GPL-2.0-or-later
// The close of layer 0, emitted after the library's units and before the kernel's own code:
// what OPENCL.cl set up for the units only.  It has no annotation block: it is not a unit.

#ifdef DASKCL_NOINLINE
// the built-ins as the platform defines them, for the kernel's code (a user's kernel may call
// them on float or vector types, which the units' double wrappers do not take)
#pragma pop_macro("log")
#pragma pop_macro("exp")
#pragma pop_macro("sin")
#pragma pop_macro("cos")
#pragma pop_macro("tan")
#pragma pop_macro("atan")
#pragma pop_macro("lgamma")
#pragma pop_macro("erfc")
#pragma pop_macro("pow")
#endif
#pragma pop_macro("log1p")   // (both modes: OPENCL.cl's guards of log1p and expm1)
#pragma pop_macro("expm1")

// Rmath.h's names of the normal distribution's functions: R's header defines dnorm, pnorm and
// qnorm as dnorm4, pnorm5 and qnorm5, so a kernel may call either name, as C code against
// libRmath does.  Function-like, so that only calls are renamed.
#define dnorm(x, mu, sigma, give_log) dnorm4(x, mu, sigma, give_log)
#define pnorm(x, mu, sigma, lower_tail, log_p) pnorm5(x, mu, sigma, lower_tail, log_p)
#define qnorm(p, mu, sigma, lower_tail, log_p) qnorm5(p, mu, sigma, lower_tail, log_p)
