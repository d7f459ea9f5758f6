# SPDX-License-Identifier: GPL-2.0-or-later
"""deploy/container/Dockerfile, exercised without a container engine.

The Dockerfile's instructions are parsed and its RUN steps run, in order, with ``/bin/sh -c``
as a build would run them, in a fresh virtual environment (whose ``python`` stands for the
image's).  What a build would write outside that environment goes under a temporary root
instead: the COPY destination is a copy of this checkout (less what Dockerfile.dockerignore
excludes), and the ARGs that name system paths point into the temporary root.  Then the
environment's ``daskcl devices`` must find an fp64 device, with the OpenCL ICD loader reading
the vendors directory the build wrote -- the NVIDIA entry included.

Needs the package index (pip install); about half a minute with a warm pip cache.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "container" / "Dockerfile"


def parse_dockerfile(text: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` in order; comment lines dropped, continuations joined."""
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _pairs(args: str) -> dict[str, str]:
    return {k: v.strip('"') for k, v in re.findall(r'(\w+)=("[^"]*"|\S*)', args)}


def _dockerignore_filter(patterns: list[str]) -> Callable[[str, list[str]], set[str]]:
    def ignore(directory: str, names: list[str]) -> set[str]:
        rel = os.path.relpath(directory, ROOT)
        out = set()
        for name in names:
            path = os.path.normpath(os.path.join(rel, name))
            for pat in patterns:
                if fnmatch.fnmatch(path, pat) or fnmatch.fnmatch(name, pat.removeprefix("**/")):
                    out.add(name)
        return out

    return ignore


def test_dockerfile_structure() -> None:
    steps = parse_dockerfile(DOCKERFILE.read_text())
    kinds = [k for k, _ in steps]
    assert kinds[0] == "FROM" and steps[0][1].startswith("python:3.")
    env = {k: v for kind, a in steps if kind == "ENV" for k, v in _pairs(a).items()}
    assert env["NVIDIA_DRIVER_CAPABILITIES"].split(",")[0] == "compute"  # libnvidia-opencl
    assert env["NVIDIA_VISIBLE_DEVICES"] == "all"
    runs = [a for k, a in steps if k == "RUN"]
    assert any("nvidia.icd" in r and "libnvidia-opencl.so.1" in r for r in runs)
    assert ("COPY", ". /opt/daskcl-src") in steps
    # Debian's PoCL, for CPUs that PyPI's does not know, by default
    args = {k: v for kind, a in steps if kind == "ARG" for k, _, v in [a.partition("=")]}
    assert "pocl-opencl-icd" in args["SYSTEM_PACKAGES"].split()
    assert any("apt-get install" in r and "${SYSTEM_PACKAGES}" in r for r in runs)


def test_dockerfile_steps_install_daskcl_and_register_the_nvidia_icd(tmp_path: Path) -> None:
    steps = parse_dockerfile(DOCKERFILE.read_text())
    fake_root = tmp_path / "root"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV", "OCL_", "DASKCL_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    copies: dict[str, str] = {}
    ignore = [p.strip() for p in (DOCKERFILE.parent / "Dockerfile.dockerignore").read_text()
              .splitlines() if p.strip() and not p.startswith("#")]
    for kind, args in steps:
        if kind == "ENV":
            for key, value in _pairs(args).items():
                # Absolute paths of the image go under the fake root; the pip cache stays on
                # (the image turns it off only to stay small).
                if key != "PIP_NO_CACHE_DIR":
                    env[key] = str(fake_root) + value if value.startswith("/") else value
        elif kind == "ARG":
            key, _, default = args.partition("=")
            env[key] = default
            if key == "SYSTEM_PACKAGES":   # the system's packages are not the test's to install
                env[key] = ""              # (CI installs Debian's PoCL before the tests)
            if default.startswith("/"):  # a system directory: under the fake root, which has
                env[key] = str(fake_root) + default  # the base image's directories
                Path(env[key]).mkdir(parents=True, exist_ok=True)
        elif kind == "COPY":
            src, dest = args.split()
            assert src == "."
            copies[dest] = str(tmp_path / "context")
            shutil.copytree(ROOT, copies[dest], ignore=_dockerignore_filter(ignore))
            assert not (Path(copies[dest]) / ".git").exists()
        elif kind == "RUN":
            for dest, local in copies.items():
                args = args.replace(dest, local)
            # Nothing may touch the real system: every system path is a substituted one.
            rest = args.replace(str(tmp_path), "")
            assert not re.search(r"(?<![\w/.-])/(etc|usr|opt|var)/", rest), args
            r = subprocess.run(["/bin/sh", "-c", args], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=540)
            assert r.returncode == 0, f"RUN {args}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"

    vendors = Path(env["OPENCL_VENDORS"])
    assert (vendors / "nvidia.icd").read_text() == "libnvidia-opencl.so.1\n"
    info = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import daskcl, s3fs; print(daskcl.__version__, daskcl.__file__)"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert str(venv) in info.stdout  # the installed package, not this checkout
    # The ICD loader reads the vendors directory the build wrote; no NVIDIA driver here, so it
    # finds the entry, fails to open libnvidia-opencl.so.1, and goes on to PoCL.
    run_env = {**env, "OCL_ICD_VENDORS": str(vendors), "OCL_ICD_DEBUG": "7",
               "DASKCL_CACHE_DIR": str(tmp_path / "cache")}
    devices = subprocess.run([str(venv / "bin" / "daskcl"), "devices"], env=run_env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    if devices.returncode != 0 and _cpu_unknown_to_pocl(venv, run_env, tmp_path):
        # PyPI's PoCL 3.0 (LLVM 14) builds nothing on a CPU newer than its LLVM (AMD's Zen 5):
        # the loader still went on to it, which is what the image's steps decide; there the
        # image's Debian PoCL (SYSTEM_PACKAGES, which this test does not install) serves
        assert "Portable Computing Language" in devices.stdout, devices.stdout
    else:
        assert devices.returncode == 0, devices.stdout + devices.stderr[-3000:]
        assert "yes (probed)" in devices.stdout and "<- chosen" in devices.stdout
    if "ocl-icd" in devices.stderr:  # the loader's debug output, where it was built with it
        assert f"{vendors}/nvidia.icd" in devices.stderr
        assert "libnvidia-opencl.so.1" in devices.stderr
    index = subprocess.run([str(venv / "bin" / "daskcl"), "index", "check"], env=env,
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert index.returncode == 0, index.stdout + index.stderr
    for role, banner in (("worker", "Launch a Dask worker"), ("scheduler", "Launch a Dask scheduler")):
        shim = Path(env["BIN_DIR"]) / f"dask-{role}"
        r = subprocess.run([str(shim), "--help"], env=env, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0 and banner in r.stdout, r.stdout + r.stderr


def _cpu_unknown_to_pocl(venv: Path, env: dict[str, str], cwd: Path) -> bool:
    """Whether every device of the environment failed its probe because PoCL's compiler does
    not know this CPU ("unknown target CPU 'generic'")."""
    code = ("from daskcl.runtime import device\n"
            "why = [device.probe_fp64(d) for i, d in device.list_devices()]\n"
            "print(all(w and 'unknown target CPU' in w for w in why) and bool(why))")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    return r.stdout.strip().endswith("True")
