# SPDX-License-Identifier: GPL-2.0-or-later
"""Running a :class:`daskcl.sweep.Sweep` into its store: :func:`run`, one task per chunk.

The store is prepared (and proven writable) before anything is computed
(:meth:`daskcl.sweep.store.Store.open`); for a local cluster (``client=None``) what the store
would refuse is said before the cluster starts, and the store is made once it has started, so
that a cluster that fails to start leaves no store behind.  Each chunk is one task that
computes its arrays on the worker's device and writes them with
:meth:`daskcl.sweep.store.Store.write_chunk` (its zarr chunks, then its record: mark and
checksums); a task whose chunk is marked reads it back and skips it only if it still matches its checksums.  The
sweep travels to the workers once, and at most a few tasks per worker thread are submitted at a
time, so the client's memory does not grow with the number of chunks.

The next chunk computes while the last one is written: a task leaves its worker's thread pool
(``distributed.secede``) once its arrays are off the device, so the worker starts the next
task's kernel while this one compresses and writes, however many threads the worker has
(unless the write is quicker than leaving); one chunk at a time computes on a process's
device.  The task's result, which the client counts as the chunk done, comes only once its
mark is written.  A sweep computed in this process
(``client="sync"``) writes each chunk on a writer thread while the next computes.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import math
import os
import signal
import sys
import threading
import time
import uuid
import warnings
import weakref
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from ..errors import (
    TERMINATED,
    ConfigError,
    DeviceError,
    LibraryError,
    Terminated,
    collect_r_warnings,
)
from . import inputs
from .evaluate import evaluate_chunk
from .journal import Book
from .lease import Lease, acquire
from .spec import Sweep, SweepError, current_settings, listing
from .store import DISK_FULL, Store, local_url, read_info, write_error

__all__ = ["Progress", "SweepResult", "chunk_task", "run"]

_log = logging.getLogger("daskcl.sweep")

#: tasks in flight per worker thread (at least 8 in all): enough to keep every thread busy
#: between results, and the chunks a worker writes while the next one computes (a task that
#: leaves its thread to write holds its chunk meanwhile)
_WINDOW_PER_THREAD = 4
#: the same where the chunks are written quickly, each in its task's thread
#: (:meth:`~daskcl.sweep.store.Store.quick`): no chunk waits to be written, and the next tasks
#: are already on their way when one ends (with 4, a worker of one thread waited for them)
_QUICK_WINDOW_PER_THREAD = 16
#: one chunk computes on a process's device at a time
_EVAL_LOCK = threading.Lock()
#: threads of a sweep's local workers.  A task leaves its thread once computed, so one keeps
#: the device computing while chunks are written (as on the clusters of deploy/, ``--nthreads
#: 1``); with two, the next task is already on the worker, waiting for the device, when a
#: chunk's kernel ends (with one, the scheduler sends it only once the task has left)
_SWEEP_THREADS = 2
#: chunks written at once by a sweep in this process (``client="sync"``) while the next computes
_SYNC_WRITES = 2


@dataclass
class SweepResult:
    """What :func:`run` did: the store, chunks computed and skipped, time, devices."""

    store: str
    computed: int
    skipped: int
    seconds: float
    devices: list[str]
    group: Any = field(repr=False)

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """Every result array, read into memory."""
        info = read_info(self.group) or {}
        return {name: self.group[name][...] for name in info.get("outputs") or ()}


#: the bound device and its label, made once (:func:`_device_label`)
_LABEL: tuple[Any, str] | None = None


def _device_label() -> str:
    """The bound device as the run's record names it, made once per binding."""
    global _LABEL
    from ..distributed.plugin import describe
    from ..runtime import device as _device

    bound, made = _device.current(), _LABEL
    if made is not None and made[0] is bound:
        return made[1]
    d = describe()
    pci = f" pci {d['pci']}" if "pci" in d else ""
    label = f"{d['host']}: {d['platform']} / {d['name']} (driver {d['driver']}){pci}"
    _LABEL = (bound, label)
    return label


