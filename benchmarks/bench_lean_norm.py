# SPDX-License-Identifier: GPL-2.0-or-later
"""How fast R's pnorm and qnorm can be made in OpenCL C: the library's functions beside lean
versions of the same algorithms (Cody 1969 / TOMS 715 for pnorm, Wichura's AS 241 for qnorm),
and CuPy's ``ndtr`` / ``ndtri`` in the same run.

Each row is an ``ElementwiseKernel`` of one double input over ``--n`` elements (N(0, 3) for
pnorm, U(0, 1) for qnorm), timed alone with OpenCL events (median of 10 after 2 warm-ups), the
lower tail on the probability scale with mean 0 and sd 1 written in as constants, as
``bench_cheap.py`` does.  The lean rows drop what R's functions do besides the rational
functions (the mean and sd, the other tail, the log scale, the far range beyond the double's
limits) and vary two things:

- ``ieee`` / ``fdiv``: the divisions correctly rounded (OpenCL C's ``/``), or a float
  reciprocal refined by Newton's step and the quotient corrected once (a few ulps at most);
- ``2exp`` / ``1exp``: exp(-x^2/2) as R takes it (two ``exp`` of a split at a multiple of
  1/16), or one ``exp`` of the rounded -x^2/2 with the rounding error (an ``fma``) as a factor.

``maxrel_vs_lib`` and ``differ`` compare each row's values with the library function's on the
device (the lean rows are not R's bits).  The coefficients are read from the library's own
units (``cl/nmath/pnorm.cl``, ``qnorm.cl``).  benchmarks/README.md, "Cheap kernels: the
leanest R pnorm".

Run:  python benchmarks/bench_lean_norm.py [--n 33554432] [--out FILE]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report
from bench_cheap import cupy_times, kernel_time

_CL = Path(__file__).resolve().parent.parent / "cl" / "nmath"


def _coefficients(unit: str, prefix: str, new: str) -> str:
    text = (_CL / unit).read_text()
    found = re.findall(rf"__constant double {prefix}[a-z]\[\d+\] = \{{[^}}]*\}};", text, re.S)
    return "\n".join(found).replace(prefix, new)


_PRE = r"""
inline double lean_rcp(double d) {          // a float's reciprocal and two Newton steps
    double r = (double)native_recip((float)d);
    double e = fma(-d, r, 1.0);
    r = fma(r, e, r);
    e = fma(-d, r, 1.0);
    return fma(r, e, r);
}
inline double lean_fdiv(double n, double d) {   // one Newton step, the quotient corrected once
    double r = (double)native_recip((float)d);
    double e = fma(-d, r, 1.0);
    r = fma(r, e, r);
    double q = n * r;
    return fma(fma(-d, q, n), r, q);
}
inline double lean_ediv(double n, double d) { return n / d; }
inline double lean_ercp(double d) { return 1.0 / d; }
inline double lean_expm2(double y, int one) {   // exp(-y^2 / 2)
    if (!one) {
        double s = trunc(y * 16) * 0.0625;
        double del = (y - s) * (y + s);
        return exp(-s * (s * 0.5)) * exp(-(del * 0.5));
    }
    double h = y * y;
    return exp(-0.5 * h) * fma(-0.5, fma(y, y, -h), 1.0);
}
#define LEAN_PNORM(NAME, DIV, RCP, ONE) \
inline double NAME(double x) { \
    double y = fabs(x); \
    if (isnan(x)) return x; \
    if (!(y < 37.5193)) return x > 0 ? 1.0 : 0.0; \
    double xsq = y > 1.1102230246251565e-16 ? x * x : 0.; \
    double n0 = lp_a[4] * xsq, d0 = xsq; \
    for (int i = 0; i < 3; ++i) { n0 = (n0 + lp_a[i]) * xsq; d0 = (d0 + lp_b[i]) * xsq; } \
    double n1 = lp_c[8] * y, d1 = y; \
    for (int i = 0; i < 7; ++i) { n1 = (n1 + lp_c[i]) * y; d1 = (d1 + lp_d[i]) * y; } \
    int r = y <= 0.67448975 ? 0 : y <= 5.656854249492380195206754896838 ? 1 : 2; \
    double num = r == 0 ? n0 + lp_a[3] : n1 + lp_c[7]; \
    double den = r == 0 ? d0 + lp_b[3] : d1 + lp_d[7]; \
    double m = r == 0 ? x : 1.; \
    if (r == 2) { \
        double z = RCP(x * x); \
        double n2 = lp_p[5] * z, d2 = z; \
        for (int i = 0; i < 4; ++i) { n2 = (n2 + lp_p[i]) * z; d2 = (d2 + lp_q[i]) * z; } \
        num = n2 + lp_p[4]; den = d2 + lp_q[4]; m = z; \
    } \
    double t = m * DIV(num, den); \
    if (r == 0) return 0.5 + t; \
    if (r == 2) t = (0.398942280401432677939946059934 - t) * RCP(y); \
    double cum = lean_expm2(y, ONE) * t; \
    return x > 0 ? 1.0 - cum : cum; \
}
LEAN_PNORM(lean_pnorm_ieee_2exp, lean_ediv, lean_ercp, 0)
LEAN_PNORM(lean_pnorm_fdiv_2exp, lean_fdiv, lean_rcp, 0)
LEAN_PNORM(lean_pnorm_ieee_1exp, lean_ediv, lean_ercp, 1)
LEAN_PNORM(lean_pnorm_fdiv_1exp, lean_fdiv, lean_rcp, 1)
#define LQ(c0, c1, c2, r, k) ((r) == 0 ? c0[k] : (r) == 1 ? c1[k] : c2[k])
#define LEAN_QNORM(NAME, DIV) \
inline double NAME(double p) { \
    if (isnan(p)) return p; \
    if (p <= 0 || p >= 1) return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN; \
    double q = p - 0.5, t, m = 1.; \
    int range = 0; \
    if (fabs(q) <= .425) { t = .180625 - q * q; m = q; } \
    else { \
        t = sqrt(-log(q > 0 ? 0.5 - p + 0.5 : p)); \
        range = t <= 5. ? 1 : 2; \
        t += range == 1 ? -1.6 : -5.; \
    } \
    double num = LQ(lq_a, lq_c, lq_e, range, 7), den = LQ(lq_b, lq_d, lq_f, range, 7); \
    for (int k = 6; k >= 0; k--) { \
        num = num * t + LQ(lq_a, lq_c, lq_e, range, k); \
        den = den * t + LQ(lq_b, lq_d, lq_f, range, k); \
    } \
    double val = m * DIV(num, den); \
    return range > 0 && q < 0.0 ? -val : val; \
}
LEAN_QNORM(lean_qnorm_ieee, lean_ediv)
LEAN_QNORM(lean_qnorm_fdiv, lean_fdiv)
"""

PNORM = {"copy": "y = x;", "pnorm5": "y = pnorm5(x, 0., 1., 1, 0);",
         **{f"lean_pnorm_{d}_{e}": f"y = lean_pnorm_{d}_{e}(x);"
            for e in ("2exp", "1exp") for d in ("ieee", "fdiv")}}
QNORM = {"qnorm5": "y = qnorm5(x, 0., 1., 1, 0);",
         **{f"lean_qnorm_{d}": f"y = lean_qnorm_{d}(x);" for d in ("ieee", "fdiv")}}


def run(n: int) -> list[dict[str, object]]:
    import pyopencl as cl
    import pyopencl.array as cla

    import daskcl
    from daskcl.runtime import device

    bound = device.current()
    q = bound.queue
    rng = np.random.default_rng(0)
    xv = rng.normal(0, 3, n)
    xv[:64] = [0., -0., 1e-300, 37.5, -37.5, 37.6, -37.6, 8.3, -8.3, 5.65, -5.66, .674, -.675,
               *np.linspace(-40, 40, 51)]
    uv = rng.uniform(0, 1, n)
    uv[:6] = [0., 1., 1e-300, 1 - 2**-53, 0.5, 1e-320]
    status = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, 16)
    cl.enqueue_fill_buffer(q, status, np.int32(0), 0, 16)
    pre = (_coefficients("pnorm.cl", "pnorm_", "lp_") + "\n"
           + _coefficients("qnorm.cl", "qnorm_", "lq_") + _PRE)
    rows: list[dict[str, object]] = []
    for ops, values, lib in ((PNORM, xv, "pnorm5"), (QNORM, uv, "qnorm5")):
        arr = cla.to_device(q, values)
        got = {}
        for name, op in ops.items():
            k = daskcl.ElementwiseKernel("double x", "double y", op, name=f"lean_{name}",
                                         preamble=pre)
            t, out = kernel_time(k, arr, status, q)
            got[name] = out.get()
            rows.append({"kernel": name, "ms": t * 1e3, "Gel_s": n / t * 1e-9})
        ref = got[lib]
        nz = np.isfinite(ref) & (ref != 0)
        for row in rows[-len(ops):]:
            if row["kernel"] == "copy":
                continue
            v = got[str(row["kernel"])]
            same = (v == ref) | (np.isnan(v) & np.isnan(ref))
            row["maxrel_vs_lib"] = float(np.max(np.abs(v[nz] - ref[nz]) / np.abs(ref[nz])))
            row["differ"] = int((~same).sum())
    rows += [{"kernel": k, "ms": t * 1e3, "Gel_s": n / t * 1e-9}
             for k, t in cupy_times(lambda cp, cs: [("cupy_ndtr", cs.ndtr, xv),
                                                    ("cupy_ndtri", cs.ndtri, uv)]).items()]
    copy = next(float(r["ms"]) for r in rows if r["kernel"] == "copy")  # type: ignore[arg-type]
    for r in rows:
        r["over_copy_ms"] = float(r["ms"]) - copy  # type: ignore[arg-type]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 25)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    report("lean-norm", run(args.n),
           ["kernel", "ms", "Gel_s", "over_copy_ms", "maxrel_vs_lib", "differ"], args.out,
           key="rows", n=args.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
