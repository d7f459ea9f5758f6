# SPDX-License-Identifier: GPL-2.0-or-later
"""The array API: signatures, broadcasting, types, shapes, warnings, dask."""

from __future__ import annotations

import concurrent.futures
import inspect
import math
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
from support import queues

from daskcl import nmath
from daskcl.kernels import _plan
from daskcl.kernels._docs import ALIASES
from daskcl.kernels._elementwise import collapse_axes
from daskcl.kernels._nmath_table import ROWS
from daskcl.runtime import device

API = Path(__file__).resolve().parents[1] / "data" / "rmath_api.tsv"
ROW = {fn.name: fn for fn in ROWS}


def api_rows():
    for line in API.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, kind, args, *_ = [*line.split("\t"), ""]
        yield name, kind, [a.strip() for a in args.split(",") if a.strip()]


@pytest.mark.parametrize("name", sorted(ROW))
def test_signature_follows_rmath_api(name):
    table = {n: (k, a) for n, k, a in api_rows()}
    assert name in table, f"{name} is not a row of rmath_api.tsv"
    kind, args = table[name]
    fn = ROW[name]
    first = {"d": ["x"], "p": ["q"], "q": ["p"]}.get(kind, [])
    assert list(fn.arg_names) == first + args
    sig = inspect.signature(getattr(nmath, name))
    flags = {"d": ["log"], "p": ["lower_tail", "log_p"], "q": ["lower_tail", "log_p"]}.get(kind, [])
    # R's own keywords, where R's interface differs from Rmath.h's, follow the flags
    aliases = list(ALIASES.get(name, {}))
    assert list(sig.parameters) == first + args + flags + aliases
    for f in flags + aliases:
        assert sig.parameters[f].kind is inspect.Parameter.KEYWORD_ONLY


def test_values_and_defaults():
    assert nmath.pnorm(1.96) == pytest.approx(0.9750021048517795, rel=1e-15)
    assert nmath.pnorm(1.96, 0, 1, lower_tail=False) == pytest.approx(0.024997895148220435, rel=1e-14)
    assert nmath.dnorm(0.0) == pytest.approx(1 / math.sqrt(2 * math.pi), rel=1e-15)
    assert nmath.dnorm(0.0, log=True) == pytest.approx(-0.5 * math.log(2 * math.pi), rel=1e-15)
    assert nmath.qnorm(0.975) == pytest.approx(1.959963984540054, rel=1e-15)
    assert nmath.dbinom(3, 10, 0.5) == pytest.approx(120 / 1024, rel=1e-14)
    assert nmath.dpois(2, 3.0) == pytest.approx(4.5 * math.exp(-3), rel=1e-14)
    assert nmath.dgamma(2.0, 3.0) == pytest.approx(2.0 * math.exp(-2.0), rel=1e-14)
    assert nmath.dgamma(2.0, 3.0, 2.0) == pytest.approx(nmath.dgamma(1.0, 3.0) / 2, rel=1e-14)
    assert nmath.gammafn(5.0) == 24.0
    assert nmath.logspace_add(math.log(2), math.log(3)) == pytest.approx(math.log(5), rel=1e-15)


def test_scalar_in_scalar_out():
    r = nmath.pnorm(0.0)
    assert type(r) is np.float64 and r == 0.5
    assert nmath.pnorm(np.float32(0.0)) == 0.5
    assert nmath.pnorm(np.array(0.0)).shape == ()


def test_broadcasting_matches_numpy_and_loops():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 1, 3))
    mean = rng.normal(size=(5, 1))
    sd = rng.uniform(0.5, 2, size=(3,))
    got = nmath.dnorm(x, mean, sd)
    assert got.shape == (4, 5, 3) and got.dtype == np.float64
    want = np.exp(-0.5 * ((x - mean) / sd) ** 2) / (np.sqrt(2 * np.pi) * sd)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_non_contiguous_and_integer_inputs():
    x = np.arange(60.0).reshape(3, 4, 5)[:, ::2, ::-1] / 10
    got = nmath.pnorm(x, 2, 3)
    want = np.array([nmath.pnorm(float(v), 2, 3) for v in x.ravel()]).reshape(x.shape)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(nmath.dbinom(np.arange(4), np.int32(3), 0.5),
                               [0.125, 0.375, 0.375, 0.125], rtol=1e-15)


