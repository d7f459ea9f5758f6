# SPDX-License-Identifier: GPL-2.0-or-later
"""Running a :class:`daskcl.sweep.Sweep`: the zarr store, the chunk tasks, progress.

The store is prepared (and proven writable) before anything is computed.  Each chunk is one task
that skips itself if ``_done`` already marks it, computes its arrays on the worker's device,
writes only its own zarr chunks, and then sets its ``_done`` element; so a chunk is either
complete and marked, or recomputed (a worker killed between the two writes leaves the chunk
unmarked, and the task's retry -- or a later ``resume`` -- writes the same values again).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import pickle
import sys
import threading
import time
import uuid
import warnings
from typing import Any, TextIO

import numpy as np

from ._version import __version__
from .sweep import Sweep, SweepError, SweepResult, _jsonable

_SCATTER_BYTES = 1 << 20  # a sweep pickled larger than this travels once per worker
# One chunk computes on the device at a time; a worker's second thread writes the previous
# chunk meanwhile (sweeps start their local workers with two threads).
_EVAL_LOCK = threading.Lock()
_SWEEP_THREADS = 2


def _open(url: str, mode: str, options: dict[str, Any] | None) -> Any:
    import zarr

    return zarr.open_group(url, mode=mode, storage_options=options)  # type: ignore[arg-type]


def read_done(group: Any, grid: tuple[int, ...]) -> np.ndarray:
    """The ``_done`` marks as a boolean array; a mark that cannot be read counts as not done."""
    arr = group["_done"]
    try:
        return np.asarray(arr[...], dtype=np.uint8) == 1
    except Exception:
        out = np.zeros(grid, dtype=bool)
        for idx in np.ndindex(*grid):
            try:
                out[idx] = arr[idx] == 1
            except Exception:
                out[idx] = False
        return out


def _device_label() -> str:
    from .cluster import describe

    d = describe()
    pci = f" pci {d['pci']}" if "pci" in d else ""
    return f"{d['host']}: {d['platform']} / {d['name']} (driver {d['driver']}){pci}"


def chunk_task(sweep: Sweep, url: str, options: dict[str, Any] | None,
               index: tuple[int, ...]) -> dict[str, Any]:
    """Compute and write one chunk (runs on a worker, or in-process for ``client="sync"``)."""
    group = _open(url, "r+", options)
    done = group["_done"]
    try:
        if int(done[index]) == 1:
            return {"index": index, "skipped": True}
    except Exception:
        pass
    t0 = time.perf_counter()
    with _EVAL_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = sweep.evaluate(index)
    t1 = time.perf_counter()
    sl = sweep.chunk_slices(index)
    for name, arr in results.items():
        target = group[name]
        target[sl + (slice(None),) * (arr.ndim - len(sl))] = arr
    done[index] = 1
    return {"index": index, "skipped": False, "compute_s": t1 - t0,
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
        "version": __version__,
        "function": sweep.function,
        "description": sweep.description,
        "spec": _jsonable(sweep.spec),
        "spec_toml": sweep.text,
        "identity": sweep.identity(),
        "axes": [a.name for a in sweep.axes],
        "outputs": list(sweep.output_names),
        "chunks": list(sweep.chunks),
        "store_chunks": list(sweep.store_chunks),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "envelope": envelope,
        "coefficients": list(sweep.glm.names) if sweep.glm is not None else None,
        "devices": [],
    }


def open_store(sweep: Sweep, url: str, *, resume: bool, overwrite: bool,
               options: dict[str, Any] | None) -> tuple[Any, np.ndarray | None]:
    """Check the store and open it: the group and its done marks to resume it, or a fresh,
    empty group (proven writable) and ``None`` for :func:`create_arrays` to fill.  Runs before
    any cluster starts or anything is computed."""
    existing = None
    if _exists(url, options):
        try:
            existing = _open(url, "r", options)
        except Exception:
            if not overwrite:
                raise SweepError(f"{url} exists and is not a zarr group; choose another --out "
                                 "or pass --overwrite") from None
    info = existing.attrs.get("daskcl") if existing is not None else None
    if existing is not None and not overwrite and not (resume and info == {"preparing": True}):
        if info is None:
            raise SweepError(f"{url} is a zarr group but not a daskcl sweep; choose another --out "
                             "or pass --overwrite")
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
                             f"{info.get('axes')}); resume needs the same spec, or pass "
                             "--overwrite / another --out")
        group = _open(url, "r+", options)
        return group, read_done(group, sweep.grid)
    try:
        group = _open(url, "w", options)
        group.attrs["daskcl"] = {"preparing": True}
    except Exception as exc:
        raise SweepError(f"cannot write the store {url}: {exc}; choose a writable --out") from exc
    return group, None


def create_arrays(sweep: Sweep, group: Any, envelope: dict[str, Any] | None) -> None:
    """The result, coordinate and ``_done`` arrays of a new store, and its attributes."""
    compressors: Any = "auto" if sweep.compressor == "zstd" else None
    for o in sweep.outputs:
        group.create_array(o.name, shape=o.shape, chunks=o.store_chunks, dtype="float64",
                           fill_value=float("nan"), dimension_names=list(o.dims),
                           compressors=compressors)
    for a in sweep.axes:
        arr = group.create_array(a.name, shape=a.values.shape, chunks=a.values.shape,
                                 dtype="float64", dimension_names=[a.name])
        arr[...] = a.values
    group.create_array("_done", shape=sweep.grid, chunks=(1,) * len(sweep.grid), dtype="uint8",
                       fill_value=0, compressors=None,
                       dimension_names=[f"{a.name}_chunk" for a in sweep.axes])
    group.attrs["daskcl"] = _attrs(sweep, envelope)


def _exists(url: str, options: dict[str, Any] | None) -> bool:
    if "://" not in url:
        p = os.path.abspath(url)
        return os.path.exists(p) and (not os.path.isdir(p) or bool(os.listdir(p)))
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(options or {}))
    return bool(fs.exists(path))


class _Tally:
    """What the finished chunk tasks reported: counts, devices, R's warnings."""

    def __init__(self) -> None:
        self.computed = 0
        self.devices: set[str] = set()
        self.warnings: dict[str, int] = {}
        self.warned = 0

    def add(self, r: dict[str, Any]) -> None:
        self.computed += not r["skipped"]
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
        "chunks_computed": tally.computed, "seconds": round(seconds, 3),
        "chunks_warned": tally.warned, "warnings": dict(tally.summary())}]
    group.attrs["daskcl"] = info


