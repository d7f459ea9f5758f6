# SPDX-License-Identifier: GPL-2.0-or-later
"""The command line says what happened in a line: dask's log only with -v, one line on Ctrl-C,
an unreachable scheduler within its timeout, contradictory options refused, ``daskcl slurm``,
no time left shown before a chunk's real rate is known."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.procs import repo_pythonpath, run_python

from daskcl.sweep import open_result
from daskcl.sweep.runner import Progress

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": repo_pythonpath(ROOT)}
ENV.pop("DASK_LOGGING__DISTRIBUTED", None)


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return run_python(["-m", "daskcl", *args], timeout=timeout, env=ENV)


def _one_error_line(r: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert r.returncode == code, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    s = tmp_path / "s.toml"
    s.write_text('[sweep]\nfunction = "qt"\nchunks = { p = 2 }\n[axes]\n'
                 'p = { values = [0.9, 0.975, 0.995] }\ndf = { values = [1, 10, inf] }\n')
    return s


def test_quiet_sweep_prints_the_result_line_only_and_verbose_shows_dask(spec: Path,
                                                                         tmp_path: Path) -> None:
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--workers", "1", "-q")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert len(r.stdout.splitlines()) == 1 and r.stdout.startswith("wrote ")
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "v.zarr"), "--workers", "1", "-v")
    assert r.returncode == 0, r.stderr
    assert "distributed.preloading - INFO" in r.stderr


@pytest.mark.parametrize("args, text", [
    (["--sync", "--scheduler", "tcp://127.0.0.1:1"], "--sync computes in this process"),
    (["--sync", "--scheduler-file", "f.json"], "cannot go with --scheduler-file"),
    (["--resume", "--overwrite"], "--resume keeps the store's finished chunks"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "--workers is for the local"),
    (["--workers", "2", "--sync"], "--workers is for the local cluster; it cannot go with --sync"),
    (["--listen", "0.0.0.0", "--sync"], "--listen is for the local cluster"),
    (["--scheduler", "tcp://127.0.0.1:1", "--scheduler-file", "f.json"], "not both"),
    (["-q", "-v"], "--quiet and --verbose"),
    (["--workers=0"], "--workers 0: a local cluster has at least one worker"),
    (["--workers=-1"], "--workers -1: a local cluster has at least one worker"),
])
def test_contradictory_options_are_refused(tmp_path: Path, args: list[str], text: str) -> None:
    # refused before the spec is read (it does not exist) and before anything is computed
    r = _cli("sweep", str(tmp_path / "none.toml"), "--out", str(tmp_path / "o.zarr"), *args)
    _one_error_line(r, 2, text)
    assert not (tmp_path / "o.zarr").exists()


def _dead_port() -> int:
    with socket.socket() as s:  # a port of this host that nothing listens on
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_scheduler_fails_within_the_timeout(spec: Path, tmp_path: Path) -> None:
    address = f"tcp://127.0.0.1:{_dead_port()}"
    t0 = time.perf_counter()
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--scheduler", address,
             "--timeout", "2", timeout=60)
    assert time.perf_counter() - t0 < 20
    _one_error_line(r, 1, f"cannot reach the scheduler {address} within 2 s")
    r = _cli("devices", "--scheduler", address, "--timeout", "1", timeout=60)
    _one_error_line(r, 1, f"cannot reach the scheduler {address} within 1 s")
    missing = tmp_path / "scheduler.json"  # distributed alone waits for it without end
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--scheduler-file",
             str(missing), "--timeout", "2", timeout=60)
    _one_error_line(r, 1, f"no scheduler file {missing}")
    for text in ('[sweep]\nfunction = "pnorm"\n', '{"foo": 1}'):   # distributed asserted
        missing.write_text(text)
        r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--scheduler-file",
                 str(missing), timeout=60)
        _one_error_line(r, 1, f"{missing} is not a dask scheduler file")
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--scheduler", address,
             "--timeout", "-5", timeout=60)
    _one_error_line(r, 1, "--timeout must be a positive number of seconds, not -5")
    missing.write_text(f'{{"address": "{address}"}}')
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--scheduler-file",
             str(missing), "--timeout", "2", timeout=60)
    _one_error_line(r, 1, f"cannot reach the scheduler {missing} within 2 s")


#: a sweep of some seconds on one worker (qtukey, a chunk at a time)
SLOW_SPEC = ('[sweep]\nfunction = "qtukey"\nchunks = { p = 1 }\n[axes]\n'
             'p = { linspace = [0.5, 0.99, 2000] }\nnranges = { values = [1] }\n'
             'nmeans = { values = [2, 5, 10, 20] }\ndf = { values = [5, 60] }\n')


@contextlib.contextmanager
def _slow_sweep(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """``daskcl sweep`` of :data:`SLOW_SPEC` on one worker, in a process group of its own (as
    a terminal's job is), and its store; killed with its group if the test leaves it running."""
    slow = tmp_path / "slow.toml"
    slow.write_text(SLOW_SPEC)
    out = tmp_path / "o.zarr"
    proc = subprocess.Popen(
        [sys.executable, "-m", "daskcl", "sweep", str(slow), "--out", str(out), "--workers",
         "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        start_new_session=True)
    try:
        yield proc, out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def _said(err: str) -> list[str]:
    """The lines of stderr other than the progress bar's."""
    return [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("[")]


def test_ctrl_c_to_the_process_group_says_one_line(tmp_path: Path) -> None:
    with _slow_sweep(tmp_path) as (proc, _):
        assert proc.stderr is not None
        first = proc.stderr.readline()  # the first chunk is done: workers are computing
        assert first.startswith("["), first
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert _said(err) == ["interrupted: finished chunks are kept; run again with --resume"], err
    assert "Traceback" not in err and out == ""


def test_a_failing_spec_function_is_one_line_without_dask_tracebacks(tmp_path: Path) -> None:
    """The worker's "Compute Failed" block (one per try, three tries) came before daskcl's
    own line on the default cluster; dask's log is now shown only with -v."""
    (tmp_path / "f.py").write_text("def raises(x):\n    raise ValueError('boom from user code')\n")
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nfunction = "f.py:raises"\n[axes]\nx = { values = [1.0, 2.0] }\n')
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "o.zarr"), "--workers", "1", "-q",
             timeout=300)
    _one_error_line(r, 1, "failed: ValueError: boom from user code")
    r = _cli("sweep", str(spec), "--out", str(tmp_path / "v.zarr"), "--workers", "1", "-v",
             timeout=300)
    assert r.returncode == 1 and "Compute Failed" in r.stderr


def test_sigterm_stops_a_sweep_as_ctrl_c_does(tmp_path: Path) -> None:
    """kill (or a batch system's time limit) sends SIGTERM: the process died at once, with no
    line and "leaked semaphore objects"; now the sweep stops as at Ctrl-C, exit 143."""
    with _slow_sweep(tmp_path) as (proc, out):
        assert proc.stderr is not None
        first = proc.stderr.readline()   # a chunk is done
        assert first.startswith("["), first
        proc.send_signal(signal.SIGTERM)  # to the process alone, as kill does
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert _said(err) == ["terminated: finished chunks are kept; run again with --resume"], err
    assert open_result(out)["_daskcl/done"][...].sum() >= 1


def test_ctrl_c_while_the_workers_start_is_not_lost(tmp_path: Path) -> None:
    """Ctrl-C as the worker process is being spawned: it was dropped (SIGINT was ignored while
    the workers started) and the sweep ran to its end, or the half-started worker printed a
    traceback.  Now the command stops once the workers are up, in one line."""
    import psutil

    with _slow_sweep(tmp_path) as (proc, _):
        deadline = time.monotonic() + 120
        spawned = False
        while not spawned and proc.poll() is None and time.monotonic() < deadline:
            try:
                kids = psutil.Process(proc.pid).children(recursive=True)
                spawned = any("spawn_main" in " ".join(k.cmdline()) for k in kids)
            except psutil.Error:
                pass
            time.sleep(0.01)
        assert spawned, "no worker process was spawned"
        os.killpg(proc.pid, signal.SIGINT)   # the worker is still starting (importing)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert _said(err) == ["interrupted: finished chunks are kept; run again with --resume"], err
    assert "Traceback" not in err and out == ""


def test_first_progress_line_waits_for_a_measured_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 60.0, 61.0, 62.0, 63.0])  # start-up took a minute; chunks take 1 s
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    out = io.StringIO()
    bar = Progress(11, 100, out)
    bar.update()
    assert out.getvalue().splitlines()[-1].endswith("1/11 chunks  ? chunks/s  ? points/s  ? left")
    bar.update()   # t = 62: one chunk in the 1 s since the first: 9 chunks, 9 s left
    bar.update()
    bar.update()
    lines = out.getvalue().splitlines()
    assert lines[-1].endswith("4/11 chunks  1.00 chunks/s  100 points/s  7 s left"), lines


