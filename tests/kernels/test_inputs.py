# SPDX-License-Identifier: GPL-2.0-or-later
"""Every kernel input answered: generators' parameter limits, calls larger than one device
buffer (computed in pieces), launches bounded for Ctrl-C, flags, dask shapes, f2_f3 arguments.

A few functions only (pnorm, rnorm, rsignrank, rwilcox, rhyper), to keep PoCL builds few.
"""

from __future__ import annotations

import math
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from support.procs import run_python
from test_random_philox import stream_words

from daskcl import ElementwiseKernel, nmath
from daskcl.glm import FactorialGrid, Posterior, f2_f3
from daskcl.kernels import _elementwise as ew
from daskcl.kernels import _plan, _transfer
from daskcl.kernels import _random as drandom


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


# -- generators beyond their exact range ---------------------------------------------------------

EDGE_CHILD = textwrap.dedent("""
    import time, warnings
    import numpy as np
    from daskcl import nmath
    nmath.rsignrank(1, 3, seed=1); nmath.rwilcox(1, 2, 3, seed=1); nmath.rhyper(1, 3, 4, 2, seed=1)
    calls = [
        ("rsignrank", lambda: nmath.rsignrank(4, [np.inf, 1e300, 9e9, 2.0**28 + 1], seed=1)),
        ("rwilcox", lambda: nmath.rwilcox(3, [np.inf, 5.0, 2.0**21], [5.0, 1e300, 2.0**21 + 1],
                                          seed=1)),
        ("rhyper", lambda: nmath.rhyper(2, [1e30, 2.0**44], [1e30, 2.0**44 + 1], 2.0, seed=1)),
    ]
    for name, call in calls:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = time.perf_counter()
            x = call()
            dt = time.perf_counter() - t
        print(name, dt, np.isnan(x).all(), "|".join(str(m.message) for m in w), flush=True)
""")


