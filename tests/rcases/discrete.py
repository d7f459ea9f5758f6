# SPDX-License-Identifier: GPL-2.0-or-later
"""The discrete distributions beyond dbinom and dpois: dgeom, dnbinom, dnbinom_mu, dhyper."""

from __future__ import annotations

import math

from . import RCase, grid, nan_inf
from .loader import BD0_WHY

NAN, INF = math.nan, math.inf

X = grid(range(0, 12), 1e-8, 20.0, 50.0, 99.0, 100.0, 101.0, 1e3, 1e4, 1e6, 1e9, 1e15, 1e300,
         -1.0, -0.5, 2.5, 7.0 + 1e-8, 7.0 + 1e-6, nan_inf)
PROB = grid(0.0, 1e-300, 1e-15, 1e-5, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-10, 1.0,
            -0.1, 1.1, nan_inf)
SIZE = grid(0.0, 1e-10, 0.1, 1.0, 2.5, 10.0, 100.0, 1e4, 1e6, 1e9, 1e15, 1e300, -1.0, nan_inf)

CASES = [
    RCase("dgeom", {"x": X, "prob": PROB}, rtol=5e-13, why=BD0_WHY),
    RCase("dnbinom", {"x": X, "size": SIZE, "prob": PROB}, rtol=5e-13, why=BD0_WHY),
    RCase(
        "dnbinom_mu",
        {"x": X, "size": SIZE,
         "mu": grid(0.0, 1e-300, 1e-10, 0.1, 1.0, 3.7, 10.0, 100.0, 1e4, 1e6, 1e9, 1e15, 1e300,
                    -1.0, nan_inf)},
        rtol=5e-13, why=BD0_WHY,
        atol=1e-305,
        atol_why="for mu / (size + mu) below DBL_MIN (mu = 1e-300, size = 1e15) the intermediate "
                 "is denormal: an ulp of it (4.9e-324), times size, differs between the device "
                 "and glibc",
    ),
    # x < 1e-10 size: R's expansion of the log mass; size = Inf: the Poisson limit
    RCase(
        "dnbinom_mu",
        {"x": grid(range(0, 6), 17.0, 100.0, 1e3, 5476.0),
         "size": grid(1e12, 5.386262227748114e15, 1e20, INF),
         "mu": grid(0.01, 13.1, 122.5, 4280.97, 1e4)},
        label="small-x", rtol=5e-13, why=BD0_WHY,
    ),
    RCase(
        "dhyper",
        # negative non-integer x: R returns 0 before its non-integer check, so no warning
        {"x": grid(range(0, 8), 10.0, 50.0, 99.0, 100.0, 1e3, 5e3, -1.0, -59.01186782392973,
                   -2.5, 2.5, 3 + 1e-8, nan_inf),
         "m": grid(0.0, 1.0, 5.0, 10.0, 100.0, 1e3, 1e4, 1e7, 2.5, -1.0, NAN, INF),
         "n": grid(0.0, 3.0, 10.0, 100.0, 1e4, 1e7, 2.5, -1.0, NAN, INF),
         "k": grid(0.0, 1.0, 5.0, 10.0, 99.0, 1e3, 5e3, 1e6, 2.5, -1.0, NAN, INF)},
        rtol=2e-12,
        why=BD0_WHY + "; dhyper multiplies three such masses (up to 1.8e-12 measured at 5e-278 "
                      "by a random search)",
    ),
]

# --- distribution functions -------------------------------------------------------------------
Q = grid(range(0, 12), 20.0, 50.0, 99.0, 100.0, 101.0, 1e3, 1e4, 1e6, 1e9, 1e12, 1e15,
         -1.0, -1e-8, 2.5, 3 - 1e-8, 3 - 1e-6, nan_inf)
P_TAIL_WHY = (
    "the distribution functions are incomplete beta or gamma integrals (pbeta, pgamma) whose "
    "far tails (values down to 1e-300) come from exp() of large arguments: a 1-ulp difference "
    "of the device's log/exp makes up to ~1e-13 relative (the log-scale values agree to 1e-15)"
)

