# SPDX-License-Identifier: GPL-2.0-or-later
"""Running a :class:`daskcl.sweep.Sweep`: the zarr store, the chunk tasks, progress.

The store is prepared (and proven writable) before anything is computed.  Each chunk is one task
that computes its arrays on the worker's device, writes only its own zarr chunks, then the
checksum of what it wrote (``_checksum``) and then its ``_done`` mark; so a chunk is either
complete and marked, or recomputed (a worker killed between the writes leaves the chunk
unmarked, and the task's retry -- or a later ``resume`` -- writes the same values again).  A
task whose chunk is marked reads the chunk back and skips it only if it still matches its
checksum: a chunk corrupted or deleted since is computed again.

The store is known as daskcl's by its ``daskcl`` attribute (``format``); ``overwrite`` replaces
only such a store, and deletes only the entries daskcl wrote there.  The sweep travels to the
workers once, and at most a few tasks per worker thread are submitted at a time, so the
client's memory does not grow with the number of chunks.
"""

from __future__ import annotations

import datetime as _dt
import errno
import itertools
import logging
import math
import os
import posixpath
import shutil
import sys
import threading
import time
import uuid
import warnings
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

import numpy as np

from .._version import __version__
from .spec import Sweep, SweepError, SweepResult, _jsonable

__all__ = [
    "FORMAT", "STORE_READ_ERRORS", "Progress", "checksum", "chunk_task", "create_arrays",
    "open_store", "read_done", "run", "verify",
]

#: the ``format`` of the ``daskcl`` attribute of a store this module wrote
FORMAT = "daskcl-sweep/1"
_BOOKKEEPING = ("_done", "_checksum")
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
#: tasks in flight per worker thread: enough to keep every thread busy between results
_WINDOW_PER_THREAD = 4
# One chunk computes on the device at a time; a worker's second thread writes the previous
# chunk meanwhile (sweeps start their local workers with two threads).
_EVAL_LOCK = threading.Lock()
_SWEEP_THREADS = 2
#: what reading a store raises where a chunk, mark or attribute cannot be read: the file system
#: and fsspec (OSError, zarr's not-found errors among them), zarr's metadata and codec checks
#: (ValueError), a missing key or index (LookupError), the zstd and blosc codecs' decompression
#: errors (RuntimeError)
STORE_READ_ERRORS: tuple[type[Exception], ...] = (OSError, ValueError, LookupError, RuntimeError)

_log = logging.getLogger("daskcl.sweep")


def _open(url: str, mode: str, options: dict[str, Any] | None) -> Any:
    import zarr

    return zarr.open_group(url, mode=mode, storage_options=options)  # type: ignore[arg-type]


def read_done(group: Any, grid: tuple[int, ...]) -> np.ndarray:
    """The ``_done`` marks as a boolean array; a mark that cannot be read counts as not done."""
    arr = group["_done"]
    try:
        done: np.ndarray = np.asarray(arr[...], dtype=np.uint8) == 1
        return done
    except STORE_READ_ERRORS as exc:
        _log.info("daskcl: the done marks cannot be read at once (%s); reading them one by one",
                 exc)
        out = np.zeros(grid, dtype=bool)
        for idx in np.ndindex(*grid):
            try:
                out[idx] = arr[idx] == 1
            except STORE_READ_ERRORS as exc:
                _log.info("daskcl: the done mark of chunk %s cannot be read (%s): not done",
                         idx, exc)
                out[idx] = False
        return out


def _device_label() -> str:
    from ..distributed.cluster import describe

    d = describe()
    pci = f" pci {d['pci']}" if "pci" in d else ""
    return f"{d['host']}: {d['platform']} / {d['name']} (driver {d['driver']}){pci}"


def checksum(values: np.ndarray) -> int:
    """CRC-32 of an array's float64 values in C order, every NaN counted as the same NaN
    (zarr stores a chunk of NaNs as its fill value, whose bits may differ from the NaN
    written)."""
    a = np.ascontiguousarray(values, dtype="<f8")
    nan = np.isnan(a)
    if nan.any():
        a = np.where(nan, np.nan, a)
    return zlib.crc32(a.data)


