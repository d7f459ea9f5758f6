# SPDX-License-Identifier: GPL-2.0-or-later
"""Sweep specs and their zarr stores, computed in-process (client="sync").

The distributed runs (local clusters, `daskcl worker`, killed workers) are in
test_distributed.py.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import zarr
from support.procs import run_python

from daskcl import glm, nmath
from daskcl.runtime.library import default_root
from daskcl.sweep import Sweep, SweepError, open_result, run
from daskcl.sweep.journal import record
from daskcl.sweep.store import read_info

ROOT = Path(__file__).resolve().parents[2]
BUDWORM = ROOT / "workflows" / "glm_envelope"


def _spec(**over: object) -> dict:
    spec: dict = {
        "sweep": {"function": "pgamma", "chunks": {"q": 8, "shape": 3}},
        "axes": {"q": {"linspace": [0.0, 20.0, 21]}, "shape": {"values": [0.5, 1.0, 2.5, 10.0]}},
        "args": {"scale": 0.5, "lower_tail": False, "log_p": True},
    }
    for key, value in over.items():
        spec[key] = value
    return spec


def test_values_equal_the_numpy_call(tmp_path: Path) -> None:
    s = Sweep.from_dict(_spec())
    assert s.shape == (21, 4) and s.chunks == (8, 3) and s.grid == (3, 2)
    res = run(s, tmp_path / "g.zarr", client="sync")
    assert (res.computed, res.skipped) == (6, 0)
    q, shape = np.linspace(0, 20, 21), np.array([0.5, 1.0, 2.5, 10.0])
    want = nmath.pgamma(q[:, None], shape[None, :], 0.5, lower_tail=False, log_p=True)
    g = open_result(tmp_path / "g.zarr")
    got = g["pgamma"][...]
    assert np.array_equal(got, want)
    assert got[0, 0] == 0.0 and got[-1, 0] < -30  # log P[X > 0] = 0; deep upper tail
    np.testing.assert_array_equal(g["q"][...], q)
    np.testing.assert_array_equal(g["shape"][...], shape)
    assert g["pgamma"].metadata.dimension_names == ("q", "shape")
    assert g["pgamma"].chunks == (8, 3)
    assert g["_daskcl/done"][...].tolist() == [[1, 1], [1, 1], [1, 1]]
    info = read_info(g)
    assert info is not None
    assert info["function"] == "pgamma" and info["outputs"] == ["pgamma"]
    assert info["spec"]["args"]["scale"] == 0.5 and info["version"]
    assert len(info["devices"]) == 1 and "driver" in info["devices"][0]


def test_axis_forms_and_files(tmp_path: Path) -> None:
    np.save(tmp_path / "p.npy", np.array([0.1, 0.5, 0.9]))
    (tmp_path / "n.csv").write_text("n,other\n5,0\n10,0\n")
    spec = {
        "sweep": {"function": "qbinom"},
        "axes": {"p": {"file": "p.npy"}, "size": {"file": "n.csv", "column": "n"},
                 "prob": {"logspace": [-2, 0, 3]}},
    }
    (tmp_path / "s.toml").write_text(
        '[sweep]\nfunction = "qbinom"\n[axes]\np = { file = "p.npy" }\n'
        'size = { file = "n.csv", column = "n" }\nprob = { logspace = [-2, 0, 3] }\n')
    s = Sweep.from_toml(tmp_path / "s.toml")
    assert s.spec == spec and s.shape == (3, 2, 3)
    run(s, tmp_path / "o.zarr", client="sync")
    got = open_result(tmp_path / "o.zarr")["qbinom"][...]
    want = nmath.qbinom(np.array([0.1, 0.5, 0.9])[:, None, None],
                        np.array([5.0, 10.0])[None, :, None], np.logspace(-2, 0, 3))
    assert np.array_equal(got, want) and got[2, 1, 2] == 10.0
    assert Sweep.from_dict({"sweep": {"function": "dnorm"},
                            "axes": {"x": {"arange": [0, 3]}}}).axes[0].values.tolist() == [0, 1, 2]


def test_python_function(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(
        "from daskcl import nmath\n"
        "def twice_upper(x, df, scale=1.0):\n"
        "    assert x.shape == df.shape\n"
        "    return scale * 2 * nmath.pt(-abs(x), df)\n")
    s = Sweep.from_dict({"sweep": {"function": "f.py:twice_upper", "name": "p"},
                         "axes": {"x": {"values": [0.0, 1.96, 3.0]},
                                  "df": {"values": [5.0, 1e300]}},
                         "args": {"scale": 1.0}}, tmp_path)
    run(s, tmp_path / "o.zarr", client="sync")
    got = open_result(tmp_path / "o.zarr")["p"][...]
    assert got[0, 0] == 1.0 and abs(got[1, 1] - 0.04999579029644087) < 1e-15
    assert np.array_equal(got, 2 * nmath.pt(-np.array([0, 1.96, 3.0])[:, None], [5.0, 1e300]))


@pytest.mark.parametrize(("spec", "message"), [
    (_spec(sweep={"function": "pgama"}), "no daskcl.nmath function 'pgama' (did you mean 'pgamma'"),
    (_spec(axes={"q": {"linspace": [0, 1]}, "shape": {"values": [1.0]}}),
     "axis 'q': linspace takes [start, stop, num]"),
    (_spec(axes={"q": {"values": []}, "shape": {"values": [1.0]}}), "non-empty list"),
    (_spec(axes={"q": {"values": [1.0, float("nan")]}, "shape": {"values": [1.0]}}),
     "axis 'q': holds NaN (value 1 of 2); an axis takes numbers, and +-inf, but not NaN"),
    (_spec(axes={"q": {"values": [1.0]}, "shape": {"values": [1.0]}, "sahpe": {"values": [1.0]}}),
     "pgamma has no parameter 'sahpe' (did you mean 'shape'"),
    (_spec(axes={"q": {"values": [1.0]}}, args={}), "pgamma needs ['shape']"),
    (_spec(axes={"q": {"valuez": [1.0]}, "shape": {"values": [1.0]}}), "give exactly one of"),
    (_spec(args={"shape": 1.0}), "given both as an axis and in [args]"),
    (_spec(args={"log_p": 1}), "args.log_p: is a flag"),
    (_spec(sweep={"function": "pgamma", "chunks": {"x": 2}}), "no axis 'x'"),
    (_spec(sweep={"function": "pgamma", "chunks": {"q": 0}}), "must be a positive integer"),
    (_spec(sweep={"function": "rnorm"}), "draws random variates"),
    (_spec(sweep={"function": "nope.py:f"}), "not found"),
    (_spec(sweep={"function": "pgamma", "name": "q"}), "clashes with an axis"),
    ({"axes": {}}, "a [sweep] table with function"),
])
def test_bad_specs_fail_before_computing(spec: dict, message: str) -> None:
    with pytest.raises(SweepError) as err:
        Sweep.from_dict(spec)
    assert message in str(err.value)


def test_unwritable_store_and_existing_store(tmp_path: Path) -> None:
    s = Sweep.from_dict(_spec())
    (tmp_path / "file").write_text("x")
    with pytest.raises(SweepError, match=r"cannot write the store .*choose a writable --out"):
        run(s, tmp_path / "file" / "o.zarr", client="sync")
    with pytest.raises(SweepError, match="exists and is not a zarr group"):
        run(s, tmp_path / "file", client="sync")
    run(s, tmp_path / "o.zarr", client="sync")
    with pytest.raises(SweepError, match="already holds a sweep; pass --resume"):
        run(s, tmp_path / "o.zarr", client="sync")
    other = Sweep.from_dict(_spec(args={"scale": 3.0}))
    with pytest.raises(SweepError, match="holds a different sweep"):
        run(other, tmp_path / "o.zarr", client="sync", resume=True)
    res = run(other, tmp_path / "o.zarr", client="sync", overwrite=True)
    assert res.computed == 6


def test_a_store_left_before_its_first_chunk_is_taken_up_by_a_plain_run(tmp_path: Path) -> None:
    """A run that stopped after the store was made but before any chunk (its cluster did not
    start, say) left a store that the next plain run refused ("already holds a sweep"); the
    same sweep now takes it up, and a different one is still refused."""
    s = Sweep.from_dict(_spec())
    out = tmp_path / "o.zarr"
    run(s, out, client="sync")
    group = zarr.open_group(str(out), mode="r+")
    group["_daskcl/done"][...] = 0                       # as if no chunk had finished
    res = run(s, out, client="sync")
    assert (res.computed, res.skipped) == (6, 0)
    other = Sweep.from_dict(_spec(args={"scale": 3.0}))
    zarr.open_group(str(out), mode="r+")["_daskcl/done"][...] = 0
    with pytest.raises(SweepError, match=r"already holds a sweep; pass --resume"):
        run(other, out, client="sync")


def test_workers_that_do_not_exist_are_refused_before_the_store_is_made(tmp_path: Path) -> None:
    from daskcl.errors import DeviceError

    with pytest.raises(DeviceError, match="no OpenCL device matches 'nosuchdevice'"):
        run(Sweep.from_dict(_spec()), tmp_path / "o.zarr", workers="nosuchdevice")
    assert not (tmp_path / "o.zarr").exists()


def test_a_local_cluster_that_does_not_start_leaves_no_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store was made before the local cluster started: a cluster that did not start (a
    misspelt DASKCL_WARM, a device without fp64) left ``zarr.json`` with "preparing": true,
    and the next plain run said "already holds a sweep; pass --resume or --overwrite" though
    nothing had been computed.  The store is now made once the cluster is up."""
    from daskcl.errors import ClusterError

    s = Sweep.from_dict(_spec())
    out = tmp_path / "w.zarr"
    monkeypatch.setenv("DASKCL_WARM", "pnrom")
    with pytest.raises(ClusterError, match="cannot warm 'pnrom'"):
        run(s, out, client=None)
    assert not out.exists()
    monkeypatch.delenv("DASKCL_WARM")
    res = run(s, out, client="sync")                   # a plain run: nothing to refuse
    assert (res.computed, res.skipped) == (6, 0)
    q, shape = np.linspace(0, 20, 21), np.array([0.5, 1.0, 2.5, 10.0])
    want = nmath.pgamma(q[:, None], shape[None, :], 0.5, lower_tail=False, log_p=True)
    assert np.array_equal(open_result(out)["pgamma"][...], want)


