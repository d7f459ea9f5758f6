# SPDX-License-Identifier: GPL-2.0-or-later
"""Nothing blocks or ends in a traceback: special files in a store or a kernel library, a link
inside a store, ... each refused in one line, within a bounded time (every command runs in a
child with a timeout, so that a regression fails instead of hanging the suite)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.procs import repo_pythonpath, run_python

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": repo_pythonpath(ROOT)}
ENV.pop("DASK_LOGGING__DISTRIBUTED", None)
ENV.pop("DASKCL_LIBRARY", None)

SPEC = ('[sweep]\nfunction = "pgamma"\nchunks = { q = 8, shape = 3 }\n[axes]\n'
        'q = { linspace = [0.0, 20.0, 21] }\nshape = { values = [0.5, 1.0, 2.5, 10.0] }\n'
        '[args]\nscale = 0.5\n')


def _cli(*args: str, timeout: float = 120, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return run_python(["-m", "daskcl", *args], timeout=timeout, env=env or ENV)


def _one_error_line(r: subprocess.CompletedProcess[str], text: str, code: int = 1) -> str:
    assert r.returncode == code, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A spec and its finished store (copied by each test that spoils it)."""
    d = tmp_path_factory.mktemp("finished")
    (d / "s.toml").write_text(SPEC)
    r = _cli("sweep", str(d / "s.toml"), "--out", str(d / "o.zarr"), "--sync", "-q")
    assert r.returncode == 0, r.stderr
    return d / "s.toml", d / "o.zarr"


# --- special files and links in a store ------------------------------------------------------


@pytest.mark.parametrize("where", ["zarr.json", "pgamma/c/1/1", "_daskcl/done/zarr.json"])
def test_a_fifo_in_a_store_is_refused_without_blocking(tmp_path: Path, finished: tuple[Path, Path],
                                                       where: str) -> None:
    """A FIFO as a store's metadata or as a chunk blocked verify, --resume, --overwrite and
    --dry-run --resume forever (zarr opened it); each now names it in one line."""
    spec, done = finished
    out = tmp_path / "o.zarr"
    shutil.copytree(done, out)
    (out / where).unlink()
    os.mkfifo(out / where)
    said = f"holds {where}, a FIFO, not a regular file"
    _one_error_line(_cli("sweep", "verify", str(out), timeout=60), said)
    for how in (["--resume"], ["--overwrite"], ["--resume", "--dry-run"]):
        _one_error_line(_cli("sweep", str(spec), "--out", str(out), "--sync", "-q", *how,
                             timeout=60), said)
    assert (out / where).is_fifo()
    # a link to one is the same
    (out / where).unlink()
    os.mkfifo(tmp_path / "pipe")
    (out / where).symlink_to(tmp_path / "pipe")
    _one_error_line(_cli("sweep", "verify", str(out), timeout=60),
                    f"holds {where}, a link to a special file, not a regular file")


