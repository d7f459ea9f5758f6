# SPDX-License-Identifier: GPL-2.0-or-later
"""The host's own ceilings for moving float64 data to and from the bound device.

Every end-to-end figure of daskcl (NumPy in, NumPy out) is bounded by these: how fast the
driver copies pageable NumPy memory to and from the device, how fast page-locked (pinned)
memory goes, how fast the host itself copies into and out of pinned memory on 1..N threads, and
whether the two directions overlap.  Each figure is GB/s (10^9 bytes per second) of one
``--mb``-sized transfer, the median of ``--repeat``, OpenCL through pyopencl (and, where CuPy is
installed, CuPy's own ``asarray``/``asnumpy`` for comparison).

Rows:

- ``h2d_pageable_tN`` / ``d2h_pageable_tN``: a NumPy array to a device buffer and back, by N
  threads at once (each its own queue and its own part), blocking copies;
- ``h2d_pinned`` / ``d2h_pinned``: from and to a mapped ``ALLOC_HOST_PTR`` buffer;
- ``host_into_pinned_tN`` / ``host_from_pinned_tN``: ``np.copyto`` between NumPy memory and
  pinned memory, N threads;
- ``h2d_use_host_ptr`` / ``d2h_use_host_ptr``: the NumPy array used in place, as a
  ``USE_HOST_PTR`` buffer (made for each transfer, of an array the driver has not seen before:
  a user's input or result), copied to a device buffer, or written from one and mapped for
  reading (whatever the driver does to move it: pin the pages, or copy);
- ``both_pinned`` / ``both_pageable``: an upload and a download of the same size at once on two
  queues: bytes of both over the time of both (a sum above either direction alone means they
  overlap);
- ``cupy_asarray`` / ``cupy_asnumpy``: CuPy's transfers of a NumPy array.

Run:  python benchmarks/bench_transfer.py [--mb 256] [--threads 1,2,4,8] [--repeat 5] [--out F]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time, table, write


def _pinned(ctx: Any, queue: Any, n: int) -> tuple[np.ndarray, Any]:
    import pyopencl as cl

    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, n * 8)
    arr, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,),
                                   np.float64, is_blocking=True)
    return arr, buf


def measure(mb: int = 256, threads: tuple[int, ...] = (1, 2, 4, 8), repeat: int = 5
            ) -> dict[str, float]:
    """GB/s of each row (see the module's docstring) on the bound device."""
    import pyopencl as cl

    from daskcl.runtime import device

    bound = device.current()
    ctx = bound.context
    n = mb * (1 << 20) // 8
    nbytes = n * 8
    host = np.random.default_rng(0).random(n)
    back = np.empty_like(host)
    dev = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    dev2 = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    queues = [cl.CommandQueue(ctx) for _ in range(max(threads))]
    pool = concurrent.futures.ThreadPoolExecutor(max(threads))
    out: dict[str, float] = {}

    def parts(t: int) -> list[tuple[int, int]]:
        step = -(-n // t)
        return [(a, min(n, a + step)) for a in range(0, n, step)]

    def threaded(t: int, one: Any) -> None:
        for f in [pool.submit(one, k, a, b) for k, (a, b) in enumerate(parts(t))]:
            f.result()

    for t in threads:
        out[f"h2d_pageable_t{t}"] = nbytes / median_time(lambda t=t: threaded(t, lambda k, a, b: cl.enqueue_copy(
            queues[k], dev, host[a:b], dst_offset=a * 8, is_blocking=True)), repeat) / 1e9
        out[f"d2h_pageable_t{t}"] = nbytes / median_time(lambda t=t: threaded(t, lambda k, a, b: cl.enqueue_copy(
            queues[k], back[a:b], dev, src_offset=a * 8, is_blocking=True)), repeat) / 1e9
    pin, pin_buf = _pinned(ctx, queues[0], n)
    pin2, pin_buf2 = _pinned(ctx, queues[0], n)
    pin[:] = host
    q0, q1 = queues[0], queues[min(1, len(queues) - 1)]
    out["h2d_pinned"] = nbytes / median_time(
        lambda: cl.enqueue_copy(q0, dev, pin, is_blocking=True), repeat) / 1e9
    out["d2h_pinned"] = nbytes / median_time(
        lambda: cl.enqueue_copy(q0, pin2, dev, is_blocking=True), repeat) / 1e9
    for t in threads:
        out[f"host_into_pinned_t{t}"] = nbytes / median_time(lambda t=t: threaded(
            t, lambda k, a, b: np.copyto(pin[a:b], host[a:b])), repeat) / 1e9
        out[f"host_from_pinned_t{t}"] = nbytes / median_time(lambda t=t: threaded(
            t, lambda k, a, b: np.copyto(back[a:b], pin[a:b])), repeat) / 1e9

    # arrays the driver has not seen: one per timed call (and the warm-ups), touched beforehand
    fresh = iter([np.random.default_rng(k).random(n) for k in range(repeat + 2)])
    mf = cl.mem_flags

    def use_in() -> None:
        buf = cl.Buffer(ctx, mf.READ_ONLY | mf.USE_HOST_PTR, hostbuf=next(fresh))
        cl.enqueue_copy(q0, dev, buf).wait()
        buf.release()

    def use_out() -> None:
        buf = cl.Buffer(ctx, mf.WRITE_ONLY | mf.USE_HOST_PTR, hostbuf=next(fresh))
        cl.enqueue_copy(q0, buf, dev)
        view, _ = cl.enqueue_map_buffer(q0, buf, cl.map_flags.READ, 0, (n,), np.float64,
                                        is_blocking=True)
        view.base.release(q0)
        q0.finish()
        buf.release()

    out["h2d_use_host_ptr"] = nbytes / median_time(use_in, repeat) / 1e9
    fresh = iter([np.zeros(n) for _ in range(repeat + 2)])
    out["d2h_use_host_ptr"] = nbytes / median_time(use_out, repeat) / 1e9

    def both(src_up: np.ndarray, dst_down: np.ndarray) -> None:
        e1 = cl.enqueue_copy(q0, dev, src_up, is_blocking=False)
        e2 = cl.enqueue_copy(q1, dst_down, dev2, is_blocking=False)
        e1.wait()
        e2.wait()

    out["both_pinned"] = 2 * nbytes / median_time(lambda: both(pin, pin2), repeat, warmup=1) / 1e9
    out["both_pageable"] = 2 * nbytes / median_time(lambda: both(host, back), repeat, warmup=1) / 1e9
    try:
        import cupy as cp

        cp.asarray(host)
        out["cupy_asarray"] = nbytes / median_time(
            lambda: (cp.asarray(host), cp.cuda.Stream.null.synchronize()), repeat) / 1e9
        d = cp.asarray(host)
        out["cupy_asnumpy"] = nbytes / median_time(lambda: cp.asnumpy(d), repeat, warmup=1) / 1e9
    except ImportError:
        pass
    del pin_buf, pin_buf2
    pool.shutdown()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--threads", default="1,2,4,8")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    rates = measure(args.mb, tuple(int(t) for t in args.threads.split(",")), args.repeat)
    rows = [{"path": k, "GB_s": round(v, 2)} for k, v in rates.items()]
    print(table(rows, ["path", "GB_s"]))
    if args.out:
        write("transfer", {"machine": machine(), "mb": args.mb, "rows": rows}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
