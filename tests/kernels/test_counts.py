# SPDX-License-Identifier: GPL-2.0-or-later
"""The Wilcoxon and signed-rank rows: count tables on the device (daskcl/_counts.py).

Agreement with R is in tests/rcases/wilcoxon.py; here: exact counts, broadcasting of the
parameters, the limits and their errors, the table cache, dask."""

from __future__ import annotations

import math

import numpy as np
import pytest

from daskcl import nmath
from daskcl.kernels import _counts


def exact_wilcox(m: int, n: int) -> list[int]:
    """c(k; m, n), k = 0..mn, by the q-Pascal recurrence in Python integers."""
    rows = [[1] + [0] * (m * n) for _ in range(n + 1)]   # G(0, j) = 1
    for _i in range(1, m + 1):
        new = [[1] + [0] * (m * n)]                       # G(i, 0) = 1
        for j in range(1, n + 1):
            # G(i, j)[k] = G(i, j-1)[k] + G(i-1, j)[k - j]
            prev, up = new[j - 1], rows[j]
            new.append([prev[k] + (up[k - j] if k >= j else 0) for k in range(m * n + 1)])
        rows = new
    return rows[n]


def exact_signrank(n: int) -> list[int]:
    w = [1] + [0] * (n * (n + 1) // 2)
    for j in range(1, n + 1):
        w = [w[k] + (w[k - j] if k >= j else 0) for k in range(len(w))]
    return w


@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 8), (8, 3), (12, 12), (20, 7)])
def test_wilcox_counts_are_exact(m, n):
    counts = exact_wilcox(m, n)
    total = math.comb(m + n, n)
    got = nmath.dwilcox(np.arange(m * n + 1), m, n)
    want = np.array([c / total for c in counts])
    np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)
    cum = np.cumsum([c / total for c in counts])
    np.testing.assert_allclose(nmath.pwilcox(np.arange(m * n), m, n), cum[:-1], rtol=1e-14)


def test_wilcox_large_counts_exact_to_rounding():
    # counts up to 1e28: the device counts exactly in 64-bit limbs and rounds once
    m = n = 48
    counts = exact_wilcox(m, n)
    total = math.comb(m + n, n)
    x = np.array([0, 100, 700, 1151, 1152])
    got = nmath.dwilcox(x, m, n)
    want = np.array([counts[k] / total for k in x])
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.r
def test_small_tables_on_both_sides_of_a_large_one_in_one_call():
    """A call whose sorted parameters put a large table between small ones: the small ones
    were built a launch group at a time over a run of keys that passed over the large one, so
    the keys after it were never built (dwilcox gave -Inf, pwilcox 1e-269, qwilcox 474 where R
    gives 505) and the large one was built over the group's scratch.  Each run of small keys
    is its own group now; the values are those of each parameter alone, and R's."""
    from support.rmath_oracle import r_eval

    m, n = np.array([100.0, 100.0, 101.0, 7.0, 120.0, 9.0]), np.array([10.0, 200, 10, 3, 150, 2])
    x = np.array([5.0, 5, 5, 4, 9000, 6])
    assert _counts.work("wilcox", (100.0, 200.0)) > _counts.SMALL_WORK >= max(
        _counts.work("wilcox", (100.0, 10.0)), _counts.work("wilcox", (101.0, 10.0)))
    d = nmath.dwilcox(x, m, n)
    alone = np.array([nmath.dwilcox(*v) for v in zip(x, m, n)])
    np.testing.assert_array_equal(d, alone)
    np.testing.assert_allclose(d, r_eval("dwilcox", [x, m, n], [0]), rtol=1e-13)
    q = 60 * x
    np.testing.assert_allclose(nmath.pwilcox(q, m, n), r_eval("pwilcox", [q, m, n], [1, 0]),
                               rtol=1e-13)
    np.testing.assert_array_equal(nmath.qwilcox(0.5, m, n),
                                  r_eval("qwilcox", [0.5, m, n], [1, 0]))


