# SPDX-License-Identifier: GPL-2.0-or-later
"""Full factorial grids of coefficient vectors, decoded on the device (:class:`FactorialGrid`)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["FactorialGrid"]


class FactorialGrid:
    """The full factorial grid of coefficient vectors, one value vector per coefficient.

    Grid point ``j`` combines value ``(j // stride_k) % n_k`` of coefficient ``k``, with
    ``n_k = len(values[k])`` and ``stride_k = n_{k+1} * ... * n_{l2-1}``: the order of
    ``itertools.product(*values)``, the last coefficient varying fastest.  It is never
    materialised by :func:`f2_f3` (the device decodes ``j``); ``np.asarray(grid)`` does
    materialise it, as a ``(len(grid), l2)`` array.

    Parameters
    ----------
    values
        A sequence of ``l2`` one-dimensional, non-empty arrays of real numbers.

    Slicing with a step of 1 (``grid[1000:2000]``) gives the grid of those points, still
    undecoded.

    Examples
    --------
    >>> g = FactorialGrid([[-1.0, 0.0, 1.0], [10.0, 20.0]])
    >>> g.shape
    (6, 2)
    >>> np.asarray(g[1:3]).tolist()
    [[-1.0, 20.0], [0.0, 10.0]]
    """

    def __init__(self, values: Sequence[Any]) -> None:
        if (isinstance(values, np.ndarray) and values.ndim != 2) or isinstance(values, (str, bytes)):
            raise TypeError("FactorialGrid: values must be a sequence of 1-D arrays, one per coefficient")
        vals = []
        for k, v in enumerate(values):
            a = np.asarray(v)
            if a.dtype.kind not in "biuf":
                raise TypeError(f"FactorialGrid: values[{k}] must be real numbers, got dtype {a.dtype}")
            if a.ndim != 1 or a.size == 0:
                raise ValueError(
                    f"FactorialGrid: values[{k}] must be a non-empty 1-D array, got shape {a.shape}"
                )
            vals.append(np.ascontiguousarray(a, dtype=np.float64))
        if not vals:
            raise ValueError("FactorialGrid: at least one coefficient's values are needed")
        self.values: tuple[np.ndarray, ...] = tuple(vals)
        self.counts: tuple[int, ...] = tuple(len(v) for v in vals)
        self.strides: tuple[int, ...] = tuple(
            math.prod(self.counts[k + 1:]) for k in range(len(vals))
        )
        self.total = math.prod(self.counts)
        if self.total >= 2**63:
            raise ValueError(
                f"FactorialGrid: {self.total} grid points do not fit a 64-bit index; split a "
                "coefficient's values over several grids"
            )
        self.start, self.stop = 0, self.total

    @property
    def shape(self) -> tuple[int, int]:
        return (self.stop - self.start, len(self.values))

    @property
    def ndim(self) -> int:
        return 2

    def __len__(self) -> int:
        return self.stop - self.start

    def __repr__(self) -> str:
        return f"FactorialGrid(counts={self.counts}, rows {self.start}:{self.stop})"

    def __getitem__(self, key: slice) -> FactorialGrid:
        if not isinstance(key, slice):
            raise TypeError("FactorialGrid supports slices of grid points only, e.g. grid[100:200]")
        start, stop, step = key.indices(len(self))
        if step != 1:
            raise ValueError("FactorialGrid: slices must have step 1")
        out = object.__new__(FactorialGrid)
        out.__dict__.update(self.__dict__)
        out.start, out.stop = self.start + start, self.start + max(start, stop)
        return out

    def materialize(self) -> np.ndarray:
        """The grid points as a ``(len(self), l2)`` array."""
        j = np.arange(self.start, self.stop, dtype=np.int64)
        out = np.empty(self.shape)
        for k, (v, n, s) in enumerate(zip(self.values, self.counts, self.strides)):
            out[:, k] = v[(j // s) % n]
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.materialize()
        return a if dtype is None else a.astype(dtype)

    def __dask_tokenize__(self) -> Any:
        h = hashlib.sha1()
        for v in self.values:
            h.update(v.tobytes())
            h.update(b"|")
        return ("FactorialGrid", h.hexdigest(), self.start, self.stop)

    def descriptor(self) -> tuple[np.ndarray, np.ndarray]:
        """The concatenated values and (offset, count, stride) per coefficient, for the device."""
        offsets = np.cumsum((0, *self.counts[:-1]))
        desc = np.array(
            [(o, n, s) for o, n, s in zip(offsets, self.counts, self.strides)], dtype=np.int64
        ).ravel()
        return np.concatenate(self.values), desc
