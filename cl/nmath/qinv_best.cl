// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: qib_t, qib_target, qib_begin, qib_put, QIB_POS, QIB_UNIT, QIB_REAL, QIB_DONE
// @depends: dpq, rmath_constants, rmath_utils
// @source: a bracketing root finder for g(x) = log F(x) - log p, F the smaller tail (whose log
//          keeps its relative precision): steps out from a start in u = log x (support
//          (0, Inf)), logit x ((0, 1)) or asinh x (the real line), doubling, until g changes
//          sign; then the Illinois variant of regula falsi (M. Dowell & P. Jarratt (1972), "The
//          'Pegasus' method for computing the root of an equation", BIT 12, 503-508, and their
//          1971 "A modified regula falsi method", BIT 11, 168-174) safeguarded by bisection
//          whenever three steps have not halved the bracket (R. P. Brent (1973), Algorithms for
//          Minimization without Derivatives, ch. 4), first in u to a width of 1e-3, then in x
//          until the bracket is 2 ulp wide (or holds no other double).
//
// Reverse communication (OpenCL C has no function pointers): the caller evaluates g at s.x,
// increasing in x, while s.phase < QIB_DONE, and passes it to qib_put; s.x is then the
// quantile, or NaN where no sign change lies within the normal doubles (the caller takes R's
// algorithm).  The quantile functions of the `best` accuracy mode (qnchisq_best.cl).

#define QIB_POS 0    // support (0, Inf): u = log x
#define QIB_UNIT 1   // (0, 1): u = logit x
#define QIB_REAL 2   // the real line: u = asinh x
#define QIB_DONE 3

typedef struct {
    int kind, phase, side, stale, n;   // phase 0: stepping out, 1: in u, 2: in x, 3: done
    double x, u, step;                 // the point asked for, its u, the step out
    double ulo, uhi, xlo, xhi, glo, ghi, width;
} qib_t;

// log of the smaller tail's probability and which tail it is (lower = 1: lower), from p given
// for lower_tail on the log scale or not; 0 < p < 1 (R_Q_P01_boundaries done)
static inline double qib_target(double p, int lower_tail, int log_p, int *lower)
{
    if (log_p ? p <= -M_LN2 : p <= .5) {
        *lower = lower_tail;
        return log_p ? p : log(p);
    }
    *lower = !lower_tail;
    return log_p ? R_Log1_Exp(p) : log1p(-p);   // (1 - p is exact for p > 1/2)
}

static inline double qib_umax(int kind)
{
    return (kind == QIB_UNIT) ? 36.7 : 709.;   // (logit(1 - 2^-53) = 36.74)
}

static inline double qib_to_x(int kind, double u)
{
    if (kind == QIB_POS)
        return exp(u);
    if (kind == QIB_REAL)
        return sinh(u);
    double x = (u > 0.) ? 1. / (1. + exp(-u)) : exp(u) / (1. + exp(u));
    return fmin(x, 1. - 0x1p-53);
}

static inline double qib_to_u(int kind, double x)
{
    if (kind == QIB_POS)
        return log(x);
    if (kind == QIB_REAL)
        return asinh(x);
    return log(x) - log1p(-x);
}

// begin at x0 (inside the support), stepping out by step0 in u
static inline void qib_begin(qib_t *s, int kind, double x0, double step0)
{
    s->kind = kind;
    s->phase = 0;
    s->n = 0;
    s->u = fmin(fmax(qib_to_u(kind, x0), -708.), qib_umax(kind));
    s->x = qib_to_x(kind, s->u);
    s->step = step0;
    s->xlo = s->xhi = ML_NAN;
    s->side = 0;
    s->stale = 0;
}

// the next point of the Illinois iteration on [a, b], g(a) < 0 < g(b)
static inline double qib_falsi(qib_t *s, double a, double b)
{
    double c = a - s->glo * ((b - a) / (s->ghi - s->glo));
    if (s->stale >= 3 || !(c > a && c < b)) {   // slow or outside: bisect
        s->stale = 0;
        s->width = b - a;
        c = .5 * (a + b);
    }
    return c;
}

static inline void qib_put(qib_t *s, double g)
{
    if (isnan(g) || ++s->n > 400) {
        s->phase = QIB_DONE;
        s->x = ML_NAN;
        return;
    }
    if (g == 0.) {
        s->phase = QIB_DONE;
        return;
    }
    int lo = g < 0.;     // the new point replaces the bracket's end on its side
    if (lo) {
        s->xlo = s->x;
        s->ulo = s->u;
        s->glo = g;
    } else {
        s->xhi = s->x;
        s->uhi = s->u;
        s->ghi = g;
    }
    if (s->phase == 0) {
        if (!isnan(s->xlo) && !isnan(s->xhi)) {   // a sign change: regula falsi in u
            s->phase = 1;
            s->width = s->uhi - s->ulo;
        } else {
            double lim = (g < 0.) ? qib_umax(s->kind) : -708.;
            if (s->u == lim) {   // no sign change among the normal doubles
                s->phase = QIB_DONE;
                s->x = ML_NAN;
                return;
            }
            s->u = (g < 0.) ? fmin(s->u + s->step, lim) : fmax(s->u - s->step, lim);
            s->step *= 2.;
            s->x = qib_to_x(s->kind, s->u);
            return;
        }
    } else {
        // Illinois: the end kept twice in a row has its value halved
        if (s->side == (lo ? 1 : -1)) {
            if (lo)
                s->ghi *= .5;
            else
                s->glo *= .5;
        }
        s->side = lo ? 1 : -1;
        s->stale++;
        double w = (s->phase == 1) ? s->uhi - s->ulo : s->xhi - s->xlo;
        if (w <= .5 * s->width) {
            s->stale = 0;
            s->width = w;
        }
        if (s->phase == 1 && w <= 1e-3) {   // regula falsi in x from here
            s->phase = 2;
            s->side = 0;
            s->stale = 0;
            s->width = s->xhi - s->xlo;
        }
    }
    if (s->phase == 1) {
        s->u = qib_falsi(s, s->ulo, s->uhi);
        s->x = qib_to_x(s->kind, s->u);
        if (s->x > s->xlo && s->x < s->xhi)
            return;
        s->phase = 2;   // (u's rounding: no new x in u)
        s->side = 0;
        s->stale = 0;
        s->width = s->xhi - s->xlo;
    }
    // phase 2: done where the bracket is 2 ulp or less
    if (s->xhi - s->xlo <= 2. * DBL_EPSILON * fmax(fabs(s->xlo), fabs(s->xhi))) {
        s->phase = QIB_DONE;
        s->x = (-s->glo < s->ghi) ? s->xlo : s->xhi;
        return;
    }
    s->x = qib_falsi(s, s->xlo, s->xhi);
    if (!(s->x > s->xlo && s->x < s->xhi)) {   // no double between the ends
        s->phase = QIB_DONE;
        s->x = (-s->glo < s->ghi) ? s->xlo : s->xhi;
    }
}
