# SPDX-License-Identifier: GPL-2.0-or-later
"""Program cache: memory hit, disk hit in a fresh process, corrupt entries, concurrent builders."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from daskcl.errors import BuildError
from daskcl.runtime import background, diskcache, drivercache, program
from daskcl.runtime.library import Library

REPO = Path(__file__).resolve().parents[2]

KERNEL = """
__kernel void twice(__global double *x) { size_t i = get_global_id(0); x[i] = twice_it(x[i]); }
"""


def tiny_library(root: Path, tag: str) -> Library:
    """A one-unit library whose source differs per ``tag`` (so its cache key is new)."""
    (root / "shims").mkdir(parents=True)
    (root / "nmath").mkdir()
    (root / "OPENCL.cl").write_text((REPO / "cl" / "OPENCL.cl").read_text())
    (root / "nmath" / "twice.cl").write_text(
        f"// @provides: twice_it\n// @depends:\n// {tag}\n"
        "double twice_it(double x) { return 2.0 * x; }\n"
    )
    lib = Library(root)
    lib.write_index()
    return lib


def run_twice(built: program.BuiltProgram) -> np.ndarray:
    import pyopencl as cl

    from daskcl.runtime import device

    bound = device.current()
    x = np.arange(4.0)
    buf = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    k, lock = built.kernel("twice")
    with lock:
        k(bound.queue, (4,), None, buf)
    cl.enqueue_copy(bound.queue, x, buf)
    return x


def test_memory_then_disk_then_fresh_process(tmp_path, cache):
    lib = tiny_library(tmp_path / "lib", uuid.uuid4().hex)
    src = lib.program_source(["twice_it"], KERNEL)
    before = dict(program.stats)
    first = program.build(src)
    assert first.origin == "source" and program.stats["source"] == before["source"] + 1
    assert program.build(src) is first and program.stats["memory"] == before["memory"] + 1
    np.testing.assert_array_equal(run_twice(first), [0.0, 2.0, 4.0, 6.0])
    entries = list(cache.rglob("*.bin"))
    assert len(entries) == 1
    program.clear_memory_cache()
    again = program.build(src)
    assert again.origin == "disk"
    np.testing.assert_array_equal(run_twice(again), [0.0, 2.0, 4.0, 6.0])
    # a fresh process finds the binary on disk
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(REPO)!r}); sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from daskcl.runtime import program
        from daskcl.runtime.library import Library
        from test_cache import KERNEL, run_twice
        src = Library(Path({str(tmp_path / 'lib')!r})).program_source(["twice_it"], KERNEL)
        b = program.build(src)
        print(b.origin, run_twice(b).tolist())
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "DASKCL_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "disk"
    assert "[0.0, 2.0, 4.0, 6.0]" in r.stdout


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip"])
def test_corrupt_entry_is_rebuilt_with_warning(tmp_path, cache, damage):
    lib = tiny_library(tmp_path / "lib", uuid.uuid4().hex)
    src = lib.program_source(["twice_it"], KERNEL)
    program.build(src)
    (entry,) = cache.rglob("*.bin")
    blob = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "garbage":
        entry.write_bytes(b"not a binary at all")
    else:
        entry.write_bytes(blob[:-10] + bytes(b ^ 0xFF for b in blob[-10:]))
    program.clear_memory_cache()
    found = {"truncate": r"truncated: \d+ of \d+ bytes", "garbage": r"not a daskcl cache entry "
             r"\(bad header\)", "flip": "checksum mismatch"}[damage]
    with pytest.warns(program.CacheWarning) as record:
        rebuilt = program.build(src)
    (w,) = record
    assert re.fullmatch(rf"daskcl ignored a program cache entry that does not hold this program "
                        rf"\({found}\): {re.escape(str(entry))}; built it from source and "
                        "replaced the entry", str(w.message)), str(w.message)
    assert w.filename == __file__           # the line of the call, not inside daskcl
    assert rebuilt.origin == "source"
    np.testing.assert_array_equal(run_twice(rebuilt), [0.0, 2.0, 4.0, 6.0])
    # the entry was rewritten and is good again
    program.clear_memory_cache()
    assert program.build(src).origin == "disk"


def test_no_cache_env_disables_disk(tmp_path, cache, monkeypatch):
    monkeypatch.setenv("DASKCL_NO_CACHE", "1")
    lib = tiny_library(tmp_path / "lib", uuid.uuid4().hex)
    program.build(lib.program_source(["twice_it"], KERNEL))
    assert not cache.exists() or not list(cache.rglob("*.bin"))


def test_unwritable_cache_warns_and_still_builds(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(blocker / "sub"))  # a path under a regular file
    program.clear_memory_cache()
    lib = tiny_library(tmp_path / "lib", uuid.uuid4().hex)
    with pytest.warns(program.CacheWarning, match="does not use the program cache"):
        built = program.build(lib.program_source(["twice_it"], KERNEL))
    np.testing.assert_array_equal(run_twice(built), [0.0, 2.0, 4.0, 6.0])


def test_concurrent_builders_both_succeed(tmp_path, cache):
    lib_root = tmp_path / "lib"
    tiny_library(lib_root, uuid.uuid4().hex)
    code = textwrap.dedent(f"""
        import sys, time; sys.path.insert(0, {str(REPO)!r}); sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from daskcl.runtime import program, device
        from daskcl.runtime.library import Library
        from test_cache import KERNEL, run_twice
        device.current()
        while time.time() < float(sys.argv[1]):
            time.sleep(0.001)
        b = program.build(Library(Path({str(lib_root)!r})).program_source(["twice_it"], KERNEL))
        print(b.origin, run_twice(b).tolist())
    """)
    import time

    start = str(time.time() + 4.0)
    env = {**os.environ, "DASKCL_CACHE_DIR": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-c", code, start], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "[0.0, 2.0, 4.0, 6.0]" in out
    entries = list(cache.rglob("*.bin"))
    assert len(entries) == 1 and not list(cache.rglob("*.tmp"))
    program.clear_memory_cache()
    src = Library(lib_root).program_source(["twice_it"], KERNEL)
    assert program.build(src).origin == "disk"


SHARED_CHILD = textwrap.dedent("""
    import sys, time, warnings
    import numpy as np
    from daskcl import nmath
    from daskcl.runtime import device, program
    device.current()
    print("ready", flush=True)
    while time.time() < float(sys.argv[1]):
        time.sleep(0.001)
    x = np.linspace(0.01, 0.99, 257)
    r = nmath.pbeta(x, 2.5, 0.75)
    print(program.stats["source"], program.stats["disk"], r.tobytes().hex()[:64], flush=True)