def chunk_task(sweep: Sweep, url: str, options: dict[str, Any] | None,
               index: tuple[int, ...], fresh: bool = False) -> dict[str, Any]:
    """Compute and write one chunk (runs on a dask worker); a chunk already marked done is
    read back and skipped if it matches its checksums.  ``fresh``: the run created the store,
    so no chunk was marked before it (the marks are not read).

    The task holds its worker's thread only while it computes: reading a marked chunk back and
    writing a computed one happen after ``distributed.secede``, so the worker's next task
    computes meanwhile; a quick write (:meth:`~daskcl.sweep.store.Store.quick`) keeps the
    thread, as leaving costs more (a thread, a message to the scheduler).  It returns once the
    chunk is recorded done (or it was skipped)."""
    store, book = _open_here(sweep, url, options, fresh)
    marked = book is not None and bool(book.done[index])
    if marked:
        _leave_thread_pool()  # reading back is no device work
        assert book is not None
        if store.matches(sweep, index, book):
            return {"index": index, "skipped": True}
    results, report = _compute(sweep, index)
    if not marked and not store.quick(sum(v.nbytes for v in results.values())):
        _leave_thread_pool()
    return _write(store, sweep, index, results, report, marked)


#: the store and its chunks' marks per sweep object and store, opened once in a process (see
#: _open_here)
_STORES: weakref.WeakKeyDictionary[
    Sweep, dict[tuple[str, str], Future[tuple[Store, Book | None]]]] = \
    weakref.WeakKeyDictionary()
_STORES_LOCK = threading.Lock()


def _store_key(url: str, options: dict[str, Any] | None) -> tuple[str, str]:
    return url, repr(sorted(options.items())) if options else ""


def _open_here(sweep: Sweep, url: str, options: dict[str, Any] | None, fresh: bool = False
               ) -> tuple[Store, Book | None]:
    """The store at ``url`` as this process writes it (its group and journal opened once) and
    its chunks' marks and checksums as they were when this process first asked (``None``,
    without reading them, where the run is ``fresh``: it created the store), once per process
    for each sweep object.

    Every chunk task of a run names the same sweep object (the run's payload, held by the
    worker), so its tasks share one open store, one journal file and one reading of the marks.
    A chunk's mark matters only if it was set before its task ran: by an earlier run (the
    chunk is then checked against its checksums and skipped), or by an attempt of the same
    task on a worker that died after writing it (computed and written again, the same values,
    if the marks were read before).  The sweep object dies with its run (a new run sends its
    own), and with it the entry; :func:`_forget_store` drops it where a run reuses the object
    in this process.  The first task to ask opens and reads; a task asking meanwhile (the
    worker's other thread) waits for that, and if it fails, both fail (dask retries them)."""
    key = _store_key(url, options)
    with _STORES_LOCK:
        entries = _STORES.setdefault(sweep, {})
        entry = entries.get(key)
        mine = entry is None
        if entry is None:
            entry = entries[key] = Future()
    if mine:
        try:
            store = Store(url, options).writer()
            entry.set_result((store, None if fresh else store.read_book()))
        except BaseException as exc:
            with _STORES_LOCK:
                if entries.get(key) is entry:
                    del entries[key]
            entry.set_exception(exc)
            raise
    return entry.result()


def _forget_store(sweep: Sweep, url: str, options: dict[str, Any] | None) -> None:
    """Drop this process's open store of ``sweep`` at ``url`` (a run starting: its store may
    have been created again since)."""
    with _STORES_LOCK:
        _STORES.get(sweep, {}).pop(_store_key(url, options), None)


def _leave_thread_pool() -> None:
    """``distributed.secede()`` where this runs as the task of a running dask worker: the
    worker may start its next task in a new thread while this one goes on (compressing,
    writing) outside its thread pool.  A closing worker is left alone: its executor, shutting
    down, holds the lock that ``secede`` takes while it waits for this very thread."""
    from distributed import get_worker, secede
    from distributed.core import Status

    try:
        worker = get_worker()
    except ValueError:  # not a worker's task
        return
    if worker.status in (Status.running, Status.paused):
        secede()


