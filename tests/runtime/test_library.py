# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel library machinery: annotations, sort, index, minimal subsets, extraction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.procs import repo_pythonpath

from daskcl.errors import (
    DependencyCycleError,
    LibraryError,
    MissingDependencyError,
    StaleIndexError,
)
from daskcl.runtime.library import Library, get_library, parse_annotations

REPO = Path(__file__).resolve().parents[2]


def make_lib(root: Path, units: dict[str, tuple[str, list[str]]], shims: dict | None = None) -> Path:
    """A synthetic library: {stem: (provides, depends)} in nmath/, likewise shims."""
    (root / "shims").mkdir(parents=True)
    (root / "nmath").mkdir()
    (root / "kernels").mkdir()
    (root / "OPENCL.cl").write_text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")
    for layer, table in (("shims", shims or {}), ("nmath", units)):
        for stem, (provides, depends) in table.items():
            (root / layer / f"{stem}.cl").write_text(
                f"// @provides: {provides}\n// @depends: {', '.join(depends)}\n"
                f"double {provides}(double x);\n"
            )
    return root


def test_parse_annotations_stops_at_code():
    text = "// @provides: a, b\n// @depends:\n// @source: Cody (1969)\nint x;\n// @depends: late\n"
    tags = parse_annotations(text)
    assert tags == {"provides": ["a", "b"], "depends": [], "source": ["Cody (1969)"]}


def test_sort_passes_and_order(tmp_path, capsys):
    lib = Library(make_lib(tmp_path / "lib", {
        "c": ("c", ["a", "b"]), "a": ("a", []), "b": ("b", ["a"]), "d": ("d", ["k"]),
    }, shims={"k": ("k", [])}))
    order = lib.sort(verbose=True)
    assert order == ["k", "a", "d", "b", "c"]
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "Pass 1: emitting k.cl",
        "Pass 2: emitting a.cl, d.cl",
        "Pass 3: emitting b.cl",
        "Pass 4: emitting c.cl",
    ]


def test_cycle_names_stuck_files_and_waits(tmp_path):
    lib = Library(make_lib(tmp_path / "lib", {
        "a": ("a", []), "x": ("x", ["y", "a"]), "y": ("y", ["z"]), "z": ("z", ["x"]),
    }))
    with pytest.raises(DependencyCycleError) as ei:
        lib.sort()
    msg = str(ei.value)
    assert "nmath/x.cl waits for y" in msg
    assert "nmath/y.cl waits for z" in msg
    assert "nmath/z.cl waits for x" in msg
    assert "a.cl" not in msg.replace("nmath/", "")  # a was emitted, not stuck


def test_missing_stem_is_named(tmp_path):
    lib = Library(make_lib(tmp_path / "lib", {"a": ("a", ["nope"])}))
    with pytest.raises(MissingDependencyError, match=r"nmath/a\.cl depends on nope"):
        lib.sort()


def test_unit_without_annotation_is_an_error(tmp_path):
    root = make_lib(tmp_path / "lib", {"a": ("a", [])})
    (root / "nmath" / "b.cl").write_text("double b(double x) { return x; }\n")
    with pytest.raises(LibraryError, match=r"nmath/b\.cl has no '// @provides:'"):
        Library(root)


def test_a_symbol_has_one_provider(tmp_path):
    root = make_lib(tmp_path / "lib", {"a": ("f", []), "b": ("f", [])})
    with pytest.raises(LibraryError,
                       match=r"two units provide the symbol 'f': nmath/a\.cl and nmath/b\.cl"):
        Library(root)


def test_a_symbol_is_not_another_units_stem(tmp_path):
    root = make_lib(tmp_path / "lib", {"a": ("b", []), "b": ("fb", [])})
    with pytest.raises(LibraryError,
                       match=r"'b' is a symbol of nmath/a\.cl and the stem of nmath/b\.cl"):
        Library(root)


def test_shim_may_not_depend_on_nmath(tmp_path):
    lib = Library(make_lib(tmp_path / "lib", {"a": ("a", [])}, shims={"s": ("s", ["a"])}))
    with pytest.raises(LibraryError, match="layer 1 may only depend on layer 1"):
        lib.sort()


