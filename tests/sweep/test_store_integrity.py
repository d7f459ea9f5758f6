# SPDX-License-Identifier: GPL-2.0-or-later
"""What a sweep store guarantees: --overwrite replaces only a store daskcl wrote; a changed
function, kernel or spec refuses to resume, naming what changed; finished chunks carry
checksums that resume and ``daskcl sweep verify`` check; a read-only store fails before
anything is computed; a full disk ends in one line with the store resumable; and the client's
memory does not grow with the number of chunks.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import re
import shutil
import stat
import subprocess
import sys
import tracemalloc
import warnings
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from support.procs import run_python

from daskcl import cli, nmath
from daskcl.runtime.library import default_root
from daskcl.sweep import (
    Sweep,
    SweepError,
    chunks,
    contents,
    layout,
    open_result,
    run,
    runner,
    store,
)
from daskcl.sweep.store import read_info


def _spec(**sweep: Any) -> dict[str, Any]:
    return {"sweep": {"function": "pgamma", "chunks": {"q": 8, "shape": 3}, **sweep},
            "axes": {"q": {"linspace": [0.0, 20.0, 21]},
                     "shape": {"values": [0.5, 1.0, 2.5, 10.0]}},
            "args": {"scale": 0.5}}


def _want() -> np.ndarray:
    q, shape = np.linspace(0.0, 20.0, 21), np.array([0.5, 1.0, 2.5, 10.0])
    return np.asarray(nmath.pgamma(q[:, None], shape[None, :], 0.5))


def _toml(path: Path, function: str = "pgamma", extra: str = "") -> Path:
    path.write_text(f'[sweep]\nfunction = "{function}"\nchunks = {{ q = 8, shape = 3 }}\n{extra}'
                    '[axes]\nq = { linspace = [0.0, 20.0, 21] }\n'
                    'shape = { values = [0.5, 1.0, 2.5, 10.0] }\n[args]\nscale = 0.5\n')
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


# --- overwrite ---------------------------------------------------------------------------------


def test_overwrite_leaves_what_daskcl_did_not_write(tmp_path: Path, capsys: Any) -> None:
    s = Sweep.from_dict(_spec())
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "thesis.tex").write_text("\\chapter{Results}\n")
    (thesis / "figs").mkdir()
    (thesis / "figs" / "a.pdf").write_bytes(b"%PDF")
    kept = _tree(thesis)
    with pytest.raises(SweepError, match=r"is not a zarr group \(it holds figs, thesis.tex\): "
                       "--overwrite replaces only a store written by daskcl sweep"):
        run(s, thesis, client="sync", overwrite=True)
    assert _tree(thesis) == kept
    # A zarr store of someone else's.
    foreign = tmp_path / "foreign.zarr"
    g = zarr.open_group(str(foreign), mode="w")
    g.create_array("data", shape=(3,), dtype="float64")[...] = [1.0, 2.0, 3.0]
    before = _tree(foreign)
    with pytest.raises(SweepError, match="is a zarr group that daskcl did not write"):
        run(s, foreign, client="sync", overwrite=True)
    assert _tree(foreign) == before
    assert zarr.open_group(str(foreign), mode="r")["data"][...].tolist() == [1.0, 2.0, 3.0]
    # The command says the same in one line, and keeps the directory.
    spec = _toml(tmp_path / "s.toml")
    assert cli.main(["sweep", str(spec), "--out", str(thesis), "--overwrite", "--sync",
                     "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {thesis} exists and is not a zarr")
    assert _tree(thesis) == kept


def test_overwrite_replaces_a_daskcl_store_and_nothing_else_in_it(tmp_path: Path) -> None:
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    info = read_info(open_result(out))
    assert info["format"] == "daskcl-sweep/4"
    # A file the user put inside the store: daskcl did not write it, so it is not deleted.
    (out / "notes.txt").write_text("keep me")
    other = Sweep.from_dict({**_spec(), "args": {"scale": 2.0}})
    with pytest.raises(SweepError, match=r"is a daskcl sweep store but also holds notes.txt, "
                       "which daskcl did not write"):
        run(other, out, client="sync", overwrite=True)
    assert (out / "notes.txt").read_text() == "keep me"
    np.testing.assert_array_equal(open_result(out)["pgamma"][...], _want())
    (out / "notes.txt").unlink()
    # Files inside daskcl's own entries (an array's directory, the bookkeeping group) and a
    # link there: --overwrite deletes whole entries, so these stop it too (they were deleted).
    (out / "pgamma" / "mine").mkdir()
    (out / "pgamma" / "mine" / "results.csv").write_text("keep me")
    (out / "q" / "README").write_text("keep me")
    (out / "_daskcl" / "notes.txt").write_text("keep me")
    (tmp_path / "elsewhere.txt").write_text("keep me")
    (out / "shape" / "c" / "link").symlink_to(tmp_path / "elsewhere.txt")
    before = _tree(out)
    with pytest.raises(SweepError, match=r"also holds _daskcl/notes.txt, pgamma/mine/results"
                       r".csv, q/README, shape/c/link, which daskcl did not write"):
        run(other, out, client="sync", overwrite=True)
    assert _tree(out) == before
    for extra in ("pgamma/mine", "q/README", "_daskcl/notes.txt", "shape/c/link"):
        p = out / extra
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    # what a killed run's writability probe leaves is daskcl's own
    (out / "pgamma" / "c" / "daskcl-probe-0123456789ab").write_bytes(b"")
    res = run(other, out, client="sync", overwrite=True)
    assert res.computed == 6
    got = open_result(out)["pgamma"][...]
    assert np.array_equal(got, nmath.pgamma(np.linspace(0, 20, 21)[:, None],
                                            [0.5, 1.0, 2.5, 10.0], 2.0))


@pytest.mark.parametrize(("stray", "gone"), [
    ("q/c/9", None),                        # q has one chunk
    ("pgamma/c/3/0", None),                 # beyond the grid of 3 x 2 chunks
    ("pgamma/c/0/2", None),
    ("pgamma/c/1", "pgamma/c/1"),           # too few indices (where daskcl's chunks were)
    ("q/c/0/0", "q/c/0"),                   # too many
    ("pgamma/c/01/1", None),                # not how zarr spells an index
    ("_daskcl/done/c/7/0", None),
    ("_daskcl/checksum/c/0/0/1", None),
    ("pgamma/c/0/daskcl-probe-0123456789ab", None),   # a probe goes beside the chunks only
])
def test_overwrite_leaves_files_named_like_chunks_beyond_the_grid(tmp_path: Path, stray: str,
                                                                   gone: str | None) -> None:
    """--overwrite took any ``<array>/c/<digits>/...`` for a chunk of daskcl's and deleted a
    user's file there.  A chunk key is daskcl's only with one index per dimension of its
    array, each within the array's grid of chunks (from its zarr metadata), as a regular
    file; anything else stops the overwrite, which deletes nothing."""
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    if gone is not None:
        p = out / gone
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    made = [d for d in (out / stray).parents if not d.exists()]   # the user's directories
    (out / stray).parent.mkdir(parents=True, exist_ok=True)
    (out / stray).write_text("keep me")
    before = _tree(out)
    other = Sweep.from_dict({**_spec(), "args": {"scale": 2.0}})
    with pytest.raises(SweepError, match=rf"is a daskcl sweep store but also holds {stray}, "
                       "which daskcl did not write; it deletes nothing it did not create"):
        run(other, out, client="sync", overwrite=True)
    assert _tree(out) == before and (out / stray).read_text() == "keep me"
    # the dry run says the same
    with pytest.raises(SweepError, match=rf"also holds {stray}, which"):
        store.Store(out).check(other, resume=False, overwrite=True)
    (out / stray).unlink()
    for d in made:      # deepest first: an empty directory of the user's stops it too
        d.rmdir()
    res = run(other, out, client="sync", overwrite=True)
    assert res.computed == 6
    np.testing.assert_array_equal(open_result(out)["pgamma"][...], np.asarray(
        nmath.pgamma(np.linspace(0, 20, 21)[:, None], [0.5, 1.0, 2.5, 10.0], 2.0)))


def test_overwrite_leaves_a_link_named_like_a_chunk(tmp_path: Path) -> None:
    """A link where a chunk of daskcl's would be is not daskcl's (it writes files), nor is a
    FIFO: they stop --overwrite too, and link and target stay."""
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    (tmp_path / "mine.bin").write_bytes(b"keep me")
    (out / "pgamma" / "c" / "1" / "1").unlink()
    (out / "pgamma" / "c" / "1" / "1").symlink_to(tmp_path / "mine.bin")
    before = _tree(out)
    other = Sweep.from_dict({**_spec(), "args": {"scale": 2.0}})
    with pytest.raises(SweepError, match=r"also holds pgamma/c/1/1, which daskcl did not "):
        run(other, out, client="sync", overwrite=True)
    assert _tree(out) == before and (out / "pgamma" / "c" / "1" / "1").is_symlink()
    assert (tmp_path / "mine.bin").read_bytes() == b"keep me"
    (out / "pgamma" / "c" / "1" / "1").unlink()
    (out / "q" / "c" / "0").unlink()
    os.mkfifo(out / "q" / "c" / "0")
    with pytest.raises(SweepError, match=r"holds q/c/0, a FIFO, not a regular file"):
        run(other, out, client="sync", overwrite=True)
    assert stat.S_ISFIFO(os.lstat(out / "q" / "c" / "0").st_mode)


def test_overwrite_leaves_a_users_empty_directory(tmp_path: Path) -> None:
    """An empty directory inside one of daskcl's entries was removed with it: the search for
    what daskcl did not write saw files only.  A user's empty directory stops --overwrite as a
    file does; the empty chunk directories a deleted chunk leaves (``pgamma/c/1``) are
    daskcl's and go."""
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    other = Sweep.from_dict({**_spec(), "args": {"scale": 2.0}})
    for mine in ("pgamma/results", "pgamma/c/0/extra", "q/c/0x", "_daskcl/mine", "pgamma/c/7"):
        (out / mine).mkdir()
        before = _tree(out)
        with pytest.raises(SweepError, match=rf"also holds {mine}/, which daskcl did not"):
            run(other, out, client="sync", overwrite=True)
        assert _tree(out) == before and (out / mine).is_dir()
        (out / mine).rmdir()
    for key in ("1/0", "1/1"):
        (out / "pgamma" / "c" / key).unlink()
    assert (out / "pgamma" / "c" / "1").is_dir()
    assert run(other, out, client="sync", overwrite=True).computed == 6
    assert contents._is_own_dir("pgamma/c", {"pgamma": (3, 2)}.get)
    assert contents._is_own_dir("pgamma/c/2", {"pgamma": (3, 2)}.get)
    assert [r for r in ("pgamma/c/3", "pgamma/c/0/0", "pgamma/d", "pgamma", "x/c")
            if contents._is_own_dir(r, {"pgamma": (3, 2)}.get)] == []