def _compute(sweep: Sweep, index: tuple[int, ...]) -> tuple[dict[str, np.ndarray],
                                                            dict[str, Any]]:
    """One chunk's arrays, computed on this process's device (one chunk at a time), and what
    the task reports of it: the time it held the device, R's warnings, the device, and the
    files a Python function read (with their hashes)."""
    python = sweep.func is not None and sweep.func.kind == "python"
    here = {**current_settings(), **sweep.overrides}
    if here != sweep.settings:      # a worker started with other settings than the run's
        raise SweepError(f"this process computes with {here}, the sweep with "
                         f"{sweep.settings}: start the workers with the same DASKCL_* settings "
                         "as the run")
    recording: contextlib.AbstractContextManager[set[str]] = (
        inputs.recording() if python else contextlib.nullcontext(set()))
    with _EVAL_LOCK, collect_r_warnings() as caught, recording as seen:
        t0 = time.perf_counter()
        results = evaluate_chunk(sweep, index)
        t1 = time.perf_counter()
    read: dict[str, str] = {}
    if python:
        assert sweep.func is not None
        for path in sorted(seen | sweep.func.loaded_inputs()):
            if (sha := inputs.digest(path)) is not None:
                read[path] = sha
    report: dict[str, Any] = {"compute_s": t1 - t0, "device": _device_label(), "inputs": read}
    if caught:
        report["warnings"] = caught
    return results, report


def _write(store: Store, sweep: Sweep, index: tuple[int, ...],
           results: dict[str, np.ndarray], report: dict[str, Any], marked: bool
           ) -> dict[str, Any]:
    """Write one computed chunk (the files it read, values, its record): the task's result."""
    t0 = time.perf_counter()
    try:
        inputs.save(store.group, report.pop("inputs", {}))
        store.write_chunk(sweep, index, results)
    except OSError as exc:
        if exc.errno in DISK_FULL:  # the client says so in one line; no retry helps
            return {"index": index, "skipped": False, "disk_full": str(exc)}
        raise
    seconds = time.perf_counter() - t0
    out = {"index": index, "skipped": False, **report, "write_s": seconds}
    if marked:
        out["repaired"] = True
    return out


class Progress:
    """Chunks done, rate and time left, on one line (a terminal) or every 10% (a log).

    The rate is measured from the first chunk finished, not from the start: building programs
    and starting workers take time that the remaining chunks do not, so no rate or time left
    is shown until a second chunk has finished."""

    def __init__(self, total: int, points_per_chunk: int, stream: TextIO | None = None) -> None:
        self.total, self.ppc = total, points_per_chunk
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self.first: tuple[float, int] | None = None  # when the first chunks finished, how many
        self.done = 0
        self.last_decile = -1
        self.width = 0

    def rate(self, now: float) -> float | None:
        """Chunks per second since the first chunk finished; None before a second one has."""
        if self.first is None:
            return None
        t1, n1 = self.first
        elapsed = now - t1
        return (self.done - n1) / elapsed if self.done > n1 and elapsed > 0 else None

    def update(self, n: int = 1) -> None:
        now = time.perf_counter()
        self.done += n
        if self.first is None:
            self.first = (now, self.done)
        rate = self.rate(now)
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        if rate is None:
            speed = "? chunks/s  ? points/s  ? left"
        else:
            left = (self.total - self.done) / rate if rate > 0 else float("inf")
            speed = f"{rate:.2f} chunks/s  {rate * self.ppc:.3g} points/s  {_eta(left)} left"
        line = f"[{bar}] {self.done}/{self.total} chunks  {speed}"
        if self.tty:  # padded over a longer line before it
            self.width, line = max(self.width, len(line)), line.ljust(self.width)
            self.stream.write("\r" + line + ("\n" if self.done == self.total else ""))
        elif int(10 * frac) != self.last_decile or self.done == self.total:
            self.last_decile = int(10 * frac)
            self.stream.write(line + "\n")
        self.stream.flush()