def test_index_round_trip_and_staleness(tmp_path):
    root = make_lib(tmp_path / "lib", {
        "a": ("fa", []), "b": ("fb", ["a"]), "c": ("fc", ["b"]), "e": ("fe", []),
    }, shims={"s": ("s", [])})
    lib = Library(root)
    with pytest.raises(StaleIndexError, match="daskcl index build"):
        lib.read_index()
    lib.write_index()
    text = (root / "nmath" / "kernel_dependency_index.tsv").read_text()
    assert text == "stem\tall_depends\ns\t\na\t\ne\t\nb\ta\nc\ta,b\n"
    assert lib.read_index() == {"s": (), "a": (), "e": (), "b": ("a",), "c": ("a", "b")}
    assert lib.check_index() == []
    (root / "nmath" / "e.cl").write_text("// @provides: fe\n// @depends: c\n")
    diff = Library(root).check_index()
    assert "-e\t" in diff and "+e\ta,b,c" in diff


def test_resolve_minimal_subset_by_stem_or_symbol(tmp_path):
    root = make_lib(tmp_path / "lib", {
        "a": ("fa", []), "b": ("fb", ["a"]), "c": ("fc", ["b"]), "e": ("fe", []),
    }, shims={"s": ("s", [])})
    lib = Library(root)
    lib.write_index()
    assert lib.resolve(["fb"]) == ["s", "a", "b"]
    assert lib.resolve(["c", "e"]) == ["s", "a", "e", "b", "c"]
    with pytest.raises(MissingDependencyError, match=r"'zz'$"):
        lib.resolve(["zz"])
    with pytest.raises(MissingDependencyError, match="'fbb'; did you mean fb"):
        lib.resolve(["fbb"])          # a misspelt name: the library's closest names
    # the loader reads the index, it does not sort: an index that omits a unit is reported
    (root / "nmath" / "kernel_dependency_index.tsv").write_text("stem\tall_depends\ns\t\na\t\n")
    with pytest.raises(StaleIndexError, match="b is not in"):
        Library(root).resolve(["b"])


def test_extract_subset_is_a_library(tmp_path):
    root = make_lib(tmp_path / "lib", {
        "a": ("fa", []), "b": ("fb", ["a"]), "c": ("fc", ["b"]), "e": ("fe", []),
    }, shims={"s": ("s", [])})
    (root / "kernels" / "kb.cl").write_text("// @depends_nmath: fb\n__kernel void kb() {}\n")
    Library(root).write_index()
    sub = Library(root).extract(tmp_path / "sub", kernels=["kb"])
    assert sorted(sub.units) == ["a", "b", "s"]
    assert (tmp_path / "sub" / "kernels" / "kb.cl").exists()
    assert sub.check_index() == []
    src = sub.kernel_program_source("kb")
    assert src.files == ("OPENCL.cl", "shims/s.cl", "nmath/a.cl", "nmath/b.cl", "kernels/kb.cl")


def test_extract_overwrites_no_file_of_dest_unless_forced(tmp_path):
    """Files of the destination that the extract would write with other contents are listed
    and nothing is written; the same extract again is no obstacle; ``force`` overwrites them
    (a symbolic link is replaced, what it points to left alone)."""
    root = make_lib(tmp_path / "lib", {"a": ("fa", []), "b": ("fb", ["a"]), "e": ("fe", [])},
                    shims={"s": ("s", [])})
    Library(root).write_index()
    dest = tmp_path / "dest"
    (dest / "nmath").mkdir(parents=True)
    (dest / "nmath" / "a.cl").write_text("mine\n")
    outside = tmp_path / "outside.cl"
    outside.write_text("outside\n")
    (dest / "nmath" / "b.cl").symlink_to(outside)
    mine = "// @provides: mine\n// @depends: a\ndouble mine(double x);\n"    # not extracted
    (dest / "nmath" / "e.cl").write_text(mine)
    with pytest.raises(LibraryError) as err:
        Library(root).extract(dest, names=["fb"])
    assert str(err.value).startswith(
        f"{dest} already has 2 of the files the extract would write, with other contents: "
        f"{dest / 'nmath' / 'a.cl'}, {dest / 'nmath' / 'b.cl'}. Nothing was written")
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == [
        "nmath", "nmath/a.cl", "nmath/b.cl", "nmath/e.cl"]
    assert (dest / "nmath" / "a.cl").read_text() == "mine\n"
    sub = Library(root).extract(dest, names=["fb"], force=True)
    assert sorted(sub.units) == ["a", "b", "e", "s"]
    for name in ("a.cl", "b.cl"):
        assert (dest / "nmath" / name).read_text() == (root / "nmath" / name).read_text()
    assert not (dest / "nmath" / "b.cl").is_symlink()
    assert outside.read_text() == "outside\n"
    assert (dest / "nmath" / "e.cl").read_text() == mine
    assert sub.check_index() == []           # the index, generated, is written anew
    # made again into a destination that holds it: nothing to overwrite
    (dest / "nmath" / "e.cl").unlink()
    sub = Library(root).extract(dest, names=["fb"])
    assert sorted(sub.units) == ["a", "b", "s"] and sub.check_index() == []