def test_many_dimensions():
    shape = (2, 1, 3, 1, 2, 2, 1, 3)
    x = np.linspace(-2, 2, math.prod(shape)).reshape(shape)
    m = np.linspace(0, 1, 3).reshape(1, 1, 1, 1, 1, 1, 3, 1)
    got = nmath.pnorm(x, m, 1.0)
    assert got.shape == np.broadcast_shapes(shape, m.shape)
    want = np.vectorize(lambda a, b: float(nmath.pnorm(a, b)))(*np.broadcast_arrays(x, m))
    np.testing.assert_array_equal(got, want)


def test_broadcast_inputs_are_not_materialised():
    x = np.linspace(-3, 3, 1000)[:, None]
    mean = np.linspace(-1, 1, 700)[None, :]
    call = nmath.pnorm.prepare((x, mean, 2.0), (1, 0))
    ops = call.operands
    assert call.shape == (1000, 700)
    assert ops[0].host.size == 1000 and ops[1].host.size == 700 and ops[2].scalar == 2.0
    assert ops[0].strides == (1, 0) and ops[1].strides == (0, 1)
    # a broadcast view handed in is compacted, not copied out to its full size
    view = np.broadcast_to(np.linspace(0, 1, 700), (1000, 700))
    assert nmath.pnorm.prepare((view, 0.0, 1.0), (1, 0)).operands[0].host.size == 700


def test_collapse_axes():
    assert collapse_axes((2, 3, 4), [(12, 4, 1), (0, 0, 0)]) == ((24,), [(1,), (0,)])
    assert collapse_axes((2, 1, 4), [(4, 4, 1), (0, 0, 1)]) == ((2, 4), [(4, 1), (0, 1)])
    assert collapse_axes((1, 1), [(0, 0)]) == ((1,), [(0,)])


def test_empty_arrays():
    out = nmath.pnorm(np.empty((0, 3)), 0.0, np.ones(3))
    assert out.shape == (0, 3) and out.dtype == np.float64


@pytest.mark.parametrize("bad", ["1.0", None, 1 + 2j, np.array(["a"]), np.array([1j]), [object()]])
def test_non_numeric_is_type_error(bad):
    with pytest.raises(TypeError, match="pnorm: argument 'q' must be real numbers"):
        nmath.pnorm(bad)


def test_shape_mismatch_names_arguments():
    with pytest.raises(ValueError, match=r"dnorm: .*x \(3,\), mean \(4,\)"):
        nmath.dnorm(np.ones(3), np.ones(4))


def test_nan_warning_once_per_call_with_count():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = nmath.dnorm(np.array([0.0, 1.0, np.nan, 2.0]), 0.0, np.array([-1.0, 1.0, 1.0, -2.0]))
    assert [str(x.message) for x in w] == ["dnorm: 2 NaN(s) produced"]
    assert all(x.category is RuntimeWarning for x in w)
    assert np.isnan(out).tolist() == [True, False, True, True]


def test_a_host_path_call_reads_its_counts_with_its_outputs(monkeypatch):
    """On the in-place (CPU) path the NaN counts are read with the last piece's outputs, in
    one wait (no blocking read of its own), and count every piece's NaNs."""
    import pyopencl as cl

    from daskcl.kernels import _transfer

    x = np.linspace(-3, 3, 5000)
    sd = np.where(np.arange(5000) % 700 == 0, -1.0, 1.5)     # 8 NaNs, in every piece
    with pytest.warns(RuntimeWarning, match="dnorm: 8 NaN"):
        want = nmath.dnorm(x, 0.25, sd)
    monkeypatch.setattr(_transfer, "mode", lambda bound: "host")
    monkeypatch.setattr(_plan, "LAUNCH_CPU", 1000)
    monkeypatch.setattr(_plan, "LAUNCH_OTHER", 1000)
    copies: list[bool] = []
    real_copy = cl.enqueue_copy

    def enqueue_copy(*a, **k):
        copies.append(bool(k.get("is_blocking", True)))
        return real_copy(*a, **k)

    monkeypatch.setattr(cl, "enqueue_copy", enqueue_copy)
    for _ in range(2):     # the second call reads a status buffer the first gave back
        copies.clear()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = nmath.dnorm(x, 0.25, sd)
        assert [str(m.message) for m in w] == ["dnorm: 8 NaN(s) produced"]
        assert copies == [False]
        np.testing.assert_array_equal(got, want)


