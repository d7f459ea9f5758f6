# SPDX-License-Identifier: GPL-2.0-or-later
"""deploy/kubernetes: the manifests against dask-kubernetes' CRD schemas, and their commands run.

* Every DaskCluster, DaskJob and DaskAutoscaler is validated against the CRD schema that the
  dask-kubernetes package ships (its Helm chart's crds/), strictly: an unknown field is an error,
  as with ``kubectl apply --validate=strict``.  ConfigMap and PersistentVolumeClaim are checked
  field by field against the Kubernetes client's models.
* The dask Helm chart publishes no values.schema.json: the Kubernetes objects among the values
  are validated against the same (core v1) schemas, the keys against those the chart reads.
* The containers are then run for real: the pod specs are built by the operator's own functions,
  ``$(VAR)`` references are expanded as the kubelet does, each volume mount is a temporary
  directory, and the Service address of the scheduler is that of a local ``dask scheduler``.
  The one other substitution: ``DASKCL_DEVICE=NVIDIA`` becomes PoCL's name on this machine.
  The DaskJob's sweep writes to ``s3://`` on a local S3 server (moto) and must equal the
  in-process run.
"""

from __future__ import annotations

import copy
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dask_kubernetes
import jsonschema
import numpy as np
import pytest
import yaml
from distributed import Client
from support.procs import repo_pythonpath

from daskcl.sweep import Sweep, open_result, run

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
CRDS = (Path(dask_kubernetes.__file__).parent / "operator" / "deployment" / "helm"
        / "dask-kubernetes-operator" / "crds")
POCL = "Portable Computing Language"
# Keys of the dask chart's values.yaml (top level, and under worker:) that its templates read.
HELM_TOP_KEYS = {"nameOverride", "fullnameOverride", "scheduler", "webUI", "worker",
                 "additional_worker_groups", "jupyter"}
HELM_WORKER_KEYS = {"name", "image", "replicas", "strategy", "custom_scheduler_url",
                    "default_resources", "env", "extraArgs", "resources", "mounts", "annotations",
                    "tolerations", "affinity", "nodeSelector", "securityContext",
                    "serviceAccountName", "port", "portDashboard", "threads_per_worker", "metrics",
                    "livenessProbe", "readinessProbe"}
HELM_IMAGE_KEYS = {"repository", "tag", "pullPolicy", "dask_worker", "pullSecrets"}


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def _kind(name: str, kind: str) -> dict[str, Any]:
    (doc,) = [d for d in _docs(name) if d["kind"] == kind]
    return doc


# --- schemas ---------------------------------------------------------------------------------


