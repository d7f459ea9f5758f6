# SPDX-License-Identifier: GPL-2.0-or-later
"""The program cache trusts only its owner, and no entry makes a build fail, return wrong values
or wait.

Entries are native code: a cache directory that another user owns or may write is not used, and
an entry that records another program's key, is not a regular file, or cannot be reached is
rebuilt from source with one :class:`~daskcl.runtime.program.CacheWarning`.  Victims of other users run
as ``nobody`` (through ``setpriv``; the tests run as root in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support import suite_dirs
from support.procs import repo_pythonpath

from daskcl.runtime import device, diskcache, drivercache, program
from daskcl.runtime.library import Library, ProgramSource

REPO = Path(__file__).resolve().parents[2]

KERNEL = """
__kernel void twice(__global double *x) { size_t i = get_global_id(0); x[i] = twice_it(x[i]); }
"""
OTHER_KERNEL = """
__kernel void other(__global double *x) { size_t i = get_global_id(0); x[i] = twice_it(x[i]); }
"""
GOOD = [0.0, 2.0, 4.0, 6.0]
EVIL = [42.0, 42.0, 42.0, 42.0]


def make_library(root: Path, body: str = "2.0 * x") -> Library:
    """A one-unit library whose ``twice_it(x)`` returns ``body`` (a fresh cache key each time)."""
    (root / "shims").mkdir(parents=True)
    (root / "nmath").mkdir()
    (root / "OPENCL.cl").write_text((REPO / "cl" / "OPENCL.cl").read_text())
    (root / "nmath" / "twice.cl").write_text(
        f"// @provides: twice_it\n// @depends:\n// {uuid.uuid4().hex}\n"
        f"double twice_it(double x) {{ return {body}; }}\n"
    )
    lib = Library(root)
    lib.write_index()
    return lib


def run_kernel(built: program.BuiltProgram, name: str = "twice") -> list[float]:
    import pyopencl as cl

    bound = device.current()
    x = np.arange(4.0)
    buf = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    k, lock = built.kernel(name)
    with lock:
        k(bound.queue, (4,), None, buf)
    cl.enqueue_copy(bound.queue, x, buf)
    return [float(v) for v in x]


def entry_of(src: ProgramSource) -> Path:
    """The path of the cache entry of a program source on the bound device."""
    bound = device.current()
    key = program._resolve(bound, src, (), False)[2]    # the options of this device's builds
    path = diskcache._disk_path(key, bound)
    assert path is not None
    return path


def plant(monkeypatch: pytest.MonkeyPatch, victim_src: ProgramSource,
          evil_src: ProgramSource) -> Path:
    """Write the evil program's binary as the victim's entry, recording the victim's key."""
    real = program._key
    monkeypatch.setattr(program, "_key",
                        lambda identity, text, options: real(identity, victim_src.text, options))
    program.clear_memory_cache()
    program.build(evil_src)
    monkeypatch.setattr(program, "_key", real)
    program.clear_memory_cache()
    path = entry_of(victim_src)
    assert path.is_file()
    return path


# -- a victim in another process (as nobody where asked) ------------------------------------------

VICTIM = textwrap.dedent("""
    import json, sys, warnings
    sys.path[:0] = json.loads(sys.argv[1])
    from pathlib import Path
    from daskcl.runtime import drivercache, program
    from daskcl.runtime.library import Library
    from test_cache_trust import KERNEL, run_kernel
    drivercache._nvidia_opencl = lambda: True   # the driver's directory as on an NVIDIA machine
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for lib in sys.argv[2:]:
            built = program.build(Library(Path(lib)).program_source(["twice_it"], KERNEL))
            out.append([built.origin, run_kernel(built)])
    print(json.dumps({"runs": out, "warnings": [str(w.message) for w in caught
                                                 if issubclass(w.category, program.CacheWarning)]}))
""")


