# SPDX-License-Identifier: GPL-2.0-or-later
"""The public surface: every name the README documents imports, every public module lists
exactly its public names in a sorted ``__all__``, and ``nmath.pyi`` is current and agrees with
the functions' signatures."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

import daskcl
from daskcl import _stubs, nmath

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(daskcl.__file__).resolve().parent

#: names the README documents without their module
README_NAMES = [
    "daskcl.cluster.DaskclPlugin",
    "daskcl.cluster.local_cluster",
    "daskcl.cluster.worker_devices",
    "daskcl.deploy.slurm_cluster",
    "daskcl.glm.FactorialGrid",
    "daskcl.glm.f2_f3",
    "daskcl.random.RHYPER_MAX_N",
    "daskcl.random.RSIGNRANK_MAX_N",
    "daskcl.random.RWILCOX_MAX_N",
]


def resolve(dotted: str) -> object:
    """The object a dotted name names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def readme_names() -> list[str]:
    text = (REPO / "README.md").read_text()
    found = set(re.findall(r"\bdaskcl(?:\.[A-Za-z_][A-Za-z0-9_]*)+", text))
    found |= {f"daskcl.{m}" for m in re.findall(r"python -m daskcl\.(\w+)", text)}
    return sorted(found | set(README_NAMES))


def public_modules() -> list[str]:
    names = ["daskcl"]
    for info in pkgutil.walk_packages([str(PACKAGE)], "daskcl."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def ruff_order(names: list[str]) -> list[str]:
    """The order ruff's RUF022 keeps: SCREAMING_CASE, then CamelCase, then the rest."""
    return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[:1].isupper() else 2, n))


