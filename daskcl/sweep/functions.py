# SPDX-License-Identifier: GPL-2.0-or-later
"""What a sweep's function is and how it is called: a :mod:`daskcl.nmath` name, a ``[kernel]``
table, or ``file.py:func`` (whose file is parsed when the spec is read, and run only when a
chunk is evaluated); and the check of a spec's axes and ``[args]`` against its parameters.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import inputs
from .axes import _err, _read_regular, _suggest, _text

if TYPE_CHECKING:
    from ..kernels._elementwise import ElementwiseKernel
    from .axes import Axis

__all__ = ["check_params"]

_KERNEL_KEYS = ("name", "inputs", "outputs", "operation", "preamble", "library")


# [args] types a Python function's annotation asks for (other annotations are not checked).
_ANNOTATION_TYPES: dict[str, tuple[type, ...]] = {
    "float": (int, float), "int": (int,), "bool": (bool,), "str": (str,)}


def _is_type(v: Any, types_: tuple[type, ...]) -> bool:
    return isinstance(v, types_) and (bool in types_ or not isinstance(v, bool))


class _Func:
    """How to evaluate one chunk: a callable of keyword arrays, and what it accepts.

    For a Python function (``file.py:func``) the file is read and *parsed*, never run: its
    parameters come from the ``def`` statement.  The file runs only when a chunk is evaluated.
    """

    kind = "nmath"
    #: the kernel of a ``[kernel]`` table (kind ``"kernel"``)
    kernel: ElementwiseKernel

    def __init__(self, name: str, base: Path) -> None:
        self.name = name
        self.params: tuple[str, ...] = ()
        self.required: tuple[str, ...] = ()
        self.flags: tuple[str, ...] = ()
        self.arg_types: dict[str, tuple[type, ...]] = {}
        self._source: str | None = None
        self._path = ""
        self._attr = ""
        if name.startswith("r") and _is_random(name):
            raise _err("sweep.function", f"{name!r} draws random variates; sweeps evaluate "
                       "functions of parameters (use daskcl.nmath." + name + "(..., chunks=) "
                       "and dask's to_zarr for variates)")
        if ":" in name:
            target, _, attr = name.rpartition(":")
            if not target.endswith(".py"):
                raise _err("sweep.function", f"{name!r}: a Python function comes from a file "
                           "the spec names, as 'file.py:func' (relative to the spec's "
                           "directory, or absolute); functions of importable modules "
                           f"({target!r}) are not run. Write a file whose function calls it.")
            if not attr.isidentifier():
                raise _err("sweep.function", f"{name!r}: {attr!r} is not a function name")
            path = (base / target).resolve()
            self.kind = "python"
            self._attr = attr
            self._path = str(path)
            self._source = _text(_read_regular(path, "sweep.function"), path, "sweep.function")
            self._parse_def()
            return
        from .. import nmath

        if name not in nmath.FUNCTIONS:
            raise _err("sweep.function", f"no daskcl.nmath function {name!r}"
                       f"{_suggest(name, nmath.FUNCTIONS)}; or give 'glm.f2_f3' or "
                       "'file.py:func'")
        sig = inspect.signature(nmath.FUNCTIONS[name])
        # a spec names Rmath.h's parameters: R's keywords (rate=, ncp=, mu=, expon_scaled=;
        # keyword-only, None by default) are not among them, and a parameter one of them may
        # stand in for (dnbinom's prob, None by default) is required
        params = [p for p in sig.parameters.values()
                  if not (p.kind is p.KEYWORD_ONLY and p.default is None)]
        self.params = tuple(p.name for p in params)
        self.required = tuple(p.name for p in params if p.default is p.empty or p.default is None)
        self.flags = tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY)
        # Rmath's arguments are doubles, its flags booleans.
        self.arg_types = {p: (bool,) if p in self.flags else (int, float) for p in self.params}

    def _parse_def(self) -> None:
        """Parameters, defaults and simple annotations of ``def <attr>`` in the file (the
        last top-level binding of the name must be that ``def``)."""
        import ast

        where, fname = "sweep.function", Path(self._path).name
        try:
            tree = ast.parse(self._source or "", filename=self._path)
        except SyntaxError as exc:
            raise _err(where, f"{fname} is not valid Python: line {exc.lineno}: {exc.msg}"
                       ) from None
        except (RecursionError, MemoryError):     # the parser's own bound on nesting
            raise _err(where, f"{fname} nests its expressions too deeply to parse") from None
        found: ast.AST | None = None
        for node in tree.body:
            bound: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound = [node.name]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound = [(a.asname or a.name).split(".")[0] for a in node.names]
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound = [n.id for t in targets for n in ast.walk(t)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
            if self._attr in bound:
                found = node
        if not isinstance(found, ast.FunctionDef):
            how = ("is not defined at its top level" if found is None else
                   f"is bound at line {getattr(found, 'lineno', '?')} by something other "
                   "than a 'def'")
            raise _err(where, f"{self.name!r}: {self._attr!r} {how}; the function must be "
                       f"defined with 'def {self._attr}(...)' at the top level of {fname} "
                       "(daskcl reads its parameters without running the file)")
        a = found.args
        positional = [*a.posonlyargs, *a.args]
        n_req = len(positional) - len(a.defaults)
        posonly = {x.arg for x in a.posonlyargs}
        req_posonly = [x.arg for i, x in enumerate(positional) if x.arg in posonly and i < n_req]
        if req_posonly:
            raise _err(where, f"{self.name!r}: {req_posonly} are positional-only; the sweep "
                       "passes every argument by keyword")
        named = [x for x in positional if x.arg not in posonly] + list(a.kwonlyargs)
        self.params = tuple(x.arg for x in named)
        self.required = tuple(
            [x.arg for i, x in enumerate(positional) if i < n_req]
            + [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None])
        for x in named:
            ann = x.annotation
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                text = ann.value.strip()  # a string annotation: "float"
            else:
                text = ann.id if isinstance(ann, ast.Name) else ""
            if text in _ANNOTATION_TYPES:
                self.arg_types[x.arg] = _ANNOTATION_TYPES[text]

    @classmethod
    def from_kernel(cls, table: Any, base: Path, sweep_name: str) -> _Func:
        """The function of a ``[kernel]`` table: an :class:`daskcl.ElementwiseKernel` built
        from it (nothing is compiled here; the build errors of its code come when it runs)."""
        from ..kernels._elementwise import ElementwiseKernel

        if not isinstance(table, dict):
            raise _err("kernel", "give a table with inputs, outputs and operation")
        bad = sorted(set(table) - set(_KERNEL_KEYS))
        if bad:
            raise _err("kernel", f"unknown keys {bad}; known: {list(_KERNEL_KEYS)}")
        missing = [k for k in ("inputs", "outputs", "operation") if k not in table]
        if missing:
            raise _err("kernel", f"{missing} must be given")
        for k in ("name", "inputs", "outputs", "operation", "preamble"):
            if k in table and not isinstance(table[k], str):
                raise _err(f"kernel.{k}", f"must be a string, got {table[k]!r}")
        lib = table.get("library", [])
        lib = [lib] if isinstance(lib, str) else lib
        if not isinstance(lib, list) or not all(isinstance(p, str) for p in lib):
            raise _err("kernel.library", "a directory or a list of directories (your own "
                       "library trees, relative to the spec's directory)")
        roots = [str((base / p).resolve()) for p in lib]
        for r in roots:
            if not Path(r).is_dir():
                raise _err("kernel.library", f"{r} is not a directory")
        name = table.get("name") or sweep_name or "kernel"
        try:
            kernel = ElementwiseKernel(table["inputs"], table["outputs"], table["operation"],
                                       name, preamble=table.get("preamble", ""),
                                       library=roots or None)
        except ValueError as exc:
            raise _err("kernel", str(exc)) from None
        f = cls.__new__(cls)
        f.name = f"[kernel] {name}"
        f.kind = "kernel"
        f.kernel = kernel
        order = list(kernel._order)
        f.params = tuple(n for _, n in order)
        f.required = f.params
        f.flags = ()
        f.arg_types = {n: (int, bool) if t == "int" else (int, float) for t, n in order}
        f._source, f._path, f._attr = None, "", ""
        return f

    def callable(self) -> Callable[..., Any]:
        """The function itself: for ``file.py:func`` this runs the file (once per process)."""
        if self.kind == "kernel":
            kernel = self.kernel

            def call(**kwargs: Any) -> Any:
                out = kernel(*(kwargs[n] for n in self.params))
                return out if isinstance(out, tuple) else (out,)

            return call
        if self.kind == "nmath":
            from .. import nmath

            return nmath.FUNCTIONS[self.name]
        mod = _load_source(self._path, self._source or "")
        fn = getattr(mod, self._attr, None)
        if not callable(fn):
            raise _err("sweep.function", f"{self.name!r}: no function {self._attr!r} there")
        return fn  # type: ignore[no-any-return]

    def loaded_inputs(self) -> frozenset[str]:
        """The files that loading a Python function's file read (after :meth:`callable`)."""
        if self.kind != "python":
            return frozenset()
        mod = _load_source(self._path, self._source or "")
        return frozenset(getattr(mod, "__daskcl_inputs__", ()))

    def warm_names(self) -> list[Any]:
        """What a worker builds before the first chunk: the nmath function's name, or the
        kernel itself (it pickles by its definition)."""
        if self.kind == "kernel":
            return [self.kernel]
        return [self.name] if self.kind == "nmath" else []


