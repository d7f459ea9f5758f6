# SPDX-License-Identifier: GPL-2.0-or-later
"""The timeline of one streamed call from NumPy: what the host and the device did, and when.

For f2_f3 (binomial/logit, ``bench_glm``'s cases) at each number of pieces asked
(``glm.posterior.PIECES``) and for pnorm of 2^25 elements, after two warm-up calls, one call
is recorded:

- on the host (``time.perf_counter``, every thread): each staging copy into pinned memory
  (``_transfer.copy_parallel``), each enqueue of a copy or kernel, each drain of a slot (the
  wait for its piece to finish);
- on the device (the slots' queues made with profiling on): each copy up, kernel and copy
  down, from its event's start and end, put on the host's clock by the median over the
  call's events of (host time of the enqueue - the event's ``queued`` time).

Rows are ``[start_ms, end_ms, what, thread or queue, elements]`` from the call's start,
sorted by start.  On a CPU device the call runs in place on the calling thread (no slots).

Run:  python benchmarks/profile_stream.py [--glm logit-300x16] [--pieces 1,2,4] [--n 33554432]
          [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write


class Recorder:
    """Wraps the host path's copies, enqueues and drains while installed (:meth:`install`)."""

    def __init__(self) -> None:
        self.host: list[tuple[str, str, float, float, int]] = []
        self.events: list[tuple[str, float, Any, str]] = []
        self.t0 = time.perf_counter()
        self._lock = threading.Lock()

    def now(self) -> float:
        return (time.perf_counter() - self.t0) * 1e3

    def _host(self, what: str, a: float, n: int = 0) -> None:
        with self._lock:
            self.host.append((what, threading.current_thread().name, a, self.now(), n))

    def install(self) -> Callable[[], None]:
        """Wrap the functions; returns what puts them back."""
        import pyopencl as cl

        from daskcl.kernels import _transfer
        from daskcl.runtime import device

        bound = device.current()
        saved = [(_transfer, "_slots", _transfer._slots),
                 (_transfer, "copy_parallel", _transfer.copy_parallel),
                 (_transfer, "_drain", _transfer._drain),
                 (cl, "enqueue_copy", cl.enqueue_copy),
                 (cl, "enqueue_nd_range_kernel", cl.enqueue_nd_range_kernel)]
        real_copy, real_drain = _transfer.copy_parallel, _transfer._drain
        real_enqueue_copy, real_kernel = cl.enqueue_copy, cl.enqueue_nd_range_kernel
        old_slots, bound.resources.slots = bound.resources.slots, None

        def slots(b: Any) -> list[Any]:
            s = b.resources.slots
            if s is None:
                props = cl.command_queue_properties.PROFILING_ENABLE
                s = b.resources.slots = [
                    _transfer._Slot(cl.CommandQueue(b.context, properties=props))
                    for _ in range(_transfer.SLOTS)]
            return s

        def copy(dst: np.ndarray, src: np.ndarray, nthreads: int) -> None:
            a = self.now()
            real_copy(dst, src, nthreads)
            self._host("stage", a, src.size)

        def drain(s: Any) -> None:
            a = self.now()
            real_drain(s)
            self._host("drain", a)

        def enqueue_copy(q: Any, dst: Any, src: Any, **kw: Any) -> Any:
            kind = "up" if isinstance(dst, cl.Buffer) else "down"
            a = self.now()
            ev = real_enqueue_copy(q, dst, src, **kw)
            self._host(f"enqueue {kind}", a)
            self.events.append((kind, a, ev, f"queue {id(q) % 997}"))
            return ev

        def kernel(q: Any, *args: Any, **kw: Any) -> Any:
            a = self.now()
            ev = real_kernel(q, *args, **kw)
            self._host("enqueue kernel", a)
            self.events.append(("kernel", a, ev, f"queue {id(q) % 997}"))
            return ev

        _transfer._slots = slots
        _transfer.copy_parallel = copy
        _transfer._drain = drain
        cl.enqueue_copy = enqueue_copy
        cl.enqueue_nd_range_kernel = kernel

        def restore() -> None:
            for mod, name, fn in saved:
                setattr(mod, name, fn)
            bound.resources.slots = old_slots           # the profiling queues go
        return restore

    def timeline(self, fn: Callable[[], Any]) -> dict[str, Any]:
        """Two warm-up calls of ``fn``, then one recorded."""
        fn()
        fn()
        self.host.clear()
        self.events.clear()
        self.t0 = time.perf_counter()
        fn()
        total = self.now()
        offsets = []
        for _, t, ev, _ in self.events:
            try:
                offsets.append(t - ev.profile.queued * 1e-6)
            except Exception:     # a queue without profiling (the device's own)
                pass
        off = statistics.median(offsets) if offsets else 0.0
        rows: list[list[Any]] = [[round(a, 4), round(b, 4), what, who, n]
                                 for what, who, a, b, n in self.host]
        for kind, _, ev, q in self.events:
            try:
                rows.append([round(ev.profile.start * 1e-6 + off, 4),
                             round(ev.profile.end * 1e-6 + off, 4), f"device {kind}", q, 0])
            except Exception:
                pass
        rows.sort(key=lambda r: (r[0], r[1]))
        return {"total_ms": round(total, 4), "rows": rows}


def show(title: str, res: dict[str, Any]) -> None:
    print(f"== {title}: {res['total_ms']:.3f} ms")
    for a, b, what, who, n in res["rows"]:
        print(f"  {a:8.3f} {b:8.3f} {b - a:7.3f}  {what:15s} {who[-14:]:14s} {n or ''}")


def run(glm_cases: list[str], pieces: list[int], n: int) -> dict[str, Any]:
    from bench_glm import CASES, make_problem

    from daskcl import nmath
    from daskcl.glm import Posterior, posterior

    rec = Recorder()
    restore = rec.install()
    out: dict[str, Any] = {"machine": machine(), "calls": []}
    saved_pieces = posterior.PIECES
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for name in glm_cases:
                case = next(c for c in CASES if c.name == name)
                prob = make_problem(case, case.m1)
                post = Posterior(case.family, case.link, prob["y"], prob["x"], prob["mu"],
                                 prob["P"], prob["alpha"], prob["wt"])
                for k in pieces:
                    posterior.PIECES = k
                    res = rec.timeline(lambda post=post, b=prob["b"]: post.f2_f3(b))
                    res["call"] = f"f2_f3 {name}, {k} pieces"
                    show(res["call"], res)
                    out["calls"].append(res)
            posterior.PIECES = saved_pieces
            if n:
                x = np.random.default_rng(1).normal(0, 3, n)
                res = rec.timeline(lambda: nmath.pnorm(x))
                res["call"] = f"pnorm, {n} elements"
                show(res["call"], res)
                out["calls"].append(res)
    finally:
        posterior.PIECES = saved_pieces
        restore()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--glm", default="logit-300x16", help="bench_glm case names, comma-separated")
    ap.add_argument("--pieces", default="1,2,4")
    ap.add_argument("--n", type=int, default=1 << 25, help="pnorm's elements (0: none)")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    res = run([c for c in args.glm.split(",") if c], [int(k) for k in args.pieces.split(",")],
              args.n)
    if args.out:
        write("stream-timeline", res, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
