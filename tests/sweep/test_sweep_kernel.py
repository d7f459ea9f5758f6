# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweeps of a kernel of your own: a spec's [kernel] table in place of a function, each output
an array of the store, resumed like any sweep, validated before anything is computed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import zarr

from daskcl import nmath
from daskcl.errors import SweepError
from daskcl.sweep import Sweep, open_result, run, runner
from daskcl.sweep.functions import _Func

SPEC = {
    "sweep": {"name": "tails", "chunks": {"q": 7, "df": 2}},
    "kernel": {
        "inputs": "double q, double df, int log_scale",
        "outputs": "double lower, double upper",
        "operation": "lower = pt(q, df, 1, log_scale); upper = pt(q, df, 0, log_scale);",
    },
    "axes": {"q": {"linspace": [-6, 6, 25]}, "df": {"values": [1, 2.5, 10, 300]}},
    "args": {"log_scale": 0},
}


def test_a_kernel_sweep_writes_each_output_and_resumes(tmp_path: Path, monkeypatch):
    s = Sweep.from_dict(SPEC, tmp_path)
    assert s.output_names == ("lower", "upper") and s.n_chunks == 8
    assert [o.name for o in s.outputs] == ["lower", "upper"]
    out = tmp_path / "t.zarr"
    # an interrupted sweep: three chunks, then a failure
    done = []
    real = runner.evaluate_chunk

    def failing(self, index):
        if len(done) == 3:
            raise KeyboardInterrupt
        done.append(index)
        return real(self, index)

    monkeypatch.setattr(runner, "evaluate_chunk", failing)
    with pytest.raises(KeyboardInterrupt):
        run(s, out, client="sync")
    monkeypatch.setattr(runner, "evaluate_chunk", real)
    res = run(s, out, client="sync", resume=True)
    assert res.computed == 5 and res.skipped == 3
    g = open_result(out)
    q, df = g["q"][...], g["df"][...]
    assert g["lower"].metadata.dimension_names == ("q", "df")
    want_lo = nmath.pt(q[:, None], df[None, :])
    want_hi = nmath.pt(q[:, None], df[None, :], lower_tail=False)
    assert np.array_equal(g["lower"][...], want_lo)
    assert np.array_equal(g["upper"][...], want_hi)
    assert g.attrs["daskcl_function"] == "[kernel] tails"


def test_a_changed_operation_refuses_resume(tmp_path: Path):
    out = tmp_path / "t.zarr"
    run(Sweep.from_dict(SPEC, tmp_path), out, client="sync")
    changed = {**SPEC, "kernel": {**SPEC["kernel"], "operation":
                                  "lower = pt(q, df, 1, log_scale); upper = 1.0 - lower;"}}
    with pytest.raises(SweepError, match="kernel source"):
        run(Sweep.from_dict(changed, tmp_path), out, client="sync", resume=True)


def test_a_kernel_of_a_library_tree_from_a_spec_file(tmp_path: Path):
    lib = tmp_path / "mylib"
    lib.mkdir()
    (lib / "half_normal.cl").write_text(textwrap.dedent("""\
        // SPDX-License-Identifier: GPL-2.0-or-later
        // @provides: phalfnorm
        // @depends: pnorm
        // The half-normal distribution function: 2 Phi(x / s) - 1 for x >= 0.
        double phalfnorm(double x, double s)
        {
            return x < 0 ? 0.0 : 1.0 - 2.0 * pnorm5(x, 0.0, s, 0, 0);
        }
        """))
    from daskcl.runtime.library import get_library

    get_library([str(lib)]).write_index(root=lib)
    spec = tmp_path / "half.toml"
    spec.write_text(textwrap.dedent("""\
        [sweep]
        name = "half"
        [kernel]
        inputs = "double x, double s"
        outputs = "double p"
        operation = "p = phalfnorm(x, s);"
        library = "mylib"
        [axes]
        x = { linspace = [0, 4, 9] }
        s = { values = [0.5, 1, 2] }
        """))
    s = Sweep.from_toml(spec)
    run(s, tmp_path / "h.zarr", client="sync")
    g = zarr.open_group(str(tmp_path / "h.zarr"), mode="r")
    x, sd = g["x"][...][:, None], g["s"][...][None, :]
    np.testing.assert_allclose(g["p"][...], 1.0 - 2.0 * nmath.pnorm(x, 0.0, sd, lower_tail=False),
                               rtol=0, atol=1e-15)
    assert s.func is not None and [k.name for k in s.func.warm_names()] == ["half"]


