# SPDX-License-Identifier: GPL-2.0-or-later
"""Test configuration: one disk cache for the whole session, so kernels build once per run.

Tests run on whatever device daskcl binds (``DASKCL_DEVICE`` selects, e.g. ``NVIDIA`` on a GPU
machine); CI has no GPU and runs on PoCL.

The tests are arranged by layer: ``runtime`` (devices, the kernel library, building, linking,
the program cache, configuration), ``kernels`` (the array API, elementwise and raw kernels,
launches, dask and device arrays, count tables), ``nmath`` (agreement with R, accuracy,
documentation, the random generators), ``glm``, ``sweep`` (specs, stores, the command line,
the shipped workflows), ``distributed``, ``deploy``, and ``project`` (packaging, the public
surface, the documented names, the benchmark report).  ``support`` holds the helpers, ``rcases``
the R-agreement cases and ``data`` the reference tables.  Every test directory is on the path,
so test modules' names must differ across directories.  Markers select what a test needs beyond
CI's machine: ``gpu``, ``slurm``, ``r`` (and ``slow``): e.g. ``pytest -m "not slurm"``.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile

import pytest

_TESTS = os.path.dirname(os.path.abspath(__file__))
if _TESTS not in sys.path:      # pytest's default import mode puts it there, importlib's does not
    sys.path.insert(0, _TESTS)
from support import suite_dirs  # noqa: E402

sys.path[:0] = [d for d in suite_dirs() if d not in sys.path]

if "DASKCL_CACHE_DIR" not in os.environ:
    os.environ["DASKCL_CACHE_DIR"] = tempfile.mkdtemp(prefix="daskcl-test-cache-")
os.environ.pop("DASKCL_NO_CACHE", None)

# The Ctrl-C tests send SIGINT to this process and to children as a terminal would.  A suite
# started in the background of a non-interactive shell (`cmd &`) inherits SIGINT ignored, which
# Python and every child then keep (no KeyboardInterrupt at all): give it Python's default, which
# children inherit as the default disposition.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``gpu`` runs only where the device bound is a GPU."""
    if item.get_closest_marker("gpu") is not None:
        from daskcl.runtime import device

        info = device.current().info
        if info.type != "GPU":
            pytest.skip(f"needs a GPU; the device here is {info.describe()}")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty private disk cache of this test's own (the default build mode, nothing in
    memory): a call builds what it needs.  Yields its directory."""
    from daskcl.runtime import program

    d = tmp_path / "cache"
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(d))
    for key in ("DASKCL_NO_CACHE", "DASKCL_LINK", "DASKCL_CACHE_SHARED", "DASKCL_NOINLINE"):
        monkeypatch.delenv(key, raising=False)
    program.clear_memory_cache()
    # a helper that failed in an earlier test of this process (a build into a test's cache
    # removed under it) stops this process's helpers for good, as it should in a user's: each
    # test starts as a fresh process would (a GPU run under xdist found no helper started)
    monkeypatch.setattr(program, "_HELPERS_FAILED", False)
    yield d
    # a helper process still building into the directory (a GPU's tiering) ends before it goes
    program.wait_background(timeout=600)
    program.clear_memory_cache()
