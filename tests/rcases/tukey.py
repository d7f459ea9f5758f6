# SPDX-License-Identifier: GPL-2.0-or-later
"""The studentized range: ptukey (Copenhaver & Holland 1988) and qtukey (AS 190).

Rmath.h order: ptukey(q, nranges, nmeans, df), qtukey(p, nranges, nmeans, df)."""

from __future__ import annotations

import math

from . import RCase, grid

NAN, INF = math.nan, math.inf

RR = [1.0, 2.0, 5.5]
CC = [2.0, 2.5, 3.0, 5.0, 10.0, 50.0]

UPPER_WHY = (
    "R's upper tail is 1 - P computed in double: P agrees to an ulp or two, but the device's "
    "exp/log/pow differ from glibc's in the last bit, and 1 - P turns an absolute difference "
    "of ~2.2e-16 into a relative one of 2.2e-16 / (1 - P) (the grids keep 1 - P >= 1e-4; "
    "measured up to 1.2e-12); the log of the lower tail near 1 has the same cancellation"
)
ULP_WHY = (
    "P itself agrees to two ulps of 1 (4.4e-16); 1 - P and log(P) near P = 1 keep that absolute "
    "difference (an NVIDIA H200 gave 2.2e-16 absolute, 2.18e-12 relative, at q = 5.5, df = 5001 "
    "for the log of the lower tail)"
)

CASES = [
    # arguments out of range and the ends of the support
    RCase(
        "ptukey",
        {"q": grid(-1.0, 0.0, 1.0, 3.5, NAN, INF, -INF), "nranges": grid(0.5, 1.0, 2.0, NAN),
         "nmeans": grid(1.5, 2.0, 4.0, NAN), "df": grid(1.5, 2.0, 10.0, 1e5, NAN, INF)},
        label="boundaries",
    ),
    # heavy tails (unit intervals for df <= 100)
    RCase(
        "ptukey",
        {"q": grid(0.01, 0.3, 1.0, 2.0, 3.0, 4.5, 7.0), "nranges": RR, "nmeans": CC,
         "df": grid(2.0, 2.5, 3.0, 5.0, 10.0)},
        label="small-df", rtol=2e-13, why=UPPER_WHY, atol=5e-16, atol_why=ULP_WHY,
    ),
    # unit, half, quarter and eighth intervals (df <= 100, 800, 5000, 25000) and the df = Inf
    # form (df > 25000)
    RCase(
        "ptukey",
        {"q": grid(0.01, 0.3, 1.0, 2.0, 3.0, 4.0, 5.0, 5.5), "nranges": RR, "nmeans": CC,
         "df": grid(30.0, 99.0, 101.0, 500.0, 801.0, 4000.0, 5001.0, 24999.0, 25001.0, 1e6, INF)},
        label="large-df", rtol=2e-12, why=UPPER_WHY, atol=5e-16, atol_why=ULP_WHY,
    ),
    RCase(
        "qtukey",
        {"p": grid(0.0, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0, -1e-3, -0.01, -0.1,
                   -0.7, -2.3, -6.9, 1.5, NAN, -INF),
         "nranges": RR, "nmeans": grid(2.0, 3.0, 5.0, 10.0, 50.0),
         "df": grid(2.0, 5.0, 99.0, 500.0, 5001.0, 30000.0, INF)},
        rtol=1e-12,
        why="the secant iteration inherits ptukey's differences (see UPPER_WHY; measured up to "
            "5.4e-13 at p = exp(-0.001))",
    ),
    RCase(
        "qtukey",
        {"p": grid(0.5, 0.95), "nranges": grid(0.5, 1.0, NAN), "nmeans": grid(1.5, 2.0, NAN),
         "df": grid(1.5, 2.0, NAN)},
        label="boundaries",
    ),
]
