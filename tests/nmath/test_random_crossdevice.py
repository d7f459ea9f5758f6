# SPDX-License-Identifier: GPL-2.0-or-later
"""Random variates are the same bits on every fp64 device of the machine.

The generator is integer arithmetic and the transforms use only correctly rounded IEEE
operations (cl/nmath/rng_math.cl), so PoCL and a GPU must agree bit for bit.  One process per
device (a process binds one device; tests/support/devices.py chooses the devices).  On a machine with
two distinct devices of its own (a GPU machine: GPU and PoCL) it compares every r-function
over the parameter sets of the statistical tests (where the saddle-point masses of
dpois_raw/dbinom_raw decide an acceptance, the built-in log/exp they use could in principle
flip a decision lying within rounding of its threshold: the report then names the elements).
On a CPU-only machine (CI) it compares PoCL's ``pthread`` and ``basic`` drivers over the
r-functions of :data:`PAIR_FUNCTIONS`: each method of transformation once, not every row.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.devices import bit_differences, comparison_devices, evaluate_everywhere
from test_random_api import PARAMS

HERE = Path(__file__).resolve().parent

#: the r-functions compared between PoCL's two drivers: inversion (runif, rnorm, rgeom),
#: Marsaglia-Tsang (rgamma), Cheng (rbeta), PTRS (rpois), BTRS and inversion (rbinom), rhyper,
#: and the count tables (rsignrank)
PAIR_FUNCTIONS = ("rbeta", "rbinom", "rgamma", "rgeom", "rhyper", "rnorm", "rpois", "rsignrank",
                  "runif")

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
    cases = [c for c in cases if NAMES is None or c[0] in NAMES]
    for k, (name, params) in enumerate(cases):
        out[f"{k}|{name}{params}"] = getattr(nmath, name)((50, 100), *params, seed=k,
                                                         offset=2**33 - 2500)
    np.savez(sys.argv[1], **out)
""")


def test_pair_functions_are_r_functions():
    assert set(PAIR_FUNCTIONS) <= set(PARAMS)


@pytest.mark.slow
def test_devices_give_identical_bits(tmp_path):
    names = PAIR_FUNCTIONS if comparison_devices().pocl_pair else None
    results = evaluate_everywhere(f"NAMES = {names!r}\n" + EVAL, tmp_path)
    ref = results[0]
    failures = []
    compared = 0
    for other in results[1:]:
        assert other.keys() == ref.keys()
        for key, a in ref.items():
            if key == "__device__":
                continue
            why = bit_differences(key, a, other[key])
            if why:
                failures.append(why)
            compared += a.size
    devices = [str(r["__device__"]) for r in results]
    assert not failures, f"devices {devices} disagree:\n" + "\n".join(failures[:40])
    print(f"compared {compared} variates bit for bit on {devices}")
    assert compared > 1000