def _chunk_matches(group: Any, outputs: Iterable[str], sl: tuple[slice, ...],
                   index: tuple[int, ...]) -> bool:
    """Whether the result arrays of a chunk still hold what its checksums say was written
    (a chunk or checksum that cannot be read does not match)."""
    try:
        want = np.atleast_1d(np.asarray(group["_checksum"][index], dtype=np.uint64))
        for k, name in enumerate(outputs):
            arr = group[name]
            if checksum(arr[sl + (slice(None),) * (arr.ndim - len(sl))]) != int(want[k]):
                return False
        return True
    except STORE_READ_ERRORS as exc:
        _log.info("daskcl: chunk %s or its checksum cannot be read (%s): it is computed again",
                 index, exc)
        return False


def chunk_task(sweep: Sweep, url: str, options: dict[str, Any] | None,
               index: tuple[int, ...]) -> dict[str, Any]:
    """Compute and write one chunk (runs on a worker, or in-process for ``client="sync"``);
    a chunk already marked done is read back and skipped if it matches its checksums."""
    group = _open(url, "r+", options)
    done = group["_done"]
    sl = sweep.chunk_slices(index)
    try:
        marked = int(done[index]) == 1
    except STORE_READ_ERRORS as exc:
        _log.info("daskcl: the done mark of chunk %s cannot be read (%s): not done", index, exc)
        marked = False
    if marked and _chunk_matches(group, sweep.output_names, sl, index):
        return {"index": index, "skipped": True}
    t0 = time.perf_counter()
    with _EVAL_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = sweep.evaluate(index)
    t1 = time.perf_counter()
    try:
        for name, arr in results.items():
            target = group[name]
            target[sl + (slice(None),) * (arr.ndim - len(sl))] = arr
        group["_checksum"][index] = np.array(
            [checksum(results[n]) for n in sweep.output_names], dtype=np.uint32)
        done[index] = 1
    except OSError as exc:
        if exc.errno in _DISK_FULL:  # the client says so in one line; no retry helps
            return {"index": index, "skipped": False, "disk_full": str(exc)}
        raise
    return {"index": index, "skipped": False, "repaired": marked, "compute_s": t1 - t0,
            "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
            "write_s": time.perf_counter() - t1, "points": math.prod(results[
                sweep.output_names[0]].shape), "device": _device_label()}


class Progress:
    """Chunks done, rate and time left, on one line (a terminal) or every 10% (a log)."""

    def __init__(self, total: int, points_per_chunk: int, stream: TextIO | None = None) -> None:
        self.total, self.ppc = total, points_per_chunk
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self.done = 0
        self.last_decile = -1

    def update(self, n: int = 1) -> None:
        self.done += n
        elapsed = time.perf_counter() - self.t0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        line = (f"[{bar}] {self.done}/{self.total} chunks  {rate:.2f} chunks/s  "
                f"{rate * self.ppc:.3g} points/s  {_eta(left)} left")
        if self.tty:
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


def _attrs(sweep: Sweep, envelope: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": __version__,
        "function": sweep.function,
        "description": sweep.description,
        "spec": _jsonable(sweep.spec),
        "spec_toml": sweep.text,
        "identity": sweep.identity(),
        "identity_parts": sweep.identity_parts(),
        "axes": [a.name for a in sweep.axes],
        "outputs": list(sweep.output_names),
        "chunks": list(sweep.chunks),
        "store_chunks": list(sweep.store_chunks),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "envelope": envelope,
        "coefficients": list(sweep.glm.names) if sweep.glm is not None else None,
        "devices": [],
    }


def _is_ours(info: Any) -> bool:
    """Whether a group's ``daskcl`` attribute is one this module writes (or wrote before it
    had a ``format``: a finished sweep's attributes, or ``{"preparing": True}``)."""
    if not isinstance(info, dict):
        return False
    if info.get("format") == FORMAT:
        return True
    return info == {"preparing": True} or {"identity", "outputs", "axes"} <= set(info)


def _own_entries(info: dict[str, Any]) -> set[str]:
    """The top-level entries daskcl writes in a store with these attributes."""
    names = {"zarr.json", *_BOOKKEEPING}
    for key in ("arrays", "outputs", "axes"):
        names.update(str(n) for n in info.get(key) or ())
    return names


