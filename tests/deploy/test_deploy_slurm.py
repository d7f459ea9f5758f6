# SPDX-License-Identifier: GPL-2.0-or-later
"""deploy/slurm on a real SLURM scheduler: a one-node cluster on localhost.

The fixture starts munged, slurmctld and slurmd (Debian's ``munge`` and ``slurm-wlm``) with a
generated slurm.conf and munge key in a temporary directory.  The node offers two "GPUs" as
generic resources whose device files are /dev/null and /dev/zero: SLURM hands them out and sets
``CUDA_VISIBLE_DEVICES`` exactly as it does for real GPUs, while the workers compute on PoCL.
Both deployment forms run the same small sweep with two workers, and the zarr result must equal
the in-process run.  Where the machine cannot start slurmd the tests skip, saying why.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from support.procs import repo_pythonpath

from daskcl.sweep import Sweep, open_result, run

ROOT = Path(__file__).resolve().parents[2]
SBATCH_SCRIPT = ROOT / "deploy" / "slurm" / "sweep.sbatch"

SPEC = """\
[sweep]
function = "qgamma"
chunks = { p = 4, shape = 3 }

[axes]
p = { linspace = [0.01, 0.99, 16] }
shape = { values = [0.1, 0.5, 1.0, 2.5, 10.0, 100.0] }

[args]
scale = 2.0
lower_tail = false
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _terminate(pid: int) -> None:
    """SIGTERM a daemon this module started until it is gone (SIGKILL after 10 s)."""
    for i in range(100):
        try:
            os.kill(pid, signal.SIGTERM if i < 99 else signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def _kill_pidfile(path: Path) -> None:
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    _terminate(pid)


@dataclass
class Slurm:
    root: Path
    env: dict[str, str]
    node: str

    def run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, check=check,
                              timeout=60)

    def jobs(self) -> list[str]:
        out = self.run("squeue", "-h", "-o", "%i %T %b").stdout
        return [line for line in out.splitlines() if line.strip()]

    def wait_no_jobs(self, timeout: float = 60) -> list[str]:
        """The jobs still there after ``timeout`` seconds (none once all have ended)."""
        deadline = time.monotonic() + timeout
        while (jobs := self.jobs()) and time.monotonic() < deadline:
            time.sleep(0.5)
        return jobs

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-1500:]
                         for p in sorted((self.root / "log").glob("*.log")))


