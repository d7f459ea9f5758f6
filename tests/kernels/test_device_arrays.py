# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-resident arrays: pyopencl arrays in give pyopencl arrays out, bit for bit the NumPy
path's values, for a row of every kind (d, p, q, a classified row, a count-table row, random,
f2_f3); mixed NumPy and device inputs; broadcast and strided device arrays; chains that stay on
the device; arrays of another context refused."""

from __future__ import annotations

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

import daskcl
from daskcl import ElementwiseKernel, RawKernel, nmath
from daskcl.glm import FactorialGrid, f2_f3
from daskcl.runtime import device


@pytest.fixture(scope="module")
def queue():
    return device.current().queue


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


CASES = {
    "dgamma": (np.linspace(0, 20, 301), 2.5, 1.5),
    "pnorm": (np.linspace(-40, 40, 301), 0.5, 2.0),
    "qbinom": (np.linspace(0, 1, 301), 40.0, 0.3),
    "pbeta": (np.linspace(0, 1, 301), 0.7, 45.0),        # classified: sorted launches on GPUs
    "pwilcox": (np.arange(0.0, 301.0) / 10, 6.0, 5.0),   # count tables
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_kind_of_row_on_the_device(queue, name):
    x, *params = CASES[name]
    fn = getattr(nmath, name)
    want = fn(x, *params)
    got = fn(cla.to_device(queue, x), *params)
    assert isinstance(got, cla.Array) and got.shape == want.shape and got.dtype == np.float64
    assert same(got.get(), want)
    # every input on the device, the parameters too
    dev_params = [cla.to_device(queue, np.full(x.shape, p)) for p in params]
    assert same(fn(cla.to_device(queue, x), *dev_params).get(), want)


def test_mixed_broadcast_and_strided_inputs(queue):
    x = np.linspace(0.001, 0.999, 60)
    a = np.array([0.5, 3.0, 40.0])
    want = nmath.pbeta(x[:, None], a, 2.5)
    got = nmath.pbeta(x[:, None], cla.to_device(queue, a), 2.5)      # host x, device a
    assert isinstance(got, cla.Array) and got.shape == (60, 3)
    assert same(got.get(), want)
    xd = cla.to_device(queue, np.linspace(-5, 5, 301))
    view = xd[10::7]                                                  # offset and stride
    assert same(nmath.dnorm(view, 1.0).get(), nmath.dnorm(np.linspace(-5, 5, 301)[10::7], 1.0))
    ints = cla.to_device(queue, np.arange(12, dtype=np.int32))       # converted on the device
    assert same(nmath.dpois(ints, 3.0).get(), nmath.dpois(np.arange(12.0), 3.0))


def test_a_chain_stays_on_the_device(queue, monkeypatch):
    from daskcl.kernels import _transfer

    p = np.linspace(0.01, 0.99, 999)
    want = nmath.pnorm(nmath.qnorm(p) + 0.25)
    streamed = []
    real = _transfer.stream
    monkeypatch.setattr(_transfer, "stream",
                        lambda *a, **k: streamed.append(1) or real(*a, **k))
    pd = cla.to_device(queue, p)
    got = nmath.pnorm(nmath.qnorm(pd) + 0.25)
    assert isinstance(got, cla.Array) and not streamed        # nothing went through the host
    assert same(got.get(), want)


def test_random_on_the_device(queue):
    want = nmath.rgamma((40, 50), 2.5, np.linspace(0.5, 3, 50), seed=3, offset=7)
    got = nmath.rgamma((40, 50), 2.5, cla.to_device(queue, np.linspace(0.5, 3, 50)), seed=3,
                       offset=7)
    assert isinstance(got, cla.Array) and same(got.get(), want)
    got = nmath.rnorm(1000, seed=4, device=True)
    assert isinstance(got, cla.Array) and same(got.get(), nmath.rnorm(1000, seed=4))
    sr = nmath.rsignrank(200, cla.to_device(queue, np.full(200, 30.0)), seed=5)
    assert same(sr.get(), nmath.rsignrank(200, 30.0, seed=5))
    with pytest.raises(ValueError, match="choose one"):
        nmath.rnorm(10, seed=1, device=True, chunks=5)


def test_f2_f3_on_the_device(queue):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(40, 3))
    y, wt = rng.integers(0, 11, 40) / 10, np.full(40, 10.0)
    args = (y, x, np.zeros(3), np.eye(3), np.zeros(40), wt)
    b = rng.normal(size=(500, 3))
    qf, grad = f2_f3("binomial", "logit", b, *args)
    dq, dg = f2_f3("binomial", "logit", cla.to_device(queue, b), *args)
    assert isinstance(dq, cla.Array) and dg.shape == (500, 3)
    assert same(dq.get(), qf) and same(dg.get(), grad)
    # a grid in Fortran order (a transpose) and a strided view: read by their strides (a
    # transpose was read as if C-ordered, a strided view failed inside pyopencl)
    bt = cla.to_device(queue, np.ascontiguousarray(b.T)).T
    wide = np.zeros((1000, 3))
    wide[::2] = b
    for view in (bt, cla.to_device(queue, wide)[::2]):
        assert not view.flags.c_contiguous
        vq, vg = f2_f3("binomial", "logit", view, *args)
        assert same(vq.get(), qf) and same(vg.get(), grad)
    with pytest.raises(TypeError, match=r"y is a pyopencl array.*pass y.get\(\)"):
        f2_f3("binomial", "logit", b, cla.to_device(queue, y), *args[1:])
    grid = FactorialGrid([np.linspace(-1, 1, 9), np.linspace(0, 1, 4), np.linspace(-2, 0, 5)])
    gq, gg = f2_f3("binomial", "logit", grid, *args, device=True)
    mq, mg = f2_f3("binomial", "logit", grid.materialize(), *args)
    assert same(gq.get(), mq) and same(gg.get(), mg)


def test_user_kernels_on_the_device(queue):
    k = ElementwiseKernel("double x, double s", "double lo, double hi",
                          "lo = pnorm5(x, 0.0, s, 1, 1); hi = pnorm5(x, 0.0, s, 0, 1);",
                          name="both_tails")
    x = np.linspace(-30, 30, 257)
    lo, hi = k(cla.to_device(queue, x), 2.0)
    want_lo, want_hi = k(x, 2.0)
    assert isinstance(lo, cla.Array) and same(lo.get(), want_lo) and same(hi.get(), want_hi)


def test_a_full_device_at_the_launch_frees_the_pools_kept_blocks(queue, monkeypatch):
    """Device results come from a pool whose allocations are deferred: a full device shows as
    a MemoryError at the launch; the call gives the pool's kept blocks back and launches
    again, once, with each NaN counted once (the general path, warning at once, and the
    prepared launch, whose counts wait for daskcl.synchronize)."""
    import pyopencl as cl

    from daskcl.kernels import _elementwise, _launch, _transfer

    pool = _transfer.device_pool(device.current())
    base = cla.to_device(queue, np.array([-1.0, 0.0, 0.5, 0.0, 2.0, 0.0]))
    x = base[::2]                # strided: the general path
    keep = [nmath.qnorm(cla.to_device(queue, np.array([0.1, 0.5, 0.9]))) for _ in range(2)]
    del keep                     # two blocks of the size, kept by the pool: the call takes one
    assert pool.held_blocks >= 2
    real = _elementwise.ElementwiseKernel.enqueue
    failures: list[int] = []

    def full_once(self, *args, **kwargs):
        events = real(self, *args, **kwargs)   # the launches ran (and counted) before failing
        if not failures:
            failures.append(1)
            raise cl.MemoryError("clEnqueueNDRangeKernel",
                                 cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE, "")
        return events

    monkeypatch.setattr(_elementwise.ElementwiseKernel, "enqueue", full_once)
    with daskcl.config.set(warnings="immediate"), \
            pytest.warns(RuntimeWarning, match="qnorm: 2 NaN") as got:
        y = nmath.qnorm(x)
    assert len(got) == 1 and failures == [1] and pool.held_blocks == 0
    with pytest.warns(RuntimeWarning):
        assert same(y.get(), nmath.qnorm(base.get()[::2]))
    failures.clear()
    with daskcl.config.set(warnings="immediate"), pytest.raises(cl.MemoryError):
        nmath.qnorm(x)           # nothing kept to give back: the error stands

    xc = cla.to_device(queue, np.array([-1.0, 0.5, 2.0]))   # contiguous: prepared
    keep = [nmath.qnorm(cla.to_device(queue, np.array([0.1, 0.5, 0.9]))) for _ in range(3)]
    del keep, y
    daskcl.synchronize()
    assert pool.held_blocks >= 2
    run = _launch.Prepared.run

    def fails_once(self, *args, **kwargs):
        if not failures:
            failures.append(1)
            raise cl.MemoryError("clEnqueueNDRangeKernel",
                                 cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE, "")
        return run(self, *args, **kwargs)

    monkeypatch.setattr(_launch.Prepared, "run", fails_once)
    failures.clear()
    held = pool.held_blocks
    y = nmath.qnorm(xc)
    assert failures == [1] and pool.held_blocks < held - 1
    with pytest.warns(RuntimeWarning, match="qnorm: 2 NaN") as got:
        values = daskcl.synchronize(y)
    assert len(got) == 1
    with pytest.warns(RuntimeWarning):
        assert same(values, nmath.qnorm(xc.get()))


def test_device_arrays_of_other_dtypes_keep_their_layout(queue):
    """A device array of float32, ints or bool is converted on the device as the view it is:
    a transposed or Fortran-ordered float32 came back scrambled (pyopencl's ``astype`` copies
    in memory order and gives C strides), a strided one and a bool one were refused with
    pyopencl's own errors, one without a queue raised a bare AssertionError."""
    ident = ElementwiseKernel("double x", "double y", "y = x;", name="ident_dtype")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert same(nmath.pnorm(cla.to_device(queue, a).T).get(), nmath.pnorm(a.T))
    assert same(ident(cla.to_device(queue, np.asfortranarray(a))).get(), a.astype(np.float64))
    b = np.arange(48, dtype=np.int32).reshape(6, 8)
    d = cla.to_device(queue, b)
    for view, want in ((d[:, ::3], b[:, ::3]), (d[1:5, 2::2], b[1:5, 2::2]),
                       (d[2:4].T, b[2:4].T)):
        assert same(ident(view).get(), want.astype(np.float64))
    flags = np.array([True, False, True, True])
    assert same(ident(cla.to_device(queue, flags)).get(), flags.astype(np.float64))
    assert same(ident(cla.to_device(queue, a).with_queue(None)).get(), a.astype(np.float64))
    big = np.array([2**53 + 1, -3], dtype=np.int64)      # as NumPy converts: rounded to even
    assert same(ident(cla.to_device(queue, big)).get(), big.astype(np.float64))
    assert ident(cla.to_device(queue, np.zeros((0, 3), np.uint16))).get().shape == (0, 3)
    with pytest.raises(TypeError, match=r"ident_dtype: argument 'x' is a device array of "
                       r"float16, which OpenCL does not convert here: pass it as float32"):
        ident(cla.to_device(queue, np.zeros(3, np.float16)))


