# SPDX-License-Identifier: GPL-2.0-or-later
"""The documentation of every public function: complete, and its examples' values are R's.

The examples stored in the rows (``daskcl/kernels/_nmath_table.py``, ``_random.py``) are
checked here against libRmath (``tests/support/rmath_oracle.py``), translating R's keywords as R's own functions do (R's
``dgamma`` passes ``scale = 1/rate``; ``dchisq`` calls ``dnchisq`` whenever ``ncp`` is given),
and against R itself: each example's R expression is evaluated by ``Rscript``.  That daskcl
prints them is checked by the documentation's doctest build (``sphinx -b doctest``, in CI).
"""

from __future__ import annotations

import inspect
import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from numpydoc.docscrape import FunctionDoc
from support.rmath_oracle import SIGNATURES, r_eval

from daskcl import _reference, nmath
from daskcl.kernels import _docs
from daskcl.kernels._nmath_table import ROWS
from daskcl.kernels._random import ROWS as RANDOM_ROWS
from daskcl.kernels._table import Example

REPO = Path(__file__).resolve().parents[2]
ALL = {row.name: row for row in (*ROWS, *RANDOM_ROWS)}
CASES = [(name, k) for name, row in ALL.items() for k in range(len(row.examples))]

#: what R's own functions call when ``ncp`` is given (R's dchisq: ``if (missing(ncp))
#: C_dchisq else C_dnchisq``; rbeta: an R-level quotient of rchisq's, composed below)
R_NONCENTRAL = {f"{k}{c}": f"{k}n{c}" for k in "dpq" for c in ("chisq", "beta", "t", "f")}
R_NONCENTRAL["rchisq"] = "rnchisq"
_FLAG_C = {"log": 0, "lower_tail": 1, "log_p": 2}


def rmath_symbol(name: str) -> str:
    row = ALL[name]
    return row.csym if row.csym in SIGNATURES else name


def oracle(name: str, ex: Example) -> np.ndarray:
    """libRmath's value of an example, R's keywords translated as R's functions do."""
    args, kw = list(ex.args), dict(ex.kwargs)
    if "rate" in kw:                  # R: .Call(C_dgamma, x, shape, scale = 1/rate, log)
        args.append(1.0 / kw.pop("rate") if kw["rate"] else math.inf)
    if "ncp" in kw:
        name = R_NONCENTRAL.get(name, name)
        if name == "rbeta":           # R: X <- rchisq(n, 2 a, ncp); X / (X + rchisq(n, 2 b))
            a, b = args[1:3]
            x = r_eval("rnchisq", [np.full(int(args[0]), 2 * a), kw.pop("ncp")])
            return x / (x + r_eval("rchisq", [np.full(int(args[0]), 2 * b)]))
        args.append(kw.pop("ncp"))
    if "mu" in kw:                    # R: .Call(C_dnbinom_mu, x, size, mu, log)
        name += "_mu"
        args.append(kw.pop("mu"))
    if "expon_scaled" in kw:          # R: .Internal(besselI(x, nu, 1 + expon.scaled))
        args.append(1.0 + kw.pop("expon_scaled"))
    row = ALL[name]
    if hasattr(row, "kind"):
        args += [row.defaults[a] for a in row.arg_names[len(args):]]
        flags = [int(kw.pop(f, d)) for f, d in row.flag_defaults.items()]
        assert not kw, kw
        return r_eval(rmath_symbol(name), args, flags)
    if name == "rnbeta":
        n, a, b, ncp = args
        x = r_eval("rnchisq", [np.full(int(n), 2 * a), ncp])
        return x / (x + r_eval("rchisq", [np.full(int(n), 2 * b)]))
    # a generator: libRmath's, once per element (its own stream; only deterministic cases)
    n = int(args[0])
    params = [*args[1:], *(row.defaults[a] for a in row.arg_names[len(args) - 1:])]
    return r_eval(name, [np.full(n, v) for v in params])


def same(a: object, b: object) -> bool:
    """Equal values, NaN equal to NaN; a scalar equals a one-element list."""
    return np.array_equal(np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(b, dtype=float)),
                          equal_nan=True)


