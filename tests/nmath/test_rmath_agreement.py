# SPDX-License-Identifier: GPL-2.0-or-later
"""daskcl.nmath agrees with R's libRmath, function by function, flag by flag.

One table-driven test over every case of ``tests/rcases`` (a grid of arguments and the
tolerance for one function) and every combination of R's flags for its kind.  Each run calls
``daskcl.nmath.<name>`` once on the broadcast grid and compares with libRmath (through
``tests/support/rmath_oracle.py``):

- the same NaNs and the same signed infinities;
- elsewhere ``|daskcl - R| <= rtol * max(|R|, DBL_MIN)`` (or ``<= atol`` where a case gives one);
- daskcl's "NaN(s) produced" warning counts exactly the NaNs produced from NaN-free arguments
  (R's rule for "NaNs produced"), less the points a case marks as R-silent; its "non-integer"
  warning counts the arguments R warns about (fuzz ``1e-7 max(1, |x|)``) where the result is
  not NaN.

A failure shows the worst points: arguments, daskcl's value, R's value, relative error.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
import warnings
from collections.abc import Sequence

import numpy as np
import pytest
from rcases import RCase, all_cases
from support.rmath_oracle import r_eval

from daskcl import nmath
from daskcl.kernels._nmath_table import ROWS

ROW = {fn.name: fn for fn in ROWS}
CASES = all_cases()
DBL_MIN = sys.float_info.min


def _runs():
    for case in CASES:
        fn = ROW.get(case.name)
        if fn is None:  # reported by test_cases_name_table_rows
            continue
        keys = [py for py, _ in fn.flags]
        for values in itertools.product((False, True), repeat=len(keys)):
            flags = dict(zip(keys, values))
            if not keys:
                fid = ""
            elif fn.kind == "d":
                fid = "log" if flags["log"] else "linear"
            else:
                fid = ("lower" if flags["lower_tail"] else "upper") + ("-log" if flags["log_p"] else "")
            yield pytest.param(case, flags, id=f"{case.id}-{fid}" if fid else case.id)


def test_cases_name_table_rows():
    for case in CASES:
        assert case.name in ROW, f"{case.id}: no row {case.name!r} in daskcl/_nmath_table.py"
        assert tuple(case.grid) == ROW[case.name].arg_names, (
            f"{case.id}: the grid must give every argument in Rmath.h order "
            f"{ROW[case.name].arg_names}, not {tuple(case.grid)}"
        )


def _count(messages: list[str], kind: str, name: str) -> int:
    total = 0
    for msg in messages:
        if kind in msg:
            m = re.match(rf"{re.escape(name)}:\s*(\d+)", msg)
            assert m, f"unexpected warning format: {msg!r}"
            total += int(m.group(1))
    return total


def _nonint(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.abs(x - np.rint(x)) > 1e-7 * np.maximum(1.0, np.abs(x))


def _report(case: RCase, args: Sequence[np.ndarray], got: np.ndarray, want: np.ndarray,
            bad: np.ndarray, rel: np.ndarray, what: str) -> str:
    order = np.argsort(-np.where(bad, np.nan_to_num(rel, nan=np.inf), -1.0), axis=None)
    lines = [f"{case.id}: {int(bad.sum())} of {bad.size} points {what}; worst:"]
    names = list(case.grid)
    for flat in order[:5]:
        i = np.unravel_index(flat, bad.shape)
        if not bad[i]:
            break
        where = ", ".join(f"{n}={float(a[i])!r}" for n, a in zip(names, args))
        lines.append(
            f"  ({where}): daskcl {float(got[i])!r}, R {float(want[i])!r}, rel err {float(rel[i]):.3g}"
        )
    return "\n".join(lines)


@pytest.mark.r
@pytest.mark.parametrize(("case", "flags"), list(_runs()))
def test_agrees_with_r(case: RCase, flags: dict[str, bool]):
    fn = ROW[case.name]
    axes = case.axes()
    cflags = [int(flags[py]) for py, _ in fn.flags]
    want = r_eval(case.rsym or fn.csym, axes, cflags)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = np.asarray(getattr(nmath, case.name)(*axes, **flags))
    messages = [str(w.message) for w in caught]
    others = [
        f"{w.category.__name__}: {w.message}" for w in caught
        if not (issubclass(w.category, RuntimeWarning)
                and str(w.message).startswith(f"{fn.name}:")
                and ("NaN" in str(w.message) or "non-integer" in str(w.message)
                     or "out of range in" in str(w.message)))
    ]
    assert not others, f"{case.id}: unexpected warnings {others}"

    args = np.broadcast_arrays(*axes)
    assert got.shape == want.shape
    assert got.dtype == np.float64

    # the same NaNs and the same infinities
    nan_bad = np.isnan(got) != np.isnan(want)
    assert not nan_bad.any(), _report(case, args, got, want, nan_bad, np.full(got.shape, np.nan),
                                      "differ in NaN-ness")
    inf_bad = (np.isinf(got) | np.isinf(want)) & (got != want)
    assert not inf_bad.any(), _report(case, args, got, want, inf_bad, np.full(got.shape, np.inf),
                                      "differ in an infinity")

    # relative error elsewhere
    fin = np.isfinite(want)
    with np.errstate(all="ignore"):
        err = np.where(fin, np.abs(got - want), 0.0)
        rel = err / np.maximum(np.abs(want), DBL_MIN)
    bad = fin & (rel > case.rtol)
    if case.atol:
        bad &= err > case.atol
    assert not bad.any(), _report(case, args, got, want, bad, rel, f"off by more than rtol={case.rtol:g}")

    # the warnings count what R warns about
    nan_free = ~np.logical_or.reduce([np.isnan(a) for a in args])
    produced = np.isnan(want) & nan_free
    for quiet in case.quiet_nan:
        mask = np.broadcast_to(np.asarray(quiet.where(*args, **flags), dtype=bool), produced.shape)
        assert not (mask & ~produced).any(), (
            f"{case.id}: a QuietNaN marks points where R does not give NaN ({quiet.why})"
        )
        produced &= ~mask
    assert _count(messages, "NaN", fn.name) == int(produced.sum()), (
        f"{case.id}: the NaN warning should count the {int(produced.sum())} NaNs produced from "
        f"NaN-free arguments; warnings: {messages}"
    )
    nonint = np.zeros(got.shape, dtype=int)
    for arg in fn.nonint:
        a = args[fn.arg_names.index(arg)]
        if fn.nonint_nan:   # R warns, then returns NaN (pbinom's size, after its NaN checks
            # and its check that the parameters are finite)
            counted = _nonint(a) & nan_free & np.logical_and.reduce(
                [np.isfinite(b) for b in args[1:]])
        else:
            counted = _nonint(a) & ~np.isnan(want)
        if fn.nonint_min is not None:   # R checks from there on (dhyper: 0 for x < 0, silent)
            with np.errstate(invalid="ignore"):
                counted &= a >= fn.nonint_min
        nonint += counted.astype(int)
    assert _count(messages, "non-integer", fn.name) == int(nonint.sum()), (
        f"{case.id}: the non-integer warning should count {int(nonint.sum())} arguments; "
        f"warnings: {messages}"
    )


@pytest.mark.r
def test_qf_of_a_vanishing_df2_is_never_negative():
    """Where R's qf is negative (df2 = 1e-300: its qbeta returns a value just beyond 1, so
    1 / x - 1 < 0), daskcl's is not: an F quantile lies in [0, Inf], and as df2 -> 0 the F
    distribution's mass leaves for infinity, so every quantile inside (0, 1) is +Inf."""
    p = np.array([1e-300, 1e-100, 1e-20, 0.5, 1 - 1e-16])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for df1 in (0.1, 0.5, 1.0, 2.0, 10.0):
            for lower in (True, False):
                got = nmath.qf(p, df1, 1e-300, lower_tail=lower)
                assert (got >= 0).all(), (df1, lower, got)
                assert (r_eval("qf", [p, df1, 1e-300], (int(lower), 0)) < 0).any() or df1 == 10.0


