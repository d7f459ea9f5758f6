# SPDX-License-Identifier: GPL-2.0-or-later
"""The normal distribution: dnorm (dnorm4), pnorm (pnorm5, Cody), qnorm (qnorm5, AS 241)."""

from __future__ import annotations

import math

import numpy as np

from . import RCase, grid, nan_inf

SQRT32 = math.sqrt(32)
QUARTILE = 0.67448975  # where pnorm switches from the central to the middle approximation

MEANS = grid(0.0, 1.5, -3.0, 1e300, nan_inf)
SDS = grid(1.0, 0.25, 10.0, 1e-300, 1e300, 0.0, -1.0, nan_inf)

CASES = [
    RCase(
        "dnorm",
        {
            "x": grid(
                np.linspace(-8, 8, 33), 0.0, 1e-300, -1e-300,
                4.999999, 5.0, 5.000001,           # the switch to the split exp(-x^2/2)
                20.0, -37.5, 38.5, 38.56, 38.6,      # and its underflow
                1e10, 1e155, -1e300, 1e300, nan_inf,
            ),
            "mean": MEANS,
            "sd": SDS,
        },
    ),
    RCase(
        "pnorm",
        {
            "q": grid(
                np.linspace(-6, 6, 25),
                [s * v for s in (1, -1) for v in (
                    1e-300, 1e-17, QUARTILE, QUARTILE * (1 + 1e-12), SQRT32, SQRT32 * (1 + 1e-15),
                    7.0, 8.2924, 8.3, 15.0, 30.0, 37.5193, 37.6, 38.5, 40.0, 1e3, 1e10,
                    1e169, 1e170, 1e300)],
                0.0, nan_inf,
            ),
            "mean": MEANS,
            "sd": SDS,
        },
    ),
    RCase(
        "qnorm",
        {
            # probabilities for log_p = FALSE and log-probabilities for log_p = TRUE in one
            # axis: each half is also the out-of-range (NaN) test of the other
            "p": grid(
                0.0, 1e-320, 1e-300, 1e-100, 1e-20, 1.3e-11, 1.4e-11, 1e-5, 0.01, 0.07499,
                0.075, 0.2, 0.5, 0.6, 0.925, 0.92501, 0.99, 1 - 1e-10, 1 - 2**-53, 1.0, 1.5,
                -1e-300, -1e-17, -0.1, -math.log(2), -1.0, -2.0, -10.0, -24.9, -25.1, -100.0,
                -700.0, -800.0, -1e4, -6.6e5, -6.7e5, -1e10, -1e100, -1e300, nan_inf,
            ),
            "mean": MEANS,
            "sd": SDS,
        },
    ),
]
