# SPDX-License-Identifier: GPL-2.0-or-later
"""A chunk that fails, whatever it raises, ends the sweep with one line (a SweepError naming
the chunk), keeps the finished chunks, and a resume computes only the rest; a store whose
coordinate arrays were damaged is found out (verify) and repaired (resume)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from daskcl.sweep import Sweep, SweepError, open_result, run

#: a Python function that raises (not an OSError, ValueError or RuntimeError) where x > 50,
#: while the file "fail" is beside it: the cause fixed, the same spec resumes
FAILING = '''\
import os

import numpy as np


def f(x: float, y: float) -> np.ndarray:
    if os.path.exists(os.path.join(os.path.dirname(__file__), "fail")) and np.any(x > 50):
        raise ZeroDivisionError("boom at x > 50")
    return x + y
'''


def _spec(tmp_path: Path) -> Sweep:
    return Sweep.from_dict({"sweep": {"function": "f.py:f", "chunks": {"x": 10}},
                            "axes": {"x": {"arange": [0, 100]}, "y": {"values": [1.0, 2.0]}}},
                           base=tmp_path)


def _failing_spec(tmp_path: Path) -> Sweep:
    (tmp_path / "f.py").write_text(FAILING)
    (tmp_path / "fail").write_text("")
    return _spec(tmp_path)


def _check_failed_then_resumed(tmp_path: Path, out: Path, client: object,
                               exc: pytest.ExceptionInfo[SweepError]) -> None:
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith("chunk (") and "failed: ZeroDivisionError: boom at x > 50" in msg
    assert msg.endswith("run again with --resume (a changed spec or function file is another "
                        "sweep, which --resume refuses: --overwrite starts it anew)")
    done = open_result(out)["_daskcl/done"][...].ravel()
    assert done[5:].tolist() == [0] * 5      # the failing chunks are not marked
    if client == "sync":                     # chunk after chunk: those before it are kept
        assert done[:5].tolist() == [1] * 5
    (tmp_path / "fail").unlink()
    res = run(_spec(tmp_path), out, client, resume=True)
    assert res.computed == 10 - res.skipped
    if client == "sync":
        assert res.skipped == 5
    else:   # a chunk still being written (or tried again) as the run stopped may be since
        assert res.skipped >= done.sum()
    x, y = np.arange(100.0), np.array([1.0, 2.0])
    np.testing.assert_array_equal(open_result(out)["f"][...], x[:, None] + y[None, :])


def test_a_chunk_failing_in_this_process_is_one_line_and_resumes(tmp_path: Path) -> None:
    """client="sync": the function's ZeroDivisionError was raised as it was (the command line
    printed its traceback); it is now the SweepError a cluster's chunk gives."""
    out = tmp_path / "o.zarr"
    with pytest.raises(SweepError) as exc:
        run(_failing_spec(tmp_path), out, client="sync")
    assert isinstance(exc.value.__cause__, ZeroDivisionError)
    _check_failed_then_resumed(tmp_path, out, "sync", exc)


def test_a_chunk_failing_on_a_cluster_with_any_error_is_one_line(tmp_path: Path) -> None:
    """Only OSError, ValueError and RuntimeError were said in a line: a ZeroDivisionError (or
    zarr's errors, which reach the client as a bare Exception) was a traceback."""
    from distributed import Client, LocalCluster

    out = tmp_path / "o.zarr"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        with pytest.raises(SweepError) as exc:
            run(_failing_spec(tmp_path), out, client)
        _check_failed_then_resumed(tmp_path, out, client, exc)


def _pnorm(tmp_path: Path) -> tuple[Sweep, Path]:
    spec = Sweep.from_dict({"sweep": {"function": "pnorm", "chunks": {"q": 4}},
                            "axes": {"q": {"linspace": [-2, 2, 9]},
                                     "sd": {"values": [1, 2]}}})
    out = tmp_path / "o.zarr"
    run(spec, out, client="sync")
    return spec, out