def test_every_function_is_documented():
    assert set(ALL) == set(nmath.FUNCTIONS)
    for name, row in ALL.items():
        meanings = _docs.parameter_meanings(row)
        assert list(meanings) == list(row.arg_names), name
        assert all(len(m) >= 8 and m.endswith(".") for m in meanings.values()), name
        path, text = _docs.source(row)
        assert (REPO / path).is_file() and len(text) > 30, name
        assert row.examples, name


def test_r_calls_are_r_functions_with_rs_names():
    """R's call names R's function and ends with R's flags; daskcl's parameters appear in it
    under their names, except where the order note says why not."""
    for name, row in ALL.items():
        r = row.r_call
        if not r:
            assert name in {"lgamma1p", "log1pmx", "log1pexp", "log1mexp", "logspace_add",
                            "logspace_sub"}
            continue
        assert re.fullmatch(r"[a-zA-Z]\w*\(.*\)", r), r
        # R's names whole, dots included (lower.tail, log.p): a quantile's first argument p
        # must not stand for a missing log.p
        rnames = re.findall(r"([\w.]+)(?: = [^,)]*)?(?:,|\))", r.split("(", 1)[1])
        flags = {"log": "log", "lower_tail": "lower.tail", "log_p": "log.p"}
        for f in getattr(row, "flag_defaults", {}):
            assert flags[f] in rnames, (name, f, r)
        missing = [a for a in row.arg_names[1:] if a not in rnames]
        if missing:
            assert _docs.order_note(row), (name, missing)


@pytest.mark.r
@pytest.mark.parametrize(("name", "k"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_example_value_is_librmaths(name, k):
    ex = ALL[name].examples[k]
    assert same(ex.value, oracle(name, ex)), (ex, oracle(name, ex))


@pytest.mark.r
def test_r_expressions_give_the_stored_values(tmp_path):
    """Each example's R expression, evaluated by R, prints the stored value (17 digits)."""
    exprs = [(name, ex) for name, row in ALL.items() for ex in row.examples if ex.r]
    script = "\n".join(
        f'cat(paste(sprintf("%.17g", suppressWarnings({ex.r})), collapse=" "), "\\n")'
        for _, ex in exprs
    )
    (tmp_path / "examples.R").write_text(script + "\n")
    out = subprocess.run(["Rscript", "--vanilla", str(tmp_path / "examples.R")],
                         capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == len(exprs) >= 120
    for (name, ex), line in zip(exprs, lines):
        got = [float(v) for v in line.split()]
        assert same(got, ex.value), (name, ex.r, got, ex.value)


@pytest.mark.parametrize("name", sorted(ALL))
def test_docstring_documents_every_parameter_with_an_example(name):
    func = nmath.FUNCTIONS[name]
    doc = FunctionDoc(func)
    sig = inspect.signature(func)
    assert [p.name for p in doc["Parameters"]] == list(sig.parameters)
    assert all(" ".join(p.desc).strip() for p in doc["Parameters"])
    assert doc["Summary"] and doc["Returns"] and doc["Raises"]
    examples = "\n".join(doc["Examples"])
    lines = _docs.example_lines(ALL[name])
    assert examples.strip() == "\n".join(lines)
    for ex in ALL[name].examples:
        value = (repr(np.array(ex.value)) if isinstance(ex.value, tuple) else repr(ex.value))
        assert f"\n{value}\n" in f"\n{examples}\n", (name, value)
        if ex.r:
            assert f"# R: {ex.r}" in examples
    assert ALL[name].r_call in func.__doc__
    note = _docs.order_note(ALL[name])
    assert note == "" or note in func.__doc__
    path, _ = _docs.source(ALL[name])
    assert f"``{path}``" in func.__doc__


def test_function_table_has_every_row():
    table = _reference.function_table()
    for name in ALL:
        assert f":func:`~daskcl.nmath.{name}`" in table
        if ALL[name].r_call:
            assert f"``{ALL[name].r_call}``" in table
        for alias in _docs.ALIASES.get(name, {}):
            assert f"``{alias}=``" in table
    assert table.count(".. list-table::") == len({_docs.group(n) for n in ALL})


def test_installation_page_gives_the_readmes_two_commands():
    from test_packaging import readme_commands

    page = (REPO / "docs" / "installation.rst").read_text()
    blocks = [b.strip() for b in re.findall(r"\.\. code-block:: sh\n\n   (.*?)\n\n", page, re.S)]
    assert blocks[:2] == readme_commands()