def _strict(schema: Any) -> Any:
    """The schema with every object closed to fields it does not name (kubectl's strict mode)."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: (_strict(v) if k in ("items", "additionalProperties", "anyOf", "allOf", "oneOf",
                                   "not") else v) for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {k: _strict(v) for k, v in schema["properties"].items()}
        if "additionalProperties" not in schema and not schema.get(
                "x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


@pytest.fixture(scope="module")
def crd_schemas() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
        out[crd["spec"]["names"]["kind"]] = _strict(v1["schema"]["openAPIV3Schema"])
    assert {"DaskCluster", "DaskJob", "DaskAutoscaler", "DaskWorkerGroup"} <= set(out), CRDS
    return out


def _errors(schema: dict[str, Any], obj: Any) -> list[str]:
    validator = jsonschema.Draft4Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(obj)]


def _crd_errors(doc: dict[str, Any], schemas: Mapping[str, dict[str, Any]]) -> list[str]:
    errors = []
    if doc.get("apiVersion") != "kubernetes.dask.org/v1":
        errors.append(f"apiVersion {doc.get('apiVersion')!r}")
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["metadata"]["name"]):
        errors.append(f"metadata.name {doc['metadata']['name']!r}")
    body = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}
    return errors + _errors(schemas[doc["kind"]], body)


def _model_errors(obj: Any, type_name: str, path: str = "") -> list[str]:
    """``obj`` against a model of the Kubernetes client: unknown fields and wrong types."""
    import kubernetes.client.models as models

    if m := re.fullmatch(r"[Ll]ist\[(.+)\]", type_name):
        if not isinstance(obj, list):
            return [f"{path}: expected a list"]
        return [e for i, x in enumerate(obj) for e in _model_errors(x, m[1], f"{path}[{i}]")]
    if m := (re.fullmatch(r"dict\(str, (.+)\)", type_name)
             or re.fullmatch(r"Dict\[str, (.+)\]", type_name)):
        if not isinstance(obj, dict):
            return [f"{path}: expected a mapping"]
        return [e for k, v in obj.items() for e in _model_errors(v, m[1], f"{path}.{k}")]
    simple: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (int, float),
                                           "bool": (bool,), "object": (object,)}
    if type_name in simple:
        ok = isinstance(obj, simple[type_name]) and not (type_name == "int"
                                                         and isinstance(obj, bool))
        return [] if ok else [f"{path}: expected {type_name}, got {obj!r}"]
    model = getattr(models, type_name)
    if not isinstance(obj, dict):
        return [f"{path}: expected a {type_name} mapping"]
    by_key = {key: attr for attr, key in model.attribute_map.items()}
    errors = [f"{path}.{k}: unknown field of {type_name}" for k in obj if k not in by_key]
    for key, value in obj.items():
        if key in by_key:
            errors += _model_errors(value, model.openapi_types[by_key[key]], f"{path}.{key}")
    return errors


def test_operator_resources_match_the_crd_schemas(crd_schemas: dict[str, Any]) -> None:
    docs = _docs("daskcluster.yaml") + _docs("daskjob.yaml")
    assert sorted(d["kind"] for d in docs) == ["ConfigMap", "DaskAutoscaler", "DaskCluster",
                                               "DaskJob"]
    for doc in docs:
        if doc["kind"] != "ConfigMap":
            assert _crd_errors(doc, crd_schemas) == [], doc["kind"]


def test_the_strict_validation_has_teeth(crd_schemas: dict[str, Any]) -> None:
    cluster = _kind("daskcluster.yaml", "DaskCluster")
    typo = copy.deepcopy(cluster)
    container = typo["spec"]["worker"]["spec"]["containers"][0]
    container["resource"] = container.pop("resources")
    assert any("'resource' was unexpected" in e for e in _crd_errors(typo, crd_schemas))
    unquoted = copy.deepcopy(cluster)
    unquoted["spec"]["worker"]["spec"]["containers"][0]["resources"]["limits"][
        "nvidia.com/gpu"] = 1  # the API server rejects a number here: the CRD says string
    assert any("nvidia.com/gpu" in e for e in _crd_errors(unquoted, crd_schemas))
    assert _model_errors({"metadata": {"name": "x"}, "dta": {}}, "V1ConfigMap") != []


def test_core_objects_match_the_kubernetes_models(tmp_path: Path) -> None:
    pvc = _kind("storage.yaml", "PersistentVolumeClaim")
    assert pvc["apiVersion"] == "v1"
    body = {k: v for k, v in pvc.items() if k != "apiVersion" and k != "kind"}
    assert _model_errors(body, "V1PersistentVolumeClaim") == []
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]  # many workers write one store
    assert pvc["spec"]["resources"]["requests"]["storage"]
    cm = _kind("daskjob.yaml", "ConfigMap")
    assert _model_errors({k: v for k, v in cm.items() if k not in ("apiVersion", "kind")},
                         "V1ConfigMap") == []
    (tmp_path / "sweep.toml").write_text(cm["data"]["sweep.toml"])
    assert Sweep.from_toml(tmp_path / "sweep.toml").n_chunks == 4  # a valid spec


def test_worker_pods_are_one_gpu_daskcl_workers() -> None:
    cluster = _kind("daskcluster.yaml", "DaskCluster")
    job = _kind("daskjob.yaml", "DaskJob")
    worker = cluster["spec"]["worker"]
    assert job["spec"]["cluster"]["spec"]["worker"] == worker  # one worker spec, no drift
    (c,) = worker["spec"]["containers"]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "1"
    args = " ".join(c["args"])
    assert args.startswith("dask worker ") and "--nthreads 1" in args
    assert "--preload daskcl.cluster" in args
    env = {e["name"]: e["value"] for e in c["env"]}
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in worker["spec"]["volumes"]}
    assert "emptyDir" in volumes["scratch"]  # node-local disk for the program cache
    assert env["DASKCL_CACHE_DIR"].startswith(mounts["scratch"] + "/")
    # the cache (native code) stays in the pod's own volume, never on the shared one
    assert not env["DASKCL_CACHE_DIR"].startswith(mounts["results"] + "/")
    assert "DASKCL_CACHE_SHARED" not in env
    assert _kind("daskcluster.yaml", "DaskAutoscaler")["spec"]["cluster"] == "daskcl"
    (runner,) = job["spec"]["job"]["spec"]["containers"]
    assert runner["args"][:2] == ["daskcl", "sweep"]
    assert "$(DASK_SCHEDULER_ADDRESS)" in runner["args"] and "--resume" in runner["args"]


def test_helm_values(crd_schemas: dict[str, Any]) -> None:
    values = yaml.safe_load((K8S / "helm-values.yaml").read_text())
    assert set(values) <= HELM_TOP_KEYS
    w = values["worker"]
    assert set(w) <= HELM_WORKER_KEYS and set(w["image"]) <= HELM_IMAGE_KEYS
    assert set(values["scheduler"]["image"]) <= HELM_IMAGE_KEYS - {"dask_worker"}
    # The Kubernetes objects among the values, against the core v1 schemas in the CRD.
    pod = crd_schemas["DaskCluster"]["properties"]["spec"]["properties"]["worker"][
        "properties"]["spec"]
    container = pod["properties"]["containers"]["items"]["properties"]
    for schema, obj in ((container["resources"], w["resources"]), (container["env"], w["env"]),
                        (container["volumeMounts"], w["mounts"]["volumeMounts"]),
                        (pod["properties"]["volumes"], w["mounts"]["volumes"]),
                        (pod["properties"]["tolerations"], w["tolerations"])):
        assert _errors(schema, obj) == [], obj
    assert w["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert w["threads_per_worker"] == 1 and values["jupyter"]["enabled"] is False
    # the program cache in the pod's own emptyDir
    env = {e["name"]: e["value"] for e in w["env"]}
    (scratch,) = (m["mountPath"] for m in w["mounts"]["volumeMounts"] if m["name"] == "scratch")
    assert {v["name"]: v for v in w["mounts"]["volumes"]}["scratch"] == {"name": "scratch",
                                                                         "emptyDir": {}}
    assert env["DASKCL_CACHE_DIR"].startswith(scratch + "/")
    assert "DASKCL_CACHE_SHARED" not in env


# --- running the containers ------------------------------------------------------------------


def _expand(text: str, env: Mapping[str, str]) -> str:
    """The kubelet's ``$(VAR)`` expansion (``$$`` escapes; unknown references stay)."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m[0] == "$$" else env.get(m[1], m[0]), text)


