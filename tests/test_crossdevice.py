# SPDX-License-Identifier: GPL-2.0-or-later
"""Every R-agreement case gives the same values on every fp64 device of the machine.

One process per device (a process binds one device).  On a CPU-only machine (CI) there is one
device, PoCL, and this test is skipped saying so; on the GPU machine it compares the GPU with
PoCL, point for point, over every case and flag combination of tests/rcases.
"""

from __future__ import annotations

import pkgutil
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import rcases
from devices import evaluate_everywhere
from rcases import all_cases

from daskcl.kernels._nmath_table import ROWS

HERE = Path(__file__).resolve().parent
ROW = {fn.name: fn for fn in ROWS}

GROUPS = sorted(m.name for m in pkgutil.iter_modules(rcases.__path__) if hasattr(
    __import__(f"rcases.{m.name}", fromlist=["CASES"]), "CASES"))

EVAL = textwrap.dedent("""
    import itertools, sys, warnings
    import numpy as np
    sys.path.insert(0, sys.argv[2]); sys.path.insert(0, sys.argv[3])
    from daskcl.runtime import device
    from daskcl import nmath
    from daskcl.kernels._nmath_table import ROWS
    import importlib
    ROW = {fn.name: fn for fn in ROWS}
    CASES = importlib.import_module("rcases." + GROUP).CASES
    out = {"__device__": np.array(device.current().info.describe())}
    warnings.simplefilter("ignore")
    for case in CASES:
        fn = ROW[case.name]
        keys = [py for py, _ in fn.flags]
        for values in itertools.product((False, True), repeat=len(keys)):
            flags = dict(zip(keys, values))
            key = case.id + "|" + ",".join(f"{k}={int(v)}" for k, v in flags.items())
            out[key] = np.asarray(getattr(nmath, case.name)(*case.axes(), **flags))
    np.savez(sys.argv[1], **out)
""")


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_devices_agree(group, tmp_path):
    """The cases of one module of tests/rcases (one test per module, so they run in parallel)."""
    results = evaluate_everywhere(f"GROUP = {group!r}\n" + EVAL, tmp_path)
    ref = results[0]
    cases = {c.id: c for c in all_cases()}
    failures = []
    compared = 0
    for other in results[1:]:
        for key, a in ref.items():
            if key == "__device__":
                continue
            b = other[key]
            case = cases[key.split("|")[0]]
            same_nan = np.array_equal(np.isnan(a), np.isnan(b))
            fin = np.isfinite(a) & np.isfinite(b)
            same_inf = np.array_equal(np.where(np.isinf(a), a, 0), np.where(np.isinf(b), b, 0))
            with np.errstate(invalid="ignore", divide="ignore"):
                rel = np.abs(a - b) / np.maximum(np.abs(b), sys.float_info.min)
            worst = float(np.max(rel[fin], initial=0.0))
            # each device is within rtol of R, so of each other within 2 rtol (or the atol)
            if not (same_nan and same_inf) or (worst > 2 * case.rtol and
                                               float(np.max(np.abs(a - b)[fin], initial=0)) > 2 * case.atol):
                failures.append(f"{key}: nan/inf pattern equal {same_nan}/{same_inf}, worst rel {worst:.3g}")
            compared += a.size
    devices = [str(r["__device__"]) for r in results]
    assert not failures, f"devices {devices} disagree:\n" + "\n".join(failures[:30])
    print(f"compared {compared} values on {devices}")
    assert compared > 100  # the cases are not empty
