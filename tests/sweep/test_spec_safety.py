# SPDX-License-Identifier: GPL-2.0-or-later
"""What a spec, a file it names and a local cluster may do: nothing listens beyond loopback, a
spec runs only the Python file it names and only when it computes, files are read but never
quoted, ``DASKCL_DEVICE`` is obeyed, and bad values are refused before anything runs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from support.procs import run_python, stop

from daskcl import cluster
from daskcl.distributed.join import _route_to
from daskcl.errors import DaskclError, NoMatchingDeviceError
from daskcl.runtime import device
from daskcl.sweep import Sweep, SweepError, open_result, run

ROOT = Path(__file__).resolve().parents[2]
SECRET = "root:$6$s3cr3t-hash-do-not-print:19000:0:99999:7:::"
LOOPBACK = ("127.0.0.1", "::1")

# A spec's Python file that leaves a mark when it runs.
MARKER_PY = '''\
import pathlib
pathlib.Path(__file__).with_name("ran.marker").write_text("ran")

def scaled(x, scale: float = 1.0, label: str = "", **extra):
    return x * scale
'''


def _listening() -> set[tuple[int, str, int]]:
    """(pid, ip, port) of every listening socket of this process and its descendants."""
    me = psutil.Process()
    out = set()
    for proc in [me, *me.children(recursive=True)]:
        try:
            conns = proc.net_connections(kind="inet")
        except psutil.Error:
            continue
        out |= {(proc.pid, c.laddr.ip, c.laddr.port) for c in conns
                if c.status == psutil.CONN_LISTEN}
    return out


def _non_loopback_ipv4() -> str | None:
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family == socket.AF_INET and not a.address.startswith("127."):
                return str(a.address)
    return None


# --- nothing listens beyond loopback ----------------------------------------------------------


def test_local_cluster_listens_on_loopback_only() -> None:
    from distributed import Client

    before = _listening()
    with cluster.local_cluster(1, silence_logs=40) as lc, Client(lc) as client:
        client.wait_for_workers(1, timeout=120)
        worker_pids = set(client.run(os.getpid).values())
        new = _listening() - before
        addrs = [lc.scheduler_address, *client.scheduler_info()["workers"], lc.dashboard_link]
        # scheduler, dashboard, nanny (this process); worker and its HTTP server (its process)
        assert len({p for p, _, _ in new} & worker_pids) == 1 and len(new) >= 4, new
        assert all(ip in LOOPBACK for _, ip, _ in new), new
        assert all("//127.0.0.1:" in a for a in addrs), addrs
        other = _non_loopback_ipv4()
        if other is not None:  # a connection to this host's other address is refused
            for _, _, port in new:
                with pytest.raises(OSError):
                    socket.create_connection((other, port), timeout=5).close()


def test_local_cluster_host_exposes_it_when_asked() -> None:
    from distributed import Client

    other = _non_loopback_ipv4()
    if other is None:
        pytest.skip("this host has no address but loopback")
    with cluster.local_cluster(1, silence_logs=40, host=other) as lc, Client(lc) as client:
        client.wait_for_workers(1, timeout=120)
        assert lc.scheduler_address.startswith(f"tcp://{other}:")
        assert all(a.startswith(f"tcp://{other}:") for a in client.scheduler_info()["workers"])
        assert lc.dashboard_link.startswith(f"http://{other}:")


def test_local_cluster_host_must_be_an_address() -> None:
    with pytest.raises(DaskclError, match="host must be an address"):
        cluster.local_cluster(1, host="")


def test_daskcl_worker_listens_where_the_scheduler_is(tmp_path: Path) -> None:
    # The default of `daskcl worker`: this host's address on the route to the scheduler, so a
    # scheduler on loopback gets workers on loopback (dask's default would be every interface).
    assert _route_to("tcp://127.0.0.1:8786", None) == "127.0.0.1"
    sched_file = tmp_path / "scheduler.json"
    sched_file.write_text('{"address": "tcp://127.0.0.1:8786"}')
    assert _route_to(None, str(sched_file)) == "127.0.0.1"
    env = {**os.environ, "DASK_LOGGING__DISTRIBUTED": "warning"}
    sched = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--dashboard-address", "127.0.0.1:0", "--no-show",
         "--scheduler-file", str(tmp_path / "s.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    worker = None
    try:
        for _ in range(600):
            if (tmp_path / "s.json").exists() and (tmp_path / "s.json").stat().st_size:
                break
            time.sleep(0.1)
        worker = subprocess.Popen(
            [sys.executable, "-m", "daskcl", "worker", "--scheduler-file",
             str(tmp_path / "s.json"), "--devices", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        from distributed import Client

        with Client(scheduler_file=str(tmp_path / "s.json")) as client:
            client.wait_for_workers(1, timeout=120)
            assert all(a.startswith("tcp://127.0.0.1:")
                       for a in client.scheduler_info()["workers"])
        tree = [psutil.Process(worker.pid), *psutil.Process(worker.pid).children(recursive=True)]
        ips = {c.laddr.ip for p in tree for c in p.net_connections(kind="inet")
               if c.status == psutil.CONN_LISTEN}
        assert ips and ips <= set(LOOPBACK), ips
    finally:
        stop(worker, sched)


# --- specs run only the code they name, only when asked ---------------------------------------


def _marker_spec(tmp_path: Path, args: str = "scale = 2.0\n") -> Path:
    (tmp_path / "f.py").write_text(MARKER_PY)
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "f.py:scaled"\nname = "y"\n[axes]\n'
                    f'x = {{ values = [1.0, 2.0, 3.0] }}\n[args]\n{args}')
    return spec


def test_dry_run_and_validation_run_nothing(tmp_path: Path) -> None:
    spec = _marker_spec(tmp_path)
    s = Sweep.from_toml(spec)
    assert not (tmp_path / "ran.marker").exists()
    assert s.func is not None and s.func.params == ("x", "scale", "label")
    r = run_python(["-m", "daskcl", "sweep", str(spec), "--dry-run"], timeout=300)
    assert r.returncode == 0, r.stderr
    assert "function  f.py:scaled" in r.stdout
    assert not (tmp_path / "ran.marker").exists()
    # Asked to compute, the file runs (as a script would).
    r = run_python(["-m", "daskcl", "sweep", str(spec), "--out", str(tmp_path / "o.zarr"),
                    "--sync", "-q"], timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ran.marker").read_text() == "ran"
    assert open_result(tmp_path / "o.zarr")["y"][...].tolist() == [2.0, 4.0, 6.0]


def test_module_functions_are_refused(tmp_path: Path) -> None:
    marker = tmp_path / "shell.marker"
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "subprocess:run"\n[axes]\n'
                    'timeout = { values = [1.0] }\n[args]\n'
                    f'args = "touch {marker}"\nshell = true\n')
    r = run_python(["-m", "daskcl", "sweep", str(spec), "--out", str(tmp_path / "o.zarr"),
                    "--sync", "-q"], timeout=300)
    assert r.returncode == 1 and not marker.exists()
    assert "a Python function comes from a file the spec names, as 'file.py:func'" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "o.zarr").exists()
    for name in ("os:system", "builtins:eval", "daskcl.nmath:pnorm"):
        with pytest.raises(SweepError, match="functions of importable modules"):
            Sweep.from_dict({"sweep": {"function": name}, "axes": {"x": {"values": [1]}}})


@pytest.mark.parametrize(("args", "message"), [
    ('scale = "big"\n', "args.scale: f.py:scaled takes a number here, got 'big'"),
    ("scale = true\n", "args.scale: f.py:scaled takes a number here, got True"),
    ("label = 3\n", "args.label: f.py:scaled takes a string here, got 3"),
    # **extra does not open the door: only named parameters
    ('shell = true\n', "f.py:scaled has no parameter 'shell'"),
])
def test_python_args_are_checked_without_running(tmp_path: Path, args: str,
                                                 message: str) -> None:
    spec = _marker_spec(tmp_path, args)
    with pytest.raises(SweepError) as err:
        Sweep.from_toml(spec)
    assert message in str(err.value)
    r = run_python(["-m", "daskcl", "sweep", str(spec), "--dry-run"], timeout=300)
    assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "ran.marker").exists()


@pytest.mark.parametrize(("source", "message"), [
    ("scaled = lambda x: x\n", "bound at line 3 by something other than a 'def'"),
    ("from math import sqrt as scaled\n", "bound at line 3 by something other than a 'def'"),
    ("def scaled(x):\n    return x\nscaled = print\n", "bound at line 5"),
    ("def other(x):\n    return x\n", "'scaled' is not defined at its top level"),
    ("def scaled(x, /):\n    return x\n", "['x'] are positional-only"),
    ("def scaled(x:\n", "f.py is not valid Python: line 3"),
])
def test_python_file_must_define_the_function(tmp_path: Path, source: str, message: str) -> None:
    (tmp_path / "f.py").write_text("import pathlib\npathlib.Path('ran.marker').touch()\n"
                                   + source)
    with pytest.raises(SweepError) as err:
        Sweep.from_dict({"sweep": {"function": "f.py:scaled"}, "axes": {"x": {"values": [1]}}},
                        tmp_path)
    assert message in str(err.value)
    assert not (tmp_path / "ran.marker").exists() and not Path("ran.marker").exists()


def test_python_file_path_is_relative_to_the_spec_or_absolute(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "f.py").write_text(MARKER_PY)
    (tmp_path / "specs").mkdir()
    for function in ("../lib/f.py:scaled", f"{tmp_path}/lib/f.py:scaled"):
        s = Sweep.from_dict({"sweep": {"function": function},
                             "axes": {"x": {"values": [1.0, 2.0]}}}, tmp_path / "specs")
        assert s.func is not None and s.func.required == ("x",)
    assert not (tmp_path / "lib" / "ran.marker").exists()
    res = run(s, tmp_path / "o.zarr", client="sync")
    assert res.arrays["scaled"].tolist() == [1.0, 2.0]
    assert (tmp_path / "lib" / "ran.marker").exists()


@pytest.mark.parametrize(("args", "message"), [
    ({"sd": "2"}, "args.sd: pnorm takes a number here, got '2'"),
    ({"sd": True}, "args.sd: pnorm takes a number here, got True"),
    ({"lower_tail": "False"}, "args.lower_tail: is a flag: true or false, got 'False'"),
    ({"log_p": 0}, "args.log_p: is a flag: true or false, got 0"),
])
def test_nmath_args_are_numbers_and_flags_booleans(args: dict[str, Any], message: str) -> None:
    with pytest.raises(SweepError) as err:
        Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"values": [0.0]}},
                         "args": args})
    assert message in str(err.value)


@pytest.mark.parametrize(("value", "message"), [
    ("nan", "args.mean: must be a finite number, got nan"),
    ("1e400", "args.mean: must be a finite number, got inf (to evaluate at inf, give it as an "
     "axis: mean = { values = [inf] })"),
    ("-inf", "args.mean: must be a finite number, got -inf (to evaluate at -inf, give it as "
     "an axis: mean = { values = [-inf] })"),
])
def test_args_are_finite(tmp_path: Path, capsys: Any, value: str, message: str) -> None:
    """``[args]`` took NaN and +-inf (the module says arguments are finite): the sweep wrote
    an all-NaN result and exited 0.  Validation and the dry run refuse them, naming the
    argument; a finite one and an infinite axis value are still taken."""
    from daskcl import cli

    spec = tmp_path / "s.toml"
    spec.write_text(f'[sweep]\nfunction = "pnorm"\n[axes]\nq = {{ values = [0.0, 1.0] }}\n'
                    f'[args]\nmean = {value}\nsd = 2.0\n')
    with pytest.raises(SweepError) as err:
        Sweep.from_toml(spec)
    assert str(err.value) == message
    assert cli.main(["sweep", str(spec), "--dry-run", "--out", str(tmp_path / "o.zarr")]) == 1
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "o.zarr").exists()
    spec.write_text(spec.read_text().replace(f"mean = {value}", "mean = -1e300"))
    assert Sweep.from_toml(spec).args == {"mean": -1e300, "sd": 2.0}
    axis = Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {
        "q": {"values": [0.0]}, "mean": {"values": [float("inf")]}}, "args": {"sd": 2.0}})
    assert axis.axes[1].values.tolist() == [float("inf")]


# --- file axes: regular files, never quoted -----------------------------------------------------


@pytest.mark.parametrize(("name", "content", "message"), [
    ("secret.txt", f"0.5\n{SECRET}\n", "secret.txt line 2, item 1: not a number"),
    ("secret.csv", f"x\n{SECRET}\n", "secret.csv line 2, column 'x': not a number"),
    ("shadow.csv", f"{SECRET}\n1\n", "no column 'x' in shadow.csv (its header row names 1 "
     "columns)"),
    ("shadow.npy", f"\x93NUMPY\x01\x00{SECRET}", "shadow.npy is not a .npy file of numbers"),
    ("strings.npy", None, "strings.npy does not hold an array of real numbers"),
])
def test_file_axis_errors_never_quote_the_file(tmp_path: Path, name: str, content: str | None,
                                               message: str) -> None:
    if content is None:
        np.save(tmp_path / name, np.array([SECRET]))
    else:
        (tmp_path / name).write_text(content)
    axis = {"file": name, **({"column": "x"} if name.endswith(".csv") else {})}
    with pytest.raises(SweepError) as err:
        Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": axis}}, tmp_path)
    msg = str(err.value)
    assert message in msg
    assert "s3cr3t" not in msg and "99999" not in msg


def test_glm_data_errors_never_quote_the_file(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text(f"y,x\n1,{SECRET}\n")
    glm = {"family": "poisson", "link": "log", "data": "d.csv", "response": "y",
           "predictors": ["x"]}
    with pytest.raises(SweepError) as err:
        Sweep.from_dict({"sweep": {"function": "glm.f2_f3"}, "glm": glm,
                         "axes": {"intercept": {"values": [0]}, "x": {"values": [0]}}}, tmp_path)
    assert "d.csv line 2, column 'x': not a number" in str(err.value)
    assert "s3cr3t" not in str(err.value)
    (tmp_path / "d.csv").write_text(f"{SECRET}\n1\n")
    with pytest.raises(SweepError) as err:
        Sweep.from_dict({"sweep": {"function": "glm.f2_f3"}, "glm": glm,
                         "axes": {"intercept": {"values": [0]}, "x": {"values": [0]}}}, tmp_path)
    assert "no column 'y' in d.csv" in str(err.value) and "s3cr3t" not in str(err.value)


def test_file_axis_reads_regular_files_only(tmp_path: Path) -> None:
    (tmp_path / "dir.txt").mkdir()
    os.mkfifo(tmp_path / "fifo.txt")
    for name in ("dir.txt", "fifo.txt"):
        box: dict[str, Any] = {}

        def parse(name: str = name, box: dict[str, Any] = box) -> None:
            try:
                Sweep.from_dict({"sweep": {"function": "pnorm"},
                                 "axes": {"q": {"file": name}}}, tmp_path)
            except SweepError as exc:
                box["error"] = str(exc)

        t = threading.Thread(target=parse, daemon=True)
        t.start()
        t.join(10)  # a FIFO without a writer must not block the reader
        assert not t.is_alive(), f"reading {name} blocked"
        assert f"{name}' is not a regular file" in box["error"]
    with pytest.raises(SweepError, match=r"nope\.txt' not found"):
        Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"file": "nope.txt"}}},
                        tmp_path)
    (tmp_path / "ok.txt").write_text("# a comment\n1\n2.5  # two\n\ninf\n")
    s = Sweep.from_dict({"sweep": {"function": "pnorm"}, "axes": {"q": {"file": "ok.txt"}}},
                        tmp_path)
    assert s.axes[0].values.tolist() == [1.0, 2.5, float("inf")]


# --- DASKCL_DEVICE restricts the workers' devices ---------------------------------------------


def test_daskcl_device_restricts_worker_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    info, _ = device.choose(None)
    monkeypatch.setenv("DASKCL_DEVICE", "nonexistent-gpu")
    for call in (lambda: cluster.device_slots(), lambda: cluster.device_slots(2),
                 lambda: cluster.local_cluster(),
                 lambda: cluster.run_workers("tcp://127.0.0.1:9")):
        with pytest.raises(NoMatchingDeviceError) as err:
            call()
        msg = str(err.value)
        assert "DASKCL_DEVICE='nonexistent-gpu' matches no fp64 OpenCL device" in msg
        assert "Devices found:" in msg and info.name in msg
    monkeypatch.setenv("DASKCL_DEVICE", info.name[:8].lower())
    slots = cluster.device_slots()
    assert [s.env["DASKCL_DEVICE"] for s in slots] == [info.spec]
    assert info.name in slots[0].label
    monkeypatch.setenv("DASKCL_DEVICE", info.spec)
    n = 1 if info.type == "GPU" else 2          # one worker per GPU; a CPU device serves several
    assert [s.env["DASKCL_DEVICE"] for s in cluster.device_slots(n)] == [info.spec] * n
    monkeypatch.setenv("DASKCL_DEVICE", "nonexistent-gpu")
    r = run_python(["-m", "daskcl", "worker", "tcp://127.0.0.1:9"], timeout=300)
    assert r.returncode == 1 and "matches no fp64 OpenCL device" in r.stderr


def test_daskcl_device_restricts_among_several(monkeypatch: pytest.MonkeyPatch) -> None:
    real = next((i, d) for i, d in device.list_devices() if i.fp64)
    # not NVIDIA's platform: on NVIDIA, workers bind by CUDA's numbering, not by these specs
    fakes = [(real[0].__class__(**{**real[0].__dict__, "device_index": k, "type": "GPU",
                                   "name": f"Fake GPU {name}", "platform": "Fake platform"}),
              real[1])
             for k, name in enumerate(("Alpha", "Beta", "Gamma"))]
    monkeypatch.setattr(device, "list_devices", lambda: fakes)
    monkeypatch.setenv("DASKCL_DEVICE", "beta")
    assert [s.env["DASKCL_DEVICE"] for s in cluster.device_slots()] == [fakes[1][0].spec]
    with pytest.raises(DaskclError, match="asked for 2 GPU workers"):
        cluster.device_slots(2)
    with pytest.raises(NoMatchingDeviceError, match="is not one DASKCL_DEVICE='beta' allows"):
        cluster.device_slots(["gamma"])
    monkeypatch.setenv("DASKCL_DEVICE", "fake gpu")
    assert len(cluster.device_slots()) == 3


# --- spec values refused at validation ----------------------------------------------------------


def _pnorm(**over: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"sweep": {"function": "pnorm"}, "axes": {"q": {"values": [0.0]}}}
    for k, v in over.items():
        spec[k] = v
    return spec


@pytest.mark.parametrize(("spec", "message"), [
    (_pnorm(sweep={"function": "pnorm", "name": ""}), "'' is not a usable array name"),
    (_pnorm(sweep={"function": "pnorm", "name": "zarr.json"}), "'zarr.json' is not a usable"),
    (_pnorm(sweep={"function": "pnorm", "name": "../x"}), "'../x' is not a usable"),
    (_pnorm(sweep={"function": "pnorm", "name": "a/b"}), "'a/b' is not a usable"),
    (_pnorm(sweep={"function": "pnorm", "name": "_done"}), "'_done' is not a usable"),
    (_pnorm(sweep={"function": "pnorm", "name": ".."}), "'..' is not a usable"),
    (_pnorm(sweep={"function": "pnorm", "name": "Q"}), "'Q' clashes with an axis or output"),
    (_pnorm(axes={"q": {"arange": [0, 10, 0]}}), "axis 'q': arange step must not be 0"),
    (_pnorm(axes={"q": {"arange": [0, 10, -1]}}), "is empty"),
    (_pnorm(axes={"q": {"arange": [0, float("inf")]}}), "arange takes finite numbers"),
    (_pnorm(axes={"q": {"arange": [0, 1e12]}}), "has more than 134217728 values"),
    (_pnorm(axes={"q": {"linspace": [0, 1, 1e12]}}), "linspace num is 1000000000000; an axis "
     "has at most 134217728 values"),
    (_pnorm(axes={"q": {"linspace": [0, 1, float("inf")]}}), "linspace num must be a positive "
     "integer, got inf"),
    (_pnorm(axes={"q": {"linspace": [0, 1, float("nan")]}}), "must be a positive integer"),
    (_pnorm(axes={"q": {"linspace": [0, 1, 2.5]}}), "must be a positive integer"),
    (_pnorm(axes={"q": {"linspace": [0, float("inf"), 3]}}), "start and stop"),
    (_pnorm(axes={"q": {"logspace": [0, 400, 3]}}), "overflows a double"),
    (_pnorm(axes={"q": {"values": [0.0], "column": "x"}}), "column is for a file axis"),
])
def test_bad_spec_values_fail_at_validation(spec: dict[str, Any], message: str) -> None:
    t0 = time.perf_counter()
    with pytest.raises(SweepError) as err:
        Sweep.from_dict(spec)
    assert message in str(err.value)
    assert time.perf_counter() - t0 < 5  # nothing the size of the grid is allocated


def test_bad_name_leaves_no_store(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "pnorm"\nname = "zarr.json"\n[axes]\n'
                    'q = { values = [0.0] }\n')
    for extra in (["--dry-run"], ["--sync"]):
        r = run_python(["-m", "daskcl", "sweep", str(spec), "--out", str(tmp_path / "o.zarr"),
                        *extra], timeout=300)
        assert r.returncode == 1 and "not a usable array name" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and not (tmp_path / "o.zarr").exists()


def _glm_spec(tmp_path: Path, **over: Any) -> dict[str, Any]:
    (tmp_path / "d.csv").write_text("y,x\n1,0.5\n3,1.5\n0,-1\n")
    glm = {"family": "poisson", "link": "log", "data": "d.csv", "response": "y",
           "predictors": ["x"], **over}
    return {"sweep": {"function": "glm.f2_f3"}, "glm": glm,
            "axes": {"intercept": {"values": [0.0, 0.5]}, "x": {"values": [0.0, 1.0]}}}


@pytest.mark.parametrize(("over", "message"), [
    ({"prior_precision": "big"}, "glm.prior_precision: give a number, a list of 2 numbers or 2 "
     "lists of 2 (finite)"),
    ({"prior_precision": [1.0]}, "glm.prior_precision: give a number"),
    ({"prior_precision": float("inf")}, "glm.prior_precision: give a number"),
    ({"prior_precision": [[1.0, 2.0], [2.0, 1.0]]}, "must be positive semidefinite (a "
     "precision matrix); its smallest eigenvalue is -1"),
    ({"prior_precision": [1.0, -0.5]}, "smallest eigenvalue is -0.5"),
    ({"prior_precision": -1.0}, "smallest eigenvalue is -1"),
    ({"prior_precision": [[1.0, 0.5], [0.0, 1.0]]}, "must be symmetric; entry [0][1] = 0.5"),
    ({"prior_mean": "zero"}, "glm.prior_mean: give a number or a list of 2 numbers"),
    ({"dispersion": 0}, "glm.dispersion: must be a positive finite number, got 0.0"),
    ({"dispersion": -2.0}, "glm.dispersion: must be a positive finite number"),
    ({"dispersion": float("inf")}, "glm.dispersion: must be a finite number, got inf"),
    ({"dispersion": "1"}, "glm.dispersion: must be a finite number, got '1'"),
    ({"intercept": "yes"}, "glm.intercept: is a flag"),
    ({"response": 3}, "glm.response: must be a string"),
    ({"envelope": {"points": "many"}}, "points must be a positive integer"),
    ({"envelope": {"points": 2**26}}, "67108864 points on each of 2 coefficients is more than"),
    ({"envelope": {"points": 3, "width": 0}}, "width must be a positive number"),
    # an unknown key is named, as in the other tables (it said only "give points ... and
    # width ...")
    ({"envelope": {"points": 21, "width": 3.0, "bogus": 1}},
     "glm.envelope: unknown keys ['bogus']; known: ['points', 'width']"),
    ({"envelope": {"point": 21, "widht": 3.0}}, "unknown keys ['point', 'widht']"),
    ({"envelope": 21}, "glm.envelope: give points (per coefficient) and width (in sd)"),
])
def test_bad_glm_values_fail_at_validation(tmp_path: Path, over: dict[str, Any],
                                           message: str) -> None:
    spec = _glm_spec(tmp_path, **over)
    if "envelope" in over:
        del spec["axes"]
    with pytest.raises(SweepError) as err:
        Sweep.from_dict(spec, tmp_path)
    assert message in str(err.value)


@pytest.mark.parametrize(("family", "link", "csv", "over", "message"), [
    # the report: 25 dead of 20, and a dead count of nan (both passed; posterior_mode then
    # "did not converge in 100 steps")
    ("binomial", "logit", "dead,n,x\n1,20,0.5\n\n25,20,1.5\n0,20,-1\n", {"trials": "n"},
     "glm: d.csv row 2 (line 4), column 'dead': a binomial response lies in [0, trials], got "
     "25.0 successes of 20.0 trials (column 'n')"),
    ("binomial", "logit", "dead,n,x\n1,20,0.5\nnan,20,1.5\n", {"trials": "n"},
     "glm: d.csv row 2 (line 3), column 'dead': the response must be a finite number, got nan"),
    ("binomial", "logit", "dead,n,x\n-1,20,0.5\n3,20,1.5\n", {"trials": "n"},
     "glm: d.csv row 1 (line 2), column 'dead': a binomial response lies in [0, trials], got "
     "-1.0 successes of 20.0 trials (column 'n')"),
    ("binomial", "logit", "dead,n,x\n1,20,0.5\n0,-2,1.5\n", {"trials": "n"},
     "glm: d.csv row 2 (line 3), column 'n': trials must be at least 0, got -2.0"),
    ("binomial", "logit", "dead,n,x\n1,inf,0.5\n", {"trials": "n"},
     "glm: d.csv row 1 (line 2), column 'n': the trials must be a finite number, got inf"),
    ("binomial", "probit", "dead,x\n0.25,0.5\n1.5,1.5\n", {},
     "glm: d.csv row 2 (line 3), column 'dead': a binomial response without trials is a "
     "proportion in [0, 1], got 1.5"),
    ("quasibinomial", "logit", "dead,x\n0.25,0.5\n-0.5,1.5\n", {},
     "column 'dead': a binomial response without trials is a proportion in [0, 1], got -0.5"),
    ("poisson", "log", "dead,x\n1,0.5\n-3,1.5\n", {},
     "glm: d.csv row 2 (line 3), column 'dead': a poisson response is a count, at least 0, "
     "got -3.0"),
    ("Gamma", "log", "dead,x\n1.5,0.5\n0,1.5\n", {},
     "glm: d.csv row 2 (line 3), column 'dead': a Gamma response must be above 0, got 0.0"),
    ("gaussian", "identity", "dead,x,w\n1,0.5,1\n-3,1.5,-0.5\n", {"weights": "w"},
     "glm: d.csv row 2 (line 3), column 'w': weights must be at least 0, got -0.5"),
    ("gaussian", "identity", "dead,x,w\n1,0.5,1\n-3,1.5,nan\n", {"weights": "w"},
     "column 'w': the weights must be a finite number, got nan"),
    ("gaussian", "identity", "dead,x,o\n1,0.5,1\n-3,1.5,-inf\n", {"offset": "o"},
     "glm: d.csv row 2 (line 3), column 'o': the offset must be a finite number, got -inf"),
    ("poisson", "log", "dead,x\n1,0.5\n3,1e400\n", {},
     "glm: d.csv row 2 (line 3), column 'x': a predictor must be a finite number, got inf"),
])
def test_glm_data_out_of_range_fail_at_validation(tmp_path: Path, capsys: Any, family: str,
                                                  link: str, csv: str, over: dict[str, Any],
                                                  message: str) -> None:
    """GLM data the family does not take passed validation and --dry-run, and the run then
    failed with "posterior_mode: Newton's method did not converge" (or computed NaN).  They
    are refused at validation, naming the row, the column and the number read; the dry run
    refuses as the run would, and nothing is computed or written."""
    from daskcl import cli

    (tmp_path / "d.csv").write_text(csv)
    extra = "".join(f'{k} = "{v}"\n' for k, v in over.items())
    spec = tmp_path / "s.toml"
    spec.write_text(f'[sweep]\nfunction = "glm.f2_f3"\n[glm]\nfamily = "{family}"\n'
                    f'link = "{link}"\ndata = "d.csv"\nresponse = "dead"\n'
                    f'predictors = ["x"]\nprior_precision = 0.1\n{extra}[glm.envelope]\n'
                    'points = 3\n')
    with pytest.raises(SweepError) as err:
        Sweep.from_toml(spec)
    assert message in str(err.value)
    assert cli.main(["sweep", str(spec), "--dry-run", "--out", str(tmp_path / "o.zarr")]) == 1
    out = capsys.readouterr()
    assert out.out == "" and message in out.err and out.err.count("\n") == 1
    assert not (tmp_path / "o.zarr").exists()


def test_glm_data_at_the_ends_of_their_ranges_are_taken(tmp_path: Path) -> None:
    """The bounds themselves are values of the family: 0 and all of n successes, proportions 0
    and 1, a count of 0, a weight of 0, n = 0 trials with 0 successes."""
    (tmp_path / "d.csv").write_text("dead,n,x,w\n0,20,0.5,1\n20,20,1.5,0\n0,0,2,1\n"
                                    "7,20,-1,2\n")
    glm = {"family": "binomial", "link": "logit", "data": "d.csv", "response": "dead",
           "trials": "n", "weights": "w", "predictors": ["x"]}
    s = Sweep.from_dict({"sweep": {"function": "glm.f2_f3"}, "glm": glm,
                         "axes": {"intercept": {"values": [0.0]}, "x": {"values": [0.0]}}},
                        tmp_path)
    assert s.glm is not None
    assert s.glm.y.tolist() == [0.0, 1.0, 0.0, 0.35] and s.glm.wt.tolist() == [20, 0, 0, 40]
    (tmp_path / "p.csv").write_text("y,x\n0,0.5\n1,1.5\n0.5,2\n")
    for family, link in (("binomial", "cloglog"), ("poisson", "log")):
        spec = {"sweep": {"function": "glm.f2_f3"}, "glm": {
            "family": family, "link": link, "data": "p.csv", "response": "y",
            "predictors": ["x"]}, "axes": {"intercept": {"values": [0.0]},
                                           "x": {"values": [0.0]}}}
        if family == "binomial":   # half a success of one trial: taken, with R's warning
            with pytest.warns(RuntimeWarning, match=r"non-integer #successes in a binomial "
                              r"model: 1 row\(s\), the first y\[2\] \* wt\[2\] = 0\.5 \* 1\.0"):
                s = Sweep.from_dict(spec, tmp_path)
        else:
            s = Sweep.from_dict(spec, tmp_path)
        assert s.glm is not None and s.glm.y.tolist() == [0.0, 1.0, 0.5]


def test_semidefinite_prior_precision_is_a_flat_prior(tmp_path: Path) -> None:
    # Zero (the default) and a zero row are flat directions: accepted, as documented.
    for pp in (0.0, [0.0, 1.0], [[1.0, 1.0], [1.0, 1.0]]):
        s = Sweep.from_dict(_glm_spec(tmp_path, prior_precision=pp), tmp_path)
        assert s.glm is not None and np.all(np.linalg.eigvalsh(s.glm.P) >= -1e-15)
    s = Sweep.from_dict(_glm_spec(tmp_path, dispersion=2.0), tmp_path)
    assert s.glm is not None and s.glm.wt.tolist() == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("other", [["--sync"], ["--scheduler", "tcp://127.0.0.1:1"]])
def test_sweep_listen_is_for_the_local_cluster_only(tmp_path: Path, other: list[str]) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "pnorm"\n[axes]\nq = { values = [0.0, 1.0] }\n')
    r = run_python(["-m", "daskcl", "sweep", str(spec), "--out", str(tmp_path / "o.zarr"),
                    "--listen", "0.0.0.0", *other], timeout=120)
    assert r.returncode == 2, r.stderr
    assert "--listen is for the local cluster" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "o.zarr").exists()
