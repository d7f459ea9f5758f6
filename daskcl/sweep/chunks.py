# SPDX-License-Identifier: GPL-2.0-or-later
"""A sweep's chunks in its store: their zarr chunks, checksums and done marks.

A chunk is written by :func:`write_chunk` (its zarr chunks, each by its own call, a large
chunk's encoded in parallel and its checksums computed meanwhile; on a local file system,
each zarr chunk's file as zarr writes it, without zarr's event loop: :class:`LocalChunks`),
then recorded done with its checksums in the store's journal (:mod:`~daskcl.sweep.journal`);
a writer killed before leaves the chunk unrecorded, and it is written again.  A recorded chunk
counts as done only if it still matches its checksums (:func:`chunk_matches`).  Chunk writes
change no metadata, so the consolidated metadata stays true while a sweep runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import itertools
import logging
import os
import sys
import threading
import uuid
import zlib
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SweepError
from .journal import Book, Journal

if TYPE_CHECKING:
    from .spec import Sweep

__all__ = [
    "BOOK",
    "BOOKKEEPING",
    "CHECKSUM",
    "CRC32",
    "CRC32C",
    "DISK_FULL",
    "DONE",
    "INLINE_BYTES",
    "OLD_CHECKSUM",
    "OLD_DONE",
    "STORE_READ_ERRORS",
    "Arrays",
    "LocalChunks",
    "algorithm",
    "checksum",
    "checksum_array",
    "chunk_matches",
    "done_array",
    "done_ndim",
    "inline",
    "keep_freed_buffers",
    "local_chunks",
    "new_algorithm",
    "read_book",
    "write_book",
    "write_chunk",
    "write_error",
]

#: what reading a store raises where a chunk, mark or attribute cannot be read: the file system
#: and fsspec (OSError, zarr's not-found errors among them), zarr's metadata and codec checks
#: (ValueError), a missing key or index (LookupError), the zstd and blosc codecs' decompression
#: errors (RuntimeError)
STORE_READ_ERRORS: tuple[type[Exception], ...] = (OSError, ValueError, LookupError, RuntimeError)

_log = logging.getLogger("daskcl.sweep")

#: the errno values of a full disk or quota
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)

#: the sub-group of the bookkeeping arrays, and their paths in it
BOOK = "_daskcl"
DONE = f"{BOOK}/done"
CHECKSUM = f"{BOOK}/checksum"
#: where a ``daskcl-sweep/1`` store keeps them
OLD_DONE = "_done"
OLD_CHECKSUM = "_checksum"
BOOKKEEPING = (BOOK, OLD_DONE, OLD_CHECKSUM)


def _book(group: Any, path: str, old: str) -> Any:
    """The bookkeeping array at ``path`` (``_daskcl/...``), or at ``old`` in a
    ``daskcl-sweep/1`` store."""
    try:
        return group[path]
    except KeyError:
        return group[old]


class Arrays:
    """A zarr group whose arrays are each opened once (``group[name]`` costs a fraction of a
    millisecond of Python each time), with their chunk writers (:meth:`writer`); anything else
    goes to the group."""

    def __init__(self, group: Any) -> None:
        self._group = group
        self._arrays: dict[str, Any] = {}
        self._writers: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        arr = self._arrays.get(name)
        if arr is None:
            arr = self._arrays.setdefault(name, self._group[name])   # KeyError as the group's
        return arr

    def writer(self, name: str) -> Any:
        """What writes the array ``name``'s chunks: a :class:`LocalChunks` where it can
        (:func:`local_chunks`), else the array, written with zarr's ``write_empty_chunks``."""
        w = self._writers.get(name)
        if w is None:
            w = self._writers.setdefault(name, _writer(self[name]))
        return w

    def __contains__(self, name: str) -> bool:
        return name in self._group

    def __getattr__(self, name: str) -> Any:
        return getattr(self._group, name)


