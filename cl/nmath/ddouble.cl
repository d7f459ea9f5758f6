// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: dd_t, dd_d, dd_add_d, dd_add, dd_sub, dd_mul_d, dd_mul, dd_div_d, dd_div, dd_hi, dd_log
// @depends:
// @source: T. J. Dekker (1971), "A floating-point technique for extending the available
//          precision", Numer. Math. 18, 224-242; D. E. Knuth, TAOCP vol. 2, 4.2.2 (TwoSum);
//          the error-free product by fma (IEEE 754-2008).
//
// Double-double arithmetic: a value hi + lo with |lo| <= ulp(hi) / 2, about 106 significant
// bits.  Several of R's noncentral distributions (pnbeta, dnbeta, pnchisq, dnchisq, pnt) and
// pdhyper accumulate their series in C's long double, which is 80-bit extended precision on
// x86-64 Linux (R's reference platform); OpenCL C has no long double, so those sums use this
// instead: at least as precise, so the results round to the same doubles as R's in all but
// rare cases, and the tails that R forms as 1 - sum keep the digits R keeps.

typedef struct { double hi, lo; } dd_t;

static inline dd_t dd_d(double a)
{
    dd_t r = { a, 0. };
    return r;
}

static inline double dd_hi(dd_t a) { return a.hi + a.lo; }

// log(a) to about double precision (log(hi) + lo / hi); log(0) = -Inf
static inline double dd_log(dd_t a)
{
    return (a.hi == 0.) ? log(a.hi) : log(a.hi) + a.lo / a.hi;
}

// s + e = a + b exactly, |e| <= ulp(s) / 2 (for any a, b)
static inline dd_t dd_two_sum_(double a, double b)
{
    double s = a + b, bb = s - a;
    dd_t r = { s, (a - (s - bb)) + (b - bb) };
    return r;
}

// the same when |a| >= |b|
static inline dd_t dd_quick_(double a, double b)
{
    double s = a + b;
    dd_t r = { s, b - (s - a) };
    return r;
}

static inline dd_t dd_add_d(dd_t a, double b)
{
    dd_t s = dd_two_sum_(a.hi, b);
    return dd_quick_(s.hi, s.lo + a.lo);
}

static inline dd_t dd_add(dd_t a, dd_t b)
{
    dd_t s = dd_two_sum_(a.hi, b.hi), t = dd_two_sum_(a.lo, b.lo);
    s = dd_quick_(s.hi, s.lo + t.hi);
    return dd_quick_(s.hi, s.lo + t.lo);
}

static inline dd_t dd_sub(dd_t a, dd_t b)
{
    dd_t nb = { -b.hi, -b.lo };
    return dd_add(a, nb);
}

static inline dd_t dd_mul_d(dd_t a, double b)
{
    double p = a.hi * b;
    return dd_quick_(p, fma(a.hi, b, -p) + a.lo * b);
}

static inline dd_t dd_mul(dd_t a, dd_t b)
{
    double p = a.hi * b.hi;
    return dd_quick_(p, fma(a.hi, b.hi, -p) + (a.hi * b.lo + a.lo * b.hi));
}

static inline dd_t dd_div_d(dd_t a, double b)
{
    double q1 = a.hi / b;
    dd_t r = dd_add(a, dd_mul_d(dd_d(-q1), b));
    double q2 = r.hi / b;
    return dd_quick_(q1, q2);
}

static inline dd_t dd_div(dd_t a, dd_t b)
{
    double q1 = a.hi / b.hi;
    dd_t r = dd_sub(a, dd_mul_d(b, q1));
    double q2 = r.hi / b.hi;
    r = dd_sub(r, dd_mul_d(b, q2));
    double q3 = r.hi / b.hi;
    dd_t q = dd_quick_(q1, q2);
    return dd_add_d(q, q3);
}