def test_a_store_is_refused_before_the_local_cluster_starts_and_kept_when_it_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the store would refuse is said without starting a cluster; with --overwrite, a
    cluster that does not start leaves the old store as it was (it was deleted first)."""
    from daskcl.distributed import local as cluster
    from daskcl.errors import ClusterError

    s = Sweep.from_dict(_spec())
    out = tmp_path / "o.zarr"
    run(s, out, client="sync")
    before = open_result(out)["pgamma"][...]
    started: list[int] = []

    def no_cluster(*args: object, **kwargs: object) -> None:
        started.append(1)
        raise ClusterError("the local cluster did not start: RuntimeError: no fp64")

    monkeypatch.setattr(cluster, "local_cluster", no_cluster)
    with pytest.raises(SweepError, match="already holds a sweep; pass --resume"):
        run(s, out, client=None)
    other = Sweep.from_dict(_spec(args={"scale": 3.0}))
    with pytest.raises(SweepError, match="holds a different sweep"):
        run(other, out, client=None, resume=True)
    assert started == []
    with pytest.raises(ClusterError, match="no fp64"):
        run(other, out, client=None, overwrite=True)
    assert started == [1]
    g = open_result(out)
    assert read_info(g)["identity"] == s.identity()
    assert np.array_equal(g["pgamma"][...], before) and g["_daskcl/done"][...].all()
    assert run(s, out, client="sync", resume=True).skipped == 6


def _python_blocks(page: str) -> list[str]:
    """The ``.. code-block:: python`` examples of a page of docs/, dedented."""
    import re
    import textwrap

    text = (ROOT / "docs" / page).read_text()
    return [textwrap.dedent(m.group(1)) for m in re.finditer(
        r"^[ ]*\.\. code-block:: python\n\n((?:(?:[ ]+\S.*)?\n)+)", text, re.M)]


@pytest.mark.parametrize("page", ["sweeps.rst", "clusters.rst"])
def test_the_local_cluster_examples_of_the_docs_run_as_scripts(tmp_path: Path, page: str
                                                               ) -> None:
    """The docs' local-cluster examples, saved as a script and run: each worker process of
    the cluster re-imports the script, so without ``if __name__ == "__main__":`` they failed
    ("the local cluster did not start: RuntimeError: Nanny failed to start worker process")."""
    blocks = [b for b in _python_blocks(page) if "local_cluster()" in b or "client=None" in b]
    assert len(blocks) == 1, blocks
    assert 'if __name__ == "__main__":' in blocks[0]
    (tmp_path / "example.py").write_text(blocks[0])
    (tmp_path / "sweep.toml").write_text(
        '[sweep]\nfunction = "pnorm"\n[axes]\nq = { linspace = [-3, 3, 7] }\n')
    proc = run_python(["example.py"], timeout=240, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    if page == "sweeps.rst":
        assert proc.stdout.strip() == "1 chunks computed"
        got = open_result(tmp_path / "out.zarr")["pnorm"][...]
        np.testing.assert_array_equal(got, nmath.pnorm(np.linspace(-3, 3, 7)))
        assert got[3] == 0.5
    else:
        import ast

        from daskcl.cluster import describe

        devices = ast.literal_eval(proc.stdout.strip())     # worker address -> its device
        here = describe()
        assert devices and all(a.startswith("tcp://127.0.0.1:") for a in devices)
        assert all(d["host"] == here["host"] and d["platform"] == here["platform"]
                   for d in devices.values())


def test_file_urls_and_unknown_protocols(tmp_path: Path) -> None:
    """A file:// URL is the path it names (it failed: zarr.json in a directory never made);
    an unknown protocol is one SweepError, not fsspec's traceback."""
    from daskcl.sweep import verify

    s = Sweep.from_dict(_spec())
    url = f"file://{tmp_path}/u.zarr"
    assert run(s, url, client="sync").computed == 6
    assert (tmp_path / "u.zarr" / "zarr.json").is_file()
    assert verify(url)[0] == 6
    assert open_result(url)["pgamma"].shape == open_result(tmp_path / "u.zarr")["pgamma"].shape
    with pytest.raises(SweepError, match=r"cannot open the store nosuchproto://o.zarr: "
                                         r"ValueError: Protocol not known: nosuchproto"):
        run(s, "nosuchproto://o.zarr", client="sync")


