# SPDX-License-Identifier: GPL-2.0-or-later
"""The Wilcoxon rank-sum and signed-rank functions: count tables built on the device.

R evaluates ``dwilcox``/``pwilcox``/``qwilcox`` and ``dsignrank``/``psignrank``/``qsignrank``
from tables of counts that it allocates on the host.  Here, for each call, the distinct
parameters ((m, n) or n, rounded as R rounds them) are collected on the host, one table per
parameter is built in device memory by ``cl/kernels/count_tables.cl``, and the elementwise
kernel of the row reads its element's table through four extra kernel arguments (``ct_tab,
ct_keys, ct_offs, ct_nkeys``; see ``cl/nmath/count_tables.cl``).  Built tables are kept per
device for later calls with the same parameters.

A small table (at most :data:`SMALL_WORK` operations) is built whole by one work-group, many in
one launch; a large one step by step, each step one launch over the whole device (a factor of
the generating function: all counts of the step in parallel).  The launches go in batches of
about :data:`BATCH_SECONDS` of device time; between batches the host waits for the device and
passes :func:`_checkpoint`, where a pending Ctrl-C is raised, so that an interrupted build stops
within a second and caches nothing.  The builders' work space is one buffer, reused from table
to table (it holds one large table's, or one launch of small tables').

Limits: a wilcox table holds about 1.5 m n doubles and its builder counts exactly, in integers
of L = ceil(log2(choose(m + n, n)) / 64) 64-bit limbs (2 (m n / 2) L words of work space); a
signrank table about 0.75 n^2 doubles (and 0.25 n^2 of work space).  One parameter may use at
most :data:`MAX_TABLE` words (signrank: n <= 8191), and its table and its work space each
what the device can allocate in one buffer; all tables of one call at most :data:`MAX_TOTAL`
doubles (and one buffer), and for wilcox choose(m + n, n) must stay below 2^1020 (about
m + n <= 1030 for m = n), beyond which R's own counts overflow (R then returns 0 or NaN).  A call beyond these limits raises
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
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime import device as _device
from ..runtime import program as _program
from ..runtime.library import get_library
from ..runtime.program import set_args as _set_args

__all__ = ["MAX_TABLE", "MAX_TOTAL", "signrank_in_place", "table_program", "table_sizes",
           "tables_for"]

#: 8-byte words of one parameter's table and work space (512 MiB)
MAX_TABLE = 1 << 26
#: doubles in all tables of one call (1 GiB), and in the cache of built tables per device
MAX_TOTAL = 1 << 27
#: largest log(choose(m + n, n)) for wilcox: 1020 log 2 (counts and their sums stay finite)
MAX_LCHOOSE = 1020 * math.log(2)

#: element operations of a table built by one work-group in one launch (larger: a launch
#: per step over the whole device)
SMALL_WORK = 1 << 21
#: element operations of one launch of small tables, and their scratch (8-byte words)
SMALL_GROUP_WORK = 1 << 24
SMALL_GROUP_SCRATCH = 1 << 20
#: element operations of the first batch of launches between interruption checks; the next
#: batches adapt so that each takes about BATCH_SECONDS
BATCH_WORK = 1 << 22
BATCH_SECONDS = 0.1
#: terms of the cumulative sums per launch (summed in order by one work-item)
CUM_PIECE = 1 << 21
#: entries one launch of the in-place signed-rank steps updates (CPU devices)
SEQ_WORK = 1 << 25

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


def _check(fname: str, family: str, key: tuple[float, ...], limit: int) -> None:
    """ValueError where one parameter is beyond the limits; ``limit``: 8-byte words the
    device holds in one buffer."""
    tsize, ssize = table_sizes(family, key)
    size = tsize + ssize
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
    if max(tsize, ssize) > limit:
        what = ", ".join(f"{a} = {v:g}" for a, v in zip(("m", "n") if family == "wilcox"
                                                          else ("n",), key, strict=True))
        raise ValueError(
            f"{fname}: {what} needs a count table of {tsize} and a work space of {ssize} "
            f"8-byte words; the device holds at most {limit} ({limit * 8 >> 20} MiB) in one "
            "buffer"
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


def _checkpoint() -> None:
    """The point between batches of launches where a pending Ctrl-C (KeyboardInterrupt) is
    raised: the device has finished the previous batch, and Python delivers signals here."""


def work(family: str, key: tuple[float, ...]) -> int:
    """Element operations (limb operations for wilcox) of building one parameter's table."""
    if family == "wilcox":
        m, n = key
        a, b = int(min(m, n)), int(max(m, n))
        return a * (a * b // 2 + 1) * limbs(m, n) // 2 + a * b + 1
    (n,) = key
    u = int(n) * (int(n) + 1) // 2
    return int(n) * (u // 2 + 1) + u + 1


class _Launches:
    """Kernel launches in batches of bounded device time: after each batch the host waits
    for the device and calls :func:`_checkpoint`, so that Ctrl-C stops a long build within
    about :data:`BATCH_SECONDS` (the batch's work adapts to the device's speed)."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue
        #: the batch's events, released once it is done (releasing the event of a kernel still
        #: running waits for it on NVIDIA, holding the interpreter's lock: _transfer._piece)
        self.held: list[Any] = []
        self.budget = BATCH_WORK
        self.pending = 0
        self.launches = 0
        self.t0 = time.perf_counter()

    def __call__(self, built: Any, name: str, args: tuple[Any, ...], items: int,
                 wg: int | None, work: int) -> None:
        import pyopencl as cl

        kernel, lock = built.kernel(name)
        gsize = ((items + wg - 1) // wg) * wg if wg else items
        with lock:
            _set_args(kernel, *args)
            self.held.append(cl.enqueue_nd_range_kernel(self.queue, kernel, (gsize,),
                                                        (wg,) if wg else None))
        self.launches += 1
        self.pending += work
        if self.pending >= self.budget:
            self.check()

    def check(self) -> None:
        self.queue.finish()
        self.held.clear()
        dt = time.perf_counter() - self.t0
        if dt < BATCH_SECONDS / 2:
            self.budget = min(self.budget * 2, 1 << 40)
        elif dt > 2 * BATCH_SECONDS:
            self.budget = max(self.budget // 2, 1 << 12)
        self.pending = 0
        self.t0 = time.perf_counter()
        _checkpoint()


def _buffer(ctx: Any, flags: Any, words: int, hostbuf: np.ndarray | None = None) -> Any:
    """A device buffer of ``words`` 8-byte words."""
    import pyopencl as cl

    if hostbuf is None:
        return cl.Buffer(ctx, flags, 8 * words)
    return cl.Buffer(ctx, flags, hostbuf=hostbuf)


def _plan_groups(fam: str, tkeys: list[tuple[float, ...]], sizes: list[tuple[int, int]],
                 works: list[int], limit: int
                 ) -> tuple[list[list[int]], list[int], np.ndarray, int]:
    """The launches of :func:`_build`: the groups of small keys, the large keys, each key's
    scratch offset (and limbs, wilcox) and the scratch's words."""
    small = [i for i in range(len(tkeys)) if works[i] <= SMALL_WORK]
    large = [i for i in range(len(tkeys)) if works[i] > SMALL_WORK]
    # consecutive small parameters in groups of bounded work and scratch, each its own launch
    # with scratch offsets relative to the start of the (shared) scratch buffer; a group is a
    # run of consecutive keys (its launch builds keys g[0], g[0] + 1, ...), so a large key
    # between small ones ends one (wilcox's work grows with m * n, which the sorted keys do
    # not follow: (100, 10) and (101, 10) are small, (100, 200) between them large; a group
    # across it left the keys after it unbuilt and built the large one at scratch offset 0,
    # over the others' scratch)
    cap = max([sizes[i][1] for i in range(len(tkeys))] + [min(SMALL_GROUP_SCRATCH, limit)])
    soffs = np.zeros((len(tkeys), 2), dtype=np.int64)   # scratch offset, limbs (wilcox)
    groups: list[list[int]] = []
    gwork = gscr = 0
    for i in small:
        if (not groups or groups[-1][-1] != i - 1 or gwork + works[i] > SMALL_GROUP_WORK
                or gscr + sizes[i][1] > cap):
            groups.append([])
            gwork = gscr = 0
        groups[-1].append(i)
        soffs[i, 0] = gscr
        gwork += works[i]
        gscr += sizes[i][1]
    for i in range(len(tkeys)):
        if fam == "wilcox":
            soffs[i, 1] = limbs(*tkeys[i])
    scr_words = max([sum(sizes[i][1] for i in g) for g in groups]
                    + [sizes[i][1] for i in large] + [1])
    return groups, large, soffs, scr_words


def _build(bound: _device.BoundDevice, family: _Family, keys: np.ndarray,
           limit: int) -> _Tables:
    """The tables of ``keys``: small ones a work-group each (in launches of bounded work),
    large ones a launch per step over the whole device; one scratch buffer, reused."""
    import pyopencl as cl

    fam = family.name
    tkeys = [tuple(float(v) for v in k) for k in keys]
    sizes = [table_sizes(fam, k) for k in tkeys]
    works = [work(fam, k) for k in tkeys]
    offs = np.zeros(len(keys), dtype=np.int64)
    tab_total = 0
    for i, (t, _s) in enumerate(sizes):
        offs[i] = tab_total
        tab_total += t
    groups, large, soffs, scr_words = _plan_groups(fam, tkeys, sizes, works, limit)
    ctx, queue = bound.context, bound.queue
    mf = cl.mem_flags
    keys_c = np.ascontiguousarray(keys, dtype=np.float64).ravel()
    kbuf = _buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, keys_c.size, hostbuf=keys_c)
    obuf = _buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, offs.size, hostbuf=offs)
    sobuf = _buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, soffs.size, hostbuf=soffs)
    tbuf = _buffer(ctx, mf.READ_WRITE, tab_total)
    sbuf = _buffer(ctx, mf.READ_WRITE, scr_words)
    built = table_program()
    dev = bound.device
    wg_small = min(_WG, dev.max_work_group_size, built.kernel(f"count_tables_{fam}_small")[0]
                   .get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev))
    launch = _Launches(queue)
    try:
        for g in groups:
            launch(built, f"count_tables_{fam}_small",
                   (kbuf, obuf, tbuf, sbuf, sobuf, np.int32(g[0])), wg_small * len(g), wg_small,
                   sum(works[i] for i in g))
        for i in large:
            if fam == "wilcox":
                _build_wilcox(launch, built, tbuf, sbuf, int(offs[i]), tkeys[i])
            elif signrank_in_place(bound):
                _build_signrank_seq(launch, built, tbuf, sbuf, int(offs[i]), tkeys[i])
            else:
                _build_signrank(launch, built, tbuf, sbuf, int(offs[i]), tkeys[i])
        launch.check()
    finally:
        sbuf.release()
    return _Tables(tbuf, kbuf, obuf, len(keys), tab_total)