def test_overwrite_knows_chunk_keys_by_the_arrays_metadata(tmp_path: Path,
                                                           monkeypatch: Any) -> None:
    """The grid of chunks comes from each array's zarr v3 metadata (its shards where it is
    sharded; the store's consolidated copy where its own zarr.json is damaged), through fsspec
    as on a local disk."""
    import json

    import fsspec

    g = zarr.open_group(str(tmp_path / "z.zarr"), mode="w")
    g.create_array("a", shape=(10, 3), chunks=(2, 3), shards=(4, 3), dtype="float64")
    g.create_array("b", shape=(10,), chunks=(3,), dtype="float64")
    g.create_array("e", shape=(0, 4), chunks=(2, 2), dtype="float64")
    meta = {n: json.loads((tmp_path / "z.zarr" / n / "zarr.json").read_text()) for n in "abe"}
    assert [contents._chunk_grid(meta[n]) for n in "abe"] == [(3, 1), (4,), (0, 2)]
    assert contents._chunk_grid({**meta["b"], "chunk_key_encoding": {"name": "v2"}}) is None
    assert contents._chunk_grid({**meta["b"], "chunk_key_encoding": {
        "name": "default", "configuration": {"separator": "."}}}) is None
    assert contents._chunk_grid({**meta["b"], "node_type": "group"}) is None
    assert contents._chunk_grid({**meta["b"], "shape": [10, 2]}) is None
    grids = {"a": (3, 1), "_daskcl/done": (2,)}.get
    own = ["zarr.json", "_daskcl/zarr.json", "a/zarr.json", "a/c/2/0", "a/c/0/0",
           "a/c/daskcl-probe-0123456789ab", "_daskcl/done/c/1", "_daskcl/done/zarr.json"]
    stray = ["a/c/3/0", "a/c/0/1", "a/c/0", "a/c", "a/notes", "_daskcl/done/c/2",
             "_daskcl/notes", "a/c/-1/0", "a/c/1/0/daskcl-probe-0123456789ab", "x/c/0",
             "a/c/\u0661/0"]
    assert [contents._is_own_file(r, grids) for r in own] == [True] * len(own)
    assert [r for r in stray if contents._is_own_file(r, grids)] == []
    # a store on fsspec: the same rule (memory:// stands in for a remote store, which sweeps
    # otherwise refuse: it would not outlive the process)
    monkeypatch.setattr(store, "_VOLATILE", ())
    url = f"memory://daskcl-test-{os.getpid()}-{id(tmp_path)}/o.zarr"
    s = Sweep.from_dict(_spec())
    run(s, url, client="sync")
    fs = fsspec.filesystem("memory")
    root = url[len("memory://"):]
    try:
        fs.pipe_file(f"{root}/q/c/9", b"keep me")
        with pytest.raises(SweepError, match=r"also holds q/c/9, which daskcl did not write"):
            run(s, url, client="sync", overwrite=True)
        assert fs.cat_file(f"{root}/q/c/9") == b"keep me"
        fs.rm_file(f"{root}/q/c/9")
        # an array's own metadata damaged: its chunks are known by the consolidated copy
        fs.pipe_file(f"{root}/pgamma/zarr.json", b"{")
        assert run(s, url, client="sync", overwrite=True).computed == 6
    finally:
        fs.rm(root, recursive=True)