def test_damaged_coordinates_are_found_by_verify_and_written_again_by_resume(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The coordinate arrays have no checksums: one deleted read as zeros (its fill value),
    verify said every chunk matched (exit 0) and --resume left it so."""
    from daskcl import cli
    from daskcl.sweep.store import Store

    def damaged_coordinates(out: str) -> list[str]:
        return Store(out).damaged_coordinates()

    spec, out = _pnorm(tmp_path)
    (out / "q" / "c" / "0").unlink()                     # deleted: reads as its fill value
    np.testing.assert_array_equal(open_result(out)["q"][...], np.zeros(9))
    assert damaged_coordinates(str(out)) == ["q", "sd"]   # the axes are hashed together
    assert cli.main(["sweep", "verify", str(out)]) == 1
    said = capsys.readouterr().out
    assert "coordinate array(s) q, sd no longer hold the sweep's axes" in said
    (out / "sd" / "c" / "0").write_bytes(b"\x00" * 3)    # truncated: cannot be read
    assert damaged_coordinates(str(out)) == ["sd"]
    with pytest.warns(RuntimeWarning, match=r"coordinate array\(s\) q, sd no longer held"):
        res = run(spec, out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (0, 3)
    g = open_result(out)
    np.testing.assert_array_equal(g["q"][...], np.linspace(-2, 2, 9))
    assert g["sd"][...].tolist() == [1, 2] and g["sd"].dtype == np.int32
    assert damaged_coordinates(str(out)) == []
    assert cli.main(["sweep", "verify", str(out)]) == 0
    # a store left alone is not written again, and says nothing
    before = (out / "q" / "c" / "0").stat().st_mtime_ns
    run(spec, out, client="sync", resume=True)
    assert (out / "q" / "c" / "0").stat().st_mtime_ns == before


def test_a_long_axis_sent_to_a_cluster_does_not_warn_of_a_large_graph(tmp_path: Path) -> None:
    """The sweep travels to the workers once, as one task's argument: with an axis of 2^21
    values (16 MiB) distributed warned "Sending large graph of size 16.00 MiB ... Consider
    loading the data with Dask directly", advice that is not the user's to follow (an error
    here: the tests turn warnings into errors)."""
    from distributed import Client, LocalCluster

    n = 2**21
    spec = Sweep.from_dict({"sweep": {"function": "pnorm"},
                            "axes": {"q": {"linspace": [-4, 4, n]}}})
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        res = run(spec, tmp_path / "o.zarr", client)
    assert res.computed == 1
    got = open_result(tmp_path / "o.zarr")["pnorm"]
    assert got.shape == (n,) and got[n // 2 - 1] < 0.5 < got[n // 2]


def test_verify_names_a_store_with_spaces_as_a_shell_takes_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """verify's advice ``--resume --out dir with space/ünï.zarr`` split the path in a shell."""
    import shlex

    from daskcl import cli

    spec = Sweep.from_dict({"sweep": {"function": "pnorm", "chunks": {"q": 4}},
                            "axes": {"q": {"linspace": [-2, 2, 9]}}})
    out = tmp_path / "dir with space" / "ünï.zarr"
    run(spec, out, client="sync")
    (out / "pnorm" / "c" / "1").unlink()
    assert cli.main(["sweep", "verify", str(out)]) == 1
    said = capsys.readouterr()
    assert "1 of 3 finished chunks do not match" in said.out and "chunk (1,)" in said.out
    advice = said.err.strip().splitlines()[-1]
    assert shlex.split(advice.split(": ", 1)[1])[-2:] == ["--out", str(out)]


@pytest.mark.parametrize(("axis", "match"), [
    ({"values": [1.0, 9007199254740993]}, r"values: the integer 9007199254740993 is not exactly "
                                          r"a double"),
    ({"values": [10**400]}, r"the integer of 401 digits 100000000000\.\.\. is not exactly"),
    ({"arange": [9007199254740992, 9007199254741001, 3]}, r"the integer 9007199254741001"),
    ({"arange": [9007199254740992.0, 9007199254741000.0]}, r"not distinct as doubles"),
])
def test_axes_of_integers_no_double_holds_are_refused(axis, match):
    """An integer beyond 2^53 became the nearest double silently: the coordinates (and the
    parameters the functions saw) were not the spec's."""
    from daskcl.sweep.spec import parse_axis

    with pytest.raises(SweepError, match=match):
        parse_axis("n", axis, Path("."))
    # integers that doubles hold, and floats, are taken as they are
    assert parse_axis("n", {"values": [2**53, -(2**60), 0.5]}, Path(".")).values.tolist() == [
        2.0**53, -(2.0**60), 0.5]


def test_a_store_created_by_another_run_meanwhile_is_said_so(tmp_path: Path, monkeypatch) -> None:
    """Two runs started on one --out at once: both found nothing there, and the second to
    create the store was told "cannot write the store ...; choose a writable --out"."""
    from daskcl.sweep import store

    (tmp_path / "f.py").write_text(FAILING)
    out = tmp_path / "o.zarr"
    sweep = _spec(tmp_path)
    real = store.Store._create_group

    def create_after_the_other(self: store.Store, sweep: Sweep) -> None:
        real(store.Store(self.url), sweep)    # the other run, between the check and the create
        real(self, sweep)

    monkeypatch.setattr(store.Store, "_create_group", create_after_the_other)
    with pytest.raises(SweepError, match=r"o\.zarr was created by another run meanwhile \(two "
                       r"runs started on one --out at once\); let that run finish"):
        run(sweep, out, client="sync")
    assert (out / "zarr.json").is_file()      # the other run's store stays
