# SPDX-License-Identifier: GPL-2.0-or-later
"""Real dask.distributed clusters: local clusters of worker processes, `daskcl worker` processes
joined to a `dask scheduler`, killed workers and interrupted sweeps.

On this machine every worker binds the same PoCL CPU device; on a GPU host each binds its own
GPU (benchmarks/bench_sweep.py measures that).
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask.array as da
import distributed
import numpy as np
import pytest
import zarr
from support.devices import with_unusable_devices
from support.procs import stop

from daskcl import glm, nmath
from daskcl.cluster import DaskclPlugin, local_cluster, worker_devices
from daskcl.errors import DaskclError
from daskcl.runtime import device as _device
from daskcl.sweep import Sweep, open_result, run
from daskcl.sweep.chunks import read_book
from daskcl.sweep.journal import Journal

# Chunks of a slow Python function (0.15 s each) that logs every evaluation: the fault tests
# count how often each chunk was computed.
SLOW = '''\
import os, time
from daskcl import nmath

def slow_pnorm(x, sd, log):
    with open(log, "a") as f:
        f.write(f"{x.flat[0]!r} {sd.flat[0]!r} {os.getpid()}\\n")
    time.sleep(0.15)
    return nmath.pnorm(x, 0.0, sd)
'''


def test_a_ctrl_c_while_the_workers_start_closes_the_cluster(monkeypatch: Any) -> None:
    """SIGINT is held back while the workers start (so that they inherit it ignored); one that
    comes meanwhile was dropped, and the sweep went on.  Now it closes the cluster once the
    workers are up and raises KeyboardInterrupt, and Ctrl-C works as before afterwards."""
    from daskcl.distributed import local as cluster_module

    started: list[Any] = []
    real = cluster_module.LocalDaskclCluster

    class InterruptedWhileStarting(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            os.kill(os.getpid(), signal.SIGINT)            # Ctrl-C, as the workers start
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(cluster_module, "LocalDaskclCluster", InterruptedWhileStarting)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        local_cluster(1, dashboard_address=None)
    assert len(started) == 1 and started[0].status.name == "closed"
    assert signal.getsignal(signal.SIGINT) is before
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    assert signal.SIGINT not in signal.sigpending()
    with pytest.raises(KeyboardInterrupt):                 # delivered at once again
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)


def _slow_sweep(tmp: Path, log: Path) -> Sweep:
    (tmp / "slow.py").write_text(SLOW)
    return Sweep.from_dict({
        "sweep": {"function": "slow.py:slow_pnorm", "name": "p", "chunks": {"x": 5, "sd": 2}},
        "axes": {"x": {"linspace": [-4.0, 4.0, 40]}, "sd": {"values": [0.5, 1.0, 2.0, 4.0]}},
        "args": {"log": str(log)},
    }, tmp)


def _evaluations(log: Path) -> Counter[tuple[str, str]]:
    lines = [ln.split() for ln in log.read_text().splitlines()] if log.exists() else []
    return Counter((a, b) for a, b, _ in lines)


def _two_workers_or_skip() -> None:
    """Two daskcl workers need two devices to bind where the host has GPUs (one worker per
    GPU); PoCL's CPU device serves any number (CI)."""
    from daskcl.cluster import device_slots

    try:
        device_slots(2)
    except DaskclError as exc:
        pytest.skip(f"two workers on this host: {exc}")


