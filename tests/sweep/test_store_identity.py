# SPDX-License-Identifier: GPL-2.0-or-later
"""A store's identity covers everything that decides its values: a resume never mixes sweeps."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from daskcl.sweep import Sweep, SweepError, functions, open_result, run, runner, store, verify

_FUNC = """\
import helper_{tag}
import numpy as np

def g(x):
    with open({data!r}) as f:
        scale = float(f.read())
    return helper_{tag}.offset(x) * scale
"""


def _python_sweep(tmp_path: Path, tag: str) -> tuple[Sweep, Path, Path]:
    """A spec whose function imports a module beside it and reads a data file."""
    helper, data = tmp_path / f"helper_{tag}.py", tmp_path / "scale.txt"
    helper.write_text("def offset(x):\n    return x + 1.0\n")
    data.write_text("1.0\n")
    (tmp_path / "f.py").write_text(_FUNC.format(tag=tag, data=str(data)))
    spec = {"sweep": {"function": "f.py:g", "chunks": {"x": 2}},
            "axes": {"x": {"linspace": [0.0, 7.0, 8]}}}
    return Sweep.from_dict(spec, tmp_path), helper, data


def _stop_after(monkeypatch: Any, n: int) -> None:
    """Ctrl-C once ``n`` chunks are written: a run stopped half-way."""
    real = store.Store.write_chunk
    calls: list[int] = []

    def write(*args: Any) -> None:
        calls.append(1)
        if len(calls) > n:
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(store.Store, "write_chunk", write)


def _stopped_half_way(s: Sweep, tmp_path: Path, monkeypatch: Any) -> None:
    """Run ``s`` into ``tmp_path / "o.zarr"`` until two chunks are written (its modules
    importable from ``tmp_path`` then and after)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _stop_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        run(s, tmp_path / "o.zarr", client="sync")
    monkeypatch.undo()
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.parametrize("what", ["module", "data"])
def test_resume_refuses_after_an_imported_module_or_a_read_file_changed(
        tmp_path: Path, monkeypatch: Any, what: str) -> None:
    """The store held [1, 2, 3, 4, 5000, 6000, 7000, 8000] and verify passed: two chunks with
    the module (or data) before an edit, two after."""
    import sys

    s, helper, data = _python_sweep(tmp_path, f"{what}_{id(tmp_path)}")
    _stopped_half_way(s, tmp_path, monkeypatch)
    if what == "module":
        helper.write_text("def offset(x):\n    return (x + 1.0) * 1000.0\n")
        changed = helper
    else:
        data.write_text("1000.0\n")
        changed = data
    for name in [m for m in sys.modules if m.startswith("helper_")]:
        del sys.modules[name]    # a new process would import the edited module
    monkeypatch.setattr(functions, "_SOURCE_MODULES", {})
    s2 = Sweep.from_dict(s.spec, tmp_path)
    with pytest.raises(SweepError, match=re.escape(
            f"files that f.py:g read for the finished chunks differ now: {changed} changed; "
            "resume needs the same code and data")):
        run(s2, tmp_path / "o.zarr", client="sync", resume=True)
    # the finished chunks are as they were; --overwrite computes them all anew
    res = run(s2, tmp_path / "o.zarr", client="sync", overwrite=True)
    assert res.computed == 4
    want = (np.arange(8.0) + 1.0) * 1000.0
    np.testing.assert_array_equal(open_result(tmp_path / "o.zarr")["g"][...], want)


_USES = {
    "import": "import {m}\n\ndef g(x):\n    return {m}.offset(x)\n",
    "from": "from {m} import offset\n\ndef g(x):\n    return offset(x)\n",
    "in_the_function": "def g(x):\n    import {m}\n    return {m}.offset(x)\n",
    "through_a_module": "import {m}_outer\n\ndef g(x):\n    return {m}_outer.offset(x)\n",
}