@pytest.mark.parametrize("damage", ["cut", "deep"])
@pytest.mark.parametrize("where", ["_daskcl/zarr.json", "pgamma/zarr.json"])
def test_damaged_metadata_is_one_line(tmp_path: Path, finished: tuple[Path, Path], where: str,
                                      damage: str) -> None:
    """The bookkeeping group's zarr.json cut short: verify passed, and --resume computed the
    chunks, then ended in zarr's traceback as it consolidated the store's metadata; nested
    100,000 deep, --overwrite's look at an array's grid ended in a RecursionError traceback.
    Each is one line naming the group or array; --overwrite starts the store again."""
    spec, done = finished
    out = tmp_path / "o.zarr"
    shutil.copytree(done, out)
    (out / where).write_text('{"zarr_format": 3, "node_type": "gro' if damage == "cut"
                             else '{"a": ' + "[" * 100000 + "]" * 100000 + "}")
    said = f"the {'group' if where.startswith('_') else 'array'} {where.split('/')[0]!r} " \
        "cannot be opened ("
    _one_error_line(_cli("sweep", "verify", str(out), timeout=60), said)
    for how in (["--resume"], ["--resume", "--dry-run"]):
        _one_error_line(_cli("sweep", str(spec), "--out", str(out), "--sync", "-q", *how,
                             timeout=60), said)
    r = _cli("sweep", str(spec), "--out", str(out), "--sync", "-q", "--overwrite", timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_resume_does_not_write_through_a_linked_chunk_directory(
        tmp_path: Path, finished: tuple[Path, Path]) -> None:
    """``--resume`` with an array's ``c/`` replaced by a link to a user's directory wrote the
    chunk files into that directory; it is refused, and nothing is written there."""
    spec, done = finished
    out = tmp_path / "o.zarr"
    shutil.copytree(done, out)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me")
    shutil.rmtree(out / "pgamma" / "c")
    (out / "pgamma" / "c").symlink_to(mine)
    for how in (["--resume"], ["--resume", "--dry-run"]):
        _one_error_line(_cli("sweep", str(spec), "--out", str(out), "--sync", "-q", *how,
                             timeout=60), "holds pgamma/c, a link: daskcl does not write through")
    _one_error_line(_cli("sweep", "verify", str(out), timeout=60), "holds pgamma/c, a link")
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]
    # --overwrite deletes the link, never what it points to, as before
    r = _cli("sweep", str(spec), "--out", str(out), "--sync", "-q", "--overwrite")
    assert "pgamma/c" in r.stderr and r.returncode == 1, r.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]


def test_a_fifo_as_a_spec_or_its_python_file_is_refused_without_blocking(tmp_path: Path) -> None:
    """A spec file and the Python file it names are read as regular files only."""
    os.mkfifo(tmp_path / "s.toml")
    _one_error_line(_cli("sweep", str(tmp_path / "s.toml"), "--dry-run", timeout=60),
                    f"spec: spec file '{tmp_path / 's.toml'}' is not a regular file")
    os.mkfifo(tmp_path / "f.py")
    (tmp_path / "p.toml").write_text('[sweep]\nfunction = "f.py:f"\n[axes]\n'
                                     'q = { values = [0.5] }\n')
    _one_error_line(_cli("sweep", str(tmp_path / "p.toml"), "--dry-run", timeout=60),
                    "is not a regular file")


# --- special files in a kernel library -------------------------------------------------------