@pytest.mark.parametrize("n", [1, 2, 5, 17, 40])
def test_signrank_counts_are_exact(n):
    counts = exact_signrank(n)
    got = nmath.dsignrank(np.arange(len(counts)), n)
    # R's density is exp(log(count) - n log 2): a few ulps from count / 2^n
    np.testing.assert_allclose(got, [c / 2**n for c in counts], rtol=1e-14, atol=0)
    cum = np.cumsum([c / 2**n for c in counts])
    np.testing.assert_allclose(nmath.psignrank(np.arange(len(counts) - 1), n), cum[:-1],
                               rtol=1e-14)


def test_parameters_broadcast_along_different_axes():
    x = np.arange(0.0, 30.0)
    m = np.array([2.0, 3.0, 5.0])[:, None, None]
    n = np.array([1.0, 4.0, 6.0, 7.0])[None, :, None]
    got = nmath.pwilcox(x, m, n)
    assert got.shape == (3, 4, 30)
    for i, mi in enumerate([2, 3, 5]):
        for j, nj in enumerate([1, 4, 6, 7]):
            np.testing.assert_array_equal(got[i, j], nmath.pwilcox(x, mi, nj))


def test_parameters_elementwise_arrays_and_rounding():
    m = np.array([3.4, 2.6, 7.0, 1.0])        # rounded as R rounds: 3, 3, 7, 1
    n = np.array([5.0, 4.5, 2.0, 9.0])        # 5, 4 (half to even), 2, 9
    got = nmath.qwilcox(0.5, m, n)
    want = [float(nmath.qwilcox(0.5, a, b)) for a, b in [(3, 5), (3, 4), (7, 2), (1, 9)]]
    np.testing.assert_array_equal(got, want)


def test_invalid_parameters_give_nan_with_warning():
    with pytest.warns(RuntimeWarning, match="dwilcox: 3 NaN"):
        out = nmath.dwilcox(1.0, np.array([0.0, -1.0, 2.0, 0.4]), 3.0)
    assert np.isnan(out[[0, 1, 3]]).all() and out[2] > 0
    with pytest.warns(RuntimeWarning, match="psignrank: 2 NaN"):
        out = nmath.psignrank(3.0, np.array([np.inf, 0.0, 4.0]))
    assert np.isnan(out[:2]).all()


def test_qsignrank_where_r_never_ends_is_nan_with_warning():
    """From n = 1075, 2^-n underflows and no cumulative sum reaches p: R's qsignrank steps on
    for ever (it hangs).  daskcl gives NaN with R's warning there, and R's own values below
    (n = 1074, where the counts overflow but the search ends)."""
    with pytest.warns(RuntimeWarning, match="qsignrank: 3 NaN"):
        out = nmath.qsignrank(np.array([0.1, 0.5, 0.9, 0.5]), np.array([1075.0, 1100.0, 1075.0,
                                                                         10.0]))
    assert np.isnan(out[:3]).all() and out[3] == 27.0
    with pytest.warns(RuntimeWarning, match="qsignrank: 1 NaN"):
        assert np.isnan(nmath.qsignrank(-0.7, 1080.0, lower_tail=False, log_p=True))
    # R 4.2.2's values at n = 1074 (libRmath; its search ends at the counts' overflow)
    assert nmath.qsignrank(np.array([0.1, 0.5, 0.9]), 1074.0).tolist() == [217879.0, 217879.0,
                                                                            359396.0]


