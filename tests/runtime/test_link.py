# SPDX-License-Identifier: GPL-2.0-or-later
"""Separate compilation and linking (config key ``build.link``, daskcl.runtime.link).

With the linked build forced on PoCL: the same bits as the assembled program for a row of every
kind (d, p, q, a classified row in its sorted launch, a count-table row, a generator, an f2_f3
family); objects kept on disk and shared by the kernels that use the same units; a corrupt object
rebuilt with a warning; a broken unit, an unresolved symbol and a symbol defined twice reported
with the file and line; every unit of the library compiled alone and linked.
"""

from __future__ import annotations

import re
import shutil
import stat
import warnings
from pathlib import Path

import numpy as np
import pytest

from daskcl import config, glm, nmath
from daskcl.errors import BuildError, CacheWarning, ConfigError, DaskclWarning
from daskcl.kernels import _counts
from daskcl.runtime import device, diskcache, link, program
from daskcl.runtime.library import ProgramSource, get_library

REPO = Path(__file__).resolve().parents[2]


def _bits(out) -> list[np.ndarray]:
    return [np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)
            for a in (out if isinstance(out, tuple) else (out,))]


def _glm():
    rng = np.random.default_rng(3)
    l1, l2, m1 = 30, 3, 64
    x = rng.normal(size=(l1, l2))
    y, wt = rng.integers(0, 6, l1) / 5.0, np.full(l1, 5.0)
    b = rng.normal(0, 0.5, (m1, l2))
    return glm.f2_f3("binomial", "logit", b, y, x, np.zeros(l2), np.eye(l2), np.zeros(l1), wt)


def _pwilcox():
    _counts._cache.entries.clear()         # the count tables are built by this call's program
    return nmath.pwilcox(np.arange(-1.0, 75.0), 11.0, 13.0)


_P = np.linspace(0.0, 1.0, 401)
_X = np.concatenate([np.linspace(0.0, 30.0, 301), [np.nan, np.inf, -1.0, 1e-300]])

#: a row of every kind: the call, and the config it runs under
CASES = {
    "d": (lambda: nmath.dgamma(_X, 2.5, 1.5, log=True), {}),
    "p": (lambda: nmath.pnorm(np.linspace(-40.0, 10.0, 2001), log_p=True), {}),
    "q": (lambda: nmath.qbeta(_P, 0.7, 4.5), {}),
    "classified, sorted launch": (lambda: nmath.pbeta(_P, 0.5, 80.0), {"binning": "1"}),
    "count table": (_pwilcox, {}),
    "generator": (lambda: nmath.rgamma(5000, np.linspace(0.05, 60.0, 5000), seed=7), {}),
    "f2_f3": (_glm, {}),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(CASES))
