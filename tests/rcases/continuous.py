# SPDX-License-Identifier: GPL-2.0-or-later
"""The closed-form continuous distributions (unif, exp, cauchy, logis, weibull, lnorm) and the
gamma family (pgamma, qgamma; dchisq, pchisq, qchisq).  dgamma is in ``loader.py``."""

from __future__ import annotations

import numpy as np

from . import RCase, grid, nan_inf

# arguments of the d/p functions: both tails, zero, the tiny and the huge
X = grid(
    np.linspace(-5, 5, 21), 0.3, 7.5, 40.0, 800.0, 1e-300, -1e-300, 1e-10, -1e-10, 1e10, -1e10,
    1e300, -1e300, nan_inf,
)
POS_X = grid(
    0.0, 1e-300, 1e-100, 1e-20, 1e-5, 0.01, 0.1, 0.5, 0.99, 1.0, 1.5, 2.0, 3.0, 4.9, 5.0, 7.5,
    10.0, 20.0, 30.0, 50.0, 99.0, 100.0, 101.0, 150.0, 500.0, 1e3, 1e4, 1e5, 1e6, 1e7, 1e10,
    1e15, 1e20, 1e100, 1e300, -1.0, nan_inf,
)
# probabilities (for log_p = FALSE) and log-probabilities (for log_p = TRUE) in one axis: each
# half is also the out-of-range (NaN) test of the other
P = grid(
    0.0, 1e-310, 1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9,
    0.99, 0.999, 1 - 1e-10, 1 - 2**-53, 1.0, 1.5,
    -1e-300, -1e-20, -1e-10, -1e-3, -0.1, -0.5, -np.log(2), -1.0, -3.0, -10.0, -40.0, -100.0,
    -700.0, -800.0, -1e5, nan_inf,
)
# subnormal probabilities and log-probabilities whose exp is subnormal (each half is also the
# out-of-range test of the other scale).  Not log p = -745: exp(-745) = 2.8e-324 is 5e-324 in
# glibc and 0 in NVIDIA's OpenCL (an ulp of the subnormal grid, within OpenCL's bound for exp),
# which qexp(-745, Inf) and qweibull's 1 / shape power turn into NaN or 0 for R's Inf or 5e-4
SUBNORMAL_P = grid(5e-324, 1.05646e-319, 3.4322e-319, 1e-310, 2.2e-308, 1e-300, 1e-20,
                   -744.0, -740.0, -720.0, -709.0, -700.0)
LOCATIONS = grid(0.0, -3.0, 2.5, 1e300, nan_inf)
SCALES = grid(1.0, 0.5, 3.0, 1e-300, 1e300, 0.0, -1.0, nan_inf)
SHAPES = grid(0.5, 1.0, 3.0, 1e-300, 1e300, 0.0, -1.0, nan_inf)
BOUNDS = grid(-1.0, 0.0, 0.5, 1.0, 3.0, nan_inf)

# shapes of the gamma family: every regime of pgamma (series for x < 1, the two continued
# fractions, Temme's expansion near x = shape) and the tiny and huge
GAMMA_SHAPES = grid(
    1e-300, 1e-100, 1e-10, 1e-3, 0.1, 0.5, 0.9, 1.0, 1.1, 2.0, 2.5, 5.0, 10.0, 30.5, 50.0, 100.0,
    101.0, 1000.0, 1e4, 1e5, 1e6, 1e7, 1e10, 1e15, 1e20, 1e300, 0.0, -1.0, nan_inf,
)
GAMMA_SCALES = grid(1.0, 0.5, 2.0, 1e-300, 1e300, 0.0, -1.0, nan_inf)
DF = grid(1e-300, 1e-10, 0.1, 1.0, 2.0, 3.0, 5.5, 10.0, 100.0, 1e4, 1e10, 1e300, 0.0, -1.0, nan_inf)

EXP_AMPLIFIES = (
    "the result is exp(t) with |t| up to ~700 computed from a sum of logs (log-gamma, bd0, "
    "log1pmx): a 1-ulp difference between the device's libm and glibc in t becomes |t| ulps "
    "of the result"
)

