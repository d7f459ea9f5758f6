# SPDX-License-Identifier: GPL-2.0-or-later
"""Running a :class:`daskcl.sweep.Sweep` into its store: :func:`run`, one task per chunk.

The store is prepared (and proven writable) before anything is computed
(:func:`daskcl.sweep.store.open_store`).  Each chunk is one task that computes its arrays on the
worker's device and writes them with :func:`daskcl.sweep.store.write_chunk` (its zarr chunks,
their checksums, its mark); a task whose chunk is marked reads it back and skips it only if it
still matches its checksums.  The sweep travels to the workers once, and at most a few tasks per
worker thread are submitted at a time, so the client's memory does not grow with the number of
chunks.
"""

from __future__ import annotations

import errno
import itertools
import math
import os
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from .spec import Sweep, SweepError, listing
from .store import (
    DISK_FULL,
    chunk_marked,
    chunk_matches,
    create_arrays,
    open_group,
    open_store,
    read_info,
    record_run,
    write_chunk,
    write_error,
)

__all__ = ["Progress", "SweepResult", "chunk_task", "run"]

#: tasks in flight per worker thread: enough to keep every thread busy between results
_WINDOW_PER_THREAD = 4
# One chunk computes on the device at a time; a worker's second thread writes the previous
# chunk meanwhile (sweeps start their local workers with two threads).
_EVAL_LOCK = threading.Lock()
_SWEEP_THREADS = 2


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


def _device_label() -> str:
    from ..distributed.cluster import describe

    d = describe()
    pci = f" pci {d['pci']}" if "pci" in d else ""
    return f"{d['host']}: {d['platform']} / {d['name']} (driver {d['driver']}){pci}"


