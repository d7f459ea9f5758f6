# SPDX-License-Identifier: GPL-2.0-or-later
"""The next chunk computes while the last one is written: on a worker of one thread (the task
leaves its thread once computed) and in this process (a writer thread).  The store is the same
as one written chunk after chunk; a worker or a process killed while a chunk is being written
leaves that chunk unmarked, and it is computed again (by the cluster, or on resume)."""

from __future__ import annotations

import json
import os
import signal
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import numpy as np
import pytest
from support.procs import run_python

from daskcl.cluster import local_cluster, worker_devices
from daskcl.sweep import Sweep, open_result, run, runner, spec, store
from daskcl.sweep.chunks import read_book
from daskcl.sweep.evaluate import evaluate_chunk
from daskcl.sweep.journal import Journal

ROOT = Path(__file__).resolve().parents[2]

# A Python function that logs when each chunk's evaluation starts and ends (and in which
# process): the tests read from it what overlapped and what was computed twice.
LOGGED = '''\
import os, time
from daskcl import nmath

def logged_pnorm(x, sd, log, pause):
    t0 = time.time()
    time.sleep(pause)
    out = nmath.pnorm(x, 0.0, sd)
    with open(log, "a") as f:
        f.write(f"compute {float(x.flat[0])!r} {t0!r} {time.time()!r} {os.getpid()}\\n")
    return out
'''


def _sweep(tmp: Path, log: Path, pause: float = 0.0) -> Sweep:
    (tmp / "logged.py").write_text(LOGGED)
    return Sweep.from_dict({
        "sweep": {"function": "logged.py:logged_pnorm", "name": "p",
                  "chunks": {"x": 10, "sd": 4}},
        "axes": {"x": {"linspace": [-4.0, 4.0, 60]}, "sd": {"values": [0.5, 1.0, 2.0, 4.0]}},
        "args": {"log": str(log), "pause": pause},
    }, tmp)


def _events(log: Path) -> list[tuple[str, float, float, float, int]]:
    """(what, x of the chunk, start, end, pid) of every line of the log."""
    out = []
    for line in log.read_text().splitlines() if log.exists() else []:
        what, x, t0, t1, pid = line.split()
        out.append((what, float(x), float(t0), float(t1), int(pid)))
    return out


def _overlapped(events: list[tuple[str, float, float, float, int]]) -> list[tuple[float, float]]:
    """(x of a chunk computing, x of a chunk being written) for each such pair at one time."""
    computes = [e for e in events if e[0] == "compute"]
    writes = [e for e in events if e[0] == "write"]
    return [(c[1], w[1]) for c in computes for w in writes
            if c[1] != w[1] and c[2] < w[3] and w[2] < c[3]]


def _plain(s: Sweep, out: Path) -> Any:
    """The store written chunk after chunk, in this thread: no overlap."""
    st = store.Store(out)
    sweep, _ = st.open(s, resume=False, overwrite=False)
    st.create(sweep, None)
    for idx in sweep.chunk_indices():
        st.write_chunk(sweep, idx, evaluate_chunk(sweep, idx))
    st.fold()
    return open_result(out)


def _same(a: Any, b: Any) -> None:
    for name in ("p", "_daskcl/checksum", "_daskcl/done"):
        assert np.array_equal(a[name][...], b[name][...], equal_nan=name == "p"), name


def _slow_writes(log: str, pause: float) -> None:
    """In a worker (client.run): each chunk's write takes ``pause`` s more and is logged, and
    is not quick (a slow store's: its task leaves its thread to write)."""
    from daskcl.sweep.store import Store

    real = Store.write_chunk
    Store.quick = lambda self, nbytes: False   # type: ignore[method-assign]

    def write_chunk(self: Any, sweep: Any, index: Any, results: Any) -> None:
        t0 = time.time()
        time.sleep(pause)
        real(self, sweep, index, results)
        x = float(sweep.axes[0].values[sweep.chunk_slices(index)[0].start])
        with open(log, "a") as f:
            f.write(f"write {x!r} {t0!r} {time.time()!r} {os.getpid()}\n")

    Store.write_chunk = write_chunk     # type: ignore[method-assign]