def test_a_fifo_in_a_kernel_library_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO named ``*.cl`` in a ``[kernel]`` library root or in ``DASKCL_LIBRARY`` (its
    ``OPENCL.cl``, a unit, or any ``*.cl`` a Python function's identity reads) blocked a run
    as the library was read; each is one line naming it."""
    tree = tmp_path / "mylib"
    tree.mkdir()
    os.mkfifo(tree / "stuck.cl")
    spec = tmp_path / "k.toml"
    spec.write_text('[kernel]\nname = "twice"\ninputs = "double x"\noutputs = "double y"\n'
                    'operation = "y = 2 * x;"\nlibrary = ["mylib"]\n'
                    '[axes]\nx = { values = [1.0, 2.0] }\n')
    _one_error_line(_cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--sync", "-q",
                         timeout=60), f"{tree / 'stuck.cl'} is not a regular file")
    lib = tmp_path / "cl"
    shutil.copytree(ROOT / "cl", lib)
    os.mkfifo(lib / "nmath" / "stuck.cl")
    r = run_python(["-c", "from daskcl import nmath; print(nmath.pnorm(0.5))"], timeout=60,
                   env={**ENV, "DASKCL_LIBRARY": str(lib)})
    assert r.returncode == 1 and f"{lib / 'nmath' / 'stuck.cl'} is not a regular file" \
        in r.stderr, r.stderr
    (lib / "nmath" / "stuck.cl").unlink()
    (lib / "OPENCL.cl").unlink()
    os.mkfifo(lib / "OPENCL.cl")        # was 'it has no OPENCL.cl'
    r = run_python(["-c", "from daskcl import nmath; print(nmath.pnorm(0.5))"], timeout=60,
                   env={**ENV, "DASKCL_LIBRARY": str(lib)})
    assert r.returncode == 1 and f"{lib} (the config key library, DASKCL_LIBRARY) is not a " \
        "kernel library: its OPENCL.cl is not a regular file\n" in r.stderr, r.stderr
    # a Python function's identity reads every *.cl of the library: one anywhere blocked it
    (lib / "OPENCL.cl").unlink()
    shutil.copy(ROOT / "cl" / "OPENCL.cl", lib / "OPENCL.cl")
    (lib / "extra").mkdir()
    os.mkfifo(lib / "extra" / "stuck.cl")
    (tmp_path / "f.py").write_text("def g(x):\n    return x\n")
    (tmp_path / "p.toml").write_text('[sweep]\nfunction = "f.py:g"\n[axes]\n'
                                     'x = { values = [0.5] }\n')
    _one_error_line(_cli("sweep", str(tmp_path / "p.toml"), "--out", str(tmp_path / "p.zarr"),
                         "--sync", "-q", timeout=60, env={**ENV, "DASKCL_LIBRARY": str(lib)}),
                    f"{lib / 'extra' / 'stuck.cl'} is not a regular file")
    assert not (tmp_path / "p.zarr").exists()


# --- cache clear and info racing builds ------------------------------------------------------


def test_cache_clear_and_info_race_builds(cache: Path) -> None:
    """``daskcl cache clear`` or ``cache info`` while programs were built: a FileNotFoundError
    on both sides (an entry or its directory gone while they looked), and the build's own
    assertion failed (its directory removed between making and opening it).  Clear and info
    now take entries that vanish as gone; a build whose entry goes under it builds it again
    (here: stores what it built), without a warning.  Bounded: 4 s of racing."""
    import threading
    import time
    import types
    import warnings

    from daskcl.runtime import diskcache, program

    bound = types.SimpleNamespace(info=types.SimpleNamespace(identity="race"))
    keys = [f"{k:064x}" for k in range(8)]
    stop = time.monotonic() + 4
    failed: list[BaseException] = []
    counts = {"clear": 0, "info": 0, "built": 0}

    def looker(what: str) -> None:
        try:
            while time.monotonic() < stop:
                if what == "clear":
                    program.clear_disk_cache()
                else:
                    assert program.cache_info()["entries"] >= 0
                counts[what] += 1
        except BaseException as exc:     # reported by the test
            failed.append(exc)

    threads = [threading.Thread(target=looker, args=(w,)) for w in ("clear", "info")]
    for t in threads:
        t.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")     # a build under a clear warns of nothing
            while time.monotonic() < stop:
                for key in keys:
                    binary = key.encode() * 8
                    with diskcache._DiskCache.open() as disk:
                        built, _, notes = diskcache._cached(
                            bound, disk, key, lambda b: b, lambda _d, b=binary: (b, b), "")
                    assert built == binary and notes == [], notes[0][1]
                    counts["built"] += 1
    finally:
        for t in threads:
            t.join(timeout=30)
    assert not failed, failed
    assert min(counts.values()) > 0, counts
    # real programs, built on the device while the cache is cleared under them
    from daskcl.runtime.library import ProgramSource

    stop = time.monotonic() + 600
    clearer = threading.Thread(target=looker, args=("clear",))
    clearer.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for i in range(6):
                src = ProgramSource(f"__kernel void k(__global double *x) {{ x[0] = {i}; }}\n",
                                    ())
                assert program.build(src).program is not None
                program.clear_memory_cache()
    finally:
        stop = 0
        clearer.join(timeout=30)
    assert not failed, failed


# --- hostile specs: depth and size -----------------------------------------------------------


@pytest.mark.parametrize("nest", ["[", "{a = ", "dotted", "header"])
def test_a_deeply_nested_spec_is_one_line(tmp_path: Path, nest: str) -> None:
    """A TOML spec nested 20,000-50,000 deep ended in tomllib's RecursionError traceback, or,
    nested by a dotted key (``a.a.a... = 1``, ``[a.a.a...]``), read for minutes (tomllib's
    time is quadratic in a key's parts) and then a RecursionError; it is refused before it is
    parsed, at once.  A spec nested as deep from Python is refused too."""
    import time

    from daskcl.sweep import Sweep, SweepError

    said = r"its tables, arrays or dotted keys are nested too deeply to read"
    spec = tmp_path / "deep.toml"
    head = '[sweep]\nfunction = "pnorm"\n[axes]\nq = { values = [0.5] }\n[args]\n'
    for depth in (40, 1000, 50000):
        if nest == "dotted":
            spec.write_text(head + ".".join(["a"] * depth) + " = 1\n")
        elif nest == "header":
            spec.write_text(head + "mean = 0\n[" + " . ".join(['"a.b"'] * depth) + "]\n")
        else:
            close = "]" if nest == "[" else "}"
            spec.write_text(head + f"mean = {nest * depth}1{close * depth}\n")
        t0 = time.monotonic()
        with pytest.raises(SweepError, match=rf"deep.toml: {said}"):
            Sweep.from_toml(spec)
        assert time.monotonic() - t0 < 5
    _one_error_line(_cli("sweep", str(spec), "--dry-run", timeout=60), "nested too deeply")
    nested: dict[str, object] = {"a": 1.0}
    for _ in range(5000):
        nested = {"a": nested}
    with pytest.raises(SweepError, match=rf"spec: {said}"):
        Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"values": [0.5]}},
                         "args": {"mean": nested}})


def test_a_spec_too_large_to_parse_soon_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A spec of 2^27 + 5 values inline (268 MB) was parsed for some 13 minutes before the
    axis's bound refused it (tomllib reads some 200,000 values a second); a spec over 4 MiB
    is refused at once, saying where long lists go."""
    import time

    from daskcl.sweep import Sweep, SweepError

    spec = tmp_path / "big.toml"
    head = '[sweep]\nfunction = "pnorm"\n[axes]\nq = { values = ['
    spec.write_text(head + "0," * (4 << 20) + "0] }\n")
    t0 = time.monotonic()
    with pytest.raises(SweepError, match=r"spec: spec file '.*big.toml' is 8.0 MiB; at most 4.0 "
                       r"MiB are read \(TOML is read slowly: long lists of values go in a file "
                       "axis"):
        Sweep.from_toml(spec)
    assert time.monotonic() - t0 < 5


def test_strings_and_comments_are_not_nesting() -> None:
    """What looks like nesting inside strings and comments is not counted, nor are floats."""
    from daskcl.sweep.spec import _toml_depth

    text = ('# a.b.c.d [[[[ {{{{\n[sweep]\nfunction = "pnorm"  # x.y.z.w.v\n'
            'description = """a.b.c.d.e.f\n[[[[[[ "quoted" \\""" still"""\n'
            "name = 'p.q.r.s.t.u'\n[axes]\nq = { values = [0.5, 1.5e+10, -2.25] }\n"
            "[args]\nsd.x = 1\n")
    assert _toml_depth(text) == 2


def test_a_deeply_nested_python_function_file_is_one_line(tmp_path: Path) -> None:
    """The spec's Python file is parsed (not run) to check its function's parameters: one
    nested 3,000 deep ended in the parser's RecursionError traceback."""
    from daskcl.sweep import Sweep, SweepError

    (tmp_path / "deep.py").write_text("x = " + "-" * 3000 + "1\ndef f(q):\n    return q\n")
    (tmp_path / "s.toml").write_text('[sweep]\nfunction = "deep.py:f"\n[axes]\n'
                                     'q = { values = [0.5] }\n')
    with pytest.raises(SweepError, match=r"sweep.function: deep.py nests its expressions too "
                       "deeply to parse"):
        Sweep.from_toml(tmp_path / "s.toml")


@pytest.mark.parametrize("kind", ["txt", "npy", "csv"])
def test_a_file_axis_of_too_many_values_is_refused_before_it_is_parsed(
        tmp_path: Path, kind: str) -> None:
    """A file axis of 2^27 + 5 values was parsed whole, then ended in a MemoryError traceback
    after 26 s; its values are counted first (a .npy file's header, a text file's words, a CSV
    file's rows) and it is refused at once, holding little more than the file's bytes.
    Comments and blank lines are not counted."""
    import time
    import tracemalloc

    import numpy as np

    from daskcl.sweep import SweepError
    from daskcl.sweep.axes import _MAX_AXIS, parse_axis

    n = _MAX_AXIS + 5
    path = tmp_path / f"big.{kind}"
    if kind == "npy":
        np.save(path, np.zeros(n, dtype=np.int8))
    else:
        path.write_bytes((b"x\n" if kind == "csv" else b"") + b"0\n" * n)
    size = path.stat().st_size
    t0 = time.monotonic()
    tracemalloc.start()
    said = (rf"big.csv holds {n} rows; an axis has at most {_MAX_AXIS} values" if kind == "csv"
            else rf"the file holds {n} values; an axis has at most {_MAX_AXIS}")
    with pytest.raises(SweepError, match=rf"axis 'q': {said}"):
        parse_axis("q", {"file": path.name, **({"column": "x"} if kind == "csv" else {})},
                   tmp_path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert time.monotonic() - t0 < 30
    assert peak < 3 * size, (peak, size)
    path.unlink()
    # what is counted is what is parsed: comments, blank lines and white space are not values
    small = tmp_path / "small.txt"
    small.write_text("# a comment of 1 2 3\n1 2 3 # 4 5\n\n  \n")
    assert parse_axis("q", {"file": "small.txt"}, tmp_path).values.tolist() == [1, 2, 3]
    small.write_text("x,y\n1,2\n\n  \n3,4\n")
    assert parse_axis("q", {"file": "small.txt", "column": "y"}, tmp_path).values.tolist() \
        == [2, 4]


@pytest.mark.parametrize("shape", ["(" * 200 + "1,", "-" * 5000 + "1,"],
                         ids=["unclosed", "signs"])
def test_a_hostile_npy_header_is_one_line(tmp_path: Path, shape: str) -> None:
    """A ``.npy`` file axis whose header's shape opens 200 parentheses it never closes, or
    chains 5,000 signs, ended in tokenize's TokenError traceback: numpy's parser failed, then
    its fallback."""
    from daskcl.sweep import Sweep, SweepError

    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': ({shape}), }}"
    header = header.ljust(-(-(len(header) + 11) // 64) * 64 - 11) + "\n"
    (tmp_path / "q.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                                     + header.encode() + b"\0" * 8)
    with pytest.raises(SweepError, match=r"axis 'q': q.npy is not a .npy file of numbers"):
        Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"file": "q.npy"}}},
                        tmp_path)


def test_glm_data_of_too_many_rows_are_refused_before_they_are_parsed(
        tmp_path: Path, monkeypatch: Any) -> None:
    """GLM data of 2^27 + 5 rows were parsed whole: 11 GB and past a minute (a file axis of as
    many values was refused).  Their rows are counted first (blank lines are not rows), and
    more than 2^24 are refused at once."""
    from daskcl.sweep import Sweep, SweepError, glmspec

    assert glmspec._MAX_GLM_ROWS == 2**24
    monkeypatch.setattr(glmspec, "_MAX_GLM_ROWS", 4)
    spec = {"sweep": {"function": "glm.f2_f3"},
            "glm": {"family": "poisson", "link": "log", "data": "d.csv", "response": "y",
                    "predictors": ["x"]},
            "axes": {"intercept": {"values": [0.0, 0.5]}, "x": {"values": [0.0, 1.0]}}}
    (tmp_path / "d.csv").write_text("y,x\n" + "1,0.5\n" * 4 + "\n  \n")
    assert Sweep.from_dict(spec, tmp_path).glm.y.size == 4     # type: ignore[union-attr]
    (tmp_path / "d.csv").write_text("y,x\n" + "1,0.5\n" * 5)
    with pytest.raises(SweepError, match=r"glm: d.csv holds 5 rows; GLM data have at most 4 "
                       "rows"):
        Sweep.from_dict(spec, tmp_path)


# --- a scheduler address that answers with something else ------------------------------------


@pytest.fixture
def junk_server() -> Iterator[Callable[[str], str]]:
    """``serve(kind)``: the address of a loopback server that answers a connection with an
    HTTP server's silence (it waits for a request), an SSH banner, zeros, by closing it, or
    with dask's framing around junk; each server's loop ends with the test."""
    import socket
    import threading

    done = threading.Event()
    threads: list[threading.Thread] = []

    def loop(srv: socket.socket, kind: str) -> None:
        conns = []
        with srv:
            srv.settimeout(0.2)
            while not done.is_set():
                try:
                    conn, _ = srv.accept()
                except TimeoutError:
                    continue
                conns.append(conn)
                with contextlib.suppress(OSError):
                    if kind == "ssh":
                        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
                    elif kind == "zeros":
                        conn.sendall(b"\0" * 4096)
                    elif kind == "close":
                        conn.close()
                    elif kind == "msgpack":     # dask's framing around junk
                        frame = b"\xc1" * 8
                        conn.sendall((24).to_bytes(8, "little") + (1).to_bytes(8, "little")
                                     + (8).to_bytes(8, "little") + frame)
        for conn in conns:
            conn.close()

    def serve(kind: str) -> str:
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        t = threading.Thread(target=loop, args=(srv, kind), daemon=True)
        t.start()
        threads.append(t)
        return f"tcp://127.0.0.1:{srv.getsockname()[1]}"

    yield serve
    done.set()
    for t in threads:
        t.join(timeout=10)


@pytest.mark.parametrize(("kind", "said"), [
    ("http", "it accepted the connection but sent nothing within 3 s"),
    ("ssh", "(it answered 'SSH-2.0-OpenSSH_')"),
    ("zeros", "(it answered only zero bytes)"),
    ("close", "it closed the connection without a word"),
    ("msgpack", "(it answered 32 bytes that are not dask's handshake)"),
])
def test_a_peer_that_is_not_a_scheduler_is_named_within_the_timeout(
        tmp_path: Path, junk_server: Callable[[str], str], kind: str, said: str) -> None:
    """``daskcl worker``, ``devices --scheduler`` and ``sweep --scheduler`` pointed at an HTTP
    server (a dashboard), an SSH server or one that sends zeros: tracebacks (numpy asked for
    3.07 EiB, distributed read the banner as a length; framed junk: distributed's logged
    traceback) or a wait past ``--timeout``.  Each says in one line that the address is not a
    dask scheduler, within the timeout."""
    import time

    address = junk_server(kind)
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    for args in (["worker", address], ["devices", "--scheduler", address],
                 ["sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--scheduler", address]):
        t0 = time.monotonic()
        r = _cli(*args, "--timeout", "3", timeout=60)
        line = _one_error_line(r, f"{address} is not a dask scheduler")
        assert said in line and "Traceback" not in r.stderr, r.stderr
        assert time.monotonic() - t0 < 3 + 20     # the timeout, and the start of a python
    assert not (tmp_path / "o.zarr").exists()


def test_a_protocol_not_spoken_here_is_one_line(tmp_path: Path) -> None:
    """``tls://`` without TLS settings (or ``ucx://`` without ucx) ended ``daskcl devices`` and
    ``daskcl sweep --scheduler`` in distributed's TypeError traceback."""
    import socket

    with socket.socket() as s:      # a port of this host that nothing listens on
        s.bind(("127.0.0.1", 0))
        address = f"tls://127.0.0.1:{s.getsockname()[1]}"
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    for args in (["worker", address], ["devices", "--scheduler", address],
                 ["sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--scheduler", address]):
        r = _cli(*args, "--timeout", "3", timeout=60)
        _one_error_line(r, f"cannot connect to the scheduler {address}: TypeError: ")
    assert not (tmp_path / "o.zarr").exists()


# --- configuration errors from Python -------------------------------------------------------


_CALL = """
import json, traceback
from daskcl import nmath
from daskcl.sweep import Sweep, run
try:
    if KIND == "sweep":
        run(Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"values": [0.5]}}}),
            OUT, client="sync")
    else:
        nmath.pnorm(0.5) if KIND == "pnorm" else nmath.rnorm(3, seed=1)
except Exception as exc:
    frames = traceback.extract_tb(exc.__traceback__)
    print(json.dumps([type(exc).__name__, str(exc), repr(exc.__cause__), repr(exc.__context__),
                      len(frames), frames[-1].name]))
"""


@pytest.mark.parametrize(("env", "kind", "said"), [
    ({"DASKCL_DEVICE": "99:99"}, "NoMatchingDeviceError",
     "no OpenCL device matches '99:99' (DASKCL_DEVICE, the config key device"),
    ({"DASKCL_LIBRARY": "/nonexistent"}, "LibraryError",
     "/nonexistent (the config key library, DASKCL_LIBRARY) is not a kernel library: it does "
     "not exist"),
    ({"DASKCL_FP_CONTRACT": "maybe"}, "ConfigError",
     "DASKCL_FP_CONTRACT='maybe' is not understood; DASKCL_FP_CONTRACT must be 0 or 1"),
])
@pytest.mark.parametrize("call", ["pnorm", "rnorm", "sweep"])
def test_a_configuration_error_from_python_is_raised_at_the_call(
        tmp_path: Path, env: dict[str, str], kind: str, said: str, call: str) -> None:
    """``DASKCL_DEVICE=99:99`` or ``DASKCL_LIBRARY=/nonexistent``, then ``nmath.pnorm(0.5)``
    (or a generator, or a sweep's ``run``): a traceback through the binding and the build,
    ending in a good message (a sweep's was a failed chunk, with a store left behind).  The
    error is daskcl's own, raised at the call with its message only: no frames of daskcl's
    insides, no cause or context (an internal exception) chained to it."""
    import json

    out = tmp_path / "o.zarr"
    r = run_python(["-c", f"KIND, OUT = {call!r}, {str(out)!r}\n{_CALL}"], timeout=120,
                   env={**ENV, **env})
    assert r.returncode == 0, r.stderr
    name, message, cause, context, frames, where = json.loads(r.stdout)
    assert name == kind and message.startswith(said), message
    assert cause == context == "None"
    assert where in ("compute", "__call__", "run") and frames <= 4, (frames, where)
    assert not out.exists()


# --- --sync refuses what a cluster refuses; SIGTERM while the scheduler is awaited -----------


@pytest.mark.parametrize(("key", "value", "said"), [
    ("DASKCL_BINNING", "fast", "DASKCL_BINNING='fast' is not understood; DASKCL_BINNING must"),
    ("DASKCL_CACHE_SHARED", "everyone", "DASKCL_CACHE_SHARED='everyone' is not understood"),
    ("DASKCL_NOINLINE", "sometimes", "DASKCL_NOINLINE='sometimes' is not understood"),
    ("DASKCL_WARM", "pnrom", "cannot warm 'pnrom' (DASKCL_WARM, the config key worker.warm)"),
    ("DASKCL_DEVICE", "99:99", "no OpenCL device matches '99:99' (DASKCL_DEVICE"),
])
def test_sync_sweeps_refuse_the_config_values_a_cluster_refuses(tmp_path: Path, key: str,
                                                                value: str, said: str) -> None:
    """``daskcl sweep --sync`` ran with values of ``DASKCL_*`` that a local-cluster sweep
    refuses as its workers start (a device matching none failed each chunk, after the store
    was made); it refuses them too, before the store is made."""
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--sync", "-q",
             env={**ENV, key: value})
    _one_error_line(r, said)
    assert not (tmp_path / "o.zarr").exists()


def test_sigterm_while_the_scheduler_is_awaited_is_one_line(tmp_path: Path) -> None:
    """SIGTERM while ``daskcl sweep --scheduler`` waited for its scheduler ended in a
    traceback (the client was made outside the sweep's handling of a stop)."""
    import signal
    import socket
    import sys
    import time

    with socket.socket() as s:      # a port of this host that nothing listens on
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    proc = subprocess.Popen([sys.executable, "-m", "daskcl", "sweep", str(spec), "--out",
                             str(tmp_path / "o.zarr"), "--scheduler", address, "--timeout", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        time.sleep(5)       # started, and waiting for the scheduler
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err
    assert err.strip() == (f"terminated: nothing was computed (the scheduler {address} had not "
                           "answered yet)"), err


@pytest.mark.parametrize(("stop", "code", "how"), [("Terminated", 143, "terminated"),
                                                    ("KeyboardInterrupt", 130, "interrupted")])
@pytest.mark.parametrize("where", ["spec", "dry-run", "verify"])
def test_a_stop_before_the_sweep_runs_is_one_line(tmp_path: Path, monkeypatch: Any, capsys: Any,
                                                  where: str, stop: str, code: int,
                                                  how: str) -> None:
    """SIGTERM (or Ctrl-C) while a spec was read (a large file axis), a dry run planned or a
    store verified ended in a traceback of ``daskcl.errors.Terminated``."""
    from daskcl import cli, errors
    from daskcl.sweep import Sweep, store

    def stopped(*args: Any, **kwargs: Any) -> Any:
        raise getattr(errors, stop, KeyboardInterrupt)

    monkeypatch.setenv("DASK_LOGGING__DISTRIBUTED", "critical")    # main sets it
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    if where == "spec":
        monkeypatch.setattr(Sweep, "from_toml", stopped)
        argv = ["sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--sync"]
    elif where == "dry-run":
        monkeypatch.setattr(store.Store, "plan", stopped)
        argv = ["sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--dry-run"]
    else:
        (tmp_path / "o.zarr").mkdir()
        monkeypatch.setattr(store.Store, "verify", stopped)
        argv = ["sweep", "verify", str(tmp_path / "o.zarr")]
    try:
        rc = cli.main(argv)
    except KeyboardInterrupt as exc:     # a traceback at the command line
        pytest.fail(f"{type(exc).__name__} escaped the command")
    assert rc == code
    assert capsys.readouterr().err.strip() == f"{how}: nothing was written"
    assert not (tmp_path / "o.zarr").exists() or where == "verify"


# --- URLs that cannot hold a sweep ------------------------------------------------------------


def test_a_memory_store_is_refused_before_anything_is_computed(tmp_path: Path) -> None:
    """``--out memory://results.zarr`` "succeeded" with ``--sync`` (the store gone at exit)
    and failed chunk by chunk on a cluster; it is refused up front, in one line, by the run
    (sync or on a cluster) and by the dry run."""
    from daskcl.sweep import Sweep, SweepError, run

    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    said = ("memory://results.zarr: a memory:// store lives in one process's memory, gone when "
            "it ends")
    for how in (["--sync"], ["--workers", "1"], ["--dry-run"]):
        r = _cli("sweep", str(spec), "--out", "memory://results.zarr", "-q", *how)
        _one_error_line(r, said)
        assert r.stdout == ""
    for url in ("memory://r.zarr", "simplecache::memory://r.zarr", "MEMORY://r.zarr"):
        with pytest.raises(SweepError, match="store lives in one process's memory"):
            run(Sweep.from_toml(spec), url, client="sync")
