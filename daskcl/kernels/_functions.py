# SPDX-License-Identifier: GPL-2.0-or-later
"""The public functions of :mod:`daskcl.nmath`, generated from the rows.

One function per :class:`~daskcl.kernels._table.Fn` row (:data:`~daskcl.kernels._nmath_table.ROWS`):
Rmath.h's arguments in Rmath.h's order with R's defaults, R's flags as keywords, NumPy
broadcasting, and a lazy dask array when a dask array is among the arguments.  The random
generators (:mod:`daskcl.kernels._random`) join them in :data:`FUNCTIONS`.
"""

from __future__ import annotations

from . import _random
from ._function import PUBLIC, NmathFunction
from ._nmath_table import ROWS

__all__ = ["FUNCTIONS", "NmathFunction"]

_ELEMENTWISE: dict[str, NmathFunction] = {fn.name: NmathFunction(fn) for fn in ROWS}
PUBLIC.update(_ELEMENTWISE)

#: every public function of :mod:`daskcl.nmath` by name: the Mathlib rows, then the generators
FUNCTIONS: dict[str, NmathFunction | _random.RandomKernel] = {
    **_ELEMENTWISE, **_random.FUNCTIONS,
}
