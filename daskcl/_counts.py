# SPDX-License-Identifier: GPL-2.0-or-later
"""The Wilcoxon rank-sum and signed-rank functions: count tables built on the device.

R evaluates ``dwilcox``/``pwilcox``/``qwilcox`` and ``dsignrank``/``psignrank``/``qsignrank``
from tables of counts that it allocates on the host.  Here, for each call, the distinct
parameters ((m, n) or n, rounded as R rounds them) are collected on the host, one table per
parameter is built in device memory by ``cl/kernels/count_tables.cl`` (one work-group each),
and the elementwise kernel of the row reads its element's table through four extra kernel
arguments (``ct_tab, ct_keys, ct_offs, ct_nkeys``; see ``cl/nmath/count_tables.cl``).  Built
tables are kept per device for later calls with the same parameters.

Limits: a wilcox table holds about 1.5 m n doubles and its builder counts exactly, in integers
of L = ceil(log2(choose(m + n, n)) / 64) 64-bit limbs (2 (m n / 2) L words of work space); a
signrank table about 0.75 n^2 doubles (and 0.25 n^2 of work space).  One parameter may use at
most :data:`MAX_TABLE` words (signrank: n <= 8191), all tables of one call at most
:data:`MAX_TOTAL` doubles (and what the device can allocate in one buffer), and for wilcox
choose(m + n, n) must stay below 2^1020 (about m + n <= 1030 for m = n), beyond which R's own
counts overflow (R then returns 0 or NaN).  A call beyond these limits raises
:class:`ValueError` naming them.

Example
-------
>>> from daskcl import nmath
>>> float(nmath.pwilcox(3, 4, 5))
0.05555555555555555
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import device as _device
from . import program as _program
from ._elementwise import Elementwise, Prepared
from ._table import Fn
from .library import get_library

__all__ = ["MAX_TABLE", "MAX_TOTAL", "CountTables", "table_sizes"]

#: 8-byte words of one parameter's table and work space (512 MiB)
MAX_TABLE = 1 << 26
#: doubles in all tables of one call (1 GiB), and in the cache of built tables per device
MAX_TOTAL = 1 << 27
#: largest log(choose(m + n, n)) for wilcox: 1020 log 2 (counts and their sums stay finite)
MAX_LCHOOSE = 1020 * math.log(2)

_WG = 256


@dataclass(frozen=True)
class _Family:
    name: str
    width: int           # parameters per key
    kernel: str          # builder kernel in cl/kernels/count_tables.cl


_FAMILIES = {
    "wilcox": _Family("wilcox", 2, "count_tables_wilcox"),
    "signrank": _Family("signrank", 1, "count_tables_signrank"),
}


def limbs(m: float, n: float) -> int:
    """64-bit limbs that hold the exact counts of wilcox(m, n) and the sum of two of them."""
    lch = math.lgamma(m + n + 1) - math.lgamma(m + 1) - math.lgamma(n + 1)
    return (int(lch / math.log(2)) + 3 + 63) // 64


def table_sizes(family: str, key: tuple[float, ...]) -> tuple[int, int]:
    """(table, scratch) 8-byte words for one parameter of ``family`` (``"wilcox"``,
    ``"signrank"``): the table read by the elementwise kernel, and the builder's work space."""
    if family == "wilcox":
        m, n = key
        u = int(m) * int(n)
        return 2 + (u // 2 + 1) + (u + 1), 2 * (u // 2 + 1) * limbs(m, n)
    (n,) = key
    u = int(n) * (int(n) + 1) // 2
    return 1 + (u // 2 + 1) + (u + 1), u // 2 + 1


def _check(fname: str, family: str, key: tuple[float, ...]) -> None:
    size = sum(table_sizes(family, key))
    if family == "wilcox":
        m, n = key
        lch = math.lgamma(m + n + 1) - math.lgamma(m + 1) - math.lgamma(n + 1)
        if lch > MAX_LCHOOSE:
            raise ValueError(
                f"{fname}: m = {m:g}, n = {n:g} is beyond the supported range: choose(m + n, n) "
                f"= exp({lch:.1f}) exceeds 2^1020, where the counts overflow double precision "
                "(R's own values are 0 or NaN there)"
            )
        if size > MAX_TABLE:
            raise ValueError(
                f"{fname}: m = {m:g}, n = {n:g} needs a count table and work space of {size} "
                f"8-byte words; the limit is {MAX_TABLE} ({MAX_TABLE * 8 >> 20} MiB), about "
                "m n (1.5 + limbs) <= 2^26 with limbs = log2(choose(m + n, n)) / 64, rounded up"
            )
    elif size > MAX_TABLE:
        (n,) = key
        raise ValueError(
            f"{fname}: n = {n:g} needs a count table and work space of {size} doubles; the "
            f"limit is {MAX_TABLE} ({MAX_TABLE * 8 >> 20} MiB), i.e. n <= 8191"
        )


def _distinct(params: list[Any]) -> np.ndarray:
    """The distinct parameter tuples (rounded as R rounds them, finite and > 0), sorted."""
    arrs = [np.rint(np.asarray(p, dtype=np.float64)) for p in params]
    uniq = [np.unique(a[np.isfinite(a) & (a > 0)]) for a in arrs]
    if any(u.size == 0 for u in uniq):
        return np.empty((0, len(arrs)))
    if len(arrs) == 1:
        return uniq[0].reshape(-1, 1)
    shape = np.broadcast_shapes(*[a.shape for a in arrs])
    if math.prod(shape) <= 4 * max(a.size for a in arrs) + 16:
        # the pairs that occur (broadcasting the parameters among themselves only)
        cols = [np.broadcast_to(a, shape).ravel() for a in arrs]
        pairs = np.stack(cols, axis=1)
        ok = np.all(np.isfinite(pairs) & (pairs > 0), axis=1)
        return np.unique(pairs[ok], axis=0)
    # parameters along different axes: every combination occurs
    grid = np.meshgrid(*uniq, indexing="ij")
    return np.stack([g.ravel() for g in grid], axis=1)


@dataclass
class _Tables:
    tab: Any
    keys: Any
    offs: Any
    nkeys: int
    doubles: int


class _Cache:
    """Built tables per (device, family, keys), least recently used first out."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: OrderedDict[tuple[Any, ...], _Tables] = OrderedDict()

    def get(self, key: tuple[Any, ...]) -> _Tables | None:
        with self.lock:
            t = self.entries.get(key)
            if t is not None:
                self.entries.move_to_end(key)
            return t

    def put(self, key: tuple[Any, ...], tables: _Tables) -> None:
        with self.lock:
            self.entries[key] = tables
            total = sum(t.doubles for t in self.entries.values())
            while total > MAX_TOTAL and len(self.entries) > 1:
                _, old = self.entries.popitem(last=False)
                total -= old.doubles


_cache = _Cache()


def _build(bound: _device.BoundDevice, family: _Family, keys: np.ndarray) -> _Tables:
    import pyopencl as cl

    sizes = [table_sizes(family.name, tuple(float(v) for v in k)) for k in keys]
    offs = np.zeros(len(keys), dtype=np.int64)
    soffs = np.zeros((len(keys), 2), dtype=np.int64)   # scratch offset, limbs (wilcox)
    tab_total = scr_total = 0
    for i, (t, s) in enumerate(sizes):
        offs[i], soffs[i, 0] = tab_total, scr_total
        if family.name == "wilcox":
            soffs[i, 1] = limbs(float(keys[i, 0]), float(keys[i, 1]))
        tab_total += t
        scr_total += s
    ctx, queue = bound.context, bound.queue
    mf = cl.mem_flags
    keys_c = np.ascontiguousarray(keys, dtype=np.float64).ravel()
    kbuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=keys_c)
    obuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=offs)
    sobuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=soffs)
    tbuf = cl.Buffer(ctx, mf.READ_WRITE, 8 * tab_total)
    sbuf = cl.Buffer(ctx, mf.READ_WRITE, 8 * scr_total)
    built = _program.build(get_library().kernel_program_source("count_tables"))
    kernel, lock = built.kernel(family.kernel)
    dev = bound.device
    wg = min(_WG, dev.max_work_group_size,
             kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev))
    with lock:
        kernel.set_args(kbuf, obuf, tbuf, sbuf, sobuf)
        cl.enqueue_nd_range_kernel(queue, kernel, (wg * len(keys),), (wg,))
    queue.finish()
    sbuf.release()
    return _Tables(tbuf, kbuf, obuf, len(keys), tab_total)


def _device_limit(bound: _device.BoundDevice) -> int:
    """Doubles the device can hold in one buffer (within MAX_TOTAL)."""
    return min(MAX_TOTAL, int(bound.device.max_mem_alloc_size) // 8)


class CountTables(Elementwise):
    """:class:`Elementwise` for the rows that read count tables (``impl`` of their rows)."""

    extra_params = (
        ", __global const double *restrict ct_tab, __global const double *restrict ct_keys"
        ", __global const long *restrict ct_offs, const int ct_nkeys"
    )

    def __init__(self, fn: Fn) -> None:
        super().__init__(fn)
        fam = fn.name[1:]
        if fam not in _FAMILIES:
            raise ValueError(f"{fn.name}: no count tables for the family {fam!r}")
        self.family = _FAMILIES[fam]

    def prepare(self, args: tuple[Any, ...]) -> Prepared:
        prep = super().prepare(args)
        if prep.size == 0:
            return prep
        tables = self.tables(prep)
        prep.extra = (tables.tab, tables.keys, tables.offs, np.int32(tables.nkeys))
        return prep

    def tables(self, prep: Prepared) -> _Tables:
        """The count tables for the parameters of one call (built, or from the cache)."""
        fam = self.family
        idx = range(1, 1 + fam.width)
        params = [prep.scalars[j] if prep.arrays[j] is None else prep.arrays[j] for j in idx]
        keys = _distinct(params)
        if keys.shape[0] == 0:   # no valid parameter: a one-entry table, never read
            keys = np.ones((1, fam.width))
        for k in keys:
            _check(self.fn.name, fam.name, tuple(float(v) for v in k))
        bound = _device.current()
        total = sum(table_sizes(fam.name, tuple(float(v) for v in k))[0] for k in keys)
        limit = _device_limit(bound)
        if total > limit:
            raise ValueError(
                f"{self.fn.name}: the {keys.shape[0]} distinct parameter(s) of this call need "
                f"count tables of {total} doubles in all; the limit is {limit} "
                f"({limit * 8 >> 20} MiB): split the call"
            )
        ckey = (bound, fam.name, keys.tobytes())
        cached = _cache.get(ckey)
        if cached is not None:
            return cached
        tables = _build(bound, fam, keys)
        _cache.put(ckey, tables)
        return tables