def test_linked_build_gives_the_assembled_bits(kind, cache):
    call, settings = CASES[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # R's NaN warnings
        with config.set({**settings, "build.link": False}):
            want = call()
        for mode in ("1", "closure") if kind in ("p", "f2_f3") else ("1",):
            before = dict(program.stats)
            with config.set({**settings, "build.link": mode}):
                got = call()
            built = program.stats["source"] - before["source"]
            # every program the call built was linked, from objects compiled for it
            assert built >= 1 and program.stats["linked"] - before["linked"] == built
            objects = sum(program.stats[f"object_{k}"] - before[f"object_{k}"]
                          for k in ("source", "memory", "disk"))
            assert objects >= 2 * built and program.stats["object_source"] > before[
                "object_source"]
            for a, b in zip(_bits(got), _bits(want), strict=True):
                np.testing.assert_array_equal(a, b)
    linked = [b for b in program._memory.values() if b.linked]
    assert linked and all(b.origin == "linked" and b.detail["objects"] >= 2 for b in linked)


@pytest.mark.slow
def test_kernels_of_the_same_units_share_their_objects(cache):
    """pbeta's kernel and a kernel of your own calling pbeta hold the same units: the units'
    objects are compiled once, each kernel's own object once per kernel."""
    from daskcl import ElementwiseKernel

    mine = ElementwiseKernel("double x", "double y", "y = pbeta(x, 3.0, 2.0, 0, 0);",
                             name="upper_beta")
    before = dict(program.stats)
    # unsorted launches (a GPU sorts pbeta's by method, with programs of its own)
    with config.set({"build.link": True, "binning": "0"}):
        nmath.pbeta(_P, 2.0, 3.0)
        mine(_P)
    built = list(program._memory.values())
    assert len(built) == 2
    units = [(o.source.text, o.options) for b in built for o in _objects(b)[:-1]]
    assert len(set(units)) == len(units) // 2 >= 2
    assert program.stats["object_source"] - before["object_source"] == len(set(units)) + 2
    assert program.stats["object_memory"] - before["object_memory"] == len(units) // 2


def _objects(built: program.BuiltProgram) -> list[link.ObjectSource]:
    plan = link.plan(built.source, built.options)
    assert plan is not None
    return list(plan.objects)


def _object_path(obj: link.ObjectSource) -> Path:
    bound = device.current()
    key = program._key(bound.info.identity, obj.source.text, (program._OBJECT, *obj.options))
    path = diskcache._disk_path(key, bound)
    assert path is not None
    return path


def test_objects_are_kept_on_disk_and_shared_by_kernels(cache):
    with config.set({"build.link": True}):
        nmath.pbeta(0.3, 2.0, 3.0)
        (first,) = program._memory.values()
        program.clear_memory_cache()
        before = dict(program.stats)
        got = nmath.pf(1.5, 3.0, 7.0)
    with config.set({"build.link": False}):
        want = nmath.pf(1.5, 3.0, 7.0)
    np.testing.assert_array_equal(_bits(got)[0], _bits(want)[0])
    (pf,) = [b for b in program._memory.values() if b.linked]
    kept = {o.source.text for o in _objects(first)[:-1]}
    shared = [o for o in _objects(pf)[:-1] if o.source.text in kept]
    assert [o.unit for o in shared] and "nmath/toms708.cl" in [o.unit for o in shared]
    # the objects of the units pbeta's program had come from disk; the rest were compiled
    assert pf.detail["from_disk"] == len(shared)
    assert pf.detail["compiled"] == pf.detail["objects"] - len(shared)
    assert program.stats["object_disk"] - before["object_disk"] == len(shared)
    assert program.stats["object_source"] - before["object_source"] == pf.detail["compiled"]
    for o in _objects(pf)[:-1]:
        assert _object_path(o).is_file()


def test_linked_program_is_cached_like_any_program(cache):
    with config.set({"build.link": True}):
        want = nmath.pnorm(_P)
        program.clear_memory_cache()
        before = dict(program.stats)
        got = nmath.pnorm(_P)
    (b,) = program._memory.values()
    assert b.origin == "disk" and b.linked
    assert program.stats["disk"] - before["disk"] == 1
    assert program.stats["object_source"] == before["object_source"]
    np.testing.assert_array_equal(_bits(got)[0], _bits(want)[0])


@pytest.mark.parametrize("damage", ["corrupt", "writable by others"])
def test_damaged_object_is_rebuilt_with_a_warning(cache, damage):
    """An object's entry that is corrupt, or that others could have written (the trust rules of
    program entries), is compiled again and replaced, with a warning."""
    with config.set({"build.link": True}):
        want = nmath.pnorm(_P)
    (built,) = program._memory.values()
    obj = _objects(built)[0]
    assert obj.unit == "nmath/pnorm.cl"
    entry = _object_path(obj)
    if damage == "corrupt":
        blob = bytearray(entry.read_bytes())
        blob[-100] ^= 0xFF                               # one flipped byte of the binary
        entry.write_bytes(bytes(blob))
        said = "checksum mismatch"
    else:
        entry.chmod(0o666)
        said = "writable by others"
    program.clear_memory_cache()
    before = dict(program.stats)
    # the program is built again (not loaded) only if its own entry is gone
    key = program._key(device.current().info.identity, built.source.text,
                       (program._LINKED + "unit", *built.options))
    path = diskcache._disk_path(key, device.current())
    assert path is not None and path.is_file()
    path.unlink()
    with config.set({"build.link": True}), pytest.warns(CacheWarning) as caught:
        got = nmath.pnorm(_P)
    assert any(str(entry) in str(w.message) and said in str(w.message) for w in caught)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert program.stats["rebuilt_corrupt"] - before["rebuilt_corrupt"] == 1
    np.testing.assert_array_equal(_bits(got)[0], _bits(want)[0])
    # the entry was replaced: the next build reads it
    program.clear_memory_cache()
    path.unlink()
    before = dict(program.stats)
    with config.set({"build.link": True}), warnings.catch_warnings():
        warnings.simplefilter("error")
        nmath.pnorm(_P)
    assert program.stats["object_disk"] - before["object_disk"] == 1


def _library_copy(tmp_path: Path) -> Path:
    root = tmp_path / "cl"
    shutil.copytree(REPO / "cl", root)
    return root


def _insert(path: Path, after: str, line: str, before_it: str | None = None) -> tuple[int, int]:
    """Insert ``line`` after the first line of ``path`` that starts with ``after`` (its function's
    opening brace), and ``before_it`` before that function; the 1-based lines they land on."""
    lines = path.read_text().split("\n")
    head = next(k for k, s in enumerate(lines) if s.startswith(after))
    brace = next(k for k in range(head, len(lines)) if lines[k].startswith("{"))
    lines.insert(brace + 1, line)
    at = brace + 2
    proto = 0
    if before_it is not None:
        lines.insert(head, before_it)
        proto, at = head + 1, at + 1
    path.write_text("\n".join(lines))
    return at, proto


def test_broken_unit_names_its_file_and_line(tmp_path, cache):
    root = _library_copy(tmp_path)
    line, _ = _insert(root / "nmath" / "pnorm.cl", "double pnorm5(",
                      "    double broken = undefined_name_here;")
    with config.set({"library": str(root), "build.link": True}), \
            pytest.raises(BuildError) as ei:
        nmath.pnorm(0.5)
    msg = str(ei.value)
    assert "compiling nmath/pnorm.cl separately" in msg
    assert f"nmath/pnorm.cl:{line}:" in msg and "undefined_name_here" in msg
    assert "nmath/pnorm.cl" in ei.value.units


def test_unresolved_symbol_at_link_is_named_with_its_lines(tmp_path, cache):
    root = _library_copy(tmp_path)
    call, proto = _insert(root / "nmath" / "pnorm.cl", "double pnorm5(",
                          "    if (x == 12345.) return pnorm_missing_helper(x);",
                          "double pnorm_missing_helper(double x);")
    with config.set({"library": str(root), "build.link": True}), \
            pytest.raises(BuildError) as ei:
        nmath.pnorm(0.5)
    msg = str(ei.value)
    assert "OpenCL link of separately compiled objects failed" in msg
    assert (f"unresolved symbol 'pnorm_missing_helper': declared at nmath/pnorm.cl:{proto} and "
            f"called at nmath/pnorm.cl:{call}") in msg


def test_symbol_defined_twice_is_named_with_both_files(tmp_path, cache):
    root = _library_copy(tmp_path)
    where = {}
    for unit in ("bd0", "dbinom"):
        path = root / "nmath" / f"{unit}.cl"
        text = path.read_text()
        where[unit] = text.count("\n") + 1
        path.write_text(text + "double daskcl_dup_probe(double x) { return x; }\n")
    with config.set({"library": str(root), "build.link": True}), \
            pytest.raises(BuildError) as ei:
        nmath.dbinom(1.0, 3.0, 0.5)
    assert (f"'daskcl_dup_probe' is defined more than once: nmath/bd0.cl:{where['bd0']}, "
            f"nmath/dbinom.cl:{where['dbinom']}") in str(ei.value)


def test_failed_link_without_a_program_from_the_driver(cache, monkeypatch):
    """A driver that returns no program from a failed link (NVIDIA, PoCL): the error still says
    what the sources show, and nothing touches the missing program."""
    import pyopencl as cl

    def no_program(*args, **kwargs):
        raise cl.RuntimeError(cl._cl._ErrorRecord(
            msg="clLinkProgram failed: LINK_PROGRAM_FAILURE",
            code=cl.status_code.LINK_PROGRAM_FAILURE, routine="clLinkProgram"))

    monkeypatch.setattr(cl, "link_program", no_program)
    with config.set({"build.link": True}), pytest.raises(BuildError) as ei:
        nmath.pnorm(0.5)
    msg = str(ei.value)
    assert "LINK_PROGRAM_FAILURE" in msg and "Linker log: (the driver gave none)" in msg
    assert "nmath/pnorm.cl" in msg


def test_vendor_options_a_compiler_of_objects_refuses_are_dropped(cache):
    """NVIDIA's -cl-nv-* code generation options: PoCL refuses them both at compile and at
    link (INVALID_COMPILER_OPTIONS, INVALID_LINKER_OPTIONS); the linked build goes without."""
    kernel = ("__kernel void k(__global double *x) { x[get_global_id(0)] = "
              "pnorm5(x[get_global_id(0)], 0., 1., 1, 0); }\n")
    src = get_library().program_source(["pnorm"], kernel, "kernels/k.cl")
    with config.set({"build.link": True}):
        built = program.build(src, ("-cl-nv-maxrregcount=64",))
        plain = program.build(src)
    assert built.linked and built.origin == "linked"
    assert run(built) == run(plain) and run(plain)[1] == 0.5


def run(built: program.BuiltProgram) -> list[float]:
    import pyopencl as cl

    bound = device.current()
    x = np.array([-1.0, 0.0, 0.5, 3.0])
    buf = cl.Buffer(bound.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    k, lock = built.kernel("k")
    with lock:
        k(bound.queue, (4,), None, buf)
    cl.enqueue_copy(bound.queue, x, buf)
    return x.tolist()


@pytest.mark.slow
def test_every_unit_compiles_alone_and_links(cache):
    """A program holding the whole library, linked: each unit's object is compiled from its
    declared dependencies' interfaces only, so a missing @depends fails here."""
    lib = get_library()
    kernel = "__kernel void k(__global double *x) { x[0] = pnorm5(x[0], 0., 1., 1, 0); }\n"
    src = lib.program_source(list(lib.units), kernel, "kernels/probe.cl")
    with config.set({"build.link": True}):
        built = program.build(src)
    assert built.linked and built.detail["compiled"] == built.detail["objects"]
    assert built.detail["objects"] > 100


# -- the plan and the interfaces ------------------------------------------------------------------


def test_interfaces_keep_every_line_where_it_was():
    lib = get_library()
    for unit in lib.units.values():
        text = unit.path.read_text()
        face = link.interface(text, unit.provides)
        assert face.count("\n") == text.count("\n"), unit.name
        for got, line in zip(face.split("\n"), text.split("\n"), strict=True):
            # a definition becomes its declaration (the line cut at its body), or an extern
            # declaration of the same name (a table)
            extern = got.startswith("extern ") and re.sub(r"\[.*", "", got).split()[-1] in line
            assert got in ("", line) or line.startswith(got.rstrip(";")) or extern, (
                unit.name, got, line)


def test_interface_of_a_unit():
    text = (
        "// @provides: f, helper\n// @depends:\n"
        "#define TWICE(x) (2 * (x))\n"
        "__constant double tab[2] = { 1., 2. };\n"
        "static __constant double private_tab[1] = { 3. };\n"
        "static inline double helper(double x) { return TWICE(x) + hidden(x); }\n"
        "static inline double hidden(double x) { return x; }\n"
        "static double unused(double x) { return private_tab[0] * x; }\n"
        "double f(double x) // the public one\n{\n    return helper(x) * tab[1];\n}\n"
        "QDEFINE(name, 3)\n"
    )
    face = link.interface(text, ("f", "helper"))
    lines = face.split("\n")
    assert lines[2] == "#define TWICE(x) (2 * (x))"
    assert lines[3] == ""                                   # nothing kept names the table
    assert lines[5].startswith("static inline double helper")
    assert lines[6].startswith("static inline double hidden")  # named by what is kept
    assert lines[7] == ""                                   # neither provided nor named
    assert lines[8] == "double f(double x);" and lines[9:12] == ["", "", ""]
    assert lines[12] == "QDEFINE(name, 3)"
    assert link.interface(text, ("f", "helper", "tab")).split("\n")[3] == (
        "extern __constant double tab[2];")
    syms = link.symbols(text, "nmath/x.cl")
    assert set(syms.defines) == {"tab", "f"} and syms.defines["f"] == ("nmath/x.cl", 9)


def test_options_reach_only_the_objects_that_name_them():
    lib = get_library()
    src = lib.program_source(["pbeta"], "__kernel void k(__global double *x) { x[0] = KNOB; }\n",
                             "kernels/k.cl")
    plan = link.plan(src, ("-DDASKCL_NOINLINE", "-DKNOB=2.0", "-cl-denorms-are-zero"))
    assert plan is not None
    *units, kernel = plan.objects
    assert [o.unit for o in units][-2:] == ["nmath/toms708.cl", "nmath/pbeta.cl"]
    for o in units:
        assert o.options == ("-DDASKCL_NOINLINE", "-cl-denorms-are-zero")
    assert kernel.options == ("-DDASKCL_NOINLINE", "-DKNOB=2.0", "-cl-denorms-are-zero")
    assert plan.link_options == ("-cl-denorms-are-zero",)
    # toms708's object is the same text whichever kernel links it
    other = link.plan(lib.program_source(["pf"], "__kernel void k() {}\n", "kernels/k.cl"), ())
    assert other is not None
    assert units[-2].source.text in {o.source.text for o in other.objects}


def test_program_not_from_a_library_is_built_whole(cache):
    src = ProgramSource("__kernel void k(__global double *x) { x[0] = 1.0; }\n", ("k.cl",))
    assert link.plan(src, ()) is None
    with config.set({"build.link": True}):
        built = program.build(src)
    assert built.origin == "source" and not built.linked


# -- the choice -----------------------------------------------------------------------------------


def test_link_setting(monkeypatch):
    monkeypatch.delenv("DASKCL_LINK", raising=False)
    assert config.get("build.link") == "auto"
    for text, want in (("1", True), ("false", False), (" Closure ", "closure"), ("", "auto")):
        monkeypatch.setenv("DASKCL_LINK", text)
        assert config.get("build.link") == want
    monkeypatch.setenv("DASKCL_LINK", "yes please")
    with pytest.raises(ConfigError, match=r"DASKCL_LINK='yes please' is not understood"):
        config.get("build.link")
    with pytest.raises(ConfigError, match=r"'build.link' must be 0 or 1"):
        config.set({"build.link": "sometimes"})
    monkeypatch.delenv("DASKCL_LINK")
    bound = device.current()
    with config.set({"build.link": False}):
        assert program.link_mode(bound) == "assembled"
    with config.set({"build.link": True}):
        assert program.link_mode(bound) == "unit"
    with config.set({"build.link": "closure"}):
        assert program.link_mode(bound) == "closure"
    monkeypatch.setattr(program, "LINK_WINS", ())
    assert program.link_mode(bound) == "assembled"
    monkeypatch.setattr(program, "LINK_WINS", ((bound.info.platform[:8], bound.info.type),))
    assert program.link_mode(bound) == "unit"


def test_device_without_a_linker_builds_whole_with_a_warning(monkeypatch):
    bound = device.current()
    monkeypatch.setitem(program._linker, program._handle(bound.device), False)
    monkeypatch.setattr(diskcache, "_refused", set())
    with config.set({"build.link": True}), pytest.warns(DaskclWarning, match="no OpenCL linker"):
        assert program.link_mode(bound) == "assembled"
    with config.set({"build.link": "auto"}), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert program.link_mode(bound) == "assembled"
