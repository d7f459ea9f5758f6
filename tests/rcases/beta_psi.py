# SPDX-License-Identifier: GPL-2.0-or-later
"""Special functions of the continuous distributions: beta, lbeta, choose, lchoose, the
polygamma functions (digamma, trigamma, tetragamma, pentagamma, psigamma; Amos' TOMS 610), and
cospi, sinpi, tanpi."""

from __future__ import annotations

import numpy as np

from . import RCase, grid, nan_inf

BETA_AB = grid(
    1e-310, 1e-300, 1e-20, 1e-5, 0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 9.99, 10.0, 11.0, 25.5, 100.0,
    170.0, 171.5, 172.0, 1e4, 1e10, 1e20, 1e300, 0.0, -1.0, nan_inf,
)
CHOOSE_N = grid(
    np.linspace(-40, 40, 81), np.linspace(-40, 40, 41) + 0.37, -50.5, -1e10, 50.5, 59.0, 60.0,
    61.0, 100.0, 100.5, 1000.0, 1e5, 1e10, 1e15, 1e300, nan_inf,
)
CHOOSE_K = grid(
    np.arange(-3, 41), -0.4, 0.3, 1.6, 28.8, 50.0, 59.0, 60.0, 100.0, 500.0, 1e5, 1e10, nan_inf,
)
# around the poles and the zeros of psi, the switch to the asymptotic expansion (xmin ~ 9..),
# the large-x shortcuts and the reflection for x <= 0
PSI_X = grid(
    np.linspace(-10.05, 20.05, 61), -100.5, -10.25, -2.5, -1.3, -1e-10, 0.0, -1.0, -3.0,
    1e-300, 1e-20, 1e-10, 1e-5, 0.01, 1.4616321449683622, 8.9, 9.5, 12.0, 15.3, 30.7, 50.0,
    99.5, 500.0, 1e4, 1e6, 1e10, 1e15, 3e15, 1e16, 1e20, 1e300, -1e300, nan_inf,
)
EXP_OF_LOG = (
    "for k >= 30 choose is exp(lchoose): a 1-ulp difference in the logarithm (device libm vs "
    "glibc) is |lchoose| ulps of the result (~2.8e-14 measured for results near 1e96)"
)

CASES = [
    RCase("beta", {"a": BETA_AB, "b": BETA_AB}),
    RCase("lbeta", {"a": BETA_AB, "b": BETA_AB}),
    RCase("choose", {"n": CHOOSE_N, "k": CHOOSE_K}, rtol=2e-13, why=EXP_OF_LOG),
    RCase("lchoose", {"n": CHOOSE_N, "k": CHOOSE_K}),
    RCase("digamma", {"x": PSI_X}),
    # negative non-integers far from 0 near a zero of psi: the reflection psi(1 - x) - pi
    # cot(pi x) cancels terms ~4 to ~1e-3, so an ulp of the device's cos/sin at ~140 radians
    # (against glibc's) is ~6e-13 of the result (6.5e-13 at -43.78 on PoCL, found by random
    # search; R's own value is ~1e-10 off the exact one there, from rounding pi x)
    RCase("digamma", {"x": grid(-43.77974039587568, -60.79230624115928, -100.3, -150.7)},
          rtol=2e-12, why="reflection cancellation amplifies an ulp of cos/sin (see comment)",
          label="far-negative"),
    RCase("trigamma", {"x": PSI_X}),
    RCase("tetragamma", {"x": PSI_X}),
    RCase("pentagamma", {"x": PSI_X}),
    RCase(
        "psigamma",
        {"x": PSI_X, "deriv": grid(-1.0, -0.4, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.2, 6.0, 7.0, 10.0,
                                   20.0, 50.0, 99.0, 100.0, 100.4, 101.0, 1e10, nan_inf)},
    ),
    RCase("cospi", {"x": grid(np.linspace(-4, 4, 65), 0.1, 1e-300, 1e15 + 0.5, 1e300, nan_inf)},
          rsym="cospi"),
    RCase("sinpi", {"x": grid(np.linspace(-4, 4, 65), 0.1, 1e-300, 1e15 + 0.5, 1e300, nan_inf)},
          rsym="sinpi"),
    RCase("tanpi", {"x": grid(np.linspace(-4, 4, 65), 0.1, 1e-300, 1e15 + 0.25, 1e300, nan_inf)},
          rsym="tanpi"),
]