""")


def test_processes_sharing_a_cache_build_each_program_once(tmp_path, cache):
    """Four processes call the same costly function at once on an empty shared cache: one
    builds, the three others wait for its entry and load it; four equal results."""
    import time

    start = str(time.time() + 6.0)
    env = {**os.environ, "DASKCL_CACHE_DIR": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-c", SHARED_CHILD, start], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(4)]
    outs = [p.communicate(timeout=600) for p in procs]
    rows = []
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        rows.append(out.splitlines()[-1].split())
    assert sorted(int(r[0]) for r in rows) == [0, 0, 0, 1], rows      # one build from source
    assert sorted(int(r[1]) for r in rows) == [0, 1, 1, 1], rows      # three loads of it
    assert len({r[2] for r in rows}) == 1
    assert len(list(cache.rglob("*.bin"))) == 1 and not list(cache.rglob("*.tmp"))


KILLED_CHILD = textwrap.dedent("""
    import os, signal, sys
    from daskcl import nmath
    from daskcl.runtime import device, diskcache, program
    from daskcl.runtime.library import get_library
    device.current()
    kernel = nmath.pbeta
    src = kernel.source()
    bound = device.current()
    opts = kernel.build_options() + program.default_options(bound.info.type)
    key = program._key(bound.info.identity, src.text, opts)
    with diskcache._DiskCache.open() as disk:
        entry = disk.entry(key, bound.info.identity)
        with entry.building() as held:
            print("holding", held, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)       # dies while holding the build lock
