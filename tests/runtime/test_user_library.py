# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit trees of the user's own beside the kernel library: their index, programs built from
them on the device, the errors that name their files, the CLI, an extract as the base."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest
from support.procs import repo_pythonpath
from support.rmath_oracle import r_eval

from daskcl.errors import (
    BuildError,
    DependencyCycleError,
    LibraryError,
    MissingDependencyError,
    StaleIndexError,
)
from daskcl.runtime import device, program
from daskcl.runtime.library import INDEX_NAME, Library, get_library, split_roots

REPO = Path(__file__).resolve().parents[2]

LOGIT_CDF = """\
// @provides: my_logit_cdf
// @depends: plogis
// The standard logistic distribution function, through the library's plogis.
double my_logit_cdf(double x) { return plogis(x, 0., 1., 1, 0); }
"""
LOGIT_ODDS = """\
// @provides: my_logit_odds
// @depends: my_logit_cdf
// The odds F(x) / (1 - F(x)) of the standard logistic distribution, which is exp(x).
double my_logit_odds(double x) { return my_logit_cdf(x) / my_logit_cdf(-x); }
"""

KERNEL = """
__kernel void f(const long n, __global const double *x, __global double *a, __global double *b)
{
    const long i = get_global_id(0);
    if (i < n) {
        a[i] = my_logit_cdf(x[i]);    /* the first unit: plogis(x) */
        b[i] = my_logit_odds(x[i]);   /* the second, through the first: exp(x) */
    }
}
"""


def unit(provides: str, depends: str, body: str = "") -> str:
    return f"// @provides: {provides}\n// @depends: {depends}\n{body}\n"


