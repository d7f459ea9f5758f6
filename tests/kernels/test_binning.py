# SPDX-License-Identifier: GPL-2.0-or-later
"""Launches sorted by class (cl/kernels/elementwise.cl): the order of work changes, results do not.

On GPUs the rows with a class function (pbeta, pgamma and the functions built on them) sort the
elements of a launch by the method they take before computing them.  CI has no GPU, so these
tests force the sorted launch on PoCL with ``DASKCL_BINNING`` and compare it bit for bit with the
plain kernel, over inputs that take every method, the edge cases, blocks cut short by the end of
the array, calls split into several sorted launches, and broadcast two-dimensional inputs.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from daskcl import nmath
from daskcl.kernels import _plan
from daskcl.kernels._elementwise import DEFAULT_BINNING, Binning, binning
from daskcl.kernels._nmath_function import NmathFunction
from daskcl.kernels._nmath_table import ROWS

ROW = {fn.name: fn for fn in ROWS}
CLASSIFIED = sorted(fn.name for fn in ROWS if fn.classify)
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -1.0, 1.0, 1e-300, 1e300]


def _inputs(name: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """n draws per argument spread over many decades, with the special values mixed in."""
    fn = ROW[name]
    out = []
    for j, _ in enumerate(fn.arg_names):
        if fn.kind == "q" and j == 0:
            a = rng.uniform(0, 1, n)
        elif name in ("pbeta",) and j == 0:
            a = rng.uniform(0, 1, n)
        elif name in ("pbinom", "pnbinom", "pnbinom_mu", "ppois") and j == 0:
            a = np.floor(np.exp(rng.uniform(-1, 7, n)))
        elif name in ("pbinom", "pnbinom") and j == 2:
            a = rng.uniform(0, 1, n)
        elif name == "pbinom" and j == 1:       # R: a non-integer size is NaN
            a = np.floor(np.exp(rng.uniform(0, 8, n)))
        else:
            a = np.exp(rng.uniform(-6, 7, n))
        a[rng.integers(0, n, n // 50)] = rng.choice(SPECIAL, n // 50)
        out.append(a)
    return out


def _call(name: str, args: list[np.ndarray], **flags: bool) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(nmath, name)(*args, **flags))


@pytest.mark.parametrize("name", CLASSIFIED)
def test_grouped_kernel_gives_the_plain_results(name, monkeypatch):
    rng = np.random.default_rng(sum(map(ord, name)))
    args = _inputs(name, 20_011, rng)          # not a multiple of any block
    keys = [py for py, _ in ROW[name].flags]
    for values in [(True, False), (False, True)]:
        flags = dict(zip(keys, values))
        a = args
        if flags.get("log_p") and ROW[name].kind == "q":   # probabilities on the log scale
            with np.errstate(divide="ignore", invalid="ignore"):
                a = [np.log(args[0]), *args[1:]]
        monkeypatch.setenv("DASKCL_BINNING", "0")
        plain = _call(name, a, **flags)
        for spec in ("64x3", "128x8r64", "100x7"):
            monkeypatch.setenv("DASKCL_BINNING", spec)
            grouped = _call(name, a, **flags)
            assert np.array_equal(plain, grouped, equal_nan=True), (name, spec, flags)
    assert np.isfinite(plain).sum() > plain.size // 2   # the draws are not all edge cases


def test_sorted_launches_split_large_calls(monkeypatch):
    # a call larger than SORT_LAUNCH runs as several sorted launches, the last one cut short
    rng = np.random.default_rng(7)
    args = _inputs("pbeta", 12_345, rng)
    monkeypatch.setenv("DASKCL_BINNING", "0")
    plain = _call("pbeta", args)
    monkeypatch.setenv("DASKCL_BINNING", "64x4")
    monkeypatch.setattr(_plan, "SORT_LAUNCH", 5000)
    assert np.array_equal(plain, _call("pbeta", args), equal_nan=True)
    assert np.isfinite(plain).sum() > 10_000


def test_grouped_kernel_reads_broadcast_inputs(monkeypatch):
    x = np.linspace(0.001, 0.999, 301)[:, None]
    a = np.array([0.3, 2.5, 17.0, 45.0, 600.0])
    b = np.array([[0.7], [3.0], [39.5]])[:, :, None]
    monkeypatch.setenv("DASKCL_BINNING", "0")
    plain = _call("pbeta", [x, a, b])
    monkeypatch.setenv("DASKCL_BINNING", "64x2")
    grouped = _call("pbeta", [x, a, b])
    assert grouped.shape == (3, 301, 5)
    assert np.array_equal(plain, grouped)


def _classes(name: str, *args: float, lower_tail: bool = True, log_p: bool = False) -> list[int]:
    fn = ROW[name]
    got = NmathFunction(fn.class_row())(*[np.atleast_1d(np.asarray(a, dtype=float)) for a in args],
                              lower_tail=lower_tail, log_p=log_p)
    return [int(c) for c in np.atleast_1d(got)]


def test_pbeta_classes_name_bratios_methods():
    # class = 4 * method + bucket (cl/nmath/toms708.cl, bratio_class)
    # a = 2, b = 3, x = 0.5: swapped to a0 = 3, b0 = 2, x0 = 0.5; b0 x0 = 1 > 0.7 and
    # x0 <= 0.7: L140 (9); terms 2 + 34.5 / log 2 = 51.8: bucket 2
    assert _classes("pbeta", 0.5, 2.0, 3.0) == [4 * 9 + 2]
    # b0 x0 <= 0.7 (x = 0.01, b = 3): bpser (1); 3 + 34.5 / 4.6 = 10.5 terms: bucket 0;
    # its factor by betaln's gamln path (1 <= min, max < 8: 2): 64 + 4 * 2 + 0
    assert _classes("pbeta", 0.01, 2.0, 3.0) == [64 + 4 * 2 + 0]
    # the same with b = 30: betaln by algdiv (1), 30 + 7.5 terms: bucket 1
    assert _classes("pbeta", 0.001, 2.0, 30.0) == [64 + 4 * 1 + 1]
    # min(a, b) >= 8: betaln by bcorr (0); 30 + 5 terms: bucket 1
    assert _classes("pbeta", 0.001, 9.0, 30.0) == [64 + 4 * 0 + 1]
    # a <= 1 < b, x >= 0.29: bpser(b, a, 1 - x) (method 2), its own factor (3);
    # 0.5 + 34.5 / log 2 = 50.3 terms: bucket 2
    assert _classes("pbeta", 0.5, 0.5, 3.0) == [64 + 16 + 4 * 3 + 2]
    # a, b >= 40 near the mean: the continued fraction (3), min(a0, b0) = 45: bucket 2
    assert _classes("pbeta", 0.5, 45.0, 50.0) == [4 * 3 + 2]
    # a, b > 100 at the mean: basym (4)
    assert _classes("pbeta", 0.5, 1e4, 1e4) == [4 * 4 + 0]
    # NaN, outside (0, 1), negative shapes: 0 (bratio returns at once)
    assert _classes("pbeta", math.nan, 2.0, 3.0) == [0]
    assert _classes("pbeta", 1.5, 2.0, 3.0) == [0]
    assert _classes("pbeta", 0.5, -2.0, 3.0) == [0]


def test_pgamma_classes_name_the_methods():
    # 1 series in x, 2 upper series, 3 continued fraction, 4 lower series, 5 Temme
    assert _classes("pgamma", 0.5, 3.0, 1.0) == [1]
    assert _classes("pgamma", 2.0, 30.0, 1.0) == [2]
    assert _classes("pgamma", 5.0, 0.5, 1.0) == [3]
    assert _classes("pgamma", 30.0, 2.0, 1.0) == [4]
    assert _classes("pgamma", 1000.0, 1001.0, 1.0) == [5]
    assert _classes("pgamma", 3.0, -1.0, 1.0) == [0]
    # pchisq(x, df) is pgamma(x / 2, df / 2); ppois(x, lambda) is pgamma(lambda, x + 1)
    assert _classes("pchisq", 4.0, 60.0) == [2]
    assert _classes("ppois", 2.0, 30.0) == [4]


def test_binning_defaults_and_overrides(monkeypatch):
    fn = ROW["pbeta"].c_classify()
    monkeypatch.delenv("DASKCL_BINNING", raising=False)
    assert binning(fn, "GPU") == DEFAULT_BINNING
    assert binning(fn, "CPU") is None
    assert binning("", "GPU") is None            # no class function
    monkeypatch.setenv("DASKCL_BINNING", "0")
    assert binning(fn, "GPU") is None
    monkeypatch.setenv("DASKCL_BINNING", "1")
    assert binning(fn, "CPU") == DEFAULT_BINNING
    monkeypatch.setenv("DASKCL_BINNING", "128x4r80")
    assert binning(fn, "CPU") == Binning(work_group=128, elements_per_item=4, max_registers=80)
    monkeypatch.setenv("DASKCL_BINNING", "96x3")
    assert binning(fn, "CPU") == Binning(work_group=96, elements_per_item=3)
    for bad in ("fast", "0x4", "256x2000", "2048", "256x16r8", "256x16r256", "64r99999999999"):
        monkeypatch.setenv("DASKCL_BINNING", bad)
        with pytest.raises(ValueError, match="DASKCL_BINNING"):
            binning(fn, "GPU")
    # the register cap is NVIDIA's -cl-nv-maxrregcount: 16 to 255, or 0 for the compiler's
    with pytest.raises(ValueError, match=r"0 \(the compiler's choice\) or 16 to 255, not 300"):
        Binning(work_group=64, max_registers=300)
    assert Binning(work_group=64, max_registers=255).max_registers == 255