def run_victim(libs: list[Path], env: dict[str, str], as_nobody: list[str] | None = None,
               cwd: Path | None = None, timeout: float = 300) -> dict:
    """Build and run each library's program in a fresh process; its origins, values, warnings."""
    argv = [*(as_nobody or []), sys.executable, "-c", VICTIM, json.dumps(suite_dirs()),
            *map(str, libs)]
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("DASKCL_CACHE", "DASKCL_NO_CACHE", "XDG_CACHE", "CUDA_CACHE"))}
    full.update({"PYTHONPATH": repo_pythonpath(REPO), **env})
    try:
        r = subprocess.run(argv, env=full, capture_output=True, text=True, timeout=timeout,
                           cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the build did not return within {timeout} s (blocked on the cache)")
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def nobody() -> tuple[list[str], bool]:
    """The command prefix that runs a process as nobody:nogroup, and whether it may read
    everything (``CAP_DAC_READ_SEARCH``: where the interpreter lies in a directory that nobody
    cannot search, such as root's home)."""
    if os.geteuid() != 0:
        pytest.skip("running a process as another user needs root (CI runs the tests as root)")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    probe = [sys.executable, "-c", "import numpy, pyopencl, daskcl.runtime.program"]
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(REPO)}
    if subprocess.run(prefix + probe, env=env, capture_output=True, cwd="/").returncode == 0:
        return prefix, False
    # nobody as the effective user (whose files it writes and whose checks the cache makes),
    # reading with CAP_DAC_READ_SEARCH; the real user stays root, so that access(2), which
    # ignores the capabilities of other users, finds PoCL's files too
    prefix = [setpriv, "--euid=nobody", "--egid=nogroup", "--clear-groups",
              "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    r = subprocess.run(prefix + probe, env=env, capture_output=True, text=True, cwd="/")
    if r.returncode != 0:
        pytest.skip(f"nobody cannot run {sys.executable}: {r.stderr[-300:]}")
    return prefix, True


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory that nobody may read (the libraries) with a home nobody may write."""
    base = Path(tempfile.mkdtemp(prefix="daskcl-trust-"))
    base.chmod(0o755)
    (base / "home").mkdir(mode=0o777)
    (base / "home").chmod(0o777)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def nobody_env(base: Path, cache_dir: Path, **extra: str) -> dict[str, str]:
    pocl = Path(tempfile.mkdtemp(dir=base / "home"))
    pocl.chmod(0o777)
    return {"DASKCL_CACHE_DIR": str(cache_dir), "HOME": str(base / "home"),
            "POCL_CACHE_DIR": str(pocl), **extra}


NOBODY = 65534
NOGROUP = 65534


def chown_tree(path: Path, uid: int, gid: int) -> None:
    for p in [path, *path.rglob("*")]:
        os.lchown(p, uid, gid)


# -- a cache of another user, or one that others may write -----------------------------------------


@pytest.mark.parametrize("owner", ["root", "world-writable"])
def test_cache_of_another_user_or_writable_by_others_is_not_used(
        nobody, shared_tmp, monkeypatch, owner):
    """An entry planted where the victim (nobody) looks, with a valid checksum and the victim's
    own key recorded, is not used: the cache directory is root's, or the victim's but writable
    by everyone."""
    prefix, _ = nobody
    good = make_library(shared_tmp / "good")
    evil = make_library(shared_tmp / "evil", "42.0")
    cache = shared_tmp / "cache"
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(cache))
    monkeypatch.delenv("DASKCL_CACHE_SHARED", raising=False)
    src = good.program_source(["twice_it"], KERNEL)
    plant(monkeypatch, src, evil.program_source(["twice_it"], KERNEL))
    # the planted entry is one the code would load: root, its owner, gets 42
    assert program.build(src).origin == "disk"
    assert run_kernel(program.build(src)) == EVIL
    program.clear_memory_cache()
    if owner == "root":
        for p in [cache, *cache.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        want = "belongs to uid 0"
    else:
        chown_tree(cache, NOBODY, NOGROUP)
        cache.chmod(0o777)
        want = "writable by others"
    res = run_victim([shared_tmp / "good"], nobody_env(shared_tmp, cache), prefix, shared_tmp)
    assert res["runs"] == [["source", GOOD]]
    (warning,) = res["warnings"]
    assert "does not use the program cache" in warning and want in warning
    # ... and did not write into it either
    assert len(list(cache.rglob("*.bin"))) == 1


def test_group_shared_cache_by_explicit_choice(nobody, shared_tmp):
    """DASKCL_CACHE_SHARED=group accepts a setgid directory of the user's group (a cache built
    once per cluster), writes entries the group can read, and never one others may write."""
    prefix, _ = nobody
    lib = make_library(shared_tmp / "lib")
    cache = shared_tmp / "group-cache"
    cache.mkdir()
    os.chown(cache, 0, NOGROUP)
    cache.chmod(0o2770)
    shared = nobody_env(shared_tmp, cache, DASKCL_CACHE_SHARED="group")
    # without the explicit choice, a directory of root is not the victim's cache
    res = run_victim([lib.root], nobody_env(shared_tmp, cache), prefix, shared_tmp)
    assert res["runs"] == [["source", GOOD]] and "belongs to uid 0" in res["warnings"][0]
    res = run_victim([lib.root], shared, prefix, shared_tmp)
    assert res == {"runs": [["source", GOOD]], "warnings": []}
    (entry,) = cache.rglob("*.bin")
    st = entry.stat()
    assert st.st_uid == NOBODY and st.st_gid == NOGROUP and stat.S_IMODE(st.st_mode) == 0o640
    assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o2770
    # the driver's directory, made for the group, with daskcl's marker the group can read
    driver = cache / program.DRIVER_CACHE
    st = driver.stat()
    assert st.st_uid == NOBODY and st.st_gid == NOGROUP and stat.S_IMODE(st.st_mode) == 0o2770
    st = (driver / drivercache._DRIVER_MARKER).stat()
    assert st.st_uid == NOBODY and st.st_gid == NOGROUP and stat.S_IMODE(st.st_mode) == 0o640
    res = run_victim([lib.root], shared, prefix, shared_tmp)
    assert res == {"runs": [["disk", GOOD]], "warnings": []}
    # a group's cache is not made by daskcl
    missing = shared_tmp / "no-such-cache"
    res = run_victim([lib.root], {**shared, "DASKCL_CACHE_DIR": str(missing)}, prefix, shared_tmp)
    assert res["runs"] == [["source", GOOD]] and "chmod 2770" in res["warnings"][0]
    assert not missing.exists()
    # others may never write a shared cache
    cache.chmod(0o2777)
    res = run_victim([lib.root], shared, prefix, shared_tmp)
    assert res["runs"] == [["source", GOOD]]
    (warning,) = res["warnings"]
    assert "writable by others" in warning


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770], ids=["0777", "1777", "0770"])
def test_own_cache_writable_by_others_is_not_used(cache, monkeypatch, tmp_path, mode):
    """Even the user's own directory is not trusted while its group or others may write it."""
    good = make_library(tmp_path / "good")
    src = good.program_source(["twice_it"], KERNEL)
    plant(monkeypatch, src, make_library(tmp_path / "evil", "42.0").program_source(["twice_it"],
                                                                                 KERNEL))
    cache.chmod(mode)
    with pytest.warns(program.CacheWarning, match="does not use the program cache") as record:
        built = program.build(src)
        program.clear_memory_cache()
        again = program.build(src)
    assert len(record) == 1
    assert built.origin == again.origin == "source"
    assert run_kernel(built) == GOOD


