# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the cross-device tests: two or more fp64 devices, a script run on each, a comparison.

A process binds one device, so each device's results come from a subprocess with
``DASKCL_DEVICE`` set; the script writes them to an ``.npz`` file.

The devices compared are every distinct fp64 device of the machine (one per model: four identical
GPUs give one, and so do two PoCL installations).  Where that is a single device (a CPU-only
machine, CI), the children run with ``POCL_DEVICES`` set to two of PoCL's CPU drivers, so that
PoCL exposes two devices: ``pthread`` (work-groups on threads, vectorised across work-items) and
``basic`` (one work-item at a time).  They share PoCL's compiler but not its work-group code
generation; their device names differ, so daskcl's disk cache keeps a program for each and every
kernel is built for both.  The variable is set in the children only: the test process and the
rest of the suite keep their one device.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from daskcl.runtime import device

from . import REPO, TESTS, suite_dirs
from .procs import run_python

#: seconds a device's evaluation may take before its stacks are dumped (set it below pytest's
#: --timeout on a machine where that is short)
CHILD_TIMEOUT = float(os.environ.get("DASKCL_TEST_CHILD_TIMEOUT", "1500"))
#: PoCL's CPU drivers that give a one-device machine a second device to compare with
POCL_PAIR = "pthread basic"

_LIST = """
import json, sys
sys.path.insert(0, sys.argv[1])
from daskcl.runtime import device
print(json.dumps([(i.spec, i.type, i.name) for i, d in device.list_devices()
                  if i.fp64 and device.probe_fp64(d) is None]))
"""


def _distinct(found: Iterable[tuple[str, str, str]]) -> list[str]:
    """The ``P:D`` specs of ``(spec, type, name)`` rows, one per device type and name."""
    specs: dict[tuple[str, str], str] = {}
    for spec, kind, name in found:
        specs.setdefault((kind, name), spec)
    return list(specs.values())


class Comparison(NamedTuple):
    """The devices compared and the environment their children run in."""

    #: the children's environment (``POCL_DEVICES`` set where it makes the second device)
    env: Mapping[str, str]
    #: ``P:D`` specs of two or more distinct fp64 devices, in that environment
    specs: tuple[str, ...]
    #: whether they are PoCL's two drivers (:data:`POCL_PAIR`), not two devices of the machine
    pocl_pair: bool


@functools.cache
def comparison_devices() -> Comparison:
    """The devices the cross-device tests compare.

    Fails, rather than skips, where PoCL cannot make a second device: PoCL is a test dependency.
    """
    here = _distinct((info.spec, info.type, info.name) for info, dev in device.list_devices()
                     if info.fp64 and device.probe_fp64(dev) is None)
    if len(here) >= 2:
        return Comparison(dict(os.environ), tuple(here), False)
    env = {**os.environ, "POCL_DEVICES": POCL_PAIR}
    r = run_python(["-c", _LIST, str(REPO)], timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    specs = _distinct(json.loads(r.stdout.splitlines()[-1]))
    assert len(specs) >= 2, (
        f"one fp64 OpenCL device here ({here}), and with POCL_DEVICES={POCL_PAIR!r} the devices "
        f"are {specs}: PoCL (pocl-binary-distribution, a test dependency) should give two")
    return Comparison(env, tuple(specs), True)


def evaluate_on(spec: str, script: str, path: Path,
                env: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """Run ``script`` (argv: output path, repository, tests directory) bound to ``spec``."""
    env = {**(os.environ if env is None else env), "DASKCL_DEVICE": spec}
    # the script may import a test module of any test directory
    env["PYTHONPATH"] = os.pathsep.join([*suite_dirs(), *filter(None, [env.get("PYTHONPATH")])])
    r = run_python(["-c", script, str(path), str(REPO), str(TESTS)], timeout=CHILD_TIMEOUT,
                   env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def evaluate_everywhere(script: str, tmp: Path) -> list[dict[str, np.ndarray]]:
    """``script``'s results on each device of :func:`comparison_devices` (the first is the
    reference); each result holds ``__device__``, the device's description, and they differ."""
    env, specs, _ = comparison_devices()
    results = [evaluate_on(s, script, tmp / f"dev{i}.npz", env) for i, s in enumerate(specs)]
    described = [str(r["__device__"]) for r in results]
    assert len(set(described)) == len(described), f"the children bound the same device: {described}"
    return results


def disagreements(key: str, a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> str | None:
    """Why ``a`` and ``b`` (one key's values on two devices) disagree, or ``None``: the NaN and
    infinity patterns must be equal, and each finite pair within ``rtol`` relative to
    ``max(|b|, DBL_MIN)`` or within ``atol``."""
    if a.shape != b.shape:
        return f"{key}: shapes {a.shape} and {b.shape}"
    same_nan = np.array_equal(np.isnan(a), np.isnan(b))
    same_inf = np.array_equal(np.where(np.isinf(a), a, 0), np.where(np.isinf(b), b, 0))
    fin = np.isfinite(a) & np.isfinite(b)
    with np.errstate(all="ignore"):
        rel = np.abs(a - b) / np.maximum(np.abs(b), sys.float_info.min)
        bad = fin & (rel > rtol) & (np.abs(a - b) > atol)
    if same_nan and same_inf and not bad.any():
        return None
    worst = float(np.max(rel[fin], initial=0.0))
    where = np.argwhere(bad)[:3].tolist()
    return (f"{key}: nan/inf pattern equal {same_nan}/{same_inf}, {int(bad.sum())} of {a.size} "
            f"beyond tolerance, worst rel {worst:.3g}, e.g. at {where}: "
            f"{[float(a[tuple(i)]) for i in where]} vs {[float(b[tuple(i)]) for i in where]}")


def bit_differences(key: str, a: np.ndarray, b: np.ndarray) -> str | None:
    """Why ``a`` and ``b`` are not the same bits, or ``None``."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{key}: {a.dtype}{a.shape} and {b.dtype}{b.shape}"
    bits = np.dtype(f"u{a.itemsize}")
    same = a.view(bits) == b.view(bits)
    if same.all():
        return None
    where = np.argwhere(~same)[:3].tolist()
    return (f"{key}: {int((~same).sum())} of {a.size} differ, e.g. at {where}: "
            f"{[a[tuple(i)].item() for i in where]} vs {[b[tuple(i)].item() for i in where]}")


def with_unusable_devices(monkeypatch: Any, real_first: bool) -> tuple[Any, Any, Any]:
    """This host's first device, and two listed beside it (after it, or before it where not
    ``real_first``) at 9:0 and 9:1: one that advertises fp64 but whose probe fails (PyPI's
    PoCL 3.0 on an AMD Zen 5), one without cl_khr_fp64.  Returns their infos: (real, broken,
    single)."""
    real = device.list_devices()[0]
    info = real[0].__class__
    broken = (info(**{**real[0].__dict__, "platform_index": 9, "device_index": 0,
                      "name": "Broken CPU"}), "broken")
    single = (info(**{**real[0].__dict__, "platform_index": 9, "device_index": 1,
                      "name": "Single CPU", "fp64": False}), "single")
    listed = [real, broken, single] if real_first else [broken, single, real]
    monkeypatch.setattr(device, "list_devices", lambda: listed)
    probe = device.probe_fp64
    monkeypatch.setattr(device, "probe_fp64", lambda d: (
        "the probe kernel did not build (error: unknown target CPU 'generic')")
        if d == "broken" else probe(d))
    return real[0], broken[0], single[0]
