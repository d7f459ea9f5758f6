# SPDX-License-Identifier: GPL-2.0-or-later
"""The noncentral beta, chi-squared, F and t distributions: d/p/q of nbeta, nchisq, nf, nt.

R's algorithms for these are series with absolute stopping rules (pnbeta: errmax = 1e-9,
pnchisq: 1e-12, pnt: 1e-12) and recurrences that subtract nearly equal terms; R accumulates
them in 80-bit long double, the device in double-double.  Where the results are tiny tails or
1 - (a sum near 1), R itself warns that full precision may not have been achieved; the grids
stay where R's results carry their digits, and the tolerances say what is left."""

from __future__ import annotations

import math

from . import RCase, grid

NAN, INF = math.nan, math.inf

SERIES_WHY = (
    "R sums these series until an absolute error bound (pnbeta: errmax = 1e-9; pnchisq and "
    "pnt: 1e-12) and forms its terms by recurrences that subtract nearly equal numbers "
    "(I_x(a + j, b) - x^(a+j) (1-x)^b / ...): an ulp of difference in an input (bratio, "
    "exp/log, lbeta on the device and in glibc) moves the sum by up to ~1e-14 absolute, which "
    "is that much relative to the smaller tail"
)

CASES = [
    # --- noncentral beta ------------------------------------------------------------------------
    RCase(
        "dnbeta",
        {"x": grid(0.0, 1e-10, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0, -0.1, 1.1, NAN, INF),
         "shape1": grid(0.5, 1.0, 2.5, 10.0, 100.0, 0.0, -1.0, NAN, INF),
         "shape2": grid(0.5, 1.0, 3.0, 30.0, 0.0, NAN, INF),
         "ncp": grid(0.0, 0.5, 5.0, 50.0, 500.0, -1.0, NAN, INF)},
        rtol=1e-13,
    ),
    # a huge shape1: the largest term's index lost to cancellation (0), and the sum from
    # there outgrew the double range (NaN, where R's long double held it)
    RCase(
        "dnbeta",
        {"x": grid(0.5, 0.9, 0.9999999989999994),
         "shape1": grid(1e6, 1e50, 1.397726504002038e+109, 2.0199538578773385e+124),
         "shape2": grid(7.365680148032983e-199, 3.0, 137.72333749922387),
         "ncp": grid(50.0, 3174.5220805639747, 3489.798294772972)},
        rtol=1e-13, label="huge-shape1",
    ),
    # a subnormal shape1: the ratio of the terms k = 0 and 1, (k + 1)(k + a) / (k + a + b) / dx2,
    # underflowed in (k + a) / (k + a + b) = 2.5e-324 -> 0 and lost the k = 0 term (daskcl
    # 0.7358 for R's 1.1036 = mpmath's at (5e-324, 5e-324, 2, 2); found by a random search
    # against libRmath, 2026-11-28).  (Not x = 1e-320 with shape1 = 5e-324 or ncp < 1: there
    # R's own sum loses ~0.2% to subnormal products, daskcl's is within 3e-4 of mpmath's.)
    RCase(
        "dnbeta",
        {"x": grid(5e-324, 0.5),   # (at x = 1e-200, 1e-300 R's log is 2e-13 off mpmath's)
         "shape1": grid(5e-324, 1e-320),
         "shape2": grid(2.0, 100.0),
         "ncp": grid(2.0, 50.0)},
        rtol=1e-13, label="subnormal-shape1",
    ),
    RCase(
        "pnbeta",
        {"q": grid(0.0, 0.05, 0.2, 0.4, 0.5, 0.6, 0.8, 0.95, 1.0, -0.1, 1.1, NAN, INF),
         "shape1": grid(0.5, 1.0, 2.5, 10.0, 40.0, 0.0, -1.0, NAN),
         "shape2": grid(0.5, 1.0, 3.0, 30.0, 0.0, NAN),
         "ncp": grid(0.0, 0.5, 5.0, 50.0, 200.0, -1.0, NAN)},
        rtol=5e-9, why=SERIES_WHY,
        atol=1e-15,
        atol_why="R promises pnbeta only to errmax = 1e-9 absolute; on an NVIDIA H200 its tail "
                 "3.3e-9 at (0.5, 10, 30, ncp 200) differs from R's by 5.6e-17 absolute, which "
                 "is 1.7e-8 relative",
    ),
    # lower tails below DBL_MIN: R's long double keeps the products of the Poisson weights and
    # I_x(a + j, b) (a subnormal double there), whose log R gives; double-double underflowed
    # (-Inf, or a log off by 5e-13)
    RCase(
        "pnbeta",
        {"q": grid(5e-324, 1e-310, 1e-300, 1e-150),
         "shape1": grid(1.0, 2.1),
         "shape2": grid(4113.187387611203),
         "ncp": grid(20.0, 84.67690876723813)},
        rtol=1e-13, label="long-double-range",
    ),
    # ncp / 2 below an ulp of 1 where I_x(a, b) = 1: exp(-ncp/2) rounds to 1 and the next terms
    # pushed the double-double sum to 1 + ncp/2, whose log daskcl gave (+5e-21 for ncp = 1e-20,
    # a log-probability above 0); R's long double rounds the sum back to 1, log P = 0 (found by
    # a random search against libRmath, 2026-11-28)
    RCase(
        "pnbeta",
        {"q": grid(0.5, 0.99, 0.9999999999999999), "shape1": grid(2.0, 714.6),
         "shape2": grid(3.0, 667.7), "ncp": grid(5e-324, 1e-310, 1e-100, 1e-30, 1e-20, 1e-19)},
        rtol=1e-13, label="tiny-ncp",
    ),
    RCase(
        "pnf",
        {"q": grid(1.0, 5.641582138109139, 100.0), "df1": grid(2.0, 6695.571927479623),
         "df2": grid(410.3272103639402), "ncp": grid(5e-324, 1e-310, 1e-100, 1e-30, 1e-20, 1e-19)},
        rtol=1e-13, label="tiny-ncp",
    ),
    RCase(
        "pnf",
        {"q": grid(1.0425192770784443e-115, 1e-100), "df1": grid(5.581681046369995),
         "df2": grid(2836.001799438939), "ncp": grid(97.74203059164041)},
        rtol=1e-13, label="long-double-range",
    ),
    RCase(
        "qnbeta",
        {"p": grid(0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0, -0.01, -0.7, -4.6, 1.5, NAN, -INF),
         "shape1": grid(0.5, 2.5, 10.0, 0.0, NAN, INF),
         "shape2": grid(0.5, 3.0, 30.0, 0.0, NAN),
         "ncp": grid(0.0, 0.5, 5.0, 50.0, -1.0, NAN)},
        rtol=1e-13,
    ),
    # --- noncentral chi-squared -----------------------------------------------------------------
    RCase(
        "dnchisq",
        {"x": grid(0.0, 1e-10, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 1e4, -1.0, NAN, INF),
         "df": grid(0.0, 0.5, 1.0, 2.0, 3.5, 10.0, 100.0, 1e3, -1.0, NAN, INF),
         "ncp": grid(0.0, 0.1, 1.0, 10.0, 79.0, 81.0, 500.0, 2000.0, -1.0, NAN, INF)},
        rtol=1e-13,
    ),
    RCase(
        "pnchisq",
        {"q": grid(0.0, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, -1.0, NAN, INF),
         "df": grid(0.0, 0.5, 1.0, 3.5, 10.0, 100.0, -1.0, NAN, INF),
         "ncp": grid(0.0, 0.1, 1.0, 10.0, 79.0, -1.0, NAN, INF)},
        rtol=5e-12, why=SERIES_WHY,
    ),
    # ncp >= 80: Ding's series for the lower tail, the upper one as 1 - it (kept above 1e-5)
    RCase(
        "pnchisq",
        {"q": grid(60.0, 80.0, 100.0, 130.0, 160.0),
         "df": grid(0.5, 3.5, 10.0),
         "ncp": grid(80.0, 100.0, 150.0)},
        label="large-ncp", rtol=5e-13, why=SERIES_WHY,
    ),
    # ncp < 80: the Poisson weights are summed until they reach 1 - 1e-15, from exp(-ncp/2) in
    # long double (R: expl); from exp in double that stopped one term early or late for 1 in 13
    # values of ncp, which moved upper tails (and logs of lower ones near 1) by 1e-9 to 1e-5
    # relative, and far upper tails by factors
    RCase(
        "pnchisq",
        {"q": grid(25.0, 45.0, 85.0, 110.0), "df": grid(3.0),
         "ncp": grid(4.140698853083883, 20.417625754974843, 26.84027997258684,
                     31.641163908255507)},
        rtol=5e-12, why=SERIES_WHY, label="weights-stop",
    ),
    # upper tails below DBL_MIN (ncp < 80): R's long double keeps the products of the Poisson
    # weights and the (subnormal) pchisq values, whose log R gives; double-double underflowed
    # (-Inf, or a log off by 1e-6)
    RCase(
        "pnchisq",
        {"q": grid(1700.0, 1989.563412521132, 1990.7395929986913),
         "df": grid(0.006468766865937076, 27.0),
         "ncp": grid(41.50226488187323, 48.7999535490185)},
        rtol=1e-13, label="long-double-range",
    ),
    RCase(
        "qnchisq",
        {"p": grid(0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0, -0.01, -0.7, -4.6, 1.5, NAN, -INF),
         "df": grid(0.0, 0.5, 3.5, 10.0, 100.0, -1.0, NAN, INF),
         "ncp": grid(0.0, 1.0, 10.0, 79.0, 81.0, 300.0, -1.0, NAN)},
        rtol=2e-13,
        why="R bisects until the bracket is narrower than 1e-13 of its midpoint, so where the "
            "last comparisons of pnchisq with p differ by an ulp the midpoints differ by up to "
            "that width",
    ),
    # quantiles that underflow to DBL_MIN: Pearson's start is 0 there, which the doubling
    # never left (a call that did not return); the log scale reaches them too
    RCase(
        "qnchisq",
        {"p": grid(1e-300, 1e-250, 0.7563944042796875, -690.0, -1e-300),
         "df": grid(0.0032277761495595044, 1.0, 2.0),
         "ncp": grid(0.0, 1e-300)},
        rtol=2e-13, why="R bisects until the bracket is narrower than 1e-13 of its midpoint",
        label="underflow",
    ),
    # --- noncentral F ---------------------------------------------------------------------------
    RCase(
        "dnf",
        {"x": grid(0.0, 1e-5, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0, -1.0, NAN, INF),
         "df1": grid(0.5, 1.0, 2.0, 5.0, 30.0, 1e15, 0.0, NAN, INF),
         "df2": grid(0.5, 3.0, 10.0, 100.0, 1e9, 0.0, NAN, INF),
         "ncp": grid(0.0, 0.5, 5.0, 50.0, -1.0, NAN, INF)},
        rtol=1e-13,
    ),
    RCase(
        "pnf",
        {"q": grid(0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, -1.0, NAN, INF),
         "df1": grid(0.5, 1.0, 2.0, 5.0, 30.0, 0.0, NAN, INF),
         "df2": grid(0.5, 3.0, 10.0, 100.0, 1e9, 0.0, NAN, INF),
         "ncp": grid(0.0, 0.5, 5.0, 50.0, -1.0, NAN, INF)},
        rtol=1e-9, why=SERIES_WHY + " (pnf is pnbeta, or pnchisq for df2 > 1e8)",
    ),
    RCase(
        "qnf",
        {"p": grid(0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0, -0.01, -0.7, -4.6, 1.5, NAN, -INF),
         "df1": grid(0.5, 2.0, 5.0, 30.0, 0.0, NAN, INF),
         "df2": grid(0.5, 3.0, 10.0, 1e9, 0.0, NAN, INF),
         "ncp": grid(0.0, 0.5, 5.0, 50.0, -1.0, NAN, INF)},
        rtol=2e-13,
        why="qnchisq's bisection width of 1e-13 (df2 > 1e8; see qnchisq)",
    ),
    RCase(
        "qnf",
        {"p": grid(1e-300, 0.5), "df1": grid(1.0), "df2": grid(1e9), "ncp": grid(0.0)},
        rtol=2e-13, why="qnchisq's bisection width of 1e-13 (df2 > 1e8; see qnchisq)",
        label="underflow",
    ),
    # --- noncentral t ---------------------------------------------------------------------------
    RCase(
        "dnt",
        {"x": grid(-3.0, -1.0, 0.0, 1e-10, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0),
         "df": grid(0.5, 1.0, 3.0, 10.0, 100.0, 1e9),
         "ncp": grid(-1.0, -0.5, 0.5, 1.0, 3.0)},
        rtol=1e-10,
        why="dnt is df / x times the difference of two pnt values (R's formula), which cancels: "
            "pnt's absolute differences of ~1e-16 (see SERIES_WHY) become ~1e-11 relative in "
            "the density's flanks (8.1e-11 seen on an NVIDIA H200 at x = -1, df = 100: "
            "100 times pnt's 1.1e-16)",
    ),
    # (R forms the upper tail as 1 - P in double: the grids keep both tails above ~1e-9)
    RCase(
        "pnt",
        {"q": grid(-3.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, NAN, INF, -INF),
         "df": grid(0.5, 1.0, 3.0, 10.0, 100.0, 5e5, 0.0, -1.0, NAN, INF),
         "ncp": grid(-1.0, -0.5, 0.0, 0.5, 1.0, 3.0, NAN)},
        rtol=1e-12, why=SERIES_WHY + "; the log of a lower tail near 1 keeps that absolute error",
        atol=2.5e-16,
        atol_why="R forms one tail as 1 - (a sum near 1): an ulp of 1 (1.1e-16 absolute, seen "
                 "on an NVIDIA H200) is 2.2e-12 relative at pnt(-1, 10, 3) = 5.1e-5",
    ),
    RCase(
        "pnt",
        {"q": grid(6.0, 8.0, 10.0, 12.0), "df": grid(10.0, 100.0), "ncp": grid(8.0, 10.0)},
        label="shifted", rtol=1e-12,
        why=SERIES_WHY + "; the log of a lower tail near 1 keeps that absolute error",
    ),
    RCase("pnt", {"q": grid(-1.0, 38.0, 41.0, 45.0), "df": grid(10.0, 100.0), "ncp": [41.0]},
          label="large-ncp"),
    # the far left tail, where R's 1 - tnc rounds to 0: tnc is 1 - 5.5028e-17, just above
    # 1 - 2^-54; with q = sqrt(2/pi) del rounded to a double before the product with p (R:
    # (sqrt(2/pi) p) del in long double) it was 1 - 5.574e-17, and 1 - tnc = 2^-53, in pnt and
    # in qnt's bracket (which then ran to -Inf)
    RCase(
        "pnt",
        {"q": grid(-1e100, -40.0, -10.0), "df": grid(563.0567255137432),
         "ncp": grid(0.022706999396588396)},
        label="left-tail-rounding",
    ),
    RCase(
        "qnt",
        {"p": grid(-700.0, 1e-300), "df": grid(563.0567255137432),
         "ncp": grid(0.022706999396588396)},
        label="left-tail-rounding",
    ),
    RCase(
        "qnt",
        {"p": grid(0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0, -0.01, -0.7, -4.6, 1.5, NAN, -INF),
         "df": grid(0.5, 1.0, 3.0, 10.0, 100.0, 0.0, NAN, INF),
         "ncp": grid(-3.0, -0.5, 0.0, 0.5, 3.0, 8.0, NAN)},
        rtol=2e-13,
        why="R bisects until the bracket is narrower than 1e-13 of its larger end, so where the "
            "last comparisons of pnt with p differ by an ulp the midpoints differ by up to that "
            "width",
    ),
    RCase(
        "dnt",
        {"x": grid(-10.0, 0.0, 1.0, 30.0, NAN, INF, -INF), "df": grid(3.0, 0.0, -1.0, NAN, INF),
         "ncp": grid(0.0, 1.0, NAN)},
        label="boundaries",
    ),
]
