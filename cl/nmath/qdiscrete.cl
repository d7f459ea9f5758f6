// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: QDISCRETE_DEFINE, QDISCRETE_MAXIT, QDISCRETE_GALLOP, QDISCRETE_Z_AT_MAX
// @depends: qnorm, dpq, rmath_utils
// @source: the discrete quantile search of R >= 4.2 (M. Maechler, R's qDiscrete_search.h): a
//          start from the Cornish-Fisher expansion  y = mu + sigma (z + gamma (z^2 - 1) / 6),
//          z = qnorm(p) (Cornish & Fisher 1937; Johnson, Kemp & Kotz, Univariate Discrete
//          Distributions, 1.7), then a search with steps that shrink by 8 from y / 64 to 1.
//
// QDISCRETE_DEFINE(NAME, PDIST, HAS_MAX) defines, for a distribution with two parameters
// (a, b) and distribution function PDIST(y, a, b, lower_tail, log_p) (a function-like macro of
// the including unit), the functions
//
//   NAME_search(y, &z, p, a, b, incr, lower_tail, log_p)
//       from y (with z = PDIST(y)), steps of incr to the left while the distribution function
//       of the step's left end still reaches p (lower tail: P[X <= y] >= p; upper tail:
//       P[X > y] < p), or to the right until it does; returns the final y (and its z);
//   NAME_body(p, a, b, mu, sigma, gamma, lower_tail, log_p)
//       the quantile: the Cornish-Fisher start, R's fuzz of p (8 DBL_EPSILON relative on the
//       probability scale, 2 DBL_EPSILON on the log scale, towards the left-continuous
//       quantile), a unit-step search below y = 4096, and above it steps of floor(y / 64),
//       shrinking by 8, until a step of 1 (or one below y 1e-15) has been searched; a walk
//       to the right longer than QDISCRETE_GALLOP steps goes on by doubling and bisection
//       (NAME_gallop), to the same lattice point in far fewer evaluations.
//
// Out of line (NMATH_NOINLINE: DASKCL_NOINLINE, the GPU default) the distribution function is
// called through one wrapper, NAME_pdist, and the search is one function: the compiler gets one
// copy of PDIST's body instead of one per call site (four, the search inlined twice into the
// body: eight), the same bits.
//
// With HAS_MAX, y never exceeds a (the binomial size).  The result is the smallest y with
// P[X <= y] >= p (lower tail), or with P[X > y] < p (upper tail), for the fuzzed p, below
// y = 1e15; the path of the search only matters above.

// a bound on the steps of one walk to the left, which R's loops do not have: with a finite
// start they end before it (a walk to the left is at most 4096 unit steps or 64 of y / 64, then
// 8 of each smaller step); it only keeps a device from looping on pathological input
#define QDISCRETE_MAXIT (1L << 40)

// steps of R's walk to the right before the walk becomes a search by doubling and bisection
// (NAME_gallop): R's own answer, the first lattice point of the walk where the condition holds,
// since the distribution function is monotone, in log2 of the steps.  R walks from near 0 a unit
// at a time where the Cornish-Fisher start is poor (qnbinom_mu(0.2, 0.66, 1.6e8): 1.9e7 steps);
// the first stage of R's staged search (steps of y / 64) needs more than 64 only where the start
// is below 1/2 of the answer.
#define QDISCRETE_GALLOP 64

// Built with DASKCL_ACCURACY_BEST, a walk to the right that stops at the maximum a (HAS_MAX)
// records the distribution function there (1, resp. 0 for the upper tail) as its z, so that
// the next, smaller steps walk back left from a.  R's search keeps the z of the last point
// below a, and the smaller steps then walk right again: from a start below the answer with
// the first step overshooting a, it answers a (qbinom(1e-253, 58215, 0.99985): 58215, not 57970).
#ifdef DASKCL_ACCURACY_BEST
#define QDISCRETE_Z_AT_MAX 1
#else
#define QDISCRETE_Z_AT_MAX 0
#endif

#define QDISCRETE_DEFINE(NAME, PDIST, HAS_MAX)                                                 \
static NMATH_NOINLINE double NAME##_pdist(double y, double a, double b, int lower_tail,        \
                                          int log_p)                                           \
{                                                                                              \
    return PDIST(y, a, b, lower_tail, log_p);                                                  \
}                                                                                              \
                                                                                               \
/* whether R's walk to the right stops at y (at or beyond a; NaN; the condition), *z the      \
   distribution function there (unset at or beyond a) */                                       \
static int NAME##_stop(double y, double *z, double p, double a, double b, int lower_tail,      \
                       int log_p)                                                              \
{                                                                                              \
    if (HAS_MAX && y >= a) {                                                                   \
        if (QDISCRETE_Z_AT_MAX)                                                                \
            *z = lower_tail ? R_D__1 : R_D__0;                                                 \
        return 1;                                                                              \
    }                                                                                          \
    *z = NAME##_pdist(y, a, b, lower_tail, log_p);                                             \
    return isnan(*z) || (lower_tail ? (*z >= p) : (*z < p));                                   \
}                                                                                              \
                                                                                               \