@pytest.mark.r
def test_qf_where_the_beta_quantile_is_1_is_0_also_for_a_vanishing_df1():
    """qf = (1 / qbeta - 1) df2 / df1: where qbeta is exactly 1 the quantile is 0, but df2 / df1
    overflows for df1 = 1e-310 and 0 * Inf was NaN with a warning (R's qbeta steps just above
    1 there, and its qf is -Inf; found by a random search against libRmath, 2026-11-28)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = nmath.qf(np.array([1.36e-219, 1e-100]), 1e-310, 0.0398, lower_tail=False)
    assert got.tolist() == [0.0, 0.0]
    assert r_eval("qf", [1.36e-219, 1e-310, 0.0398], (0, 0))[()] == -np.inf   # R's


@pytest.mark.r
def test_bessel_j_of_an_order_next_to_zero():
    """J_nu(x) for 0 < |nu| < 1e-15 is J_0(x) + nu (pi / 2) Y_0(x) to first order (DLMF 10.15.3:
    dJ_nu / dnu = (pi / 2) Y_0 at nu = 0; the second-order term is below 1e-30).  R's Cody
    RJBESL gives 1 for every x where nu + 1 == 1 (its normalising sum keeps a factor nu in
    every other term: besselJ(2, 1e-17) is 1, J_0(2) = 0.2239) and, in R 4.2.2, J_0(x) / nu for
    nu up to 1e-15 (besselJ(2, 3e-16) is 7.5e14); daskcl was 1 in the first range (found by a
    random search against libRmath, 2026-11-28).  The oracle is R's J_0 and Y_0; the cases of
    tests/rcases/bessel.py leave out these orders.  The tolerance, 1e-14: the backward
    recurrence's normalisation by gamma(nu) (x / 2)^-nu ~ 1 / nu costs up to 3.4e-15 at
    nu = 1e-15 (against mpmath)."""
    x = np.array([1e-300, 1e-10, 5e-5, 0.3, 2.0, 13.385364267337522, 24.9, 30.0, 100.0, 1e3,
                  1e4, 99999.0])
    nu = np.array([5e-324, 1e-200, 1e-17, 5e-17, 1.1e-16, 1.2e-16, 3e-16, 1e-15])
    nu = np.concatenate([nu, -nu])[:, None]
    want = (r_eval("bessel_j", [x, 0.0], ())
            + nu * (np.pi / 2) * r_eval("bessel_y", [x, 0.0], ()))
    got = np.asarray(nmath.bessel_j(x, nu))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    # at x = 0: J_nu(0) = 0 for nu > 0, and J_-nu(0) = -sin(nu pi) Y_nu(0) = +Inf
    np.testing.assert_array_equal(nmath.bessel_j(0.0, nu.ravel()),
                                  np.where(nu.ravel() > 0, 0.0, np.inf))


@pytest.mark.r
def test_subnormal_results_keep_their_last_bits():
    """Where R's result is subnormal, daskcl's is the same number: test_agrees_with_r's relative
    measure stops at DBL_MIN, and a device's log1p lost such values (PoCL's log1p(-5e-324) is
    0: pnorm(38.46, log_p=True) was 0, R's -5e-324; log1p(-1.408e-319) lost its last digits)."""
    x = np.array([37.6, 38.0, 38.2, 38.4, 38.46, 38.47])
    for lower, q in ((True, x), (False, -x)):
        want = r_eval("pnorm5", [q, 0.0, 1.0], (int(lower), 1))
        assert ((want < 0) & (want > -DBL_MIN)).all(), want   # the points are what they say
        np.testing.assert_array_equal(nmath.pnorm(q, lower_tail=lower, log_p=True), want)
    # R_Log1_Exp(-x) = log1p(-exp(-x)) of a subnormal exp(-x): the lower tails of the
    # exponential and the Weibull on the log scale
    q = np.array([720.0, 736.0, 740.0, 744.0])
    want = r_eval("pexp", [q, 1.0], (1, 1))
    assert ((want < 0) & (want > -DBL_MIN)).all(), want
    np.testing.assert_array_equal(nmath.pexp(q, 1.0, log_p=True), want)
    np.testing.assert_array_equal(nmath.pweibull(np.sqrt(q), 2.0, 1.0, log_p=True),
                                  r_eval("pweibull", [np.sqrt(q), 2.0, 1.0], (1, 1)))


