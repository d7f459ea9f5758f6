# SPDX-License-Identifier: GPL-2.0-or-later
"""Every public function of :mod:`daskcl.nmath`, one row each (see :class:`daskcl._table.Fn`).

Argument order and meaning are Rmath.h's (``shared/rmath_api.tsv``); defaults are R's.
Sections are by family; each later issue adds its rows in its own section.
"""

from __future__ import annotations

from ._table import Fn

__all__ = ["ROWS"]

ROWS: tuple[Fn, ...] = (
    # --- normal ------------------------------------------------------------------------------
    Fn("dnorm", "dnorm4", "d", ("x", ("mean", 0.0), ("sd", 1.0)),
       "Density of the normal distribution."),
    Fn("pnorm", "pnorm5", "p", ("q", ("mean", 0.0), ("sd", 1.0)),
       "Distribution function of the normal distribution (Cody 1969)."),
    Fn("qnorm", "qnorm5", "q", ("p", ("mean", 0.0), ("sd", 1.0)),
       "Quantile function of the normal distribution (Wichura 1988, AS 241)."),
    # --- binomial, Poisson, gamma densities (Loader's saddle point) ---------------------------
    Fn("dbinom", "dbinom", "d", ("x", "size", "prob"),
       "Binomial probability mass (Loader 2000).", nonint=("x",)),
    Fn("dpois", "dpois", "d", ("x", "lam"),
       "Poisson probability mass (Loader 2000).", nonint=("x",)),
    Fn("dgamma", "dgamma", "d", ("x", "shape", ("scale", 1.0)),
       "Density of the gamma distribution, parametrised by shape and scale."),
    # --- special functions -------------------------------------------------------------------
    Fn("gammafn", "gammafn", "s", ("x",), "The gamma function."),
    Fn("lgammafn", "lgammafn", "s", ("x",), "log|gamma(x)|."),
    Fn("lgamma1p", "lgamma1p", "s", ("x",), "log(gamma(1 + x)), accurate for small x."),
    Fn("log1pmx", "log1pmx", "s", ("x",), "log(1 + x) - x, accurate for small x."),
    Fn("log1pexp", "log1pexp", "s", ("x",), "log(1 + exp(x)) without overflow."),
    Fn("log1mexp", "log1mexp", "s", ("x",), "log(1 - exp(-x)) for x >= 0 (Maechler 2012)."),
    Fn("logspace_add", "logspace_add", "s", ("logx", "logy"), "log(exp(logx) + exp(logy))."),
    Fn("logspace_sub", "logspace_sub", "s", ("logx", "logy"), "log(exp(logx) - exp(logy))."),
    # --- continuous distributions and their special functions (issue 3) ----------------------
    # --- discrete, noncentral, tukey, wilcoxon, signrank, bessel (issue 4) -------------------
    Fn("bessel_i", "bessel_i", "s", ("x", "nu", ("expo", 1.0)),
       "Modified Bessel function of the first kind I_nu(x); expo=2 scales by exp(-x) (Cody 1983)."),
    Fn("bessel_j", "bessel_j", "s", ("x", "nu"),
       "Bessel function of the first kind J_nu(x) (Cody's RJBESL)."),
    Fn("bessel_k", "bessel_k", "s", ("x", "nu", ("expo", 1.0)),
       "Modified Bessel function of the third kind K_nu(x); expo=2 scales by exp(x) (Campbell 1980)."),
    Fn("bessel_y", "bessel_y", "s", ("x", "nu"),
       "Bessel function of the second kind Y_nu(x) (Cody's RYBESL, Temme 1976)."),
)
