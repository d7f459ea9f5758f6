# SPDX-License-Identifier: GPL-2.0-or-later
"""Device arrays (``pyopencl.array.Array``) as operands of daskcl's kernels: checked (bound
device, real dtype; other dtypes converted on the device), their element strides, and the work
of other queues that their contents still wait on."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime import device as _device

__all__ = ["DeviceOperand", "after_other_queues", "device_operand", "is_device_array"]

#: guards :data:`_barriers`
_lock = threading.Lock()


def is_device_array(x: Any) -> bool:
    """Whether ``x`` is a ``pyopencl.array.Array`` (checked without importing it)."""
    cla = sys.modules.get("pyopencl.array")
    return cla is not None and isinstance(x, cla.Array)


@dataclass(frozen=True)
class DeviceOperand:
    """A float64 device array as a kernel reads it: its buffer, the offset of its first element
    and its element strides (C order over its shape)."""

    buffer: Any
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    array: Any = None     # the pyopencl array (a float64 copy where the input was converted)

    def get(self) -> np.ndarray:
        """The values, copied to the host."""
        return np.asarray(self.array.get())


def after_other_queues(queue: Any, arrays: Sequence[Any]) -> None:
    """Order the launches that follow on ``queue`` after the work that the contents of
    ``arrays`` (``pyopencl.array.Array``) still wait on from other queues of the context:
    pyopencl records it in each array's ``events`` (a conversion by ``astype``, an operation
    the user queued on a queue of their own), and one in-order queue does not order another's."""
    import pyopencl as cl

    pending = [e for a in arrays if a is not None for e in getattr(a, "events", ())
               if e.command_queue != queue]
    if pending:
        barrier = cl.enqueue_barrier(queue, wait_for=pending)
        done = cl.command_execution_status.COMPLETE
        with _lock:   # kept until done, as a piece's events are (see _piece)
            _barriers[:] = [e for e in _barriers if e.command_execution_status != done]
            _barriers.append(barrier)


#: the barriers of :func:`after_other_queues`, which nobody waits for, kept until they are done
_barriers: list[Any] = []


def _as_float64(fname: str, name: str, x: Any, bound: _device.BoundDevice) -> Any:
    """A device array of real numbers of another dtype converted to float64 on the device, as
    a view of the same shape and element strides.  The span of the base buffer it covers is
    converted as one contiguous run (pyopencl's ``astype`` copies in memory order and gives C
    strides: a transposed or Fortran-ordered view came back scrambled, a strided one was
    refused); bool is read as its bytes (0 or 1)."""
    import pyopencl.array as cla

    dt = np.dtype(x.dtype)
    if dt.kind not in "biuf":
        raise TypeError(f"{fname}: argument {name!r} must be real numbers, got a device array "
                        f"of dtype {x.dtype}")
    if dt == np.float16 or dt.itemsize > 8:
        raise TypeError(f"{fname}: argument {name!r} is a device array of {dt}, which OpenCL "
                        "does not convert here: pass it as float32 or float64")
    size = dt.itemsize
    if any(s % size or s < 0 for s in x.strides) or x.offset % size:
        raise ValueError(f"{fname}: argument {name!r} has strides {x.strides} or offset "
                         f"{x.offset} that are not non-negative whole elements")
    queue = bound.queue
    if x.size == 0:
        return cla.empty(queue, x.shape, np.float64)
    after_other_queues(queue, [x])       # what the user's queue still writes into it
    span = 1 + sum((n - 1) * (s // size) for n, s in zip(x.shape, x.strides))
    run = cla.Array(queue, (span,), np.uint8 if dt.kind == "b" else dt, data=x.base_data,
                    offset=x.offset)
    with _device.quiet_compiler():       # pyopencl warns whenever a compiler prints anything
        converted = run.astype(np.float64)
    return cla.Array(queue, x.shape, np.float64, strides=tuple(8 * (s // size) for s in x.strides),
                     data=converted.base_data, offset=converted.offset,
                     events=list(converted.events))


def device_operand(fname: str, name: str, x: Any, bound: _device.BoundDevice) -> DeviceOperand:
    """Check a ``pyopencl.array.Array`` argument: on the bound device's context (else a
    ``ValueError``: daskcl never copies between contexts silently), real numbers (other dtypes
    are converted on the device to float64), strides that are whole elements."""
    if x.context != bound.context:
        raise ValueError(
            f"{fname}: argument {name!r} is a pyopencl array of another OpenCL context; daskcl "
            f"computes on {bound.info.describe()} in its own context "
            "(daskcl.runtime.device.current().context): create the array there, or pass "
            "x.get() to copy it through the host"
        )
    if x.dtype != np.float64:
        x = _as_float64(fname, name, x, bound)
    if any(s % 8 or s < 0 for s in x.strides) or x.offset % 8:
        raise ValueError(f"{fname}: argument {name!r} has strides {x.strides} or offset "
                         f"{x.offset} that are not non-negative whole elements")
    return DeviceOperand(x.base_data, x.offset // 8, tuple(x.shape),
                         tuple(s // 8 for s in x.strides), x)