def run(sweep: Sweep, url: str, client: Any, *, resume: bool, overwrite: bool, progress: bool,
        workers: int | str | None, storage_options: dict[str, Any] | None) -> SweepResult:
    t0 = time.perf_counter()
    sync = isinstance(client, str)
    if sync and client != "sync":
        raise SweepError(f"client must be a distributed.Client, 'sync' or None, got {client!r}")
    group, done = open_store(sweep, url, resume=resume, overwrite=overwrite,
                             options=storage_options)
    if client is None:
        import logging

        from distributed import Client

        from .cluster import local_cluster

        # _run_client warms every worker's programs, on this cluster as on any other.
        with local_cluster(workers, threads_per_worker=_SWEEP_THREADS,
                           silence_logs=logging.WARNING) as cluster, Client(cluster) as c:
            return _run(sweep, url, c, group, done, t0, progress, storage_options)
    return _run(sweep, url, client, group, done, t0, progress, storage_options)


def _run(sweep: Sweep, url: str, client: Any, group: Any, done: np.ndarray | None, t0: float,
         progress: bool, storage_options: dict[str, Any] | None) -> SweepResult:
    sync = isinstance(client, str)
    if done is None:
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
        done = np.zeros(sweep.grid, dtype=bool)
    todo = [idx for idx in sweep.chunk_indices() if not done[idx]]
    bar = Progress(len(todo), math.prod(sweep.chunks)) if progress else None
    tally = _Tally()
    if sync:
        for idx in todo:
            tally.add(chunk_task(sweep, url, storage_options, idx))
            if bar:
                bar.update()
    else:
        _run_client(sweep, url, storage_options, client, todo, bar, tally)
    seconds = time.perf_counter() - t0
    _finish(group, tally, seconds)
    computed, devices = tally.computed, tally.devices
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
                todo: list[tuple[int, ...]], bar: Progress | None, tally: _Tally) -> None:
    from distributed import as_completed

    if not todo:
        return
    payload: Any = sweep
    if len(pickle.dumps(sweep)) > _SCATTER_BYTES:
        payload = client.scatter(sweep, broadcast=True, hash=False)
    names = _warm_names(sweep)
    if names:
        from .cluster import warm

        client.run(warm, names)
    token = f"daskcl-sweep-{sweep.identity()[:8]}-{uuid.uuid4().hex[:6]}"
    futures = [
        client.submit(chunk_task, payload, url, options, idx, pure=False, retries=2,
                      key=f"{token}-{'.'.join(map(str, idx))}")
        for idx in todo
    ]
    try:
        for fut in as_completed(futures):
            try:
                r = fut.result()
            except Exception as exc:
                idx = todo[futures.index(fut)]
                raise SweepError(f"chunk {idx} failed: {type(exc).__name__}: {exc}. Finished "
                                 "chunks are kept in the store; fix the cause and run again "
                                 "with --resume") from exc
            tally.add(r)
            if bar:
                bar.update()
    finally:
        client.cancel([f for f in futures if not f.done()])