@pytest.fixture(scope="module")
def client2() -> Iterator[Any]:
    _two_workers_or_skip()
    with local_cluster(2, warm_names=["pnorm"], silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        yield client


def test_local_cluster_binds_and_warms_every_worker(client2: Any) -> None:
    devs = worker_devices(client2)
    assert len(devs) == 2
    assert len({d["pid"] for d in devs.values()}) == 2
    assert all(d["fp64"] and d["DASKCL_DEVICE"] == d["spec"] for d in devs.values())
    # The preload built pnorm's program at start-up: the first call hits the memory cache.

    def first_call() -> dict[str, int]:
        from daskcl.runtime import program

        before = dict(program.stats)
        nmath.pnorm(np.linspace(-1, 1, 5))
        return {k: program.stats[k] - before[k] for k in ("memory", "disk", "source")}

    for delta in client2.run(first_call).values():
        assert delta == {"memory": 1, "disk": 0, "source": 0}


def test_dask_arrays_on_the_cluster_equal_numpy(client2: Any) -> None:
    x = np.linspace(-40, 5, 10_001)
    dx = da.from_array(x, chunks=1000)
    sd = np.array([[0.5], [1.0], [3.0]])
    lazy = nmath.pnorm(dx, 1.0, sd, log_p=True)
    assert lazy.chunks == ((3,), (1000,) * 10 + (1,))
    graph = pickle.dumps(dict(lazy.__dask_graph__()))
    assert b"pyopencl" not in graph and len(graph) < 2_000_000  # no OpenCL objects travel
    got = client2.compute(lazy).result()
    assert np.array_equal(got, nmath.pnorm(x, 1.0, sd, log_p=True))
    # GLM grid chunks and random variates, on the workers.
    rng = np.random.default_rng(5)
    X = np.column_stack([np.ones(50), rng.normal(size=50)])
    y = rng.integers(0, 2, 50).astype(float)
    b = rng.normal(size=(3000, 2))
    args = (y, X, np.zeros(2), np.eye(2), np.zeros(50), np.ones(50))
    qf, grad = glm.f2_f3("binomial", "logit", b, *args, chunks=700)
    qf_c, grad_c = client2.compute([qf, grad], sync=True)
    want_qf, want_grad = glm.f2_f3("binomial", "logit", b, *args)
    assert np.array_equal(qf_c, want_qf) and np.array_equal(grad_c, want_grad)
    r = nmath.rgamma(20_000, 2.5, seed=11, chunks=3000)
    assert np.array_equal(client2.compute(r).result(), nmath.rgamma(20_000, 2.5, seed=11))


def _bound_spec() -> str | None:
    from daskcl.runtime import device

    b = device._bound
    return None if b is None else b.info.spec


def test_plugin_registers_and_rebinds(client2: Any) -> None:
    """Registered on running workers, the plugin binds each again to its own device (the
    binding forgotten first) and warms what it names."""
    specs = {a: d["spec"] for a, d in worker_devices(client2).items()}
    client2.run(_device.unbind)
    assert set(client2.run(_bound_spec).values()) == {None}
    client2.register_plugin(DaskclPlugin(warm=["qgamma"]))
    assert client2.run(_bound_spec) == specs

    def has_qgamma() -> bool:
        from daskcl.runtime import program

        before = program.stats["source"] + program.stats["disk"]
        nmath.qgamma(0.5, 2.0)
        return bool(program.stats["source"] + program.stats["disk"] == before)

    assert all(client2.run(has_qgamma).values())
    pickle.dumps(DaskclPlugin(warm=["pnorm"]))


def _marked(out: Path) -> int:
    """The chunks of the store at ``out`` marked done so far (the marks and the journal)."""
    if not (out / "_daskcl" / "done").exists():
        return 0
    try:
        group = zarr.open_group(str(out), mode="r", use_consolidated=False)
        return int(np.count_nonzero(read_book(group, Journal(str(out), None, "_daskcl/done")).done))
    except (OSError, KeyError, ValueError):     # the store being made
        return 0


def test_sweep_survives_a_killed_worker(client2: Any, tmp_path: Path) -> None:
    log = tmp_path / "evaluations.log"
    s = _slow_sweep(tmp_path, log)
    assert s.n_chunks == 16
    out = tmp_path / "killed.zarr"
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.setdefault("r", run(s, out, client2)))
    t.start()
    deadline = time.time() + 120
    while time.time() < deadline:
        done = _marked(out)
        if done >= 3:
            break
        time.sleep(0.05)
    assert 3 <= done < 16, done        # the kill lands while the sweep runs
    # a worker that has computed chunks (the scheduler may have given the first ones to one)
    victim = int(log.read_text().splitlines()[-1].split()[2])
    assert victim in {w["pid"] for w in worker_devices(client2).values()}
    os.kill(victim, signal.SIGKILL)
    evaluated = len(log.read_text().splitlines())
    t.join(300)
    assert not t.is_alive() and "r" in result
    pids = [int(ln.split()[2]) for ln in log.read_text().splitlines()]
    assert victim in pids[:evaluated] and len(pids) > evaluated   # it worked, the rest went on
    g = open_result(out)
    assert g["_daskcl/done"][...].sum() == 16
    ref = tmp_path / "ref.zarr"
    run(_slow_sweep(tmp_path, tmp_path / "ref.log"), ref, client="sync")
    want = open_result(ref)["p"]
    for idx in s.chunk_indices():  # chunk for chunk
        sl = s.chunk_slices(idx)
        assert np.array_equal(g["p"][sl], want[sl])
    counts = _evaluations(log)
    assert len(counts) == 16
    # Only the chunks in flight on the killed worker may have been computed twice: the one
    # computing and the one it was writing meanwhile, if any.
    assert sum(counts.values()) - 16 <= 2, counts
    client2.wait_for_workers(2, timeout=120)  # the nanny restarted it
    assert victim not in {d["pid"] for d in worker_devices(client2).values()}


