# SPDX-License-Identifier: GPL-2.0-or-later
"""``daskcl cache info | clear | warm`` where there is no disk cache to work on, the numbers
the command line takes, and a ``--timeout`` that is not a number of seconds."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest
from support.procs import repo_pythonpath, run_python

from daskcl import cli, config
from daskcl.errors import ConfigError
from daskcl.runtime import device, diskcache, program

ROOT = Path(__file__).resolve().parents[2]


def daskcl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m daskcl ARGS`` of this checkout, in the environment as it is now."""
    return run_python(["-m", "daskcl", *args], timeout=300, cwd=None if cwd is None else str(cwd),
                      env={**os.environ, "PYTHONPATH": repo_pythonpath(ROOT)})


def _unused(kind: str, cache) -> str:
    """Make ``cache`` a cache directory daskcl does not use, of ``kind``; what its error says."""
    if kind == "file":
        cache.write_text("not a directory")
        return "Not a directory"
    cache.mkdir()
    if kind == "writable by others":
        cache.chmod(0o777)
        return "writable by others (mode 777)"
    os.chown(cache, 65534, 65534)      # nobody's
    return "belongs to uid 65534"


@pytest.mark.parametrize("kind", ["file", "writable by others", "another user's"])
def test_cache_commands_refuse_a_cache_daskcl_does_not_use(cache, kind):
    """``warm`` into a cache daskcl does not use built into none and said "2 programs built
    ... from the cache at DIR", exit 0, without a word where ``--jobs`` ran it in processes;
    ``info`` and ``clear`` counted and deleted 0 there.  Each says why in a line, exit 1."""
    if kind == "another user's" and os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    said = _unused(kind, cache)
    for args in (["warm", "--names", "pnorm,qnorm", "--jobs", "2"], ["info"], ["clear"]):
        r = daskcl("cache", *args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert r.stdout == "", (args, r.stdout)
        assert r.stderr.startswith(f"error: daskcl does not use the program cache at {cache}: ")
        assert said in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert (cache.read_text() == "not a directory" if kind == "file"
            else os.listdir(cache) == [])


def test_cache_commands_without_a_disk_cache(cache, monkeypatch):
    """``DASKCL_NO_CACHE=1``: ``warm`` built and said "loaded from the cache at None", and
    ``clear`` "deleted 0 files of the program cache at None", both exit 0."""
    monkeypatch.setenv("DASKCL_NO_CACHE", "1")
    for cmd in ("warm", "clear"):
        r = daskcl("cache", cmd, *(["--names", "pnorm"] * (cmd == "warm")))
        assert (r.returncode, r.stdout) == (1, ""), r
        assert r.stderr == f"error: no disk cache to {cmd} (DASKCL_NO_CACHE is set)\n"
    r = daskcl("cache", "info")
    assert (r.returncode, r.stdout) == (0, "no disk cache (DASKCL_NO_CACHE is set)\n")


def test_cache_warm_on_a_full_disk_fails(cache, monkeypatch, capsys):
    """A disk that fills as ``warm`` writes: the programs are built, none is stored, and warm
    said "1 programs built" and exited 0; now it says so and exits 1 (and the warning why)."""
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(diskcache.os, "fsync", full)
    with pytest.warns(program.CacheWarning, match="No space left on device"):
        assert cli.main(["cache", "warm", "--names", "pnorm"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"error: the cache at {cache} could not store what was built (1 entries "
                   "not written)\n")
    assert not list(cache.rglob("*.bin"))      # and no unfinished write is left
    assert not list(cache.rglob("*.tmp"))


def test_a_truncated_entry_says_it_is_truncated():
    """An entry cut inside its header said "truncated: 0 of 0 bytes"."""
    record = b'{"key": "k"}'
    blob = diskcache._pack(b"x" * 1000, record)
    for n in (len(diskcache._MAGIC) + 8, len(diskcache._MAGIC) + 4 + len(record) + 20):
        with pytest.raises(ValueError, match=f"^truncated: {n} bytes, shorter than its header$"):
            diskcache._unpack(blob[:n], record)
    with pytest.raises(ValueError, match=r"^truncated: 900 of 1000 bytes$"):
        diskcache._unpack(blob[:-100], record)


@pytest.mark.parametrize("args", [
    ["worker", "tcp://127.0.0.1:1", "--devices", "\u00b2"],
    ["sweep", "spec.toml", "--workers", "\u00b2", "--dry-run"],
    ["devices", "--device", "\u00b2:0"],
])
def test_numbers_in_other_digits_are_no_traceback(args, tmp_path):
    """``str.isdigit`` is true of "²", which ``int`` refuses: each was a ``ValueError``
    traceback.  A number is ASCII digits; anything else is a name (a device's)."""
    r = daskcl(*args, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (1, 2), r
    assert r.stderr.splitlines()[-1].startswith(("error: ", "no device would be chosen: ")), r


def test_a_device_index_in_other_digits_is_a_name():
    """``DASKCL_DEVICE="²:0"`` matched as indices, and ``int`` raised."""
    info = device.list_devices()[0][0]
    assert device.matches(info, f"{info.platform_index}:{info.device_index}")
    assert not device.matches(info, "\u00b2:0")
    assert not device.matches(info, "\u0660:\u0660")     # Arabic-Indic zeros: not indices


@pytest.mark.parametrize("env", ["DASKCL_TRANSFER_THREADS", "DASKCL_PINNED_LIMIT"])
def test_whole_numbers_in_other_digits_are_a_config_error(env, monkeypatch):
    """"²" raised int's bare ValueError, not the key's ConfigError; "٣" was taken as 3."""
    key = next(k.name for k in config.KEYS.values() if k.env == env)
    for text in ("\u00b2", "\u0663"):
        monkeypatch.setenv(env, text)
        with pytest.raises(ConfigError, match=f"^{env}="):
            config.get(key)
    monkeypatch.setenv(env, " 3 ")
    assert config.get(key) == 3


@pytest.mark.parametrize("cmd", [["devices"], ["sweep", "spec.toml"]])
def test_an_infinite_timeout_is_refused_in_a_line(cmd, tmp_path):
    """``--timeout inf`` reached dask as "inf s": a ``KeyError`` traceback (Invalid time unit)."""
    spec = tmp_path / "spec.toml"
    spec.write_text('[sweep]\nfunction = "pnorm"\n[axes]\nq = { values = [0.0, 1.0] }\n')
    r = daskcl(*cmd, "--scheduler", "tcp://127.0.0.1:1", "--timeout", "inf",
               *(["--out", str(tmp_path / "o.zarr")] if cmd[0] == "sweep" else []), cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert (r.returncode, r.stderr) == (
        1, "error: --timeout must be a positive number of seconds, not inf\n"), r


