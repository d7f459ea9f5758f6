# SPDX-License-Identifier: GPL-2.0-or-later
"""The public functions of :mod:`daskcl.nmath`, generated from the rows.

One function per :class:`~daskcl.kernels._table.Fn` row (:data:`~daskcl.kernels._nmath_table.ROWS`):
Rmath.h's arguments in Rmath.h's order with R's defaults, R's flags as keywords, NumPy
broadcasting, and a lazy dask array when a dask array is among the arguments.  The random
generators (:mod:`daskcl.kernels._random`) join them in :data:`FUNCTIONS`.
"""

from __future__ import annotations

import importlib
import inspect
import math
import numbers
from typing import Any, cast

import numpy as np

from . import _docs, _random
from ._elementwise import Elementwise, is_dask_array
from ._nmath_table import ROWS
from ._table import PUBLIC_MODULE, Fn, KernelFunction

__all__ = ["FUNCTIONS"]

def _flag(fn: Fn, name: str, value: object) -> bool:
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
    impl = _ELEMENTWISE[fn_name]._daskcl_impl
    return np.asarray(impl(*blocks, **flags), dtype=np.float64)


def _dask_call(impl: Elementwise, args: tuple[Any, ...], flags: dict[str, bool]) -> Any:
    """A lazy dask array (``Any``: dask is not typed): NumPy broadcasting (arguments aligned
    from the right), chunks unified as dask's elementwise operations do, keys unique per call
    (a token, not a fixed name)."""
    import dask.array as da

    arrays = [a if is_dask_array(a) else np.asarray(a, dtype=np.float64) for a in args]
    ndim = max(np.ndim(a) for a in arrays)
    out_ind = tuple(range(ndim))
    pairs: list[object] = []
    for a in arrays:
        pairs += [a, tuple(range(ndim - np.ndim(a), ndim))]
    return da.blockwise(
        _block, out_ind, *pairs, dtype=np.float64, meta=np.empty((0,) * ndim, dtype=np.float64),
        align_arrays=True, token=f"daskcl-{impl.fn.name}", fn_name=impl.fn.name, flags=flags,
    )


def _impl(fn: Fn) -> Elementwise:
    """The implementation of a row: ``Elementwise`` or the subclass its ``impl`` names."""
    if not fn.impl:
        return Elementwise(fn)
    module, _, name = fn.impl.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, Elementwise)):
        raise TypeError(f"{fn.name}: impl {fn.impl!r} is not a subclass of Elementwise")
    return cls(fn)


def _make(fn: Fn) -> KernelFunction[Elementwise]:
    impl = _impl(fn)
    defaults = fn.defaults
    flag_defaults = fn.flag_defaults
    aliases = _docs.ALIASES.get(fn.name, {})
    optional = _docs.optional_params(fn.name)

    def func(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        if aliases:
            target = _docs.apply_aliases(fn.name, bound.arguments)
            if target != fn.name:
                return _ELEMENTWISE[target](**bound.arguments)
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
            default=None if n in optional else defaults.get(n, inspect.Parameter.empty),
        )
        for n in fn.arg_names
    ]
    params += [
        inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
        for k, v in flag_defaults.items()
    ]
    params += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=None) for a in aliases]
    sig = inspect.Signature(params)
    func.__name__ = func.__qualname__ = fn.name
    func.__module__ = PUBLIC_MODULE
    func.__signature__ = sig  # type: ignore[attr-defined]
    func.__doc__ = _docs.docstring(fn)
    func._daskcl_impl = impl  # type: ignore[attr-defined]
    return cast("KernelFunction[Elementwise]", func)


_ELEMENTWISE: dict[str, KernelFunction[Elementwise]] = {fn.name: _make(fn) for fn in ROWS}

#: every public function of :mod:`daskcl.nmath` by name: the Mathlib rows, then the generators
FUNCTIONS: dict[str, KernelFunction[Elementwise | _random.Random]] = {
    **_ELEMENTWISE, **_random.FUNCTIONS,
}
