# SPDX-License-Identifier: GPL-2.0-or-later
"""The R-agreement cases and f2_f3 give the same values on two or more fp64 devices.

One process per device (a process binds one device; tests/support/devices.py chooses the devices).  On
a machine with two distinct devices of its own (a GPU machine: GPU and PoCL) every case and flag
combination of tests/rcases is compared, point for point.  On a CPU-only machine (CI) the two
devices are PoCL's ``pthread`` and ``basic`` drivers, which share a compiler: there the cases
of :data:`PAIR_CASES` are compared, a few of each group and of each kind of row, so that every
kernel is still built for the second device but the suite stays a few minutes longer only.
"""

from __future__ import annotations

import pkgutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
import rcases
from rcases import all_cases
from support.devices import bit_differences, comparison_devices, disagreements, evaluate_everywhere
from test_glm import problem, reference

from daskcl.glm import FactorialGrid
from daskcl.kernels._nmath_table import ROWS

HERE = Path(__file__).resolve().parent
ROW = {fn.name: fn for fn in ROWS}

GROUPS = sorted(m.name for m in pkgutil.iter_modules(rcases.__path__) if hasattr(
    __import__(f"rcases.{m.name}", fromlist=["CASES"]), "CASES"))

#: the cases compared between PoCL's two drivers: in every group, densities, distribution
#: functions, quantiles and special functions, rows that classify their elements, and the
#: count-table rows (test_pair_cases_cover_every_kind checks that they do)
PAIR_CASES = frozenset({
    "dnorm", "pnorm", "qnorm",                                              # normal
    "dbinom[far-tails]", "dpois",                                           # loader
    "pbinom", "qpois[ties]",                                                # discrete
    "dexp", "pgamma[tails]", "qgamma[small-shape]",                         # continuous
    "pbeta[tiny]", "dt",                                                    # beta_t_f
    "lbeta", "digamma",                                                     # beta_psi
    "log1pmx", "lgamma1p",                                                  # special
    "bessel_k[large-nu]", "bessel_j[recurrence]",                           # bessel
    "pnchisq[large-ncp]", "dnt[boundaries]",                                # noncentral
    "qtukey[boundaries]",                                                   # tukey
    "dwilcox[large]", "pwilcox[all]", "psignrank[all]", "qsignrank[large]",  # wilcoxon
})

EVAL = textwrap.dedent("""
    import itertools, sys, warnings
    import numpy as np
    sys.path.insert(0, sys.argv[2]); sys.path.insert(0, sys.argv[3])
    from daskcl.runtime import device
    from daskcl import nmath
    from daskcl.kernels._nmath_table import ROWS
    import importlib
    ROW = {fn.name: fn for fn in ROWS}
    CASES = [c for c in importlib.import_module("rcases." + GROUP).CASES
             if IDS is None or c.id in IDS]
    out = {"__device__": np.array(device.current().info.describe())}
    warnings.simplefilter("ignore")
    for case in CASES:
        fn = ROW[case.name]
        keys = [py for py, _ in fn.flags]
        for values in itertools.product((False, True), repeat=len(keys)):
            flags = dict(zip(keys, values))
            key = case.id + "|" + ",".join(f"{k}={int(v)}" for k, v in flags.items())
            out[key] = np.asarray(getattr(nmath, case.name)(*case.axes(), **flags))
    np.savez(sys.argv[1], **out)
""")


def test_pair_cases_cover_every_kind():
    """Every name of PAIR_CASES is a case, and they hold a case of every group, of every kind
    of row (d, p, q, special), of a classified row and of a count-table row."""
    cases = {c.id: c for c in all_cases()}
    assert PAIR_CASES <= set(cases), sorted(PAIR_CASES - set(cases))
    rows = [ROW[cases[i].name] for i in PAIR_CASES]
    assert {fn.kind for fn in rows} == {fn.kind for fn in ROWS}
    assert any(fn.classify for fn in rows)
    assert any(fn.csym.endswith("_tab") for fn in rows)          # count tables
    for group in GROUPS:
        mod = __import__(f"rcases.{group}", fromlist=["CASES"])
        assert any(c.id in PAIR_CASES for c in mod.CASES), group


