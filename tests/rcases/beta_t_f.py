# SPDX-License-Identifier: GPL-2.0-or-later
"""The beta, t and F distributions: dbeta, pbeta (TOMS 708), qbeta (AS 109 and R's log-scale
Newton), dt, pt, qt (Hill), df, pf, qf."""

from __future__ import annotations

import numpy as np

from . import RCase, grid, nan_inf

UNIT_X = grid(
    0.0, 1e-310, 1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.1, 0.2, 0.29, 0.3, 0.4, 0.5,
    0.6, 0.7, 0.8, 0.9, 0.99, 0.999, 1 - 1e-10, 1 - 2**-53, 1.0, 2.0, -1.0, nan_inf,
)
# every method of bratio: tiny shapes (fpser, apser), a or b <= 1 (bpser, bup + bgrat), b0 < 40
# (bup + bpser / bgrat), 40 <= b0 <= 100 and beyond (bfrac, basym), the limits 0 and Inf
SHAPES = grid(
    1e-300, 1e-20, 1e-16, 1e-10, 1e-3, 0.1, 0.5, 0.9, 1.0, 1.5, 2.0, 5.0, 10.0, 14.5, 15.0,
    16.0, 30.0, 39.5, 40.0, 50.0, 100.0, 150.0, 1000.0, 1e5, 1e10, 1e15, 1e300, 0.0, -1.0,
    nan_inf,
)
# probabilities and log-probabilities in one axis (see continuous.py)
P = grid(
    0.0, 1e-310, 1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9,
    0.99, 0.999, 1 - 1e-10, 1 - 2**-53, 1.0, 1.5,
    -1e-300, -1e-20, -1e-10, -1e-3, -0.1, -0.5, -np.log(2), -1.0, -3.0, -10.0, -40.0, -100.0,
    -700.0, -800.0, nan_inf,
)
# qbeta's main grid leaves the log tail (log p = -700, -800) to its own case
P_QBETA = [p for p in P if p not in (-700.0, -800.0)]
# qbeta's shapes without the extremes (those are in qbeta[extreme])
QB_SHAPES = grid(
    0.05, 0.1, 0.5, 0.9, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1000.0, 1e10, 0.0,
    -1.0, nan_inf,
)
T_X = grid(
    np.linspace(-10, 10, 21), 0.3, -0.3, 40.0, -40.0, 100.0, 1e-300, -1e-300, 1e-10, 1e10,
    -1e10, 1e50, -1e50, 1e300, -1e300, nan_inf,
)
T_DF = grid(
    1e-300, 1e-10, 0.01, 0.1, 0.5, 0.99, 1.0, 1 + 1e-13, 1.5, 2.0, 2 + 1e-13, 2.5, 3.0, 4.5, 5.0,
    10.0, 30.5, 100.0, 1e3, 4e5, 1e6, 1e10, 1e15, 1e20, 1e25, 1e300, 0.0, -1.0, nan_inf,
)
F_X = grid(0.0, 1e-300, 1e-10, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1e10, 1e300, -1.0, nan_inf)
QF_DF = grid(
    0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0, 50.5, 1e3, 1e6, 1e10, 1e15, 1e300, 0.0, -1.0,
    nan_inf,
)
F_DF = grid(
    1e-300, 1e-5, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0, 50.5, 1e3, 4e5, 1e6, 1e10, 1e14, 1e15,
    1e300, 0.0, -1.0, nan_inf,
)

LOADER = (
    "for shapes > 2 the density is (a+b-1) dbinom_raw(a-1; a+b-2, x): exp of a log-density of "
    "up to ~-700 whose terms (stirlerr, bd0) differ from R's by a few ulps, which the "
    "exponential scales by |log density|"
)
QBETA_NEWTON = (
    "R's Newton iteration stops at |dx| <= 4e-16 (x + x_new) or at its accuracy acu; where "
    "pbeta is ill-conditioned (quantiles near 1e-300 from tiny shapes, or pbeta's last bits "
    "noisy on the log scale) the device's and glibc's last bits make it stop at different "
    "iterates"
)

