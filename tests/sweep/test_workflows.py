# SPDX-License-Identifier: GPL-2.0-or-later
"""The workflows of workflows/ttest_power and workflows/tukey_critical, run as shipped.

Each shipped spec is run through the real sweep (in-process, and once through the CLI) and its
zarr result is checked against facts that do not come from daskcl: textbook sample sizes
(Cohen), R's own ``power.t.test`` and libRmath, SciPy's independent algorithms, exact
identities, and a transcribed published table of studentized-range critical values
(workflows/tukey_critical/published_table.csv, whose header gives the sources).
"""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from scipy import stats
from support.rmath_oracle import r_eval

from daskcl import nmath
from daskcl.sweep import Sweep, open_result, run

ROOT = Path(__file__).resolve().parents[2]
POWER = ROOT / "workflows" / "ttest_power"
TUKEY = ROOT / "workflows" / "tukey_critical"


def _power_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ttest_power_power", POWER / "power.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _scipy_power(n: Any, d: Any, alpha: float = 0.05, kind: str = "two.sample",
                 alternative: str = "two.sided") -> np.ndarray:
    """The same power from SciPy's noncentral t (Boost), written out independently."""
    n, d = np.broadcast_arrays(np.asarray(n, float), np.asarray(d, float))
    df = 2 * n - 2 if kind == "two.sample" else n - 1
    ncp = d * np.sqrt(n / 2) if kind == "two.sample" else d * np.sqrt(n)
    if alternative == "one.sided":
        return np.asarray(stats.nct.sf(stats.t.isf(alpha, df), df, ncp))
    t = stats.t.isf(alpha / 2, df)
    # P[T' < -t | ncp] = P[T' > t | -ncp]: SciPy's nct.cdf is NaN deep in the lower tail.
    return np.asarray(stats.nct.sf(t, df, ncp) + stats.nct.sf(t, df, -ncp))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "daskcl", *args], capture_output=True,
                          text=True, timeout=300)


# --- t-test power -------------------------------------------------------------------------


def _check_power_table(n: np.ndarray, d: np.ndarray, pw: np.ndarray) -> None:
    """The shipped power table (two-sample, two-sided, alpha 0.05) against known facts."""
    assert pw.shape == (999, 201) and n[0] == 2 and n[-1] == 1000 and d[-1] == 2.0
    i = {v: k for k, v in enumerate(n.astype(int))}
    j = {round(v, 2): k for k, v in enumerate(d)}
    # d = 0: the power is the size of the test.
    np.testing.assert_allclose(pw[:, j[0.0]], 0.05, rtol=0, atol=1e-13)
    # R 4.2.2: power.t.test(n = 64, delta = 0.5, strict = TRUE)$power, and n = 26, delta = 0.8.
    assert pw[i[64], j[0.5]] == pytest.approx(0.801459557922328, abs=1e-12)
    assert pw[i[26], j[0.8]] == pytest.approx(0.8074866151471, abs=1e-12)
    # Cohen (1988; 1992, Table 2): 80 % power at alpha = 0.05 needs 64 per group for a medium
    # effect (d = 0.5) and 26 for a large one (d = 0.8).  For d = 0.2 R's
    # power.t.test(delta = 0.2, power = 0.8) gives n = 393.41, so the first n is 394.
    for dv, first in ((0.5, 64), (0.8, 26), (0.2, 394)):
        col = pw[:, j[dv]]
        assert col[i[first]] >= 0.8 > col[i[first - 1]], dv
    # Power grows with n and with d (up to pnt's accuracy: R's AS 243 stops at errmax = 1e-12;
    # near power 1 neighbours differ by ~1e-13 either way).
    assert (np.diff(pw[:, 1:], axis=0) > -1e-12).all()
    assert (np.diff(pw, axis=1) > -1e-12).all()
    # The whole grid against SciPy's noncentral t.
    want = _scipy_power(n[:, None], d[None, :])
    np.testing.assert_allclose(pw, want, rtol=0, atol=1e-9)


def test_power_sweep(tmp_path: Path) -> None:
    s = Sweep.from_toml(POWER / "power.toml")
    assert s.args == {"alpha": 0.05, "two_sample": 1, "two_sided": 1}
    res = run(s, tmp_path / "out.zarr", client="sync")
    assert res.computed == s.n_chunks == 4
    g = open_result(tmp_path / "out.zarr")
    assert g["power"].metadata.dimension_names == ("n", "d")
    assert g.attrs["daskcl_function"] == "[kernel] power"
    n, d, pw = g["n"][...], g["d"][...], g["power"][...]
    _check_power_table(n, d, pw)
    # the fused kernel gives the bits of the same expression composed of daskcl.nmath calls
    nn, dd = n[:, None].astype(np.float64), d[None, :]
    df, ncp = 2.0 * nn - 2.0, dd * np.sqrt(nn / 2.0)
    t = nmath.qt(0.025, df, lower_tail=False)
    assert np.array_equal(pw, nmath.pnt(t, df, ncp, lower_tail=False) + nmath.pnt(-t, df, ncp))