def test_comparisons_report_differences():
    """The comparisons of the cross-device tests fail on a value, a NaN or an infinity that
    differs, and on one bit where they compare bits."""
    a = np.array([[1.0, np.nan, np.inf], [0.25, -3.0, 1e-300]])
    assert disagreements("k", a, a.copy(), 2e-13, 0.0) is None
    assert bit_differences("k", a, a.copy()) is None
    for i, v in [((1, 1), -3.0 * (1 + 1e-12)), ((0, 1), 1.0), ((0, 2), -np.inf), ((0, 0), np.nan)]:
        b = a.copy()
        b[i] = v
        assert disagreements("k", a, b, 2e-13, 0.0) is not None, (i, v)
    b = a.copy()
    b[1, 1] = np.nextafter(-3.0, 0.0)
    assert disagreements("k", a, b, 2e-13, 0.0) is None       # within the tolerance
    assert "1 of 6 differ" in bit_differences("k", a, b)       # not the same bits
    assert disagreements("k", a, b * 2, 2e-13, 1.0) is not None  # beyond atol and rtol


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_devices_agree(group, tmp_path):
    """The cases of one module of tests/rcases (one test per module, so they run in parallel)."""
    ids = sorted(PAIR_CASES) if comparison_devices().pocl_pair else None
    results = evaluate_everywhere(f"GROUP = {group!r}\nIDS = {ids!r}\n" + EVAL, tmp_path)
    ref = results[0]
    cases = {c.id: c for c in all_cases()}
    failures = []
    compared = 0
    for other in results[1:]:
        assert other.keys() == ref.keys()
        for key, a in ref.items():
            if key == "__device__":
                continue
            case = cases[key.split("|")[0]]
            # each device is within rtol of R, so of each other within 2 rtol (or the atol)
            why = disagreements(key, a, other[key], 2 * case.rtol, 2 * case.atol)
            if why:
                failures.append(why)
            compared += a.size
    devices = [str(r["__device__"]) for r in results]
    assert not failures, f"devices {devices} disagree:\n" + "\n".join(failures[:30])
    print(f"compared {compared} values on {devices}")
    assert compared > 100  # the cases are not empty


#: f2_f3 problems: (family, link, tuning path, factorial grid); the first two are those compared
#: between PoCL's two drivers, where a build takes seconds (test_glm.py builds the same programs)
GLM_CASES = [
    ("binomial", "logit", "item", False),
    ("poisson", "log", "group", False),
    ("binomial", "probit", "tile", False),
    ("Gamma", "log", "item", True),
]
GLM_PAIR_CASES = GLM_CASES[:2]
#: the factorial grid of the cases that take one (l2 = 3, as the problem)
GRID = [[-0.5, 0.0, 0.3], [0.1, 0.4, 0.7], [-1.0, 1.0]]

GLM_EVAL = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[2]); sys.path.insert(0, sys.argv[3])
    from daskcl.runtime import device
    from daskcl.glm import FactorialGrid, Tuning, f2_f3
    from test_glm import problem
    out = {"__device__": np.array(device.current().info.describe())}
    for family, link, path, factorial in CASES:
        b, *rest = problem(family, 37, 3, 50, seed=3)
        if factorial:
            b = FactorialGrid(GRID)
        qf, grad = f2_f3(family, link, b, *rest, tuning=Tuning(path=path))
        out[f"{family}-{link}-{path}-{factorial}|qf"] = qf
        out[f"{family}-{link}-{path}-{factorial}|grad"] = grad
    np.savez(sys.argv[1], **out)
""")


@pytest.mark.slow
def test_f2_f3_devices_agree(tmp_path):
    """qf and its gradient through the item and group kernels (and, between two devices of the
    machine, the tile kernel and a factorial grid): each device is within 1e-12 (qf) and 1e-10
    (grad, relative to the magnitude of what it sums) of the reference of tests/glm/test_glm.py, so
    within twice that of the other."""
    cases = GLM_PAIR_CASES if comparison_devices().pocl_pair else GLM_CASES
    results = evaluate_everywhere(f"CASES = {cases!r}\nGRID = {GRID!r}\n" + GLM_EVAL, tmp_path)
    ref = results[0]
    failures = []
    for family, link, path, factorial in cases:
        key = f"{family}-{link}-{path}-{factorial}"
        b, *rest = problem(family, 37, 3, 50, seed=3)
        if factorial:
            b = np.asarray(FactorialGrid(GRID))
        _, grad_ref, scale = reference(family, link, b, *rest)
        for other in results[1:]:
            why = disagreements(f"{key}|qf", ref[f"{key}|qf"], other[f"{key}|qf"], 2e-12, 0.0)
            if why:
                failures.append(why)
            ga, gb = ref[f"{key}|grad"], other[f"{key}|grad"]
            assert ga.shape == gb.shape == grad_ref.shape
            err = np.abs(ga - gb) / (np.abs(grad_ref) + scale)
            if not err.max() <= 2e-10:
                j, k = np.unravel_index(int(np.argmax(err)), err.shape)
                failures.append(f"{key}|grad[{j}, {k}]: {ga[j, k]!r} vs {gb[j, k]!r}, "
                                f"{err[j, k]:.3g} of the sum's magnitude")
    devices = [str(r["__device__"]) for r in results]
    assert not failures, f"devices {devices} disagree:\n" + "\n".join(failures)
    print(f"compared f2_f3 of {[c[:3] for c in cases]} on {devices}")