CASES = [
    RCase("dbeta", {"x": UNIT_X, "shape1": SHAPES, "shape2": SHAPES}, rtol=5e-13, why=(
        "the log-density is a sum of terms of size up to ~700 (log x, log1p(-x), lbeta or "
        "Loader's stirlerr and bd0): the exponential turns a few ulps of that sum into "
        "|sum| ulps of the density (2.3e-13 at 2e-164), and where the sum cancels to near 0 the "
        "log-density has the terms' absolute error (1.8e-13 relative at log density 0.0049)")),
    # (the points where random sampling found the largest differences)
    RCase("dbeta", {"x": grid(0.05, 0.3, 0.6216790908597069, 0.9),
                    "shape1": grid(30.0, 300.0, 3000.0, 7567.659758524963),
                    "shape2": grid(25.0, 250.0, 2214.33762345533, 5000.0)},
          rtol=2e-12, why=LOADER + " (9.1e-13 seen at 1.1e-223)", label="tiny"),
    RCase("pbeta", {"q": UNIT_X, "shape1": SHAPES, "shape2": SHAPES}),
    RCase("pbeta", {"q": grid(0.05, 0.2946184405782679, 0.5, 0.7757928668664286, 0.95),
                    "shape1": grid(3.2, 26.2, 243.09291009508044, 2441.6940157733347),
                    "shape2": grid(80.7, 447.8, 591.132715925176, 2052.3759327832413)},
          rtol=5e-13, why=(
              "values down to 1e-300 come from exp of a log of up to ~-690 (brcomp, bcorr, "
              "algdiv): 1 ulp of the log is |log| ulps of the result"), label="tiny"),
    RCase("qbeta", {"p": P_QBETA, "shape1": QB_SHAPES, "shape2": QB_SHAPES}, rtol=2e-13,
          why=QBETA_NEWTON + " (2.4e-14 seen in this grid, up to 1.1e-11 in random samples "
          "with shapes down to 1e-3)"),
    RCase("qbeta", {"p": grid(-700.0, -800.0), "shape1": QB_SHAPES, "shape2": QB_SHAPES},
          rtol=1e-9, why=QBETA_NEWTON + (
              ": at log p = -800, shapes 30 and 1000 (upper tail), R stops 3.8e-10 from the "
              "quantile (0.599352354986103; mpmath at 420 digits puts log P = -800 at "
              "0.59935235476..., where the NVIDIA H200 stops, 2.8e-11 from it)"),
          label="log-tail"),
    # shapes so small that the search steps out of [0, 1] (R warns "not accurate" and gives
    # 1): daskcl gave 1346 and 7e139, and qf below zero through it; the nearest end is taken
    RCase("qbeta", {"p": grid(-6.999724538929019e-116), "shape1": grid(3.005129306273675e-18),
                    "shape2": grid(3.2144652903540257e-149)}, label="out-of-range-a"),
    RCase("qbeta", {"p": grid(-30.906405687483655), "shape1": grid(2.051479394561415e-10),
                    "shape2": grid(3.723906992331537e-247)}, label="out-of-range-b"),
    RCase("qbeta", {"p": grid(0.9922165565194506), "shape1": grid(0.012746558071014092),
                    "shape2": grid(1.4870185513714264e-156)}, label="out-of-range-c"),
    # (R's own qf is negative at some neighbours of these points, its qbeta above 1 there:
    # not compared; daskcl gives 0, the nearest end)
    RCase("qf", {"p": grid(0.9922165565194506), "df1": grid(2.974037102742853e-156),
                 "df2": grid(0.025493116142028184)}, label="out-of-range-a"),
    RCase("qf", {"p": grid(0.9995597502156687), "df1": grid(1.412548859777027e-14),
                 "df2": grid(0.017038317550924383)}, label="out-of-range-b"),
    RCase("qbeta", {"p": P, "shape1": grid(1e-3, 5.0, 10.0, 1e4, 1e5),
                    "shape2": grid(0.05, 5.0, 10.0, 1e4, 1e5)},
          rtol=1e-6, why=QBETA_NEWTON + (
              ": a quantile ~1e-300 from shape 1e-3 is exp(u) with u found by the log-scale "
              "Newton (6.6e-12 seen); with shapes 10 and 1e4 or 1e5 at log p = -700, -800 or "
              "p = 1 - 1e-300, pbeta's log (R's as daskcl's, the same algorithm) jumps by up to "
              "~5e-4 between neighbouring x, so the iterates of both stop up to 1e-7 apart"),
          label="extreme"),
    RCase("dt", {"x": T_X, "df": T_DF}),
    RCase("pt", {"q": T_X, "df": T_DF}),
    RCase("qt", {"p": P, "df": T_DF}),
    # df just above 1 and a tiny tail: quantiles ~1e155, where the Taylor step's q^2 overflows
    # (daskcl gave NaN for qt(3.95e-165, 1.054), R -3.1e155; random sampling found it)
    RCase("qt", {"p": grid(3.9502688458828163e-165, 1e-160, -9.41578152338612e-157, -1e-150),
                 "df": grid(1.0011765697871857, 1.01, 1.05, 1.0541473223546347, 1.1)},
          label="overflow"),
    RCase("df", {"x": F_X, "df1": F_DF, "df2": F_DF}),
    RCase("pf", {"q": F_X, "df1": F_DF, "df2": F_DF}),
    RCase("qf", {"p": P, "df1": QF_DF, "df2": QF_DF}, rtol=2e-13,
          why="qf is qbeta's quantile transformed: " + QBETA_NEWTON + " (5.7e-14 seen)"),
    # Tiny degrees of freedom, in two grids: 1e-300 against 1e-5 is left out, where R's own
    # quantiles are meaningless (negative, e.g. qf(-1e-20, 1e-300, 1e-5, log.p = TRUE) =
    # -1.4e287: (1 / x - 1) df2 / df1 of a beta quantile x within an ulp of 1) and the devices
    # land on different ulps of x (NVIDIA H200: 0 against R's -1.4e287).
    # df2 = 1e-300 is left out too: R's qbeta steps just beyond [0, 1] there and its qf is
    # negative (qf(1e-20, 0.1, 1e-300) = -1e-299); daskcl's qbeta keeps to [0, 1], so its qf
    # is +Inf (tests/nmath/test_rmath_agreement.py::test_qf_of_a_vanishing_df2_is_never_negative)
    *(RCase("qf", {"p": P, "df1": grid(tiny, 0.1, 10.0, 1e5, 4e5),
                   "df2": grid(*((tiny,) if tiny > 1e-300 else ()), 10.0, 1e5, 4e5)},
            rtol=1e-8, why="qf is qbeta's quantile transformed (see qbeta[extreme]): tiny degrees "
            "of freedom give beta shapes down to 5e-301 and quantiles near 1e-300, and 4e5 "
            "against 10 at p = 1 - 1e-300 lands where pbeta's log is noisy (4.8e-9 seen)",
            label=f"extreme-{tiny:g}") for tiny in (1e-300, 1e-5)),
]