def _eta(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


class _Tally:
    """What the finished chunk tasks reported: counts, devices, R's warnings, the seconds
    spent computing and writing; a task that found the disk full ends the sweep with one
    line."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.computed = 0
        self.compute_s = 0.0
        self.write_s = 0.0
        self.repaired: list[tuple[int, ...]] = []
        self.devices: set[str] = set()
        self.warnings: dict[str, int] = {}
        self.warned = 0

    def add(self, r: dict[str, Any]) -> None:
        if "disk_full" in r:
            raise write_error(self.url, OSError(errno.ENOSPC, r["disk_full"]))
        self.computed += not r["skipped"]
        self.compute_s += float(r.get("compute_s", 0.0))
        self.write_s += float(r.get("write_s", 0.0))
        if r.get("repaired"):
            self.repaired.append(tuple(r["index"]))
        if "device" in r:
            self.devices.add(r["device"])
        msgs = r.get("warnings") or []
        self.warned += bool(msgs)
        for m in set(msgs):
            self.warnings[m] = self.warnings.get(m, 0) + 1

    def summary(self) -> list[tuple[str, int]]:
        return sorted(self.warnings.items(), key=lambda kv: -kv[1])[:5]


def run(sweep: Sweep, out: str | os.PathLike[str], client: Any = None, *, resume: bool = False,
        overwrite: bool = False, progress: bool = False, workers: int | str | None = None,
        storage_options: dict[str, Any] | None = None, listen: str | None = None
        ) -> SweepResult:
    """Compute every chunk of ``sweep`` not yet in the store at ``out`` and write it there.

    Parameters
    ----------
    sweep : Sweep
        The spec (:meth:`Sweep.from_toml`, :meth:`Sweep.from_dict`).
    out : str or path
        The store: a directory or an fsspec URL (``s3://...``).
    client : distributed.Client, "sync" or None
        Who computes: the client's workers, this process chunk by chunk (``"sync"``), or a
        :func:`daskcl.cluster.local_cluster` of ``workers`` workers, started and closed here
        (``None``: what the store would refuse is refused before it starts, and the store is
        made once it has, so that a cluster that does not start leaves no store; a script
        calls ``run`` under ``if __name__ == "__main__":``, as the workers re-import it).
    resume : bool
        Continue an existing store: chunks not marked done, or whose data no longer match their
        checksums, are computed; a store of a different sweep is refused, naming what differs.
    overwrite : bool
        Start again: only a store that daskcl wrote, holding nothing else, is replaced.
    progress : bool
        Show chunks done, rate and time left on stderr.
    workers : int or str, optional
        The local cluster's workers (``client=None`` only).
    storage_options : dict, optional
        fsspec options of the store.
    listen : str, optional
        The address the local cluster listens on (loopback unless given; anyone who reaches it
        runs code as you).

    Returns
    -------
    SweepResult

    Raises
    ------
    SweepError
        An existing store without ``resume`` or ``overwrite``, a store of another sweep or not
        daskcl's, a store that cannot be written, a chunk that failed (finished chunks are kept:
        run again with ``resume``).

    Examples
    --------
    >>> from daskcl.sweep import Sweep, run
    >>> s = Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"values": [0.0]}}})
    >>> run(s, "/tmp/pnorm.zarr", client="sync", overwrite=True).arrays["pnorm"]  # doctest: +SKIP
    array([0.5])
    """
    try:
        return _start(sweep, out, client, resume, overwrite, progress, workers,
                      storage_options, listen)
    except (ConfigError, DeviceError, LibraryError) as exc:
        # a setting, device or library that cannot be used: raised here, with its message only
        raise exc.with_traceback(None) from None


def _start(sweep: Sweep, out: str | os.PathLike[str], client: Any, resume: bool,
           overwrite: bool, progress: bool, workers: int | str | None,
           storage_options: dict[str, Any] | None, listen: str | None) -> SweepResult:
    """:func:`run`'s work: who computes is made ready, then the store."""
    if not isinstance(sweep, Sweep):
        raise TypeError(f"run: sweep must be a daskcl.sweep.Sweep, got {type(sweep).__name__}")
    url = local_url(str(out))
    t0 = time.perf_counter()
    sync = isinstance(client, str)
    if sync and client != "sync":
        raise SweepError(f"client must be a distributed.Client, 'sync' or None, got {client!r}")
    if listen is not None and client is not None:
        raise SweepError("listen is for the local cluster only: a cluster you bring (or 'sync') "
                         "listens where it was started")
    if sync:    # what a local cluster refuses as its workers start, refused here too, before
        # the store is made: a config value, a worker.warm name, a device that matches none
        from ..distributed.slots import check_worker_config
        from ..runtime import device as _device

        check_worker_config(())
        _device.current()
    if client is None:
        from distributed import Client

        from ..distributed.local import local_cluster
        from ..distributed.slots import device_slots

        device_slots(workers)   # the workers asked for exist
        # What the store would refuse is said before the cluster starts (nothing is written);
        # the store is made only once the cluster is up: a cluster that does not start (a
        # worker.warm name that is no function, a device without fp64) leaves nothing behind.
        with warnings.catch_warnings():     # what it warns of is said once, as it opens
            warnings.simplefilter("ignore")
            Store(url, storage_options).check(sweep, resume=resume, overwrite=overwrite)
        # _run_client warms every worker's programs, on this cluster as on any other.
        host = {} if listen is None else {"host": listen}
        with local_cluster(workers, threads_per_worker=_SWEEP_THREADS,
                           silence_logs=logging.WARNING, **host) as cluster, Client(cluster) as c:
            return _open_and_run(sweep, url, c, resume, overwrite, t0, progress,
                                 storage_options)
    return _open_and_run(sweep, url, client, resume, overwrite, t0, progress, storage_options)


