# SPDX-License-Identifier: GPL-2.0-or-later
"""R's keywords where R's interface differs from Rmath.h's give R's values.

R's functions, as R 4.2 defines them (``body(dgamma)`` etc.):

* ``dgamma(x, shape, rate = 1, scale = 1/rate)``, and pgamma, qgamma, rgamma: Rmath.h's scale
  is ``1/rate``; both given is an error ("specify 'rate' or 'scale' but not both").
* ``dexp(x, rate = 1)``, pexp, qexp, rexp: Rmath.h's scale is ``1/rate``.
* ``dchisq(x, df, ncp = 0)``, pchisq, qchisq, rchisq; dbeta, pbeta, qbeta, rbeta; dt, pt, qt;
  df, pf, qf: with ``ncp`` given (even 0) R calls the noncentral function.
* ``dnbinom(x, size, prob, mu)``, pnbinom, qnbinom, rnbinom: with ``mu`` given R calls the
  ``_mu`` function; both is an error ("'prob' and 'mu' both specified").
* ``besselI(x, nu, expon.scaled = FALSE)``, besselK: Rmath.h's ``expo`` is
  ``1 + expon.scaled``.

The oracle is libRmath (``tests/support/rmath_oracle.py``) called with those translations: the values
agree to the accuracy that ``tests/nmath/test_rmath_agreement.py`` holds each function to (``r_close``:
a translation error, rate for scale or a dropped ``ncp``, is off by far more), and bit for bit with
daskcl's own Rmath.h call that the keyword stands for.
"""

from __future__ import annotations

import ast
import inspect
import math
import warnings

import dask.array as da
import numpy as np
import pytest
from support.rmath_oracle import r_eval

from daskcl import _stubs, nmath
from daskcl.kernels._docs import ALIASES

X = np.array([0.0, 0.3, 1.0, 2.5, 7.0])
P = np.array([1e-10, 0.05, 0.5, 0.9, 1.0 - 1e-9])
RATE = np.array([[0.25], [1.0], [3.0]])          # broadcast against X: shape (3, 5)
SHAPE = 2.5


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)


def r_close(got, want) -> bool:
    got, want = np.broadcast_arrays(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300, equal_nan=True)
    return True


@pytest.mark.r
@pytest.mark.parametrize(("name", "csym", "first"), [
    ("dgamma", "dgamma", X), ("pgamma", "pgamma", X), ("qgamma", "qgamma", P),
])
def test_gamma_rate_is_r_scale_one_over_rate(name, csym, first):
    f = getattr(nmath, name)
    flags = {"d": [0], "p": [1, 0], "q": [1, 0]}[name[0]]
    want = r_eval(csym, [first, SHAPE, 1.0 / RATE], flags)
    assert r_close(f(first, SHAPE, rate=RATE), want)
    # by position, the third argument is Rmath.h's scale
    assert same(f(first, SHAPE, rate=RATE), f(first, SHAPE, 1.0 / RATE))
    assert not np.allclose(f(first, SHAPE, RATE), want)
    with pytest.raises(TypeError, match="specify 'rate' or 'scale' but not both"):
        f(first, SHAPE, 2.0, rate=0.5)
    with pytest.raises(TypeError, match="give scale or rate"):
        f(first, SHAPE, scale=2.0, rate=0.5)


@pytest.mark.r
def test_gamma_rate_with_flags_and_zero_rate():
    got = nmath.pgamma(X, SHAPE, rate=RATE, lower_tail=False, log_p=True)
    assert r_close(got, r_eval("pgamma", [X, SHAPE, 1.0 / RATE], [0, 1]))
    # R: dgamma(1, 2, rate = 0) is dgamma(1, 2, scale = Inf) = 0, without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nmath.dgamma(1.0, 2.0, rate=0.0) == r_eval("dgamma", [1.0, 2.0, math.inf], [0])
        # 1 / 1e-320 overflows to Inf, as R's 1/rate, without NumPy's overflow warning
        assert nmath.pgamma(1.0, 2.0, rate=1e-320) == r_eval("pgamma", [1.0, 2.0, math.inf],
                                                            [1, 0])
        assert nmath.dexp(np.array([1.0, 2.0]), rate=np.array([1e-320, 0.5]))[0] == 0.0