def _command(container: dict[str, Any], volumes: Path, secrets: Mapping[str, dict[str, str]],
             override: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """argv and environment of ``container`` on this machine (see the module docstring)."""
    mounts = {m["mountPath"]: volumes / m["name"] for m in container.get("volumeMounts", [])}
    for path in mounts.values():
        path.mkdir(parents=True, exist_ok=True)

    def local(text: str) -> str:
        for mount, path in mounts.items():
            text = re.sub(rf"(?<![\w/.-]){re.escape(mount)}(?=/|$)", str(path), text)
        return text

    cenv: dict[str, str] = {}
    for source in container.get("envFrom", []):
        ref = source["secretRef"]
        if ref["name"] in secrets:
            cenv.update(secrets[ref["name"]])
        else:
            assert ref.get("optional"), f"secret {ref['name']} is required"
    for var in container.get("env", []):
        cenv[var["name"]] = _expand(var["value"], cenv)
    cenv.update(override)
    argv = [local(_expand(a, cenv)) for a in container.get("command", []) + container["args"]]
    program = {"dask": ["-m", "dask"], "daskcl": ["-m", "daskcl"],
               "dask-worker": ["-m", "dask", "worker"]}[argv[0]]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DASKCL_", "DASK_", "AWS_"))}
    env = {**base, "PYTHONPATH": repo_pythonpath(ROOT), **{k: local(v) for k, v in cenv.items()}}
    return [sys.executable, *program, *argv[1:]], env


@contextmanager
def _process(argv: list[str], env: Mapping[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=dict(env), stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[str]:
    """The DaskCluster's scheduler container, on a free port (8786 may be taken here)."""
    (c,) = _kind("daskcluster.yaml", "DaskCluster")["spec"]["scheduler"]["spec"]["containers"]
    argv, env = _command(c, tmp_path / "scheduler-volumes", {}, {})
    sfile = tmp_path / "scheduler.json"
    argv += ["--port", "0", "--dashboard-address", ":0", "--scheduler-file", str(sfile)]
    with _process(argv, env, tmp_path / "scheduler.log") as proc:
        deadline = time.monotonic() + 60
        while not sfile.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)
        assert sfile.exists(), (tmp_path / "scheduler.log").read_text()
        yield json.loads(sfile.read_text())["address"]


def _bound_at_start(client: Client) -> dict[str, Any]:
    """What each worker's preload bound, read without binding anything."""
    return client.run(lambda: (lambda b: b and b.info.platform)(
        __import__("daskcl.runtime.device", fromlist=["_bound"])._bound))


def _worker_deployment(pod_spec: dict[str, Any], cluster: str, uuid: str) -> dict[str, Any]:
    from dask_kubernetes.operator.controller.controller import build_worker_deployment_spec

    dep = build_worker_deployment_spec(
        worker_group_name=f"{cluster}-default", namespace="default", cluster_name=cluster,
        uuid=uuid, pod_spec=copy.deepcopy(pod_spec), annotations={}, labels={})
    (container,) = dep["spec"]["template"]["spec"]["containers"]
    return container


def test_daskcluster_worker_registers_and_is_bound(scheduler: str, tmp_path: Path) -> None:
    from daskcl.cluster import worker_devices

    spec = _kind("daskcluster.yaml", "DaskCluster")["spec"]["worker"]["spec"]
    container = _worker_deployment(spec, "daskcl", "a1b2c")
    env_names = [e["name"] for e in container["env"]]
    assert {"DASK_WORKER_NAME", "DASK_SCHEDULER_ADDRESS"} <= set(env_names)  # the operator's
    service = {"DASK_SCHEDULER_ADDRESS": scheduler}  # no Service DNS here
    with Client(scheduler, timeout="30s") as client:
        # As written (DASKCL_DEVICE=NVIDIA), on a machine without NVIDIA: the worker does not
        # start -- its process exits with status 1 (the pod restarts) saying why, and no
        # worker that would fail every task joins the scheduler.
        argv, env = _command(container, tmp_path / "vol-a", {}, service)
        with _process(argv, env, tmp_path / "worker-nvidia.log") as proc:
            assert proc.wait(120) == 1
        log = (tmp_path / "worker-nvidia.log").read_text()
        assert "daskcl: worker not started: no OpenCL device matches 'NVIDIA'" in log, log[-3000:]
        assert not client.scheduler_info(n_workers=-1)["workers"]
        argv, env = _command(container, tmp_path / "vol", {}, {**service, "DASKCL_DEVICE": POCL})
        with _process(argv, env, tmp_path / "worker.log"):
            client.wait_for_workers(1, timeout=120)
            assert list(_bound_at_start(client).values()) == [POCL]
            info = client.scheduler_info(n_workers=-1)["workers"]
            (w,) = info.values()
            assert w["name"] == "daskcl-default-worker-a1b2c" and w["nthreads"] == 1
            (d,) = worker_devices(client).values()
            assert d["fp64"] and d["DASKCL_CACHE_DIR"] == str(tmp_path / "vol" / "scratch"
                                                               / "daskcl-cache")
            (local_dir,) = client.run(lambda dask_worker: dask_worker.local_directory).values()
            assert local_dir.startswith(str(tmp_path / "vol" / "scratch"))


def _wait_no_workers(client: Client, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while client.nthreads() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not client.nthreads()


def test_helm_worker_command_registers_and_is_bound(scheduler: str, tmp_path: Path) -> None:
    """The worker's args as the dask chart's template renders them from the values."""
    from dask.utils import parse_bytes

    values = yaml.safe_load((K8S / "helm-values.yaml").read_text())
    w = values["worker"]
    limits = w["resources"]["limits"]
    args = [w["image"]["dask_worker"], scheduler,  # worker.custom_scheduler_url
            "--nthreads", str(w.get("threads_per_worker") or limits.get("cpu") or 1),
            "--memory-limit", str(limits.get("memory", "4GiB")),
            "--no-dashboard", "--dashboard-address", str(w.get("portDashboard", 8790)),
            *w["extraArgs"]]
    container = {"args": args, "env": w["env"], "volumeMounts": w["mounts"]["volumeMounts"]}
    argv, env = _command(container, tmp_path / "vol", {}, {"DASKCL_DEVICE": POCL})
    with Client(scheduler, timeout="30s") as client, \
            _process(argv, env, tmp_path / "worker.log"):
        client.wait_for_workers(1, timeout=120)
        assert list(_bound_at_start(client).values()) == [POCL]
        (info,) = client.scheduler_info(n_workers=-1)["workers"].values()
        assert info["nthreads"] == 1
        assert info["memory_limit"] == parse_bytes(limits["memory"])


@contextmanager
def _s3_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A local S3 (moto) and the variables the daskcl-store secret would hold for it."""
    import moto.server  # noqa: F401  (run by the child below)
    import s3fs  # noqa: F401  (zarr's s3:// stores)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    with _process(argv, os.environ, tmp_path / "s3.log"):
        endpoint = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/daskcl-test", method="PUT"),
                               timeout=30).close()
        yield {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint}


def test_daskjob_sweeps_to_s3_and_equals_the_local_run(scheduler: str, tmp_path: Path) -> None:
    from dask_kubernetes.operator.controller.controller import build_job_pod_spec

    job = _kind("daskjob.yaml", "DaskJob")
    spec_text = _kind("daskjob.yaml", "ConfigMap")["data"]["sweep.toml"]
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "sweep.toml").write_text(spec_text)
    want = run(Sweep.from_toml(tmp_path / "local" / "sweep.toml"),
               tmp_path / "local" / "local.zarr", client="sync").arrays["q"]
    cluster = job["spec"]["cluster"]["spec"]
    pod = build_job_pod_spec(job_name="daskcl-sweep", cluster_name="daskcl-sweep",
                             namespace="default", spec=copy.deepcopy(job["spec"]["job"]["spec"]),
                             annotations={}, labels={})
    (runner,) = pod["spec"]["containers"]
    url = "s3://daskcl-test/tukey.zarr"
    with _s3_server(tmp_path) as store, Client(scheduler, timeout="30s") as client:
        secrets = {"daskcl-store": store}
        service = {"DASK_SCHEDULER_ADDRESS": scheduler, "DASKCL_DEVICE": POCL}
        workers = []
        for i in range(cluster["worker"]["replicas"]):
            container = _worker_deployment(cluster["worker"]["spec"], "daskcl-sweep", f"w{i}")
            workers.append(_command(container, tmp_path / f"worker-{i}", secrets, service))
        with _process(*workers[0], tmp_path / "worker-0.log"), \
                _process(*workers[1], tmp_path / "worker-1.log"):
            client.wait_for_workers(2, timeout=120)
            # The job pod: its spec file is the ConfigMap, its store the object store.
            argv, env = _command(runner, tmp_path / "job", secrets,
                                 {"DASK_SCHEDULER_ADDRESS": scheduler, "DASKCL_OUT": url})
            (tmp_path / "job" / "sweep" / "sweep.toml").write_text(spec_text)
            r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
            assert f"wrote {url}: 4 chunks computed" in r.stdout, r.stdout
            # A restarted job pod (restartPolicy: OnFailure, --resume) finds nothing to do.
            again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
            assert "0 chunks computed, 4 already done" in again.stdout, again.stdout + again.stderr
        options = {"key": store["AWS_ACCESS_KEY_ID"], "secret": store["AWS_SECRET_ACCESS_KEY"],
                   "endpoint_url": store["AWS_ENDPOINT_URL"]}
        g = open_result(url, storage_options=options)
        np.testing.assert_array_equal(g["q"][...], want)
        assert g["_daskcl/done"][...].all()
        assert not any((tmp_path / "job" / "results").iterdir())  # nothing went to the volume
    for i in range(cluster["worker"]["replicas"]):  # each worker's private program cache
        cache = tmp_path / f"worker-{i}" / "scratch" / "daskcl-cache"
        assert cache.stat().st_mode & 0o777 == 0o700 and any(cache.rglob("*.bin"))