@pytest.mark.parametrize(("change", "match"), [
    ({"kernel": {"inputs": "double q", "outputs": "double y", "operation": "y = q;"},
      "sweep": {"function": "pnorm"}}, "not both"),
    ({"kernel": {"inputs": "double q", "outputs": "double y"}}, r"\['operation'\] must be given"),
    ({"kernel": {"inputs": "double q", "outputs": "double y", "operation": "y = q;",
                 "colour": 1}}, "unknown keys"),
    ({"kernel": {"inputs": "float q", "outputs": "double y", "operation": "y = q;"}},
     "'TYPE NAME' items"),
    ({"kernel": {"inputs": "double q", "outputs": "double y", "operation": "y = q;",
                 "library": "no/such/dir"}}, "is not a directory"),
])
def test_kernel_tables_are_validated(tmp_path: Path, change, match):
    spec = {**SPEC, **change}
    if "function" not in change.get("sweep", {}):
        spec["sweep"] = SPEC["sweep"]
    with pytest.raises(SweepError, match=match):
        Sweep.from_dict({**spec, "axes": {"q": {"values": [1.0]}}, "args": {}}, tmp_path)


def test_kernel_inputs_are_checked_against_axes_and_args(tmp_path: Path):
    with pytest.raises(SweepError, match=r"needs \['log_scale'\]"):
        Sweep.from_dict({**SPEC, "args": {}}, tmp_path)
    with pytest.raises(SweepError, match="takes an integer or true/false here"):
        Sweep.from_dict({**SPEC, "args": {"log_scale": 0.5}}, tmp_path)
    with pytest.raises(SweepError, match="has no parameter 'nu'"):
        Sweep.from_dict({**SPEC, "args": {"log_scale": 0, "nu": 1.0}}, tmp_path)
    assert _Func.from_kernel(SPEC["kernel"], tmp_path, "x").params == ("q", "df", "log_scale")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_ctrl_c_lost_in_a_finalizer_still_stops_the_run(tmp_path: Path, monkeypatch):
    """Python swallows an exception raised while a finalizer runs (the CLI's Ctrl-C once
    landed in a distributed future's ``__del__``, and the sweep ran to its end, exit 0): the
    run notices the Ctrl-C at the next finished chunk, and the chunks done are kept."""
    import signal

    s = Sweep.from_dict(SPEC, tmp_path)
    out = tmp_path / "t.zarr"
    done = []
    real = runner.evaluate_chunk

    class CtrlCWhileFinalized:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)   # its KeyboardInterrupt is lost here

    def evaluate(self, index):
        done.append(index)
        if len(done) == 2:
            obj = CtrlCWhileFinalized()
            del obj
        return real(self, index)

    monkeypatch.setattr(runner, "evaluate_chunk", evaluate)
    # Python's own handler, as in a fresh process (an earlier test of this process may have
    # left another: the run leaves a handler that is not Python's alone)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run(s, out, client="sync")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    assert len(done) < s.n_chunks
    monkeypatch.setattr(runner, "evaluate_chunk", real)
    res = run(s, out, client="sync", resume=True)
    assert res.skipped >= 1 and res.computed + res.skipped == s.n_chunks


KERNEL_ALONE = textwrap.dedent("""\
    [kernel]
    name = "power"
    inputs = "double n, double d, double alpha"
    outputs = "double power"
    operation = '''
    double df = 2 * n - 2, ncp = d * sqrt(n / 2), c = qt(alpha / 2, df, 0, 0);
    power = pnt(c, df, ncp, 0, 0) + pnt(-c, df, ncp, 1, 0);
    '''
    [axes]
    n = { values = [5, 10, 64] }
    d = { values = [0.5, 1.0] }
    [args]
    alpha = 0.05
    """)


def test_a_kernel_table_alone_is_a_spec(tmp_path: Path, capsys):
    """The spec module's own example: [kernel], [axes] and [args], no [sweep] table.  It was
    refused ("a [sweep] table with function = ... (or a [kernel] table) is needed") unless an
    empty [sweep] line was added."""
    from daskcl import cli

    spec = tmp_path / "k.toml"
    spec.write_text(KERNEL_ALONE)
    s = Sweep.from_toml(spec)
    assert s.function == "[kernel] power" and s.output_names == ("power",)
    assert s.shape == (3, 2) and "sweep" not in s.spec
    assert cli.main(["sweep", str(spec), "--out", str(tmp_path / "k.zarr"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "function  [kernel] power" in out and "(new)" in out
    assert not (tmp_path / "k.zarr").exists()
    res = run(s, tmp_path / "k.zarr", client="sync")
    assert (res.computed, res.skipped) == (1, 0)
    g = open_result(tmp_path / "k.zarr")
    n, d = np.array([5.0, 10.0, 64.0])[:, None], np.array([0.5, 1.0])[None, :]
    df, ncp = 2 * n - 2, d * np.sqrt(n / 2)
    c = nmath.qt(0.025, df, lower_tail=False)
    want = nmath.pt(c, df, ncp=ncp, lower_tail=False) + nmath.pt(-c, df, ncp=ncp)
    np.testing.assert_allclose(g["power"][...], want, rtol=1e-13, atol=0)
    assert g["power"][2, 0] == pytest.approx(0.8014595579223276, abs=1e-12)  # R power.t.test
    # a [sweep] that is not a table is still refused
    with pytest.raises(SweepError, match=r"a \[sweep\] table with function"):
        Sweep.from_dict({"sweep": 3, "kernel": SPEC["kernel"], "axes": SPEC["axes"],
                         "args": SPEC["args"]}, tmp_path)