_SOURCE_MODULES: dict[str, types.ModuleType] = {}


def _load_source(path: str, source: str) -> types.ModuleType:
    """A sweep's Python file as a module, from the text shipped with the task (so workers on
    other hosts need not see the file); loaded once per process and text.  The files its
    loading read (its local modules, data read at import) are kept as ``__daskcl_inputs__``;
    it runs with builtins that note its imports (:func:`~daskcl.sweep.inputs.importing`)."""
    key = hashlib.sha256((path + "\0" + source).encode()).hexdigest()[:16]
    mod = _SOURCE_MODULES.get(key)
    if mod is None:
        mod = types.ModuleType(f"daskcl_sweep_{Path(path).stem}_{key}")
        mod.__file__ = path
        mod.__builtins__ = inputs.importing()  # type: ignore[attr-defined]
        sys.modules[mod.__name__] = mod
        with inputs.recording(own=path) as seen:    # its text is the identity's already
            exec(compile(source, path, "exec"), mod.__dict__)
            inputs.note(mod)    # the local modules it uses, imported before or not
        mod.__daskcl_inputs__ = frozenset(seen)  # type: ignore[attr-defined]
        _SOURCE_MODULES[key] = mod
    return mod


def _is_random(name: str) -> bool:
    from ..kernels import _random

    return name in _random.FUNCTIONS