/* the lattice point y0 + k incr (k > 0) right of y0 where the condition first holds, by       \
   doubling steps, then bisection: R's walk a step at a time, in log2(k) evaluations */        \
static NMATH_NOINLINE double NAME##_gallop(double y0, double *z, double p, double a,           \
                                           double b, double incr, int lower_tail, int log_p)   \
{                                                                                              \
    double klo = 0, khi = 1, zlo = *z, zhi = *z, step = 1;                                     \
    for (long it = 0; it < 2048; ++it) {                                                       \
        double y = y0 + khi * incr;                                                            \
        if (NAME##_stop(y, &zhi, p, a, b, lower_tail, log_p))                                  \
            break;                                                                             \
        klo = khi;                                                                             \
        zlo = zhi;                                                                             \
        step *= 2;                                                                             \
        khi = klo + step;                                                                      \
    }                                                                                          \
    while (khi - klo > 1) {                                                                    \
        double km = klo + floor((khi - klo) / 2), zm;                                          \
        if (!(km > klo && km < khi))                                                           \
            break;     /* beyond 2^53 no double lies between: khi, the least one found */      \
        if (NAME##_stop(y0 + km * incr, &zm, p, a, b, lower_tail, log_p)) {                    \
            khi = km;                                                                          \
            zhi = zm;                                                                          \
        } else {                                                                               \
            klo = km;                                                                          \
            zlo = zm;                                                                          \
        }                                                                                      \
    }                                                                                          \
    double y = y0 + khi * incr;                                                                \
    if (HAS_MAX && y >= a) {   /* R's walk returns a, its z that of the last point below */    \
        *z = QDISCRETE_Z_AT_MAX ? (lower_tail ? R_D__1 : R_D__0) : zlo;                        \
        return a;                                                                              \
    }                                                                                          \
    *z = zhi;                                                                                  \
    return y;                                                                                  \
}                                                                                              \
                                                                                               \
static NMATH_NOINLINE double NAME##_search(double y, double *z, double p, double a,            \
                                           double b, double incr, int lower_tail, int log_p)   \
{                                                                                              \
    int left = lower_tail ? (*z >= p) : (*z < p);                                              \
    if (left) {                                                                                \
        for (long it = 0; it < QDISCRETE_MAXIT; ++it) {                                        \
            double newz = -1.;                                                                 \
            if (y > 0)                                                                         \
                newz = NAME##_pdist(y - incr, a, b, lower_tail, log_p);                        \
            else if (y < 0)                                                                    \
                y = 0;                                                                         \
            if (y == 0 || isnan(newz) || (lower_tail ? (newz < p) : (newz >= p)))              \
                return y;                                                                      \
            y = fmax2(0, y - incr);                                                            \
            *z = newz;                                                                         \
        }                                                                                      \
        return y;                                                                              \
    }                                                                                          \
    for (long it = 0; it < QDISCRETE_GALLOP; ++it) {                                           \
        y += incr;                                                                             \
        if (NAME##_stop(y, z, p, a, b, lower_tail, log_p))                                     \
            return HAS_MAX && y > a ? a : y;                                                   \
    }                                                                                          \
    return NAME##_gallop(y, z, p, a, b, incr, lower_tail, log_p);                              \
}                                                                                              \
                                                                                               \
static double NAME##_body(double p, double a, double b, double mu, double sigma,               \
                          double gamma, int lower_tail, int log_p)                             \
{                                                                                              \
    double z = qnorm5(p, 0., 1., lower_tail, log_p);                                           \
    double y = R_forceint(mu + sigma * (z + gamma * (z * z - 1) / 6));                         \
    if (y < 0)                                                                                 \
        y = 0.;                                                                                \
    if (!isfinite(y))    /* NaN as R; +Inf: R's search would not end */                        \
        return y;                                                                              \
    z = NAME##_pdist(y, a, b, lower_tail, log_p);                                              \
    /* fuzz towards left continuity (not too much: that errs in the upper tail) */             \
    if (log_p) {                                                                               \
        double e = 2 * DBL_EPSILON;                                                            \
        if (lower_tail && p > -DBL_MAX)                                                        \
            p *= 1 + e;                                                                        \
        else                                                                                   \
            p *= 1 - e;                                                                        \
    } else {                                                                                   \
        double e = 8 * DBL_EPSILON;                                                            \
        if (lower_tail)                                                                        \
            p *= 1 - e;                                                                        \
        else if (1 - p > 4 * e)                                                                \
            p *= 1 + e;                                                                        \
    }                                                                                          \
    if (y < 4096)                                                                              \
        return NAME##_search(y, &z, p, a, b, 1, lower_tail, log_p);                            \
    double oldincr, incr = floor(y / 64);                                                      \
    do {                                                                                       \
        oldincr = incr;                                                                        \
        y = NAME##_search(y, &z, p, a, b, incr, lower_tail, log_p);                            \
        incr = fmax2(1, floor(incr / 8));                                                      \
    } while (oldincr > 1 && incr > y * 1e-15);                                                 \
    return y;                                                                                  \
}