def _open_and_run(sweep: Sweep, url: str, client: Any, resume: bool, overwrite: bool, t0: float,
                  progress: bool, storage_options: dict[str, Any] | None) -> SweepResult:
    """Open (or create) the store, then compute the sweep into it: the store is made only
    once whoever computes is there."""
    store = Store(url, storage_options)
    # what the store would refuse is said before the lease is written into it (what it
    # warns of is said once, by Store.open)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store.check(sweep, resume=resume, overwrite=overwrite)
    held = acquire(url, storage_options)
    try:
        sweep, book = store.open(sweep, resume=resume, overwrite=overwrite)
        return _run(sweep, store, client, book, t0, progress, held)
    finally:
        held.release()


#: set by the Ctrl-C handler of a run in the main thread (:func:`_noticing_ctrl_c`)
_INTERRUPTED = threading.Event()


@contextlib.contextmanager
def _noticing_ctrl_c() -> Iterator[None]:
    """Ctrl-C stops the run even where its ``KeyboardInterrupt`` is lost: Python swallows an
    exception raised while a finalizer runs (a ``distributed`` future's ``__del__``, when the
    client drops a finished chunk's future), and the sweep then ran to its end.  The handler
    also sets :data:`_INTERRUPTED`, which the run checks as each chunk finishes
    (:func:`_stop_if_interrupted`).  Only in the main thread, and only where Python's own
    handler is in place (a user's handler is left alone)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        _INTERRUPTED.set()
        raise KeyboardInterrupt

    _INTERRUPTED.clear()
    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _INTERRUPTED.clear()


def _stop_if_interrupted() -> None:
    """Raise the ``KeyboardInterrupt`` of a Ctrl-C that was lost (:func:`_noticing_ctrl_c`),
    or the :class:`~daskcl.errors.Terminated` of a SIGTERM
    (:data:`daskcl.errors.TERMINATED`)."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt
    if TERMINATED.is_set():
        raise Terminated


def _counted(r: dict[str, Any], tally: _Tally, bar: Progress | None, held: Lease | None) -> None:
    """A finished chunk's report counted and shown; then a lost Ctrl-C or SIGTERM raised, and
    the lease checked (a run whose lease was taken stops)."""
    tally.add(r)
    if bar:
        bar.update()
    _stop_if_interrupted()
    if held:
        held.check()


def _run(sweep: Sweep, store: Store, client: Any, book: Book | None, t0: float,
         progress: bool, held: Lease) -> SweepResult:
    sync = isinstance(client, str)
    url, fresh = store.url, book is None
    tally = _Tally(url)
    _forget_store(sweep, url, store.options)   # a cluster in this process shares the object
    try:
        if fresh:
            env_info = None
            if sweep.has_envelope:  # found on a worker's device unless this process computes
                sweep, env_info = (sweep.resolve_envelope() if sync else client.submit(
                    Sweep.resolve_envelope, sweep, pure=False).result())
            store.create(sweep, env_info)
        # Every chunk is a task: those marked done check their data and skip themselves.
        bar = Progress(sweep.n_chunks, math.prod(sweep.chunks)) if progress else None
        with _noticing_ctrl_c(), _folding(store):
            if sync:
                _run_here(sweep, store, book, sweep.chunk_indices(), bar, tally, held)
            else:
                _run_client(sweep, store, client, sweep.chunk_indices(), bar, tally, fresh,
                            held)
        seconds = time.perf_counter() - t0
        store.record_run(tally.devices, {
            "resumed": not fresh, "chunks_computed": tally.computed,
            "chunks_repaired": len(tally.repaired), "seconds": round(seconds, 3),
            "chunks_warned": tally.warned, "warnings": dict(tally.summary()),
            # summed over the chunks: the device's busy time, and the writes' (which overlap)
            "compute_seconds": round(tally.compute_s, 3),
            "write_seconds": round(tally.write_s, 3)})
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise write_error(url, exc) from exc
        raise
    computed, devices = tally.computed, tally.devices
    if tally.repaired:
        warnings.warn(f"{url}: {len(tally.repaired)} finished chunk(s) no longer matched their "
                      f"checksums (corrupted or deleted) and were computed again: "
                      f"{listing([str(i) for i in tally.repaired])}", RuntimeWarning,
                      stacklevel=3)
    if tally.warnings:
        warnings.warn(f"{sweep.function}: {tally.warned} of {computed} chunks warned: "
                      + "; ".join(f"{m} ({n} chunks)" for m, n in tally.summary()),
                      RuntimeWarning, stacklevel=3)
    return SweepResult(url, computed, sweep.n_chunks - computed, seconds,
                       sorted(devices), store.reader())