def check_params(function: str, f: _Func, axes: tuple[Axis, ...], args: dict[str, Any]
                  ) -> None:
    """Every axis and argument is a named parameter of the function, of its type; every
    required parameter is given."""
    given = [a.name for a in axes] + list(args)
    dup = sorted({n for n in given if given.count(n) > 1})
    if dup:
        raise _err("args", f"{dup} given both as an axis and in [args]")
    for n in given:  # a function taking **kwargs too: only its named parameters
        if n not in f.params:
            raise _err(f"axis or arg {n!r}", f"{function} has no parameter {n!r}"
                       f"{_suggest(n, f.params)}; its parameters are {list(f.params)}")
    missing = [n for n in f.required if n not in given]
    if missing:
        raise _err("axes/args", f"{function} needs {missing} (as an axis or in [args])")
    for n in f.flags:
        if n in args and not isinstance(args[n], bool):
            raise _err(f"args.{n}", f"is a flag: true or false, got {args[n]!r}")
        if n in [a.name for a in axes]:
            raise _err(f"axis {n!r}", "is a flag (true/false); give it in [args]")
    for n, v in args.items():
        want = f.arg_types.get(n)
        if want is not None and not _is_type(v, want):
            names = " or ".join({int: "an integer", float: "a number", bool: "true/false",
                                 str: "a string"}[t] for t in want if t is not int
                                or float not in want)
            raise _err(f"args.{n}", f"{function} takes {names} here, got {v!r}")
