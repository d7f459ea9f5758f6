# SPDX-License-Identifier: GPL-2.0-or-later
"""The Wilcoxon rank-sum (dwilcox, pwilcox, qwilcox) and signed-rank (dsignrank, psignrank,
qsignrank) distributions, from count tables built on the device (daskcl/_counts.py).

The oracle's grids stay where R's own tables are cheap: R allocates up to (m+1)(n+1) arrays of
m n / 2 doubles for wilcox, and rebuilds its signrank table whenever n changes (n is the fastest
axis of a grid), so the large sizes have few points."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import RCase, grid

NAN, INF = math.nan, math.inf

P = grid(0.0, 1e-12, 0.001, 0.025, 0.1, 0.3, 0.5, 0.5 + 1e-15, 0.7, 0.9, 0.975, 0.999, 1 - 1e-12,
         1.0, -1e-12, -0.001, -0.1, -0.7, -2.3, -30.0, 1.5, NAN, INF, -INF)

CASES = [
    RCase(
        "dwilcox",
        {"x": grid(-1.0, 0.0, 1.0, 2.5, 3 + 1e-8, 3 + 2e-7, 5.0, 12.0, 17.0, 50.0, 200.0, 451.0,
                   900.0, INF, -INF, NAN),
         "m": grid(1.0, 2.0, 3.4, 4.6, 10.0, 20.0, 37.0, 0.0, 0.4, -1.0, NAN),
         "n": grid(1.0, 4.0, 7.0, 20.0, 45.0, 0.0, -2.0, NAN)},
    ),
    RCase(
        "pwilcox",
        {"q": grid(-1.0, -1e-8, 0.0, 1.0, 2.5, 3 - 1e-8, 5.0, 12.0, 17.0, 50.0, 200.0, 450.0,
                   451.0, 900.0, INF, -INF, NAN),
         "m": grid(1.0, 2.0, 3.4, 4.6, 10.0, 20.0, 37.0, 0.0, -1.0, NAN, INF),
         "n": grid(1.0, 4.0, 7.0, 20.0, 45.0, 0.0, NAN, INF)},
    ),
    RCase(
        "qwilcox",
        {"p": P, "m": grid(1.0, 2.0, 3.4, 10.0, 37.0, 0.0, NAN, INF),
         "n": grid(1.0, 4.0, 7.0, 45.0, -2.0, NAN, INF)},
    ),
    # counts beyond 2^53 (rounded differently by R's recursion and the device's product form)
    RCase(
        "dwilcox",
        {"x": grid(0.0, 10.0, 100.0, 600.0, 1100.0, 1250.0, 1251.0, 2000.0),
         "m": [50.0, 57.0], "n": [50.0, 43.0]},
        label="large",
    ),
    RCase(
        "pwilcox",
        {"q": grid(0.0, 10.0, 100.0, 600.0, 1100.0, 1249.0, 1250.0, 1251.0, 2000.0),
         "m": [50.0, 57.0], "n": [50.0, 43.0]},
        label="large",
    ),
    RCase("qwilcox", {"p": P, "m": [50.0, 57.0], "n": [50.0, 43.0]}, label="large"),
    RCase(
        "dsignrank",
        {"x": grid(-1.0, 0.0, 1.0, 2.5, 3 + 1e-8, 3 + 2e-7, 7.0, 27.0, 28.0, 55.0, 400.0,
                   1000.0, 5000.0, INF, -INF, NAN),
         "n": grid(1.0, 2.0, 3.4, 4.6, 7.0, 10.0, 50.0, 150.0, 0.0, 0.4, -1.0, NAN)},
    ),
    RCase(
        "psignrank",
        {"q": grid(-1.0, -1e-8, 0.0, 1.0, 2.5, 3 - 1e-8, 7.0, 27.0, 28.0, 55.0, 400.0, 1000.0,
                   5000.0, INF, -INF, NAN),
         "n": grid(1.0, 2.0, 3.4, 4.6, 7.0, 10.0, 50.0, 150.0, 0.0, -1.0, NAN, INF)},
    ),
    RCase(
        "qsignrank",
        {"p": P, "n": grid(1.0, 2.0, 3.4, 7.0, 10.0, 50.0, 150.0, 0.0, NAN, INF)},
    ),
    # log p in [-37.43, -36.74], upper tail: R's search stops at 1 - x from expm1(p), and PoCL's
    # expm1 rounded to -1 there where glibc gives -1 + 2^-53 (qsignrank 16185 for R's 16180;
    # a random search found it; cl/OPENCL.cl now takes -1 + exp(p) below -36)
    RCase("qsignrank", {"p": grid(-37.42848898216495, -37.3, -37.12985559095138, -36.95, -36.8,
                                  -36.2),
                        "n": [71.0, 100.0, 200.0, 500.0]}, label="expm1-window"),
    RCase("qwilcox", {"p": grid(-37.4, -37.2, -36.914859149765924, -36.76),
                      "m": [44.0, 50.0], "n": [50.0, 88.0]}, label="expm1-window"),
    # large n: 2^-n below the normal range (n > 1022) and counts that overflow (n > 1038),
    # where R returns Inf, NaN or 0 and the device does the same arithmetic
    RCase(
        "dsignrank",
        {"x": grid(0.0, 500.0, 1e5, 2.5e5, 2.7e5), "n": [1000.0, 1030.0, 1045.0, 1080.0]},
        label="large",
    ),
    RCase(
        "psignrank",
        {"q": grid(0.0, 500.0, 1e5, 2.5e5, 2.7e5), "n": [1000.0, 1030.0, 1045.0, 1080.0]},
        label="large",
    ),
    RCase("qsignrank", {"p": grid(0.001, 0.5, 0.999, -0.7), "n": [1000.0, 1030.0]},
          label="large"),
    RCase("pwilcox", {"q": np.arange(-1.0, 40.0), "m": [5.0], "n": [7.0]}, label="all"),
    RCase("psignrank", {"q": np.arange(-1.0, 60.0), "n": [10.0]}, label="all"),
]

# the kernels call dwilcox_tab etc. (they read the tables); the oracle is Rmath.h's dwilcox
CASES = [dataclasses.replace(c, rsym=c.name) for c in CASES]