@pytest.mark.parametrize("how", list(_USES))
def test_resume_refuses_after_a_module_imported_before_the_run_changed(
        tmp_path: Path, monkeypatch: Any, how: str) -> None:
    """A module the process had imported before the run (a notebook that tried it first, a
    worker's earlier sweep) raised no audit event: the store held [1, 2, 3, 4, 5000, 6000,
    7000, 8000] and verify passed.  Imported by the file, in its function, or through another
    local module, it is recorded all the same."""
    import importlib
    import sys

    tag = f"pre_{how}_{id(tmp_path)}"
    helper = tmp_path / f"{tag}.py"
    helper.write_text("def offset(x):\n    return x + 1.0\n")
    (tmp_path / f"{tag}_outer.py").write_text(f"from {tag} import offset\n")
    (tmp_path / "f.py").write_text(_USES[how].format(m=tag))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(f"{tag}_outer")     # and so the helper: both in sys.modules now
    s = Sweep.from_dict({"sweep": {"function": "f.py:g", "chunks": {"x": 2}},
                         "axes": {"x": {"linspace": [0.0, 7.0, 8]}}}, tmp_path)
    _stopped_half_way(s, tmp_path, monkeypatch)
    helper.write_text("def offset(x):\n    return (x + 1.0) * 1000.0\n")
    for name in [m for m in sys.modules if m.startswith(tag)]:
        del sys.modules[name]
    monkeypatch.setattr(functions, "_SOURCE_MODULES", {})
    with pytest.raises(SweepError, match=re.escape(f"differ now: {helper} changed")):
        run(Sweep.from_dict(s.spec, tmp_path), tmp_path / "o.zarr", client="sync", resume=True)


def test_resume_after_the_same_inputs_goes_on(tmp_path: Path, monkeypatch: Any) -> None:
    s, _, _ = _python_sweep(tmp_path, f"same_{id(tmp_path)}")
    _stopped_half_way(s, tmp_path, monkeypatch)
    res = run(Sweep.from_dict(s.spec, tmp_path), tmp_path / "o.zarr", client="sync",
              resume=True)
    assert 0 < res.computed < 4 and res.computed + res.skipped == 4
    np.testing.assert_array_equal(open_result(tmp_path / "o.zarr")["g"][...],
                                  np.arange(8.0) + 1.0)
    assert verify(str(tmp_path / "o.zarr"))[1:] == ([], [])


def _nmath_spec(**args: Any) -> dict[str, Any]:
    return {"sweep": {"function": "pnorm", "chunks": {"q": 4}},
            "axes": {"q": {"linspace": [-3.0, 3.0, 12]}}, "args": args}


def test_resume_under_other_settings_that_change_bits_is_refused(
        tmp_path: Path, monkeypatch: Any) -> None:
    """DASKCL_FP_CONTRACT=1 changes values: a resume under it mixed contracted and
    uncontracted chunks while the store recorded fp_contract off."""
    out = tmp_path / "o.zarr"
    _stop_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        run(Sweep.from_dict(_nmath_spec()), out, client="sync")
    monkeypatch.undo()
    monkeypatch.setenv("DASKCL_FP_CONTRACT", "1")
    with pytest.raises(SweepError, match="the settings that change values "
                       r"\(fp_contract, accuracy\) differ"):
        run(Sweep.from_dict(_nmath_spec()), out, client="sync", resume=True)
    monkeypatch.delenv("DASKCL_FP_CONTRACT")
    res = run(Sweep.from_dict(_nmath_spec()), out, client="sync", resume=True)
    assert 0 < res.computed < 3 and res.computed + res.skipped == 3


def test_a_process_with_other_settings_does_not_compute_a_chunk(monkeypatch: Any) -> None:
    """A worker started with settings other than the run's would write values of another
    sweep into the store: its chunk fails instead."""
    s = Sweep.from_dict(_nmath_spec())
    s.identity()
    monkeypatch.setenv("DASKCL_FP_CONTRACT", "1")
    with pytest.raises(SweepError, match=r"this process computes with \{'fp_contract': True"):
        runner._compute(s, (0,))