def test_r_warnings_are_collected_per_thread():
    """A sweep's chunk records R's warnings of its own thread (``collect_r_warnings``) while
    another thread's calls warn as usual, and neither touches the process's filters."""
    import threading

    from daskcl.errors import collect_r_warnings

    filters = list(warnings.filters)
    inside, started, done = [], threading.Event(), threading.Event()

    def chunk() -> None:
        with collect_r_warnings() as caught:
            started.set()
            nmath.dnorm(np.array([0.0, 1.0]), 0.0, -1.0)
            done.wait(60)
            nmath.dnorm(0.0, 0.0, np.array([-1.0, -1.0, -1.0]))
        inside.extend(caught)

    t = threading.Thread(target=chunk)
    t.start()
    started.wait(60)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nmath.qnorm(2.0)
        done.set()
        t.join(60)
    assert [str(x.message) for x in w] == ["qnorm: 1 NaN(s) produced"]
    assert inside == ["RuntimeWarning: dnorm: 2 NaN(s) produced",
                      "RuntimeWarning: dnorm: 3 NaN(s) produced"]
    assert warnings.filters == filters


def test_nan_input_propagates_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(nmath.pnorm(np.nan))


def test_non_integer_warning_like_r():
    with pytest.warns(RuntimeWarning, match=r"dbinom: 2 non-integer x"):
        out = nmath.dbinom(np.array([1.0, 1.5, 2.0, 2.5]), 3, 0.5)
    np.testing.assert_allclose(out, [0.375, 0.0, 0.375, 0.0], rtol=1e-15)


@pytest.mark.r
def test_choose_warns_of_a_k_more_than_1e_7_from_an_integer_like_r():
    """R's choose and lchoose warn where k is more than 1e-7 from an integer (absolute, not
    R_nonint's 1e-7 relative: choose(50, 30 + 1e-6) warned in R, not here), before computing,
    so also where the value is NaN (choose(Inf, 40.5)); R's values (k rounded)."""
    from support.rmath_oracle import r_eval

    n = np.array([50.0, 5.0, 5.0, np.inf, 1e9, 5.0, np.nan])
    k = np.array([30 + 1e-6, 2.00000015, 2.00000001, 40.5, 1e8 + 0.5, np.inf, 2.5])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nmath.choose(n, k)
        lout = nmath.lchoose(n, k)
    assert sorted(str(w.message) for w in caught) == [
        "choose: 1 NaN(s) produced", "choose: 4 non-integer k", "lchoose: 1 NaN(s) produced",
        "lchoose: 4 non-integer k"]
    np.testing.assert_allclose(out, r_eval("choose", [n, k]), rtol=1e-13)
    np.testing.assert_allclose(lout, r_eval("lchoose", [n, k]), rtol=1e-13)


@pytest.mark.r
def test_bessel_j_beyond_its_range_warns_as_r_and_gives_rs_zero():
    """R's bessel_j gives 0 beyond x = 1e5 and warns "value out of range in 'J_bessel'"; daskcl
    gave the 0 silently.  A negative nu goes through J_-nu, which R skips where -nu is a
    half-integer (no warning there, and a value); NaN arguments do not count."""
    from support.rmath_oracle import r_eval

    x = np.array([9e4, 1e5, 2e5, np.inf, 2e5, 2e5, np.nan, 2e5])
    nu = np.array([0.0, 0.0, 0.0, 0.0, -0.5, -0.7, 0.0, np.nan])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nmath.bessel_j(x, nu)
    assert [str(w.message) for w in caught] == [
        "bessel_j: 3 value(s) out of range in 'J_bessel' (x > 1e5: 0, as R gives)"]
    assert caught[0].filename == __file__
    np.testing.assert_allclose(out, r_eval("bessel_j", [x, nu]), rtol=1e-13)
    assert out[2] == out[3] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nmath.bessel_j(np.array([1.0, 99999.0]), 2.5)