def _slurm_conf(root: Path, node: str, cpus: int, mem_mb: int) -> str:
    return f"""\
ClusterName=daskcltest
SlurmctldHost={node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge/munge.socket
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
GresTypes=gpu
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem_mb} Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slurm]:
    """A running one-node SLURM cluster (slurmctld + slurmd + munged) on localhost."""
    missing = [c for c in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")
               if shutil.which(c) is None]
    if missing:
        pytest.skip(f"no SLURM here ({', '.join(missing)} not found): "
                    "apt-get install slurm-wlm munge")
    if os.geteuid() != 0:
        pytest.skip("cannot start slurmd: this one-node test cluster runs its daemons as root")
    root = tmp_path_factory.mktemp("slurm")
    for d in ("munge", "state", "spool", "log"):
        (root / d).mkdir()
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    node = socket.gethostname().split(".")[0]
    mem_mb = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 * 0.8)
    (root / "slurm.conf").write_text(_slurm_conf(root, node, os.cpu_count() or 1, mem_mb))
    # Two stand-in GPUs: SLURM only needs character devices to hand out.
    (root / "gres.conf").write_text(f"NodeName={node} Name=gpu File=/dev/null\n"
                                    f"NodeName={node} Name=gpu File=/dev/zero\n")
    env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
    cluster = Slurm(root, env, node)
    started: list[Path] = []
    try:
        subprocess.run(["munged", "--force", f"--key-file={key}",
                        f"--socket={root}/munge/munge.socket", f"--pid-file={root}/munged.pid",
                        f"--log-file={root}/log/munged.log", f"--seed-file={root}/munge/seed"],
                       check=True, capture_output=True, text=True, timeout=30)
        started.append(root / "munged.pid")
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run([daemon], env=env, check=True, capture_output=True, text=True,
                           timeout=30)
            started.insert(0, root / f"{daemon}.pid")
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = cluster.run("sinfo", "-h", "-N", "-o", "%T", check=False).stdout.strip()
            if state in ("idle", "mixed", "allocated"):
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"the node did not come up (state {state!r})")
    except (subprocess.SubprocessError, OSError, RuntimeError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        logs = cluster.logs()
        for pidfile in started:
            _kill_pidfile(pidfile)
        pytest.skip(f"this machine cannot start a SLURM cluster (slurmctld + slurmd): {exc} "
                    f"{detail}\n{logs}")
    pids = [int(p.read_text().split()[0]) for p in started]
    yield cluster
    for job in cluster.jobs():
        cluster.run("scancel", job.split()[0], check=False)
    cluster.wait_no_jobs()  # a job still completing would keep its slurmstepd waiting
    cluster.run("scontrol", "shutdown", check=False)
    for pid in pids:
        _terminate(pid)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """The spec on disk and its in-process result."""
    d = tmp_path_factory.mktemp("sweep")
    spec = d / "sweep.toml"
    spec.write_text(SPEC)
    res = run(Sweep.from_toml(spec), d / "local.zarr", client="sync")
    assert res.computed == 8
    return spec, res.arrays["qgamma"]


def _check_store(store: Path, want: np.ndarray) -> None:
    g = open_result(store)
    np.testing.assert_array_equal(g["qgamma"][...], want)
    assert g["_daskcl/done"][...].all()
    assert g.attrs["daskcl_function"] == "qgamma"


def test_job_script_is_one_gpu_worker_bound_by_the_preload() -> None:
    from daskcl.deploy import cache_prologue, slurm_cluster

    with slurm_cluster(device="NVIDIA", queue="gpu", account="proj", walltime="01:00:00",
                       job_extra_directives=["--constraint=a100"],
                       job_script_prologue=["module load cuda"]) as cluster:
        script = cluster.job_script()
    lines = script.splitlines()
    assert "#SBATCH --gres=gpu:1" in lines and "#SBATCH --constraint=a100" in lines
    assert "#SBATCH -p gpu" in lines and "#SBATCH -A proj" in lines
    assert "#SBATCH -t 01:00:00" in lines and "#SBATCH --cpus-per-task=1" in lines
    prologue = cache_prologue()
    i = lines.index(prologue[0])
    assert lines[i:i + len(prologue)] == prologue
    assert 'export DASKCL_DEVICE="NVIDIA"' in lines and "module load cuda" in lines
    command = lines[-1]
    assert "distributed.cli.dask_worker" in command and "--preload daskcl.cluster" in command
    assert "--nthreads 1 " in command and "--local-directory ${TMPDIR:-/tmp}" in command


def _node_cache(tmp: Path, lines: list[str]) -> Path:
    """DASKCL_CACHE_DIR as the job's shell on a node with this TMPDIR sets it."""
    script = "\n".join([*lines, 'echo "$DASKCL_CACHE_DIR"'])
    got = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "TMPDIR": str(tmp)}).stdout.strip()
    return Path(got)