@contextlib.contextmanager
def _folding(store: Store) -> Iterator[None]:
    """Fold the store's journal into its bookkeeping arrays once the chunks are done, or
    stopped (then as far as it can: what it cannot is folded by the next run)."""
    try:
        yield
    except BaseException:
        try:
            store.fold()
        except Exception:
            _log.info("daskcl: %s: the journal is left to the next run", store.url,
                      exc_info=True)
        raise
    store.fold()


def _run_here(sweep: Sweep, store: Store, book: Book | None,
              todo: Iterable[tuple[int, ...]], bar: Progress | None, tally: _Tally,
              held: Lease | None = None) -> None:
    """Every chunk of ``todo`` computed in this process, chunk after chunk; each computed
    chunk is written on a writer thread while the next computes, at most
    :data:`_SYNC_WRITES` at once, and counted (in order) once it is recorded.  An error
    stops the computing; the writes begun finish (each recorded only once complete).  A
    fresh store (``book`` ``None``) has no marks to read."""
    url = store.url
    writing: deque[tuple[tuple[int, ...], Future[dict[str, Any]]]] = deque()   # (chunk, job)

    def count(idx: tuple[int, ...], done: Future[dict[str, Any]]) -> None:
        try:
            r = done.result()
        except Exception as exc:  # as a cluster's chunk task: one line
            raise _chunk_failed(url, idx, exc) from exc
        _counted(r, tally, bar, held)

    with ThreadPoolExecutor(_SYNC_WRITES, thread_name_prefix="daskcl-writer") as writer:
        for idx in todo:
            marked = book is not None and bool(book.done[idx])
            if marked and store.matches(sweep, idx, book):   # type: ignore[arg-type]
                job = _finished({"index": idx, "skipped": True})
            else:
                try:
                    results, report = _compute(sweep, idx)
                except Exception as exc:  # the writes begun finish first
                    job = _failed(exc)
                else:
                    job = writer.submit(_write, store, sweep, idx, results, report, marked)
                    del results
            writing.append((idx, job))
            while writing and (writing[0][1].done() or len(writing) > _SYNC_WRITES):
                count(*writing.popleft())
            if job.done() and job.exception() is not None:
                break
        while writing:
            count(*writing.popleft())


def _chunk_failed(url: str, idx: tuple[int, ...], exc: Exception) -> SweepError:
    """The one-line error of a chunk that failed, whatever it raised: the file system's, zarr's
    (which reach a client as a bare ``Exception``: distributed cannot rebuild them), a Python
    function's own (a ``ZeroDivisionError`` was a traceback, in this process always)."""
    if isinstance(exc, OSError) and exc.errno in DISK_FULL:
        return write_error(url, exc)
    return SweepError(f"chunk {idx} failed: {type(exc).__name__}: {exc}. Finished chunks are "
                      "kept in the store; fix the cause and run again with --resume (a changed "
                      "spec or function file is another sweep, which --resume refuses: "
                      "--overwrite starts it anew)")


def _finished(r: dict[str, Any]) -> Future[dict[str, Any]]:
    fut: Future[dict[str, Any]] = Future()
    fut.set_result(r)
    return fut


def _failed(exc: Exception) -> Future[dict[str, Any]]:
    fut: Future[dict[str, Any]] = Future()
    fut.set_exception(exc)
    return fut


def _warm_names(sweep: Sweep) -> list[Any]:
    if sweep.glm is not None:
        return [f"glm:{sweep.glm.family}:{sweep.glm.link}"]
    return sweep.func.warm_names() if sweep.func is not None else []


