# SPDX-License-Identifier: GPL-2.0-or-later
"""Bessel functions: bessel_i, bessel_j, bessel_k, bessel_y (Cody's RIBESL, RJBESL, RKBESL,
RYBESL, with R's limits, negative orders by reflection, and expo scaling)."""

from __future__ import annotations

import math

import numpy as np

from . import RCase, grid

NAN, INF = math.nan, math.inf

# the switch points of the algorithms: 1e-4 (series), 1e-10 and 1 and 4 (bessel_k), 3 and 16
# (bessel_y), 25 (bessel_j's asymptotic form), 709 / 705.342 (unscaled over- and underflow),
# 1e5 (R's limit of bessel_i and bessel_j), 1e8 (bessel_y), 1/eps (bessel_k), the denormals
X = grid(
    0.0, 5e-324, 1e-320, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-100, 1e-20, 1e-10, 1.1e-10,
    5e-5, 1e-4, 1.0001e-4, 0.01, 0.3, 1.0, 1.5, 2.0, 2.999, 3.0, 3.7, 4.0, 4.5, 7.5, 10.0,
    15.99, 16.0, 20.0, 24.9, 25.1, 34.9, 35.1, 60.0, 129.9, 130.1, 300.0, 705.0, 706.0, 709.5,
    710.0, 1e3, 2.5e3, 1e4, 99999.0, 1e5, 1.2e5, 1e8, 1.0000001e8, 4.5e15, 1e16, 1e300,
    -1.0, NAN, INF, -INF,
)
# integer, half-integer and fractional orders of both signs; orders beyond x (where the
# recurrences start above nb or the values over- or underflow)
NU = grid(
    0.0, 1e-200, 1e-17, 0.2, 0.5, 0.7, 1.0, 1.5, 2.0, 2.3, 5.0, 10.5, 30.0, 99.9, 300.25,
    -0.3, -0.5, -1.0, -1.5, -2.7, -10.25, -30.5, -99.9, NAN,
)
# bessel_j's orders: without those within 1.1e-16 of 0, where R's J_nu(x) is 1 for every x
# and daskcl's J_0(x) + O(nu) (test_rmath_agreement.py::test_bessel_j_of_an_order_next_to_zero)
NU_J = [v for v in NU if not 0 < abs(v) < 1.2e-16]
# the orders R accepts up to 1e7 (bessel_j, bessel_y: NaN above), and large ones
NU_LARGE = grid(1e3, 1234.5, 1e4, 1e5, -1e3, -1e4 - 0.5)
NU_LIMIT = grid(9999999.5, 1e7, 1.0000001e7, -1.0000001e7)
X_LARGE = grid(1e-5, 0.5, 10.0, 500.0, 700.0, 1e3, 5e3, 1e4, 5e4, 1e5, 1e6, 1e7, 1e16)

RECUR_WHY = (
    "R's algorithms recur over up to ~1e4 orders (forward from the asymptotic forms of "
    "J and Y at large x, backward in Miller's algorithm): the 1-ulp differences between the "
    "device's sin/cos/exp/log and glibc's grow along the recurrence (up to ~3e-13 measured "
    "at x ~ 1e4, nu ~ 5000; 1e-13 holds on the other grids)"
)

# points where a random search found the largest differences (J and Y at x ~ 1e4, |nu| ~ 5e3)
X_FOUND = [40780.90113976137, 14538.818714893925, 25967.79854908897, 16358.049971271757]
NU_FOUND = [-7939.928277644201, 4957.727013230955, -3207.6111489496207, -4628.850974309906]

CASES = [
    RCase("bessel_i", {"x": X, "nu": NU, "expo": [1.0, 2.0]}),
    RCase("bessel_k", {"x": X, "nu": NU, "expo": [1.0, 2.0]}),
    RCase("bessel_j", {"x": X, "nu": grid(NU_J, INF, -INF)}),
    RCase("bessel_y", {"x": X, "nu": grid(NU, INF, -INF)}),
    # large orders: over- and underflow, R's limit 1e7 for J and Y, none for I and K
    RCase("bessel_i", {"x": X_LARGE, "nu": NU_LARGE, "expo": [1.0, 2.0]}, label="large-nu"),
    RCase("bessel_k", {"x": X_LARGE, "nu": NU_LARGE, "expo": [1.0, 2.0]}, label="large-nu"),
    RCase("bessel_j", {"x": X_LARGE, "nu": NU_LARGE}, label="large-nu"),
    RCase("bessel_y", {"x": X_LARGE, "nu": NU_LARGE}, label="large-nu"),
    RCase("bessel_j", {"x": [0.5, 1e3, 1e5], "nu": NU_LIMIT}, label="nu-limit"),
    RCase("bessel_y", {"x": [0.5, 1e3, 1e5], "nu": NU_LIMIT}, label="nu-limit"),
    # many orders between 100 and 1e4 at large x (long recurrences; R's rescaling of bessel_i
    # for x > ~1500 and the zeros it gives where its sum overflows below order nb)
    RCase("bessel_i", {"x": grid(1500.0, 2e3, 5e3, 3.625e4, 9.9e4), "nu": np.linspace(-4e3, 8e3, 41),
                       "expo": [2.0]}, label="rescaled"),
    RCase("bessel_j", {"x": grid(30.0, 1e3, 2.5e4, 9e4), "nu": np.linspace(-5e3, 5e3, 41)},
          label="recurrence"),
    RCase("bessel_y", {"x": grid(30.0, 1e3, 2.5e4, 9e4), "nu": np.linspace(-5e3, 5e3, 41)},
          label="recurrence"),
    RCase("bessel_j", {"x": X_FOUND, "nu": NU_FOUND}, label="found", rtol=5e-13, why=RECUR_WHY),
    RCase("bessel_y", {"x": X_FOUND, "nu": NU_FOUND}, label="found", rtol=5e-13, why=RECUR_WHY),
]
