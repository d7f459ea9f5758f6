# SPDX-License-Identifier: GPL-2.0-or-later
"""Random variates are the same bits on every fp64 device of the machine.

The generator is integer arithmetic and the transforms use only correctly rounded IEEE
operations (cl/nmath/rng_math.cl), so PoCL and a GPU must agree bit for bit.  One process per
device (a process binds one device).  On a CPU-only machine (CI) there is one device, PoCL, and
this test is skipped saying so; on the GPU machine it compares the GPU with PoCL for every
r-function over the parameter sets of the statistical tests (where the saddle-point masses
of dpois_raw/dbinom_raw decide an acceptance, the built-in log/exp they use could in principle
flip a decision lying within rounding of its threshold: the report then names the elements).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from devices import evaluate_everywhere

HERE = Path(__file__).resolve().parent

EVAL = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    sys.path.insert(0, sys.argv[2]); sys.path.insert(0, sys.argv[3])
    from daskcl.runtime import device
    from daskcl import nmath
    from test_random_stats import CONTINUOUS, DISCRETE
    from test_random_api import PARAMS
    out = {"__device__": np.array(device.current().info.describe())}
    warnings.simplefilter("ignore")
    cases = [(c[0], c[1]) for c in CONTINUOUS + DISCRETE] + sorted(PARAMS.items())
    for k, (name, params) in enumerate(cases):
        out[f"{k}|{name}{params}"] = getattr(nmath, name)((50, 100), *params, seed=k,
                                                         offset=2**33 - 2500)
    np.savez(sys.argv[1], **out)
""")


@pytest.mark.slow
def test_devices_give_identical_bits(tmp_path):
    results = evaluate_everywhere(EVAL, tmp_path)
    ref = results[0]
    failures = []
    compared = 0
    for other in results[1:]:
        for key, a in ref.items():
            if key == "__device__":
                continue
            b = other[key]
            same = a.view(np.uint64) == b.view(np.uint64)
            if not same.all():
                idx = np.argwhere(~same)[:3].tolist()
                failures.append(f"{key}: {int((~same).sum())} of {a.size} differ, e.g. at {idx}: "
                                f"{[float(a[tuple(i)]) for i in idx]} vs "
                                f"{[float(b[tuple(i)]) for i in idx]}")
            compared += a.size
    devices = [str(r["__device__"]) for r in results]
    assert not failures, f"devices {devices} disagree:\n" + "\n".join(failures[:40])
    print(f"compared {compared} variates bit for bit on {devices}")