def test_entry_writable_by_others_is_rebuilt(cache, monkeypatch, tmp_path):
    good = make_library(tmp_path / "good")
    src = good.program_source(["twice_it"], KERNEL)
    entry = plant(monkeypatch, src, make_library(tmp_path / "evil", "42.0")
                  .program_source(["twice_it"], KERNEL))
    entry.chmod(0o666)
    with pytest.warns(program.CacheWarning, match="writable by others"):
        built = program.build(src)
    assert built.origin == "source" and run_kernel(built) == GOOD
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600  # replaced by a private entry
    program.clear_memory_cache()
    assert program.build(src).origin == "disk"


def test_new_cache_directory_is_private(tmp_path, monkeypatch):
    d = tmp_path / "new" / "parents" / "cache"
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(d))
    monkeypatch.delenv("DASKCL_CACHE_SHARED", raising=False)
    program.clear_memory_cache()
    old = os.umask(0o022)
    try:
        built = program.build(make_library(tmp_path / "lib").program_source(["twice_it"], KERNEL))
    finally:
        os.umask(old)
    assert run_kernel(built) == GOOD
    (entry,) = d.rglob("*.bin")
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


# -- entries recorded for another program ----------------------------------------------------------


@pytest.mark.parametrize("kernel_b", [KERNEL, OTHER_KERNEL], ids=["same-kernel", "other-kernel"])
def test_swapped_entries_are_rebuilt_and_replaced(cache, tmp_path, kernel_b):
    """Two programs' entries swapped (each with a valid checksum): each program notices the key
    its entry records, rebuilds, computes its own values, and replaces the entry."""
    a = make_library(tmp_path / "a").program_source(["twice_it"], KERNEL)
    b = make_library(tmp_path / "b", "42.0").program_source(["twice_it"], kernel_b)
    name_b = "twice" if kernel_b is KERNEL else "other"
    assert run_kernel(program.build(a)) == GOOD
    assert run_kernel(program.build(b), name_b) == EVIL
    ea, eb = entry_of(a), entry_of(b)
    blob_a, blob_b = ea.read_bytes(), eb.read_bytes()
    ea.write_bytes(blob_b)
    eb.write_bytes(blob_a)
    program.clear_memory_cache()
    with pytest.warns(program.CacheWarning, match="key mismatch") as record:
        got_a = program.build(a)
        got_b = program.build(b)
    assert len(record) == 2
    assert got_a.origin == got_b.origin == "source"
    assert run_kernel(got_a) == GOOD and run_kernel(got_b, name_b) == EVIL
    program.clear_memory_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again_a, again_b = program.build(a), program.build(b)
    assert again_a.origin == again_b.origin == "disk"
    assert run_kernel(again_a) == GOOD and run_kernel(again_b, name_b) == EVIL