def test_pbinom_non_integer_size_warns_then_is_nan_like_r():
    """R's pbinom checks NaN, then infinite size or prob (NaN, no message), then a non-integer
    size: "non-integer n" and NaN."""
    q = np.array([1.0, 2.0, np.inf, 1.0, np.nan, 1.0])
    size = np.array([2.5, 3.0, 2.5, 2.5, 2.5, 3.0 + 1e-9])   # 3 + 1e-9: integer to R's 1e-7
    prob = np.array([0.3, 0.3, 0.3, np.inf, 0.3, 0.3])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = nmath.pbinom(q, size, prob)
    assert sorted(str(w.message) for w in caught) == ["pbinom: 2 non-integer size",
                                                     "pbinom: 3 NaN(s) produced"]
    np.testing.assert_array_equal(np.isnan(out), [True, False, True, True, True, False])
    assert out[1] == pytest.approx(0.973, rel=1e-15)


def test_flags_are_keyword_only():
    """A flag by position, or a misspelt keyword, is a TypeError that names the function, shows
    its signature and says what to write (it was inspect's bare "too many positional
    arguments")."""
    sig = "pnorm(q, mean=0.0, sd=1.0, *, lower_tail=True, log_p=False)"
    with pytest.raises(TypeError) as err:
        nmath.pnorm(1.0, 0.0, 1.0, False, True)
    assert str(err.value) == (f"{sig}: too many positional arguments; R's flags are keywords "
                              "here: pnorm(..., lower_tail=False, log_p=True)")
    with pytest.raises(TypeError) as err:
        nmath.pnorm(1.0, lowertail=False)
    assert str(err.value) == (f"{sig}: got an unexpected keyword argument 'lowertail' (did you "
                              "mean lower_tail?)")
    with pytest.raises(TypeError, match=r"^qbeta\(p, shape1, .*missing a required argument"):
        nmath.qbeta()
    # R's pchisq(3, 4, 0) is ncp = 0, not lower_tail = 0: the hint names ncp (following the
    # flags' hint gave the upper tail, another value, silently)
    with pytest.raises(TypeError) as err:
        nmath.pchisq(3.0, 4.0, 0)
    assert str(err.value) == (
        "pchisq(q, df, *, lower_tail=True, log_p=False, ncp=None): too many positional "
        "arguments; R's pchisq takes ncp next by position: pass it by name, pchisq(..., ncp=0) "
        "(R's flags are keywords here: lower_tail=, log_p=)")
    assert nmath.pchisq(3.0, 4.0, ncp=0) == pytest.approx(0.44217459962892536, rel=1e-14)
    with pytest.raises(TypeError, match=r"R's dnbinom takes mu next by position: pass it by "
                       r"name, dnbinom\(\.\.\., mu=2\)"):
        nmath.dnbinom(3, 5, 0.5, 2)


def test_dask_in_dask_out():
    import dask.array as da
    x = da.from_array(np.linspace(-3, 3, 101), chunks=25)
    lazy = nmath.pnorm(x, np.array(0.5), 2.0, lower_tail=False)
    assert isinstance(lazy, da.Array) and lazy.chunks == x.chunks
    np.testing.assert_array_equal(lazy.compute(scheduler="sync"),
                                  nmath.pnorm(np.linspace(-3, 3, 101), 0.5, 2.0, lower_tail=False))
    grid = nmath.dnorm(x[:, None], da.from_array(np.linspace(0, 1, 8), chunks=4)[None, :])
    assert grid.shape == (101, 8)
    np.testing.assert_array_equal(
        grid.compute(scheduler="threads"),
        nmath.dnorm(np.linspace(-3, 3, 101)[:, None], np.linspace(0, 1, 8)[None, :]),
    )


def test_a_host_copy_is_cut_into_parts_of_a_megabyte_at_least(monkeypatch):
    """Staging copies hand each part to a thread, which costs tens of microseconds: a copy is
    cut into at most as many parts as it has megabytes (2^17 doubles), the bits unchanged."""
    import concurrent.futures

    from daskcl.kernels import _transfer

    class Pool:
        calls = 0

        def submit(self, f, *args):
            self.calls += 1
            f(*args)
            done = concurrent.futures.Future()
            done.set_result(None)
            return done

    pool = Pool()
    monkeypatch.setitem(_transfer._copiers, 8, pool)
    for n, parts in ((1 << 17, 0), ((1 << 18) - 1, 0), (1 << 18, 2), (3 << 17, 3),
                     (1 << 22, 8)):
        pool.calls = 0
        src = np.arange(n, dtype=np.float64)
        dst = np.empty_like(src)
        _transfer.copy_parallel(dst, src, 8)
        assert pool.calls == parts, n
        np.testing.assert_array_equal(dst, src)