def _listing(names: list[str], n: int = 5) -> str:
    shown = ", ".join(names[:n])
    return shown + (f" and {len(names) - n} more" if len(names) > n else "")


_PROBLEMS = {
    "function": "the function", "function_code": "the Python function's code",
    "kernel_source": "the kernel source", "axes": "the axes", "args": "the arguments",
    "chunks": "the chunks", "outputs": "the outputs", "glm": "the GLM data or model",
}


def _what_changed(info: dict[str, Any], sweep: Sweep) -> str:
    stored = info.get("identity_parts")
    if not isinstance(stored, dict):
        return "it was written by an older daskcl, whose identity does not say what"
    now = sweep.identity_parts()
    changed = [_PROBLEMS.get(k, k) for k in now if k != "sweep" and stored.get(k) != now[k]]
    return ", ".join(changed) + (" differ" if len(changed) > 1 else " differs")


def open_store(sweep: Sweep, url: str, *, resume: bool, overwrite: bool,
               options: dict[str, Any] | None) -> tuple[Any, np.ndarray | None]:
    """Check the store and open it: the group and its done marks to resume it, or a fresh,
    empty group (proven writable) and ``None`` for :func:`create_arrays` to fill.  Runs before
    any cluster starts or anything is computed.

    ``overwrite`` replaces only a store daskcl wrote (its ``daskcl`` attribute says so) that
    holds nothing else; anything else at ``url`` is refused and left as it is."""
    entries = _entries(url, options)
    if entries is None:
        raise SweepError(f"{url} exists and is not a zarr group (it is a file); choose another "
                         "--out")
    if not entries:
        return _create(sweep, url, options), None
    try:
        existing = _open(url, "r", options)
        info = existing.attrs.get("daskcl")
    except STORE_READ_ERRORS as exc:  # not a zarr group: said below, with what it holds
        _log.debug("daskcl: %s is not a readable zarr group: %s", url, exc)
        existing, info = None, None
    if not _is_ours(info):
        what = (f"exists and is not a zarr group (it holds {_listing(entries)})"
                if existing is None else "is a zarr group that daskcl did not write (it has "
                "no daskcl attributes)")
        how = (": --overwrite replaces only a store written by daskcl sweep and deletes "
               "nothing else; choose another --out") if overwrite else "; choose another --out"
        raise SweepError(f"{url} {what}{how}")
    assert isinstance(info, dict)
    if overwrite or (resume and info.get("preparing")):
        foreign = [e for e in entries if e not in _own_entries(info)]
        if foreign:
            raise SweepError(f"{url} is a daskcl sweep store but also holds {_listing(foreign)}, "
                             "which daskcl did not write; it deletes nothing it did not create: "
                             "move them away or choose another --out")
        _remove(url, options, entries)
        return _create(sweep, url, options), None
    if not resume:
        raise SweepError(f"{url} already holds a sweep; pass --resume to finish it or "
                         "--overwrite to start again")
    if sweep.glm is not None and sweep.glm.envelope is not None:
        for a in sweep.axes:  # the envelope found when the sweep started
            a.values = np.asarray(existing[a.name][...], dtype=np.float64)
            a.source = {"envelope": True}
        sweep.__dict__.pop("_identity", None)
    if info.get("identity") != sweep.identity():
        raise SweepError(f"{url} holds a different sweep ({info.get('function')}, axes "
                         f"{info.get('axes')}): {_what_changed(info, sweep)}; resume needs the "
                         "same spec and code, or pass --overwrite / another --out")
    group = _open(url, "r+", options)
    _prove_writable(url, options, [*sweep.output_names, *_BOOKKEEPING])
    return group, read_done(group, sweep.grid)


def _create(sweep: Sweep, url: str, options: dict[str, Any] | None) -> Any:
    """A new, empty group at ``url`` (which holds nothing: mode ``w-`` deletes nothing)."""
    names = [*sweep.output_names, *(a.name for a in sweep.axes), *_BOOKKEEPING]
    try:
        group = _open(url, "w-", options)
        group.attrs["daskcl"] = {"preparing": True, "format": FORMAT, "arrays": names}
    except (OSError, ValueError, RuntimeError) as exc:  # file system, fsspec, zarr's checks
        raise _write_error(url, exc) from exc
    return group