def test_power_cli_runs_the_shipped_spec(tmp_path: Path) -> None:
    out = tmp_path / "power.zarr"
    r = _cli("sweep", str(POWER / "power.toml"), "--out", str(out), "--sync", "-q")
    assert r.returncode == 0, r.stderr
    assert "4 chunks computed" in r.stdout
    g = open_result(out)
    n, d, pw = g["n"][...], g["d"][...], g["power"][...]
    # The sweep equals the plain NumPy call: chunking changes nothing.
    assert np.array_equal(pw, _power_module().power(n[:, None], d[None, :]))
    i, j = int(np.flatnonzero(n == 64)[0]), int(np.argmin(abs(d - 0.5)))
    assert pw[i, j] == pytest.approx(0.801459557922328, abs=1e-12)


def test_power_other_designs(tmp_path: Path) -> None:
    """kind = "paired" / "one.sample" and one-sided tests, through a sweep of power.py."""
    n, d = [14.0, 15.0, 20.0, 33.0, 34.0, 198.0, 199.0], [0.0, 0.2, 0.5, 0.8]
    mod = _power_module()
    for kind in ("paired", "one.sample"):
        for alt in ("two.sided", "one.sided"):
            spec = {"sweep": {"function": "power.py:power"},
                    "axes": {"n": {"values": n}, "d": {"values": d}},
                    "args": {"alpha": 0.05, "kind": kind, "alternative": alt}}
            out = tmp_path / f"{kind}-{alt}.zarr"
            run(Sweep.from_dict(spec, POWER), out, client="sync")
            pw = open_result(out)["power"][...]
            np.testing.assert_allclose(pw, _scipy_power(np.array(n)[:, None], d, 0.05, kind, alt),
                                       rtol=0, atol=1e-10)
            np.testing.assert_allclose(pw[:, 0], 0.05, atol=1e-13)  # d = 0: the size
            if alt == "two.sided":
                # R: power.t.test(delta = d, power = 0.8, type = "paired", strict = TRUE)$n
                # = 14.30, 33.37, 198.15 for d = 0.8, 0.5, 0.2.
                for dv, first in ((0.8, 15), (0.5, 34), (0.2, 199)):
                    col = pw[:, d.index(dv)]
                    assert col[n.index(first)] >= 0.8 > col[n.index(first - 1)]
            else:
                # R: power.t.test(n = 20, delta = 0.5, type = "one.sample",
                #                 alternative = "one.sided")$power
                assert pw[n.index(20.0), d.index(0.5)] == pytest.approx(0.695149338244658,
                                                                        abs=1e-12)
    assert float(mod.power(10, 0.5, kind="one.sample")) == float(mod.power(10, 0.5, kind="paired"))
    # dask in, lazy dask out; device in, device out (np.asarray computed the dask array at once
    # and failed on a device array), the same values
    import dask.array as da
    import pyopencl.array as cla

    from daskcl.runtime import device

    n = np.array([64.0, 26.0, 10.0])
    want = mod.power(n, 0.5)
    lazy = mod.power(da.from_array(n, chunks=1), 0.5)
    assert isinstance(lazy, da.Array) and np.array_equal(lazy.compute(), want)
    on_dev = mod.power(cla.to_device(device.current().queue, n), 0.5)
    assert isinstance(on_dev, cla.Array) and np.array_equal(on_dev.get(), want)
    with pytest.raises(ValueError, match="kind must be one of"):
        mod.power(10, 0.5, kind="welch")
    with pytest.raises(ValueError, match="alternative must be one of"):
        mod.power(10, 0.5, alternative="less")


def test_the_docs_say_how_power_toml_computes() -> None:
    """docs/workflows.rst said power.toml works "through the Python function of power.py";
    the spec is a [kernel] table (no function), and power.py calls that same kernel."""
    import re
    import tomllib

    spec = tomllib.loads((POWER / "power.toml").read_text())
    assert "kernel" in spec and "function" not in spec.get("sweep", {})
    page = (ROOT / "docs" / "workflows.rst").read_text()
    section = re.search(r"t-test power \(``workflows/ttest_power``\)\n-+\n(.*?)\n\.\. ",
                        page, re.S)
    assert section is not None
    text = " ".join(section.group(1).split())
    assert "Python function" not in text
    assert "through the fused kernel of its ``[kernel]`` table" in text
    assert "``power.py`` calls the same kernel" in text
    # which it does: power.py's kernel is the spec's table, and gives the sweep's values
    mod = _power_module()
    k = mod.kernel()
    assert (k.definition.outputs, k.name) == (("power",), "power")
    s = Sweep.from_toml(POWER / "power.toml")
    assert s.func is not None and s.func.kernel.definition == k.definition
    n, d = np.array([26.0, 64.0]), np.array([0.8, 0.5])
    np.testing.assert_allclose(mod.power(n, d), [0.8074866151471, 0.801459557922328],
                               rtol=0, atol=1e-12)


