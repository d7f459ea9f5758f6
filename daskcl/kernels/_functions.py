# SPDX-License-Identifier: GPL-2.0-or-later
"""The public functions of :mod:`daskcl.nmath`, generated from the rows.

One function per :class:`~daskcl.kernels._table.Fn` row (:data:`~daskcl.kernels._nmath_table.ROWS`):
Rmath.h's arguments in Rmath.h's order with R's defaults, R's flags as keywords, NumPy
broadcasting, and a lazy dask array when a dask array is among the arguments.  The random
generators (:mod:`daskcl.kernels._random`) join them in :data:`FUNCTIONS`.
"""

from __future__ import annotations

import importlib

from . import _random
from ._function import NmathFunction
from ._nmath_table import ROWS
from ._table import Fn

__all__ = ["FUNCTIONS", "NmathFunction"]

def _impl(fn: Fn) -> NmathFunction:
    """The function of a row: :class:`NmathFunction` or the subclass its ``impl`` names."""
    if not fn.impl:
        return NmathFunction(fn)
    module, _, name = fn.impl.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, NmathFunction)):
        raise TypeError(f"{fn.name}: impl {fn.impl!r} is not a subclass of NmathFunction")
    return cls(fn)


_ELEMENTWISE: dict[str, NmathFunction] = {fn.name: _impl(fn) for fn in ROWS}

#: every public function of :mod:`daskcl.nmath` by name: the Mathlib rows, then the generators
FUNCTIONS: dict[str, NmathFunction | _random.RandomKernel] = {
    **_ELEMENTWISE, **_random.FUNCTIONS,
}
