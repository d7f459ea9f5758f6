# SPDX-License-Identifier: GPL-2.0-or-later
"""A kernel developer's unit tree broken in realistic ways: each failure is one clear error
naming the file (and line) to fix, not a Python traceback, a silently ignored line or advice
that does not fix it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.procs import repo_pythonpath

from daskcl import ElementwiseKernel, RawKernel, config
from daskcl.errors import (
    BuildError,
    DependencyCycleError,
    LibraryError,
    MissingDependencyError,
    StaleIndexError,
)
from daskcl.runtime.library import INDEX_NAME, Library, get_library

REPO = Path(__file__).resolve().parents[2]


def write_tree(root: Path, units: dict[str, str | bytes], index: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for stem, text in units.items():
        (root / f"{stem}.cl").write_bytes(text if isinstance(text, bytes) else text.encode())
    if index:
        Library(trees=[root]).write_index(root=root)
    return root


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(REPO)}
    return subprocess.run([sys.executable, "-m", "daskcl", "index", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_a_unit_that_is_not_utf8_names_its_file_and_line(tmp_path):
    tree = tmp_path / "t"
    write_tree(tree, {"f1": "// @provides: f1\n// @depends:\n// caf\xe9\ndouble f1(double x) "
                            "{ return x; }\n".encode("latin-1")}, index=False)
    with pytest.raises(LibraryError, match=re.escape(f"{tree / 'f1.cl'}:3:7: the file is not "
                                                     "UTF-8 text (byte 0xe9)")):
        get_library(tree)
    r = cli("build", str(tree))             # was a UnicodeDecodeError traceback
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"error: {tree / 'f1.cl'}:3:7: the file is not UTF-8 text (byte 0xe9): save it as "
        "UTF-8 (or ASCII)"]


def test_an_index_that_is_not_utf8_is_stale(tmp_path):
    tree = write_tree(tmp_path / "t", {"f1": "// @provides: f1\n// @depends:\n"
                                             "double f1(double x) { return x; }\n"})
    (tree / INDEX_NAME).write_bytes(b"stem\tall_depends\nf1\t\xff\n")
    with pytest.raises(StaleIndexError, match=rf"{tree / INDEX_NAME} is not UTF-8 text .*; run "
                                              rf"'daskcl index build {tree}'"):
        get_library(tree).resolve(["f1"])
    assert any(line.startswith("+f1") for line in get_library(tree).check_index(tree))


def test_a_byte_order_mark_does_not_hide_the_annotations(tmp_path):
    tree = write_tree(tmp_path / "t", {
        "twice": "\ufeff// @provides: twice\n// @depends: pnorm\n"
                 "double twice(double x) { return 2.0 * pnorm5(x, 0., 1., 1, 0); }\n"})
    k = ElementwiseKernel("double x", "double y", "y = twice(x);", name="bom", library=tree)
    assert k(np.array([0.0, 40.0])).tolist() == [1.0, 2.0]
    assert "\ufeff" not in k.source().text


@pytest.mark.parametrize("line, message", [
    ("// @dpends: qnorm", r":3: @dpends is not an annotation of a unit .*did you mean @depends\?"),
    ("// @depends_nmath: qnorm", r":3: @depends_nmath is not .*did you mean @depends\?"),
    ("// @Provides: g", r":3: @Provides is not .*did you mean @provides\?"),
    ("// @depends qnorm", r":3: '// @depends qnorm' has no colon: write '// @depends: \.\.\.'"),
])
def test_a_misspelt_annotation_is_refused_with_its_line(tmp_path, line, message):
    # a third line misspelt beside two good ones was ignored: the unit built without qnorm
    tree = tmp_path / "t"
    write_tree(tree, {"f1": f"// @provides: f1\n// @depends: pnorm\n{line}\n"
                            "double f1(double x) { return x; }\n"}, index=False)
    with pytest.raises(LibraryError, match=re.escape(str(tree / "f1.cl")) + message):
        Library(trees=[tree])
    # free text the library knows, and tags far from its own, are no obstacle
    (tree / "f1.cl").write_text("// @provides: f1\n// @depends:\n// @source: my notes\n"
                                "// @author: me\ndouble f1(double x) { return x; }\n")
    assert Library(trees=[tree]).units["f1"].depends == ()


def test_a_kernel_of_a_tree_in_a_cycle_reports_the_cycle_not_the_index(tmp_path):
    tree = write_tree(tmp_path / "t", {
        "f1": "// @provides: f1\n// @depends: f2\ndouble f1(double x) { return x; }\n",
        "f2": "// @provides: f2\n// @depends: f1\ndouble f2(double x) { return x; }\n"},
        index=False)
    k = ElementwiseKernel("double x", "double y", "y = f1(x);", name="cyc", library=tree)
    # was "has no index ...; run 'daskcl index build'", a command that fails on the cycle
    with pytest.raises(DependencyCycleError, match=rf"{tree / 'f1.cl'} waits for f2"):
        k(1.0)


def test_a_misspelt_dependency_offers_the_stems_near_it(tmp_path):
    tree = write_tree(tmp_path / "t", {
        "f1": "// @provides: f1\n// @depends: pnrom\ndouble f1(double x) { return x; }\n"},
        index=False)
    with pytest.raises(MissingDependencyError,
                       match=rf"{tree / 'f1.cl'} depends on pnrom, .*; did you mean pnorm\b"):
        ElementwiseKernel("double x", "double y", "y = f1(x);", name="typo", library=tree)(1.0)


def test_a_call_the_unit_does_not_depend_on_is_fixed_in_the_unit(tmp_path):
    tree = write_tree(tmp_path / "t", {
        "f1": "// @provides: f1\n// @depends:\ndouble f1(double x) { return pnorm5(x, 0., 1., "
              "1, 0); }\n"})
    advice = (f"pnorm5 is in the library (nmath/pnorm.cl) but {tree / 'f1.cl'} does not depend "
              f"on it: add pnorm to its // @depends: line, then run 'daskcl index build {tree}'")
    k = ElementwiseKernel("double x", "double y", "y = f1(x);", name="nodep", library=tree)
    with pytest.raises(BuildError) as ei:
        k(0.0)
    assert advice in str(ei.value)
    raw = RawKernel("// @depends: f1\n__kernel void r(__global double *y) "
                    "{ y[0] = f1(y[0]) + qnorm5(0.5, 0.0, 1.0, 1, 0); }", "r", library=tree)
    with pytest.raises(BuildError) as ei:
        raw(1, None, np.zeros(1))
    msg = str(ei.value)
    assert advice in msg
    # the RawKernel's own call is still the kernel's to name; the unit's was, wrongly, too
    assert "// @depends_nmath: qnorm" in msg and "// @depends_nmath: pnorm" not in msg
    # following the advice fixes it
    (tree / "f1.cl").write_text((tree / "f1.cl").read_text().replace("@depends:",
                                                                      "@depends: pnorm"))
    assert cli("build", str(tree)).returncode == 0
    assert float(k(0.0)) == 0.5


def test_an_argument_named_like_a_macro_of_a_tree_unit_is_refused(tmp_path):
    tree = write_tree(tmp_path / "t", {
        "scaled": "// @provides: scaled, SCALE\n// @depends:\n#define SCALE 2.0\n"
                  "double scaled(double x) { return SCALE * x; }\n"})
    k = ElementwiseKernel("double SCALE", "double y", "y = scaled(SCALE);", name="mac",
                          library=tree)
    # was a build error on a line of the template: "expected identifier or '('"
    with pytest.raises(ValueError, match=rf"ElementwiseKernel mac: 'SCALE' is a macro of "
                                         rf"{tree / 'scaled.cl'} \(line 3\)"):
        k(1.0)
    ok = ElementwiseKernel("double s", "double y", "y = scaled(s) * SCALE;", name="mac2",
                           library=tree)
    assert float(ok(1.5)) == 6.0


@pytest.mark.parametrize("make, what", [
    (lambda p: p / "nope", "it does not exist"),
    (lambda p: (p / "f.cl").write_text("x") and p / "f.cl", "it is not a directory"),
    (lambda p: write_tree(p / "t", {"f1": "// @provides: f1\n// @depends:\n"}),
     "it has no OPENCL.cl (a directory of annotated units of your own is a unit tree"),
])
def test_a_config_library_that_is_not_one_says_why(tmp_path, make, what):
    root = make(tmp_path)
    with config.set({"library": str(root)}):
        with pytest.raises(LibraryError, match=re.escape(
                f"{root} (the config key library, DASKCL_LIBRARY) is not a kernel library: "
                f"{what}")):
            get_library()