@pytest.mark.r
@pytest.mark.parametrize(("name", "first"), [("dexp", X), ("pexp", X), ("qexp", P)])
def test_exp_rate_is_r(name, first):
    f = getattr(nmath, name)
    flags = {"d": [1], "p": [0, 1], "q": [0, 0]}[name[0]]
    kw = {"d": {"log": True}, "p": {"lower_tail": False, "log_p": True},
          "q": {"lower_tail": False}}[name[0]]
    want = r_eval(name, [first, 1.0 / RATE], flags)
    assert r_close(f(first, rate=RATE, **kw), want)
    assert same(f(first, rate=RATE, **kw), f(first, 1.0 / RATE, **kw))
    # R's dexp(x, 2) is rate 2; here the second position is Rmath.h's scale
    assert r_close(f(first, 0.5, **kw), r_eval(name, [first, 0.5], flags))
    assert not np.allclose(f(first, 2.0, **kw), f(first, rate=2.0, **kw), equal_nan=True)


@pytest.mark.r
@pytest.mark.parametrize(("central", "noncentral", "args"), [
    ("dchisq", "dnchisq", (X, 3.0)), ("pchisq", "pnchisq", (X, 3.0)),
    ("qchisq", "qnchisq", (P, 3.0)),
    ("dbeta", "dnbeta", (X / 8, 2.0, 3.0)), ("pbeta", "pnbeta", (X / 8, 2.0, 3.0)),
    ("qbeta", "qnbeta", (P, 2.0, 3.0)),
    ("dt", "dnt", (X - 1, 6.0)), ("pt", "pnt", (X - 1, 6.0)), ("qt", "qnt", (P, 6.0)),
    ("df", "dnf", (X, 3.0, 12.0)), ("pf", "pnf", (X, 3.0, 12.0)),
    ("qf", "qnf", (P, 3.0, 12.0)),
])
def test_ncp_calls_the_noncentral_function_as_r(central, noncentral, args):
    f = getattr(nmath, central)
    ncp = np.array([[0.0], [0.5], [2.0]])
    flags = [0] if central[0] == "d" else [1, 0]
    # R calls the noncentral function whenever ncp is given, 0 included
    want = r_eval(noncentral, [*args, ncp], flags)
    assert r_close(f(*args, ncp=ncp), want)
    assert same(f(*args, ncp=ncp), getattr(nmath, noncentral)(*args, ncp))
    # a positional ncp (R's next position) is an error here, not another parameter
    with pytest.raises(TypeError):
        f(*args, 1.0)


@pytest.mark.r
@pytest.mark.parametrize(("name", "first"),
                         [("dnbinom", np.arange(6.0)), ("pnbinom", np.arange(6.0)),
                          ("qnbinom", P)])
def test_nbinom_mu_is_r(name, first):
    f = getattr(nmath, name)
    mu = np.array([[0.5], [3.0], [40.0]])
    flags = [1] if name[0] == "d" else [1, 1]
    kw = {"log": True} if name[0] == "d" else {"log_p": True}
    first = np.log(first) if name[0] == "q" else first
    assert r_close(f(first, 4.0, mu=mu, **kw), r_eval(f"{name}_mu", [first, 4.0, mu], flags))
    assert same(f(first, 4.0, mu=mu, **kw), getattr(nmath, f"{name}_mu")(first, 4.0, mu, **kw))
    assert r_close(f(first, 4.0, 0.25, **kw), r_eval(name, [first, 4.0, 0.25], flags))
    with pytest.raises(TypeError, match="'prob' and 'mu' both specified"):
        f(first, 4.0, 0.25, mu=1.0)
    with pytest.raises(TypeError, match="missing a required argument: 'prob'"):
        f(first, 4.0)