def test_program_source_locates_lines(tmp_path):
    root = make_lib(tmp_path / "lib", {"a": ("fa", [])})
    lib = Library(root)
    lib.write_index()
    src = lib.program_source(["a"], "line1\nline2\n", "kernels/k.cl")
    lines = src.text.splitlines()
    n = lines.index("line2") + 1
    assert src.locate(n) == ("kernels/k.cl", 2)


def test_shipped_library_index_is_current():
    lib = get_library()
    assert lib.check_index() == [], "run 'daskcl index build' and commit the index"


def test_shipped_library_has_no_cycles_and_all_annotated():
    lib = get_library()
    order = lib.sort()
    assert set(order) == set(lib.units)
    for unit in lib.units.values():
        assert unit.provides, f"{unit.name} provides nothing"


def test_shipped_library_has_one_provider_per_symbol():
    lib = get_library()
    provided = [s for u in lib.units.values() for s in u.provides]
    assert len(provided) == len(set(provided)) == len(lib.symbols)
    assert not set(lib.symbols) & {s for s in lib.units if lib.symbols.get(s, s) != s}


def test_dnorm_program_is_minimal():
    lib = get_library()
    src = lib.program_source(["dnorm"], "__kernel void k(__global double *x) {}")
    nmath = [f for f in src.files if f.startswith("nmath/")]
    assert nmath == ["nmath/dnorm.cl"]
    full = sum(len(u.path.read_text()) for u in lib.units.values())
    assert len(src.text) < full / 4


def test_dbinom_program_pulls_its_chain_only():
    lib = get_library()
    stems = lib.resolve(["dbinom"])
    nmath = {s for s in stems if lib.units[s].layer == "nmath"}
    assert {"dbinom", "stirlerr", "bd0"} <= nmath
    assert not nmath & {"pnorm", "qnorm", "dnorm", "dgamma"}


def test_cli_index_check_detects_stale(tmp_path):
    root = make_lib(tmp_path / "lib", {"a": ("fa", []), "b": ("fb", ["a"])})
    cmd = [sys.executable, "-m", "daskcl", "index", "--root", str(root)]
    env_path = {"PYTHONPATH": repo_pythonpath(REPO)}
    import os

    env = {**os.environ, **env_path}
    r = subprocess.run([*cmd, "check"], capture_output=True, text=True, env=env)
    assert r.returncode == 1
    r = subprocess.run([*cmd, "build", "--verbose"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "Pass 2: emitting b.cl" in r.stdout
    r = subprocess.run([*cmd, "check"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    (root / "nmath" / "c.cl").write_text("// @provides: fc\n// @depends: b\n")
    r = subprocess.run([*cmd, "check"], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "+c\ta,b" in r.stdout


def test_an_extract_serves_nmath_as_daskcl_library_with_its_template(tmp_path):
    """An extract of the shipped library is a library daskcl.nmath can use (DASKCL_LIBRARY)
    once it holds the elementwise template: ``--kernels elementwise`` extracts it (its
    ``@depends_nmath`` is a template field, which the extract read as a unit's name and
    refused), and without it the first call says what is missing, not a FileNotFoundError."""
    import os

    lib = get_library()
    assert lib.kernel("elementwise").depends_nmath == ()
    lib.extract(tmp_path / "bare", names=["pnorm"])
    lib.extract(tmp_path / "ext", names=["pnorm"], kernels=["elementwise"])
    assert (tmp_path / "ext" / "kernels" / "elementwise.cl").is_file()
    code = ("import warnings; warnings.simplefilter('error'); from daskcl import nmath\n"
            "try:\n    print(repr(float(nmath.pnorm(1.0))))\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    got = {}
    for name in ("bare", "ext"):
        env = {**os.environ, "PYTHONPATH": repo_pythonpath(REPO),
               "DASKCL_LIBRARY": str(tmp_path / name), "DASKCL_NO_CACHE": "1"}
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=240)
        assert r.returncode == 0, r.stderr
        got[name] = r.stdout.strip()
    assert got["ext"] == "0.8413447460685429"                      # R: pnorm(1)
    assert got["bare"] == (
        f"LibraryError the kernel library {tmp_path / 'bare'} has no kernels/elementwise.cl: an "
        "extract holds the kernel files asked for only (daskcl index extract DEST --kernels "
        "elementwise adds this one; daskcl.nmath's functions, the generators and "
        "ElementwiseKernel need kernels/elementwise.cl)")
