# SPDX-License-Identifier: GPL-2.0-or-later
"""The wheel ships the kernel library; the README's test command is the one CI runs."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    setup = text.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", setup, re.S)]


def test_readme_has_two_setup_commands_and_ci_runs_the_second():
    cmds = readme_commands()
    assert len(cmds) == 2 and all("\n" not in c for c in cmds)
    assert "daskcl" in cmds[0]
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1].strip() == cmds[1]
    # CI checks the generated files (kernel index, nmath stub), lints and type-checks
    for step in ("daskcl index check", "daskcl stubs check", "ruff check", "mypy"):
        assert f"&& {step}" in cmds[1], step


@pytest.mark.slow
def test_wheel_contains_the_kernel_library(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    (whl,) = tmp_path.glob("daskcl-*.whl")
    names = set(zipfile.ZipFile(whl).namelist())
    lib = REPO / "cl"
    for path in lib.rglob("*"):
        if path.is_file():
            rel = "daskcl/cl/" + path.relative_to(lib).as_posix()
            assert rel in names, f"{rel} missing from the wheel"
    assert "daskcl/cli.py" in names
    # the package is typed: the marker and the generated stub of daskcl.nmath ship
    assert {"daskcl/py.typed", "daskcl/nmath.pyi"} <= names
    # the installed layout (daskcl/cl) is found by the loader
    site = tmp_path / "site"
    zipfile.ZipFile(whl).extractall(site)
    code = ("import daskcl.runtime.library as l; r = l.default_root(); print(r); "
            "print(l.Library(r).check_index())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": ""})
    assert out.returncode == 0, out.stderr
    root, diff = out.stdout.splitlines()
    assert Path(root) == site / "daskcl" / "cl" and diff == "[]"