@pytest.mark.parametrize("how", ["pinned", "direct"])
def test_a_large_host_input_of_a_device_call_goes_through_pinned_staging(monkeypatch, how):
    """A NumPy input beside a device array is uploaded whole; above 1 MB on a device with its
    own memory it goes through pinned staging (a buffer made from its contents was slow on
    NVIDIA), the same bits either way; ``direct`` keeps the driver's copy."""
    import pyopencl.array as cla

    from daskcl.kernels import _transfer

    rng = np.random.default_rng(3)
    n = (1 << 17) + 3                               # just over 1 MB
    q, sd = rng.normal(0, 3, n), rng.uniform(0.5, 2.0, n)
    want = nmath.pnorm(q, 1.0, sd)
    sd_dev = cla.to_device(device.current().queue, sd)
    monkeypatch.setattr(_transfer, "mode", lambda bound: how)
    staged = []
    real_copy = _transfer.copy_parallel
    monkeypatch.setattr(_transfer, "copy_parallel",
                        lambda d, s, t: staged.append(s.size) or real_copy(d, s, t))
    got = nmath.pnorm(q, 1.0, sd_dev)
    assert isinstance(got, cla.Array)
    np.testing.assert_array_equal(got.get().view(np.int64), want.view(np.int64))
    assert staged == ([n] if how == "pinned" else [])


def test_a_piece_keeps_its_upload_and_kernel_events_until_it_is_drained(monkeypatch):
    """The events of a piece's uploads and kernels live until the piece is drained: NVIDIA's
    OpenCL returns from releasing the event of a copy or kernel still running only once it has
    finished, and pyopencl releases it holding the interpreter's lock (an upload's dropped
    event stopped every thread of the process for its DMA)."""
    import pyopencl as cl

    from daskcl.kernels import _transfer

    rng = np.random.default_rng(5)
    n = 5 * 1000 + 17
    q, sd = rng.normal(0, 3, n), rng.uniform(0.5, 2.0, n)
    want = nmath.pnorm(q, 1.0, sd)
    monkeypatch.setattr(_transfer, "mode", lambda bound: "pinned")
    monkeypatch.setattr(_transfer, "SLAB", 1000)
    monkeypatch.setattr(_plan, "RESIDENT_BYTES", 4000)      # q and sd streamed
    held = []
    real_drain = _transfer._drain

    def drain(slot, *timed):
        events = []
        for e in slot.held:
            events += e if isinstance(e, list) else [e]
        held.append(events)
        real_drain(slot, *timed)
        assert slot.held == []

    monkeypatch.setattr(_transfer, "_drain", drain)
    got = nmath.pnorm(q, 1.0, sd)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    pieces = [h for h in held if h]
    assert len(pieces) == 6                      # six pieces of at most 1000
    # two uploads (q, sd) and the kernel of each piece
    assert all(len(h) == 3 and all(isinstance(e, cl.Event) for e in h) for h in pieces)


def test_streamed_pieces_are_slabs_or_a_quarter_of_a_smaller_call():
    """A streamed call's pieces: 2^23 elements, or a quarter of a call of fewer than four
    slabs, down to 2^22 (so a call of a few slabs still overlaps its copies and kernels)."""
    from daskcl.kernels import _transfer

    assert _transfer.slab(1 << 27) == 1 << 23
    assert _transfer.slab(1 << 25) == 1 << 23
    assert _transfer.slab(3 << 23) == 3 << 21
    assert _transfer.slab(1 << 23) == 1 << 22
    assert _transfer.slab(3 << 22) == 1 << 22
    assert _transfer.slab(100) == 1 << 22


@pytest.mark.parametrize("how, threads", [("direct", 1), ("pinned", 0), ("pinned", 1),
                                          ("pinned", 3), ("staged", 3)])
