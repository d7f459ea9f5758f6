# SPDX-License-Identifier: GPL-2.0-or-later
"""The device-independent elementary functions of the r-functions (cl/nmath/rng_math.cl).

They are built from correctly rounded IEEE operations only, so every device gives the same bits;
here their accuracy is measured against NumPy (glibc's libm, itself within an ulp) over wide
ranges, and their special values are checked.
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl
import pytest

from daskcl.runtime import device, program
from daskcl.runtime.library import get_library

KERNEL = """
__kernel void f(const long n, __global const double *x, __global double *out, const int which)
{
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        const double v = x[i];
        out[i] = which == 0 ? rng_log(v) : which == 1 ? rng_log1p(v)
               : which == 2 ? rng_exp(v) : rng_cotpi(v);
    }
}
"""
WHICH = {"log": 0, "log1p": 1, "exp": 2, "cotpi": 3}


def evaluate(name: str, x: np.ndarray) -> np.ndarray:
    src = get_library().program_source(["rng_math"], KERNEL, "test_random_math")
    kernel, lock = program.build(src).kernel("f")
    bound = device.current()
    mf = cl.mem_flags
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    xb = cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    ob = cl.Buffer(bound.context, mf.WRITE_ONLY, out.nbytes)
    with lock:
        kernel.set_args(np.int64(x.size), xb, ob, np.int32(WHICH[name]))
        cl.enqueue_nd_range_kernel(bound.queue, kernel, (x.size,), None)
    cl.enqueue_copy(bound.queue, out, ob)
    bound.queue.finish()
    return out


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got - want) / np.spacing(np.abs(want))


def cotpi_ref(p: np.ndarray) -> np.ndarray:
    import mpmath as mp

    mp.mp.prec = 120
    return np.array([float(mp.cot(mp.pi * mp.mpf(float(v)))) for v in p])


RNG = np.random.default_rng(2024)
CASES = {
    "log": np.concatenate([np.exp(RNG.uniform(-740, 709, 20000)), RNG.uniform(0.5, 2, 20000),
                           [5e-324, 2.2e-308, 1.7976931348623157e308, 1.0, 2.0, 0.5]]),
    "log1p": np.concatenate([RNG.uniform(-0.999, 3, 20000), np.exp(RNG.uniform(-700, 0, 10000)),
                             -np.exp(RNG.uniform(-700, -0.01, 10000)),
                             np.exp(RNG.uniform(0, 700, 5000))]),
    "exp": np.concatenate([RNG.uniform(-745, 709.7, 30000), RNG.uniform(-1, 1, 10000),
                           RNG.uniform(-745.1, -708, 2000)]),
    "cotpi": np.concatenate([RNG.uniform(1e-6, 0.5, 4000), np.exp(RNG.uniform(-45, -1, 1000)),
                             [0.25, 0.125, 2.0**-65]]),
}


@pytest.mark.parametrize("name, max_ulps", [("log", 1.5), ("log1p", 2.0), ("exp", 1.5),
                                             ("cotpi", 4.0)])
def test_accuracy(name, max_ulps):
    x = CASES[name]
    got = evaluate(name, x)
    want = cotpi_ref(x) if name == "cotpi" else getattr(np, name)(x)
    normal = np.abs(want) >= 2.2250738585072014e-308
    err = ulps(got[normal], want[normal])
    worst = int(np.argmax(err))
    assert err[worst] <= max_ulps, (
        f"rng_{name}: {err[worst]:.2f} ulps at x = {x[normal][worst]!r} "
        f"(got {got[normal][worst]!r}, want {want[normal][worst]!r})"
    )
    # subnormal results: within an absolute spacing of the smallest subnormal
    sub = ~normal & (want != 0)
    assert np.all(np.abs(got[sub] - want[sub]) <= 5e-324 * 2)


def test_special_values():
    inf, nan = np.inf, np.nan
    log = evaluate("log", np.array([0.0, -1.0, inf, nan, 1.0]))
    assert log[0] == -inf and np.isnan(log[1]) and log[2] == inf and np.isnan(log[3])
    assert log[4] == 0.0
    l1p = evaluate("log1p", np.array([-1.0, -2.0, inf, nan, 0.0, 1e-300]))
    assert l1p[0] == -inf and np.isnan(l1p[1]) and l1p[2] == inf and np.isnan(l1p[3])
    assert l1p[4] == 0.0 and l1p[5] == 1e-300
    ex = evaluate("exp", np.array([-inf, inf, nan, 0.0, 709.8, -745.2, 709.78]))
    assert ex[0] == 0.0 and ex[1] == inf and np.isnan(ex[2]) and ex[3] == 1.0
    assert ex[4] == inf and ex[5] == 0.0 and np.isfinite(ex[6])
    cot = evaluate("cotpi", np.array([0.5, 0.25]))
    assert cot[0] == 0.0 and abs(cot[1] - 1.0) <= 4.5e-16
