# SPDX-License-Identifier: GPL-2.0-or-later
"""One writer per store: the lease a run holds from its check to its last write."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from support.procs import repo_pythonpath

from daskcl.sweep import Sweep, SweepError, lease, open_result, run, verify
from daskcl.sweep.chunks import read_book
from daskcl.sweep.journal import Journal

_REPO = Path(__file__).resolve().parents[2]
_SLOW = "import time\n\ndef g(x, k=1.0):\n    time.sleep({delay})\n    return x * k\n"


def _slow_spec(tmp_path: Path, k: float = 1.0, delay: float = 0.25, n: int = 30) -> Path:
    (tmp_path / "f.py").write_text(_SLOW.format(delay=delay))
    spec = tmp_path / f"slow-{k:g}.toml"
    spec.write_text(f'[sweep]\nfunction = "f.py:g"\nchunks = {{ x = 1 }}\n'
                    f'[axes]\nx = {{ linspace = [0, {n - 1}, {n}] }}\n[args]\nk = {k}\n')
    return spec


def _start(spec: Path, out: Path, *flags: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(_REPO)}
    return subprocess.Popen([sys.executable, "-m", "daskcl", "sweep", str(spec), "--out",
                             str(out), "--sync", *flags], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _wait_for_chunks(out: Path, proc: subprocess.Popen[str], n: int = 2) -> None:
    """Until the run has marked ``n`` chunks (its lease is then held)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            group = zarr.open_group(str(out), mode="r", use_consolidated=False)
            book = read_book(group, Journal(str(out), None, "_daskcl/done"))   # marks so far
            if int(np.count_nonzero(book.done)) >= n:
                return
        except (OSError, KeyError, ValueError):
            pass
        time.sleep(0.05)
    raise AssertionError("the first run marked no chunk in 120 s")


def _lease_record(out: Path) -> dict[str, Any]:
    meta = json.loads((out / "_daskcl_lease" / "zarr.json").read_text())
    return dict(meta["attributes"]["daskcl_lease"])


def test_overwrite_and_resume_wait_for_a_running_sweep(tmp_path: Path) -> None:
    """Run B with --overwrite while run A computes into the same store: both exited 0 and the
    store held a mix of A's and B's values while describing one run.  B is refused, A's store
    is A's alone."""
    out = tmp_path / "o.zarr"
    a = _start(_slow_spec(tmp_path, k=1.0), out)
    try:
        _wait_for_chunks(out, a)
        record = _lease_record(out)
        assert record["pid"] == a.pid and record["host"]
        other = Sweep.from_toml(_slow_spec(tmp_path, k=2.0, delay=0.0))
        for flags in ({"overwrite": True}, {"resume": True}, {}):
            with pytest.raises(SweepError, match=re.escape(
                    f"{out} is being written by another run (process {a.pid} on ")):
                run(other, out, client="sync", **flags)
        _, stderr = a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            a.kill()
            a.communicate()
    assert a.returncode == 0, stderr
    np.testing.assert_array_equal(open_result(out)["g"][...], np.arange(30.0))
    assert verify(str(out))[1:] == ([], [])
    # the lease goes with the run, from the store and from its consolidated metadata
    assert not (out / "_daskcl_lease").exists()
    top = json.loads((out / "zarr.json").read_text())
    assert not [k for k in top["consolidated_metadata"]["metadata"] if "lease" in k]


def test_a_killed_runs_lease_is_taken_over_with_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "o.zarr"
    spec = _slow_spec(tmp_path, delay=0.1)
    a = _start(spec, out)
    try:
        _wait_for_chunks(out, a)
    finally:
        a.send_signal(signal.SIGKILL)
        a.communicate()
    assert _lease_record(out)["pid"] == a.pid           # left behind by the killed run
    with pytest.warns(RuntimeWarning, match=re.escape(
            f"{out}: taking over the store from a run that ended without releasing it "
            f"(process {a.pid} on ")):
        res = run(Sweep.from_toml(spec), out, client="sync", resume=True)
    assert 0 < res.computed < 30
    np.testing.assert_array_equal(open_result(out)["g"][...], np.arange(30.0))


def _plant(out: Path, **record: Any) -> None:
    (out / "_daskcl_lease").mkdir(parents=True, exist_ok=True)
    (out / "_daskcl_lease" / "zarr.json").write_text(json.dumps(
        {"zarr_format": 3, "node_type": "group", "attributes": {"daskcl_lease": {
            "host": "node-elsewhere-17", "pid": 4242, "since": "9", "token": "t",
            "started": "then", **record}}}))


def test_a_lease_of_another_host_lives_while_it_is_renewed(tmp_path: Path) -> None:
    """A run on another node cannot be seen from here: its lease is live while renewed, and
    taken over once it has not been renewed for STALE_S seconds."""
    out = tmp_path / "o.zarr"
    s = Sweep.from_toml(_slow_spec(tmp_path, delay=0.0, n=4))
    run(s, out, client="sync")
    _plant(out, renewed=time.time() - 5)
    with pytest.raises(SweepError, match="is being written by another run "
                       r"\(process 4242 on node-elsewhere-17, started then\)"):
        run(s, out, client="sync", overwrite=True)
    _plant(out, renewed=time.time() - lease.STALE_S - 1)
    with pytest.warns(RuntimeWarning, match="taking over the store"):
        assert run(s, out, client="sync", overwrite=True).computed == 4