def test_a_relative_store_path_names_the_callers_directory_on_every_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """A relative store path on a cluster whose workers run elsewhere: the client made B/t.zarr,
    the workers opened t.zarr in their own directory ("chunk (0, 0) failed:
    FileNotFoundError").  The path is made absolute where the run starts, before anything goes
    to the workers, from Python and from the command line (``--scheduler``)."""
    import os

    from distributed import Client, LocalCluster

    from daskcl import cli

    here, there = tmp_path / "B", tmp_path / "A"
    here.mkdir()
    there.mkdir()
    monkeypatch.chdir(here)
    cwd = Path(os.getcwd())
    want = run(Sweep.from_dict(_spec()), tmp_path / "want.zarr", client="sync").arrays["pgamma"]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        client.run(os.chdir, str(there))       # the worker, as if started in another directory
        assert list(client.run(os.getcwd).values()) == [os.path.realpath(there)]
        res = run(Sweep.from_dict(_spec()), "rel.zarr", client)
        assert (res.computed, res.store) == (6, str(cwd / "rel.zarr"))
        np.testing.assert_array_equal(open_result(here / "rel.zarr")["pgamma"][...], want)
        # a relative file:// URL likewise; the workers read back the chunks of this one
        again = run(Sweep.from_dict(_spec()), "file://rel.zarr", client, resume=True)
        assert (again.computed, again.skipped) == (0, 6)
        spec = tmp_path / "s.toml"
        spec.write_text('[sweep]\nfunction = "pgamma"\nchunks = { q = 8, shape = 3 }\n'
                        '[axes]\nq = { linspace = [0.0, 20.0, 21] }\n'
                        'shape = { values = [0.5, 1.0, 2.5, 10.0] }\n'
                        '[args]\nscale = 0.5\nlower_tail = false\nlog_p = true\n')
        assert cli.main(["sweep", str(spec), "--out", "t.zarr", "--scheduler",
                         cluster.scheduler_address, "-q"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {cwd / 't.zarr'}: 6 chunks computed")
    np.testing.assert_array_equal(open_result(here / "t.zarr")["pgamma"][...], want)
    assert list(there.iterdir()) == []


def test_local_store_paths_are_made_absolute_without_following_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``local_url`` makes of a store's path: an absolute path naming what the path named
    here (``.`` and repeated ``/`` dropped; ``..`` resolved as the system resolves it, through
    a link; the store itself, a link, not followed); fsspec URLs as they are."""
    import os

    from daskcl.sweep.store import local_url

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(tmp_path / "real" / "sub")
    (tmp_path / "work" / "store.zarr").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "work")
    cwd, real = Path(os.getcwd()), (tmp_path / "real").resolve()
    assert local_url("o.zarr") == local_url("file://o.zarr") == str(cwd / "o.zarr")
    assert local_url(".//./o.zarr/") == local_url("file://./o.zarr") == str(cwd / "o.zarr")
    assert local_url("link/../o.zarr") == str(real / "o.zarr")      # not cwd / "o.zarr"
    assert local_url("store.zarr") == str(cwd / "store.zarr")       # the link itself
    assert local_url("..") == str(cwd.parent)
    assert local_url(f"file://{tmp_path}/x.zarr") == local_url(f"file://localhost{tmp_path}"
                                                               "/x.zarr") == f"{tmp_path}/x.zarr"
    for url in ("s3://bucket/o.zarr", "memory://o.zarr", "gs://b/../o.zarr"):
        assert local_url(url) == url


def test_resume_computes_only_missing_chunks(tmp_path: Path) -> None:
    s = Sweep.from_dict(_spec())
    out = tmp_path / "o.zarr"
    run(s, out, client="sync")
    full = open_result(out)["pgamma"][...]
    g = zarr.open_group(str(out), mode="r+")
    # A chunk whose mark was never written (worker killed after writing data), one whose data
    # is gone too, and one whose record in the journal was torn by a kill: all three are
    # computed again; one recorded whole in the journal (a run killed before it folded its
    # journal into the marks) is done.
    g["_daskcl/done"][0, 1] = 0
    g["_daskcl/done"][2, 0] = 0
    g["pgamma"][16:21, 0:3] = -1.0
    sums = g["_daskcl/checksum"][...]
    g["_daskcl/done"][1, :] = 0
    (out / "_daskcl" / "done" / "journal").mkdir()
    (out / "_daskcl" / "done" / "journal" / "w-0123456789abcdef").write_bytes(
        record(2, [int(sums[1, 0, 0])]) + record(3, [int(sums[1, 1, 0])])[:-2])
    res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (3, 3)
    assert not (out / "_daskcl" / "done" / "journal").exists()   # folded into the marks
    assert np.array_equal(open_result(out)["pgamma"][...], full)
    assert open_result(out)["_daskcl/done"][...].sum() == 6
    runs = read_info(open_result(out))["runs"]
    assert [r["chunks_computed"] for r in runs] == [6, 3]


def test_all_nan_chunk_is_a_completed_chunk(tmp_path: Path) -> None:
    s = Sweep.from_dict({"sweep": {"function": "dnorm", "chunks": {"x": 2}},
                         "axes": {"x": {"values": [0.0, 1.0, 2.0, 3.0]}},
                         "args": {"sd": -1.0}})  # R: NaN, with a warning, for every x
    with pytest.warns(RuntimeWarning, match=r"dnorm: 2 of 2 chunks warned: RuntimeWarning: dnorm: 2 NaN\(s\) produced \(2 chunks\)"):
        run(s, tmp_path / "o.zarr", client="sync")
    g = open_result(tmp_path / "o.zarr")
    assert np.isnan(g["dnorm"][...]).all() and g["_daskcl/done"][...].tolist() == [1, 1]
    res = run(Sweep.from_dict(s.spec), tmp_path / "o.zarr", client="sync", resume=True)
    assert res.computed == 0


def _irls_logit(x: np.ndarray, y: np.ndarray, n: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Posterior mode of a binomial-logit model with a N(0, P^-1) prior, by Newton-IRLS."""
    b = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ b)))
        g = x.T @ (n * (p - y)) + P @ b
        H = x.T @ (x * (n * p * (1 - p))[:, None]) + P
        b = b - np.linalg.solve(H, g)
    return b


