# SPDX-License-Identifier: GPL-2.0-or-later
"""What ``accuracy = "best"`` costs: the kernel alone, ``r`` against ``best``, for each function
whose algorithm the mode changes (issue 44; docs/accuracy.rst).

Each row is an ``ElementwiseKernel`` of one double input and one output over ``--n`` elements,
calling the library function with fixed parameters on inputs that cover its bulk and its tails
(``INPUTS``), built once in each mode (the mode is a build option) and timed alone with OpenCL
events (median of 10 after 2 warm-ups, ``bench_cheap.kernel_time``), on the bound device
(``DASKCL_DEVICE``).  ``ratio`` is best's time over r's.

Run:  python benchmarks/bench_accuracy.py [--n 1048576] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report
from bench_cheap import kernel_time

#: name -> (the operation on x, how x is drawn from a uniform u in [0, 1))
INPUTS = {
    "pnt": ("y = pnt(x, 10., 3., 1, 0);", lambda u: -20. + 80. * u),
    "pnt_upper_log": ("y = pnt(x, 10., 3., 0, 1);", lambda u: -20. + 80. * u),
    "dnt": ("y = dnt(x, 10., 3., 0);", lambda u: -20. + 80. * u),
    "pnchisq_upper": ("y = pnchisq(x, 10., 50., 0, 0);", lambda u: 500. * u),
    "pnchisq_lower_log": ("y = pnchisq(x, 10., 50., 1, 1);", lambda u: 500. * u),
    "pnbeta_upper": ("y = pnbeta(x, 5., 20., 30., 0, 0);", lambda u: u),
    "pnf_upper_log": ("y = pnf(x, 5., 20., 10., 0, 1);", lambda u: 30. * u),
    "choose": ("y = choose(x, 1000.);", lambda u: 999.1 + 60. * u),
    "dnchisq_log": ("y = dnchisq(x, 10., 50., 1);", lambda u: 1e-3 + 1000. * u),
    "qnchisq_upper": ("y = qnchisq(x, 10., 50., 0, 0);", lambda u: 10. ** (-300. * u)),
    "qnbeta_upper_log": ("y = qnbeta(x, 5., 20., 30., 0, 1);", lambda u: -1e-3 - 700. * u),
    "qnf": ("y = qnf(x, 5., 20., 10., 1, 0);", lambda u: .001 + .998 * u),
    "qnt_lower": ("y = qnt(x, 10., 3., 1, 0);", lambda u: 10. ** (-300. * u)),
    "qbeta_upper_log": ("y = qbeta(x, 1.09, 4.1e18, 0, 1);", lambda u: -1e-3 - 600. * u),
    "ptukey": ("y = ptukey(x, 1., 5., 20., 1, 0);", lambda u: 10. * u),
    "qtukey": ("y = qtukey(x, 1., 5., 20., 1, 0);", lambda u: .001 + .998 * u),
    "dbinom_log": ("y = dbinom(x, 1000., .3, 1);", lambda u: np.floor(1000. * u)),
    "pf_upper_log": ("y = pf(x, 5., 2e5, 0, 1);", lambda u: 1. + 200. * u),
    "qgamma": ("y = qgamma(x, 3., 1., 1, 0);", lambda u: 10. ** (-300. * u)),
    "qt": ("y = qt(x, 5., 1, 0);", lambda u: 10. ** (-300. * u)),
    "lgammafn": ("y = lgammafn(x);", lambda u: 1e-3 + 50. * u),
    "pbeta_upper": ("y = pbeta(x, 30., 50., 0, 0);", lambda u: u),
    "pgamma_upper_log": ("y = pgamma(x, 2e4, 1., 0, 1);", lambda u: 1.8e4 + 4e3 * u),
    "pbinom": ("y = pbinom(x, 2e5, .3, 1, 0);", lambda u: np.floor(5.9e4 + 2e3 * u)),
    "pnbinom": ("y = pnbinom(x, 50., .01, 1, 0);", lambda u: np.floor(4000. + 2000. * u)),
    "gammafn": ("y = gammafn(x);", lambda u: 100. + 70. * u),
    "beta": ("y = beta(x, 120.);", lambda u: 50. + 100. * u),
    "bessel_i": ("y = bessel_i(x, 80., 2.);", lambda u: 500. + 1000. * u),
    "qlogis_log": ("y = qlogis(x, 0., 1., 1, 1);", lambda u: -1e-3 - 3. * u),
    "qcauchy": ("y = qcauchy(x, 0., 1., 1, 0);", lambda u: .001 + .998 * u),
}


def run(n: int, names: list[str]) -> list[dict[str, object]]:
    import pyopencl as cl
    import pyopencl.array as cla

    import daskcl
    import daskcl.config
    from daskcl.runtime import device

    bound = device.current()
    q = bound.queue
    u = np.random.default_rng(0).uniform(0., 1., n)
    status = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, 8)
    cl.enqueue_fill_buffer(q, status, np.int32(0), 0, 8)
    rows: list[dict[str, object]] = []
    for name in names:
        op, draw = INPUTS[name]
        x = cla.to_device(q, draw(u))
        ms = {}
        for mode in ("r", "best"):
            with daskcl.config.set(accuracy=mode):
                k = daskcl.ElementwiseKernel("double x", "double y", op,
                                             name=f"acc_{name}_{mode}")
                ms[mode] = kernel_time(k, x, status, q)[0] * 1e3
        rows.append({"kernel": name, "n": n, "r_ms": ms["r"], "best_ms": ms["best"],
                     "ratio": ms["best"] / ms["r"]})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--only", default=",".join(INPUTS), help="comma-separated rows")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    report("accuracy", run(args.n, args.only.split(",")),
           ["kernel", "n", "r_ms", "best_ms", "ratio"], args.out, key="rows", n=args.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