def table_program() -> Any:
    """The program that builds count tables on the bound device (built, or from the caches)."""
    return _program.build(get_library().kernel_program_source("count_tables"))


def _cum(launch: _Launches, built: Any, name: str, head: tuple[Any, ...], u: int) -> None:
    """The cumulative sums T(0..u) in pieces of CUM_PIECE terms, one work-item each."""
    for k0 in range(0, u + 1, CUM_PIECE):
        k1 = min(u + 1, k0 + CUM_PIECE)
        launch(built, name, (*head, np.int64(k0), np.int64(k1)), 1, None, 8 * (k1 - k0))


def _build_signrank(launch: _Launches, built: Any, tbuf: Any, sbuf: Any, off: int,
                    key: tuple[float, ...]) -> None:
    n = int(key[0])
    c = n * (n + 1) // 4
    o, nn = np.int64(off), np.int64(n)
    launch(built, "count_tables_signrank_init", (tbuf, o, sbuf, np.int64(c)), c + 1, _WG, c + 1)
    for j in range(2, n + 1):
        items = min(j * (j + 1) // 2, c) - j + 2
        if items > 0:
            launch(built, "count_tables_signrank_step", (tbuf, o, sbuf, nn, np.int64(j)),
                   items, _WG, items)
    _cum(launch, built, "count_tables_signrank_cum", (tbuf, o, nn), n * (n + 1) // 2)


def signrank_in_place(bound: _device.BoundDevice) -> bool:
    """Whether a large signed-rank table is built in place by one work-item (CPU devices:
    one table stays in the caches; as fast as R's loop, benchmarks/README.md) rather than a
    launch per step over the whole device (GPUs)."""
    return bound.info.type == "CPU"


def _build_signrank_seq(launch: _Launches, built: Any, tbuf: Any, sbuf: Any, off: int,
                        key: tuple[float, ...]) -> None:
    """A large signed-rank table on a CPU device: in place, one work-item, in launches of a
    run of steps each (about ``SEQ_WORK`` entries: Ctrl-C between them)."""
    n = int(key[0])
    c = n * (n + 1) // 4
    o, nn = np.int64(off), np.int64(n)
    launch(built, "count_tables_signrank_init", (tbuf, o, sbuf, np.int64(c)), c + 1, _WG, c + 1)
    j = 2
    while j <= n:
        j1, work = j, 0
        while j1 <= n and (work == 0 or work + min(j1 * (j1 + 1) // 2, c) <= SEQ_WORK):
            work += max(0, min(j1 * (j1 + 1) // 2, c) - j1 + 1)
            j1 += 1
        launch(built, "count_tables_signrank_seq", (tbuf, o, nn, np.int64(j), np.int64(j1)),
               1, None, work)
        j = j1
    _cum(launch, built, "count_tables_signrank_cum", (tbuf, o, nn), n * (n + 1) // 2)


def _build_wilcox(launch: _Launches, built: Any, tbuf: Any, sbuf: Any, off: int,
                  key: tuple[float, ...]) -> None:
    m, n = key
    a, b = int(min(m, n)), int(max(m, n))
    c, nl = a * b // 2, limbs(m, n)
    o, cc, nl32, bb = np.int64(off), np.int64(c), np.int32(nl), np.int64(b)
    launch(built, "count_tables_wilcox_init", (sbuf, np.int64((c + 1) * nl)), (c + 1) * nl,
           _WG, (c + 1) * nl)
    for i in range(1, a + 1):
        chains = min(i, i * b // 2 + 1)
        launch(built, "count_tables_wilcox_step", (sbuf, cc, nl32, np.int64(i), bb), chains,
               min(_WG, 64), (i * b // 2 + 1) * nl)
    launch(built, "count_tables_wilcox_convert", (tbuf, o, sbuf, cc, nl32, np.int64(a)), c + 1,
           _WG, (c + 1) * nl)
    _cum(launch, built, "count_tables_wilcox_cum",
         (tbuf, o, np.float64(m), np.float64(n)), a * b)


def _device_limit(bound: _device.BoundDevice) -> int:
    """8-byte words the device can hold in one buffer (within MAX_TOTAL)."""
    return min(MAX_TOTAL, int(bound.device.max_mem_alloc_size) // 8)


def tables_for(fname: str, family: str, params: list[Any]) -> _Tables:
    """The count tables of ``family`` (``"wilcox"``, ``"signrank"``) for the parameters of one
    call (scalars or arrays, one per parameter of the family), built or from the cache.

    Raises
    ------
    ValueError
        A parameter, or all of them together, beyond the limits (see the module's docstring).
    """
    fam = _FAMILIES[family]
    keys = _distinct(params)
    if keys.shape[0] == 0:   # no valid parameter: a one-entry table, never read
        keys = np.ones((1, fam.width))
    bound = _device.current()
    limit = _device_limit(bound)
    for k in keys:
        _check(fname, fam.name, tuple(float(v) for v in k), limit)
    total = sum(table_sizes(fam.name, tuple(float(v) for v in k))[0] for k in keys)
    if total > limit:
        raise ValueError(
            f"{fname}: the {keys.shape[0]} distinct parameter(s) of this call need "
            f"count tables of {total} doubles in all; the limit is {limit} "
            f"({limit * 8 >> 20} MiB): split the call"
        )
    ckey = (bound, fam.name, keys.tobytes())
    cached = _cache.get(ckey)
    if cached is not None:
        return cached
    tables = _build(bound, fam, keys, limit)
    _cache.put(ckey, tables)
    return tables
