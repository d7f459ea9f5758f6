# SPDX-License-Identifier: GPL-2.0-or-later
"""R's Mathlib on the bound OpenCL device: ``daskcl.nmath.<name>`` for every Rmath.h function.

Each function takes Rmath.h's arguments in Rmath.h's order (with R's defaults) and R's flags as
keywords: ``log=`` for densities, ``lower_tail=`` and ``log_p=`` for distribution and quantile
functions.  Arguments broadcast as in NumPy; the result is float64 of the broadcast shape (a
NumPy scalar for scalar inputs).  Where R gives NaN for non-NaN inputs, the result is NaN and one
``RuntimeWarning`` per call says how many; R's "non-integer x" warnings are counted the same way.
A dask array among the arguments gives a lazy dask array, evaluated chunk by chunk on the
workers' devices.

Example
-------
>>> import numpy as np
>>> from daskcl import nmath
>>> float(nmath.pnorm(1.96))
0.9750021048517795
>>> nmath.dbinom(np.arange(3), 2, 0.5)
array([0.25, 0.5 , 0.25])
"""

from __future__ import annotations

import importlib
import inspect
import math
import numbers
from typing import Any

import numpy as np

from .kernels._elementwise import Elementwise, is_dask_array
from .kernels._nmath_table import ROWS
from .kernels._table import Fn

_FLAG_DOC = {
    "log": "log : bool, default False\n    Return log density.",
    "lower_tail": "lower_tail : bool, default True\n    P[X <= x] if true, else P[X > x].",
    "log_p": "log_p : bool, default False\n    Probabilities are given (or returned) as log(p).",
}


def _flag(fn: Fn, name: str, value: Any) -> bool:
    """R's logical flag: a Python or NumPy bool, or the integer 0 or 1; anything else (a
    string, None, 2, 0.0) is a TypeError, not truth-tested."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(value)
    raise TypeError(
        f"{fn.name}: {name} must be True or False (or 0 or 1), not {value!r}"
    )


def _check_dask_shapes(fn: Fn, args: tuple[Any, ...]) -> None:
    """NumPy's broadcasting rule for the arguments of a dask call, with daskcl's message
    (dask's own names neither the function nor the arguments).  Unknown (NaN) lengths pass."""
    shapes = [tuple(np.shape(a)) for a in args]
    ndim = max((len(sh) for sh in shapes), default=0)
    for k in range(1, ndim + 1):
        sizes = {sh[-k] for sh in shapes if len(sh) >= k}
        known = {int(d) for d in sizes if not (isinstance(d, float) and math.isnan(d)) and d != 1}
        if len(known) > 1:
            listed = ", ".join(
                f"{n} {sh}" for n, sh, a in zip(fn.arg_names, shapes, args) if np.ndim(a)
            )
            raise ValueError(
                f"{fn.name}: the shapes of the arguments do not broadcast: {listed}"
            )


def _block(*blocks: np.ndarray, fn_name: str, flags: dict[str, bool]) -> np.ndarray:
    """One dask block, on a worker: only the function's name travels in the graph."""
    impl = FUNCTIONS[fn_name]._daskcl_impl
    return np.asarray(impl(*blocks, **flags), dtype=np.float64)


def _dask_call(impl: Elementwise, args: tuple[Any, ...], flags: dict[str, bool]) -> Any:
    """A lazy dask array: NumPy broadcasting (arguments aligned from the right), chunks unified
    as dask's elementwise operations do, keys unique per call (a token, not a fixed name)."""
    import dask.array as da

    arrays = [a if is_dask_array(a) else np.asarray(a, dtype=np.float64) for a in args]
    ndim = max(np.ndim(a) for a in arrays)
    out_ind = tuple(range(ndim))
    pairs: list[Any] = []
    for a in arrays:
        pairs += [a, tuple(range(ndim - np.ndim(a), ndim))]
    return da.blockwise(
        _block, out_ind, *pairs, dtype=np.float64, meta=np.empty((0,) * ndim, dtype=np.float64),
        align_arrays=True, token=f"daskcl-{impl.fn.name}", fn_name=impl.fn.name, flags=flags,
    )


def _impl(fn: Fn) -> Elementwise:
    """The implementation of a row: ``Elementwise`` or the class its ``impl`` names."""
    if not fn.impl:
        return Elementwise(fn)
    module, _, cls = fn.impl.partition(":")
    return getattr(importlib.import_module(module), cls)(fn)


def _make(fn: Fn) -> Any:
    impl = _impl(fn)
    defaults = fn.defaults
    flag_defaults = fn.flag_defaults

    def func(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        vals = tuple(bound.arguments[n] for n in fn.arg_names)
        flags = {k: _flag(fn, k, bound.arguments[k]) for k in flag_defaults}
        if any(is_dask_array(v) for v in vals):
            _check_dask_shapes(fn, vals)
            return _dask_call(impl, vals, flags)
        return impl(*vals, **flags)

    params = [
        inspect.Parameter(
            n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=defaults.get(n, inspect.Parameter.empty),
        )
        for n in fn.arg_names
    ]
    params += [
        inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
        for k, v in flag_defaults.items()
    ]
    sig = inspect.Signature(params)
    func.__name__ = func.__qualname__ = fn.name
    func.__signature__ = sig  # type: ignore[attr-defined]
    arg_doc = "\n".join(
        f"{n} : array_like{', default ' + repr(defaults[n]) if n in defaults else ''}"
        for n in fn.arg_names
    )
    flag_doc = "\n".join(_FLAG_DOC[k] for k in flag_defaults)
    func.__doc__ = (
        f"{fn.summary}\n\nR's ``{fn.name}`` (Rmath.h ``{fn.csym}``), evaluated on the OpenCL "
        f"device.\n\nParameters\n----------\n{arg_doc}\n{flag_doc}\n\nReturns\n-------\n"
        "ndarray or float64 or dask array\n    float64 values of the broadcast shape.\n\n"
        "Raises\n------\nTypeError\n    A non-numeric argument; a flag that is not a bool "
        "(Python or NumPy) or the integer 0 or 1.\nValueError\n    Shapes that do "
        "not broadcast.\n"
    )
    func._daskcl_impl = impl  # type: ignore[attr-defined]
    return func


FUNCTIONS: dict[str, Any] = {fn.name: _make(fn) for fn in ROWS}
globals().update(FUNCTIONS)

__all__ = sorted(FUNCTIONS)  # pyright: ignore[reportUnsupportedDunderAll]

# --- random variates (daskcl.kernels._random; limits and host reference in daskcl/random.py) ---
from .kernels._random import FUNCTIONS as _RANDOM  # noqa: E402

globals().update(_RANDOM)
FUNCTIONS.update(_RANDOM)
__all__ = sorted(FUNCTIONS)  # pyright: ignore[reportUnsupportedDunderAll]