def public_names(path: Path) -> tuple[set[str], set[str]]:
    """The public names of a module: what it defines or assigns at its top level, and, for a
    face (a module that defines nothing public itself), what it imports from daskcl; and the
    names it imports from daskcl (which it may re-export)."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {t.id for t in targets if isinstance(t, ast.Name) and t.id != "__all__"}
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            imported |= {a.asname or a.name for a in node.names}
    defined = {n for n in defined if not n.startswith("_")}
    names = defined or imported
    return {n for n in names if not n.startswith("_") or n == "__version__"}, imported


@pytest.mark.parametrize("name", readme_names())
def test_every_documented_name_imports(name):
    assert resolve(name) is not None


def test_readme_names_cover_the_faces():
    names = readme_names()
    for face in ("daskcl.nmath", "daskcl.glm", "daskcl.random", "daskcl.cluster", "daskcl.deploy"):
        assert any(n == face or n.startswith(face + ".") for n in names), face


@pytest.mark.parametrize("module", public_modules())
def test_all_is_sorted_and_exact(module):
    mod = importlib.import_module(module)
    path = Path(mod.__file__)
    bound, imported = public_names(path)
    if module == "daskcl.nmath":
        bound = {"FUNCTIONS", *nmath.FUNCTIONS}
    if not bound and not hasattr(mod, "__all__"):
        return  # a package that only documents its modules
    listed = mod.__all__
    assert isinstance(listed, list) and all(isinstance(n, str) for n in listed)
    assert listed == ruff_order(listed), f"{module}.__all__ is not sorted"
    assert len(set(listed)) == len(listed)
    missing, foreign = bound - set(listed), set(listed) - bound - imported
    assert not missing and not foreign, (
        f"{module}: public names not in __all__: {sorted(missing)}; in __all__ but not "
        f"public names of the module: {sorted(foreign)}"
    )
    for name in listed:
        assert name == "__version__" or not name.startswith("_")
        assert getattr(mod, name) is not None
    if path.name != "nmath.py":
        tree = ast.parse(path.read_text())
        assigned = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign))
                    and any(isinstance(t, ast.Name) and t.id == "__all__"
                            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
        assert len(assigned) == 1, f"{module}.__all__ is assigned {len(assigned)} times"


def test_nmath_names_are_the_rows():
    from daskcl.kernels import _random
    from daskcl.kernels._nmath_table import ROWS

    rows = {fn.name for fn in ROWS} | {fn.name for fn in _random.ROWS}
    assert set(nmath.FUNCTIONS) == rows
    assert nmath.__all__ == sorted(["FUNCTIONS", *rows])
    assert "globals().update" not in (PACKAGE / "nmath.py").read_text()
    for name in rows:
        func = getattr(nmath, name)
        assert func is nmath.FUNCTIONS[name] and name in dir(nmath)
        assert (func.__module__, func.__qualname__) == ("daskcl.nmath", name)
    with pytest.raises(AttributeError, match="no attribute 'pnormal'"):
        nmath.pnormal  # noqa: B018


def test_nmath_functions_pickle_by_reference():
    for name in ("pnorm", "pwilcox", "rnorm", "rbinom"):
        func = getattr(nmath, name)
        data = pickle.dumps(func)
        assert len(data) < 100 and pickle.loads(data) is func


def test_stub_is_current():
    assert _stubs.stub_path() == PACKAGE / "nmath.pyi"
    assert _stubs.check() == [], "run 'daskcl stubs build' and commit daskcl/nmath.pyi"


def test_stub_check_reports_a_stale_stub(tmp_path, capsys):
    from daskcl import cli

    stale = tmp_path / "nmath.pyi"
    stale.write_text(_stubs.nmath_stub().replace("def pnorm(", "def pnorm_old("))
    diff = _stubs.check(stale)
    assert "-def pnorm_old(" in [line.split("q:")[0] for line in diff]
    assert _stubs.check(tmp_path / "missing.pyi") != []
    assert cli.main(["stubs", "check"]) == 0
    assert "is current" in capsys.readouterr().out


def stub_functions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse((PACKAGE / "nmath.pyi").read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_stub_signatures_are_the_runtime_signatures():
    stubs = stub_functions()
    tree = ast.parse((PACKAGE / "nmath.pyi").read_text())
    (listed,) = [ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                 and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["__all__"]]
    assert listed == nmath.__all__
    assert set(stubs) == set(nmath.FUNCTIONS)
    kinds = {"posonlyargs": inspect.Parameter.POSITIONAL_ONLY,
             "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
             "kwonlyargs": inspect.Parameter.KEYWORD_ONLY}
    for name, node in stubs.items():
        a = node.args
        params = [(p.arg, kinds[field]) for field in kinds for p in getattr(a, field)]
        defaults = [*[None] * (len(a.posonlyargs) + len(a.args) - len(a.defaults)),
                    *a.defaults, *a.kw_defaults]
        sig = inspect.signature(nmath.FUNCTIONS[name])
        assert params == [(p.name, p.kind) for p in sig.parameters.values()], name
        # "no default" is its own value on both sides: a stub that drops "= None" differs
        none = inspect.Parameter.empty
        got = [none if d is None else ast.literal_eval(d) for d in defaults]
        want = [p.default for p in sig.parameters.values()]
        assert got == want, name
        assert ast.get_docstring(node).startswith(nmath.FUNCTIONS[name].__doc__.split("\n")[0])


def test_stub_types_flags_and_sizes():
    stubs = stub_functions()
    text = ast.unparse(stubs["pnorm"])
    assert text.startswith("def pnorm(q: ArrayLike, mean: ArrayLike=0.0, sd: ArrayLike=1.0, *, "
                           "lower_tail: _Flag=True, log_p: _Flag=False) -> Any:")
    assert ast.unparse(stubs["rbinom"]).startswith(
        "def rbinom(n: _Size, /, size: ArrayLike, prob: ArrayLike, *, "
        "seed: SupportsIndex | None=None, offset: SupportsIndex=0, chunks: Any=None, "
        "device: bool=False) -> Any:")


def test_package_is_typed():
    assert (PACKAGE / "py.typed").is_file()
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(r"^strict = true$", pyproject, re.M)