def test_glm_envelope_workflow(tmp_path: Path) -> None:
    s = Sweep.from_toml(BUDWORM / "envelope.toml")
    assert s.shape == (3, 3, 3, 3) and s.output_names == ("qf", "grad")
    run(s, tmp_path / "e.zarr", client="sync")
    g = open_result(tmp_path / "e.zarr")
    info = read_info(g)
    assert info is not None
    data = np.genfromtxt(BUDWORM / "budworm.csv", delimiter=",", names=True)
    x = np.column_stack([np.ones(12), data["male"], data["ldose"], data["male_ldose"]])
    y, n = data["dead"] / data["n"], data["n"]
    mode = _irls_logit(x, y, n, 0.01 * np.eye(4))
    np.testing.assert_allclose(info["envelope"]["mode"], mode, rtol=1e-8)
    assert info["coefficients"] == ["intercept", "male", "ldose", "male_ldose"]
    axes = [g[c][...] for c in info["coefficients"]]
    for k, a in enumerate(axes):
        assert a[1] == pytest.approx(mode[k], rel=1e-8)
    qf, grad = g["qf"][...], g["grad"][...]
    assert qf.shape == (3, 3, 3, 3) and grad.shape == (3, 3, 3, 3, 4)
    assert np.unravel_index(np.argmin(qf), qf.shape) == (1, 1, 1, 1)  # the mode is the centre
    np.testing.assert_allclose(grad[1, 1, 1, 1], 0, atol=1e-6)
    # Against the kernel on the materialised grid.
    b = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 4)
    wq, wg = glm.f2_f3("binomial", "logit", b, y, x, np.zeros(4), 0.01 * np.eye(4),
                       np.zeros(12), n)
    np.testing.assert_allclose(qf.ravel(), wq, rtol=1e-13)
    np.testing.assert_allclose(grad.reshape(-1, 4), wg, rtol=1e-10, atol=1e-10)
    # Resuming an envelope sweep reuses the stored axes and finds nothing to do.
    assert run(Sweep.from_toml(BUDWORM / "envelope.toml"), tmp_path / "e.zarr", client="sync",
               resume=True).computed == 0


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_python(["-m", "daskcl", *args], timeout=240)