def write_tree(root: Path, units: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for stem, text in units.items():
        (root / f"{stem}.cl").write_text(text)
    return root


def logit_tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "mylib", {"my_logit_cdf": LOGIT_CDF, "my_logit_odds": LOGIT_ODDS})


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(REPO)}
    return subprocess.run([sys.executable, "-m", "daskcl", "index", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def run(src, kernel: str, x: np.ndarray, nout: int) -> list[np.ndarray]:
    """Run ``kernel(n, x, out_1, ..., out_nout)`` of the program ``src`` over ``x``."""
    built = program.build(src)
    k, lock = built.kernel(kernel)
    bound = device.current()
    mf = cl.mem_flags
    x = np.ascontiguousarray(x, dtype=np.float64)
    xb = cl.Buffer(bound.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    outs = [np.empty_like(x) for _ in range(nout)]
    bufs = [cl.Buffer(bound.context, mf.WRITE_ONLY, o.nbytes) for o in outs]
    with lock:
        k(bound.queue, (x.size,), None, np.int64(x.size), xb, *bufs)
    for o, b in zip(outs, bufs):
        cl.enqueue_copy(bound.queue, o, b)
    bound.queue.finish()
    return outs


# -- a tree built through its index and run on the device ------------------------------------


@pytest.mark.r
def test_tree_units_build_and_run_against_r(tmp_path):
    tree = logit_tree(tmp_path)
    Library(trees=[tree]).write_index(root=tree)
    assert (tree / INDEX_NAME).read_text() == (
        "stem\tall_depends\n"
        "my_logit_cdf\trmath_constants,rmath_utils,dpq,log1pexp,plogis\n"
        "my_logit_odds\trmath_constants,rmath_utils,dpq,log1pexp,plogis,my_logit_cdf\n"
    )
    lib = get_library(tree)
    assert lib.root == Library().root and lib.roots == (lib.root, tree)
    names = lib.find_names(KERNEL)
    assert names == ("my_logit_cdf", "my_logit_odds")
    src = lib.program_source(names, KERNEL, "test_kernel")
    assert src.files == (
        "OPENCL.cl", "shims/rmath_constants.cl", "shims/rmath_utils.cl", "shims/dpq.cl",
        "nmath/log1pexp.cl", "nmath/plogis.cl",
        str(tree / "my_logit_cdf.cl"), str(tree / "my_logit_odds.cl"), "OPENCL_END.cl",
        "test_kernel",
    )
    x = np.concatenate([np.linspace(-30, 30, 601), [-700.0, 0.0, 1e-300, 36.0]])
    cdf, odds = run(src, "f", x, 2)
    want = r_eval("plogis", [x, 0.0, 1.0], [1, 0])
    np.testing.assert_allclose(cdf, want, rtol=4e-16, atol=0)
    np.testing.assert_allclose(odds, np.exp(x), rtol=2e-15, atol=0)


def test_build_error_points_to_the_users_file(tmp_path):
    tree = write_tree(tmp_path / "bad", {"oops": unit("oops", "plogis", (
        "double oops(double x)\n{\n    return plogis(x, 0., 1., 1, 0) + no_such_name;\n}"))})
    Library(trees=[tree]).write_index(root=tree)
    src = get_library(tree).program_source(
        ["oops"], "__kernel void k(__global double *x) { x[0] = oops(x[0]); }", "k.cl")
    with pytest.raises(BuildError) as ei:
        program.build(src)
    assert str(tree / "oops.cl") in ei.value.units
    assert f"{tree / 'oops.cl'}:5:" in str(ei.value)      # the line of no_such_name in the file


# -- the errors, naming the user's files -----------------------------------------------------


def test_cycle_names_each_stuck_file(tmp_path):
    tree = write_tree(tmp_path / "t", {
        "ok": unit("ok", "pnorm"), "a": unit("fa", "b, ok"), "b": unit("fb", "c"),
        "c": unit("fc", "a"),
    })
    lib = Library(trees=[tree])
    with pytest.raises(DependencyCycleError) as ei:
        lib.write_index(root=tree)
    msg = str(ei.value)
    for stuck, waits in (("a", "b"), ("b", "c"), ("c", "a")):
        assert f"{tree / stuck}.cl waits for {waits}" in msg
    assert "ok.cl" not in msg
    (tree / INDEX_NAME).write_text("stem\tall_depends\n")
    with pytest.raises(DependencyCycleError, match=str(tree / "a.cl")):
        get_library(tree).resolve(["ok"])


def test_missing_stem_names_the_file(tmp_path):
    tree = write_tree(tmp_path / "t", {"a": unit("fa", "plogis, nope")})
    with pytest.raises(MissingDependencyError, match=rf"{tree / 'a.cl'} depends on nope"):
        Library(trees=[tree]).check_index(tree)
    # a symbol where a stem belongs is named as such
    (tree / "a.cl").write_text(unit("fa", "pnorm5"))
    with pytest.raises(MissingDependencyError,
                       match=r"pnorm5 is a symbol of nmath/pnorm\.cl: @depends names stems"):
        Library(trees=[tree]).write_index(root=tree)


def test_a_tree_may_use_earlier_trees_not_later_ones(tmp_path):
    first = logit_tree(tmp_path)
    second = write_tree(tmp_path / "second", {"twice_odds": unit("twice_odds", "my_logit_odds")})
    lib = Library(trees=[first, second])
    for t in (first, second):
        lib.write_index(root=t)
    assert lib.read_index()["twice_odds"][-2:] == ("my_logit_cdf", "my_logit_odds")
    assert lib.resolve(["twice_odds"])[-3:] == ["my_logit_cdf", "my_logit_odds", "twice_odds"]
    with pytest.raises(MissingDependencyError,
                       match=rf"{second / 'twice_odds.cl'} depends on my_logit_odds.*comes later"):
        Library(trees=[second, first]).sort()


def test_the_library_may_not_depend_on_a_tree(tmp_path):
    from test_library import make_lib

    base = make_lib(tmp_path / "base", {"a": ("fa", ["mine"])})
    tree = write_tree(tmp_path / "t", {"mine": unit("mine", "")})
    with pytest.raises(MissingDependencyError,
                       match=r"nmath/a\.cl depends on mine.*may not depend on its unit trees"):
        Library(base, [tree]).sort()


def test_duplicate_stems_and_symbols_name_both_files(tmp_path):
    same_stem = write_tree(tmp_path / "s", {"plogis": unit("my_plogis", "")})
    with pytest.raises(LibraryError, match=rf"stem 'plogis': nmath/plogis\.cl and "
                                           rf"{same_stem / 'plogis.cl'}"):
        get_library(same_stem)
    first = logit_tree(tmp_path)
    again = write_tree(tmp_path / "again", {"my_logit_cdf": unit("other_cdf", "")})
    with pytest.raises(LibraryError, match=rf"stem 'my_logit_cdf': {first / 'my_logit_cdf.cl'} "
                                           rf"and {again / 'my_logit_cdf.cl'}"):
        get_library([first, again])
    same_symbol = write_tree(tmp_path / "y", {"mine": unit("mine, pnorm5", "")})
    with pytest.raises(LibraryError, match=rf"symbol 'pnorm5': nmath/pnorm\.cl and "
                                           rf"{same_symbol / 'mine.cl'}"):
        get_library(same_symbol)
    twice = write_tree(tmp_path / "z", {"u1": unit("shared", ""), "u2": unit("shared", "")})
    with pytest.raises(LibraryError, match=rf"symbol 'shared': {twice / 'u1.cl'} and "
                                           rf"{twice / 'u2.cl'}"):
        get_library(twice)
    # a symbol named like another unit's stem would make that name mean two units
    wrapper = write_tree(tmp_path / "w", {"wrappers": unit("pnorm", "pnorm")})
    with pytest.raises(LibraryError, match=rf"'pnorm' is a symbol of {wrapper / 'wrappers.cl'} "
                                           r"and the stem of nmath/pnorm\.cl"):
        get_library(wrapper)


def test_stale_and_missing_tree_index(tmp_path):
    tree = logit_tree(tmp_path)
    with pytest.raises(StaleIndexError,
                       match=rf"{tree} has no index .*run 'daskcl index build {tree}'"):
        get_library(tree).resolve(["my_logit_odds"])
    Library(trees=[tree]).write_index(root=tree)
    assert get_library(tree).resolve(["my_logit_cdf"])[-1] == "my_logit_cdf"
    # the odds now also call pnorm: the index no longer says what the file needs
    (tree / "my_logit_odds.cl").write_text(LOGIT_ODDS.replace("my_logit_cdf\n", "my_logit_cdf, pnorm\n"))
    with pytest.raises(StaleIndexError, match=rf"{tree / INDEX_NAME} does not match .*"
                       rf"my_logit_odds depends on .*pnorm.*run 'daskcl index build {tree}'"):
        get_library(tree).program_source(["my_logit_odds"], "")
    (tree / "extra.cl").write_text(unit("extra", ""))
    with pytest.raises(StaleIndexError, match="it lacks extra"):
        get_library(tree).read_index()


def test_cli_check_and_build_of_trees(tmp_path):
    first = logit_tree(tmp_path)
    second = write_tree(tmp_path / "second", {"twice_odds": unit("twice_odds", "my_logit_odds")})
    r = cli("check", str(first))
    assert r.returncode == 1
    assert "+my_logit_cdf\trmath_constants,rmath_utils,dpq,log1pexp,plogis" in r.stdout
    assert f"run 'daskcl index build {first}'" in r.stderr
    r = cli("build", "--verbose", str(first), str(second))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Pass 1: emitting my_logit_cdf.cl", "Pass 2: emitting my_logit_odds.cl",
        f"wrote {first / INDEX_NAME} (2 units)",
        "Pass 1: emitting twice_odds.cl", f"wrote {second / INDEX_NAME} (1 unit)",
    ]
    r = cli("check", str(first), str(second))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "is current (2 units)" in r.stdout and "is current (1 unit)" in r.stdout
    # the second tree alone cannot be resolved: what it needs comes from the first
    r = cli("check", str(second))
    assert r.returncode == 1 and "twice_odds.cl depends on my_logit_odds" in r.stderr
    (first / "my_logit_odds.cl").write_text(LOGIT_ODDS.replace("my_logit_cdf\n", "my_logit_cdf, pnorm\n"))
    r = cli("check", str(first), str(second))
    assert r.returncode == 1
    assert "+my_logit_odds\trmath_constants,rmath_utils,dpq,log1pexp,pnorm,plogis,my_logit_cdf" \
        in r.stdout
    assert "+twice_odds\t" in r.stdout                  # the second tree's closure grew too
    with pytest.raises(StaleIndexError, match=f"daskcl index build {first}'"):
        get_library([first, second]).read_index()
    assert cli("build", str(first), str(second)).returncode == 0
    assert get_library([first, second]).resolve(["twice_odds"])[-1] == "twice_odds"
    # the shipped library, with no DIR, as before
    r = cli("check")
    assert r.returncode == 0 and "nmath/kernel_dependency_index.tsv is current" in r.stdout


def test_cli_refuses_what_is_not_a_root(tmp_path):
    r = cli("check", str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "is not a directory" in r.stderr
    (tmp_path / "empty").mkdir()
    r = cli("build", str(tmp_path / "empty"))
    assert r.returncode == 1 and "holds no .cl units" in r.stderr


# -- an extract's output as the base ----------------------------------------------------------


@pytest.mark.r
def test_extract_output_is_the_base_of_a_tree(tmp_path):
    ext = tmp_path / "ext"
    r = cli("extract", str(ext), "--names", "pnorm,dbinom")
    assert r.returncode == 0, r.stderr
    tree = write_tree(tmp_path / "t", {"mix": unit("mix", "pnorm, dbinom", (
        "double mix(double x) { return pnorm5(x, 0., 1., 1, 0) * dbinom(3., 10., 0.25, 0); }"))})
    r = cli("build", str(ext), str(tree))
    assert r.returncode == 0, r.stderr
    assert cli("check", str(ext), str(tree)).returncode == 0
    lib = get_library([tree, ext])             # the kernel library is the base wherever it is
    assert lib.root == ext and lib.trees == (tree,)
    assert split_roots([ext, tree]) == (ext, (tree,))
    kernel = ("__kernel void g(const long n, __global const double *x, __global double *y)\n"
              "{ const long i = get_global_id(0); if (i < n) y[i] = mix(x[i]); }\n")
    src = lib.program_source(lib.find_names(kernel), kernel, "g.cl")
    assert src.files[-3:] == (str(tree / "mix.cl"), "OPENCL_END.cl", "g.cl")
    assert all((ext / f).is_file() for f in (*src.files[:-3], "OPENCL_END.cl"))
    x = np.linspace(-8, 8, 161)
    (y,) = run(src, "g", x, 1)
    want = r_eval("pnorm5", [x, 0.0, 1.0], [1, 0]) * r_eval("dbinom", [3.0, 10.0, 0.25], [0])
    np.testing.assert_allclose(y, want, rtol=1e-15, atol=0)
    # the extract holds only what it was made for
    other = write_tree(tmp_path / "o", {"uses_plogis": unit("uses_plogis", "plogis")})
    with pytest.raises(MissingDependencyError, match=rf"{other / 'uses_plogis.cl'} depends on "
                                                     rf"plogis, which no file in {ext}"):
        Library(ext, [other]).write_index(root=other)


def test_cli_extract_refuses_to_overwrite_a_file_without_force(tmp_path):
    """``daskcl index extract`` into a destination holding a file of the user's where the
    extract writes one: exit 1, one line naming it, nothing written; ``--force`` overwrites."""
    ext = tmp_path / "ext"
    (ext / "nmath").mkdir(parents=True)
    (ext / "nmath" / "pnorm.cl").write_text("mine\n")
    r = cli("extract", str(ext), "--names", "pnorm,dbinom")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        f"error: {ext} already has 1 of the files the extract would write, with other "
        f"contents: {ext / 'nmath' / 'pnorm.cl'}. Nothing was written: move them away, choose "
        "another destination, or overwrite them with --force (daskcl index extract) or "
        "force=True (Library.extract)\n")
    assert [p.name for p in ext.rglob("*")] == ["nmath", "pnorm.cl"]
    assert (ext / "nmath" / "pnorm.cl").read_text() == "mine\n"
    r = cli("extract", str(ext), "--names", "pnorm,dbinom", "--force")
    assert r.returncode == 0, r.stderr
    n = len(get_library(None).resolve(["pnorm", "dbinom"]))     # with the shims they need
    assert r.stdout.startswith(f"extracted {n} units into {ext}: ")
    shipped = get_library(None).root
    assert (ext / "nmath" / "pnorm.cl").read_text() == (shipped / "nmath" / "pnorm.cl").read_text()
    assert cli("check", str(ext)).returncode == 0
    # the same extract again overwrites nothing, so needs no --force
    r = cli("extract", str(ext), "--names", "pnorm,dbinom")
    assert r.returncode == 0, r.stderr


def test_cli_extract_into_a_file_is_one_line(tmp_path):
    """A destination that is a file, or lies under one, printed a traceback
    (NotADirectoryError); now one line and exit 1, the file untouched."""
    f = tmp_path / "notes.cl"
    f.write_text("mine\n")
    r = cli("extract", str(f), "--names", "pnorm")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: {f} is not a directory: extract into a directory (made if "
                        "missing); nothing was written\n")
    r = cli("extract", str(f / "sub"), "--names", "pnorm")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: cannot extract into {f / 'sub'}: Not a directory")
    assert f.read_text() == "mine\n"


def test_extract_of_a_combined_library_holds_the_tree_units(tmp_path):
    tree = logit_tree(tmp_path)
    Library(trees=[tree]).write_index(root=tree)
    sub = get_library(tree).extract(tmp_path / "ext", names=["my_logit_odds"])
    assert sub.check_index() == []
    assert sub.units["my_logit_odds"].name == "nmath/my_logit_odds.cl"
    assert sub.resolve(["my_logit_odds"]) == [
        "rmath_constants", "rmath_utils", "dpq", "log1pexp", "plogis", "my_logit_cdf",
        "my_logit_odds"]


# -- roots, caching, find_names ---------------------------------------------------------------


@pytest.mark.parametrize("case, message", [
    ("missing", "is not a directory"),
    ("twice", "is given twice"),
    ("two_libraries", "two kernel libraries among the roots"),
    ("bad_stem", "must be a C identifier"),
    ("no_annotation", "has no '// @depends:' line"),
])
def test_roots_that_are_refused(tmp_path, case, message):
    from test_library import make_lib

    tree = logit_tree(tmp_path)
    roots: list[Path] = {
        "missing": [tmp_path / "nowhere"],
        "twice": [tree, tmp_path / "mylib" / ".." / "mylib"],
        "two_libraries": [Library().root, make_lib(tmp_path / "other", {"a": ("fa", [])})],
        "bad_stem": [write_tree(tmp_path / "b", {"my-unit": unit("f", "")})],
        "no_annotation": [write_tree(tmp_path / "n", {"u": "// @provides: u\ndouble u;\n"})],
    }[case]
    with pytest.raises(LibraryError, match=message):
        get_library(roots)


def test_cached_until_a_tree_file_changes(tmp_path):
    tree = logit_tree(tmp_path)
    Library(trees=[tree]).write_index(root=tree)
    lib = get_library([tree])
    assert get_library(str(tree)) is lib and get_library((tree,)) is lib
    before = lib.program_source(["my_logit_cdf"], "").text
    (tree / "my_logit_cdf.cl").write_text(LOGIT_CDF + "// a new last line\n")
    fresh = get_library(tree)
    assert fresh is not lib
    assert "a new last line" in fresh.program_source(["my_logit_cdf"], "").text
    assert "a new last line" not in before


def test_a_kernel_made_before_an_edit_builds_the_edited_unit(tmp_path):
    """An ElementwiseKernel kept the program it had assembled from a unit tree after the tree's
    file was edited (its sources were kept by the roots, which do not change), while a new
    kernel got the edit; now each call asks the library, read again once a file changed, and
    both give the edited unit's values."""
    from daskcl import ElementwiseKernel

    tree = logit_tree(tmp_path)
    Library(trees=[tree]).write_index(root=tree)
    odds = ElementwiseKernel("double x", "double y", "y = my_logit_odds(x);", name="odds",
                             library=tree)
    x = np.array([-1.0, 0.0, 1.0])
    np.testing.assert_allclose(odds(x), np.exp(x), rtol=2e-15)
    (tree / "my_logit_odds.cl").write_text(LOGIT_ODDS.replace("return my_logit_cdf(x) /",
                                                              "return 2 * my_logit_cdf(x) /"))
    fresh = ElementwiseKernel("double x", "double y", "y = my_logit_odds(x);", name="odds2",
                              library=tree)
    np.testing.assert_allclose(fresh(x), 2 * np.exp(x), rtol=2e-15)
    np.testing.assert_allclose(odds(x), 2 * np.exp(x), rtol=2e-15)
    # an edit of the annotations is seen too: the index no longer matches
    (tree / "my_logit_odds.cl").write_text(LOGIT_ODDS.replace("my_logit_cdf\n",
                                                              "my_logit_cdf, pnorm\n"))
    with pytest.raises(StaleIndexError):
        odds(x)


def test_find_names(tmp_path):
    lib = get_library()
    op = ("double c = qt(alpha / 2, df, 0, 0); "
          "power = pnt(c, df, ncp, 0, 0) + pnt(-c, df, ncp, 1, 0);")
    assert lib.find_names(op) == ("qt", "pnt")
    # comments, strings, members and numbers are not names; a variable named df is not a call
    assert lib.find_names('/* pnorm5(x) */ y = s.dt(1e5) + q->beta // qbeta(x)\n + "pf(";') == ()
    # called stems and symbols, and bare symbols that are not functions (macros, types)
    assert lib.find_names("dd_t s; y = lgammafn (x) * M_LN_SQRT_2PI + pnorm(x) + dnorm4(x);") \
        == ("dd_t", "lgammafn", "M_LN_SQRT_2PI", "pnorm", "dnorm4")
    # a call of an OpenCL built-in is not the unit of the same stem (cospi provides R_cospi)
    assert "cospi" in lib.units and lib.find_names("cospi(x) + R_cospi(x) + exp(x)") == ("R_cospi",)
    # ... unless the library provides exactly that symbol
    tree = write_tree(tmp_path / "t", {"blend": unit("mix", "", "double mix(double a);")})
    assert get_library(tree).find_names("y = mix(a, b, t) + dot(u, v);") == ("mix",)