CASES = [
    RCase("dunif", {"x": grid(X, 0.5, 1.0, 3.0), "min": BOUNDS, "max": BOUNDS}),
    RCase("punif", {"q": grid(X, 0.5, 1.0, 3.0), "min": BOUNDS, "max": BOUNDS}),
    RCase("qunif", {"p": P, "min": BOUNDS, "max": BOUNDS}),
    RCase("dexp", {"x": X, "scale": SCALES}),
    RCase("pexp", {"q": X, "scale": SCALES}),
    RCase("qexp", {"p": P, "scale": SCALES}),
    # subnormal lower-tail probabilities (p, or exp(p) for p < -708), scaled up: log(1 - P) = -P
    # must keep P's last bits (PoCL's log1p(-5e-324) is 0: daskcl gave qexp(5e-324, 1.7e9) = 0,
    # R 8.5e-315; random sampling found it)
    RCase("qexp", {"p": SUBNORMAL_P, "scale": grid(1.0, 6994.452369961907, 1721921842.5115697,
                                                   6.279791735664843e87, np.inf)},
          label="subnormal"),
    RCase("dcauchy", {"x": X, "location": LOCATIONS, "scale": SCALES}),
    RCase("pcauchy", {"q": X, "location": LOCATIONS, "scale": SCALES}),
    RCase("qcauchy", {"p": grid(P, 0.25, 0.75, -0.25), "location": LOCATIONS, "scale": SCALES}),
    RCase("dlogis", {"x": X, "location": LOCATIONS, "scale": SCALES}),
    RCase("plogis", {"q": grid(X, 18.0, 33.3, 40.0, -40.0, 745.0, -745.0), "location": LOCATIONS,
                     "scale": SCALES}),
    RCase("qlogis", {"p": P, "location": LOCATIONS, "scale": SCALES}),
    RCase("dweibull", {"x": X, "shape": SHAPES, "scale": SCALES}),
    RCase("pweibull", {"q": X, "shape": SHAPES, "scale": SCALES}),
    RCase("qweibull", {"p": P, "shape": SHAPES, "scale": SCALES}),
    # (see qexp[subnormal]: a large shape turns the lost last bits of P into a wrong quantile,
    # daskcl gave qweibull(5e-324, 5.5e9) = 0, R 0.99999986)
    RCase("qweibull", {"p": SUBNORMAL_P, "shape": grid(1.2109965182361164, 97.5, 5460566848.29705),
                       "scale": grid(1.0, 1.4912073295776326e-08)}, label="subnormal"),
    RCase("dlnorm", {"x": X, "meanlog": LOCATIONS, "sdlog": SCALES}),
    RCase("plnorm", {"q": X, "meanlog": LOCATIONS, "sdlog": SCALES}),
    RCase("qlnorm", {"p": P, "meanlog": LOCATIONS, "sdlog": SCALES}),
    RCase("pgamma", {"q": POS_X, "shape": GAMMA_SHAPES, "scale": grid(1.0)}),
    # (points where random sampling found the largest differences)
    RCase(
        "pgamma",
        {"q": grid(0.6496958256080729, 0.8791330368531873, 31.674365586915943, 445.1499927783285),
         "shape": grid(0.0023785257087408865, 11.883586997075817, 12.435114231340533,
                       87.45302801922774),
         "scale": grid(1.0)},
        rtol=5e-13,
        why=EXP_AMPLIFIES + " (1.1e-13 seen: log upper tail -3.4e-139 = log1p(-exp(-316)))",
        label="tails",
    ),
    RCase("pgamma", {"q": grid(0.3, 3.0, 30.0, 1e-300, 1e300), "shape": grid(0.5, 5.0, 50.0),
                     "scale": GAMMA_SCALES}, label="scale"),
    RCase("qgamma", {"p": P, "shape": GAMMA_SHAPES, "scale": grid(1.0)}),
    RCase("qgamma", {"p": grid(0.3, 0.9, -0.5), "shape": grid(0.5, 5.0), "scale": GAMMA_SCALES},
          label="scale"),
    RCase(
        "qgamma",
        {"p": grid(0.10335730839146762, 0.5640073561497112, -0.5041216071105804),
         "shape": grid(0.0013659954078284536, 0.0014970463940618469, 0.0034507762046125626),
         "scale": grid(1.0)},
        rtol=1e-12,
        why=(
            "R's Newton steps stop once |log P(x) - log p| < 1e-15 |log p|, and for small "
            "shapes the quantile ~ p^(1/shape) amplifies that relative tolerance by 1/shape; "
            "the device's and glibc's last bits decide where it stops (2.3e-13 seen for "
            "quantiles near 1e-295 at shape 1.4e-3)"
        ),
        label="small-shape",
    ),
    # log-probabilities within a subnormal of 0: the other tail is subnormal, and qgamma's
    # Newton steps on the log scale read pgamma's log(1 - that) to its last bits (PoCL's log1p
    # loses them: daskcl gave qgamma(-5e-324, 2, 1.05e-14, lower_tail = FALSE, log_p = TRUE)
    # = 4.9e-176, R 3.3e-176; random sampling found it)
    RCase("qgamma", {"p": grid(-5e-324, -1.27247e-319, -2.099725e-318, -3.3396759e-316,
                               -1.33316871738e-312),
                     "shape": grid(2.0, 5.0, 9.5, 18.81218070761966, 122.0),
                     "scale": grid(1.0, 1.0454879771752323e-14)}, label="subnormal-complement"),
    RCase("dchisq", {"x": POS_X, "df": DF}),
    RCase("pchisq", {"q": POS_X, "df": DF}),
    RCase("qchisq", {"p": P, "df": DF}),
]