def test_cli_dry_run_and_sync(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "qt"\nchunks = { p = 2 }\n[axes]\n'
                    'p = { values = [0.9, 0.975, 0.995] }\ndf = { values = [1, 10, inf] }\n')
    r = _cli("sweep", str(spec), "--dry-run", "--out", str(tmp_path / "o.zarr"))
    assert r.returncode == 0, r.stderr
    assert "output    qt           shape (3, 3)  chunks (2, 3)" in r.stdout
    assert "chunks    2 (2 x 1)" in r.stdout and not (tmp_path / "o.zarr").exists()
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--sync", "-q")
    assert r.returncode == 0, r.stderr
    assert "2 chunks computed" in r.stdout
    got = open_result(tmp_path / "o.zarr")["qt"][...]
    assert got[2, 2] == pytest.approx(2.5758293035489004, rel=1e-15)  # qnorm(0.995)
    assert got[0, 0] == pytest.approx(3.077683537175254, rel=1e-14)   # tan(0.4 pi)
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--dry-run", "--resume")
    assert "done      2 of 2 chunks already in the store" in r.stdout
    # the dry run refuses what the run would refuse, with its message
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--dry-run")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (f"error: {tmp_path / 'o.zarr'} already holds a sweep; pass --resume to "
                        "finish it or --overwrite to start again\n")
    changed = tmp_path / "changed.toml"
    changed.write_text(spec.read_text().replace("0.995", "0.999"))
    r = _cli("sweep", str(changed), "--out", str(tmp_path / "o.zarr"), "--dry-run", "--resume")
    assert r.returncode == 1 and "holds a different sweep" in r.stderr
    assert "the axes differ;" in r.stderr
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("x")
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "mine"), "--dry-run", "--overwrite")
    assert r.returncode == 1 and "exists and is not a zarr group" in r.stderr
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--dry-run", "--overwrite")
    assert r.returncode == 0 and f"store     {tmp_path / 'o.zarr'} (replaced: --overwrite)" in \
        r.stdout
    # a relative store is named as the run names it: absolute, in the command's directory
    r = run_python(["-m", "daskcl", "sweep", str(spec), "--out", "o.zarr", "--dry-run",
                    "--resume"], timeout=240, cwd=str(tmp_path))
    assert r.returncode == 0 and f"store     {tmp_path / 'o.zarr'}\n" in r.stdout, r.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('[sweep]\nfunction = "qt"\n[axes]\np = { values = [0.5] }\n'
                   'dof = { values = [1] }\n')
    r = _cli("sweep", str(bad), "--out", str(tmp_path / "b.zarr"))
    assert r.returncode == 1 and "qt has no parameter 'dof'" in r.stderr
    assert not (tmp_path / "b.zarr").exists()
    json.dumps(read_info(open_result(tmp_path / "o.zarr")))  # plain JSON attributes