def _run_client(sweep: Sweep, store: Store, client: Any, todo: Iterable[tuple[int, ...]],
                bar: Progress | None, tally: _Tally, fresh: bool = False,
                held: Lease | None = None) -> None:
    """Run ``chunk_task`` for every index of ``todo`` on the client's workers (``fresh``: the
    run created the store, and the tasks need not read its marks).

    The sweep is the result of one task, which every chunk task names: it is copied to every
    worker present (so that no worker draws the chunk tasks to itself), later workers fetch it
    once, and where the workers holding it die the scheduler computes it again from the task
    (data scattered to a lone worker would die with it, and the sweep with it).  A window of
    tasks (``_window``) is in flight, the next submitted as half the window finishes (one
    message to the scheduler, not one a chunk; the results of the tasks that finished together
    fetched together), so that neither the client nor the scheduler holds more than the window
    however many chunks there are."""
    from distributed import as_completed

    url, options = store.url, store.options
    indices: Iterator[tuple[int, ...]] = iter(todo)
    first = next(indices, None)
    if first is None:
        return
    token = f"daskcl-sweep-{sweep.identity()[:8]}-{uuid.uuid4().hex[:6]}"
    with warnings.catch_warnings():
        # the sweep is sent once, by design: an axis of 2^21 values made distributed say
        # "Sending large graph ... Consider loading the data with Dask directly" to the user
        warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
        payload = client.submit(_hold, sweep, pure=False, retries=2, key=f"{token}-spec")
    if len(client.nthreads()) > 1:
        # a copy on every worker: the chunk tasks that name it are then placed by load, not
        # drawn to the one worker that computed it
        client.replicate([payload])
    names = _warm_names(sweep)
    if names:
        from ..distributed.plugin import warm

        client.run(warm, names)
    width = _window(client, store.quick(_chunk_bytes(sweep)))
    pending: dict[Any, tuple[tuple[int, ...], Any]] = {}
    running = as_completed(loop=client.loop)
    queue = itertools.chain([first], indices)

    def submit(n: int) -> None:
        batch = list(itertools.islice(queue, n))
        if not batch:
            return
        futs = client.map(chunk_task, [payload] * len(batch), [url] * len(batch),
                          [options] * len(batch), batch, [fresh] * len(batch), pure=False,
                          retries=2, key=[f"{token}-{'.'.join(map(str, i))}" for i in batch])
        for idx, fut in zip(batch, futs):
            pending[fut.key] = (idx, fut)
            running.add(fut)

    finished = 0
    try:
        submit(width)
        for batch in running.batches():
            # the results of the tasks that finished together, in one message: fetched at once,
            # not left on a worker whose death would have them computed again; each future
            # released here, not by its finalizer, where Python would ignore the Ctrl-C or
            # SIGTERM that came meanwhile
            fut = None
            for fut, r in zip(batch, _gather(client, batch, url, pending)):
                pending.pop(fut.key)
                fut.release()
                _counted(r, tally, bar, held)
            finished += len(batch)
            del batch, fut
            if finished >= width // 2 or not pending:   # the next tasks, in one message
                submit(finished)
                finished = 0
    finally:
        client.cancel([f for _, f in pending.values() if not f.done()])


def _gather(client: Any, batch: list[Any], url: str,
            pending: dict[Any, tuple[tuple[int, ...], Any]]) -> list[dict[str, Any]]:
    """The results of the finished chunk tasks ``batch``, fetched in one message; where one
    failed, the one-line error of the first that did (:func:`_chunk_failed`)."""
    try:
        return list(client.gather(batch))
    except Exception:   # which chunk failed: asked of each
        pass
    out = []
    for fut in batch:
        try:
            out.append(fut.result())
        except Exception as exc:  # the spec's own code may raise anything
            raise _chunk_failed(url, pending[fut.key][0], exc) from exc
    return out


def _window(client: Any, quick: bool) -> int:
    """The chunk tasks in flight at once on ``client``'s workers (:data:`_WINDOW_PER_THREAD`,
    :data:`_QUICK_WINDOW_PER_THREAD` where the chunks are ``quick`` to write)."""
    per = _QUICK_WINDOW_PER_THREAD if quick else _WINDOW_PER_THREAD
    return max(8, per * int(sum(client.nthreads().values())))


def _chunk_bytes(sweep: Sweep) -> int:
    """The bytes of one (whole) chunk's results, every output together."""
    return 8 * sum(int(math.prod(o.chunks)) for o in sweep.outputs)


def _hold(obj: Any) -> Any:
    """The task whose result is the sweep."""
    return obj