def test_resume_with_another_codec_says_the_store_keeps_its_own(tmp_path: Path,
                                                                capsys: Any) -> None:
    """The codec is not part of a sweep's identity: a resume with another one kept the old
    codec without a word.  Now it says so, in one line on the command line."""
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    other = _spec(compressor="zstd:3")
    with pytest.warns(UserWarning, match=r"keeps its codec blosc-lz4:5: the spec's compressor "
                                         r"zstd:3 applies to new stores"):
        run(Sweep.from_dict(other), out, client="sync", resume=True)
    toml = _toml(tmp_path / "s.toml", extra='compressor = "zstd:3"\n')
    with warnings.catch_warnings():
        warnings.simplefilter("always")        # as outside pytest, where it is not an error
        assert cli.main(["sweep", str(toml), "--out", str(out), "--resume", "--sync",
                         "-q"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {out} keeps its codec blosc-lz4:5") and err.count("\n") == 1


@pytest.mark.parametrize(("where", "text", "name"), [
    ("pgamma/zarr.json", '{"zarr_format": 3}', "pgamma"),
    ("_daskcl/done/zarr.json", "null", "_daskcl/done"),
    ("q/zarr.json", "{", "q"),
])
def test_damaged_array_metadata_is_named_by_verify_and_resume(tmp_path: Path, where: str,
                                                              text: str, name: str) -> None:
    """An array's own zarr.json broken: verify said every chunk matched (it read the
    consolidated copy at the top), and resume recomputed every chunk, then failed on it in a
    zarr traceback while consolidating again.  Both now name the array, and change nothing."""
    from daskcl.sweep import verify

    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    (out / where).write_text(text)
    before = _tree(out)
    match = f"the array '{name}' cannot be opened .*the store is damaged: --overwrite"
    with pytest.raises(SweepError, match=match):
        verify(str(out))
    with pytest.raises(SweepError, match=match):
        run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert _tree(out) == before
    assert run(Sweep.from_dict(_spec()), out, client="sync", overwrite=True).computed == 6


def test_a_half_prepared_store_is_replaced(tmp_path: Path, monkeypatch: Any) -> None:
    def killed(*args: Any) -> None:
        raise KeyboardInterrupt

    out = tmp_path / "o.zarr"
    monkeypatch.setattr(layout, "_info", killed)  # after the arrays, before the attributes
    with pytest.raises(KeyboardInterrupt):
        run(Sweep.from_dict(_spec()), out, client="sync")
    monkeypatch.undo()
    assert read_info(open_result(out))["preparing"] is True
    assert sorted(os.listdir(out)) == ["_daskcl", "pgamma", "q", "shape", "zarr.json"]
    assert run(Sweep.from_dict(_spec()), out, client="sync", resume=True).computed == 6
    np.testing.assert_array_equal(open_result(out)["pgamma"][...], _want())
    # the same spec's plain run takes such a store up too (it said "already holds a sweep":
    # a preparing store recorded no identity); another spec's is refused
    shutil.rmtree(out)
    monkeypatch.setattr(layout, "_info", killed)
    with pytest.raises(KeyboardInterrupt):
        run(Sweep.from_dict(_spec()), out, client="sync")
    monkeypatch.undo()
    other = _spec()
    other["axes"]["q"] = {"values": [0.5, 1.0, 2.0, 3.0]}
    with pytest.raises(SweepError, match="already holds a sweep"):
        run(Sweep.from_dict(other), out, client="sync")
    assert run(Sweep.from_dict(_spec()), out, client="sync").computed == 6
    np.testing.assert_array_equal(open_result(out)["pgamma"][...], _want())


def _half_prepared(out: Path, monkeypatch: Any, preparer: dict[str, Any] | None) -> None:
    """A store left "preparing" (its run stopped after the arrays, before the attributes),
    its recorded preparer replaced by ``preparer``."""
    def killed(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(layout, "_info", killed)
    with pytest.raises(KeyboardInterrupt):
        run(Sweep.from_dict(_spec()), out, client="sync")
    monkeypatch.undo()
    group = zarr.open_group(str(out), mode="r+")
    info = read_info(group)
    assert info is not None and info["preparing"] is True
    assert info["preparer"]["pid"] == os.getpid()          # this process prepared it
    info["preparer"] = preparer
    group.attrs["daskcl"] = json.dumps(info)


def test_a_store_that_another_live_run_prepares_is_not_replaced(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Two runs of one spec started on one --out at once: the second found the first's store
    "preparing" (a GLM envelope takes a while) and replaced it while the first was still
    writing it.  A store records the run that prepares it (host, pid and the process's start);
    while that process lives, another run refuses the store, --overwrite too, and leaves it as
    it is.  Once it has ended, the store is taken up as before (a run stopped by Ctrl-C)."""
    import socket

    out = tmp_path / "o.zarr"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        owner = {"host": socket.gethostname(), "pid": child.pid,
                 "since": store._process_start(child.pid), "started": "2026-11-28T18:00:00+00:00"}
        _half_prepared(out, monkeypatch, owner)
        before = _tree(out)
        for flags in ({}, {"resume": True}, {"overwrite": True}):
            with pytest.raises(SweepError, match=re.escape(
                    f"is being prepared by another run on this machine (process {child.pid}, "
                    "started 2026-11-28T18:00:00+00:00); let it finish")):
                run(Sweep.from_dict(_spec()), out, client="sync", **flags)
        assert _tree(out) == before
        # a later process given the same pid is not that run
        assert store._preparer_alive({**owner, "since": "1"}) is False
    finally:
        child.kill()
        child.wait()
    assert store._preparer_alive(owner) is False
    assert run(Sweep.from_dict(_spec()), out, client="sync").computed == 6
    np.testing.assert_array_equal(open_result(out)["pgamma"][...], _want())
    assert "preparer" not in read_info(open_result(out))     # it goes with the marker


def test_a_store_prepared_on_another_host_is_replaced_only_with_overwrite(
        tmp_path: Path, monkeypatch: Any) -> None:
    """A run on another node (a shared file system) cannot be seen from here: its preparing
    store is refused, the message saying that --overwrite starts it again once that run has
    ended.  A store of an earlier daskcl, which recorded no preparer, is taken up as before."""
    out = tmp_path / "o.zarr"
    owner = {"host": "node-elsewhere-17", "pid": 4242, "since": "99", "started": "then"}
    _half_prepared(out, monkeypatch, owner)
    for flags in ({}, {"resume": True}):
        with pytest.raises(SweepError, match=re.escape(
                "is being prepared by a run on node-elsewhere-17 (process 4242, started then), "
                "which this machine cannot see; if that run has ended, --overwrite starts it "
                "again")):
            run(Sweep.from_dict(_spec()), out, client="sync", **flags)
    assert run(Sweep.from_dict(_spec()), out, client="sync", overwrite=True).computed == 6
    shutil.rmtree(out)
    _half_prepared(out, monkeypatch, None)
    assert run(Sweep.from_dict(_spec()), out, client="sync").computed == 6
    np.testing.assert_array_equal(open_result(out)["pgamma"][...], _want())


# --- identity ----------------------------------------------------------------------------------


def test_changed_function_code_refuses_resume(tmp_path: Path) -> None:
    f = tmp_path / "f.py"
    f.write_text("def g(x, k=1.0):\n    return 2.0 * x * k\n")
    spec = {"sweep": {"function": "f.py:g", "chunks": {"x": 2}},
            "axes": {"x": {"values": [1.0, 2.0, 3.0, 4.0]}}}
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(spec, tmp_path), out, client="sync")
    zarr.open_group(str(out), mode="r+")["_daskcl/done"][1] = 0  # interrupted: one chunk to go
    # Same name, same parameters, other code: resuming would mix 2x and 3x.
    f.write_text("def g(x, k=1.0):\n    return 3.0 * x * k\n")
    with pytest.raises(SweepError, match=r"holds a different sweep \(f.py:g, axes \['x'\]\): "
                       "the Python function's code differs; resume needs the same spec and code"):
        run(Sweep.from_dict(spec, tmp_path), out, client="sync", resume=True)
    assert open_result(out)["g"][...].tolist() == [2.0, 4.0, 6.0, 8.0]
    # Args and axes are named too.
    f.write_text("def g(x, k=1.0):\n    return 2.0 * x * k\n")
    changed = {**spec, "args": {"k": 2.0}, "axes": {"x": {"values": [1.0, 2.0, 3.0, 5.0]}}}
    with pytest.raises(SweepError, match="the axes, the arguments differ"):
        run(Sweep.from_dict(changed, tmp_path), out, client="sync", resume=True)
    res = run(Sweep.from_dict(spec, tmp_path), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (1, 1)


def test_changed_kernel_source_refuses_resume(tmp_path: Path, monkeypatch: Any) -> None:
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    shipped = default_root()
    for name, unit in (("changed", "pgamma"), ("unrelated", "qtukey")):
        lib = tmp_path / name
        shutil.copytree(shipped, lib)
        path = lib / "nmath" / f"{unit}.cl"
        path.write_text(path.read_text() + "\n/* edited */\n")
    monkeypatch.setenv("DASKCL_LIBRARY", str(tmp_path / "changed"))
    with pytest.raises(SweepError, match="the kernel source differs"):
        run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    # A unit pgamma does not use leaves its identity alone.
    monkeypatch.setenv("DASKCL_LIBRARY", str(tmp_path / "unrelated"))
    assert run(Sweep.from_dict(_spec()), out, client="sync", resume=True).computed == 0


# --- checksums ---------------------------------------------------------------------------------


def test_corrupted_and_deleted_chunks_are_found_and_recomputed(tmp_path: Path,
                                                               capsys: Any) -> None:
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec(compressor="none")), out, client="sync")
    assert store.verify(str(out)) == (6, [], [])
    assert cli.main(["sweep", "verify", str(out)]) == 0
    assert "all 6 chunks match their checksums" in capsys.readouterr().out
    # Uncompressed: overwritten bytes read back as other numbers.
    c = out / "pgamma" / "c" / "1" / "0"
    raw = bytearray(c.read_bytes())
    raw[8:16] = np.float64(0.25).tobytes()
    c.write_bytes(bytes(raw))
    (out / "pgamma" / "c" / "2" / "1").unlink()
    assert open_result(out)["pgamma"][8, 1] == 0.25  # the second value of chunk (1, 0)
    assert store.verify(str(out)) == (6, [(1, 0), (2, 1)], [])
    assert cli.main(["sweep", "verify", str(out)]) == 1
    got = capsys.readouterr()
    assert "2 of 6 finished chunks do not match their checksums" in got.out
    assert "chunk (1, 0)" in got.out and "chunk (2, 1)" in got.out and "--resume" in got.err
    with pytest.warns(RuntimeWarning, match=r"2 finished chunk\(s\) no longer matched their "
                      r"checksums \(corrupted or deleted\) and were computed again: \(1, 0\), "
                      r"\(2, 1\)"):
        res = run(Sweep.from_dict(_spec(compressor="none")), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (2, 4)
    assert np.array_equal(open_result(out)["pgamma"][...], _want())
    assert store.verify(str(out)) == (6, [], [])
    assert read_info(open_result(out))["runs"][-1]["chunks_repaired"] == 2


def test_verify_reports_unfinished_chunks_and_refuses_foreign_stores(tmp_path: Path,
                                                                    capsys: Any) -> None:
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    zarr.open_group(str(out), mode="r+")["_daskcl/done"][0, 1] = 0
    assert store.verify(str(out)) == (6, [], [(0, 1)])
    assert cli.main(["sweep", "verify", str(out)]) == 1
    assert "1 of 6 chunks are not computed yet" in capsys.readouterr().out
    (tmp_path / "plain").mkdir()
    assert cli.main(["sweep", "verify", str(tmp_path / "plain")]) == 1
    assert "is not a" in capsys.readouterr().err


# --- writability and full disks ------------------------------------------------------------------


def _drop_root() -> list[str]:
    """A command prefix under which root obeys file permissions, as other users do."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", sys.executable]


def test_read_only_store_fails_before_computing(tmp_path: Path) -> None:
    calls = tmp_path / "calls.log"
    (tmp_path / "f.py").write_text(
        "import numpy as np\n"
        f"LOG = {str(calls)!r}\n"
        "def g(x):\n"
        "    with open(LOG, 'a') as f:\n"
        "        f.write('call\\n')\n"
        "    return np.sqrt(x)\n")
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "f.py:g"\nchunks = { x = 2 }\n[axes]\n'
                    'x = { values = [1.0, 4.0, 9.0, 16.0] }\n')
    out = tmp_path / "o.zarr"
    run(Sweep.from_toml(spec), out, client="sync")
    zarr.open_group(str(out), mode="r+")["_daskcl/done"][1] = 0
    calls.write_text("")
    for p in [out, *out.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        cmd = _drop_root()
        args = ["-m", "daskcl", "sweep", str(spec), "--out", str(out), "--resume", "--sync", "-q"]
        if cmd:
            r = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=240,
                               env={**os.environ, "PYTHONFAULTHANDLER": "1"})
        else:
            r = run_python(args, timeout=240)
    finally:
        for p in [out, *out.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"error: cannot write the store {out}: [Errno 13] Permission "
                               "denied"), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert calls.read_text() == ""  # nothing was computed
    res = run(Sweep.from_toml(spec), out, client="sync", resume=True)
    assert res.computed == 1 and calls.read_text() == "call\n"
    assert open_result(out)["g"][...].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_disk_full_is_one_line_and_the_store_resumes(tmp_path: Path, monkeypatch: Any,
                                                     capsys: Any) -> None:
    import zarr.storage._local as local

    spec = _toml(tmp_path / "s.toml")
    out = tmp_path / "o.zarr"
    real_put, real_file = local._put, chunks._put_file
    written: list[str] = []

    def full(path: Any) -> None:
        if "/pgamma/c/" in str(path):
            if len(written) == 3:  # the fourth chunk finds the disk full
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            written.append(str(path))

    def put(path: Path, value: Any, exclusive: bool = False) -> int:   # zarr's own write
        full(path)
        return int(real_put(path, value, exclusive))

    def put_file(path: str, data: Any) -> None:     # daskcl's (LocalChunks)
        full(path)
        real_file(path, data)

    monkeypatch.setattr(local, "_put", put)
    monkeypatch.setattr(chunks, "_put_file", put_file)
    assert cli.main(["sweep", str(spec), "--out", str(out), "--sync", "-q"]) == 1
    err = capsys.readouterr().err
    assert err == f"error: disk full writing {out}; free space and run again with --resume\n"
    assert int(open_result(out)["_daskcl/done"][...].sum()) == 3
    monkeypatch.setattr(local, "_put", real_put)
    monkeypatch.setattr(chunks, "_put_file", real_file)
    assert cli.main(["sweep", str(spec), "--out", str(out), "--resume", "--sync", "-q"]) == 0
    assert "3 chunks computed" in capsys.readouterr().out
    assert np.array_equal(open_result(out)["pgamma"][...], _want())


# --- client memory ------------------------------------------------------------------------------


class _FakeFuture:
    """A finished task: holds its pickled arguments while referenced, as the scheduler holds
    a task's specification until its future is released."""

    def __init__(self, key: str, spec: bytes, result: Any, client: _FakeClient) -> None:
        self.key, self._spec, self._result = key, spec, result
        client.live += len(spec)
        weakref.finalize(self, client.release, len(spec))

    def result(self) -> Any:
        return self._result

    def done(self) -> bool:
        return True

    def release(self) -> None:
        pass


class _FakeClient:
    """Runs each submitted task at once, in-process; counts what the scheduler would hold."""

    loop = None

    def __init__(self) -> None:
        self.live = 0
        self.peak = 0
        self.sizes: dict[str, list[int]] = {}  # pickled task sizes by function

    def release(self, n: int) -> None:
        self.live -= n

    def run(self, fn: Any, *args: Any) -> None:
        pass

    def nthreads(self) -> dict[str, int]:
        return {"tcp://127.0.0.1:1": 2, "tcp://127.0.0.1:2": 2}

    def replicate(self, futures: list[Any]) -> None:
        pass

    def submit(self, fn: Any, *args: Any, key: str, pure: bool, retries: int) -> _FakeFuture:
        # a future travels as its key; the task runs with its result
        spec = pickle.dumps((fn, [a.key if isinstance(a, _FakeFuture) else a for a in args]))
        self.sizes.setdefault(fn.__name__, []).append(len(spec))
        call = [a.result() if isinstance(a, _FakeFuture) else a for a in args]
        fut = _FakeFuture(key, spec, fn(*call), self)
        self.peak = max(self.peak, self.live)
        if self.live > 64 << 20:
            raise MemoryError(f"{self.live >> 20} MiB of tasks held at once")
        return fut

    def map(self, fn: Any, *iterables: Any, key: list[str], pure: bool, retries: int
            ) -> list[_FakeFuture]:
        return [self.submit(fn, *args, key=k, pure=pure, retries=retries)
                for *args, k in zip(*iterables, key)]

    def gather(self, futures: list[Any]) -> list[Any]:
        return [f.result() for f in futures]

    def cancel(self, futures: list[Any]) -> None:
        pass


class _FakeAsCompleted:
    def __init__(self, futures: Any = None, loop: Any = None) -> None:
        self.queue: list[Any] = list(futures or [])

    def add(self, fut: Any) -> None:
        self.queue.append(fut)

    def batches(self) -> Iterator[list[Any]]:
        while self.queue:
            yield [self.queue.pop(0)]


def _report(sweep: Sweep, url: str, options: Any, index: tuple[int, ...], fresh: bool = False
            ) -> dict[str, Any]:
    """A chunk task that computes and writes nothing, only reports."""
    return {"index": index, "skipped": False, "device": "stub", "warnings": []}


def test_client_memory_stays_flat_over_100000_chunks(tmp_path: Path, monkeypatch: Any) -> None:
    """The real submission loop (_run_client) over 10^5 chunks, with a client that runs each
    task at once and a task that only reports: at most 8 MiB of the client's allocations and
    1 MiB of pickled tasks are alive at any time (about 0.7 MiB, and the one task holding the
    sweep, 17 KB, plus the window's few KiB, here; submitted all at once, each task carrying
    the sweep, they would be 10^5 pickled sweeps of 17 KB)."""
    import distributed

    s = Sweep.from_dict({"sweep": {"function": "dnorm", "chunks": {"x": 1, "sd": 10}},
                         "axes": {"x": {"linspace": [-3.0, 3.0, 1000]},
                                  "sd": {"linspace": [0.5, 2.0, 1000]}}})
    assert s.n_chunks == 100_000
    sweep_bytes = len(pickle.dumps(s))
    assert sweep_bytes > 16_000

    monkeypatch.setattr(runner, "chunk_task", _report)
    monkeypatch.setattr(distributed, "as_completed", _FakeAsCompleted)
    client = _FakeClient()
    tally = runner._Tally(str(tmp_path / "o.zarr"))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        runner._run_client(s, store.Store(tmp_path / "o.zarr"), client, s.chunk_indices(),
                           None, tally)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert tally.computed == 100_000 and tally.devices == {"stub"}
    # the sweep travels once, as the result of one task; each chunk task names it
    assert len(client.sizes["_hold"]) == 1 and client.sizes["_hold"][0] > sweep_bytes
    assert len(client.sizes["_report"]) == 100_000 and max(client.sizes["_report"]) < 2000
    assert client.peak < 1 << 20, client.peak
    assert peak < 8 << 20, f"{peak / 2**20:.1f} MiB"


_SCHEDULER: list[Any] = []
_HELD: list[int] = []


def _count_tasks(sweep: Sweep, url: str, options: Any, index: tuple[int, ...],
                 fresh: bool = False) -> dict[str, Any]:
    """A chunk task that notes how many tasks the (in-process) scheduler holds."""
    _HELD.append(len(_SCHEDULER[0].tasks))
    return {"index": index, "skipped": False, "device": "stub", "warnings": []}


def test_a_real_client_holds_only_the_window(tmp_path: Path, monkeypatch: Any) -> None:
    """The same loop on a real (in-process) cluster: the scheduler never holds more than the
    window of 32 tasks (16 per worker thread: the chunks are quick to write), the task holding
    the sweep and the few finished tasks whose release it has not processed yet (all at once:
    600)."""
    import distributed

    s = Sweep.from_dict({"sweep": {"function": "dnorm", "chunks": {"x": 1}},
                         "axes": {"x": {"linspace": [-3.0, 3.0, 600]}}})
    monkeypatch.setattr(runner, "chunk_task", _count_tasks)
    monkeypatch.setattr(runner, "_warm_names", lambda sweep: [])
    _HELD.clear()
    tally = runner._Tally(str(tmp_path / "o.zarr"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        _SCHEDULER[:] = [cluster.scheduler]
        width = runner._window(client, quick=True)
        runner._run_client(s, store.Store(tmp_path / "o.zarr"), client, s.chunk_indices(),
                           None, tally)
    assert tally.computed == 600 and len(_HELD) == 600
    assert width == 32 and max(_HELD) <= width + 1 + 3, max(_HELD)