# -- entries that are not regular files ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_entry_that_is_not_a_regular_file_falls_back(cache, tmp_path, monkeypatch, kind):
    """A FIFO in place of an entry does not block; a symbolic link is not followed (here to a
    planted entry elsewhere); a directory is not an entry.  One warning, the right values."""
    lib = make_library(tmp_path / "good")
    src = lib.program_source(["twice_it"], KERNEL)
    entry = entry_of(src)
    if kind == "symlink":
        elsewhere = tmp_path / "elsewhere"
        monkeypatch.setenv("DASKCL_CACHE_DIR", str(elsewhere))
        evil = make_library(tmp_path / "evil", "42.0").program_source(["twice_it"], KERNEL)
        planted = plant(monkeypatch, src, evil)
        monkeypatch.setenv("DASKCL_CACHE_DIR", str(cache))
    program.build(src)
    program.clear_memory_cache()
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "symlink":
        entry.symlink_to(planted)
    else:
        entry.mkdir()
    res = run_victim([lib.root], {"DASKCL_CACHE_DIR": str(cache)}, timeout=120)
    assert res["runs"] == [["source", GOOD]]
    (warning,) = res["warnings"]
    assert "not a regular file" in warning
    if kind != "directory":  # rebuilt and replaced by a regular file
        assert stat.S_ISREG(entry.lstat().st_mode)
        res = run_victim([lib.root], {"DASKCL_CACHE_DIR": str(cache)}, timeout=120)
        assert res == {"runs": [["disk", GOOD]], "warnings": []}


# -- OS errors on the cache path -------------------------------------------------------------------


def test_cache_path_name_too_long_warns_once(tmp_path, monkeypatch):
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(tmp_path / ("x" * 300) / "cache"))
    monkeypatch.delenv("DASKCL_CACHE_SHARED", raising=False)
    program.clear_memory_cache()
    a = make_library(tmp_path / "a").program_source(["twice_it"], KERNEL)
    b = make_library(tmp_path / "b", "42.0").program_source(["twice_it"], KERNEL)
    with pytest.warns(program.CacheWarning, match="does not use the program cache") as record:
        assert run_kernel(program.build(a)) == GOOD
        assert run_kernel(program.build(b)) == EVIL
    assert len(record) == 1 and "File name too long" in str(record[0].message)


@pytest.mark.parametrize("parent", ["unsearchable", "unwritable"])
def test_cache_under_inaccessible_directory_warns_once(nobody, shared_tmp, parent):
    """The cache directory cannot be reached (its parent is root's, mode 0700) or made (0755):
    one warning for the process, and every program built from source."""
    prefix, reads_everything = nobody
    if parent == "unsearchable" and reads_everything:
        pytest.skip("nobody runs this interpreter only with CAP_DAC_READ_SEARCH, which searches "
                    "every directory")
    locked = shared_tmp / "locked"
    locked.mkdir()
    locked.chmod(0o700 if parent == "unsearchable" else 0o755)
    libs = [make_library(shared_tmp / "a"), make_library(shared_tmp / "b", "42.0")]
    res = run_victim([lib.root for lib in libs], nobody_env(shared_tmp, locked / "cache"), prefix,
                     shared_tmp)
    assert res["runs"] == [["source", GOOD], ["source", EVIL]]
    (warning,) = res["warnings"]
    assert "does not use the program cache" in warning and "PermissionError" in warning
    assert not (locked / "cache").exists()


