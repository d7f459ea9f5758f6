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
        {"x": grid(range(0, 8), 10.0, 50.0, 99.0, 100.0, 1e3, 5e3, -1.0, 2.5, 3 + 1e-8, nan_inf),
         "m": grid(0.0, 1.0, 5.0, 10.0, 100.0, 1e3, 1e4, 1e7, 2.5, -1.0, NAN, INF),
         "n": grid(0.0, 3.0, 10.0, 100.0, 1e4, 1e7, 2.5, -1.0, NAN, INF),
         "k": grid(0.0, 1.0, 5.0, 10.0, 99.0, 1e3, 5e3, 1e6, 2.5, -1.0, NAN, INF)},
        rtol=2e-12,
        why=BD0_WHY + "; dhyper multiplies three such masses (up to 1.8e-12 measured at 5e-278 "
                      "by a random search)",
    ),
]