def test_automatic_chunks_are_even_and_bounded(tmp_path: Path) -> None:
    """Without [sweep] chunks, leading axes are split into equal pieces of at most 2^24
    elements (2^18 GLM points), so that workers get equal tasks and no short last chunk."""
    s = Sweep.from_dict({"sweep": {"function": "qbeta"},
                         "axes": {"p": {"linspace": [0.01, 0.99, 4000]},
                                  "shape1": {"logspace": [-1, 1, 100]},
                                  "shape2": {"logspace": [-1, 1, 100]}}})
    # 2^24 // 10^4 = 1677 rows at most: 3 pieces of 1334 rows (not 1677 + 1677 + 646)
    assert s.chunks == (1334, 100, 100) and s.grid == (3, 1, 1)
    small = Sweep.from_dict({"sweep": {"function": "dnorm"}, "axes": {"x": {"arange": [0, 10]}}})
    assert small.chunks == (10,) and small.n_chunks == 1
    (tmp_path / "d.csv").write_text("y,x\n1,0.5\n3,1.5\n0,-1\n")
    glm = Sweep.from_dict({"sweep": {"function": "glm.f2_f3"},
                           "glm": {"family": "poisson", "link": "log", "data": "d.csv",
                                   "response": "y", "predictors": ["x"]},
                           "axes": {"intercept": {"linspace": [-1, 1, 100]},
                                    "x": {"linspace": [-1, 1, 10_000]}}}, tmp_path)
    # 2^18 // 10^4 = 26 rows at most: 4 pieces of 25 rows
    assert glm.chunks == (25, 10_000) and glm.grid == (4, 1)


