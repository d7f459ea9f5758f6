# SPDX-License-Identifier: GPL-2.0-or-later
"""The inputs of one elementwise call: checked (real numbers, R's flags), as operands (scalars,
compact host arrays, device arrays) with their element strides over the broadcast shape, its
axes collapsed (:class:`Call`)."""

from __future__ import annotations

import contextlib
import math
import numbers
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _transfer

__all__ = ["Call", "Operand", "called_as", "called_name", "collapse_axes", "flag_value",
           "is_dask_array", "real_array", "warning_name"]

_called_as = threading.local()


@contextlib.contextmanager
def called_as(name: str | None) -> Iterator[None]:
    """Warnings of the calls in the block (on this thread) name ``name``: the function the
    user called, where R's keywords send the call on to another (``pchisq(..., ncp=1)`` is
    ``pnchisq``'s, and R's warning says "In pchisq(...)").  The outermost name holds; ``None``
    changes nothing."""
    before = getattr(_called_as, "name", None)
    _called_as.name = before or name
    try:
        yield
    finally:
        _called_as.name = before


def called_name() -> str | None:
    """The function called, where a :func:`called_as` block on this thread says it."""
    return getattr(_called_as, "name", None)


def warning_name(own: str) -> str:
    """The name a kernel's warnings give: the function called (:func:`called_as`), else
    ``own``."""
    return called_name() or own


def is_dask_array(x: Any) -> bool:
    """Whether ``x`` is a dask array (checked without importing dask: one can exist only once
    ``dask.array`` is imported)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(x, da.Array)


def flag_value(fname: str, name: str, value: object) -> bool:
    """R's logical flag: a Python or NumPy bool, or the integer 0 or 1; anything else (a
    string, None, 2, 0.0) is a TypeError, not truth-tested."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and int(value) in (0, 1):
        return bool(value)
    raise TypeError(f"{fname}: {name} must be True or False (or 0 or 1), not {value!r}")


def real_array(fname: str, name: str, value: Any) -> np.ndarray:
    """``value`` as a NumPy array of real numbers (any real dtype), or a ``TypeError`` naming
    the function and argument: a masked array is refused (its mask would be lost), as is
    anything not numeric."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"{fname}: argument {name!r} is a masked array; its mask would be "
                        "lost: pass value.filled(np.nan) (NaN in, NaN out) or the unmasked "
                        "values")
    arr = np.asarray(value)
    if arr.dtype == object and isinstance(value, (list, tuple)) and all(
            isinstance(v, numbers.Real) for v in arr.flat):
        # Python ints beyond int64 among others ([1.5, 2**70]) make an object array; as
        # doubles they are numbers like any other (a scalar 2**70 is taken so too)
        try:
            arr = np.asarray(value, dtype=np.float64)
        except OverflowError:
            raise OverflowError(f"{fname}: argument {name!r} holds an integer too large for a "
                                "double (beyond 1.8e308); pass float('inf') for infinity"
                                ) from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{fname}: argument {name!r} must be real numbers, got "
            f"{type(value).__name__}" + (f" of dtype {arr.dtype}" if arr.ndim else ""))
    return arr


def collapse_axes(
    shape: tuple[int, ...], strides: list[tuple[int, ...]]
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Drop length-1 axes and merge neighbours that every input steps through contiguously."""
    dims: list[int] = []
    st: list[list[int]] = [[] for _ in strides]
    for ax, n in enumerate(shape):
        if n == 1:
            continue
        if dims and all(s[-1] == src[ax] * n for s, src in zip(st, strides)):
            dims[-1] *= n
            for s, src in zip(st, strides):
                s[-1] = src[ax]
            continue
        dims.append(n)
        for s, src in zip(st, strides):
            s.append(src[ax])
    if not dims:
        return (1,), [(0,) for _ in strides]
    return tuple(dims), [tuple(s) for s in st]


# -- one call's inputs -------------------------------------------------------------------------------------


@dataclass
class Operand:
    """One double input of a call: a scalar, a host array (contiguous float64, compact), or a
    device array; and its element strides over the call's collapsed axes."""

    scalar: float | None = None
    host: np.ndarray | None = None
    dev: _transfer.DeviceOperand | None = None
    strides: tuple[int, ...] = ()

    @property
    def is_array(self) -> bool:
        return self.scalar is None

    @property
    def array(self) -> np.ndarray | None:
        """The values of an array operand on the host (device arrays are copied)."""
        if self.dev is not None:
            return self.dev.get()
        return self.host


@dataclass
class Call:
    """The inputs of one call, checked and broadcast (no device work)."""

    shape: tuple[int, ...]
    dims: tuple[int, ...]
    operands: list[Operand]
    ints: list[int]
    #: counter strides over ``dims`` and the counter of element 0 (random generators)
    cstrides: tuple[int, ...] = ()
    cbase: int = 0
    seed: int = 0
    #: further kernel arguments (after the declared ones)
    extra: tuple[Any, ...] = ()
    #: the launch size cap of this call (None: the device's)
    cap: int | None = None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def on_device(self) -> bool:
        return any(o.dev is not None for o in self.operands)


def _fits_together(shapes: Sequence[tuple[int, ...]]) -> bool:
    """Whether ``shapes`` follow NumPy's broadcasting rule (each axis, aligned from the right,
    of one length or 1), whatever the size of the result."""
    for k in range(1, max((len(sh) for sh in shapes), default=0) + 1):
        if len({sh[-k] for sh in shapes if len(sh) >= k} - {1}) > 1:
            return False
    return True


def _shape_of(o: Operand) -> tuple[int, ...]:
    if o.host is not None:
        return tuple(o.host.shape)
    return o.dev.shape if o.dev is not None else ()


def _compact(a: np.ndarray) -> np.ndarray:
    """``a`` as a contiguous float64 array, axes along which it does not vary (a broadcast view
    handed in) kept at length 1, so that broadcast inputs are never materialised."""
    if any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        a = a[tuple(slice(0, 1) if st == 0 else slice(None) for st in a.strides)]
    return np.ascontiguousarray(a, dtype=np.float64)


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def _device_strides(op: _transfer.DeviceOperand, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a device operand broadcast to ``shape`` (0 along broadcast axes)."""
    lead = len(shape) - len(op.shape)
    return tuple(0 if a < lead or op.shape[a - lead] == 1 else op.strides[a - lead]
                 for a in range(len(shape)))