@pytest.mark.r
@pytest.mark.parametrize("name", ["bessel_i", "bessel_k"])
def test_expon_scaled_is_r(name):
    f = getattr(nmath, name)
    x = np.array([0.5, 2.0, 30.0, 700.0])
    nu = np.array([[0.0], [1.5], [-2.3]])
    for scaled, expo in ((True, 2.0), (False, 1.0), (np.True_, 2.0), (0, 1.0)):
        assert r_close(f(x, nu, expon_scaled=scaled), r_eval(name, [x, nu, expo]))
        assert same(f(x, nu, expon_scaled=scaled), f(x, nu, expo))
    with pytest.raises(TypeError, match="give expo or expon_scaled"):
        f(x, nu, 2.0, expon_scaled=True)
    with pytest.raises(TypeError, match="expon_scaled must be True or False"):
        f(x, nu, expon_scaled="TRUE")


@pytest.mark.r
def test_generators_take_rs_keywords():
    """The same stream: R's keyword gives the variates of the Rmath.h call it stands for."""
    rate = np.array([0.5, 2.0, 4.0])
    assert same(nmath.rgamma(3, 2.5, rate=rate, seed=9), nmath.rgamma(3, 2.5, 1 / rate, seed=9))
    assert same(nmath.rexp((2, 3), rate=rate, seed=9), nmath.rexp((2, 3), 1 / rate, seed=9))
    assert same(nmath.rchisq(50, 3.0, ncp=1.5, seed=2), nmath.rnchisq(50, 3.0, 1.5, seed=2))
    assert same(nmath.rbeta(50, 2.0, 3.0, ncp=1.5, seed=2),
                nmath.rnbeta(50, 2.0, 3.0, 1.5, seed=2))
    assert same(nmath.rnbinom(50, 3.0, mu=4.0, seed=2), nmath.rnbinom_mu(50, 3.0, 4.0, seed=2))
    # R's deterministic cases: rexp(n, Inf) is 0, rgamma(n, 2, rate = Inf) is 0
    assert same(nmath.rexp(2, rate=math.inf, seed=1), [r_eval("rexp", [0.0])] * 2)
    assert same(nmath.rgamma(2, 2.0, rate=math.inf, seed=1), [0.0, 0.0])
    with pytest.raises(TypeError, match="'prob' and 'mu' both specified"):
        nmath.rnbinom(5, 3.0, 0.5, mu=1.0)
    with pytest.raises(TypeError, match="specify 'rate' or 'scale' but not both"):
        nmath.rgamma(5, 3.0, scale=2.0, rate=1.0)
    # the offset and chunks of the call carry over to the function R's keyword selects
    full = nmath.rnbinom(20, 3.0, mu=4.0, seed=5)
    assert same(nmath.rnbinom(10, 3.0, mu=4.0, seed=5, offset=10), full[10:])
    lazy = nmath.rchisq(20, 3.0, ncp=1.0, seed=5, chunks=7)
    assert isinstance(lazy, da.Array) and same(lazy.compute(), nmath.rnchisq(20, 3.0, 1.0, seed=5))