@pytest.fixture(scope="module")
def client1() -> Iterator[Any]:
    """One worker of one thread, as deploy/ starts them (``--nthreads 1``)."""
    with local_cluster(1, threads_per_worker=1, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(1, timeout=120)
        yield client


def test_a_one_thread_worker_computes_while_it_writes(client1: Any, tmp_path: Path) -> None:
    log = tmp_path / "events.log"
    s = _sweep(tmp_path, log, pause=0.1)
    client1.run(_slow_writes, str(log), 0.4)
    try:
        res = run(s, tmp_path / "o.zarr", client1)
    finally:
        client1.restart()  # the worker's write_chunk as it was
    assert (res.computed, res.skipped) == (6, 0)
    ev = _events(log)
    assert sorted(Counter(e[0] for e in ev).items()) == [("compute", 6), ("write", 6)]
    # Chunk after chunk, one thread would never compute during a write: here the chunks
    # after the first computed while earlier ones were written.
    busy = {c for c, _ in _overlapped(ev)}
    assert len(busy) >= 4, _overlapped(ev)
    _same(open_result(tmp_path / "o.zarr"), _plain(_sweep(tmp_path, tmp_path / "ref.log"),
                                                    tmp_path / "ref.zarr"))


def _log_leaving(log: str) -> None:
    """In a worker (client.run): each time a chunk task leaves its thread, a line in ``log``."""
    from daskcl.sweep import runner

    real = runner._leave_thread_pool

    def leave() -> None:
        with open(log, "a") as f:
            f.write("leave\n")
        real()

    runner._leave_thread_pool = leave


def test_a_quick_write_keeps_the_thread(client1: Any, tmp_path: Path) -> None:
    """Small chunks into a local store are written by the task in its thread (leaving costs
    more than such a write); reading finished chunks back, on resume, leaves it."""
    log = tmp_path / "leave.log"
    s = _sweep(tmp_path, tmp_path / "events.log")
    client1.run(_log_leaving, str(log))
    try:
        res = run(s, tmp_path / "o.zarr", client1)
        assert (res.computed, res.skipped) == (6, 0) and not log.exists()
        res = run(s, tmp_path / "o.zarr", client1, resume=True)
        assert (res.computed, res.skipped) == (0, 6)
        assert log.read_text() == "leave\n" * 6
    finally:
        client1.restart()


def test_this_process_computes_while_it_writes(tmp_path: Path, monkeypatch: Any) -> None:
    log = tmp_path / "events.log"
    s = _sweep(tmp_path, log, pause=0.05)
    real = store.Store.write_chunk

    def write_chunk(self: Any, sweep: Sweep, index: tuple[int, ...], results: Any) -> None:
        t0 = time.time()
        time.sleep(0.3)
        real(self, sweep, index, results)
        x = float(sweep.axes[0].values[sweep.chunk_slices(index)[0].start])
        with open(log, "a") as f:
            f.write(f"write {x!r} {t0!r} {time.time()!r} {os.getpid()}\n")

    monkeypatch.setattr(store.Store, "write_chunk", write_chunk)
    res = run(s, tmp_path / "o.zarr", client="sync")
    assert (res.computed, res.skipped) == (6, 0)
    ev = _events(log)
    assert len({c for c, _ in _overlapped(ev)}) >= 4, _overlapped(ev)
    # at most two chunks are written at once
    writes = sorted((e[2], e[3]) for e in ev if e[0] == "write")
    assert max(sum(1 for a, b in writes if a <= t < b) for t, _ in writes) <= runner._SYNC_WRITES
    monkeypatch.setattr(store.Store, "write_chunk", real)
    _same(open_result(tmp_path / "o.zarr"), _plain(_sweep(tmp_path, tmp_path / "ref.log"),
                                                    tmp_path / "ref.zarr"))


def _kill_in_write(row: int) -> None:
    """In a worker (client.run): the write of the zarr chunk starting at ``row`` kills the
    process once that piece is on disk (the other pieces of its chunk may or may not be)."""
    from daskcl.sweep import chunks as st

    real = st._put

    def put(target: Any, where: tuple[slice, ...], values: Any) -> None:
        real(target, where, values)
        if where[0].start == row:
            os.kill(os.getpid(), signal.SIGKILL)

    st._put = put


def test_a_worker_killed_during_a_write_loses_nothing(client1: Any, tmp_path: Path,
                                                      monkeypatch: Any) -> None:
    """Tasks of 10 x 4 values stored as zarr chunks of 2 x 4: the worker dies right after the
    third piece of the third chunk reached the disk.  The nanny starts another, the chunk (and
    any other unmarked one) is computed again, and the store equals one written chunk after
    chunk."""
    monkeypatch.setattr(spec, "_STORE_CHUNK_ELEMENTS", 8)
    log = tmp_path / "events.log"
    s = _sweep(tmp_path, log)
    assert s.store_chunks == (2, 4)
    first = next(iter(worker_devices(client1).values()))["pid"]
    client1.run(_kill_in_write, 24)
    run(s, tmp_path / "o.zarr", client1)
    client1.wait_for_workers(1, timeout=120)
    assert next(iter(worker_devices(client1).values()))["pid"] != first  # it was killed
    ev = [e for e in _events(log) if e[0] == "compute"]
    third = {e[4] for e in ev if e[1] == s.axes[0].values[20]}
    assert first in third and len(third) == 2, ev  # computed again by the new worker
    assert store.verify(str(tmp_path / "o.zarr")) == (6, [], [])
    _same(open_result(tmp_path / "o.zarr"), _plain(_sweep(tmp_path, tmp_path / "ref.log"),
                                                    tmp_path / "ref.zarr"))


def test_a_process_killed_during_a_write_resumes(tmp_path: Path) -> None:
    """A sweep in one process (``client="sync"``) killed right after the third piece of the
    third chunk reached the disk: that chunk is unmarked (the piece is in the store), every
    marked chunk matches its checksum, and resume computes the unmarked ones into the store
    a plain run writes."""
    s = _sweep(tmp_path, tmp_path / "events.log")
    out = tmp_path / "o.zarr"
    (tmp_path / "spec.json").write_text(json.dumps(s.spec))
    script = tmp_path / "killed.py"
    script.write_text(textwrap.dedent(f'''\
        import json, os, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from daskcl.sweep import Sweep, chunks, run, spec
        spec._STORE_CHUNK_ELEMENTS = 8
        real = chunks._put

        def put(target, where, values):
            real(target, where, values)
            if where[0].start == 24:
                os.kill(os.getpid(), signal.SIGKILL)

        chunks._put = put
        d = json.loads(open({str(tmp_path / "spec.json")!r}).read())
        run(Sweep.from_dict(d, {str(tmp_path)!r}), {str(out)!r}, client="sync")
        '''))
    r = run_python([str(script)], timeout=300)
    assert r.returncode == -signal.SIGKILL, r.stderr
    g = open_result(out)
    # the marks: the arrays' (none yet) and the killed run's journal
    assert not g["_daskcl/done"][...].any()
    done = read_book(g, Journal(str(out), None, "_daskcl/done")).done[:, 0].tolist()
    assert done[2] == 0 and 0 < sum(done) < 6
    assert np.array_equal(g["p"][24:26], _plain(_sweep(tmp_path, tmp_path / "ref.log"),
                                                tmp_path / "ref.zarr")["p"][24:26])
    missing = [(i, 0) for i in range(6) if not done[i]]
    assert store.verify(str(out)) == (6, [], missing)
    with pytest.warns(RuntimeWarning, match="taking over the store from a run that ended"):
        res = run(_sweep(tmp_path, tmp_path / "events.log"), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (len(missing), 6 - len(missing))
    _same(open_result(out), open_result(tmp_path / "ref.zarr"))
    assert store.verify(str(out)) == (6, [], [])