def _write_error(url: str, exc: BaseException) -> SweepError:
    if isinstance(exc, OSError) and exc.errno in _DISK_FULL:
        return SweepError(f"disk full writing {url}; free space and run again with --resume")
    return SweepError(f"cannot write the store {url}: {exc}; choose a writable --out")


def _entries(url: str, options: dict[str, Any] | None) -> list[str] | None:
    """The names at the top of the store (empty if there is nothing), ``None`` for a file."""
    if "://" not in url:
        p = os.path.abspath(url)
        if not os.path.lexists(p):
            return []
        return sorted(os.listdir(p)) if os.path.isdir(p) else None
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(options or {}))
    if not fs.exists(path):
        return []
    if not fs.isdir(path):
        return None
    return sorted(posixpath.basename(str(e).rstrip("/")) for e in fs.ls(path, detail=False))


def _remove(url: str, options: dict[str, Any] | None, names: list[str]) -> None:
    """Delete the top-level entries ``names`` of the store (links themselves, not their
    targets)."""
    try:
        if "://" not in url:
            root = os.path.abspath(url)
            for n in names:
                p = os.path.join(root, n)
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p)
                else:
                    os.unlink(p)
            return
        import fsspec

        fs, path = fsspec.core.url_to_fs(url, **(options or {}))
        for n in names:
            fs.rm(posixpath.join(path, n), recursive=True)
    except OSError as exc:
        raise _write_error(url, exc) from exc


def _prove_writable(url: str, options: dict[str, Any] | None, arrays: list[str]) -> None:
    """Write and delete a probe at the top of the store and where each array's chunks go."""
    probe = f"daskcl-probe-{uuid.uuid4().hex[:12]}"
    keys = [probe, *(f"{a}/c/{probe}" for a in arrays)]
    try:
        if "://" not in url:
            root = os.path.abspath(url)
            for k in keys:
                p = os.path.join(root, *k.split("/"))
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "wb"):
                    pass
                os.unlink(p)
            return
        import fsspec

        fs, path = fsspec.core.url_to_fs(url, **(options or {}))
        for k in keys:
            fs.pipe_file(posixpath.join(path, k), b"")
            fs.rm_file(posixpath.join(path, k))
    except OSError as exc:
        raise _write_error(url, exc) from exc


def create_arrays(sweep: Sweep, group: Any, envelope: dict[str, Any] | None) -> None:
    """The result, coordinate and bookkeeping arrays of a new store, and its attributes."""
    compressors: Any = "auto" if sweep.compressor == "zstd" else None
    for o in sweep.outputs:
        group.create_array(o.name, shape=o.shape, chunks=o.store_chunks, dtype="float64",
                           fill_value=float("nan"), dimension_names=list(o.dims),
                           compressors=compressors)
    for a in sweep.axes:
        arr = group.create_array(a.name, shape=a.values.shape, chunks=a.values.shape,
                                 dtype="float64", dimension_names=[a.name])
        arr[...] = a.values
    chunk_dims = [f"{a.name}_chunk" for a in sweep.axes]
    group.create_array("_done", shape=sweep.grid, chunks=(1,) * len(sweep.grid), dtype="uint8",
                       fill_value=0, compressors=None, dimension_names=chunk_dims)
    nout = len(sweep.output_names)
    group.create_array("_checksum", shape=(*sweep.grid, nout),
                       chunks=(1,) * len(sweep.grid) + (nout,), dtype="uint32", fill_value=0,
                       compressors=None, dimension_names=[*chunk_dims, "output"])
    group.attrs["daskcl"] = _attrs(sweep, envelope)


def _exists(url: str, options: dict[str, Any] | None) -> bool:
    entries = _entries(url, options)
    return entries is None or bool(entries)


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
            raise _write_error(self.url, OSError(errno.ENOSPC, r["disk_full"]))
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


def _finish(group: Any, tally: _Tally, seconds: float) -> None:
    info = dict(group.attrs["daskcl"])
    info["devices"] = sorted(set(info.get("devices") or []) | tally.devices)
    info.setdefault("runs", [])
    info["runs"] = [*info["runs"], {
        "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "chunks_computed": tally.computed, "chunks_repaired": len(tally.repaired),
        "seconds": round(seconds, 3), "chunks_warned": tally.warned,
        "warnings": dict(tally.summary())}]
    group.attrs["daskcl"] = info