@pytest.mark.r
def test_dask_and_bad_values():
    x = da.from_array(X, chunks=2)
    rate = da.from_array(np.array([0.0, 1.0, 2.0, 0.5, 4.0]), chunks=3)
    lazy = nmath.dgamma(x, SHAPE, rate=rate)
    assert isinstance(lazy, da.Array)
    want = r_eval("dgamma", [X, SHAPE, np.array([np.inf, 1.0, 0.5, 2.0, 0.25])], [0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # rate 0 is scale Inf, quietly
        assert r_close(lazy.compute(scheduler="sync"), want)
    assert r_close(nmath.dchisq(x, 3.0, ncp=1.0).compute(scheduler="sync"),
                   r_eval("dnchisq", [X, 3.0, 1.0], [0]))
    with pytest.raises(TypeError, match="dgamma: argument 'rate' must be real numbers"):
        nmath.dgamma(1.0, 2.0, rate="fast")
    with pytest.raises(TypeError, match="'rate' is a masked array"):
        nmath.dgamma(1.0, 2.0, rate=np.ma.masked_array([1.0, 2.0], [True, False]))
    # None is "not given", as R's missing argument
    assert nmath.dgamma(1.0, 2.0, rate=None) == nmath.dgamma(1.0, 2.0)


def test_aliases_are_keyword_only_in_the_signature_and_the_stub():
    stub = {n.name: n for n in ast.parse(_stubs.nmath_stub()).body
            if isinstance(n, ast.FunctionDef)}
    assert len(ALIASES) == 28
    for name, aliases in ALIASES.items():
        sig = inspect.signature(getattr(nmath, name))
        for a in aliases:
            p = sig.parameters[a]
            assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is None, (name, a)
        kwonly = {k.arg: ast.unparse(k.annotation) for k in stub[name].args.kwonlyargs}
        for a, alias in aliases.items():
            assert kwonly[a] == ("_Flag | None" if alias.kind == "flag" else "ArrayLike | None")
    assert str(inspect.signature(nmath.dnbinom)) == "(x, size, prob=None, *, log=False, mu=None)"
    assert "rate" not in inspect.signature(nmath.dweibull).parameters   # R's Weibull has none


def test_sweep_specs_name_rmath_parameters():
    """A spec names Rmath.h's parameters: R's keywords are refused before anything runs, and
    dnbinom's prob stays required there."""
    from daskcl.sweep import Sweep, SweepError
    from daskcl.sweep.evaluate import evaluate_chunk

    base = {"sweep": {"function": "dgamma"}, "axes": {"x": {"arange": [0, 3]}}}
    with pytest.raises(SweepError, match="dgamma has no parameter 'rate'"):
        Sweep.from_dict({**base, "args": {"shape": 2.0, "rate": 3.0}})
    nb = {"sweep": {"function": "dnbinom"}, "axes": {"x": {"arange": [0, 3]}}}
    with pytest.raises(SweepError, match=r"dnbinom needs \['prob'\]"):
        Sweep.from_dict({**nb, "args": {"size": 3.0}})
    s = Sweep.from_dict({**base, "args": {"shape": 2.0, "scale": 1 / 3.0, "log": True}})
    assert same(evaluate_chunk(s, (0,))["dgamma"], nmath.dgamma(np.arange(3.0), 2.0, rate=3.0, log=True))


def test_warnings_through_rs_keywords_point_at_the_callers_line():
    """A call through R's keywords goes on to another function (``pchisq(..., ncp=)`` to
    ``pnchisq``), a frame deeper: its warnings pointed into daskcl (``_nmath_function.py``), not at
    the line that made the call, as the same call without the keyword does, and named the
    other function (R's say "In pchisq(1, -1, ncp = 1) : NaNs produced")."""
    calls = [lambda: nmath.pchisq(1.0, -1.0, ncp=1.0),
             lambda: nmath.dnbinom(0.5, 2.0, mu=1.0),
             lambda: nmath.rchisq(2, -1.0, ncp=1.0, seed=1),
             lambda: nmath.pnorm(1.0, 0.0, -1.0)]
    messages: list[str] = []
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert [(w.filename, w.lineno) for w in caught] == [
            (__file__, call.__code__.co_firstlineno)], [str(w.message) for w in caught]
        messages.append(str(caught[0].message))
    assert messages == ["pchisq: 1 NaN(s) produced", "dnbinom: 1 non-integer x",
                        "rchisq: 2 NaN(s) produced", "pnorm: 1 NaN(s) produced"]
    # the name is the call's only: the function called directly names itself again
    with pytest.warns(RuntimeWarning, match="^pnchisq: 1 NaN"):
        nmath.pnchisq(1.0, -1.0, 1.0)
    # a lazy call's blocks, computed later, name it too
    x = da.from_array(np.array([1.0, 2.0]), chunks=1)
    lazy = [nmath.pchisq(x, -1.0, ncp=1.0), nmath.rchisq(4, -1.0, ncp=1.0, seed=1, chunks=2)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        da.compute(*lazy, scheduler="sync")
    assert sorted(str(w.message) for w in caught) == [
        "pchisq: 1 NaN(s) produced", "pchisq: 1 NaN(s) produced", "rchisq: 2 NaN(s) produced",
        "rchisq: 2 NaN(s) produced"]