def test_devices_says_why_a_device_beside_the_chosen_one_fails(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A second PoCL whose compiler does not know the CPU (PyPI's 3.0 on an AMD Zen 5): the
    listing marks it and says why in one line, the compiler's error."""
    from daskcl import cli
    from daskcl.runtime import device

    real = device.list_devices()[0]
    broken = (real[0].__class__(**{**real[0].__dict__, "platform_index": 9, "device_index": 0}),
              "broken")
    monkeypatch.setattr(device, "list_devices", lambda: [real, broken])
    probe = device.probe_fp64
    monkeypatch.setattr(device, "probe_fp64", lambda d: (
        "the probe kernel did not build (error: unknown target CPU 'generic')")
        if d == "broken" else probe(d))
    assert cli.main(["devices"]) == 0
    out, err = capsys.readouterr()
    assert "<- chosen" in out.splitlines()[1] and "no (probe failed)" in out.splitlines()[2]
    assert err.splitlines() == [
        "9:0: the probe kernel did not build (error: unknown target CPU 'generic')"]


def test_slurm_is_a_subcommand(tmp_path: Path) -> None:
    r = _cli("slurm", "--help")
    assert r.returncode == 0 and "--print-job-script" in r.stdout and "--maximum" in r.stdout
    assert "daskcl slurm SPEC --out STORE" in _cli("--help").stdout
    r = _cli("slurm", "x.toml", "--print-job-script", "--gres", "gpu:2")
    assert r.returncode == 0, r.stderr
    assert "#SBATCH --gres=gpu:2" in r.stdout and "--preload daskcl.cluster" in r.stdout
    _one_error_line(_cli("slurm", "x.toml", "--out", "o.zarr", "--resume", "--overwrite"), 2,
                    "--resume keeps")
    _one_error_line(_cli("slurm", "x.toml", "--print-job-script", "--cache-shared"), 2,
                    "--cache-shared needs --cache-dir")


def test_a_closed_pipe_ends_quietly() -> None:
    """``daskcl devices | head -1``: the reader goes away; no traceback, exit 141."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "daskcl", "devices"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err


@pytest.mark.parametrize(("names", "said"), [
    ("pnrom", "no daskcl.nmath function 'pnrom' (did you mean pnorm, plnorm or pbinom?)"),
    ("pnorm,qbta,nosuch", "no daskcl.nmath function 'qbta' (did you mean qbeta, qnbeta or "
                          "beta?); no daskcl.nmath function 'nosuch'"),
    ("glm:binomal:logit", "no GLM family and link 'glm:binomal:logit' (did you mean "
                          "glm:binomial:logit, glm:binomial:probit or glm:binomial:cloglog?)"),
])
def test_cache_warm_suggests_the_nearest_names(tmp_path: Path, names: str, said: str) -> None:
    """A misspelt name for ``daskcl cache warm`` gets the names nearest to it, as the library's
    errors do, in one line, and nothing is built (a GLM name too, once a traceback)."""
    r = run_python(["-m", "daskcl", "cache", "warm", "--names", names], timeout=240,
                   env={**ENV, "DASKCL_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"error: {said}; nothing was built\n"
    assert not (tmp_path / "cache").exists()


# --- daskcl worker: a user's mistake is a line, a missing scheduler an error in bounded time ----


@pytest.mark.parametrize("args, text", [
    (["--nthreads", "-2", "tcp://127.0.0.1:1"], "--nthreads must be at least 1, not -2"),
    (["--nthreads", "0", "tcp://127.0.0.1:1"], "--nthreads must be at least 1, not 0"),
    ([], "give the scheduler's address (tcp://host:8786) or --scheduler-file FILE"),
    (["tcp://127.0.0.1:1", "--scheduler-file", "s.json"], "not both"),
    (["tcp://127.0.0.1:1", "--timeout", "0"], "--timeout must be a positive number of seconds"),
    (["tcp://127.0.0.1:1", "--timeout", "nan"], "--timeout must be a positive number"),
    (["tcp://127.0.0.1:1", "--devices", "0"], "--devices 0: at least one worker is needed"),
    (["tcp://127.0.0.1:1", "--devices", ","], "--devices: give 'all', a count, or devices"),
    (["nope.json"], "'nope.json' is not a scheduler address (tcp://host:port): missing port"),
])
def test_daskcl_worker_refuses_bad_arguments_in_a_line(args: list[str], text: str) -> None:
    """Before, ``--nthreads -2`` was every nanny's traceback ("max_workers must be greater than
    0") and an unreachable scheduler a 30 s wait before them."""
    t0 = time.perf_counter()
    r = _cli("worker", *args, timeout=120)
    assert time.perf_counter() - t0 < 30
    _one_error_line(r, 2, text)
    assert r.stdout == ""


def test_daskcl_worker_gives_up_on_a_scheduler_within_its_timeout(tmp_path: Path) -> None:
    """An unreachable scheduler was a 68-line traceback after 30 s; a missing scheduler file
    a silent wait without end."""
    address = f"tcp://127.0.0.1:{_dead_port()}"
    t0 = time.perf_counter()
    r = _cli("worker", address, "--timeout", "2", timeout=120)
    assert time.perf_counter() - t0 < 25
    _one_error_line(r, 1, f"cannot reach the scheduler {address} within 2 s")
    missing = tmp_path / "scheduler.json"
    t0 = time.perf_counter()
    r = _cli("worker", "--scheduler-file", str(missing), "--timeout", "1", timeout=120)
    assert time.perf_counter() - t0 < 25
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [
        f"daskcl worker: waiting up to 1 s for the scheduler file {missing} (--timeout)",
        f"error: no scheduler file {missing} (waited 1 s for it; --timeout SECONDS waits "
        "longer)"], r.stderr
    missing.write_text('{"foo": 1}')
    r = _cli("worker", "--scheduler-file", str(missing), "--timeout", "1", timeout=120)
    assert r.returncode == 1 and r.stderr.splitlines()[-1] == (
        f"error: {missing} is not a dask scheduler file (JSON with the scheduler's \"address\"), "
        "as `dask scheduler --scheduler-file` writes it (waited 1 s)"), r.stderr
    r = run_python(["-m", "daskcl", "worker", address, "--timeout", "2"], timeout=120,
                   env={**ENV, "DASKCL_WARM": "pnorm,pnrom"})   # each worker failed at start
    _one_error_line(r, 1, "cannot warm 'pnrom' (DASKCL_WARM, the config key worker.warm): no "
                    "such daskcl.nmath function")
    # any config key the config refuses, said before the worker joins (it joined and failed
    # every task it was sent)
    r = run_python(["-m", "daskcl", "worker", address, "--timeout", "2"], timeout=120,
                   env={**ENV, "DASKCL_BINNING": "zzz"})
    _one_error_line(r, 1, "DASKCL_BINNING='zzz' is not understood; DASKCL_BINNING must be 0, 1, "
                    "auto or WGxEPIrN")
    r = _cli("worker", address, "--listen", "nosuchhost.invalid", "--timeout", "2", timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: cannot listen on nosuchhost.invalid: "), r.stderr


def test_daskcl_worker_waits_for_a_scheduler_file_that_appears(tmp_path: Path) -> None:
    """A scheduler started beside the workers writes its file a moment later: the worker waits
    for it (saying so), reads the address, then tries that scheduler within its timeout."""
    sched_file = tmp_path / "scheduler.json"
    address = f"tcp://127.0.0.1:{_dead_port()}"
    with subprocess.Popen([sys.executable, "-m", "daskcl", "worker", "--scheduler-file",
                           str(sched_file), "--timeout", "10"], env=ENV, text=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        try:
            assert proc.stderr is not None
            first = proc.stderr.readline()     # the file is written once the worker waits
            sched_file.write_text(f'{{"address": "{address}"}}')
            rest = proc.stderr.read()
            proc.wait(timeout=240)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert first == (f"daskcl worker: waiting up to 10 s for the scheduler file {sched_file} "
                     "(--timeout)\n"), first + rest
    assert proc.returncode == 1 and "Traceback" not in rest, rest
    lines = rest.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: cannot reach the scheduler {address} within 10 s: "), rest
