# SPDX-License-Identifier: GPL-2.0-or-later
"""Bayesian-GLM negative log-posterior and gradient kernels (f2_f3) over coefficient grids.

:func:`f2_f3` evaluates them over a grid (NumPy, dask or a :class:`FactorialGrid`);
:class:`Posterior` holds one data set on the device; :class:`Tuning` is a kernel's launch
shape.  The mathematics is in :func:`f2_f3`'s docstring.
"""

from ._core import (
    FAMILIES,
    ITEM_MAX_L2,
    TILE_MIN_L2,
    FactorialGrid,
    Posterior,
    Tuning,
    f2_f3,
    mma_capable,
)

__all__ = [
    "FAMILIES",
    "ITEM_MAX_L2",
    "TILE_MIN_L2",
    "FactorialGrid",
    "Posterior",
    "Tuning",
    "f2_f3",
    "mma_capable",
]