def test_generators_beyond_their_range_give_nan_and_warn_at_once():
    """n = Inf, 1e300, 9e9 (which wrapped a 64-bit sum) and just above the documented limits:
    NaN with the warning naming the limit, within a second (they ran without end before)."""
    proc = run_python(["-c", EDGE_CHILD], timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = {ln.split()[0]: ln.split(" ", 3)[1:] for ln in proc.stdout.splitlines()}
    limits = {"rsignrank": (4, "n above RSIGNRANK_MAX_N = 2\\*\\*28"),
              "rwilcox": (3, "m \\+ n above RWILCOX_MAX_N = 2\\*\\*22"),
              "rhyper": (2, "m \\+ n above RHYPER_MAX_N = 2\\*\\*45")}
    for name, (count, note) in limits.items():
        dt, all_nan, msg = lines[name]
        assert float(dt) < 1.0, (name, dt)
        assert all_nan == "True", name
        assert re.fullmatch(f"{name}: {count} NaN\\(s\\) produced \\(invalid parameters, or "
                            f"{note}\\)", msg), msg


def test_limits_match_the_kernels():
    """The documented limits are the kernels' own: the largest n is computed, one more is NaN."""
    assert drandom.RSIGNRANK_MAX_N == 2**28 and drandom.RWILCOX_MAX_N == 2**22
    assert drandom.RHYPER_MAX_N == 2**45
    x = nmath.rwilcox(2, [2.0**21, 0.0], [2.0**21, np.inf], seed=3)   # R: 0 when m = 0
    assert 0 < x[0] < 2.0**42 and x[1] == 0.0
    assert not np.isnan(nmath.rhyper(1, 2.0**44, 2.0**44, 10.0, seed=3)[0])


def test_rsignrank_sums_its_words_exactly():
    """Each 64-bit word is summed through popcounts: the same statistic as bit by bit, for
    whole words and partial last words."""
    seed, n = 11, 64
    w = stream_words(seed, np.arange(n, dtype=np.uint64), nblocks=2)
    for k in (1, 63, 64, 65, 128, 129, 200, 256):
        x = nmath.rsignrank(n, k, seed=seed)
        bits = np.array([[(int(w[e, i // 64]) >> (i % 64)) & 1 for i in range(k)]
                         for e in range(n)])
        np.testing.assert_array_equal(x, bits @ np.arange(1, k + 1), err_msg=f"n = {k}")


def test_rsignrank_at_its_limit_has_the_exact_moments():
    """At n = RSIGNRANK_MAX_N (sum up to 3.6e16, where a 32-bit or wrapping sum would show):
    the sample mean is within 5 standard errors of n (n + 1) / 4, every value in its support."""
    n = float(drandom.RSIGNRANK_MAX_N)
    k = 12
    x = nmath.rsignrank(k, n, seed=5)
    mean, var = n * (n + 1) / 4, n * (n + 1) * (2 * n + 1) / 24
    assert np.all((x >= 0) & (x <= n * (n + 1) / 2))
    z = (x.mean() - mean) / math.sqrt(var / k)
    assert abs(z) < 5, z
    assert 0.05 < x.var(ddof=1) / var < 4


CTRL_C_CHILD = textwrap.dedent("""
    import math, sys, time
    from daskcl import nmath
    from daskcl.runtime import device
    nmath.rsignrank(2, 2.0**10, seed=1)                  # built
    # the device's pace over as many launches as run at once (a GPU's three slots, each launch
    # at least one variate per compute unit), so that a larger call scales from it
    info = device.current().info
    first = 64 if info.type == "CPU" else 3 * max(1, info.compute_units)
    t = time.perf_counter()
    nmath.rsignrank(first, 2.0**28, seed=1)              # ~ first x 4e6 words
    once = time.perf_counter() - t
    size = first * max(10, math.ceil(10.0 / once))       # ~10 s, and at least 10 such rounds
    print("ready", once, flush=True)
    t = time.perf_counter()
    try:
        nmath.rsignrank(size, 2.0**28, seed=1)
        print("finished", time.perf_counter() - t, flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.perf_counter() - t, flush=True)
""")


def test_ctrl_c_stops_a_long_call_between_launches():
    """A call of costly variates is cut into launches of about 2**21 words per compute unit:
    SIGINT one second in stops it within a launch, not at the end of the call.  The bound is
    3 s, or three rounds of launches where a round takes longer (a machine under load: the
    call is at least ten rounds, so stopping only at its end still fails)."""
    line, out, err, waited = _interrupt_a_second_in(CTRL_C_CHILD)
    once = float(line[1])
    assert out.startswith("interrupted"), (out, err[-2000:])
    assert waited < max(3.0, 3 * once), (waited, once)


def _interrupt_a_second_in(child: str) -> tuple[list[str], str, str, float]:
    """Run ``child``, send it SIGINT one second after it prints its "ready" line; its ready
    line, what it printed after, its stderr and the seconds it took to end after the signal."""
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        assert line[:1] == ["ready"], (line, proc.stderr.read() if proc.stderr else "")
        time.sleep(1.0)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        waited = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return line, out, err, waited


SLOW_CHILD = textwrap.dedent("""
    import time
    import numpy as np
    from daskcl import nmath
    nmath.qtukey(0.95, 1.0, 3.0, 10.0)                  # built, and its cost measured
    p = np.full(100_000, 0.95)                          # minutes of work on a few cores
    print("ready", flush=True)
    t = time.perf_counter()
    try:
        nmath.qtukey(p, 1.0, 3.0, 10.0)
        print("finished", time.perf_counter() - t, flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.perf_counter() - t, flush=True)
""")


def test_ctrl_c_stops_a_slow_function_within_a_second_or_two():
    """qtukey costs milliseconds an element on a CPU: its launches are sized by its measured
    cost (a tenth of a second each), not by a number of elements, so SIGINT a second into a
    call of minutes stops it within about a second (3 s allowed on a loaded machine)."""
    if drandom._device.current().info.type != "CPU":
        pytest.skip("launches sized by their measured cost on CPU devices")
    _, out, err, waited = _interrupt_a_second_in(SLOW_CHILD)
    assert out.startswith("interrupted"), (out, err[-2000:])
    assert waited < 3.0, waited


DASK_CHILD = textwrap.dedent("""
    import time
    import numpy as np
    import dask.array as da
    from daskcl import nmath
    nmath.qtukey(0.95, 1.0, 3.0, 10.0)                  # built, and its cost measured
    p = da.full(100_000, 0.95, chunks=10_000)           # minutes of work in ten chunks
    print("ready", flush=True)
    try:
        nmath.qtukey(p, 1.0, 3.0, 10.0).compute(scheduler="threads")
        print("finished", flush=True)
    except KeyboardInterrupt:
        t = time.perf_counter()
        nmath.qtukey(np.full(4, 0.95), 1.0, 3.0, 10.0)
        print("interrupted", time.perf_counter() - t, flush=True)
""")


def test_ctrl_c_stops_a_dask_computes_chunks():
    """SIGINT a second into a dask compute of a slow function: dask's scheduler raises at once,
    and the chunks its worker threads were computing stop after their current piece, so the
    next call does not wait for them and the process ends (its exit joins those threads)
    within about a second."""
    if drandom._device.current().info.type != "CPU":
        pytest.skip("launches sized by their measured cost on CPU devices")
    _, out, err, waited = _interrupt_a_second_in(DASK_CHILD)
    assert out.startswith("interrupted"), (out, err[-2000:])
    assert float(out.split()[1]) < 2.0, out
    assert waited < 3.0, waited


def test_a_dask_compute_failing_otherwise_stops_no_chunks():
    """Only Ctrl-C (KeyboardInterrupt) stops the running chunks of daskcl: an error of the
    compute leaves those of other computes alone."""
    import dask.array as da

    def fails(block):
        raise ValueError("not this chunk")

    x = da.from_array(np.linspace(-1, 1, 10), chunks=5)
    before = _plan._generation[0]
    with pytest.raises(ValueError, match="not this chunk"):
        (nmath.pnorm(x) + x.map_blocks(fails)).compute(scheduler="threads")
    assert _plan._generation[0] == before
    assert same(nmath.pnorm(x).compute(scheduler="threads"), nmath.pnorm(x.compute()))


def _cap(gen, shape, values):
    call = gen.prepare(values, (), shape, (1, 0, None))
    gen.extend(call)
    return call.cap


def test_costly_generators_launch_few_elements():
    """Launch sizes follow the generator's cost (its largest finite parameters); cheap
    generators keep the full launch."""
    bound = drandom._device.current()
    units = max(1, bound.info.compute_units)
    full = _plan.launch_elements(bound)
    per = _cap(nmath.rsignrank, (100,), [2.0**28])
    assert units <= per <= max(units, drandom._WORK_OTHER * units // 2**22)
    mixed = np.array([3.0, np.nan, np.inf, -1.0] * 25)      # NaN, Inf, -1 cost nothing
    assert full // 2 <= _cap(nmath.rsignrank, (100,), [mixed])
    assert _cap(nmath.rnorm, (10,), [0.0, 1.0]) is None


# -- calls larger than one device buffer --------------------------------------------------------

LIMIT = 1 << 16          # a fake largest allocation: 8192 doubles


def spy(monkeypatch, record):
    """Record the elements of every launch and the streamed ranges of every piece."""
    real_enqueue = ew.ElementwiseKernel._enqueue
    real_stream = _transfer.stream

    def enqueue(self, call, dims, *args, **kwargs):
        record.append(("launch", math.prod(dims)))
        return real_enqueue(self, call, dims, *args, **kwargs)

    def stream(bound, pieces, ins, outs, launch, **kwargs):
        pieces = list(pieces)       # planned all at once here (on CPUs, an iterator)
        for p in pieces:
            record.extend(("range", hi - lo) for lo, hi in [*filter(None, p.ins), *p.outs])
        return real_stream(bound, pieces, ins, outs, launch, **kwargs)

    monkeypatch.setattr(ew.ElementwiseKernel, "_enqueue", enqueue)
    monkeypatch.setattr(_transfer, "stream", stream)


@pytest.mark.parametrize("mode", ["host", "direct"])
def test_broadcast_result_beyond_the_largest_buffer_is_computed_in_pieces(monkeypatch, mode):
    """Also through device buffers (the path of devices with their own memory)."""
    rng = np.random.default_rng(3)
    cases = [
        (rng.normal(0, 2, (300, 1)), rng.normal(0, 1, (1, 200)), rng.uniform(0.5, 2, 200)),
        # one row of the result alone exceeds the limit: rows are cut too
        (rng.normal(0, 2, (3, 1)), 0.5, rng.uniform(0.5, 2, 20000)),
        # a full-size input beyond the limit
        (rng.normal(0, 2, (70, 130)), np.zeros((70, 1)), 1.0),
    ]
    want = [nmath.pnorm(*c, log_p=True) for c in cases]
    monkeypatch.setattr(_plan, "max_alloc", lambda bound: LIMIT)
    monkeypatch.setattr(_transfer, "mode", lambda bound: mode)
    calls: list = []
    spy(monkeypatch, calls)
    for c, w in zip(cases, want):
        calls.clear()
        got = nmath.pnorm(*c, log_p=True)
        assert same(got, w)
        launches = [n for what, n in calls if what == "launch"]
        assert len(launches) >= w.nbytes // LIMIT
        assert all(n * 8 <= LIMIT for _, n in calls)


def test_launches_are_bounded_for_ctrl_c(monkeypatch):
    """Elementwise calls are launched in at most LAUNCH_CPU elements (LAUNCH_OTHER off CPUs)."""
    q = np.linspace(-4, 4, 5003)
    want = nmath.pnorm(q, 0.5, 2.0)
    monkeypatch.setattr(_plan, "LAUNCH_CPU", 1000)
    monkeypatch.setattr(_plan, "LAUNCH_OTHER", 1000)
    # not cut smaller by the measured pace (a loaded machine's)
    monkeypatch.setattr(_plan, "cost_cap", lambda k, bound: 1 << 30)
    calls: list = []
    spy(monkeypatch, calls)
    assert same(nmath.pnorm(q, 0.5, 2.0), want)
    # in any order: on devices with their own memory the pieces launch from three slot threads
    assert sorted(n for what, n in calls if what == "launch") == [3] + [1000] * 5


@pytest.mark.parametrize("mode", ["pinned", "direct"])
def test_streamed_pieces_follow_the_measured_pace(monkeypatch, mode):
    """On devices with their own memory (the slots' path, here on PoCL) each piece's kernels
    are timed from their profile, and a call's pieces are planned at the pace measured."""
    k = ElementwiseKernel("double x", "double y", "y = pnorm(x, 0.5, 2.0, 1, 0);",
                          name="paced")
    q = np.linspace(-4, 4, 5003)
    want = k(q)
    bound = drandom._device.current()
    monkeypatch.setattr(_transfer, "mode", lambda bound: mode)
    monkeypatch.setattr(_plan, "RESIDENT_BYTES", 4000)          # q streamed
    k.__dict__.pop("_piece", None)
    timed: list = []
    record = _plan.record_cost
    monkeypatch.setattr(_plan, "record_cost",
                        lambda kk, b, n, t: (timed.append((n, t)), record(kk, b, n, t)))
    assert same(k(q), want)
    assert sum(n for n, _ in timed) == q.size and all(t > 0 for _, t in timed)
    assert _plan.measured_cap(k, bound) is not None
    k.__dict__["_piece"] = (bound, 1024)      # as if a piece of 1024 took a tenth of a second
    monkeypatch.setattr(_plan, "record_cost", lambda *a: None)
    calls: list = []
    spy(monkeypatch, calls)
    assert same(k(q), want)
    assert sorted(n for what, n in calls if what == "launch") == [907] + [1024] * 4


@pytest.mark.parametrize("mode", ["host", "direct"])
def test_random_beyond_the_largest_buffer_is_computed_in_pieces(monkeypatch, mode):
    rng = np.random.default_rng(4)
    sd = rng.uniform(0.5, 2, (90, 130))                 # full size, 94 KB
    mean = np.arange(130.0)
    want = [nmath.rnorm((90, 130), mean, sd, seed=9, offset=5),
            nmath.rnorm((3, 20000), seed=9), nmath.rnorm(50000, seed=2)]
    monkeypatch.setattr(_plan, "max_alloc", lambda bound: LIMIT)
    monkeypatch.setattr(_transfer, "mode", lambda bound: mode)
    calls: list = []
    spy(monkeypatch, calls)
    got = [nmath.rnorm((90, 130), mean, sd, seed=9, offset=5),
           nmath.rnorm((3, 20000), seed=9), nmath.rnorm(50000, seed=2)]
    for g, w in zip(got, want):
        assert same(g, w)
    assert len([c for c in calls if c[0] == "launch"]) >= sum(w.nbytes // LIMIT for w in want)
    assert all(n * 8 <= LIMIT for _, n in calls)
    # a dask result whose chunks exceed the limit: the same numbers
    d = nmath.rnorm((90, 130), mean, sd, seed=9, offset=5, chunks=(45, 130))
    assert same(d.compute(scheduler="sync"), want[0])


# -- flags and shapes ----------------------------------------------------------------------------


def test_flags_take_booleans_only():
    upper = nmath.pnorm(1.0, lower_tail=False)
    assert nmath.pnorm(1.0, lower_tail=np.bool_(False)) == upper
    assert nmath.pnorm(1.0, lower_tail=0) == upper
    assert nmath.pnorm(1.0, lower_tail=np.int64(1)) == nmath.pnorm(1.0)
    assert nmath.dnorm(0.0, log=1) == nmath.dnorm(0.0, log=True)
    for bad in ("False", None, 2, 0.0, [True]):
        with pytest.raises(TypeError, match=r"pnorm: lower_tail must be True or False"):
            nmath.pnorm(1.0, lower_tail=bad)
    with pytest.raises(TypeError, match=r"dnorm: log must be True or False"):
        nmath.dnorm(0.0, log="yes")


def test_an_integer_beyond_the_doubles_names_its_argument():
    with pytest.raises(OverflowError, match=r"pgamma: argument 'scale' holds an integer too "
                                            r"large for a double"):
        nmath.pgamma(1.0, 2.0, 10**400)
    assert nmath.pgamma(10**300, 2.0, 1.0) == 1.0     # a large one that fits is a double


def test_dask_arguments_that_do_not_broadcast_name_the_function():
    import dask.array as da

    with pytest.raises(ValueError, match=r"pnorm: the shapes of the arguments do not broadcast: "
                                         r"q \(3,\), mean \(4,\)"):
        nmath.pnorm(da.ones(3, chunks=2), np.zeros(4))
    with pytest.raises(ValueError, match=r"dnorm: .*x \(2, 3\), sd \(2,\)"):
        nmath.dnorm(da.ones((2, 3), chunks=1), 0.0, da.ones(2, chunks=1))
    ok = nmath.pnorm(da.ones((2, 3), chunks=1), np.zeros((2, 1)), 1)   # broadcasts
    assert ok.shape == (2, 3)
    # refused when the call is made, as for NumPy arguments, not when it is computed
    with pytest.raises(TypeError, match="pnorm: argument 'q' must be real numbers, got a dask "
                                        "array of dtype complex128"):
        nmath.pnorm(da.ones(3, dtype=complex, chunks=2))
    with pytest.raises(TypeError, match="pnorm: argument 'sd' is a masked array"):
        nmath.pnorm(da.ones(3, chunks=2), 0.0, np.ma.masked_array([1.0, 2.0, 3.0]))
    import pyopencl.array as cla

    from daskcl.runtime import device

    dev = cla.to_device(device.current().queue, np.zeros(4))
    with pytest.raises(TypeError, match=r"pnorm: argument 'q' is a pyopencl array among dask "
                                        r"arrays.*pass q.get\(\)"):
        nmath.pnorm(dev, da.ones(4, chunks=2))


def test_results_too_large_are_not_called_shapes_that_do_not_broadcast():
    big = (np.broadcast_to(0.0, (2**31, 1)), np.broadcast_to(0.0, (1, 2**32)))
    with pytest.raises(ValueError, match=r"pnorm: the arguments \(q \(2147483648, 1\), mean "
                                         r"\(1, 4294967296\)\) broadcast to a result too large"):
        nmath.pnorm(*big)
    with pytest.raises(ValueError, match="pnorm: the shapes of the arguments do not broadcast"):
        nmath.pnorm(np.zeros(3), np.zeros(4))


def test_generator_warnings_name_invalid_parameters_too():
    """NaN from parameters R refuses (k > m + n) is not blamed on the size limit alone."""
    with pytest.warns(RuntimeWarning, match=r"^rhyper: 2 NaN\(s\) produced \(invalid "
                                            r"parameters, or m \+ n above RHYPER_MAX_N"):
        x = nmath.rhyper(2, 10.0, 7.0, 20.0, seed=1)
    assert np.isnan(x).all()


# -- f2_f3 arguments ---------------------------------------------------------------------------


def glm_args():
    x = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    return dict(y=np.array([0.1, 0.4, 0.6, 0.9]), x=x, mu=np.zeros(2), P=np.eye(2),
                alpha=np.zeros(4), wt=np.ones(4))


@pytest.mark.parametrize(("chunks", "exc", "match"), [
    (0, ValueError, r"chunks must be a positive number of grid points per chunk.*not 0"),
    (-3, ValueError, r"chunks must be a positive.*not -3"),
    ((2, 2), ValueError, r"chunk sizes \(2, 2\) must be non-negative and sum to the 5 grid"),
    ((3, -1, 3), ValueError, r"chunk sizes"),
    ("big", TypeError, r"chunks must be 'auto', a positive int or a sequence of ints, not 'big'"),
    (1.5, TypeError, r"chunks must be 'auto', a positive int"),
    (True, TypeError, r"chunks"),
])
def test_f2_f3_chunks_are_checked(chunks, exc, match):
    a = glm_args()
    b = np.zeros((5, 2))
    with pytest.raises(exc, match=f"f2_f3: {match}"):
        f2_f3("gaussian", "identity", b, **a, chunks=chunks)
    with pytest.raises(exc, match=f"f2_f3: {match}"):
        f2_f3("gaussian", "identity", FactorialGrid([np.arange(5.0), [0.0]]), **a, chunks=chunks)


def test_f2_f3_prior_precision_positive_semidefinite():
    a = glm_args()
    with pytest.raises(ValueError, match=r"P must be positive semidefinite.*smallest eigenvalue "
                                         r"is -1\.0"):
        f2_f3("gaussian", "identity", np.zeros((1, 2)), **{**a, "P": np.diag([1.0, -1.0])})
    with pytest.raises(ValueError, match="positive semidefinite"):
        Posterior("poisson", "log", a["y"], a["x"], a["mu"], np.array([[1.0, 2.0], [2.0, 1.0]]),
                  a["alpha"], a["wt"])
    # semidefinite (a flat prior along a direction) and zero precision are accepted
    Posterior("poisson", "log", a["y"], a["x"], a["mu"], np.diag([0.0, 1.0]), a["alpha"], a["wt"])
    Posterior("poisson", "log", a["y"], a["x"], a["mu"], np.zeros((2, 2)), a["alpha"], a["wt"])
    with pytest.raises(TypeError, match=r"tuning must be a daskcl\.glm\.Tuning"):
        f2_f3("gaussian", "identity", np.zeros((1, 2)), **a, tuning="fast")


def test_masked_arrays_are_refused_not_unmasked():
    m = np.ma.masked_array([0.0, 1.0, 2.0], mask=[False, True, False])
    with pytest.raises(TypeError, match="pnorm: argument 'q' is a masked array"):
        nmath.pnorm(m)
    with pytest.raises(TypeError, match="pnorm: argument 'sd' is a masked array"):
        nmath.pnorm(0.5, 0.0, np.ma.masked_array([1.0, 2.0]))
    # the advice given works: masked values become NaN
    out = nmath.pnorm(m.filled(np.nan))
    assert out[0] == 0.5 and np.isnan(out[1])


def test_a_scalar_negative_zero_reaches_the_kernel_as_negative_zero():
    """A Python or NumPy scalar -0.0 reached the kernel as +0.0 (``scalar or 0.0``), so a
    scalar call differed from the same call on an array, and from R: ``pexp(0.5, rate=-Inf)``
    is R's pexp(0.5, scale = -0) = -Inf; 1 / -0 is -Inf in a kernel of one's own."""
    assert nmath.pexp(0.5, rate=-np.inf) == -np.inf
    assert nmath.pexp(0.5, -0.0) == -np.inf
    assert nmath.pexp(0.5, np.float64(-0.0)) == nmath.pexp(0.5, np.array([-0.0]))[0] == -np.inf
    inv = ElementwiseKernel("double x", "double y", "y = 1.0 / x;", name="inverse")
    assert inv(-0.0) == -np.inf and inv(0.0) == np.inf
    # the scalar call gives the array call's bits, the sign of a zero included
    for f, args in ((nmath.lgamma1p, (-0.0,)), (nmath.log1pmx, (-0.0,)),
                    (nmath.qexp, (0.5, -0.0)), (nmath.qcauchy, (0.5, -0.0, 1.0))):
        arrays = [np.array([a]) for a in args]
        assert same(np.atleast_1d(f(*args)), f(*arrays)), f.__name__


def test_discrete_quantiles_beyond_2_to_53_return():
    """qnbinom's search by doubling and bisection (a poor start, a long walk to the right) never
    ended once its bounds passed 2^53, where no double lies between two neighbours: the midpoint
    rounded to a bound (and Ctrl-C could not stop the launch).  It now ends at the least value
    found whose probability reaches p (R does not return here at all: it walks a unit at a
    time)."""
    assert nmath.qnbinom(0.5, 0.2, mu=8.6e16) == 8920925852914650.0      # below: as before
    for size, mu in ((0.2, 8.75e16), (0.5, 1e18)):
        q = nmath.qnbinom(0.5, size, mu=mu)
        assert 2.0**53 < q < math.inf
        p_at = nmath.pnbinom(np.array([q * (1 - 1e-12), q]), size, mu=mu)
        assert p_at[0] < 0.5 * (1 - 8 * 2.0**-52) <= p_at[1], (size, mu, q, p_at)
    # where the distribution function itself gives out: NaN and R's warning, not a hang
    with pytest.warns(RuntimeWarning, match="qnbinom: 1 NaN"):
        assert math.isnan(nmath.qnbinom(0.5, 1e-10, mu=1e300))
    # (size 1, mu 1e200 was such a NaN until the search's start stopped overflowing: the
    # median of that geometric law, mu log 2)
    assert nmath.qnbinom(0.5, 1.0, mu=1e200) == pytest.approx(math.log(2) * 1e200, rel=1e-12)


def test_generator_argument_errors_name_the_generator():
    """A generator's wrong arguments gave inspect's bare messages ("too many positional
    arguments"), a bare OverflowError for 10**400, and a TypeError about a float index for a
    dask parameter of unknown size; each now names the generator (and its signature)."""
    import dask.array as da

    sig = r"rnorm\(size, mean=0\.0, sd=1\.0, \*, seed=None, offset=0, chunks=None, device=False\)"
    with pytest.raises(TypeError, match=rf"^{sig}: too many positional arguments$"):
        nmath.rnorm(3, 0, 1, 5)
    with pytest.raises(TypeError, match=rf"^{sig}: got an unexpected keyword argument 'sedd' "
                       r"\(did you mean seed or sd\?\)$"):
        nmath.rnorm(3, sedd=1)
    with pytest.raises(TypeError, match=r"^rt\(size, df, .*got an unexpected keyword argument "
                       "'ncp'"):
        nmath.rt(3, 5, ncp=1)
    with pytest.raises(OverflowError, match=r"^rnorm: parameter 'mean' is an integer too large "
                       "for a double"):
        nmath.rnorm(3, 10**400)
    x = da.arange(10, chunks=3).astype(float)
    with pytest.raises(ValueError, match=r"^rnorm: parameter 'mean' is a dask array of unknown "
                       r"size \(nan,\): call its compute_chunk_sizes\(\) first$"):
        nmath.rnorm(5, x[x > 3])


def test_python_ints_beyond_int64_in_a_list_are_numbers():
    """[1.5, 2**70] made an object array and was refused, where a scalar 2**70 is taken; a list
    of numbers is now taken as doubles (10**400 among them is the scalar's OverflowError;
    anything not a number is still refused)."""
    assert same(nmath.pnorm([1.5, 2**70, -(2**64)]), nmath.pnorm(np.array([1.5, 2.0**70, -2.0**64])))
    with pytest.raises(OverflowError, match=r"pnorm: argument 'q' holds an integer too large"):
        nmath.pnorm([1, 10**400])
    with pytest.raises(TypeError, match=r"pnorm: argument 'q' must be real numbers, got list of "
                       "dtype object"):
        nmath.pnorm([1, None])