def test_arrays_of_another_context_are_refused():
    bound = device.current()
    other = cl.Context([bound.device])
    q2 = cl.CommandQueue(other)
    x = cla.to_device(q2, np.linspace(0, 1, 10))
    with pytest.raises(ValueError, match="pnorm: argument 'q' is a pyopencl array of another "
                                         "OpenCL context"):
        nmath.pnorm(x)
    with pytest.raises(ValueError, match="another OpenCL context"):
        f2_f3("poisson", "log", x.reshape(5, 2), np.ones(3), np.ones((3, 2)), np.zeros(2),
              np.eye(2), 0.0, 1.0)
    with pytest.raises(TypeError, match="must be real numbers, got a device array of dtype"):
        nmath.pnorm(cla.to_device(device.current().queue, np.zeros(3, dtype=np.complex128)))


def test_arrays_still_written_on_another_queue_are_waited_for():
    """A device array of the bound context whose contents another queue is still writing (its
    ``events``, as pyopencl records them) is read only once that work is done, by nmath and by
    f2_f3: one in-order queue does not order another's."""
    bound = device.current()
    other = cl.CommandQueue(bound.context)
    fill = cl.Program(bound.context, """
        __kernel void fill(__global double *x, long n, long spin) {
            double a = 1.0;
            for (long i = 0; i < spin; ++i) a = a * 0.999999 + 1e-9;   /* a fraction of a second */
            const long i = get_global_id(0);
            if (i < n) x[i] = (a > 0.0) ? 0.25 * (double)i - 8.0 : 0.0;
        }""").build().fill
    values = 0.25 * np.arange(64.0) - 8.0
    x = cla.zeros(other, 64, np.float64)
    x.add_event(fill(other, (64,), None, x.data, np.int64(64), np.int64(10_000_000)))
    try:
        got = nmath.pnorm(x).get()
    finally:
        other.finish()
    assert same(got, nmath.pnorm(values))
    # a GLM grid on the device, the same way
    y, xm = np.array([0.25, 0.75, 0.5]), np.array([[1.0, 0.5], [1.0, -1.0], [1.0, 2.0]])
    args = (y, xm, np.zeros(2), np.eye(2), 0.0, 4.0)
    b = cla.zeros(other, (32, 2), np.float64)
    b.add_event(fill(other, (64,), None, b.data, np.int64(64), np.int64(10_000_000)))
    try:
        qf, grad = f2_f3("binomial", "logit", b, *args)
        qf, grad = qf.get(), grad.get()
    finally:
        other.finish()
    want_qf, want_grad = f2_f3("binomial", "logit", values.reshape(32, 2), *args)
    assert same(qf, want_qf) and same(grad, want_grad)
    # a RawKernel: its device-array input waited for; its output's event recorded, so that a
    # read on another queue waits for the launch
    raw = RawKernel("""// @depends_nmath: pnorm
        __kernel void raw_pnorm(__global const double *x, __global double *y, long n) {
            const long i = get_global_id(0);
            if (i < n) y[i] = pnorm5(x[i], 0.0, 1.0, 1, 0);
        }""", "raw_pnorm")
    x = cla.zeros(other, 64, np.float64)
    x.add_event(fill(other, (64,), None, x.data, np.int64(64), np.int64(10_000_000)))
    out = cla.zeros(bound.queue, 64, np.float64)
    try:
        raw((64,), None, x, out, 64, wait=False)
        got = out.get(queue=other)
    finally:
        other.finish()
        bound.queue.finish()
    assert same(got, nmath.pnorm(values))


