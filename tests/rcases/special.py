# SPDX-License-Identifier: GPL-2.0-or-later
"""The gamma function family and the log-space helpers: gammafn, lgammafn, lgamma1p, log1pmx,
log1pexp, log1mexp, logspace_add, logspace_sub."""

from __future__ import annotations

import math

import numpy as np

from . import RCase, grid, nan_inf

LN2 = math.log(2)

# around the poles, the switch points of gammafn (|x| = 10, 50, integers, half integers), its
# over- and underflow limits (171.61, -170.57) and the denormal range
GAMMA_X = grid(
    np.linspace(-12, 12, 97), np.linspace(-180.3, 180.3, 121), np.arange(-12.5, 60.5, 1.0),
    range(-12, 61), 1e-310, -1e-310, 1e-300, -1e-300, 2.2e-308, 2.3e-308, 1e-8, -1e-8,
    9.9999999, 10.0000001, -9.9999999, -10.0000001, -1 + 1e-10, -1 - 1e-10, -20 + 1e-7,
    171.6, 171.62, -170.56, -170.57, -171.5, nan_inf,
)

CASES = [
    RCase(
        "gammafn",
        {"x": grid(
            GAMMA_X, np.linspace(10.05, 171.55, 301), -np.linspace(10.05, 170.55, 301),
            # where the device's and glibc's log differ by an ulp (found by random search)
            [s * v for s in (1, -1) for v in (142.96900305731734, 139.31841839803917,
                                               99.86553857867851, 155.33035254754896)],
        )},
        rtol=5e-13,
        why=(
            "for |x| > 10 gamma is exp((y - 1/2) log y - y + ...) with an argument of up to ~700: "
            "a 1-ulp difference between the device's log and glibc's is amplified by the "
            "argument's size (up to ~2.3e-13 measured); lgammafn, which returns that argument, "
            "agrees to 1e-15"
        ),
    ),
    RCase(
        "lgammafn",
        {
            "x": grid(
                GAMMA_X, 1e3 + 0.5, -1e3 - 0.5, 1e5 + 0.25, -1e5 - 0.25, 4934720.0, 4934721.0,
                1e10, 1e17, 1.1e17, 1e100, 2.53e305, 2.54e305, 1e-306, 1e-307, -1e-307,
            )
        },
    ),
    RCase(
        "lgamma1p",
        {
            "x": grid(
                np.linspace(-0.95, 3, 80), 0.0, 1e-300, -1e-300, 1e-15, -1e-15, 1e-8, -1e-8,
                0.4999999999, 0.5, -0.4999999999, -0.5, -0.9999999, -1.0, -2.0, -2.5, 10.0,
                1e10, 1e300, nan_inf,
            )
        },
    ),
    RCase(
        "log1pmx",
        {
            "x": grid(
                np.linspace(-0.99, 3, 81), -1.0, -1 + 1e-15, -0.79149064, -0.7914906,
                -0.01, -0.00999999, 0.01, 0.00999999, 1e-8, -1e-8, 1e-300, -1e-300, 0.0, 1.0,
                1.0000001, 1e10, 1e300, -2.0, nan_inf,
            )
        },
    ),
    RCase(
        "log1pexp",
        {
            "x": grid(
                np.linspace(-40, 40, 81), -1e300, -800.0, -745.0, -700.0, 18.0, 18.000001,
                33.3, 33.300001, 100.0, 800.0, 1e300, 1e-300, -1e-300, nan_inf,
            )
        },
    ),
    RCase(
        "log1mexp",
        {
            "x": grid(
                np.linspace(0, 40, 81), 1e-300, 1e-20, 1e-10, LN2, LN2 * (1 + 2**-52),
                LN2 * (1 - 2**-52), 700.0, 745.0, 800.0, 1e300, -1e-300, -1.0, nan_inf,
            )
        },
    ),
]

LOG_VALUES = grid(
    -1e300, -800.0, -745.0, -700.0, -40.0, -1.0, -1e-300, 0.0, 1e-10, 0.5, 1.0, 36.0, 37.0,
    700.0, 710.0, 800.0, 1e300, nan_inf,
)

CASES += [
    RCase("logspace_add", {"logx": LOG_VALUES, "logy": LOG_VALUES}),
    RCase("logspace_sub", {"logx": LOG_VALUES, "logy": LOG_VALUES}),
]
