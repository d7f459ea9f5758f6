# SPDX-License-Identifier: GPL-2.0-or-later
"""The codec of a sweep store (``sweep.compressor``): parsed, applied, recorded; a task's chunk
written as several zarr chunks (in parallel) or as one shard; the mark written only after
every piece and the checksum."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

from daskcl import nmath
from daskcl.sweep import Sweep, SweepError, chunks, open_result, run, spec, store
from daskcl.sweep.evaluate import evaluate_chunk
from daskcl.sweep.spec import DEFAULT_COMPRESSOR, parse_compressor
from daskcl.sweep.store import read_info

Q = np.linspace(0.0, 20.0, 21)
SHAPE = np.array([0.5, 1.0, 2.5, 10.0])


def _spec(**sweep: Any) -> dict[str, Any]:
    return {"sweep": {"function": "pgamma", "chunks": {"q": 8, "shape": 4}, **sweep},
            "axes": {"q": {"linspace": [0.0, 20.0, 21]},
                     "shape": {"values": [0.5, 1.0, 2.5, 10.0]}},
            "args": {"scale": 0.5}}


def _want() -> np.ndarray:
    return np.asarray(nmath.pgamma(Q[:, None], SHAPE[None, :], 0.5))


def _files(out: Path, name: str) -> list[Path]:
    return sorted(p for p in (out / name / "c").rglob("*") if p.is_file())


@pytest.mark.parametrize(("given", "canonical"), [
    ("zstd", "zstd:3"), ("ZSTD:1", "zstd:1"), ("zstd:22", "zstd:22"), ("blosc-lz4", "blosc-lz4:5"),
    ("blosc-lz4:9", "blosc-lz4:9"), ("blosc-zstd", "blosc-zstd:1"), ("gzip:6", "gzip:6"),
    ("none", "none"), (" none ", "none")])
def test_compressor_names_are_spelled_in_full(given: str, canonical: str) -> None:
    assert parse_compressor(given) == canonical
    assert Sweep.from_dict(_spec(compressor=given)).compressor == canonical


@pytest.mark.parametrize(("given", "message"), [
    ("lz4", r"unknown codec 'lz4'.*known: 'blosc-lz4'"),
    ("zstandard", r"unknown codec 'zstandard' \(did you mean 'zstd'\?\)"),
    ("zstd:0", r"zstd levels are 1 to 22, got 'zstd:0'"),
    ("blosc-lz4:10", r"blosc-lz4 levels are 1 to 9, got 'blosc-lz4:10'"),
    ("gzip:x", r"gzip levels are 1 to 9"),
    ("none:1", r"'none' takes no level"),
    (3, r"give a codec name"),
])
def test_bad_compressors_are_refused(given: Any, message: str) -> None:
    with pytest.raises(SweepError, match=r"sweep\.compressor: " + message):
        Sweep.from_dict(_spec(compressor=given))


@pytest.mark.parametrize(("given", "codec"), [
    (None, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                               "shuffle": "shuffle", "typesize": 8,
                                               "blocksize": 0}}),
    ("blosc-zstd:3", {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
                                                         "shuffle": "shuffle", "typesize": 8,
                                                         "blocksize": 0}}),
    ("zstd:1", {"name": "zstd", "configuration": {"level": 1, "checksum": False}}),
    ("gzip:2", {"name": "gzip", "configuration": {"level": 2}}),
    ("none", None),
])
def test_the_codec_is_applied_and_recorded(tmp_path: Path, given: str | None,
                                           codec: dict[str, Any] | None) -> None:
    out = tmp_path / "o.zarr"
    s = Sweep.from_dict(_spec(**({} if given is None else {"compressor": given})))
    run(s, out, client="sync")
    g = open_result(out)
    assert np.array_equal(g["pgamma"][...], _want())
    want = DEFAULT_COMPRESSOR if given is None else parse_compressor(given)
    assert read_info(g)["compressor"] == want == g.attrs["daskcl_compressor"]
    meta = json.loads((out / "pgamma" / "zarr.json").read_text())
    compressors = [c for c in meta["codecs"] if c["name"] not in ("bytes", "transpose")]
    assert compressors == ([] if codec is None else [codec])
    assert store.verify(str(out)) == (3, [], [])


def test_a_task_of_several_zarr_chunks_writes_each(tmp_path: Path, monkeypatch: Any) -> None:
    """Tasks of 8 x 4 values stored as zarr chunks of 2 x 4: four files a task (the last,
    of 5 rows, three), the same values, checksums over the whole task."""
    monkeypatch.setattr(spec, "_STORE_CHUNK_ELEMENTS", 8)
    s = Sweep.from_dict(_spec())
    assert s.store_chunks == (2, 4) and s.chunks == (8, 4)
    out = tmp_path / "o.zarr"
    run(s, out, client="sync")
    g = open_result(out)
    assert g["pgamma"].chunks == (2, 4) and g["pgamma"].shards is None
    assert np.array_equal(g["pgamma"][...], _want())
    assert len(_files(out, "pgamma")) == 4 + 4 + 3
    assert read_info(g)["shards"] is None
    assert [int(c) for c in g["_daskcl/checksum"][:, 0, 0]] == [
        store.checksum(_want()[i:i + 8]) for i in (0, 8, 16)]
    # a piece changed on disk is found through its task's checksum
    g2 = zarr.open_group(str(out), mode="r+")
    g2["pgamma"][10:12, :] = 0.5
    assert store.verify(str(out)) == (3, [(1, 0)], [])
    with pytest.warns(RuntimeWarning, match=r"1 finished chunk\(s\) no longer matched"):
        res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (1, 2)
    assert np.array_equal(open_result(out)["pgamma"][...], _want())


def test_a_sharded_store_holds_one_file_a_task(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(spec, "_STORE_CHUNK_ELEMENTS", 8)
    s = Sweep.from_dict(_spec())
    out = tmp_path / "o.zarr"
    st = store.Store(out)
    s, book = st.open(s, resume=False, overwrite=False)
    assert book is None
    st.create(s, None, shards=True)
    res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (3, 0)
    g = open_result(out)
    assert g["pgamma"].shards == (8, 4) and g["pgamma"].chunks == (2, 4)
    assert read_info(g)["shards"] == [8, 4]
    assert np.array_equal(g["pgamma"][...], _want())
    assert len(_files(out, "pgamma")) == 3
    assert store.verify(str(out)) == (3, [], [])
    res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (0, 3)


def test_the_mark_waits_for_every_piece(tmp_path: Path, monkeypatch: Any) -> None:
    """A piece that fails to write leaves its chunk unmarked and without a checksum, however
    many other pieces were written; the chunks before it are complete."""
    monkeypatch.setattr(spec, "_STORE_CHUNK_ELEMENTS", 8)
    real = chunks._put

    def put(target: Any, where: tuple[slice, ...], values: np.ndarray) -> None:
        if where[0].start == 12:  # the third piece of the second task
            raise OSError(5, "Input/output error", "pgamma/c/6/0")
        real(target, where, values)

    monkeypatch.setattr(chunks, "_put", put)
    out = tmp_path / "o.zarr"
    # one line, as a cluster's chunk says it (the OSError was raised as it was: a traceback)
    with pytest.raises(SweepError, match=r"chunk \(1, 0\) failed: OSError: .*Input/output "
                       r"error.*run again with --resume") as exc:
        run(Sweep.from_dict(_spec()), out, client="sync")
    assert isinstance(exc.value.__cause__, OSError) and exc.value.__cause__.errno == 5
    g = open_result(out)
    # the third chunk, computed while the second was written, may have been written too
    done = g["_daskcl/done"][:, 0].tolist()
    assert done[:2] == [1, 0] and g["_daskcl/checksum"][1, 0, 0] == 0
    assert np.array_equal(g["pgamma"][8:12], _want()[8:12])  # pieces written before the failure
    missing = [(i, 0) for i in range(3) if not done[i]]
    assert store.verify(str(out)) == (3, [], missing)
    monkeypatch.setattr(chunks, "_put", real)
    res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (len(missing), 3 - len(missing))
    assert np.array_equal(open_result(out)["pgamma"][...], _want())


@pytest.mark.parametrize("compressor", ["none", "zstd:3", "blosc-lz4:5", "gzip:2"])
def test_daskcl_writes_the_chunk_files_zarr_writes(tmp_path: Path, monkeypatch: Any,
                                                   compressor: str) -> None:
    """A local store's whole zarr chunks are encoded and written by daskcl itself
    (``LocalChunks``, without zarr's event loop): the files are those zarr writes for the same
    values, byte for byte; the partial chunk at the array's edge is zarr's to write."""
    monkeypatch.setattr(spec, "_STORE_CHUNK_ELEMENTS", 8)
    mine: list[str] = []
    real = chunks._put_file

    def put_file(path: str, data: Any) -> None:
        mine.append(os.path.relpath(path, tmp_path / "own.zarr"))
        real(path, data)

    monkeypatch.setattr(chunks, "_put_file", put_file)
    run(Sweep.from_dict(_spec(compressor=compressor)), tmp_path / "own.zarr", client="sync")
    monkeypatch.setattr(chunks, "local_chunks", lambda arr: None)
    run(Sweep.from_dict(_spec(compressor=compressor)), tmp_path / "zarr.zarr", client="sync")
    own, theirs = (_files(tmp_path / f, "pgamma") for f in ("own.zarr", "zarr.zarr"))
    assert [p.relative_to(tmp_path / "own.zarr") for p in own] == \
        [p.relative_to(tmp_path / "zarr.zarr") for p in theirs]
    assert len(own) == 11
    for a, b in zip(own, theirs):
        mine_bytes, zarrs = a.read_bytes(), b.read_bytes()
        if compressor.startswith("gzip"):   # bytes 4-7 of a gzip header: when it was written
            assert gzip.decompress(mine_bytes) == gzip.decompress(zarrs)
            mine_bytes, zarrs = mine_bytes[:4] + mine_bytes[8:], zarrs[:4] + zarrs[8:]
        assert mine_bytes == zarrs, a
    # rows 0-19 in zarr chunks of 2 x 4 (the task chunks: 8, 8, 5 rows); row 20 alone is partial
    assert sorted(mine) == sorted(f"pgamma/c/{i}/0" for i in range(10))
    assert np.array_equal(open_result(tmp_path / "own.zarr")["pgamma"][...], _want())
    assert store.verify(str(tmp_path / "own.zarr")) == (3, [], [])


def test_only_whole_chunks_of_plain_local_arrays_are_written_by_daskcl(tmp_path: Path) -> None:
    g = zarr.open_group(str(tmp_path / "a.zarr"), mode="w")
    plain = g.create_array("p", shape=(7,), chunks=(2,), dtype="f8", fill_value=-1.0)
    sharded = g.create_array("s", shape=(8,), chunks=(2,), shards=(4,), dtype="f8")
    memory = zarr.open_group(zarr.storage.MemoryStore(), mode="w").create_array(
        "m", shape=(8,), chunks=(2,), dtype="f8")
    assert chunks.local_chunks(sharded) is None and chunks.local_chunks(memory) is None
    w = chunks.local_chunks(plain)
    assert isinstance(w, chunks.LocalChunks)
    w[(slice(2, 4),)] = np.array([1.0, 2.0])       # a whole chunk: daskcl's write
    w[(slice(6, 7),)] = np.array([3.0])            # the partial chunk at the edge: zarr's
    w[(slice(0, 2),)] = np.array([4, 5])           # another data type: zarr converts it
    assert plain[...].tolist() == [4.0, 5.0, 1.0, 2.0, -1.0, -1.0, 3.0]
    assert sorted(os.listdir(tmp_path / "a.zarr" / "p" / "c")) == ["0", "1", "3"]
    shutil.rmtree(tmp_path / "a.zarr" / "p" / "c")   # its directory gone: made again
    w[(slice(4, 6),)] = np.array([6.0, 7.0])
    assert plain[...].tolist() == [-1.0, -1.0, -1.0, -1.0, 6.0, 7.0, -1.0]


def test_a_glm_gradient_is_split_like_its_qf(tmp_path: Path, monkeypatch: Any) -> None:
    """grad (points x coefficients) shares qf's pieces along the axes and keeps its last axis
    whole."""
    monkeypatch.setattr(spec, "_STORE_CHUNK_ELEMENTS", 4)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 1))
    y = rng.binomial(1, 1 / (1 + np.exp(-x[:, 0])))
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([y, x]), delimiter=",", header="y,x1", comments="")
    d = {"sweep": {"function": "glm.f2_f3", "chunks": {"intercept": 4, "x1": 3}},
         "glm": {"family": "binomial", "link": "logit", "data": str(data), "response": "y",
                 "predictors": ["x1"]},
         "axes": {"intercept": {"linspace": [-1.0, 1.0, 8]}, "x1": {"linspace": [-1.0, 1.0, 3]}}}
    s = Sweep.from_dict(d)
    assert s.store_chunks == (1, 3)
    out = tmp_path / "g.zarr"
    run(s, out, client="sync")
    g = open_result(out)
    assert g["grad"].chunks == (1, 3, 2)
    assert len(_files(out, "grad")) == 8 == len(_files(out, "qf"))
    want = {k: np.concatenate([evaluate_chunk(s, (i, 0))[k] for i in range(2)]) for k in ("qf", "grad")}
    assert np.array_equal(g["qf"][...], want["qf"])
    assert np.array_equal(g["grad"][...], want["grad"])


_MAPPED = """
import ctypes, sys
import numpy as np
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
def mapped(nbytes):  # bytes glibc maps from the kernel for one buffer of nbytes
    base = libc.mallinfo2().hblkhd
    a = np.empty(nbytes, np.uint8)
    got = libc.mallinfo2().hblkhd - base
    del a
    return got
before = mapped(8 << 20)
from daskcl.sweep import store
kept = store.keep_freed_buffers()
print(kept, before, mapped(8 << 20), mapped(40 << 20))
"""


@pytest.mark.parametrize("trim", ["65536", None])
def test_a_dask_worker_keeps_the_buffers_its_writes_free(trim: str | None) -> None:
    """dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which makes glibc map
    every buffer of 128 KiB or more from the kernel and unmap it when freed (the writes' zarr
    chunks page-faulted in again each time); the store's first write sets glibc's largest
    dynamic thresholds instead.  Without the variable nothing is changed."""
    import ctypes

    from support.procs import repo_pythonpath, run_python

    if not hasattr(ctypes.CDLL(None), "mallinfo2"):
        pytest.skip("not glibc 2.33 or later (no mallinfo2)")
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    env["PYTHONPATH"] = repo_pythonpath(Path(__file__).resolve().parents[2])
    if trim:
        env["MALLOC_TRIM_THRESHOLD_"] = trim
    r = run_python(["-c", _MAPPED], timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    kept, before, after, large = r.stdout.split()
    mib = 1 << 20
    if trim:
        assert kept == "True"
        assert int(before) >= 8 * mib      # mapped: the variable's doing
        assert int(after) == 0             # from the heap now
        assert int(large) >= 40 * mib      # beyond 32 MiB still mapped
    else:  # glibc's own dynamic threshold: the first such buffer mapped, the next from the heap
        assert kept == "False"
        assert int(before) >= 8 * mib
        assert int(after) == 0
        assert int(large) >= 40 * mib