QUANTILES = """// @depends_nmath: qnorm
    __kernel void cq(__global const double *p, __global double *x, const long n)
    {
        const long i = get_global_id(0);
        if (i < n) x[i] = qnorm5(p[i], 0.0, 1.0, 1, 0);
    }"""


def test_raw_kernel_views_at_an_offset(queue):
    """A device-array view at an offset into its buffer (``out[3:]``) is a kernel argument:
    pyopencl's ``Array.data`` raised ``ArrayHasOffsetError`` for every one.  A view at a
    multiple of the device's base address alignment is a sub-buffer of the array's own; any
    other offset goes through a buffer of its own, copied on the device in and (for data that
    are not const) back out; the elements around the view are left as they were."""
    from daskcl.kernels._kernel import _view_buffer

    bound = device.current()
    k = RawKernel(QUANTILES, "cq")
    p = np.array([0.025, 0.5, 0.975])
    want = nmath.qnorm(p)
    assert want[2] == 1.9599639845400536
    out = cla.zeros(queue, 6, np.float64)
    k(3, None, p, out[3:], 3)                                 # the review's reproducer
    assert np.array_equal(out.get(), [0.0, 0.0, 0.0, *want])
    aligned = bound.device.mem_base_addr_align // 64          # elements of float64
    for start in (1, 3, aligned, 2 * aligned, aligned + 5):
        out = cla.to_device(queue, np.full(4 * aligned + 8, -7.0))
        ins = cla.to_device(queue, np.full(4 * aligned + 8, 0.5))
        ins[start:start + 3] = cla.to_device(queue, p)
        view = out[start:start + 4]
        buf = _view_buffer("", view, bound)
        # aligned: a sub-buffer of the array's own buffer, no copy; otherwise staged
        assert (buf is not None) == (start % aligned == 0)
        if buf is not None:
            assert buf.offset == 8 * start and buf.size == 32
        k(4, None, ins[start:start + 3], view, 3)             # writes 3 of the view's 4
        got = out.get()
        assert np.array_equal(got[start:start + 3], want), start
        assert np.all(np.delete(got, range(start, start + 3)) == -7.0), start
        assert np.array_equal(ins[start:start + 3].get(), p)
    # rows of a 2-D array (C-contiguous views at offsets), and a block of daskcl's pool
    grid = cla.zeros(queue, (3, 5), np.float64)
    k(5, None, np.linspace(0.1, 0.9, 5), grid[1:], 5)
    assert np.array_equal(grid.get()[1], nmath.qnorm(np.linspace(0.1, 0.9, 5)))
    assert not grid.get()[0].any() and not grid.get()[2].any()
    pooled = nmath.pnorm(nmath.qnorm(cla.to_device(queue, np.linspace(0.01, 0.99, 99))))
    for start in (5, aligned):
        res = cla.zeros(queue, 4, np.float64)
        k(4, None, pooled[start:start + 4], res, 4)
        assert np.array_equal(res.get(), nmath.qnorm(pooled.get()[start:start + 4]))
    # a view of an array written on another queue: the input waited for; the results' copy
    # back recorded in the view's events, so that a read on another queue waits for it
    other = cl.CommandQueue(bound.context)
    slow = cl.Program(bound.context, """
        __kernel void fill(__global double *x, long n, long spin) {
            double a = 1.0;
            for (long i = 0; i < spin; ++i) a = a * 0.999999 + 1e-9;
            const long i = get_global_id(0);
            if (i < n) x[i] = (a > 0.0) ? 0.25 + 0.5 * (double)i / (double)n : 0.0;
        }""").build().fill
    src = cla.zeros(other, 67, np.float64)
    src.add_event(slow(other, (67,), None, src.data, np.int64(67), np.int64(10_000_000)))
    out = cla.zeros(queue, 70, np.float64)
    view = out[3:67]
    try:
        k(64, None, src[3:], view, 64, wait=False)
        got = view.get(queue=other)
    finally:
        other.finish()
        queue.finish()
    assert np.array_equal(got, nmath.qnorm(0.25 + 0.5 * np.arange(3.0, 67.0) / 67))