def test_arguments_equal_as_numbers_are_one_sweep(tmp_path: Path) -> None:
    """[args] mean = 0 respelt mean = 0.0 was refused as a different sweep."""
    a = Sweep.from_dict(_nmath_spec(mean=0, sd=1))
    b = Sweep.from_dict(_nmath_spec(mean=0.0, sd=1.0))
    assert a.identity() == b.identity()
    assert a.identity() != Sweep.from_dict(_nmath_spec(mean=0.5, sd=1.0)).identity()
    run(a, tmp_path / "o.zarr", client="sync")
    assert run(b, tmp_path / "o.zarr", client="sync", resume=True).computed == 0


def _edit_meta(path: Path, edit: Any) -> None:
    meta = json.loads(path.read_text())
    edit(meta)
    path.write_text(json.dumps(meta))


@pytest.mark.parametrize("edit", [
    lambda m: m.update(data_type="float32"),
    lambda m: m.update(shape=[6]),
    lambda m: m.update(shape=[24]),
    lambda m: m["codecs"].pop(),
], ids=["float32", "shape-6", "shape-24", "codec"])
@pytest.mark.parametrize("where", ["array", "consolidated"])
def test_retyped_or_reshaped_arrays_are_named_by_verify_and_resume(
        tmp_path: Path, edit: Any, where: str) -> None:
    """A result array's zarr.json edited from float64 to float32, or its shape from 12 to 6 or
    24: verify said every chunk matched, resume computed nothing, and the data were unreadable
    or cut (the checksums cover the chunks' bytes, not what they mean)."""
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_nmath_spec()), out, client="sync")
    if where == "array":
        _edit_meta(out / "pnorm" / "zarr.json", edit)
    else:
        _edit_meta(out / "zarr.json",
                   lambda m: edit(m["consolidated_metadata"]["metadata"]["pnorm"]))
    said = re.escape(f"{out}: the array 'pnorm' is not as the sweep wrote it")
    with pytest.raises(SweepError, match=said):
        verify(str(out))
    with pytest.raises(SweepError, match=said):
        run(Sweep.from_dict(_nmath_spec()), out, client="sync", resume=True)
    assert run(Sweep.from_dict(_nmath_spec()), out, client="sync", overwrite=True).computed == 3
    assert verify(str(out))[1:] == ([], [])


def test_a_spec_sets_the_accuracy_of_its_chunks(tmp_path: Path) -> None:
    """[sweep] accuracy = "best": every chunk is computed in that mode, whatever the run's
    configuration, and the mode is part of the store's identity."""
    from daskcl import config, nmath

    base = {"sweep": {"function": "pnt", "chunks": {"q": 2}},
            "axes": {"q": {"values": [-5.0, -2.0, 0.5, 6.0]}}, "args": {"df": 50.0, "ncp": 3.0}}
    best = Sweep.from_dict({**base, "sweep": {**base["sweep"], "accuracy": "best"}})
    assert "setting   accuracy = 'best'" in best.plan()
    out = tmp_path / "o.zarr"
    run(best, out, client="sync")
    q = np.array([-5.0, -2.0, 0.5, 6.0])
    with config.set(accuracy="best"):
        want = nmath.pnt(q, 50.0, 3.0)
    np.testing.assert_array_equal(open_result(out)["pnt"][...], want)
    assert not np.array_equal(want, nmath.pnt(q, 50.0, 3.0))   # R's differs at -5
    with pytest.raises(SweepError, match="the settings that change values"):
        run(Sweep.from_dict(base), out, client="sync", resume=True)
    with pytest.raises(SweepError, match=r"sweep\.accuracy: must be \"r\" or \"best\""):
        Sweep.from_dict({**base, "sweep": {**base["sweep"], "accuracy": "exact"}})