def _cli(*args: str, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "daskcl", *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def test_interrupted_sweep_resumes_to_the_same_store(tmp_path: Path) -> None:
    log = tmp_path / "evaluations.log"
    s = _slow_sweep(tmp_path, log)
    spec = tmp_path / "slow.toml"
    spec.write_text(f'[sweep]\nfunction = "slow.py:slow_pnorm"\nname = "p"\n'
                    f'chunks = {{ x = 5, sd = 2 }}\n[axes]\nx = {{ linspace = [-4.0, 4.0, 40] }}\n'
                    f'sd = {{ values = [0.5, 1.0, 2.0, 4.0] }}\n[args]\nlog = "{log}"\n')
    out = tmp_path / "o.zarr"
    proc = _cli("sweep", str(spec), "--out", str(out), "--workers", "1")
    deadline = time.time() + 120
    done = 0
    while time.time() < deadline and proc.poll() is None:
        done = _marked(out)
        if done >= 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "run again with --resume" in err
    partial = int(open_result(out)["_daskcl/done"][...].sum())
    assert 4 <= partial < 16
    first = _evaluations(log)
    proc = _cli("sweep", str(spec), "--out", str(out), "--resume", "--sync", "-q")
    stdout, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"{16 - partial} chunks computed, {partial} already done" in stdout
    # The resumed run computed each missing chunk once, and no chunk finished before the
    # interrupt (a chunk in flight at the interrupt, unmarked, is computed again).
    again = _evaluations(log) - first
    assert sum(again.values()) == 16 - partial == len(again)
    ref = tmp_path / "ref.zarr"
    run(_slow_sweep(tmp_path, tmp_path / "ref.log"), ref, client="sync")
    g, want = open_result(out), open_result(ref)
    assert g["_daskcl/done"][...].sum() == 16
    for idx in s.chunk_indices():  # chunk for chunk
        sl = s.chunk_slices(idx)
        assert np.array_equal(g["p"][sl], want["p"][sl])


def test_daskcl_worker_processes_join_a_scheduler(tmp_path: Path) -> None:
    _two_workers_or_skip()
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_LOGGING__DISTRIBUTED": "warning"}
    sched = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
         str(sched_file), "--port", "0", "--dashboard-address", ":0", "--no-show"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    workers = None
    try:
        for _ in range(600):
            if sched_file.exists() and sched_file.stat().st_size:
                break
            time.sleep(0.1)
        workers = _cli("worker", "--scheduler-file", str(sched_file), "--devices", "2",
                       env=env)
        with distributed.Client(scheduler_file=str(sched_file)) as client:
            client.wait_for_workers(2, timeout=120)
            devs = worker_devices(client)
            assert len(devs) == 2 and all(d["fp64"] for d in devs.values())
            info = client.scheduler_info()["workers"]
            assert sorted(w["name"] for w in info.values()) == [
                f"{os.uname().nodename}-daskcl-0", f"{os.uname().nodename}-daskcl-1"]
            x = da.from_array(np.linspace(0, 1, 1001), chunks=250)
            got = client.compute(nmath.qbeta(x, 2.0, 3.0)).result()
            assert np.array_equal(got, nmath.qbeta(np.linspace(0, 1, 1001), 2.0, 3.0))
        r = subprocess.run([sys.executable, "-m", "daskcl", "devices", "--scheduler-file",
                            str(sched_file)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert len(r.stdout.splitlines()) == 2 and r.stdout.count("fp64") == 2
        spec = tmp_path / "s.toml"
        spec.write_text('[sweep]\nfunction = "qbeta"\nchunks = { p = 50 }\n[axes]\n'
                        'p = { linspace = [0, 1, 201] }\nshape1 = { values = [0.5, 2, 30] }\n'
                        '[args]\nshape2 = 3.0\nlower_tail = false\n')
        r = subprocess.run([sys.executable, "-m", "daskcl", "sweep", str(spec), "--out",
                            str(tmp_path / "o.zarr"), "--scheduler-file", str(sched_file), "-q"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "5 chunks computed" in r.stdout
        p = np.linspace(0, 1, 201)[:, None]
        want = nmath.qbeta(p, np.array([0.5, 2, 30]), 3.0, lower_tail=False)
        assert np.array_equal(open_result(tmp_path / "o.zarr")["qbeta"][...], want)
        # A worker whose preload cannot build its warm list does not start: it exits with
        # status 1 and the reason, and never joins (it would fail every task sent to it).
        r = subprocess.run([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                            str(sched_file), "--preload", "daskcl.cluster", "--no-dashboard"],
                           capture_output=True, text=True, timeout=120,
                           env={**env, "DASKCL_WARM": "pnorm,pnrom"})
        assert r.returncode == 1, r.stderr[-3000:]
        assert "daskcl: worker not started:" in r.stderr and "pnrom" in r.stderr, r.stderr[-3000:]
        with distributed.Client(scheduler_file=str(sched_file)) as client:
            assert len(client.scheduler_info(n_workers=-1)["workers"]) == 2
        # a second daskcl worker on this host with the same names: said so in a line, with the
        # remedy (it was "Unexpected response from register: {... 'name taken' ...}")
        r = subprocess.run([sys.executable, "-m", "daskcl", "worker", "--scheduler-file",
                            str(sched_file), "--devices", "1", "--timeout", "30"],
                           capture_output=True, text=True, timeout=180, env=env)
        assert r.returncode == 1, r.stderr[-3000:]
        assert r.stderr.strip().splitlines()[-1] == (
            f"error: the workers did not start: the scheduler already has workers named "
            f"'{os.uname().nodename}-daskcl-0' and on (another daskcl worker on this host, with "
            "the same --name); give each run its own --name"), r.stderr[-3000:]
        # SIGTERM (kill, a batch system) stops the workers as Ctrl-C does, closing their
        # processes: status 143 (it died at once, multiprocessing's semaphores reported leaked)
        workers.send_signal(signal.SIGTERM)
        _, err = workers.communicate(timeout=120)
        assert workers.returncode == 143, err[-3000:]
        assert "leaked semaphore" not in err, err[-3000:]
    finally:
        stop(workers, sched, sig=signal.SIGINT)


# --- a device that advertises fp64 but fails the probe gets no worker ---------------------------


def _broken_device_first(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Any]:
    """This host's first device listed after one at 9:0 whose fp64 probe fails and one at 9:1
    without cl_khr_fp64 (:func:`devices.with_unusable_devices`), no DASKCL_DEVICE set."""
    monkeypatch.delenv("DASKCL_DEVICE", raising=False)
    return with_unusable_devices(monkeypatch, real_first=False)


def test_device_slots_go_by_the_probe_not_the_advertised_fp64(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers' devices were those that advertise cl_khr_fp64: a device whose probe fails
    got a worker, which died at start-up (sixty lines of nanny tracebacks)."""
    from daskcl.cluster import DeviceSlot, device_slots
    from daskcl.errors import NoFp64DeviceError

    real, broken, single = _broken_device_first(monkeypatch)
    if real.type == "GPU":
        pytest.skip("the fake devices are CPUs beside this host's GPU")
    assert device_slots() == [DeviceSlot(real.describe(), {"DASKCL_DEVICE": real.spec})]
    assert [s.env for s in device_slots(2)] == [{"DASKCL_DEVICE": real.spec}] * 2
    want = (f"no device with working double precision among those matching '9:0': "
            f"{broken.describe()}: the probe kernel did not build (error: unknown target CPU "
            "'generic')")
    for call in (lambda: device_slots(), lambda: device_slots(2), lambda: device_slots("all")):
        monkeypatch.setenv("DASKCL_DEVICE", "9:0")
        with pytest.raises(NoFp64DeviceError) as ei:
            call()
        assert str(ei.value).startswith(want) and "apt-get install pocl-opencl-icd" in str(ei.value)
    monkeypatch.delenv("DASKCL_DEVICE")
    with pytest.raises(NoFp64DeviceError, match="among those matching '9:0'"):
        device_slots(["9:0"])
    monkeypatch.setenv("DASKCL_DEVICE", "9:")      # matches none: the listing says why
    with pytest.raises(DaskclError) as err:
        device_slots()
    assert str(err.value).endswith(
        f"Devices found: {broken.describe()} fp64=no (probe failed); {single.describe()} "
        f"fp64=no (extension); {real.describe()} fp64=yes (probed)"), str(err.value)


def test_a_sweep_on_a_device_whose_probe_fails_is_one_line_before_any_worker(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``DASKCL_DEVICE=P:D daskcl sweep`` on such a device: the local cluster started its worker,
    which failed, and the command ended on "Nanny failed to start worker process"."""
    from daskcl import cli

    _, broken, _ = _broken_device_first(monkeypatch)
    monkeypatch.setenv("DASKCL_DEVICE", broken.spec)
    monkeypatch.setenv("DASK_LOGGING__DISTRIBUTED", "critical")
    started: list[object] = []
    monkeypatch.setattr(distributed, "SpecCluster", lambda *a, **k: started.append(a) or 1 / 0)
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "qt"\n[axes]\np = { values = [0.9] }\n'
                    'df = { values = [1, 10] }\n')
    assert cli.main(["sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "-q"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: no device with working double precision among those "
                          f"matching '{broken.spec}': {broken.describe()}: the probe kernel "
                          "did not build (error: unknown target CPU 'generic')"), err
    assert started == [] and not (tmp_path / "o.zarr").exists()


def test_a_real_device_whose_probe_fails_is_one_line(tmp_path: Path) -> None:
    """The same with this host's own such device, where it has one (PyPI's PoCL 3.0 beside a
    newer PoCL on a CPU its LLVM does not know)."""
    failing = [i for i, d in _device.list_devices()
               if i.fp64 and _device.probe_fp64(d) is not None]
    if not failing:
        pytest.skip("every device here that advertises fp64 passes the probe")
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "qt"\n[axes]\np = { values = [0.9] }\n'
                    'df = { values = [1, 10] }\n')
    env = {**os.environ, "DASKCL_DEVICE": failing[0].spec}
    env.pop("DASK_LOGGING__DISTRIBUTED", None)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "daskcl", "sweep", str(spec), "--out",
                        str(tmp_path / "o.zarr")], capture_output=True, text=True, env=env,
                       timeout=300)
    assert time.monotonic() - t0 < 60
    assert r.returncode == 1 and r.stdout == "", r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: no device with working double precision among those matching "
        f"'{failing[0].spec}': {failing[0].describe()}: "), r.stderr
    assert not (tmp_path / "o.zarr").exists()


# --- the cause of a cluster that did not start ---------------------------------------------------


def _chained(cause: BaseException) -> BaseException:
    """``cause`` under distributed's two wrappers, as a local cluster's start raises it."""
    try:
        try:
            try:
                raise cause
            except BaseException as exc:
                raise RuntimeError("Nanny failed to start worker process") from exc
        except RuntimeError as exc:
            raise RuntimeError("Cluster failed to start: Nanny failed to start") from exc
    except RuntimeError as outer:
        return outer
    raise AssertionError("unreachable")


def test_the_cause_of_a_failed_start_is_said_whole() -> None:
    """multiprocessing's "if __name__ == '__main__'" hint was cut after its first line."""
    from multiprocessing import process, spawn

    from daskcl.distributed.slots import first_cause

    me = process.current_process()
    me._inheriting = True  # type: ignore[attr-defined]
    try:
        spawn._check_not_importing_main()       # what a script without the idiom meets
    except RuntimeError as exc:
        hint = exc
    else:
        pytest.fail("multiprocessing raised nothing")
    finally:
        del me._inheriting  # type: ignore[attr-defined]
    said = first_cause(_chained(hint))
    lines = said.splitlines()
    assert lines[:2] == ["RuntimeError: An attempt has been made to start a new process before "
                         "the", "current process has finished its bootstrapping phase."], said
    assert "    if __name__ == '__main__':" in lines and "        freeze_support()" in lines
    assert lines[-1].endswith("https://docs.python.org/3/library/multiprocessing.html"), said
    assert "" not in lines and "[...]" not in said and "Traceback" not in said
    assert len(lines) == len([ln for ln in str(hint).splitlines() if ln.strip()]) <= 15
    # bounded: 15 lines, 1500 characters, the cut marked
    said = first_cause(_chained(ValueError("\n".join(f"line {i}" for i in range(40)))))
    assert said.splitlines() == ["ValueError: line 0", *(f"line {i}" for i in range(1, 14)),
                                 "line 14 [...]"]
    said = first_cause(_chained(OSError("x" * 5000)))
    assert said == "OSError: " + "x" * 1500 + " [...]"
    assert first_cause(_chained(KeyError())) == "KeyError"


def test_a_worker_whose_plugin_cannot_bind_fails_its_tasks(client2: Any) -> None:
    """distributed only logs a plugin's failed set-up and starts the worker anyway: a worker
    told DaskclPlugin(device="nosuch") joined and computed on the default device 0:0 (a device
    pin fell back to another GPU silently).  The registration raises the reason, and every
    daskcl task on such a worker fails with it; a plugin that binds makes it usable again."""
    from daskcl.errors import DeviceError, NoMatchingDeviceError

    specs = {a: d["spec"] for a, d in worker_devices(client2).items()}
    try:
        with pytest.raises(NoMatchingDeviceError, match="nosuchdevice"):
            client2.register_plugin(DaskclPlugin(device="nosuchdevice"))
        assert set(client2.run(_bound_spec).values()) == {None}
        x = da.from_array(np.array([0.5, 1.5]), chunks=1)
        with pytest.raises(DeviceError, match=(
                r"this worker could not bind the device that DaskclPlugin named "
                r"\('nosuchdevice'\): .*nosuchdevice")):
            nmath.pnorm(x).compute()
    finally:
        client2.run(_device.unbind)
        client2.register_plugin(DaskclPlugin())
    assert client2.run(_bound_spec) == specs
    assert np.array_equal(nmath.pnorm(x).compute(), nmath.pnorm(np.array([0.5, 1.5])))


def test_a_build_error_on_a_worker_reaches_the_client_as_itself(client2: Any) -> None:
    """A kernel that does not build raised BuildError on the worker with pyopencl's error as
    its hidden __context__, which distributed (tblib) could not pickle: the client got a bare
    ``Exception("BuildError(...)")`` that ``except BuildError`` does not catch."""
    from daskcl import ElementwiseKernel
    from daskcl.errors import BuildError

    bad = ElementwiseKernel("double x", "double y", "y = pnrom(x, 0., 1., 1, 0);",
                            name="builds_not")
    with pytest.raises(BuildError, match="pnrom") as err:
        bad(da.ones(4, chunks=2)).compute()
    assert err.value.log and "pnrom" in err.value.log
    assert err.value.__context__ is None


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"threads_per_worker": 0}, "threads_per_worker must be a whole number of threads, 1 or "
                                "more, got 0"),
    ({"threads_per_worker": -1}, "got -1"),
    ({"threads_per_worker": True}, "got True"),
    ({"threads_per_worker": 2.0}, "got 2.0"),
    ({"n_workers": 3.0}, "n_workers is a count (an int), device names or 'P:D' indices, or "
                         "None, got 3.0"),
    ({"n_workers": True}, "got True"),
    ({"n_workers": "2"}, "got '2'"),
])
def test_local_cluster_refuses_what_its_arguments_are_not(kwargs: dict[str, Any],
                                                         said: str) -> None:
    """0 threads gave distributed's default (a thread per core) where the docs say one per
    device, -1 a nanny's traceback; 3.0 and True workers were taken as counts, and "2" as a
    device name substring (which "avx512" matched)."""
    from daskcl.errors import ClusterError

    with pytest.raises(ClusterError, match=re.escape(said)):
        local_cluster(**kwargs)


def test_local_cluster_says_that_it_does_not_scale(client2: Any) -> None:
    """distributed's scale(n) failed inside ("'NoneType' object is not subscriptable"), and
    wait_for_workers(n) then timed out: the cluster's workers are its device slots."""
    from daskcl.errors import ClusterError

    cluster = client2.cluster
    with pytest.raises(ClusterError, match="one worker per device slot, chosen when it starts "
                                           r"\(2 here\); it does not scale or adapt"):
        cluster.scale(3)
    with pytest.raises(ClusterError, match="does not scale or adapt"):
        cluster.adapt(minimum=1, maximum=4)
    cluster.scale(2)                   # what it has: nothing to change
    assert len(worker_devices(client2)) == 2