def test_cli_version_and_bare_command_print_plain_help():
    import subprocess
    import sys

    from daskcl import __version__

    r = subprocess.run([sys.executable, "-m", "daskcl", "--version"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"daskcl {__version__}"
    r = subprocess.run([sys.executable, "-m", "daskcl"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "daskcl sweep SPEC --out STORE" in r.stdout
    assert "``" not in r.stdout and "required" not in r.stderr


# --- the spec: immutable, picklable, below the store and the run -------------------------------


def test_a_spec_is_frozen_and_pickles() -> None:
    spec = _spec()
    s = Sweep.from_dict(spec)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.chunks = (1, 1)  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        s.axes[0].values[0] = 5.0
    spec["args"]["scale"] = 2.0  # the caller's mapping is not the spec's
    assert s.args["scale"] == 0.5 and s.spec["args"]["scale"] == 0.5
    t = pickle.loads(pickle.dumps(s))
    assert (t.identity(), t.shape, t.chunks) == (s.identity(), (21, 4), (8, 3))
    assert not t.axes[0].values.flags.writeable
    assert not hasattr(Sweep, "run")


def test_resolving_the_envelope_returns_a_new_spec() -> None:
    s = Sweep.from_toml(BUDWORM / "envelope.toml")
    before = s.identity()
    r, info = s.resolve_envelope()
    assert r is not s and s.identity() == before
    assert all(np.array_equal(a.values, np.zeros(a.values.size)) for a in s.axes)
    assert r.identity() != before and r.shape == s.shape and r.chunks == s.chunks
    assert [a.source["mode"] for a in r.axes] == info["mode"]
    lo, hi = r.axes[1].values[[0, -1]]
    np.testing.assert_allclose((lo + hi) / 2, info["mode"][1], rtol=1e-12)
    np.testing.assert_allclose((hi - lo) / 2, 1.0 * info["sd"][1], rtol=1e-12)  # width 1
    with pytest.raises(SweepError, match="keep their names and sizes"):
        s.with_axes(r.axes[:-1])


def test_the_spec_imports_nothing_of_the_store_or_the_run() -> None:
    import ast

    from daskcl.sweep import spec as spec_module

    here = Path(spec_module.__file__).parent
    # the spec and the modules it is made of: its axes and file readers, its function, its GLM,
    # and the evaluation of a chunk
    spec_modules = {"spec", "axes", "functions", "glmspec", "evaluate"}
    for name in sorted(spec_modules):
        tree = ast.parse((here / f"{name}.py").read_text())
        relative = {n.module or "" for n in ast.walk(tree)
                    if isinstance(n, ast.ImportFrom) and n.level == 1}
        named = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                 and n.level == 1 and not n.module for a in n.names}
        # inputs records what a Python function's file reads as it loads; it imports nothing
        # of the sweep package itself
        assert relative - {""} <= spec_modules and named <= {"inputs"}, (name, relative, named)
        absolute = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and n.module and n.module.startswith("daskcl.sweep")]
        absolute += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                     for a in n.names if a.name.startswith("daskcl.sweep")]
        assert absolute == [], name
    assert {"axes", "functions", "glmspec"} <= {
        n.module for n in ast.walk(ast.parse((here / "spec.py").read_text()))
        if isinstance(n, ast.ImportFrom) and n.level == 1}
    inputs_tree = ast.parse((here / "inputs.py").read_text())
    assert not [n for n in ast.walk(inputs_tree) if isinstance(n, ast.ImportFrom) and n.level]


def test_the_glm_program_comes_from_the_library_named(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    shutil.copytree(default_root(), lib)
    driver = lib / "kernels" / "f2_f3_driver.cl"
    driver.write_text(driver.read_text() + "\n/* this copy */\n")
    assert glm.program_source("binomial", "logit", lib).text.endswith("/* this copy */\n")
    assert "/* this copy */" not in glm.program_source("binomial", "logit").text


def test_an_envelope_found_on_a_worker_gives_the_same_store(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    run(Sweep.from_toml(BUDWORM / "envelope.toml"), tmp_path / "sync.zarr", client="sync")
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        res = run(Sweep.from_toml(BUDWORM / "envelope.toml"), tmp_path / "worker.zarr", client)
    assert res.computed == 1
    want, got = open_result(tmp_path / "sync.zarr"), open_result(tmp_path / "worker.zarr")
    assert read_info(got)["envelope"] == read_info(want)["envelope"]
    assert read_info(got)["identity"] == read_info(want)["identity"]
    for name in ("intercept", "ldose", "qf", "grad"):
        np.testing.assert_array_equal(got[name][...], want[name][...])


def test_a_fresh_run_reads_no_marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that creates its store knows no chunk is marked: its chunk tasks do not read the
    marks (a request each on an object store) and write the same values; a resumed run reads
    them once per worker and checks every chunk done.  The same in this process
    (``client="sync"``), which reads them once as it opens the store."""
    import distributed

    from daskcl.sweep import store

    read: list[str] = []
    checked: list[tuple[int, ...]] = []
    real_read, real_matches = store.Store.read_book, store.Store.matches

    def reading(self: store.Store) -> object:
        read.append(self.url)
        return real_read(self)

    def matching(self: store.Store, sweep: Sweep, index: tuple[int, ...], book: object) -> bool:
        checked.append(index)
        return real_matches(self, sweep, index, book)   # type: ignore[arg-type]

    monkeypatch.setattr(store.Store, "read_book", reading)
    monkeypatch.setattr(store.Store, "matches", matching)
    ref = run(Sweep.from_dict(_spec()), tmp_path / "ref.zarr", client="sync")
    assert ref.computed == 6 and checked == [] and read == []
    again = run(Sweep.from_dict(_spec()), tmp_path / "ref.zarr", client="sync", resume=True)
    assert again.computed == 0 and len(checked) == 6 and read == []
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        out = tmp_path / "c.zarr"
        res = run(Sweep.from_dict(_spec()), out, client)
        assert res.computed == 6 and read == []
        np.testing.assert_array_equal(res.arrays["pgamma"], ref.arrays["pgamma"])
        res = run(Sweep.from_dict(_spec()), out, client, resume=True)
        assert res.computed == 0 and res.skipped == 6 and read == [str(out)]


def test_chunk_tasks_share_one_open_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """The chunk tasks of a run (one sweep object in a process) open the store's group once,
    and write the same values as a run in this process; a run starting drops the group, so
    that a store made again is opened again."""
    from daskcl.sweep import runner, store

    s = Sweep.from_dict(_spec())
    url = str(tmp_path / "g.zarr")
    st = store.Store(url)
    s, book = st.open(s, resume=False, overwrite=False)
    assert book is None
    st.create(s, None)
    ref = run(Sweep.from_dict(_spec()), tmp_path / "ref.zarr", client="sync")
    opened: list[str] = []
    real = store.open_group

    def counting(u: str, mode: str, options: dict | None = None) -> object:
        if mode != "r":     # open_result's
            opened.append(mode)
        return real(u, mode, options)

    monkeypatch.setattr(store, "open_group", counting)
    reports = [runner.chunk_task(s, url, None, idx, True) for idx in s.chunk_indices()]
    assert opened == ["r+"] and len(reports) == 6
    assert all(not r["skipped"] and r["write_s"] > 0 for r in reports)
    assert np.array_equal(open_result(url)["pgamma"][...], ref.arrays["pgamma"])
    # the next run's start forgets the store: a chunk task opens it again, and finds the
    # chunk recorded in the journal
    runner._forget_store(s, url, None)
    again = runner.chunk_task(s, url, None, (0, 0))
    assert opened == ["r+", "r+"] and again["skipped"]
    # another sweep object (another run) opens its own
    runner.chunk_task(Sweep.from_dict(_spec()), url, None, (0, 1))
    assert opened == ["r+", "r+", "r+"]