def run(sweep: Sweep, url: str, client: Any, *, resume: bool, overwrite: bool, progress: bool,
        workers: int | str | None, storage_options: dict[str, Any] | None,
        listen: str | None = None) -> SweepResult:
    t0 = time.perf_counter()
    sync = isinstance(client, str)
    if sync and client != "sync":
        raise SweepError(f"client must be a distributed.Client, 'sync' or None, got {client!r}")
    if listen is not None and client is not None:
        raise SweepError("listen is for the local cluster only: a cluster you bring (or 'sync') "
                         "listens where it was started")
    group, done = open_store(sweep, url, resume=resume, overwrite=overwrite,
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
            if sweep.glm is not None and sweep.glm.envelope is not None:
                if sync:
                    env_info = sweep.resolve_envelope()
                else:
                    env_info, axes = client.submit(_resolve_envelope, sweep, pure=False).result()
                    for a, (vals, src) in zip(sweep.axes, axes):
                        a.values, a.source = vals, src
                    sweep.__dict__.pop("_identity", None)
            create_arrays(sweep, group, env_info)
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
        _finish(group, tally, seconds)
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            raise _write_error(url, exc) from exc
        raise
    computed, devices = tally.computed, tally.devices
    if tally.repaired:
        warnings.warn(f"{url}: {len(tally.repaired)} finished chunk(s) no longer matched their "
                      f"checksums (corrupted or deleted) and were computed again: "
                      f"{_listing([str(i) for i in tally.repaired])}", RuntimeWarning,
                      stacklevel=3)
    if tally.warnings:
        warnings.warn(f"{sweep.function}: {tally.warned} of {computed} chunks warned: "
                      + "; ".join(f"{m} ({n} chunks)" for m, n in tally.summary()),
                      RuntimeWarning, stacklevel=3)
    return SweepResult(url, computed, sweep.n_chunks - computed, seconds,
                       sorted(devices), _open(url, "r", storage_options))


def _resolve_envelope(sweep: Sweep) -> tuple[dict[str, Any], list[tuple[np.ndarray, dict[str, Any]]]]:
    env = sweep.resolve_envelope()
    return env, [(a.values, a.source) for a in sweep.axes]


def _warm_names(sweep: Sweep) -> list[str]:
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
            except Exception as exc:  # whatever the chunk's task raised: the user's function too
                if isinstance(exc, OSError) and exc.errno in _DISK_FULL:
                    raise _write_error(url, exc) from exc
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


def verify(url: str, options: dict[str, Any] | None = None
           ) -> tuple[int, list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Read every finished chunk of a sweep store and compare it with its checksums.

    Returns the number of chunks, the finished chunks that no longer match (corrupted or
    deleted) and the chunks not finished yet.  ``daskcl sweep SPEC --out STORE --resume``
    computes both kinds again."""
    try:
        group = _open(url, "r", options)
        info = group.attrs.get("daskcl")
    except STORE_READ_ERRORS as exc:
        raise SweepError(f"{url} is not a zarr store ({type(exc).__name__}: {exc})") from None
    if not _is_ours(info) or info.get("preparing"):
        raise SweepError(f"{url} is not a finished daskcl sweep store (its daskcl attributes "
                         "are missing or say it was never prepared)")
    if "_checksum" not in group:
        raise SweepError(f"{url} has no checksums (written by daskcl {info.get('version')}, "
                         "before sweeps recorded them); there is nothing to verify against")
    outputs = [str(o) for o in info["outputs"]]
    chunks = [int(c) for c in info["chunks"]]
    grid = tuple(group["_done"].shape)
    shape = group[outputs[0]].shape[:len(grid)]
    done = read_done(group, grid)
    bad: list[tuple[int, ...]] = []
    missing: list[tuple[int, ...]] = []
    for idx in np.ndindex(*grid):
        if not done[idx]:
            missing.append(idx)
            continue
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))
        if not _chunk_matches(group, outputs, sl, idx):
            bad.append(idx)
    return math.prod(grid), bad, missing
