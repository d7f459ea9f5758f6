# SPDX-License-Identifier: GPL-2.0-or-later
"""The prepared launches (daskcl.kernels._launch): the same bits as the general path on every
call path, R's warnings where the documentation says, the cache started again by a change of
the configuration or of the library."""

from __future__ import annotations

import textwrap
import threading
import warnings

import dask.array as da
import numpy as np
import pyopencl.array as cla
import pytest

import daskcl
from daskcl import ElementwiseKernel, nmath
from daskcl.errors import LibraryError, collect_r_warnings
from daskcl.kernels import _launch
from daskcl.runtime import device
from daskcl.runtime.library import get_library


@pytest.fixture
def queue():
    return device.current().queue


def same(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def strided(a: np.ndarray) -> np.ndarray:
    """The values of ``a`` in a view that the prepared launch does not take (the general path)."""
    return np.repeat(a, 2)[::2]


def messages(seen) -> list[str]:
    return [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)]


@pytest.fixture(autouse=True)
def nothing_pending():
    daskcl.synchronize()      # what earlier tests left, said before this one records
    yield


@pytest.mark.parametrize("binning", ["0", "1"])
def test_prepared_calls_give_the_general_paths_bits(queue, binning, monkeypatch):
    """With launches sorted by class (binning on) or not: the small, device, streamed and dask
    paths give the general path's bits."""
    monkeypatch.setenv("DASKCL_BINNING", binning)
    r = np.random.default_rng(3)
    x = r.normal(0, 3, 777)
    x[::41] = np.nan
    p = r.uniform(-0.1, 1.1, 777)
    a, b = r.uniform(0.3, 20, 777), r.uniform(0.3, 20, 777)
    cases = [(nmath.pnorm, (x,)), (nmath.pnorm, (x, 1.5, 2.0)), (nmath.qnorm, (p, 0.0, 3.0)),
             (nmath.pgamma, (np.abs(x), a)), (nmath.pbeta, (p, a, b)), (nmath.qbeta, (p, a, 2.5)),
             (nmath.pt, (x, 0.7))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for f, args in cases:
            general = f(*[strided(v) if isinstance(v, np.ndarray) else v for v in args])
            assert same(f(*args), general), f.__name__                     # small, from NumPy
            for few in (1, 20, 40):         # 20: too few to sort
                assert same(f(*[v[:few] if isinstance(v, np.ndarray) else v for v in args]),
                            general[:few])
                assert same(f(*[cla.to_device(queue, v[:few]) if isinstance(v, np.ndarray)
                                else v for v in args]).get(), general[:few])
            on_dev = f(*[cla.to_device(queue, v) if isinstance(v, np.ndarray) else v
                         for v in args])
            assert same(on_dev.get(), general), f.__name__                 # on the device
            big = [np.tile(v, 30) if isinstance(v, np.ndarray) else v for v in args]
            assert same(f(*big), np.tile(general, 30))                     # streamed
            chunked = [da.from_array(v, chunks=100) if isinstance(v, np.ndarray) else v
                       for v in args]
            assert same(f(*chunked).compute(), general), f.__name__        # dask
        scalar = nmath.pnorm(0.5, 0.0, 1.0, lower_tail=False, log_p=True)
        assert isinstance(scalar, np.float64)
        assert same(scalar, nmath.pnorm(np.array([0.5]), 0.0, 1.0, lower_tail=False,
                                        log_p=True)[0])
        assert same(nmath.pnorm(-0.0, -np.inf, 1.0), nmath.pnorm(strided(np.array([-0.0])),
                                                                  -np.inf, 1.0)[0])


def python_calls(f, *args) -> int:
    """Python and C function calls of one call ``f(*args)`` (after one to warm up)."""
    import sys

    f(*args)
    count = [0]

    def seen(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(seen)
    try:
        f(*args)
    finally:
        sys.setprofile(None)
    return count[0] - 1


@pytest.mark.parametrize("binning", ["0", "1"])
def test_a_prepared_call_is_short(queue, binning, monkeypatch):
    """A small call from NumPy and a call on device arrays take at most 80 Python calls, launches
    sorted by class or not."""
    monkeypatch.setenv("DASKCL_BINNING", binning)
    r = np.random.default_rng(4)
    x, a, b = r.uniform(0, 1, 1024), r.uniform(0.5, 20, 1024), r.uniform(0.5, 20, 1024)
    on_dev = [cla.to_device(queue, v) for v in (x, a, b)]
    for f, args in [(nmath.pgamma, (x, a)), (nmath.pbeta, (x, a, b)), (nmath.qbeta, (x, a, b)),
                    (nmath.pbeta, (0.5, 2.0, 3.0))]:
        assert python_calls(f, *args) <= 80, f.__name__
        assert python_calls(f, *on_dev[:len(args)]) <= 80, f.__name__
    queue.finish()


def test_sorted_device_calls_split_at_sort_launch(queue, monkeypatch):
    """A call on device arrays larger than SORT_LAUNCH is sorted and computed in launches of
    at most that many elements, with the bits of one launch."""
    from daskcl.kernels import _plan

    r = np.random.default_rng(8)
    x, a, b = r.uniform(0, 1, 3000), r.uniform(0.5, 20, 3000), r.uniform(0.5, 20, 3000)
    monkeypatch.setenv("DASKCL_BINNING", "64x4")
    whole = nmath.pbeta(*[cla.to_device(queue, v) for v in (x, a, b)]).get()
    monkeypatch.setattr(_plan, "SORT_LAUNCH", 1000)
    cut = nmath.pbeta(*[cla.to_device(queue, v) for v in (x, a, b)]).get()
    assert same(cut, whole) and np.isfinite(whole).all()
    monkeypatch.setenv("DASKCL_BINNING", "0")
    assert same(nmath.pbeta(x, a, b), whole)


def test_device_counts_wait_for_synchronize(queue):
    """A call on device arrays does not wait for R's counts: they add up per function and are
    raised by daskcl.synchronize(), which reads arrays too."""
    p = cla.to_device(queue, np.array([0.5, 2.0, -1.0]))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        y = nmath.qnorm(p)
        y2 = nmath.qnorm(p)
        strided_dev = nmath.qnorm(cla.to_device(queue, np.array([3.0, 0.0, 0.5, 0.0]))[::2])
    assert messages(seen) == []
    with pytest.warns(RuntimeWarning) as got:
        values = daskcl.synchronize(y)
    assert messages(got) == ["qnorm: 5 NaN(s) produced"]
    assert np.array_equal(values, [0.0, np.nan, np.nan], equal_nan=True)
    assert same(y2.get(), values)
    assert np.array_equal(strided_dev.get(), [np.nan, 0.0], equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert daskcl.synchronize() is None          # read once


def test_a_device_chain_warns_at_the_read(queue):
    """qnorm's NaNs in a chain on the device surface when the result is read through daskcl,
    named by the function that produced them (pnorm of a NaN is no new NaN)."""
    p = cla.to_device(queue, np.linspace(-0.5, 1.5, 9))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = nmath.pnorm(nmath.qnorm(p), 1.0, 2.0)
        w = nmath.pchisq(cla.to_device(queue, np.array([1.0, 2.0])), -1.0, ncp=1.0)
    with pytest.warns(RuntimeWarning) as got:
        values, wv = daskcl.synchronize(z, w)
    assert sorted(messages(got)) == ["pchisq: 2 NaN(s) produced", "qnorm: 4 NaN(s) produced"]
    with pytest.warns(RuntimeWarning):
        want = nmath.pnorm(nmath.qnorm(np.linspace(-0.5, 1.5, 9)), 1.0, 2.0)
    assert same(values, want) and np.isnan(wv).all()


def test_a_host_call_raises_the_device_counts_first(queue):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nmath.qnorm(cla.to_device(queue, np.array([2.0])))
    with pytest.warns(RuntimeWarning) as got:
        nmath.qbeta(np.array([0.5, 3.0]), 2.0, 3.0)
    assert messages(got) == ["qnorm: 1 NaN(s) produced", "qbeta: 1 NaN(s) produced"]
    with pytest.warns(RuntimeWarning) as got:          # the general host path too
        nmath.qnorm(cla.to_device(queue, np.array([2.0])))
        nmath.qbeta(strided(np.array([0.5, 3.0])), 2.0, 3.0)
    assert messages(got) == ["qnorm: 1 NaN(s) produced", "qbeta: 1 NaN(s) produced"]


def test_immediate_warnings(queue, monkeypatch):
    monkeypatch.setenv("DASKCL_WARNINGS", "immediate")
    x = cla.to_device(queue, np.array([0.5, 2.0]))
    with pytest.warns(RuntimeWarning, match="qnorm: 1 NaN"):
        nmath.qnorm(x)
    with pytest.warns(RuntimeWarning, match="qnorm: 1 NaN"):
        nmath.qnorm(cla.to_device(queue, np.array([0.5, 0.0, 2.0]))[::2])
    with pytest.warns(RuntimeWarning, match="pnorm: 2 NaN"):
        nmath.pnorm(x, 0.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        daskcl.synchronize()


def test_small_calls_from_threads():
    """Each thread's small calls have their own scratch buffer and counts."""
    r = np.random.default_rng(1)
    errors: list[BaseException] = []
    inputs = [r.uniform(-0.5, 1.5, 50) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        wants = [nmath.qnorm(strided(p)) for p in inputs]

    def work(j: int) -> None:
        try:
            for _ in range(30):
                with collect_r_warnings() as seen:       # per thread
                    got = nmath.qnorm(inputs[j])
                assert same(got, wants[j])
                nans = int(np.isnan(wants[j]).sum())
                assert seen == [f"RuntimeWarning: qnorm: {nans} NaN(s) produced"]
        except BaseException as e:      # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(j,)) for j in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def _prepared_programs(k) -> set[int]:
    return {id(p.program) for p in k.__dict__["_prepared"].by_key.values()}


def test_a_config_change_prepares_again(monkeypatch):
    k = ElementwiseKernel("double x", "double y", "y = x * 3.0 + 1.0;", name="prep_cfg")
    assert k(2.0) == 7.0
    first = _prepared_programs(k)
    assert k(np.array([1.0])) == 4.0 and _prepared_programs(k) == first
    with daskcl.config.set(fp_contract=True):      # another build option: another program
        assert k(2.0) == 7.0
        assert _prepared_programs(k).isdisjoint(first)
    assert k(2.0) == 7.0 and _prepared_programs(k) == first
    monkeypatch.setenv("DASKCL_LIBRARY", "/nonexistent/daskcl-library")
    with pytest.raises((LibraryError, OSError, ValueError)):
        k(2.0)


UNIT = """\
    // SPDX-License-Identifier: GPL-2.0-or-later
    // @provides: prep_const
    // @depends:
    double prep_const(double x) { return x + VALUE; }
    """


def test_a_library_change_prepares_again(tmp_path):
    tree = tmp_path / "units"
    tree.mkdir()
    unit = tree / "prep_const.cl"
    unit.write_text(textwrap.dedent(UNIT).replace("VALUE", "1.0"))
    get_library([str(tree)]).write_index(root=tree)
    k = ElementwiseKernel("double x", "double y", "y = prep_const(x);", name="prep_lib",
                          library=tree)
    assert k(1.0) == 2.0 and k(np.array([1.0]))[0] == 2.0
    unit.write_text(textwrap.dedent(UNIT).replace("VALUE", "10.0"))
    get_library([str(tree)]).write_index(root=tree)
    assert k(1.0) == 11.0 and k(np.array([1.0]))[0] == 11.0


def test_the_prepared_cache_is_per_device_signature():
    k = ElementwiseKernel("double a, double b", "double y", "y = a - b;", name="prep_sig")
    x = np.array([5.0, 6.0])
    assert same(k(x, 1.0), [4.0, 5.0]) and same(k(1.0, x), [-4.0, -5.0])
    assert same(k(x, x), [0.0, 0.0]) and k(3.0, 1.0) == 2.0
    keys = {key for _, key in k.__dict__["_prepared"].by_key}
    assert keys == {((1, 0), 0), ((0, 1), 0), ((1, 1), 0), ((0, 0), 0)}
    assert _launch.SMALL >= 1024