def test_qhyper_beyond_its_longest_walk_is_nan_with_warning():
    """qhyper walks a unit of x a step from the support's lower end, as R does: at r = b = n =
    1e12 that is 5e11 steps (R runs for hours, and a launch cannot be stopped in its middle).
    Beyond 2^27 steps daskcl stops with NaN and R's warning; below, R's values (libRmath:
    qhyper(0.5, 1e7, 1e7, 1e7) = 5e6, 5e6 steps; qhyper(0.3, 1e9, 1e12, 1e9) = 998 477, the
    walk from 0 is short although the support holds 1e9 + 1 values)."""
    with pytest.warns(RuntimeWarning, match="qhyper: 1 NaN"):
        out = nmath.qhyper(np.array([0.5, 0.3]), np.array([1e12, 1e9]), np.array([1e12, 1e12]),
                           np.array([1e12, 1e9]))
    assert np.isnan(out[0])
    assert out[1] == 998477.0
    assert nmath.qhyper(0.5, 1e7, 1e7, 1e7) == 5e6
    # where the ratio of two terms overflowed (beyond 1e308) the walk stopped at its first step
    # with 1, silently; its logarithm is now two, and the walk runs to the cap as at 1e150
    with pytest.warns(RuntimeWarning, match="qhyper: 2 NaN"):
        assert np.isnan(nmath.qhyper(0.3, np.array([1e150, 1e160]), 1e160, 1e160)).all()


def test_limits_raise_clear_errors():
    with pytest.raises(ValueError, match=r"pwilcox: m = 515, n = 515 .*choose\(m \+ n, n\)"):
        nmath.pwilcox(1.0, 515.0, 515.0)
    with pytest.raises(ValueError, match=r"psignrank: n = 8192 .* n <= 8191"):
        nmath.psignrank(1.0, 8192.0)
    with pytest.raises(ValueError, match=r"dwilcox: m = 20, n = 3e\+06 .*limit"):
        nmath.dwilcox(1.0, 20.0, 3e6)
    with pytest.raises(ValueError, match="split the call"):
        nmath.dsignrank(1.0, np.arange(2000.0, 2300.0))
    # the largest sizes still work
    assert 0 < float(nmath.psignrank(10.0, 600.0)) < 1e-100
    assert float(nmath.pwilcox(2e6, 2.0, 2e6)) == pytest.approx(0.5, rel=1e-6)


def test_tables_are_cached_per_parameter_set():
    _counts._cache.entries.clear()
    nmath.dsignrank(np.arange(5.0), 9.0)
    assert len(_counts._cache.entries) == 1
    tables = next(iter(_counts._cache.entries.values()))
    nmath.psignrank(np.arange(5.0), 9.0)
    assert len(_counts._cache.entries) == 1
    assert next(iter(_counts._cache.entries.values())) is tables
    nmath.dsignrank(np.arange(5.0), 10.0)
    assert len(_counts._cache.entries) == 2


def test_empty_and_nan_only_calls():
    assert nmath.dwilcox(np.empty(0), 3.0, 4.0).shape == (0,)
    assert np.isnan(nmath.dwilcox(1.0, np.nan, 4.0))


def test_dask_arrays():
    import dask.array as da
    x = da.from_array(np.arange(0.0, 25.0), chunks=7)
    got = nmath.pwilcox(x, 4.0, 6.0).compute()
    np.testing.assert_array_equal(got, nmath.pwilcox(np.arange(0.0, 25.0), 4.0, 6.0))


def test_work_space_beyond_one_buffer_raises(monkeypatch):
    # m = n = 60: a table of 5404 words, a work space of 7204 (two limbs per count)
    assert _counts.table_sizes("wilcox", (60.0, 60.0)) == (5404, 7204)
    _counts._cache.entries.clear()
    monkeypatch.setattr(_counts, "_device_limit", lambda bound: 6000)
    with pytest.raises(ValueError, match=r"pwilcox: m = 60, n = 60 needs .* work space of 7204"
                                         r" .* at most 6000"):
        nmath.pwilcox(1.0, 60.0, 60.0)
    assert not _counts._cache.entries