def test_streamed_paths_equal_the_host_path(monkeypatch, how, threads):
    """The streamed path of devices with their own memory (slots of queues, pieces of SLAB
    elements; pageable uploads, inputs staged through pinned memory by 1 or 3 threads, pinned
    inputs by DMA as they are, pinned results, staged results) gives the bits of the in-place
    CPU path, for calls whose size is not a multiple of the piece."""
    from daskcl import config
    from daskcl.kernels import _transfer

    rng = np.random.default_rng(7)
    n = 5 * 1000 + 17
    q = rng.normal(0, 3, n)
    sd = rng.uniform(0.5, 2.0, n)
    want = nmath.pnorm(q, 1.0, sd, log_p=True)
    grid_want = nmath.pbeta(np.linspace(0, 1, 300)[:, None], np.linspace(0.5, 9, 41), 2.5)
    again_want = nmath.qnorm(want, 1.0, sd, log_p=True)
    monkeypatch.setattr(_transfer, "SLAB", 1000)
    monkeypatch.setattr(_transfer, "PIN_MIN_BYTES", 1024)
    monkeypatch.setattr(_plan, "RESIDENT_BYTES", 4000)   # the 41 shapes resident, x streamed
    monkeypatch.setattr(_transfer, "_PAR_COPY_MIN", 64)  # pieces of 1000 copied in 3 parts
    mode = how
    copies = []
    real_copy = _transfer.copy_parallel
    monkeypatch.setattr(_transfer, "copy_parallel",
                        lambda d, s, t: copies.append((s.size, t)) or real_copy(d, s, t))
    calls = []
    real = _transfer._stream_device
    monkeypatch.setattr(_transfer, "_stream_device", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(_transfer, "mode", lambda bound: mode)
    with config.set({"transfer.mode": mode, "transfer.threads": threads}):
        got = nmath.pnorm(q, 1.0, sd, log_p=True)
        grid = nmath.pbeta(np.linspace(0, 1, 300)[:, None], np.linspace(0.5, 9, 41), 2.5)
        with pytest.warns(RuntimeWarning, match="dnorm: 3 NaN"):
            nan = nmath.dnorm(q, np.array([0.0]), np.where(np.arange(n) % 2000 == 0, -1.0, 1.0))
        staged = len(copies)
        again = nmath.qnorm(got, 1.0, sd, log_p=True)     # a pinned result as an input
    assert calls
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(grid, grid_want)
    np.testing.assert_array_equal(again, again_want)
    assert np.isnan(nan).sum() == 3
    assert _pinned(got) == (how == "pinned")
    # staged copies: pnorm's q and sd in 6 pieces each, dnorm's q and its sd in 6 each; on a CPU
    # device every host input is streamed (pbeta's x and shape in 13 pieces, dnorm's mean in
    # 6), elsewhere those small ones are uploaded whole, pbeta's x (2400 bytes, above
    # PIN_MIN_BYTES) through staging; in staged mode also each piece's result (6 + 13 + 6);
    # then qnorm: in pinned mode only sd (the pinned result goes by DMA as it is), in staged
    # mode both inputs and the result
    assert all(t == threads for _, t in copies)
    first = 56 if device.current().info.type == "CPU" else 25
    if how == "direct" or threads == 0:
        assert copies == []
    elif how == "pinned":
        assert (staged, len(copies) - staged) == (first, 6)
    elif how == "staged":
        assert (staged, len(copies) - staged) == (first + 25, 18)


def _pinned(a: np.ndarray) -> bool:
    """Whether ``a`` lies in memory handed out by daskcl's pinned pool (a ctypes exporter)."""
    import ctypes

    base: object = a
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    while isinstance(base, memoryview):
        base = base.obj
    return isinstance(base, ctypes.Array)


def test_a_failing_piece_stops_the_stream_and_frees_its_slots(monkeypatch):
    """A piece that fails stops the other slots after their current piece; the error reaches
    the caller, and the next streamed call has the slots to itself and gives every value."""
    import pyopencl as cl

    from daskcl.kernels import _transfer

    monkeypatch.setattr(_transfer, "mode", lambda bound: "pinned")
    bound = device.current()
    src = np.arange(10_000, dtype=np.float64)

    def pieces() -> list[_transfer.Piece]:
        return [_transfer.Piece([(a, min(a + 1000, src.size))], [(a, min(a + 1000, src.size))], k)
                for k, a in enumerate(range(0, src.size, 1000))]

    launched = []

    def launch(p: _transfer.Piece, ins: list, outs: list, queue: object) -> None:
        launched.append(p.arg)
        if p.arg == 4 and fail:
            raise RuntimeError("piece 4 failed")
        n = p.ins[0][1] - p.ins[0][0]
        cl.enqueue_copy(queue, outs[0], ins[0], byte_count=n * 8)

    fail = True
    out = np.zeros_like(src)
    with pytest.raises(RuntimeError, match="piece 4 failed"):
        _transfer.stream(bound, pieces(), [src], [out], launch)
    assert 4 in launched and 7 not in launched      # piece 4's slot ran no further piece
    fail = False
    out = np.zeros_like(src)
    _transfer.stream(bound, pieces(), [src], [out], launch)
    np.testing.assert_array_equal(out, src)


def test_calls_one_after_another_reuse_the_first_slot_and_its_staging(monkeypatch):
    """A call of one piece takes the lowest free slot: calls one after another use slot 0 and
    its buffers, and only the first makes pinned staging (each took the next slot before,
    and three calls made three slots' buffers)."""
    from daskcl.kernels import _transfer

    monkeypatch.setattr(_transfer, "mode", lambda bound: "pinned")
    # one piece a call: not cut by the measured pace of a slow (CPU) device
    monkeypatch.setattr(_plan, "measured_cap", lambda k, bound: None)
    made: list[int] = []
    real_new = _transfer.PinnedPool._new
    monkeypatch.setattr(_transfer.PinnedPool, "_new",
                        lambda self, size: made.append(size) or real_new(self, size))
    used: list[int] = []
    real_piece = _transfer._piece

    def piece(bound, s, *a, **k):
        used.append(_transfer._slots(bound).index(s))
        return real_piece(bound, s, *a, **k)

    monkeypatch.setattr(_transfer, "_piece", piece)
    x = np.random.default_rng(3).normal(size=300_000)
    want = nmath.pnorm(x)
    nmath.pnorm(x)
    first = len(made)
    for _ in range(4):
        np.testing.assert_array_equal(nmath.pnorm(x), want)
    assert used == [0] * 6
    assert len(made) == first


def test_calls_of_several_threads_stream_on_slots_of_their_own(monkeypatch):
    """Streamed calls of several threads at once (a dask array's chunks) each take slots of
    their own, so that their copies and kernels overlap: two one-piece calls launch at the same
    time on two queues (with one call at a time, the second never reaches its launch while
    the first waits for it); a call of many pieces started while they hold two slots runs on
    the third alone, copying its small inputs on its own thread; every value arrives; and
    afterwards a call has every slot again, and copies in parts."""
    import threading

    import pyopencl as cl

    from daskcl import config
    from daskcl.kernels import _transfer

    monkeypatch.setattr(_transfer, "mode", lambda bound: "pinned")
    bound = device.current()
    both = threading.Barrier(3, timeout=20)   # the two calls and this thread
    phase = {"now": ""}
    copies: dict[str, list[int]] = {"beside": [], "alone": []}
    real_copy = _transfer.copy_parallel

    def copy(dst: np.ndarray, src: np.ndarray, nthreads: int) -> None:
        if phase["now"]:
            copies[phase["now"]].append(nthreads)
        real_copy(dst, src, nthreads)

    monkeypatch.setattr(_transfer, "copy_parallel", copy)
    queues_of: dict[str, set] = {"a": set(), "b": set(), "c": set()}
    c_done = threading.Event()

    def stream(name: str, n: int, piece: int) -> np.ndarray:
        src = np.arange(n, dtype=np.float64) + {"a": 0.25, "b": 0.5, "c": 0.75}[name]
        out = np.zeros_like(src)

        def launch(p: _transfer.Piece, ins: list, outs: list, queue: object) -> None:
            queues_of[name].add(queue)
            if name != "c":
                both.wait()                   # both one-piece calls are in their launch
                c_done.wait(20)               # and stay, holding their slots, until c is done
            k = p.ins[0][1] - p.ins[0][0]
            cl.enqueue_copy(queue, outs[0], ins[0], byte_count=k * 8)

        pieces = [_transfer.Piece([(a, min(a + piece, n))], [(a, min(a + piece, n))])
                  for a in range(0, n, piece)]
        _transfer.stream(bound, pieces, [src], [out], launch)
        np.testing.assert_array_equal(out, src)
        return out

    with config.set({"transfer.threads": 3}), \
            concurrent.futures.ThreadPoolExecutor(2) as ex:
        a = ex.submit(stream, "a", 3000, 3000)
        b = ex.submit(stream, "b", 2000, 2000)
        both.wait()
        phase["now"] = "beside"
        stream("c", 9000, 1000)               # 9 pieces on the one slot left
        phase["now"] = ""
        c_done.set()
        a.result(), b.result()
        assert len(queues_of["a"] | queues_of["b"]) == 2 and len(queues_of["c"]) == 1
        assert not (queues_of["c"] & (queues_of["a"] | queues_of["b"]))
        # afterwards one call has all three slots
        queues_of["c"].clear()
        phase["now"] = "alone"
        stream("c", 9000, 1000)
        phase["now"] = ""
    assert len(queues_of["c"]) == _transfer.SLOTS
    # beside other calls, small inputs are copied on the piece's thread; alone, in parts
    assert copies == {"beside": [1] * 9, "alone": [3] * 9}
    assert _transfer._copy_threads(3, _transfer.ALONE_COPY_MAX + 1) == 3


def test_the_slot_threads_are_all_started_with_their_pool(monkeypatch):
    """The slots' threads exist before any call submits to them: a pool that started a thread
    at a call's ``submit`` kept the call there while its other slots ran, and Ctrl-C raised
    there left those slots running the rest of the call."""
    from daskcl.kernels import _transfer

    bound = device.current()
    monkeypatch.setattr(bound.resources, "slot_threads", None)
    ex = _transfer._slot_threads(bound)
    try:
        assert ex is _transfer._slot_threads(bound)
        threads = list(ex._threads)
        assert len(threads) == _transfer.SLOTS and all(t.is_alive() for t in threads)
        # work submitted now runs on those threads: no new one is started
        seen = {f.result() for f in [ex.submit(threading.get_ident) for _ in range(12)]}
        assert seen <= {t.ident for t in threads} and len(ex._threads) == _transfer.SLOTS
    finally:
        ex.shutdown()


def test_a_reused_status_counts_from_zero_with_nothing_run_before_the_launches():
    """The counts of a call start at zero on a reused status buffer, with no command run on the
    device before the call's launches: a zeroing on the device's queue did not order the
    launches of the slots' queues (on an H200 some calls lost their NaN counts, and R's
    warning, to a zeroing that ran after them), so a reading counts from the last one.  Here
    the device's queue is held by a long kernel while the reused buffer is read through
    another queue, and the buffer's int32 counts wrap."""
    import pyopencl as cl

    from daskcl.kernels import _transfer

    bound = device.current()
    status = _transfer.status_buffer(bound)      # new, or with earlier calls' counts in it
    status.read(bound.queue)
    raw = np.empty(_transfer.STATUS_COUNTS, dtype=np.uint32)
    cl.enqueue_copy(bound.queue, raw, status.buffer, is_blocking=True)
    # five NaNs, 2^31 - 1 non-integers and one argument out of range counted since
    cl.enqueue_copy(bound.queue, status.buffer,
                    raw + np.array([5, 2**31 - 1, 1], dtype=np.uint32), is_blocking=True)
    assert status.read(bound.queue).tolist() == [5, 2**31 - 1, 1]
    _transfer.release_status(bound, status)
    other = cl.CommandQueue(bound.context)
    queues.hold(bound.queue)
    try:
        reused = _transfer.status_buffer(bound)
        assert reused is status
        assert reused.read(other).tolist() == [0, 0, 0]
        # two more NaNs, three more non-integers: the buffer's int32 counts wrap
        raw = raw + np.array([7, 2**31 + 2, 1], dtype=np.uint32)
        cl.enqueue_copy(other, reused.buffer, raw, is_blocking=True)
        assert reused.read(other).tolist() == [2, 3, 0]
    finally:
        bound.queue.finish()
    _transfer.release_status(bound, reused)
