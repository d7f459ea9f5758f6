# SPDX-License-Identifier: GPL-2.0-or-later
"""R's Mathlib on the bound OpenCL device: ``daskcl.nmath.<name>`` for every Rmath.h function.

Each function takes Rmath.h's arguments in Rmath.h's order (with R's defaults) and R's flags as
keywords: ``log=`` for densities, ``lower_tail=`` and ``log_p=`` for distribution and quantile
functions.  Arguments broadcast as in NumPy; the result is float64 of the broadcast shape (a
NumPy scalar for scalar inputs).  Where R gives NaN for non-NaN inputs, the result is NaN and one
``RuntimeWarning`` per call says how many; R's "non-integer x" warnings are counted the same way.
On device arrays the warnings come at the next point that waits anyway (a call from NumPy or
dask data, :func:`daskcl.synchronize`), or at each call with the config key ``warnings``
``"immediate"``.
A dask array among the arguments gives a lazy dask array, evaluated chunk by chunk on the
workers' devices.  The random generators ``r<name>`` are described in :mod:`daskcl.random`.

The functions are generated from the rows of :mod:`daskcl.kernels._nmath_table` and
:mod:`daskcl.kernels._random`, each made on first use; :data:`FUNCTIONS` maps each name to its
function.  Type checkers and editors read their signatures from ``nmath.pyi``, generated from
the same rows (``daskcl stubs build``; ``daskcl stubs check`` fails when it is stale).

Examples
--------
>>> import numpy as np
>>> from daskcl import nmath
>>> float(nmath.pnorm(1.96))
0.9750021048517796
>>> nmath.dbinom(np.arange(3), 2, 0.5)
array([0.25, 0.5 , 0.25])
"""

# no ``from __future__ import annotations``: it would show as ``annotations`` in dir(nmath).
# The functions are made on first use (:mod:`daskcl.kernels._registry`): ``FUNCTIONS``,
# ``__all__`` and each ``<name>`` come from :func:`__getattr__`.
from typing import Any

from .kernels import _registry
from .runtime.library import closest_names


def _r_names() -> dict[str, list[str]]:
    """R's function names that are not daskcl's, each with the functions that serve it
    (R's ``gamma`` is Rmath.h's ``gammafn``), read from the rows' R calls."""
    out: dict[str, list[str]] = {}
    functions = _registry.FUNCTIONS
    for name, func in functions.items():
        r = func.fn.r_call.split("(", 1)[0]
        if r and r != name and r not in functions:
            out.setdefault(r, []).append(name)
    return out


def __getattr__(name: str) -> Any:
    """``daskcl.nmath.<name>``: the function of that row (made on first use)."""
    if name == "FUNCTIONS":
        return _registry.FUNCTIONS
    if name == "__all__":
        return sorted(["FUNCTIONS", *_registry.names()])
    try:
        return _registry.get(name)
    except KeyError:
        pass
    msg = f"module {__name__!r} has no attribute {name!r}"
    r_names = _r_names().get(name)
    if r_names:
        msg += (f"; R's {name}() is {' or '.join(r_names)} here (Rmath.h's name"
                f"{'s' if len(r_names) > 1 else ''})")
    elif not name.startswith("__") and (near := closest_names(name, _registry.names())):
        msg += f" (did you mean {' or '.join(near)}?)"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(["FUNCTIONS", *_registry.names()])