def test_raw_kernel_non_contiguous_views_are_refused(queue):
    """A strided device array cannot be a pointer's data (the kernel would read it as if
    contiguous): a ValueError names the parameter and what to pass instead."""
    k = RawKernel(QUANTILES, "cq")
    wide = cla.to_device(queue, np.repeat([0.025, 0.5, 0.975], 2))
    out = cla.zeros(queue, 6, np.float64)
    with pytest.raises(ValueError, match=r"RawKernel cq: argument 0 \(p\): the pyopencl array "
                                         r"is not C-contiguous \(strides \(16,\)\).* pass a "
                                         r"C-contiguous array"):
        k(3, None, wide[1::2], out, 3)
    with pytest.raises(ValueError, match=r"argument 1 \(x\): the pyopencl array is not "
                                         r"C-contiguous"):
        k(3, None, np.array([0.025, 0.5, 0.975]), out[::2], 3)
    assert not out.get().any()


def test_raw_kernel_buffers_and_arrays_of_another_context_are_refused(queue):
    """A ``pyopencl.Buffer`` (and a device array) of another OpenCL context is refused with the
    device arrays' ValueError, before any launch: a raw buffer was set as the kernel's argument
    unchecked."""
    bound = device.current()
    other = cl.Context([bound.device])
    q2 = cl.CommandQueue(other)
    k = RawKernel(QUANTILES, "cq")
    p = np.array([0.025, 0.5, 0.975])
    foreign = cl.Buffer(other, cl.mem_flags.READ_WRITE, 24)
    with pytest.raises(ValueError, match=r"RawKernel cq: argument 1 \(x\) is a pyopencl Buffer "
                                         r"of another OpenCL context; daskcl computes on .* in "
                                         r"its own context"):
        k(3, None, p, foreign, 3)
    with pytest.raises(ValueError, match=r"argument 0 \(p\) is a pyopencl array of another "
                                         r"OpenCL context; daskcl computes on"):
        k(3, None, cla.to_device(q2, p), cla.zeros(queue, 3, np.float64), 3)
    # a buffer of the bound context is used in place
    mine = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, 24)
    k(3, None, p, mine, 3)
    got = np.empty(3)
    cl.enqueue_copy(queue, got, mine)
    assert np.array_equal(got, nmath.qnorm(p))


def test_sorted_launches_from_several_threads(queue):
    """Threads calling a function of sorted launches (pbeta; binning on for any device) on
    device arrays at once: each launch's four kernels share the queue's scratch buffers and are
    enqueued together, so no thread's kernels come between another's (they did: wrong values,
    and on PoCL out-of-range writes that crashed the process)."""
    import sys
    import threading

    from daskcl import config

    before = sys.getswitchinterval()
    xs = [cla.to_device(queue, np.linspace(0.001, 0.999, 5000 + 37 * k)) for k in range(4)]
    wrong: list[int] = []
    with config.set({"binning": "1"}):
        want = [nmath.pbeta(x.get(), 0.7, 45.0) for x in xs]

        def work(k: int) -> None:
            for _ in range(30):
                if not same(nmath.pbeta(xs[k], 0.7, 45.0).get(), want[k]):
                    wrong.append(k)

        sys.setswitchinterval(1e-6)     # threads switch between any two of a launch's kernels
        try:
            threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.setswitchinterval(before)
    assert wrong == []