def test_node_local_cache_is_private_to_the_user(tmp_path: Path) -> None:
    """The job's shell makes the node-local cache 0700; where another user made that path
    first (a predictable name in a shared /tmp), the job takes a fresh private directory."""
    from daskcl.deploy import NODE_LOCAL_CACHE, cache_prologue

    mine = tmp_path / "mine"
    mine.mkdir()
    got = _node_cache(mine, cache_prologue())
    assert got == mine / f"daskcl-cache-{os.geteuid()}"
    assert got.is_dir() and (got.stat().st_mode & 0o777) == 0o700
    assert _node_cache(mine, cache_prologue()) == got  # the next job on the node finds it
    # sweep.sbatch makes it the same way, in each task
    sbatch = {line.strip() for line in SBATCH_SCRIPT.read_text().splitlines()}
    assert set(cache_prologue()[1:]) <= sbatch
    assert f'DASKCL_CACHE_DIR="{NODE_LOCAL_CACHE}"' in sbatch
    if os.geteuid() != 0:
        pytest.skip("a directory of another user is made by root (CI runs the tests as root)")
    shared = tmp_path / "shared-tmp"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    squatted = shared / f"daskcl-cache-{os.geteuid()}"
    squatted.mkdir(mode=0o777)
    os.chown(squatted, 65534, 65534)  # nobody made it first
    got = _node_cache(shared, cache_prologue())
    assert got != squatted and got.parent == shared
    st = got.stat()
    assert st.st_uid == os.geteuid() and (st.st_mode & 0o777) == 0o700
    # a symbolic link to another user's directory is not taken either
    squatted.rmdir()
    other = shared / "other"
    other.mkdir()
    os.chown(other, 65534, 65534)
    squatted.symlink_to(other)
    os.lchown(squatted, 65534, 65534)
    got = _node_cache(shared, cache_prologue())
    assert got not in (squatted, other) and got.stat().st_uid == os.geteuid()


def test_group_cache_is_an_explicit_choice() -> None:
    from daskcl.deploy import cache_prologue, slurm_cluster

    assert cache_prologue("/shared/daskcl", shared=True) == [
        "export DASKCL_CACHE_SHARED=group", 'export DASKCL_CACHE_DIR="/shared/daskcl"']
    with slurm_cluster(cache_dir="/shared/daskcl", cache_shared=True) as cluster:
        lines = cluster.job_script().splitlines()
    assert "export DASKCL_CACHE_SHARED=group" in lines
    assert 'export DASKCL_CACHE_DIR="/shared/daskcl"' in lines
    with pytest.raises(ValueError, match="cache_shared=True needs cache_dir"):
        slurm_cluster(cache_shared=True)
    r = subprocess.run([sys.executable, "-m", "daskcl.deploy", "slurm", "x.toml",
                        "--print-job-script", "--cache-shared"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath(ROOT)})
    assert r.returncode == 2 and "--cache-shared needs --cache-dir" in r.stderr


@pytest.mark.slurm
def test_sweep_on_slurm_cluster_equals_local_run(slurm: Slurm, reference: tuple[Path, np.ndarray],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """dask-jobqueue path: two adaptive GPU jobs run the sweep; then they are retired."""
    from distributed import Client, get_task_stream

    from daskcl.cluster import worker_devices
    from daskcl.deploy import slurm_cluster
    from daskcl.nmath import pnorm

    spec, want = reference
    node_tmp = tmp_path / "node-tmp"  # stands for the compute node's local disk
    node_tmp.mkdir()
    for key, value in slurm.env.items():
        monkeypatch.setenv(key, value)  # sbatch reads SLURM_CONF; jobs inherit the environment
    monkeypatch.setenv("TMPDIR", str(node_tmp))
    monkeypatch.setenv("PYTHONPATH", repo_pythonpath(ROOT))  # the workers import this checkout's daskcl
    with slurm_cluster(minimum=2, maximum=2, memory="2GB",
                       log_directory=str(tmp_path / "logs")) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2, timeout=180)
        jobs = slurm.jobs()
        assert len(jobs) == 2 and all("gpu:1" in j for j in jobs), jobs
        # The preload bound each worker's device at start-up (read without binding anything).
        bound = client.run(lambda: (lambda b: b and b.info.platform)(
            __import__("daskcl.runtime.device", fromlist=["_bound"])._bound))
        assert len(bound) == 2 and all(bound.values()), bound
        devices = worker_devices(client)
        assert len(devices) == 2
        assert all(d["fp64"] for d in devices.values())
        # Each worker was bound to the GPU SLURM gave its job, and caches on node-local disk.
        assert sorted(d.get("CUDA_VISIBLE_DEVICES") for d in devices.values()) == ["0", "1"]
        assert {d["DASKCL_CACHE_DIR"] for d in devices.values()} == {
            f"{node_tmp}/daskcl-cache-{os.getuid()}"}
        with get_task_stream(client) as ts:
            res = run(Sweep.from_toml(spec), tmp_path / "slurm.zarr", client)
        assert res.computed == 8
        # The sweep ran on the jobs' workers; the scheduler may give one of them every chunk
        # (under load one took all 8), so each worker computes on its GPU by name as well.
        assert {t["worker"] for t in ts.data} <= set(devices)
        x = np.linspace(-3.0, 3.0, 7)
        for address in devices:
            got = client.submit(pnorm, x, workers=[address], allow_other_workers=False,
                                pure=False).result(timeout=120)
            np.testing.assert_array_equal(got, pnorm(x))
        _check_store(tmp_path / "slurm.zarr", want)
        assert any((node_tmp / f"daskcl-cache-{os.getuid()}").rglob("*"))
        # Adaptive: with nothing to do, the jobs are retired down to the new minimum.
        cluster.adapt(minimum=0, maximum=2, interval="200ms", wait_count=2)
        assert slurm.wait_no_jobs() == []