def test_pnbeta_beyond_its_index_counting_is_nan_with_warning():
    """pnbeta sums its Poisson mixture from j = x0 ~ ncp/2 - 7 sqrt(ncp/2) until j reaches
    x0 + 10000 (R's itrmax); beyond 2^53 (ncp > ~1.8e16) j + 1 == j, and R's libRmath and
    daskcl did not return for pnbeta(0.04, 5.8e93, 1.2e176, 1e20), nor qnbeta, which bisects
    on it (found by a random search against libRmath, 2026-11-28).  There is no R value: NaN
    with R's warning, as where R's own algorithms cannot go on.  Run in a child process with
    a timeout, so that a regression fails instead of hanging the suite."""
    import subprocess
    code = (
        "import warnings, numpy as np\n"
        "from daskcl import nmath\n"
        "a = (5.825370075315758e93, 1.1754625279373821e176)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    p = nmath.pnbeta(np.array([0.04024667554643668, 0.5]), *a, 1e20)\n"
        "    q = nmath.qnbeta(0.04024667554643668, *a, 1e20)\n"
        "print(repr(p.tolist()), repr(float(q)), [str(x.message) for x in w])\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=300, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail("pnbeta / qnbeta did not return for ncp = 1e20 (j + 1 == j)")
    assert out.stdout.strip() == ("[nan, nan] nan ['pnbeta: 2 NaN(s) produced', "
                                  "'qnbeta: 1 NaN(s) produced']"), out.stdout


@pytest.mark.r
def test_dnbinom_of_a_zero_size_at_x_within_the_fuzz_of_0_is_log_1_positive_zero():
    """dnbinom(x, 0, prob, log = TRUE) for x within R's fuzz of 0 but not 0 (1e-300, 1e-9) is
    the point mass at 0: log 1 = +0, as R; daskcl gave -0 (0 * log(prob), found by a random
    search against libRmath).  test_agrees_with_r's measure does not see the sign of a zero."""
    x = np.array([0.0, -0.0, 1e-300, 1e-9, 3e-8])
    prob = np.array([1e-300, 0.3, 0.997, 1.0])[:, None]
    for give_log in (0, 1):
        want = r_eval("dnbinom", [x, 0.0, prob], (give_log,))
        got = np.asarray(nmath.dnbinom(x, 0.0, prob, log=bool(give_log)))
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all(), (give_log, got, want)


@pytest.mark.r
def test_qnbinom_where_the_cornish_fisher_sigma_overflows():
    """The search's start mu + sigma (z + gamma (z^2 - 1) / 6) was +Inf where size P Q
    overflows, and so was the quantile (in R too): qnbinom(0.7, 1e-200, 1e-300) where
    pnbinom(0, ...) = 1 makes 0 the quantile, and at size = 1e300 the lower tail gave Inf
    where the upper tail gave the mean (found by a random search against libRmath)."""
    assert nmath.pnbinom(0.0, 1e-200, 1e-300) == 1.0
    assert nmath.qnbinom(0.7, 1e-200, 1e-300) == 0.0
    assert nmath.qnbinom_mu(0.7, 1e-200, 1e100) == 0.0
    p, size, prob = 0.6863151564657385, 1e300, 2.721762233776435e-08
    lower = float(nmath.qnbinom(p, size, prob))
    assert lower == float(nmath.qnbinom(1 - p, size, prob, lower_tail=False))
    assert lower == pytest.approx(size * (1 - prob) / prob, rel=1e-12)     # about the mean
    assert r_eval("qnbinom", [0.7, 1e-200, 1e-300], (1, 0))[()] == np.inf   # R's


@pytest.mark.r
def test_dnf_of_a_large_df1_takes_1_minus_x_as_1_over_1_plus_y():
    """dnf goes through dnbeta at x = y / (1 + y), y = df1 x / df2, and the density depends on
    1 - x through x^(df1/2 + k).  R's 1 - x keeps only what the rounding of x left: about
    df1 1e-16 relative, and nothing beyond y = 2^53.  dnf(0.5, d, 2, d) tends to e^-4 8 (as
    df1 = ncp -> Inf, F -> 2 / E with E ~ Exp(1)); daskcl gave 0.1470 at d = 1e14, 0.094 at
    1e16 and 8 from 1e17, R gives 0 from d = 1e10.  The references at d = 1e7 are 40-digit
    sums of the Poisson mixture (mpmath), where R is off by 2.8e-10 and 2.9e-10; the tolerance
    leaves room for the sums' rounding over their 2e4 terms (daskcl: 4.7e-13 and 4.6e-13)."""
    limit = 8 * math.exp(-4)
    d = np.array([1e10, 1e14, 1e16, 1e17, 1e20, 1e50, 1e100])
    np.testing.assert_allclose(nmath.dnf(0.5, d, 2.0, d), limit, rtol=1e-8)
    np.testing.assert_allclose(nmath.dnf(0.5, d, 2.0, d, log=True), math.log(limit), rtol=1e-8)
    assert (r_eval("dnf", [0.5, d, 2.0, d], (0,)) == 0).all()     # R's
    got = nmath.dnf(np.array([0.5, 1.3]), 1e7, np.array([2.0, 1.5]), 1e7)
    np.testing.assert_allclose(got, [0.14652519902492447, 0.22043205304637978], rtol=5e-12)


@pytest.mark.r
def test_qnbinom_where_the_skewness_sum_overflows():
    """The start's skewness (Q + P) / sigma overflowed where Q + P does (P = mu / size from
    about 9e307), and the quantile was +Inf without a warning: qnbinom_mu(0.1, 1e-300, 1e8)
    is 0 since pnbinom_mu(0, ...) = 1 (R gives NaN), and qnbinom(0.1, 1, 1e-308), a geometric
    law of mean 1e308, is its 10% point, -log(0.9) 1e308 (R gives NaN; found by a random
    search against libRmath)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nmath.pnbinom_mu(0.0, 1e-300, 1e8) == 1.0
        assert nmath.qnbinom_mu(0.1, 1e-300, 1e8) == 0.0
        assert nmath.qnbinom_mu(0.9, 1e-300, 1e8, lower_tail=False) == 0.0
        x = float(nmath.qnbinom(0.1, 1.0, 1e-308))
        assert x == pytest.approx(-math.log(0.9) * 1e308, rel=1e-12)
        # the smallest x with P[X <= x] >= p (to R's fuzz)
        assert nmath.pnbinom(x, 1.0, 1e-308) >= 0.1 * (1 - 64 * 2.0**-53)
        assert nmath.pnbinom(x * (1 - 1e-14), 1.0, 1e-308) < 0.1
    assert np.isnan(r_eval("qnbinom_mu", [0.1, 1e-300, 1e8], (1, 0))[()])     # R's

