# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the cross-device tests: every fp64 device here, and a script run on one of them.

A process binds one device, so each device's results come from a subprocess with
``DASKCL_DEVICE`` set; the script writes them to an ``.npz`` file.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from procs import run_python

from daskcl.runtime import device

HERE = Path(__file__).resolve().parent
#: seconds a device's evaluation may take before its stacks are dumped (set it below pytest's
#: --timeout on a machine where that is short)
CHILD_TIMEOUT = float(os.environ.get("DASKCL_TEST_CHILD_TIMEOUT", "1500"))


def fp64_devices() -> list[str]:
    """The ``P:D`` specs of the devices with working double precision: one per GPU model (four
    identical GPUs of one host give one) and one CPU device (a machine may have two PoCLs)."""
    specs: dict[tuple[str, str], str] = {}
    for info, dev in device.list_devices():
        if info.fp64 and device.probe_fp64(dev) is None:
            specs.setdefault((info.type, info.name if info.type == "GPU" else ""), info.spec)
    return list(specs.values())


def evaluate_on(spec: str, script: str, path: Path) -> dict[str, np.ndarray]:
    """Run ``script`` (argv: output path, repository, tests directory) bound to ``spec``."""
    env = {**os.environ, "DASKCL_DEVICE": spec}
    r = run_python(["-c", script, str(path), str(HERE.parent), str(HERE)], timeout=CHILD_TIMEOUT, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def evaluate_everywhere(script: str, tmp: Path) -> list[dict[str, np.ndarray]]:
    """``script``'s results on every fp64 device here (the first is the reference); skip the
    test where there is only one device."""
    specs = fp64_devices()
    if len(specs) < 2:
        pytest.skip(f"one fp64 OpenCL device here ({specs}); the GPU machine compares GPU and PoCL")
    return [evaluate_on(s, script, tmp / f"dev{i}.npz") for i, s in enumerate(specs)]