@pytest.mark.slurm
def test_one_liner_runs_a_spec_on_adaptive_jobs(slurm: Slurm, reference: tuple[Path, np.ndarray],
                                                tmp_path: Path) -> None:
    """``python -m daskcl.deploy slurm SPEC --out STORE --maximum N``: jobs from zero, as needed."""
    spec, want = reference
    store = tmp_path / "cli.zarr"
    env = {**slurm.env, "PYTHONPATH": repo_pythonpath(ROOT), "TMPDIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "daskcl.deploy", "slurm", str(spec), "--out",
                        str(store), "--maximum", "2", "--memory", "1GB", "--quiet"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-5000:]
    assert "8 chunks computed" in r.stdout, r.stdout
    _check_store(store, want)
    assert slurm.wait_no_jobs() == []  # the jobs went with the cluster


@pytest.mark.slurm
def test_a_job_slurm_refuses_is_one_error_not_a_wait(slurm: Slurm, tmp_path: Path) -> None:
    """A partition that does not exist: SLURM is asked before anything is submitted or written
    (before, dask-jobqueue printed its tracebacks and the command waited without end)."""
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    store = tmp_path / "never.zarr"
    env = {**slurm.env, "PYTHONPATH": repo_pythonpath(ROOT), "TMPDIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "daskcl.deploy", "slurm", str(spec), "--out",
                        str(store), "--workers", "1", "--queue", "nosuchpartition"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    assert r.stderr == ("error: SLURM would not take a worker job (allocation failure: Invalid "
                        "partition name specified); check --queue, --account, --gres and "
                        "--job-extra (--print-job-script shows the job)\n"), r.stderr
    assert not store.exists() and slurm.jobs() == []


def test_without_sbatch_the_command_says_so(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": repo_pythonpath(ROOT)}
    r = subprocess.run([sys.executable, "-m", "daskcl.deploy", "slurm", str(spec), "--out",
                        str(tmp_path / "never.zarr"), "--workers", "1"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    assert r.stderr == ("error: sbatch is not on PATH: daskcl slurm submits its workers as SLURM "
                        "jobs, from a machine where sbatch works\n")
    assert not (tmp_path / "never.zarr").exists()


@pytest.mark.slurm
def test_batch_script_runs_scheduler_workers_and_sweep(slurm: Slurm,
                                                       reference: tuple[Path, np.ndarray],
                                                       tmp_path: Path) -> None:
    """The sbatch form: scheduler, one worker per task and GPU, and the sweep in one job."""
    spec, want = reference
    store = tmp_path / "batch.zarr"
    log = tmp_path / "job.log"
    env = {**slurm.env, "PYTHONPATH": repo_pythonpath(ROOT), "TMPDIR": str(tmp_path)}
    submit = subprocess.run(
        ["sbatch", "--parsable", "--ntasks=2", "--cpus-per-task=1", "--mem-per-cpu=1G",
         "--time=00:10:00", f"--output={log}", str(SBATCH_SCRIPT), str(spec), str(store)],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60)
    job = submit.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if not slurm.run("squeue", "-h", "-j", job, check=False).stdout.strip():
            break
        time.sleep(1)
    else:
        slurm.run("scancel", job, check=False)
        pytest.fail(f"job {job} did not finish:\n{log.read_text() if log.exists() else ''}")
    text = log.read_text()
    state = slurm.run("scontrol", "show", "job", job, check=False).stdout
    assert "JobState=COMPLETED" in state and "ExitCode=0:0" in state, text + state
    visible = sorted(line.rsplit("=", 1)[1] for line in text.splitlines()
                     if "CUDA_VISIBLE_DEVICES=" in line)
    assert visible == ["0", "1"], text
    listed = [ln for ln in text.splitlines() if ln.startswith("tcp://")]  # daskcl devices
    assert len(listed) == 2 and all(ln.endswith(") fp64") for ln in listed), text
    assert "8 chunks computed" in text, text
    _check_store(store, want)
    assert not list(tmp_path.glob("daskcl-scheduler-*.json"))  # cleaned up



def test_a_slurm_cluster_leaves_ctrl_c_to_python() -> None:
    """dask-jobqueue installs a SIGINT handler as it is imported (``sys.exit()``: a sweep
    stopped with Ctrl-C exited 0 without a word); making a SLURM cluster leaves the process's
    own handler in place, so Ctrl-C stops a sweep with KeyboardInterrupt (exit 130)."""
    code = (
        "import signal\n"
        "from daskcl.deploy import slurm_cluster\n"
        "with slurm_cluster(device='NVIDIA', queue='gpu') as c:\n"
        "    c.job_script()\n"
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "True"


def test_ctrl_c_in_a_slurm_sweep_says_one_line_and_exits_130(monkeypatch, capsys) -> None:
    import argparse

    from daskcl import deploy

    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(deploy, "_slurm", interrupted)
    args = deploy.slurm_arguments(argparse.ArgumentParser()).parse_args(
        ["spec.toml", "--out", "o.zarr", "--workers", "2"])
    assert deploy.run_slurm(args) == 130
    assert capsys.readouterr().err.strip() == ("interrupted: finished chunks are kept; run "
                                               "again with --resume")


# --- where a SLURM cluster listens ---------------------------------------------------------------


def _listening() -> set[tuple[str, int]]:
    """The (address, port) pairs this process listens on."""
    import psutil

    me = psutil.Process()
    conns = me.net_connections("inet") if hasattr(me, "net_connections") else me.connections("inet")
    return {(c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN}


def test_the_scheduler_listens_on_one_address_and_its_dashboard_on_loopback() -> None:
    """dask-jobqueue's scheduler listened on every interface (0.0.0.0 and [::]) and its
    dashboard on 0.0.0.0:8787.  The scheduler must be reachable from the compute nodes, so it
    listens on the network, but on one address, the one its workers are given; the dashboard
    on loopback unless told otherwise."""
    from distributed.comm import get_address_host_port
    from distributed.utils import get_ip

    from daskcl.deploy import slurm_cluster

    before = _listening()
    with slurm_cluster() as cluster:
        opened = _listening() - before
        host, port = get_address_host_port(cluster.scheduler_address)
        http = cluster.scheduler.http_server.port
        script = cluster.job_script()
        link = cluster.dashboard_link
    assert host == get_ip()                     # the address dask advertised before
    assert f" {cluster.scheduler_address} " in script    # and the workers are given
    assert opened == {(host, port), ("127.0.0.1", http)}, opened
    # the link names where the dashboard listens (distributed named the scheduler's host)
    assert link == f"http://127.0.0.1:{http}/status", link
    # --interface: the workers' interface is the scheduler's, its address alone
    before = _listening()
    with slurm_cluster(interface="lo", dashboard_address=":0") as cluster:
        opened = _listening() - before
        host, port = get_address_host_port(cluster.scheduler_address)
        http = cluster.scheduler.http_server.port
        assert "--interface lo" in cluster.job_script()
    assert host == "127.0.0.1" and opened == {("127.0.0.1", port), ("127.0.0.1", http)}, opened
    # a dashboard elsewhere, and a scheduler host, when asked for
    before = _listening()
    with slurm_cluster(dashboard_address=f"{get_ip()}:0",
                       scheduler_options={"host": "127.0.0.1"}) as cluster:
        opened = _listening() - before
        _, port = get_address_host_port(cluster.scheduler_address)
        http = cluster.scheduler.http_server.port
        link = cluster.dashboard_link
    assert opened == {("127.0.0.1", port), (get_ip(), http)}, opened
    assert link == f"http://{get_ip()}:{http}/status", link


def test_a_scheduler_that_cannot_listen_is_one_error(tmp_path: Path) -> None:
    from daskcl.deploy import slurm_cluster
    from daskcl.errors import ClusterError

    with pytest.raises(ClusterError, match=r"^the SLURM cluster's scheduler did not start: "
                       r"ValueError: 'nosuchif0' is not a valid network interface"):
        slurm_cluster(interface="nosuchif0")
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    r = subprocess.run([sys.executable, "-m", "daskcl", "slurm", str(spec), "--out",
                        str(tmp_path / "o.zarr"), "--workers", "1", "--interface", "nosuchif0"],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath(ROOT)})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("error: the SLURM cluster's scheduler did not start: ValueError: "
                               "'nosuchif0' is not a valid network interface"), r.stderr
    assert len(r.stderr.splitlines()) == 1 and not (tmp_path / "o.zarr").exists()


def test_print_job_script_starts_no_scheduler(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``daskcl slurm --print-job-script`` submits nothing, yet it started a scheduler on
    every interface to print the job; the script is rendered without one now, the same
    script a running cluster submits (its address a placeholder)."""
    import argparse

    from daskcl import deploy

    real = deploy._slurm_cluster_class()

    class NeverStarted(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("a cluster was started")

    monkeypatch.setattr(deploy, "_slurm_cluster_class", lambda: NeverStarted)
    args = deploy.slurm_arguments(argparse.ArgumentParser()).parse_args(
        ["x.toml", "--print-job-script", "--queue", "gpu", "--device", "NVIDIA",
         "--interface", "lo", "--job-extra=--constraint=a100", "--gres", "gpu:2"])
    before = _listening()
    assert deploy.run_slurm(args) == 0
    assert _listening() - before == set()
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert "#SBATCH -p gpu" in lines and "#SBATCH --gres=gpu:2" in lines
    assert "#SBATCH --constraint=a100" in lines and 'export DASKCL_DEVICE="NVIDIA"' in lines
    command = next(ln for ln in lines if "distributed.cli.dask_worker" in ln)
    assert " tcp://<insert-scheduler-address-here>:8786 " in command
    assert command.endswith("--preload daskcl.cluster --interface lo")
    monkeypatch.undo()
    # the very script a running cluster of those settings submits, but for the address
    with deploy.slurm_cluster(queue="gpu", device="NVIDIA", interface="lo",
                              job_extra_directives=["--constraint=a100"], gres="gpu:2",
                              dashboard_address=":0") as cluster:
        live = cluster.job_script().replace(cluster.scheduler_address,
                                            "tcp://<insert-scheduler-address-here>:8786")
    assert printed == live + "\n"