def test_cache_path_that_is_another_users_symlink_is_not_used(tmp_path, monkeypatch):
    """A symbolic link planted at the cache's path (in a shared /tmp, say) is not followed even
    to a directory of the user's own; the user's own links are."""
    if os.geteuid() != 0:
        pytest.skip("a link of another user is made by root (CI runs the tests as root)")
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(link))
    monkeypatch.delenv("DASKCL_CACHE_SHARED", raising=False)
    program.clear_memory_cache()
    src = make_library(tmp_path / "lib").program_source(["twice_it"], KERNEL)
    assert run_kernel(program.build(src)) == GOOD
    assert len(list(target.rglob("*.bin"))) == 1  # the user's own link: used
    os.lchown(link, NOBODY, NOGROUP)
    program.clear_memory_cache()
    with pytest.warns(program.CacheWarning, match="symbolic link of uid 65534"):
        built = program.build(src)
    assert built.origin == "source" and run_kernel(built) == GOOD


def test_unknown_shared_setting_warns_and_stays_private(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("DASKCL_CACHE_SHARED", "everyone")
    cache.mkdir(mode=0o770)
    cache.chmod(0o2770)  # a group's cache, but the setting does not say "group"
    src = make_library(tmp_path / "lib").program_source(["twice_it"], KERNEL)
    with pytest.warns(program.CacheWarning) as record:
        built = program.build(src)
    assert built.origin == "source" and run_kernel(built) == GOOD
    messages = sorted(str(w.message) for w in record)
    assert len(messages) == 2
    assert "DASKCL_CACHE_SHARED='everyone' is not understood" in messages[0]
    assert "writable by its group" in messages[1]


# -- what the warnings say, and where they point -----------------------------------------------


def test_a_warning_about_an_entry_says_what_daskcl_did_at_the_callers_line(cache):
    """An entry others may write, met deep in a call of a daskcl.nmath function: the warning
    says in words what was found and done (no internal class name) and points at the line of
    the caller's code, not inside daskcl."""
    from daskcl import nmath

    assert float(nmath.pnorm(0.5)) == 0.691462461274013
    (entry,) = cache.rglob("*.bin")
    entry.chmod(0o666)
    program.clear_memory_cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        again = float(nmath.pnorm(0.5))
    assert again == 0.691462461274013
    (w,) = [w for w in caught if issubclass(w.category, program.CacheWarning)]
    assert str(w.message) == (
        "daskcl ignored a program cache entry that it cannot trust (the entry is writable by "
        f"others (mode 666)): {entry}; built it from source and replaced the entry")
    assert (w.filename, w.lineno) == (__file__, line)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


USER_SCRIPT = """\
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from daskcl import nmath
    from daskcl.runtime import drivercache
    drivercache._nvidia_opencl = lambda: True   # the driver's directory as on an NVIDIA machine
    value = float(nmath.pnorm(0.5))
print(json.dumps({"value": value, "warnings": [[w.category.__name__, str(w.message), w.filename,
                                                w.lineno] for w in caught]}))
"""


@pytest.mark.parametrize("found", ["cache writable by others", "driver directory not daskcl's"])
def test_a_warning_at_the_first_opencl_call_points_at_the_users_line(tmp_path, found):
    """The cache is checked before the process's first OpenCL call (binding the device, deep
    in daskcl): its warning points at the user's line that made the call, and says what daskcl
    found and did."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    if found == "cache writable by others":
        cache.chmod(0o777)
        said = (f"daskcl does not use the program cache at {cache}: the directory is writable "
                "by others (mode 777). Programs are built from source in this process.")
    else:
        (cache / program.DRIVER_CACHE).mkdir()
        said = (f"daskcl does not keep the NVIDIA driver's compiled code in "
                f"{cache / program.DRIVER_CACHE}: it has no .daskcl-driver-cache file, so "
                "daskcl did not make it; it uses only a directory it made itself")
    script = tmp_path / "user.py"
    script.write_text(USER_SCRIPT)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DASKCL_CACHE", "DASKCL_NO_CACHE", "CUDA_CACHE"))}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, env={**env, "PYTHONPATH": repo_pythonpath(REPO),
                                         "DASKCL_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["value"] == 0.691462461274013
    (w,) = [w for w in res["warnings"] if w[0] == "CacheWarning"]
    assert w[1].startswith(said), w[1]
    assert w[2:] == [str(script), 7]       # the line of nmath.pnorm(0.5)
