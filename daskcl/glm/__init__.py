# SPDX-License-Identifier: GPL-2.0-or-later
"""Bayesian-GLM negative log-posterior and gradient kernels (f2_f3) over coefficient grids.

:func:`f2_f3` evaluates them over a grid (NumPy, dask or a :class:`FactorialGrid`);
:class:`Posterior` holds one data set on the device; :func:`posterior_mode` finds its mode;
:class:`Tuning` is a kernel's launch shape.  The mathematics is in :func:`f2_f3`'s docstring.

Modules: :mod:`~daskcl.glm.tuning` (launch shapes), :mod:`~daskcl.glm.grid` (factorial
grids), :mod:`~daskcl.glm.family` (families, links and their programs),
:mod:`~daskcl.glm.checks` (the data set checked), :mod:`~daskcl.glm.posterior` (the data set
on the device, :func:`f2_f3`), :mod:`~daskcl.glm.mode` (the mode).
"""

from .grid import FactorialGrid
from .mode import posterior_mode
from .posterior import FAMILIES, Posterior, f2_f3, kernel_stem, program_source
from .tuning import ITEM_MAX_L2, TILE_MIN_L2, Tuning, mma_capable

__all__ = [
    "FAMILIES",
    "ITEM_MAX_L2",
    "TILE_MIN_L2",
    "FactorialGrid",
    "Posterior",
    "Tuning",
    "f2_f3",
    "kernel_stem",
    "mma_capable",
    "posterior_mode",
    "program_source",
]