""")


def test_a_builder_killed_holding_the_lock_stops_no_one(tmp_path, cache):
    env = {**os.environ, "DASKCL_CACHE_DIR": str(cache)}
    killed = subprocess.run([sys.executable, "-c", KILLED_CHILD], capture_output=True, text=True,
                            env=env, timeout=300)
    assert killed.returncode == -9 and "holding True" in killed.stdout, killed.stderr
    assert list(cache.rglob("*.lock")) and not list(cache.rglob("*.bin"))
    import time

    r = subprocess.run([sys.executable, "-c", SHARED_CHILD, str(time.time())],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    source, disk = r.stdout.splitlines()[-1].split()[:2]
    assert (source, disk) == ("1", "0")                 # built it, without waiting for the dead
    assert len(list(cache.rglob("*.bin"))) == 1


def test_build_error_carries_log_and_files(tmp_path, cache):
    lib = tiny_library(tmp_path / "lib", uuid.uuid4().hex)
    bad = "__kernel void broken(__global double *x) { x[0] = undefined_symbol_here(1.0); }\n"
    with pytest.raises(BuildError) as ei:
        program.build(lib.program_source(["twice_it"], bad, "kernels/broken.cl"))
    err = ei.value
    assert err.units == ("OPENCL.cl", "nmath/twice.cl", "kernels/broken.cl")
    assert "undefined_symbol_here" in err.log
    assert "nmath/twice.cl" in str(err) and "kernels/broken.cl" in str(err)


def test_noinline_default_per_device_and_override(monkeypatch):
    monkeypatch.delenv("DASKCL_NOINLINE", raising=False)
    monkeypatch.delenv("DASKCL_FP_CONTRACT", raising=False)
    assert program.default_options("GPU") == ("-DDASKCL_NOINLINE",)
    assert program.default_options("CPU") == ()
    monkeypatch.setenv("DASKCL_NOINLINE", "0")
    assert program.default_options("GPU") == ()
    monkeypatch.setenv("DASKCL_NOINLINE", "1")
    assert program.default_options("CPU") == ("-DDASKCL_NOINLINE",)
    monkeypatch.setenv("DASKCL_NOINLINE", "yes")
    with pytest.raises(ValueError, match="DASKCL_NOINLINE must be 0 or 1"):
        program.default_options("GPU")


def test_noinline_build_gives_the_same_bits(monkeypatch):
    """The heavy routines out of line (calls instead of inlined copies) change no result."""
    from daskcl import nmath

    rng = np.random.default_rng(3)
    x, a, b = rng.uniform(0, 1, 512), rng.uniform(0.1, 50, 512), rng.uniform(0.1, 50, 512)
    out = []
    for flag in ("0", "1"):
        monkeypatch.setenv("DASKCL_NOINLINE", flag)
        program.clear_memory_cache()
        out.append(nmath.pbeta(x, a, b).view(np.int64))
        out.append(nmath.qgamma(x, a, log_p=False).view(np.int64))
    assert np.array_equal(out[0], out[2]) and np.array_equal(out[1], out[3])
    assert np.isfinite(out[0].view(np.float64)).all()


def test_tiered_answers_out_of_line_then_inlined(monkeypatch, cache):
    """``noinline=tiered`` (the GPU default): a kernel measured faster inlined (pgamma) answers
    from the out-of-line program; its inlined program is built once, by a helper process into
    the disk cache, and loaded from there once the helper has ended, with the same bits; a
    kernel not measured so (qgamma) builds no second program, and ``noinline=1`` never
    tiers."""
    from daskcl import nmath
    from daskcl.kernels._nmath_function import INLINE_FASTER

    assert nmath.pgamma.tier_up and not nmath.qgamma.tier_up and "pgamma" in INLINE_FASTER
    # what an earlier test of this process left building in the background ends first (a
    # GPU run under xdist found one still there)
    assert program.wait_background(timeout=600)
    program.clear_memory_cache()
    assert not program._later
    rng = np.random.default_rng(4)
    x, a = rng.uniform(0, 30, 2048), rng.uniform(0.1, 40, 2048)
    monkeypatch.setenv("DASKCL_NOINLINE", "tiered")
    before, loaded = program.stats["source"], program.stats["helper"]
    first = nmath.pgamma(x, a)
    assert [type(t).__name__ for t in program._later.values()] == ["_Helper"]
    assert program.wait_background(timeout=600)
    assert program.stats["source"] - before == 1          # out of line here; inlined by the helper
    assert program.stats["helper"] - loaded == 1          # and loaded from the disk cache
    assert len(list(cache.rglob("*.bin"))) == 2
    used = nmath.pgamma.program()
    assert "-DDASKCL_NOINLINE" not in used.options and used.origin == "disk"
    plain = program.in_memory(nmath.pgamma.source(), nmath.pgamma.build_options())
    assert plain is not None and "-DDASKCL_NOINLINE" in plain.options
    again = nmath.pgamma(x, a)
    assert np.array_equal(first.view(np.int64), again.view(np.int64))
    assert np.isfinite(first).all() and first.min() >= 0 and first.max() <= 1
    program.build_later(nmath.pgamma.source(), nmath.pgamma.build_options(), inlined=True)
    assert program.wait_background(timeout=600)
    assert program.stats["source"] - before == 1 and program.stats["helper"] - loaded == 1
    before = program.stats["source"]
    nmath.qgamma(x / 31, a)
    assert program.wait_background(timeout=600)
    assert program.stats["source"] - before == 1
    monkeypatch.setenv("DASKCL_NOINLINE", "1")
    program.clear_memory_cache()
    before = program.stats["source"] + program.stats["disk"]
    nmath.pgamma(x, a)
    assert program.wait_background(timeout=600)
    assert program.stats["source"] + program.stats["disk"] - before == 1
    assert "-DDASKCL_NOINLINE" in nmath.pgamma.program().options


def test_a_tiered_call_stays_short_while_its_inlined_program_builds(monkeypatch, cache):
    """While the helper builds the inlined program, a call on device arrays checks for it by
    its key alone: as few Python calls as a settled one (it looked the program up again, with
    its source, options and key, about 200), then the inlined program once it is there."""
    import pyopencl.array as cla

    from daskcl import nmath
    from daskcl.runtime import device

    assert program.wait_background(timeout=600)
    program.clear_memory_cache()
    monkeypatch.setenv("DASKCL_NOINLINE", "tiered")
    monkeypatch.setenv("DASKCL_BINNING", "1")
    q = device.current().queue
    r = np.random.default_rng(2)
    x, a = (cla.to_device(q, v) for v in (r.uniform(0, 30, 1024), r.uniform(0.1, 40, 1024)))
    first = nmath.pgamma(x, a).get()
    count = [0]

    def seen(frame, event, arg):
        count[0] += event in ("call", "c_call")

    nmath.pgamma(x, a)
    sys.setprofile(seen)
    try:
        nmath.pgamma(x, a)
    finally:
        sys.setprofile(None)
    building = any(t.is_alive() for t in program._later.values())
    assert building and count[0] <= 80
    assert program.wait_background(timeout=600)
    again = nmath.pgamma(x, a).get()
    assert "-DDASKCL_NOINLINE" not in nmath.pgamma.program().options
    assert np.array_equal(first.view(np.int64), again.view(np.int64))


def test_tiered_on_a_warm_cache_loads_only_the_inlined_program(monkeypatch, cache):
    """Where the disk cache has a tiering kernel's inlined program (a process before built it),
    a process takes it at its first call: the out-of-line program is not loaded too."""
    from daskcl import nmath

    assert program.wait_background(timeout=600)
    monkeypatch.setenv("DASKCL_NOINLINE", "tiered")
    program.clear_memory_cache()
    first = nmath.pgamma(2.5, 3.0)
    assert program.wait_background(timeout=600)
    assert len(list(cache.rglob("*.bin"))) == 2          # out of line, and the helper's inlined
    program.clear_memory_cache()                          # as a fresh process
    disk, built = program.stats["disk"], program.stats["source"]
    assert nmath.pgamma(2.5, 3.0) == first
    assert program.stats["disk"] - disk == 1 and program.stats["source"] == built
    assert "-DDASKCL_NOINLINE" not in nmath.pgamma.program().options
    assert not program._later or program.wait_background(timeout=600)


def test_a_helper_still_building_at_exit_finishes_for_the_next_process(tmp_path):
    """A process that ends while its helper still builds the inlined program leaves it to
    finish: no warning that a subprocess still runs, no unclosed file, and the program is in
    the disk cache for the next process.  (The helper here waits 3 s before it builds.)"""
    d = tmp_path / "cache"
    code = textwrap.dedent("""
        import sys, numpy as np
        from daskcl import nmath
        from daskcl.runtime import background, program
        background._helper_command = lambda: [sys.executable, "-c",
            "import runpy, time; time.sleep(3); "
            "runpy.run_module('daskcl.runtime.builder', run_name='__main__')"]
        nmath.pgamma(np.linspace(0.5, 5, 64), 2.0)
        print("alive", [t.is_alive() for t in program._later.values()])
    """)
    env = {**os.environ, "DASKCL_CACHE_DIR": str(d), "DASKCL_NOINLINE": "tiered"}
    for key in ("DASKCL_NO_CACHE", "DASKCL_LINK", "DASKCL_CACHE_SHARED"):
        env.pop(key, None)
    r = subprocess.run([sys.executable, "-X", "dev", "-W", "always::ResourceWarning", "-c", code],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "alive [True]" in r.stdout              # the helper outlived the process
    assert "ResourceWarning" not in r.stderr and "still running" not in r.stderr, r.stderr
    deadline = time.monotonic() + 600
    while len(list(d.rglob("*.bin"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(list(d.rglob("*.bin"))) == 2       # out of line, and the helper's inlined one


def test_tiered_without_a_disk_cache_builds_on_a_thread(monkeypatch):
    """Without a disk cache (nowhere for a helper to leave its program) a worker's inlined
    program is built on a thread of its own; the result is the same.  A plain process keeps
    the out-of-line program (a build on a thread would hold back its next one)."""
    from daskcl import nmath

    monkeypatch.setenv("DASKCL_NO_CACHE", "1")
    monkeypatch.setenv("DASKCL_NOINLINE", "tiered")
    monkeypatch.setattr(program, "_LONG_LIVED", False)
    program.clear_memory_cache()
    nmath.dgamma(np.linspace(0.5, 5, 64), 2.0)
    assert program.wait_background(timeout=600) and not program._later
    assert "-DDASKCL_NOINLINE" in nmath.dgamma.program().options
    program.long_lived()
    program.clear_memory_cache()
    before = program.stats["source"]
    x = np.linspace(0.5, 5, 64)
    got = nmath.dgamma(x, 2.0)
    assert any(isinstance(t, threading.Thread) for t in program._later.values())
    assert program.wait_background(timeout=600)
    assert program.stats["source"] - before == 2          # out of line, then inlined, here
    assert "-DDASKCL_NOINLINE" not in nmath.dgamma.program().options
    assert np.array_equal(nmath.dgamma(x, 2.0).view(np.int64), got.view(np.int64))
    assert np.allclose(got, x * np.exp(-x), rtol=1e-14)
    program.clear_memory_cache()


def test_noinline_auto_tiers_up_where_it_can(monkeypatch, cache):
    """``auto``: inlined on CPUs; on GPUs out of line, and tiered where a helper process can
    leave the inlined program in the disk cache, or in a process that serves many calls
    (daskcl's dask workers say so with ``program.long_lived``)."""
    monkeypatch.delenv("DASKCL_NOINLINE", raising=False)
    monkeypatch.setattr(program, "_LONG_LIVED", False)
    assert (program.noinline_mode("GPU"), program.noinline_mode("CPU")) == ("tiered", "off")
    monkeypatch.setenv("DASKCL_NO_CACHE", "1")
    assert (program.noinline_mode("GPU"), program.noinline_mode("CPU")) == ("on", "off")
    program.long_lived()
    assert (program.noinline_mode("GPU"), program.noinline_mode("CPU")) == ("tiered", "off")
    monkeypatch.setenv("DASKCL_NOINLINE", "tiered")
    assert program.noinline_mode("CPU") == "tiered"
    monkeypatch.setenv("DASKCL_NOINLINE", "1")
    assert program.noinline_mode("GPU") == "on"


def test_a_worker_in_the_users_process_takes_long_lived_back(monkeypatch):
    """A dask worker in the user's own process (``LocalCluster(processes=False)``) tiers up
    while it serves, and the process is a plain one again once the worker is gone."""
    from daskcl.cluster import DaskclPlugin

    monkeypatch.delenv("DASKCL_NOINLINE", raising=False)
    monkeypatch.setenv("DASKCL_NO_CACHE", "1")
    monkeypatch.setattr(program, "_LONG_LIVED", False)
    plugin = DaskclPlugin()
    plugin.setup(worker=None)
    assert program.noinline_mode("GPU") == "tiered"
    plugin.teardown(worker=None)
    assert program.noinline_mode("GPU") == "on"
    monkeypatch.setattr(program, "_LONG_LIVED", True)   # a worker process stays what it was
    plugin.setup(worker=None)
    plugin.teardown(worker=None)
    assert program.noinline_mode("GPU") == "tiered"


def test_a_helper_still_building_at_exit_finishes(cache):
    """A process that exits right after its first call does not wait for its helper, and the
    helper finishes: the next process finds the inlined program in the cache."""
    code = ("from daskcl import nmath\n"
            "print(float(nmath.pbeta(0.3, 2.5, 0.75)))\n")
    env = {**os.environ, "DASKCL_CACHE_DIR": str(cache), "DASKCL_NOINLINE": "tiered"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert abs(float(r.stdout) - 0.03280752667467535) < 1e-15   # R: pbeta(0.3, 2.5, 0.75)
    deadline = time.monotonic() + 600
    while len(list(cache.rglob("*.bin"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(list(cache.rglob("*.bin"))) == 2          # out of line, and inlined
    # the next process loads the inlined program from the cache at its first call
    code = ("from daskcl import nmath\n"
            "from daskcl.runtime import program\n"
            "v = float(nmath.pbeta(0.3, 2.5, 0.75))\n"
            "print(v, '-DDASKCL_NOINLINE' in nmath.pbeta.program().options, len(program._later),"
            " program.stats['source'], program.stats['disk'])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    value, *how = r.stdout.split()
    assert abs(float(value) - 0.03280752667467535) < 1e-15
    assert how == ["False", "0", "0", "1"]       # the inlined one only; no helper, no build


def test_a_process_waits_at_exit_for_its_background_threads(tmp_path):
    """Without a disk cache a worker's inlined build runs on a thread, which a process that exits
    right after its first call waits for (the interpreter's exit stopped PoCL's compiler in
    mid-build: the process aborted)."""
    code = ("from daskcl import nmath\n"
            "from daskcl.runtime import program\n"
            "program.long_lived()\n"
            "print(float(nmath.pbeta(0.3, 2.5, 0.75)), len(program._later))\n")
    env = {**os.environ, "DASKCL_NO_CACHE": "1", "DASKCL_NOINLINE": "tiered"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    value, started = r.stdout.split()
    assert abs(float(value) - 0.03280752667467535) < 1e-15 and started == "1"


def test_a_failed_background_build_keeps_the_program_in_use(monkeypatch, cache, caplog):
    """A background build that fails, on a thread or in a helper process, is logged with what
    it said; calls go on with the out-of-line program."""
    from daskcl import nmath

    monkeypatch.setenv("DASKCL_NOINLINE", "tiered")
    monkeypatch.setattr(program, "_HELPERS_FAILED", False)
    monkeypatch.setattr(program, "_LONG_LIVED", False)
    monkeypatch.setattr(background, "_helper_command", lambda: [
        sys.executable, "-c",
        "import sys; print('the compiler ran out of memory', file=sys.stderr); sys.exit(1)"])
    x = np.linspace(0.5, 5, 64)
    with caplog.at_level("WARNING", logger="daskcl.runtime.program"):
        got = nmath.dgamma(x, 2.0)
        assert program.wait_background(timeout=600)
        assert "-DDASKCL_NOINLINE" in nmath.dgamma.program().options
    assert "helper process exit 1: the compiler ran out of memory" in caplog.text
    assert np.allclose(got, x * np.exp(-x), rtol=1e-14)
    assert np.array_equal(nmath.dgamma(x, 2.0).view(np.int64), got.view(np.int64))
    # no more helpers in this process, nor (not a worker) a build on a thread of its own
    assert abs(float(nmath.dpois(3, 2.5)) - 0.21376301724973648) < 1e-15   # R: dpois(3, 2.5)
    assert program.wait_background(timeout=600)
    assert "-DDASKCL_NOINLINE" in nmath.dpois.program().options
    assert len(program._later) == 1

    monkeypatch.setenv("DASKCL_NO_CACHE", "1")
    monkeypatch.setattr(program, "_HELPERS_FAILED", False)
    monkeypatch.setattr(program, "_LONG_LIVED", True)
    program.clear_memory_cache()
    caplog.clear()
    real = program._load_or_build

    def fails_inlined(bound, source, options, key, mode="assembled"):
        if "-DDASKCL_NOINLINE" not in options:
            raise RuntimeError("the compiler ran out of memory")
        return real(bound, source, options, key, mode)

    monkeypatch.setattr(program, "_load_or_build", fails_inlined)
    with caplog.at_level("WARNING", logger="daskcl.runtime.program"):
        got = nmath.dgamma(x, 2.0)
        assert program.wait_background(timeout=600)
    assert "failed (RuntimeError: the compiler ran out of memory)" in caplog.text
    assert "-DDASKCL_NOINLINE" in nmath.dgamma.program().options
    program.clear_memory_cache()


def test_cache_commands_warm_info_clear(tmp_path, cache):
    """``daskcl cache warm`` builds ahead of time, ``info`` counts it, ``clear`` deletes only
    the files daskcl wrote."""
    env = {**os.environ, "DASKCL_CACHE_DIR": str(cache)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "daskcl", "cache", *args],
                              capture_output=True, text=True, env=env, timeout=600)

    r = cli("warm")
    assert r.returncode == 2 and "--names" in r.stderr
    r = cli("warm", "--names", "pnorm,dnorm")
    assert r.returncode == 0, r.stderr
    assert "2 kernels" in r.stdout and "2 programs built" in r.stdout
    r = cli("warm", "--names", "pnorm")
    assert "0 programs built, 1 loaded" in r.stdout
    mine = cache / "notes.txt"
    mine.write_text("keep me")
    (cache / "ab").mkdir(exist_ok=True)
    (cache / "ab" / "other.bin").write_text("not daskcl's name")
    r = cli("info")
    assert r.returncode == 0 and "entries     2 programs" in r.stdout, r.stdout
    # and the NVIDIA driver's compiled code, where the child kept it in the cache (a GPU)
    driver = sum(1 for p in (cache / program.DRIVER_CACHE).rglob("*")
                 if p.is_file() and p.name != drivercache._DRIVER_MARKER)
    # the fp64 probe's binary, kept by the processes that bound the device: not a program
    assert len(list(cache.rglob("*.probe"))) == 1
    r = cli("clear")
    assert r.returncode == 0 and r.stdout.startswith(f"deleted {4 + 1 + driver} files"), r.stdout
    assert mine.read_text() == "keep me" and (cache / "ab" / "other.bin").exists()
    assert not list(cache.rglob("*.probe"))
    assert "entries     0 programs" in cli("info").stdout


_DRIVER_ENV = textwrap.dedent("""
    import os
    from daskcl import nmath
    from daskcl.runtime import drivercache
    drivercache._nvidia_opencl = lambda: True   # as on an NVIDIA machine (test_nvidia_is_looked_for)
    nmath.pnorm(0.5)
    print(os.environ.get("CUDA_CACHE_PATH"), os.environ.get("CUDA_CACHE_MAXSIZE"))
""")


def test_driver_cache_lives_in_the_program_cache(tmp_path):
    """Before the first OpenCL call, the NVIDIA driver's cache of compiled code is pointed at
    ``<cache>/daskcl-nvidia`` (private, like the cache), unless the user chose its place or
    turned it off, or the program cache is off or not trusted; ``cache info`` counts it and
    ``cache clear`` empties it, all but daskcl's marker."""
    cache = tmp_path / "c"
    base = {k: v for k, v in os.environ.items()
            if k not in ("CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_MAXSIZE",
                         "DASKCL_NO_CACHE")}

    def child(**env: str) -> str:
        r = subprocess.run([sys.executable, "-c", _DRIVER_ENV], capture_output=True, text=True,
                           env={**base, "DASKCL_CACHE_DIR": str(cache), **env}, timeout=600)
        assert r.returncode == 0, r.stderr
        return r.stdout.split("\n")[0]

    driver = cache / program.DRIVER_CACHE
    assert child() == f"{driver} {4 << 30}"
    assert driver.stat().st_mode & 0o777 == 0o700
    assert child(CUDA_CACHE_PATH="/tmp/mine") == "/tmp/mine None"
    assert child(CUDA_CACHE_DISABLE="1") == "None None"
    assert child(DASKCL_NO_CACHE="1") == "None None"
    os.chmod(cache, 0o777)          # a cache others may write is not used, nor is its driver cache
    try:
        assert child() == "None None"
    finally:
        os.chmod(cache, 0o700)
    # what the driver writes there is counted and cleared with the cache (on NVIDIA the
    # children above left pnorm's compiled code there too)
    env = {**base, "DASKCL_CACHE_DIR": str(cache)}

    def driver_mib() -> float:
        info = subprocess.run([sys.executable, "-m", "daskcl", "cache", "info"],
                              capture_output=True, text=True, env=env, timeout=600).stdout
        found = re.search(r"^driver +([0-9.]+) MiB", info, re.M)
        return float(found.group(1)) if found else 0.0     # no line: nothing there

    before = driver_mib()
    (driver / "Extra" / "1").mkdir(parents=True)
    (driver / "Extra" / "1" / "x").write_bytes(bytes(3 << 20))
    assert driver_mib() - before == pytest.approx(3.0, abs=0.051)
    subprocess.run([sys.executable, "-m", "daskcl", "cache", "clear"], env=env, timeout=600,
                   check=True, capture_output=True)
    assert list(driver.iterdir()) == [driver / drivercache._DRIVER_MARKER]


@pytest.fixture
def no_cuda_env(monkeypatch):
    """No CUDA_CACHE_* variables, and whatever share_driver_cache sets undone after the test;
    NVIDIA's driver taken as present (:func:`test_nvidia_is_looked_for_before_any_driver`)."""
    for key in ("CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_MAXSIZE"):
        monkeypatch.setenv(key, "")         # recorded as unset, so restored to unset
        monkeypatch.delenv(key)
    monkeypatch.setattr(drivercache, "_nvidia_opencl", lambda: True)


def test_nvidia_is_looked_for_before_any_driver(cache, monkeypatch):
    """The driver's directory is made only where NVIDIA's OpenCL may be (its kernel driver, or
    an ICD registration naming it), judged before any driver loads; elsewhere (PoCL alone)
    nothing is made and CUDA_CACHE_PATH is not set.  ``cache info`` and ``cache clear`` make
    no cache directory either."""
    if os.path.exists("/proc/driver/nvidia"):
        pytest.skip("NVIDIA's kernel driver is loaded here")
    for key in ("CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_MAXSIZE",
                "OCL_ICD_FILENAMES"):
        monkeypatch.setenv(key, "")
        monkeypatch.delenv(key)
    vendors = cache.parent / "vendors"
    vendors.mkdir()
    (vendors / "pocl.icd").write_text("libpocl.so.2\n")
    (vendors / "notes.txt").write_text("libnvidia-opencl.so.1\n")   # not an .icd file
    monkeypatch.setenv("OCL_ICD_VENDORS", str(vendors))
    assert drivercache._nvidia_opencl() is False
    assert program.share_driver_cache() is None and "CUDA_CACHE_PATH" not in os.environ
    assert not cache.exists()
    assert program.cache_info()["entries"] == 0 and program.clear_disk_cache() == 0
    assert not cache.exists()
    (vendors / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    assert drivercache._nvidia_opencl() is True
    (vendors / "nvidia.icd").unlink()
    monkeypatch.setenv("OCL_ICD_FILENAMES", "/usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1")
    assert drivercache._nvidia_opencl() is True
    monkeypatch.delenv("OCL_ICD_FILENAMES")
    monkeypatch.setenv("OCL_ICD_VENDORS", str(vendors / "missing"))
    assert drivercache._nvidia_opencl() is False
    try:
        assert program.share_driver_cache() is None
    finally:
        os.environ.pop("CUDA_CACHE_PATH", None)
    assert not cache.exists()


def test_clear_deletes_nothing_of_a_driver_directory_daskcl_did_not_make(cache, no_cuda_env):
    """A cache directory that other programs use too (``DASKCL_CACHE_DIR=~/.cache``): NVIDIA's
    OpenGL shader cache in ``nvidia/``, and a directory of daskcl's driver cache's name that
    daskcl did not make (no marker), are neither taken over for the driver nor emptied."""
    cache.mkdir(mode=0o700)
    gl = cache / "nvidia" / "GLCache"
    gl.mkdir(parents=True)
    (gl / "data").write_text("precious")
    (cache / "nvidia" / "notes.txt").write_text("precious")
    foreign = cache / program.DRIVER_CACHE
    (foreign / "9" / "2").mkdir(parents=True)
    (foreign / "index").write_text("someone else's")
    (foreign / "9" / "2" / "5b42ad9c27a8c5").write_text("someone else's")
    with pytest.warns(program.CacheWarning) as record:
        assert program.share_driver_cache() is None
    (w,) = record
    assert str(w.message).startswith(
        f"daskcl does not keep the NVIDIA driver's compiled code in {foreign}: it has no "
        ".daskcl-driver-cache file, so daskcl did not make it;")
    assert "CUDA_CACHE_PATH" not in os.environ
    info = program.cache_info()
    assert info["driver_bytes"] == 0 and info["old_driver"] is True
    assert info["driver_refused"] == "it has no .daskcl-driver-cache file, so daskcl did not make it"
    assert program.clear_disk_cache() == 0
    assert (gl / "data").read_text() == (cache / "nvidia" / "notes.txt").read_text() == "precious"
    assert (foreign / "index").read_text() == "someone else's"
    assert (foreign / "9" / "2" / "5b42ad9c27a8c5").read_text() == "someone else's"
    assert not (foreign / drivercache._DRIVER_MARKER).exists()


@pytest.mark.parametrize("tamper", ["removed", "another text", "a symbolic link", "group-writable",
                                    "another user's"])
def test_driver_directory_is_daskcls_only_while_its_marker_is(cache, no_cuda_env, tamper):
    """daskcl makes its driver cache directory with a marker in it; ``clear`` deletes what the
    driver wrote there (its ``index`` and hashed files, as the H200's driver 580 lays them out)
    and keeps the marker; without a marker of the user's, with daskcl's text, the directory is
    no longer daskcl's: not used, not counted, not emptied."""
    driver = cache / program.DRIVER_CACHE
    assert program.share_driver_cache() == driver
    assert os.environ["CUDA_CACHE_PATH"] == str(driver)
    marker = driver / drivercache._DRIVER_MARKER
    assert sorted(p.name for p in driver.iterdir()) == [drivercache._DRIVER_MARKER]
    assert marker.read_text().startswith("daskcl-driver-cache 1\n")
    assert stat.S_IMODE(marker.stat().st_mode) == 0o600
    assert stat.S_IMODE(driver.stat().st_mode) == 0o700

    def driver_writes() -> None:
        (driver / "9" / "2").mkdir(parents=True, exist_ok=True)
        (driver / "index").write_bytes(bytes(32))
        (driver / "9" / "2" / "5b42ad9c27a8c5").write_bytes(bytes(61184))

    driver_writes()
    assert program.cache_info()["driver_bytes"] == 32 + 61184
    assert program.clear_disk_cache() == 2
    assert sorted(p.name for p in driver.iterdir()) == [drivercache._DRIVER_MARKER]
    driver_writes()
    text = marker.read_bytes()
    if tamper == "removed":
        marker.unlink()
        why = "it has no .daskcl-driver-cache file, so daskcl did not make it"
    elif tamper == "another text":
        marker.write_text("not daskcl's\n")
        why = "its .daskcl-driver-cache is not daskcl's"
    elif tamper == "a symbolic link":
        elsewhere = cache.parent / "elsewhere"
        elsewhere.write_bytes(text)
        marker.unlink()
        marker.symlink_to(elsewhere)
        why = "its .daskcl-driver-cache cannot be read (Too many levels of symbolic links)"
    elif tamper == "group-writable":
        marker.chmod(0o620)
        why = "its .daskcl-driver-cache is writable by its group (mode 620)"
    else:
        if os.geteuid() != 0:
            pytest.skip("a file of another user is made by root (CI runs the tests as root)")
        os.chown(marker, 65534, 65534)
        why = f"its .daskcl-driver-cache belongs to uid 65534, not to you (uid {os.geteuid()})"
    info = program.cache_info()
    assert (info["driver_bytes"], info["driver_refused"]) == (0, why)
    assert program.clear_disk_cache() == 0
    assert (driver / "index").stat().st_size == 32
    assert (driver / "9" / "2" / "5b42ad9c27a8c5").stat().st_size == 61184
    del os.environ["CUDA_CACHE_PATH"]       # a new process (no_cuda_env unsets it after)
    with pytest.warns(program.CacheWarning, match=re.escape(f"{driver}: {why};")):
        assert program.share_driver_cache() is None
    assert "CUDA_CACHE_PATH" not in os.environ


def test_processes_starting_at_once_make_one_driver_directory(tmp_path, monkeypatch):
    """Workers starting at once on a new cache: one makes the driver's directory, and every one
    finds it daskcl's (never without its marker), with nothing of the others' left beside it."""
    for attempt in range(5):
        cache = tmp_path / f"cache{attempt}"
        monkeypatch.setenv("DASKCL_CACHE_DIR", str(cache))
        barrier = threading.Barrier(8)
        found: list[bool] = []

        def start(barrier: threading.Barrier = barrier, found: list[bool] = found) -> None:
            with diskcache._DiskCache.open() as disk:
                assert disk is not None
                barrier.wait()
                drivercache._make_driver_dir(disk)
                fd = drivercache._open_driver_dir(disk, program.DRIVER_CACHE)
                found.append(fd is not None)
                if fd is not None:
                    os.close(fd)

        threads = [threading.Thread(target=start) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert found == [True] * 8
        assert os.listdir(cache) == [program.DRIVER_CACHE]
        assert os.listdir(cache / program.DRIVER_CACHE) == [drivercache._DRIVER_MARKER]


def test_a_driver_directory_left_half_made_is_cleared_only_if_daskcls(cache, no_cuda_env):
    """A process that died making the driver's directory left it under its temporary name,
    with the marker in it: ``clear`` removes that; a directory of such a name without the
    marker stays."""
    assert program.share_driver_cache() is not None
    marker = (cache / program.DRIVER_CACHE / drivercache._DRIVER_MARKER).read_bytes()
    left = cache / f"{program.DRIVER_CACHE}.0123456789abcdef.tmp"
    left.mkdir(mode=0o700)
    (left / drivercache._DRIVER_MARKER).write_bytes(marker)
    other = cache / f"{program.DRIVER_CACHE}.fedcba9876543210.tmp"
    other.mkdir(mode=0o700)
    (other / "mine").write_text("keep")
    assert program.clear_disk_cache() == 1
    assert not left.exists()
    assert (other / "mine").read_text() == "keep"
    assert (cache / program.DRIVER_CACHE / drivercache._DRIVER_MARKER).read_bytes() == marker


def test_cache_warm_in_several_processes(cache):
    """``daskcl cache warm --jobs N`` builds in N processes at once (NVIDIA's OpenCL builds
    one program of a process at a time) and reports the programs of all of them."""
    env = {**os.environ, "DASKCL_CACHE_DIR": str(cache)}
    r = subprocess.run([sys.executable, "-m", "daskcl", "cache", "warm", "--names",
                        "pnorm,dnorm,qnorm", "--jobs", "2"], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "3 kernels" in r.stdout and "3 programs built, 0 loaded" in r.stdout, r.stdout
    r = subprocess.run([sys.executable, "-m", "daskcl", "cache", "warm", "--names",
                        "pnorm,dnorm,qnorm", "--jobs", "3"], capture_output=True, text=True,
                       env=env, timeout=600)
    assert "0 programs built, 3 loaded" in r.stdout, r.stdout
    r = subprocess.run([sys.executable, "-m", "daskcl", "cache", "warm", "--names", "pnorm",
                        "--jobs", "0"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 2 and "--jobs" in r.stderr
    # an unknown name is refused before anything is built (pnorm was built, then the error)
    before = sorted(p.name for p in cache.rglob("*"))
    r = subprocess.run([sys.executable, "-m", "daskcl", "cache", "warm", "--names",
                        "pt,nosuch"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 2
    assert r.stderr == "error: no daskcl.nmath function 'nosuch'; nothing was built\n"
    assert sorted(p.name for p in cache.rglob("*")) == before
