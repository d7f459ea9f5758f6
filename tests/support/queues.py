# SPDX-License-Identifier: GPL-2.0-or-later
"""A queue held busy: the tests of ordering between queues (one in-order queue does not order
another's) queue their work behind a kernel that runs for a fraction of a second."""

from __future__ import annotations

from typing import Any

import numpy as np


def hold(queue: Any, iterations: int = 100_000_000) -> Any:
    """Enqueue on ``queue`` one work-item's loop of ``iterations`` dependent multiply-adds (a
    fraction of a second on a CPU or a GPU) and return its event; the queue's later commands
    wait for it."""
    import pyopencl as cl

    ctx = queue.context
    spin = cl.Program(ctx, """
        __kernel void spin(__global double *x, long n) {
            double a = x[0];
            for (long i = 0; i < n; ++i) a = a * 0.999999 + 1e-9;
            x[0] = a;
        }""").build().spin
    busy = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ones(1))
    return spin(queue, (1,), None, busy, np.int64(iterations))
