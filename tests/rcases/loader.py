# SPDX-License-Identifier: GPL-2.0-or-later
"""Loader's saddle point densities: dbinom, dpois, dgamma (and through them stirlerr, bd0, ebd0,
lgammafn)."""

from __future__ import annotations

from . import RCase, grid, nan_inf

BD0_WHY = (
    "outside its series range bd0(x, np) = x log(x/np) + np - x sums terms of up to ~1e5 "
    "(in tails whose mass is still above the underflow) before they cancel: a 1-ulp difference "
    "between the device's log and glibc's moves the sum by an ulp of the large term, and exp() "
    "turns that absolute error into a relative one (the log-scale values agree to 1e-15).  "
    "libRmath 4.2.2's dbinom_raw uses bd0, not the exact split ebd0 that dpois uses"
)

CASES = [
    RCase(
        "dbinom",
        {
            "x": grid(
                range(0, 16), 20.0, 29.0, 30.0, 31.0, 50.0, 99.0, 100.0, 101.0, 300.0, 500.0,
                1000.0, 1e4, 5e5, 1e6, 1e9, 1e15, 1e300,
                -1.0, -0.5, 2.5, 7.0 + 1e-8, 7.0 + 1e-6,   # R's fuzz: 7 + 1e-8 counts as 7
                nan_inf,
            ),
            "size": grid(
                0.0, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 100.0, 1000.0, 1e4, 1e6, 1e9, 1e15, 1e300,
                -1.0, 2.5, nan_inf,
            ),
            "prob": grid(
                0.0, 1e-300, 1e-15, 1e-5, 0.01, 0.0999, 0.1, 0.3, 0.5, 0.7, 0.9, 0.9001, 0.99,
                1 - 1e-10, 1.0, -0.1, 1.1, nan_inf,
            ),
        },
        rtol=5e-13,
        why=BD0_WHY,
    ),
    RCase(
        "dbinom",
        {   # far tails of large sizes, still above the underflow (measured up to 3.6e-12)
            "x": grid(4346.0, 12465.0, 18075.0, 27302.0),
            "size": grid(1e4, 1e5, 1e6, 1e8),
            "prob": grid(0.0002186168297061181, 0.015538261876768232, 0.22782888806144624,
                         0.3494296258859011),
        },
        rtol=2e-11,
        why=BD0_WHY,
        label="far-tails",
    ),
    RCase(
        "dpois",
        {
            "x": grid(
                range(0, 21), 50.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e9, 1e12, 1e15, 1e20, 1e100,
                1e300, 1.79e308, -1.0, -0.5, 4.5, 2.0 + 1e-8, 2.0 + 1e-6, nan_inf,
            ),
            "lam": grid(
                0.0, 1e-300, 1e-10, 0.1, 1.0, 2.5, 10.0, 15.3, 100.0, 1e3, 1e4 + 0.3, 1e6,
                1e10, 1e15, 1e20, 1e100, 1e300, -1.0, nan_inf,
            ),
        },
    ),
    RCase(
        "dgamma",
        {
            "x": grid(
                0.0, 1e-300, 1e-100, 1e-10, 0.01, 0.5, 1.0, 2.0, 3.7, 10.0, 100.0, 1e3, 1e5,
                1e10, 1e100, 1e300, -1.0, nan_inf,
            ),
            "shape": grid(
                0.0, 1e-300, 1e-10, 0.1, 0.5, 0.999, 1.0, 1.5, 2.0, 7.3, 15.5, 100.0, 2921.6,
                1e5, 1e10, 1e300, -1.0, nan_inf,
            ),
            "scale": grid(1.0, 0.5, 2.0, 1e-300, 1e-10, 1e10, 1e300, 0.0, -1.0, nan_inf),
        },
    ),
]