def test_work_space_of_many_parameters_in_pieces(monkeypatch):
    # five parameters whose tables fit the limit together and whose work spaces do not: the
    # work space is allocated once, for the largest piece, and reused
    q = np.arange(0.0, 3700.0, 37.0)[:, None]
    n = np.arange(57.0, 62.0)
    _counts._cache.entries.clear()
    want = nmath.pwilcox(q, 60.0, n)
    limit = 30000
    sizes = [_counts.table_sizes("wilcox", (60.0, float(k))) for k in n]
    assert sum(t for t, _ in sizes) <= limit < sum(s for _, s in sizes)
    allocated = []
    buffer = _counts._buffer

    def spy(ctx, flags, words, hostbuf=None):
        allocated.append(words)
        return buffer(ctx, flags, words, hostbuf)

    monkeypatch.setattr(_counts, "_device_limit", lambda bound: limit)
    monkeypatch.setattr(_counts, "_buffer", spy)
    _counts._cache.entries.clear()
    got = nmath.pwilcox(q, 60.0, n)
    assert allocated and max(allocated) <= limit
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("fn", "params", "in_place"), [
    ("psignrank", (300.0,), False), ("psignrank", (300.0,), True), ("pwilcox", (30.0, 90.0), False)])
def test_large_tables_are_built_in_bounded_batches(monkeypatch, fn, params, in_place):
    # tables above SMALL_WORK are built by a launch per step (on CPU devices the signed-rank
    # steps in place, a run of steps per launch); the host waits for the device and reaches
    # the interruption point after every batch of BATCH_WORK operations or less
    f = getattr(nmath, fn)
    monkeypatch.setattr(_counts, "signrank_in_place", lambda bound: in_place)
    monkeypatch.setattr(_counts, "SEQ_WORK", 1 << 12)
    q = np.linspace(0.0, 0.6 * math.prod(params) * (1 if fn == "pwilcox" else 151), 50)
    _counts._cache.entries.clear()
    want = f(q, *params)            # one work-group per table
    calls = []
    launches = []
    monkeypatch.setattr(_counts, "SMALL_WORK", 1000)
    monkeypatch.setattr(_counts, "BATCH_WORK", 1 << 12)
    monkeypatch.setattr(_counts, "BATCH_SECONDS", 1e9)   # the budget only grows (doubling)
    monkeypatch.setattr(_counts, "_checkpoint", lambda: calls.append(1))
    launch = _counts._Launches.__call__

    def count(self, built, name, args, items, wg, work):
        launches.append(name)
        return launch(self, built, name, args, items, wg, work)

    monkeypatch.setattr(_counts._Launches, "__call__", count)
    _counts._cache.entries.clear()
    got = f(q, *params)
    np.testing.assert_array_equal(got, want)
    if in_place:       # steps 2..300 in runs of at most SEQ_WORK entries each
        assert sum(name.endswith("_seq") for name in launches) >= 10
        assert not any(name.endswith("_step") for name in launches)
    else:
        assert sum(name.endswith("_step") for name in launches) == params[0] - (fn == "psignrank")
    assert len(calls) >= 5


def test_interrupted_build_caches_nothing(monkeypatch):
    calls = []

    def interrupt():
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt

    _counts._cache.entries.clear()
    want = nmath.psignrank(np.arange(0.0, 40000.0, 97.0), 400.0)
    _counts._cache.entries.clear()
    monkeypatch.setattr(_counts, "SMALL_WORK", 1000)
    monkeypatch.setattr(_counts, "BATCH_WORK", 1 << 12)
    monkeypatch.setattr(_counts, "BATCH_SECONDS", 1e9)
    monkeypatch.setattr(_counts, "_checkpoint", interrupt)
    with pytest.raises(KeyboardInterrupt):
        nmath.psignrank(np.arange(0.0, 40000.0, 97.0), 400.0)
    assert len(calls) == 3 and not _counts._cache.entries
    monkeypatch.setattr(_counts, "_checkpoint", lambda: None)
    np.testing.assert_array_equal(nmath.psignrank(np.arange(0.0, 40000.0, 97.0), 400.0), want)


def test_warm_builds_the_count_table_program_too():
    """Warming a function that calls a count table builds the tables' program as well, so that
    the first call builds no program (only its table)."""
    from daskcl.runtime import program

    program.clear_memory_cache()
    nmath.pwilcox.warm()
    before = dict(program.stats)
    assert nmath.pwilcox(3.0, 4.0, 5.0) == pytest.approx(1 / 18, rel=1e-13)   # R: 0.0555...56
    assert (program.stats["source"], program.stats["disk"]) == (before["source"], before["disk"])