def done_array(group: Any) -> Any:
    return _book(group, DONE, OLD_DONE)


def checksum_array(group: Any) -> Any:
    return _book(group, CHECKSUM, OLD_CHECKSUM)


def read_book(group: Any, journal: Journal | None = None) -> Book:
    """The chunks' done marks and checksums: the bookkeeping arrays, with the records of
    ``journal`` not folded into them yet; a mark or checksum that cannot be read counts as not
    done."""
    done_arr, sums_arr = done_array(group), checksum_array(group)
    algo = algorithm(sums_arr)
    grid, nout = tuple(done_arr.shape), int(sums_arr.shape[-1])
    done = _read_whole(done_arr, grid, np.uint8) == 1
    sums = _read_whole(sums_arr, (*grid, nout), np.uint32)
    book = Book(np.ascontiguousarray(done), np.ascontiguousarray(sums), algo)
    if journal is not None:
        journal.apply(book, nout)
    return book


def _read_whole(arr: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A bookkeeping array's values; where they cannot be read at once, each chunk of it that
    can (the others zero)."""
    try:
        return np.asarray(arr[...], dtype=dtype)
    except STORE_READ_ERRORS as exc:
        _log.info("daskcl: %s cannot be read at once (%s); reading it chunk by chunk",
                  arr.path, exc)
    out = np.zeros(shape, dtype=dtype)
    if tuple(arr.chunks) == tuple(arr.shape):
        return out
    for idx in np.ndindex(*shape[:done_ndim(arr)]):
        try:
            out[idx] = arr[idx]
        except STORE_READ_ERRORS as exc:
            _log.info("daskcl: %s of chunk %s cannot be read (%s): not done", arr.path, idx, exc)
    return out


def done_ndim(arr: Any) -> int:
    """The dimensions of the grid of chunks in a bookkeeping array (the checksums' last one
    is the outputs')."""
    return len(arr.shape) - (1 if arr.path.endswith("checksum") else 0)


def write_book(group: Any, book: Book, changed: np.ndarray) -> None:
    """Write the marks and checksums of the chunks ``changed`` (bool, on the grid) into the
    bookkeeping arrays: each array whole where it is one zarr chunk (a store of this format),
    else only the chunks changed."""
    for arr, values in ((checksum_array(group), book.sums),
                        (done_array(group), book.done.astype(np.uint8))):
        if tuple(arr.chunks) == tuple(arr.shape):
            arr[...] = values
            continue
        where = np.nonzero(np.broadcast_to(changed.reshape(changed.shape + (1,) * (
            values.ndim - changed.ndim)), values.shape))
        if where[0].size:     # every element of the chunks changed, in one call
            arr.vindex[where] = values[where]


#: the checksum algorithms of the ``algorithm`` attribute of ``_daskcl/checksum``: zlib's CRC-32
#: (the polynomial of ISO 3309), and CRC-32C (Castagnoli's polynomial, RFC 3720)
CRC32 = "crc32"
CRC32C = "crc32c"


@functools.cache
def _crc32c_native() -> Any:
    """``crc32c_value(data, n)`` of Google's CRC-32C library (a dependency of zarr, SSE 4.2 or
    ARMv8 CRC instructions), called through ctypes, which releases the interpreter's lock (its
    Python binding releases it only for ``bytes``, so a chunk's checksum held every other
    thread of a worker); ``None`` where the library is not found (its symbols resolve through
    the binding's extension module)."""
    try:
        from google_crc32c import _crc32c

        fn = ctypes.CDLL(_crc32c.__file__).crc32c_value
    except (ImportError, OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_size_t], ctypes.c_uint32
    return fn


def new_algorithm() -> str:
    """The checksum algorithm of a store created now: CRC-32C where its library is here (a few
    times faster than zlib's CRC-32), else CRC-32."""
    return CRC32C if _crc32c_native() is not None else CRC32


def algorithm(checksums: Any) -> str:
    """The algorithm of a store's checksum array: its ``algorithm`` attribute, CRC-32 where it
    has none (stores of ``daskcl-sweep/1`` and ``/2``)."""
    algo = checksums.attrs.get("algorithm", CRC32)
    if algo not in (CRC32, CRC32C):
        raise ValueError(f"unknown checksum algorithm {algo!r}")
    return str(algo)


def checksum(values: np.ndarray, algo: str = CRC32C) -> int:
    """The checksum (``algo``: ``"crc32c"`` or ``"crc32"``) of an array's float64 values in C
    order, every NaN counted as the same NaN (zarr stores a chunk of NaNs as its fill value,
    whose bits may differ from the NaN written)."""
    a = np.ascontiguousarray(values, dtype="<f8")
    if a.size and np.isnan(np.max(a)):      # max is NaN where any value is: one cheap pass
        a = np.where(np.isnan(a), np.nan, a)
    if algo == CRC32:
        return zlib.crc32(a.data)                    # releases the lock beyond 5 kB
    native = _crc32c_native()
    if native is not None:
        return int(native(a.ctypes.data, a.nbytes))
    import google_crc32c  # its own binding, or its Python fallback

    return int(google_crc32c.value(a.reshape(-1).view(np.uint8)))


def chunk_matches(group: Any, outputs: Iterable[str], sl: tuple[slice, ...],
                  sums: Iterable[int], algo: str) -> bool:
    """Whether the arrays ``outputs`` at ``sl`` (one chunk) still hold the values whose
    checksums are ``sums`` (a chunk that cannot be read does not match)."""
    try:
        for name, want in zip(outputs, sums):
            arr = group[name]
            if checksum(arr[sl + (slice(None),) * (arr.ndim - len(sl))], algo) != int(want):
                return False
        return True
    except STORE_READ_ERRORS as exc:
        _log.info("daskcl: a chunk at %s cannot be read (%s): it is computed again", sl, exc)
        return False


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """This process's threads that compress and write zarr chunks and compute checksums (Blosc
    and both CRCs release the GIL), made once: half the cores, at most 8, so that the worker's
    other threads (launching the next chunk, staging its inputs) keep cores of their own
    (``bench_sweep.py`` measures the choice)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            keep_freed_buffers()
            _POOL = ThreadPoolExecutor(max_workers=max(2, min(8, (os.cpu_count() or 2) // 2)),
                                       thread_name_prefix="daskcl-store")
        return _POOL


#: glibc's ``mallopt`` parameters, and the values :func:`keep_freed_buffers` gives them: those
#: glibc's own dynamic thresholds reach on 64-bit Linux (allocations up to 32 MiB from the heap,
#: freed memory kept up to twice that)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = 64 << 20


@functools.cache
def keep_freed_buffers() -> bool:
    """In a process started with ``MALLOC_TRIM_THRESHOLD_`` (dask's nanny sets 65536 in every
    worker it spawns, ``distributed.nanny.pre-spawn-environ``), let glibc keep the buffers that
    compressing and writing zarr chunks free, as it does in a process started without it; once
    per process, on the first store write.  Returns whether the thresholds were set.

    That variable turns off glibc's dynamic thresholds: every buffer of 128 KiB or more is then
    mapped from the kernel and unmapped when freed, so each zarr chunk's encoded bytes (MiBs)
    page-faulted in and were unmapped again, with a TLB shootdown across the writer threads,
    and a store absorbed markedly less (``bench_sweep.py``).  The thresholds set are glibc's
    dynamic ones at their largest: allocations up to 32 MiB from the heap, freed memory up to
    64 MiB kept at the top of a heap.  Not glibc, or no such variable: nothing is done."""
    if not sys.platform.startswith("linux") or "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt   # glibc; musl has none
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


def _writable(arr: Any) -> Any:
    """``arr`` writing every chunk it is given: zarr otherwise compares each chunk with the
    fill value first, a pass over the values on its one event-loop thread."""
    with_config = getattr(arr, "with_config", None)
    return arr if with_config is None else with_config({"write_empty_chunks": True})


def _writer(arr: Any) -> Any:
    return local_chunks(arr) or _writable(arr)


class LocalChunks:
    """Whole zarr chunks of a zarr v3 array in a local store, encoded by the array's own
    codecs and written as zarr writes them (to a temporary file renamed over the chunk's),
    without zarr's event loop: its asynchronous machinery cost more than a small chunk's
    encoding and write (``bench_chunk_cost.py``).  Any other write (a partial chunk at the
    array's edge, another data type) goes to the array, ``array``."""

    def __init__(self, arr: Any) -> None:
        from zarr.core.buffer import default_buffer_prototype
        from zarr.core.codec_pipeline import codecs_from_list

        meta = arr.metadata
        self.array = _writable(arr)
        aa, ab, bb = codecs_from_list(meta.codecs)
        self._codecs: list[Any] = [*aa, ab, *bb]    # in the order zarr's pipeline applies them
        self._proto: Any = default_buffer_prototype()
        self._spec: Any = meta.get_chunk_spec((0,) * len(meta.shape), arr.config, self._proto)
        self._chunks = tuple(int(c) for c in meta.chunk_grid.chunk_shape)
        self._dtype = np.dtype(self._spec.dtype.to_native_dtype())
        self._key = meta.encode_chunk_key
        self._root = os.path.join(str(arr.store_path.store.root), *arr.store_path.path.split("/"))
        self._dirs: set[str] = set()

    def __setitem__(self, where: tuple[slice, ...], values: np.ndarray) -> None:
        chunks = self._chunks
        if (values.dtype != self._dtype or values.shape != chunks or
                any(s.start % c for s, c in zip(where, chunks))):
            self.array[where] = values
            return
        data = self._encode(values)
        if data is None:
            self.array[where] = values
            return
        key = self._key(tuple(s.start // c for s, c in zip(where, chunks)))
        path = os.path.join(self._root, *key.split("/"))
        folder = os.path.dirname(path)
        if folder not in self._dirs:
            os.makedirs(folder, exist_ok=True)
            self._dirs.add(folder)
        try:
            _put_file(path, data.as_buffer_like())
        except FileNotFoundError:   # its directory was removed since: made again, as zarr does
            os.makedirs(folder, exist_ok=True)
            _put_file(path, data.as_buffer_like())

    def _encode(self, values: np.ndarray) -> Any:
        """The chunk's bytes as zarr's codec pipeline makes them (``None`` where a codec
        declines)."""
        spec, data = self._spec, self._proto.nd_buffer.from_ndarray_like(values)
        for codec in self._codecs:
            data = codec._encode_sync(data, spec)
            if data is None:
                return None
            spec = codec.resolve_metadata(spec)
        return data


def _put_file(path: str, data: Any) -> None:
    """``data`` as the file ``path``, as zarr's local store writes a chunk: to a temporary file
    beside it, renamed over it."""
    tmp = f"{path}.{uuid.uuid4().hex}.partial"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        try:
            view = memoryview(data).cast("B")
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def local_chunks(arr: Any) -> LocalChunks | None:
    """A :class:`LocalChunks` of ``arr``, or ``None`` where zarr's own write is needed: a
    store not on the local file system, a grid that is not regular, a codec (sharding) that
    cannot encode a chunk by itself, or a zarr whose insides differ from those known here."""
    try:
        from zarr.abc.codec import SupportsSyncCodec
        from zarr.core.chunk_grids import RegularChunkGrid
        from zarr.storage import LocalStore

        meta = arr.metadata
        if (meta.zarr_format != 3 or not isinstance(arr.store_path.store, LocalStore)
                or not isinstance(meta.chunk_grid, RegularChunkGrid)
                or not all(isinstance(c, SupportsSyncCodec) for c in meta.codecs)):
            return None
        return LocalChunks(arr)
    except Exception as exc:      # zarr's private parts moved: its own write still works
        _log.debug("daskcl: %s is written through zarr: %s", getattr(arr, "path", arr), exc)
        return None


#: a chunk of fewer bytes (its outputs together) is written in the calling thread: handing its
#: pieces and checksums to the writer threads costs more than they overlap
INLINE_BYTES = 1 << 18


def inline(nbytes: int) -> bool:
    """Whether a chunk of ``nbytes`` (its outputs together) is written in the calling thread
    (:data:`INLINE_BYTES`)."""
    return nbytes < INLINE_BYTES


def write_chunk(group: Any, sweep: Sweep, index: tuple[int, ...],
                results: Mapping[str, np.ndarray], algo: str) -> list[int]:
    """Write one chunk's result arrays; returns their checksums (``algo``), for the chunk's
    record, which is written only once every piece is.

    Each zarr chunk of the task's chunk (or its one shard) is written by its own call, each
    from the computed array as it is (no copy), through the group's writer of its array
    (:meth:`Arrays.writer`).  A chunk of :data:`INLINE_BYTES` or more is written on this
    process's writer threads, its pieces encoded in parallel and its checksums computed
    meanwhile; a smaller one here."""
    sl = sweep.chunk_slices(index)
    names = list(sweep.output_names)
    writer = getattr(group, "writer", None)
    pieces = []
    for name, values in results.items():
        arr = group[name]
        target = writer(name) if writer is not None else _writable(arr)
        pieces += [(target, where, values[local])
                   for where, local in _pieces(arr, sl, values.shape)]
    if inline(sum(v.nbytes for v in results.values())):
        for piece in pieces:
            _put(*piece)
        return [checksum(results[n], algo) for n in names]
    pool = _pool()
    sums = pool.submit(lambda: [checksum(results[n], algo) for n in names])
    puts: list[Future[None]] = []
    try:
        puts += [pool.submit(_put, *piece) for piece in pieces]
        for put in puts:
            put.result()
        return sums.result()
    finally:  # after a failure: nothing more starts, and what began has ended
        jobs: list[Future[Any]] = [sums, *puts]
        for job in jobs:
            job.cancel()
        wait(jobs)


def _pieces(target: Any, sl: tuple[slice, ...], shape: tuple[int, ...]
            ) -> list[tuple[tuple[slice, ...], tuple[slice, ...]]]:
    """The zarr chunks (or the one shard) of ``target`` that a task's chunk at ``sl`` (values
    of ``shape``; trailing axes beyond ``sl`` whole) covers: (where in ``target``, which
    values) for each.  A task's chunk starts on a zarr chunk of its array (the spec's zarr
    chunks divide its chunks); one that did not would be written whole, by one call."""
    step = target.shards or target.chunks
    origin = [s.start for s in sl] + [0] * (len(shape) - len(sl))
    if any(o % c for o, c in zip(origin, step)):
        return [(tuple(slice(o, o + n) for o, n in zip(origin, shape)),
                 tuple(slice(0, n) for n in shape))]
    axes = [[slice(a, min(a + c, n)) for a in range(0, n, c)] for n, c in zip(shape, step)]
    return [(tuple(slice(o + p.start, o + p.stop) for o, p in zip(origin, local)), local)
            for local in itertools.product(*axes)]


def _put(target: Any, where: tuple[slice, ...], values: np.ndarray) -> None:
    target[where] = values


def write_error(url: str, exc: BaseException) -> SweepError:
    """The one-line error of a store that cannot be written (a full disk said as such)."""
    if isinstance(exc, OSError) and exc.errno in DISK_FULL:
        return SweepError(f"disk full writing {url}; free space and run again with --resume")
    return SweepError(f"cannot write the store {url}: {exc}; choose a writable --out")