def test_a_new_store_holding_only_a_dead_runs_lease_is_created(tmp_path: Path) -> None:
    """A run killed before it made its store leaves only its lease: the store is made anew."""
    out = tmp_path / "o.zarr"
    _plant(out, renewed=0.0)
    with pytest.warns(RuntimeWarning, match="taking over the store"):
        res = run(Sweep.from_toml(_slow_spec(tmp_path, delay=0.0, n=4)), out, client="sync")
    assert res.computed == 4


def test_a_run_whose_lease_is_taken_stops(tmp_path: Path, monkeypatch: Any) -> None:
    """A run that finds its lease taken over (it renewed too late: a paused node) stops at its
    next chunk with one line, rather than writing on into the other run's store."""
    monkeypatch.setattr(lease, "RENEW_S", 0.05)
    out = tmp_path / "o.zarr"
    s = Sweep.from_toml(_slow_spec(tmp_path, delay=0.1, n=40))
    caught: list[BaseException] = []

    def first() -> None:
        try:
            run(s, out, client="sync")
        except BaseException as exc:
            caught.append(exc)

    t = threading.Thread(target=first)
    t.start()
    deadline = time.monotonic() + 60
    while not (out / "_daskcl" / "done" / "zarr.json").exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    _plant(out, renewed=time.time())
    t.join(60)
    assert not t.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], SweepError), caught
    assert re.search("another run took this store over "
                     r"\(process 4242 on node-elsewhere-17, started then\); this run stops",
                     str(caught[0]))


def test_a_failed_preparation_leaves_nothing(tmp_path: Path, monkeypatch: Any) -> None:
    """An error while the store is prepared (a library that is no library) is said as itself
    and leaves nothing, so that the next run is not blocked."""
    out = tmp_path / "o.zarr"
    s = Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"values": [0.0]}}})
    monkeypatch.setenv("DASKCL_LIBRARY", str(tmp_path / "nonexistent"))
    with pytest.raises(Exception, match="nonexistent") as info:
        run(s, out, client="sync")
    assert "cannot write the store" not in str(info.value)
    assert not out.exists()
    monkeypatch.delenv("DASKCL_LIBRARY")
    assert run(s, out, client="sync").computed == 1


def test_a_store_whose_overwrite_was_killed_is_still_daskcls(
        tmp_path: Path, monkeypatch: Any) -> None:
    """--overwrite deleted the store's entries in name order: killed after the group's
    zarr.json, it left a coordinate array named after it ('zeta') that the next --overwrite
    refused as "not a zarr group" although daskcl made it."""
    import shutil

    out = tmp_path / "o.zarr"
    (tmp_path / "z.py").write_text("def g(zeta):\n    return zeta * 2.0\n")
    s = Sweep.from_dict({"sweep": {"function": "z.py:g", "chunks": {"zeta": 2}},
                         "axes": {"zeta": {"values": [0.0, 1.0, 2.0]}}}, tmp_path)
    run(s, out, client="sync")
    real, calls = shutil.rmtree, []

    def killed(path: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(path)
        if str(path).endswith("zeta"):      # killed as the coordinate array goes
            raise KeyboardInterrupt
        real(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", killed)
    with pytest.raises(KeyboardInterrupt):
        run(s, out, client="sync", overwrite=True)
    monkeypatch.undo()
    assert (out / "zarr.json").is_file()           # removed last: the store is still daskcl's
    assert run(s, out, client="sync", overwrite=True).computed == 2
    assert verify(str(out))[1:] == ([], [])


def _killed_writing(path: Path) -> None:
    """Leave what zarr leaves when its process is killed while it writes ``path``: its
    temporary file, not yet renamed into place."""
    class Killed(BaseException):
        pass

    from zarr.storage import _local

    with pytest.raises(Killed), _local._atomic_write(path, "wb") as f:
        f.write(b"\x00" * 7)
        raise Killed


def test_a_store_killed_while_zarr_wrote_a_file_is_still_daskcls(tmp_path: Path) -> None:
    """A run killed while zarr wrote a chunk or a metadata document (a large chunk takes a
    while) leaves zarr's temporary file beside it (``c/1.<32 hex>.partial``,
    ``zarr.<32 hex>.partial``): --overwrite refused the store as holding what daskcl did not
    write.  Such a file of an own name is daskcl's; one of no chunk of the grid is not."""
    out = tmp_path / "o.zarr"
    s = Sweep.from_dict({"sweep": {"function": "pnorm", "chunks": {"q": 2}},
                         "axes": {"q": {"values": [0.0, 1.0, 2.0]}}})
    run(s, out, client="sync")
    for written in ("zarr.json", "pnorm/zarr.json", "pnorm/c/1", "q/c/0", "_daskcl/done/c/0"):
        _killed_writing(out / written)
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.partial"))
    assert len(left) == 5 and re.fullmatch(r"pnorm/c/1\.[0-9a-f]{32}\.partial", left[1]), left
    assert verify(str(out))[1:] == ([], [])
    assert run(s, out, client="sync", overwrite=True).computed == 2
    assert not list(out.rglob("*.partial"))
    # a temporary file of no chunk of the grid is not zarr's: the store is refused, as before
    _killed_writing(out / "pnorm" / "c" / "7")
    with pytest.raises(SweepError, match=r"also holds pnorm/c/7\.[0-9a-f]{32}\.partial, which "
                       "daskcl did not write"):
        run(s, out, client="sync", overwrite=True)