def chunk_task(sweep: Sweep, url: str, options: dict[str, Any] | None,
               index: tuple[int, ...]) -> dict[str, Any]:
    """Compute and write one chunk (runs on a worker, or in-process for ``client="sync"``);
    a chunk already marked done is read back and skipped if it matches its checksums."""
    group = open_group(url, "r+", options)
    marked = chunk_marked(group, index)
    if marked and chunk_matches(group, sweep.output_names, sweep.chunk_slices(index), index):
        return {"index": index, "skipped": True}
    t0 = time.perf_counter()
    with _EVAL_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = sweep.evaluate(index)
    t1 = time.perf_counter()
    try:
        write_chunk(group, sweep, index, results)
    except OSError as exc:
        if exc.errno in DISK_FULL:  # the client says so in one line; no retry helps
            return {"index": index, "skipped": False, "disk_full": str(exc)}
        raise
    return {"index": index, "skipped": False, "repaired": marked, "compute_s": t1 - t0,
            "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
            "write_s": time.perf_counter() - t1, "points": math.prod(results[
                sweep.output_names[0]].shape), "device": _device_label()}


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
    """What the finished chunk tasks reported: counts, devices, R's warnings; a task that
    found the disk full ends the sweep with one line."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.computed = 0
        self.repaired: list[tuple[int, ...]] = []
        self.devices: set[str] = set()
        self.warnings: dict[str, int] = {}
        self.warned = 0

    def add(self, r: dict[str, Any]) -> None:
        if "disk_full" in r:
            raise write_error(self.url, OSError(errno.ENOSPC, r["disk_full"]))
        self.computed += not r["skipped"]
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
        (``None``).
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
    if not isinstance(sweep, Sweep):
        raise TypeError(f"run: sweep must be a daskcl.sweep.Sweep, got {type(sweep).__name__}")
    url = str(out)
    t0 = time.perf_counter()
    sync = isinstance(client, str)
    if sync and client != "sync":
        raise SweepError(f"client must be a distributed.Client, 'sync' or None, got {client!r}")
    if listen is not None and client is not None:
        raise SweepError("listen is for the local cluster only: a cluster you bring (or 'sync') "
                         "listens where it was started")
    sweep, group, done = open_store(sweep, url, resume=resume, overwrite=overwrite,
                                    options=storage_options)
    if client is None:
        import logging

        from distributed import Client

        from ..distributed.cluster import local_cluster

        # _run_client warms every worker's programs, on this cluster as on any other.
        host = {} if listen is None else {"host": listen}
        with local_cluster(workers, threads_per_worker=_SWEEP_THREADS,
                           silence_logs=logging.WARNING, **host) as cluster, Client(cluster) as c:
            return _run(sweep, url, c, group, done is None, t0, progress, storage_options)
    return _run(sweep, url, client, group, done is None, t0, progress, storage_options)


def _run(sweep: Sweep, url: str, client: Any, group: Any, fresh: bool, t0: float,
         progress: bool, storage_options: dict[str, Any] | None) -> SweepResult:
    sync = isinstance(client, str)
    tally = _Tally(url)
    try:
        if fresh:
            env_info = None
            if sweep.has_envelope:  # found on a worker's device unless this process computes
                sweep, env_info = (sweep.resolve_envelope() if sync else client.submit(
                    Sweep.resolve_envelope, sweep, pure=False).result())
            create_arrays(sweep, group, env_info, url, storage_options)
        # Every chunk is a task: those marked done check their data and skip themselves.
        bar = Progress(sweep.n_chunks, math.prod(sweep.chunks)) if progress else None
        if sync:
            for idx in sweep.chunk_indices():
                tally.add(chunk_task(sweep, url, storage_options, idx))
                if bar:
                    bar.update()
        else:
            _run_client(sweep, url, storage_options, client, sweep.chunk_indices(), bar, tally)
        seconds = time.perf_counter() - t0
        record_run(group, tally.devices, {
            "resumed": not fresh, "chunks_computed": tally.computed,
            "chunks_repaired": len(tally.repaired), "seconds": round(seconds, 3),
            "chunks_warned": tally.warned, "warnings": dict(tally.summary())},
            url, storage_options)
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
                       sorted(devices), open_group(url, "r", storage_options))


def _warm_names(sweep: Sweep) -> list[Any]:
    if sweep.glm is not None:
        return [f"glm:{sweep.glm.family}:{sweep.glm.link}"]
    return sweep.func.warm_names() if sweep.func is not None else []


def _run_client(sweep: Sweep, url: str, options: dict[str, Any] | None, client: Any,
                todo: Iterable[tuple[int, ...]], bar: Progress | None, tally: _Tally) -> None:
    """Run ``chunk_task`` for every index of ``todo`` on the client's workers.

    The sweep is scattered to every worker once and each task names it (a cluster with no
    worker yet, an adaptive one, gets it as the result of one task instead, which its workers
    fetch as they come); a window of
    :data:`_WINDOW_PER_THREAD` tasks per worker thread is in flight, the next submitted as
    each finishes, so that neither the client nor the scheduler holds more than the window
    however many chunks there are."""
    from distributed import as_completed

    indices: Iterator[tuple[int, ...]] = iter(todo)
    first = next(indices, None)
    if first is None:
        return
    if client.nthreads():
        payload = client.scatter(sweep, broadcast=True, hash=False)
    else:
        payload = client.submit(_hold, sweep, pure=False)
    names = _warm_names(sweep)
    if names:
        from ..distributed.cluster import warm

        client.run(warm, names)
    token = f"daskcl-sweep-{sweep.identity()[:8]}-{uuid.uuid4().hex[:6]}"
    width = max(8, _WINDOW_PER_THREAD * sum(client.nthreads().values()))
    pending: dict[Any, tuple[tuple[int, ...], Any]] = {}
    running = as_completed(loop=client.loop)
    queue = itertools.chain([first], indices)

    def submit(n: int) -> None:
        for idx in itertools.islice(queue, n):
            fut = client.submit(chunk_task, payload, url, options, idx, pure=False, retries=2,
                                key=f"{token}-{'.'.join(map(str, idx))}")
            pending[fut.key] = (idx, fut)
            running.add(fut)

    try:
        submit(width)
        for fut in running:
            idx, _ = pending.pop(fut.key)
            try:
                r = fut.result()
            except (OSError, ValueError, RuntimeError) as exc:  # file system, fsspec, zarr's checks
                if isinstance(exc, OSError) and exc.errno in DISK_FULL:
                    raise write_error(url, exc) from exc
                raise SweepError(f"chunk {idx} failed: {type(exc).__name__}: {exc}. Finished "
                                 "chunks are kept in the store; fix the cause and run again "
                                 "with --resume") from exc
            del fut
            tally.add(r)
            if bar:
                bar.update()
            submit(1)
    finally:
        client.cancel([f for _, f in pending.values() if not f.done()])


def _hold(obj: Any) -> Any:
    """The task whose result is the sweep, for clusters that have no worker to scatter to."""
    return obj
