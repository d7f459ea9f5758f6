# SPDX-License-Identifier: GPL-2.0-or-later
"""The public functions of :mod:`daskcl.nmath` by name, each made on first use.

One function per :class:`~daskcl.kernels._table.Fn` row (:data:`~daskcl.kernels._nmath_table.ROWS`):
Rmath.h's arguments in Rmath.h's order with R's defaults, R's flags as keywords, NumPy
broadcasting, and a lazy dask array when a dask array is among the arguments.  The random
generators (:mod:`daskcl.kernels._random`) join them in :data:`FUNCTIONS`.

A process that calls one function makes that one (:func:`get`), not the other 130 with their
signatures and docstrings, and imports the generators' module only for a generator: a fresh
process's first result comes sooner.  Each name has one function object for the process's life
(so that it pickles by its name).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ._nmath_function import NmathFunction
from ._nmath_table import ROWS

if TYPE_CHECKING:
    from ._random import RandomKernel

__all__ = ["FUNCTIONS", "get", "names"]

_ROWS = {fn.name: fn for fn in ROWS}
_made: dict[str, NmathFunction] = {}
_lock = threading.Lock()
_names: list[str] = []

#: every public function of :mod:`daskcl.nmath` by name: the Mathlib rows, then the generators
#: (made, all of them, on first use of this name)
FUNCTIONS: dict[str, NmathFunction | RandomKernel]


def get(name: str) -> NmathFunction | RandomKernel:
    """The public function ``name`` (``KeyError`` where there is none)."""
    made = _made.get(name)
    if made is not None:
        return made
    fn = _ROWS.get(name)
    if fn is None:
        from . import _random

        return _random.FUNCTIONS[name]
    with _lock:
        made = _made.get(name)
        if made is None:
            made = _made[name] = NmathFunction(fn)
    return made


def names() -> list[str]:
    """The public functions' names: the Mathlib rows', then the generators' (without making
    any function; the generators' module is imported)."""
    if not _names:
        from . import _random

        _names[:] = [*_ROWS, *(fn.name for fn in _random.ROWS)]
    return _names


def __getattr__(name: str) -> Any:
    if name == "FUNCTIONS":
        table = {n: get(n) for n in names()}
        globals()["FUNCTIONS"] = table
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