# --- Tukey critical values ----------------------------------------------------------------


def _published() -> list[dict[str, Any]]:
    """The rows of published_table.csv, with the printed precision of each value."""
    with open(TUKEY / "published_table.csv", newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    out = []
    for r in rows:
        text = r["q"]
        out.append({"p": float(r["p"]), "nmeans": int(r["nmeans"]), "df": float(r["df"]),
                    "q": float(text), "ulp": 10.0 ** -len(text.partition(".")[2]),
                    "source": r["source"]})
    return out


def _r_accurate(p: float, df: float) -> bool:
    """Where R's qtukey (hence daskcl's) reaches the printed tables' precision: not at df < 3
    (NaN at df = 1; up to 17 % off at df = 2), nor at df = 3 for p = 0.99 (up to 0.9 %)."""
    return df >= 4 or (df == 3 and p < 0.99)


#: R's qtukey stops its secant iteration when a step is below eps = 0.0001 (R's qtukey.c):
#: results are good to about 4 decimals, so a printed value agrees within a unit of its last
#: digit (the tables' own accuracy) plus R's 1e-4.
R_EPS = 1e-4


@pytest.mark.slow
def test_published_table_is_sound() -> None:
    rows = _published()
    assert len(rows) == 320 and {r["source"] for r in rows} == {"harter1960", "hyperstat"}
    assert {r["p"] for r in rows} == {0.90, 0.95, 0.99}
    # The values where R cannot check the transcription, against SciPy's independent algorithm
    # (the others are checked against R in test_tukey_sweep_matches_published_table).
    for r in rows:
        if not _r_accurate(r["p"], r["df"]):
            q = stats.studentized_range.ppf(r["p"], r["nmeans"], r["df"])
            assert abs(q - r["q"]) <= r["ulp"], (r, q)


@pytest.mark.r
@pytest.mark.slow
def test_tukey_sweep_matches_published_table(tmp_path: Path) -> None:
    s = Sweep.from_toml(TUKEY / "tukey.toml")
    res = run(s, tmp_path / "out.zarr", client="sync")
    assert res.computed == 3
    g = open_result(tmp_path / "out.zarr")
    q = g["q"][...]
    p, nm, df = g["p"][...], g["nmeans"][...], g["df"][...]
    assert q.shape == (3, 19, 24) and g["q"].metadata.dimension_names == ("p", "nmeans", "df")
    assert nm.tolist() == list(range(2, 21)) and df[0] == 3 and np.isinf(df[-1])
    assert np.isfinite(q).all()
    # daskcl is R: the whole table against libRmath.
    want = r_eval("qtukey", [p[:, None, None], 1, nm[None, :, None], df[None, None, :]], [1, 0])
    np.testing.assert_allclose(q, want, rtol=1e-12)
    # The published table, to its printed precision.
    at = {(a, b, c): q[i, j, k] for i, a in enumerate(p) for j, b in enumerate(nm)
          for k, c in enumerate(df)}
    checked = 0
    for r in _published():
        key = (r["p"], r["nmeans"], r["df"])
        if key not in at:
            continue  # df = 1, 2: not in the sweep (test_tukey_rows_left_out)
        got = at[key]
        if _r_accurate(r["p"], r["df"]):
            assert abs(got - r["q"]) <= r["ulp"] + R_EPS, (r, got)
            checked += 1
        else:  # df = 3, p = 0.99: R's known error, documented in the README
            assert abs(got - r["q"]) < 0.01 * r["q"], (r, got)
    assert checked == 273
    # An exact fact: the range of two normals is sqrt(2) |Z|, so q(p; 2, df) = sqrt(2) t, t the
    # (1 + p)/2 quantile of Student's t; to R's 4 significant digits (worst: 3e-5 at df = 4).
    np.testing.assert_allclose(q[:, 0, :], np.sqrt(2) * nmath.qt((1 + p[:, None]) / 2, df),
                               rtol=5e-5)
    # Critical values grow with the number of means and shrink with the error df.
    assert (np.diff(q, axis=1) > 0).all() and (np.diff(q, axis=2) < 0).all()


@pytest.mark.r
def test_tukey_rows_left_out() -> None:
    """Why the spec starts at df = 3: R's qtukey is NaN at df = 1 and wrong at df = 2."""
    with pytest.warns(RuntimeWarning, match="NaN"):
        q1 = nmath.qtukey(0.95, 1, np.arange(2, 21), 1)
    assert np.isnan(q1).all()
    assert np.isnan(r_eval("qtukey", [0.95, 1, 3, 1], [1, 0]))  # R itself
    # df = 2, p = 0.99: published 31.69 (nmeans = 10), SciPy 31.689; R and daskcl say 34.93.
    q2 = nmath.qtukey(0.99, 1, 10, 2)
    assert float(q2) == pytest.approx(float(r_eval("qtukey", [0.99, 1, 10, 2], [1, 0])),
                                      rel=1e-12)
    assert abs(float(q2) - 31.69) > 3