CASES += [
    RCase("pbinom", {"q": Q, "size": SIZE, "prob": PROB}, rtol=5e-13, why=P_TAIL_WHY),
    RCase("ppois",
          {"q": Q, "lam": grid(0.0, 1e-300, 1e-10, 0.1, 1.0, 3.7, 10.0, 100.0, 1e4 + 0.3, 1e6,
                               1e9, 1e12, 1e15, 1e300, -1.0, nan_inf)},
          rtol=5e-13, why=P_TAIL_WHY),
    RCase("pgeom", {"q": Q, "prob": PROB}, rtol=5e-13, why=P_TAIL_WHY),
    RCase("pnbinom", {"q": Q, "size": SIZE, "prob": PROB}, rtol=5e-13, why=P_TAIL_WHY),
    RCase("pnbinom_mu",
          {"q": Q, "size": SIZE,
           "mu": grid(0.0, 1e-10, 0.1, 1.0, 3.7, 100.0, 1e4, 1e9, 1e15, -1.0, nan_inf)},
          rtol=5e-13, why=P_TAIL_WHY),
    RCase(
        "phyper",
        {"q": grid(range(0, 8), 10.0, 50.0, 99.0, 100.0, 1e3, 5e3, -1.0, 2.5, 3 - 1e-8, nan_inf),
         "m": grid(0.0, 1.0, 5.0, 10.0, 100.0, 1e3, 1e4, 1e7, 2.5, -1.0, NAN, INF),
         "n": grid(0.0, 3.0, 10.0, 100.0, 1e4, 2.5, -1.0, NAN, INF),
         "k": grid(0.0, 1.0, 5.0, 10.0, 99.0, 1e3, 5e3, 1e6, 2.5, -1.0, NAN, INF)},
        rtol=2e-12, why=BD0_WHY + "; phyper multiplies dhyper's three masses by R's pdhyper sum",
    ),
    RCase(
        "phyper",
        {"q": grid(0.0, 1.0, 3.0, 50.0), "m": grid(2.0, 10.0, 1e3), "n": [1e7],
         "k": grid(5.0, 99.0, 1e4)},
        label="cancellation", rtol=5e-10,
        why="R sums the tail with the fewer terms, here the lower one of nearly 1 (1 - 1e-6 at "
            "m = 2, n = 1e7, k = 5), and takes the upper tail as 1 minus it: an ulp of the lower "
            "tail (a device/glibc log or exp difference in dhyper) becomes 2.2e-16 / (1 - P) "
            "relative",
    ),
]

# --- quantiles: the same integers as R ----------------------------------------------------------
PQ = grid(0.0, 1e-300, 1e-12, 1e-5, 0.001, 0.025, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.999,
          1 - 1e-9, 1.0, -1e-300, -1e-12, -0.001, -0.1, -0.7, -2.3, -30.0, -700.0, 1.5, NAN,
          INF, -INF)

CASES += [
    RCase("qbinom",
          {"p": PQ, "size": grid(0.0, 1.0, 2.0, 10.0, 30.5, 100.0, 1e4, 1e6, 1e9, -1.0, NAN, INF),
           "prob": grid(0.0, 1e-12, 1e-5, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0, -0.1, 1.1, NAN)}),
    RCase("qpois",
          {"p": PQ, "lam": grid(0.0, 1e-10, 0.1, 1.0, 3.7, 10.0, 100.0, 4095.0, 5e3, 1e6, 1e9,
                                1e12, -1.0, NAN, INF)}),
    RCase("qgeom",
          {"p": PQ, "prob": grid(0.0, 1e-300, 1e-12, 1e-5, 0.01, 0.3, 0.5, 0.99, 1.0, -0.1, 1.1,
                                 NAN)}),
    RCase("qnbinom",
          {"p": PQ, "size": grid(0.0, 1e-3, 0.5, 1.0, 3.0, 100.0, 1e4, 1e8, -1.0, NAN, INF),
           "prob": grid(0.0, 1e-8, 1e-3, 0.1, 0.5, 0.9, 0.999, 1.0, 1.1, NAN)}),
    RCase("qnbinom_mu",
          {"p": PQ, "size": grid(0.0, 1e-3, 0.5, 1.0, 3.0, 100.0, 1e4, 1e8, -1.0, NAN, INF),
           "mu": grid(0.0, 1e-3, 0.5, 10.0, 1e3, 1e6, -1.0, NAN, INF)}),
    RCase("qhyper",
          {"p": PQ, "m": grid(0.0, 1.0, 5.0, 10.0, 100.0, 1e3, 1e5, 2.5, -1.0, NAN, INF),
           "n": grid(0.0, 3.0, 10.0, 100.0, 1e4, 2.5, -1.0, NAN),
           "k": grid(0.0, 1.0, 5.0, 10.0, 99.0, 1e3, 1e4, 2.5, -1.0, NAN)}),
    # a poor Cornish-Fisher start (small size, large mean: the start is 0, the answer up to
    # ~1e6): R walks there a unit at a time, daskcl doubles and bisects to the same integer
    RCase("qnbinom_mu",
          {"p": grid(1e-4, 0.05, 0.2, 0.35, 0.7, 0.95, -0.05, -0.4, -1.6, -9.2),
           "size": grid(0.05, 0.3, 0.66), "mu": grid(1e5, 1.6e6, 5e6)}, label="poor-start"),
    RCase("qnbinom",
          {"p": grid(1e-4, 0.2, 0.7, 0.95, -0.05, -1.6),
           "size": grid(0.05, 0.66), "prob": grid(1e-6, 1e-5)}, label="poor-start"),
    # exactly at values of the distribution function (R's fuzz decides): probability scale
    RCase("qbinom",
          {"p": [0.07659475200755071, 0.28137670818688115, 0.5888086852407226,
                 0.9155299396398491, 0.9234052479924493, 0.7186232918131188, 0.4111913147592774,
                 0.08447006036015098],   # pbinom(c(5, 7, 9, 12), 30, 0.3, lower = TRUE, FALSE)
           "size": [30.0], "prob": [0.3]}, label="ties"),
    RCase("qpois",
          {"p": [0.15877629981172559, 0.5002659614862837, 0.8414656709634282],
           "lam": [1e6]}, label="ties"),   # ppois(c(999000, 1e6, 1001000), 1e6)
]
