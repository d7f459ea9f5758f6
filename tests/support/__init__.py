# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the tests, one module per concern: ``procs`` (Python children that say why they
hang), ``devices`` (the cross-device comparisons), ``queues`` (a queue held busy),
``rmath_oracle`` (libRmath through ctypes) and ``failure_log`` (a pytest plugin)."""

from __future__ import annotations

from pathlib import Path

#: the tests directory, and the repository holding it
TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


def suite_dirs() -> list[str]:
    """``tests/`` and each of its test directories: on the path of the suite and of the children
    that import a test module, so that a module imports another by its name in any directory."""
    return [str(TESTS), *sorted(str(d) for d in TESTS.iterdir()
                                if d.is_dir() and any(d.glob("test_*.py")))]
