# SPDX-License-Identifier: GPL-2.0-or-later
"""The public kernel layer: :class:`Kernel`, and :class:`RawKernel` for ``__kernel`` sources.

A kernel knows its library (the shipped one, or the roots it was given: your own annotated units
beside the shipped Mathlib, see ``cl/README.md``), the program source it assembles from it (the
minimal subset of the library that its code calls, through the dependency index), its program
for the bound device (built once, cached in memory and on disk: :mod:`daskcl.runtime.program`),
and how it is called.  Kernels pickle by their definition, never by an OpenCL object, so dask
tasks and worker plugins carry them; a worker builds the program for its own device.

:class:`daskcl.ElementwiseKernel` (:mod:`daskcl.kernels._elementwise`) is the elementwise kind,
of which every function of :mod:`daskcl.nmath` is an instance.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import numbers
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import BuildError
from ..runtime import device as _device
from ..runtime import program as _program
from ..runtime.library import (
    Library,
    ProgramSource,
    closest_names,
    get_library,
    parse_annotations,
)
from ..runtime.program import set_args as _set_args
from . import _transfer

__all__ = ["Kernel", "LibraryRoots", "RawKernel", "kernel_params", "library_roots"]

#: one library root or several (directories), as kernels take them
LibraryRoots = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None


def library_roots(library: LibraryRoots) -> tuple[str, ...] | None:
    """``library`` as a tuple of absolute paths (``None``: the shipped library)."""
    if library is None:
        return None
    items = [library] if isinstance(library, (str, os.PathLike)) else list(library)
    if not items:
        return None
    return tuple(os.path.abspath(os.fspath(p)) for p in items)


def _options(where: str, options: Any) -> tuple[str, ...]:
    """A kernel's ``options`` as a tuple of build options: a string is split as a shell splits
    it (as pyopencl takes one: iterated over, it gave one option a character, and a build
    error that named none of them); a sequence gives its items, each a string (or a path, for
    ``-I``).  Anything else is a ``TypeError`` beginning with ``where`` (the kernel)."""
    if isinstance(options, str):
        try:
            return tuple(shlex.split(options))
        except ValueError as e:     # shlex's "No closing quotation", naming nothing
            raise ValueError(f"{where}: the options {options!r} cannot be split as a shell "
                             f"splits them: {e}") from None
    if isinstance(options, (bytes, bytearray)) or not isinstance(options, Iterable):
        raise TypeError(f"{where}: options must be a string of build options or a "
                        f"sequence of them (\"-DN=4\" or [\"-DN=4\"]), not {options!r}")
    items = list(options)
    for o in items:
        if not isinstance(o, (str, os.PathLike)):
            raise TypeError(f"{where}: each build option must be a string, not {o!r} "
                            f"(in options {items!r})")
    return tuple(os.fspath(o) for o in items)


def misspelt(given: Iterable[str], known: Sequence[str]) -> str:
    """What a call's error adds for keywords it does not know: `` (did you mean a or b?)``,
    each with the names of ``known`` closest to it; empty where none is near."""
    out = ""
    for k in given:
        if k in known:
            continue
        # R's names that Python cannot take as they are: lambda (a keyword), lower.tail
        r_name = [n for n in known if n == k.replace(".", "_")
                  or (keyword.iskeyword(k) and k.startswith(n))]
        if r_name:
            out += f" (R's {k} is {r_name[0]} here"
            out += f": {k} is a reserved word in Python)" if keyword.iskeyword(k) else ")"
        elif near := closest_names(k, known):
            out += f" (did you mean {' or '.join(near)}?)"
    return out


def _get_library(roots: tuple[str, ...] | None) -> Library:
    if roots is None:
        return get_library()
    if len(roots) == 1:
        return get_library(roots[0])
    return get_library(roots)


class Kernel:
    """A kernel of the library on the bound device.

    Subclasses say what the kernel's program is (:meth:`source`) and how it is called.

    Parameters
    ----------
    name : str
        The kernel's name (a C identifier), in messages and in its program's kernel names.
    library : path or sequence of paths, optional
        The library roots its code may call into: the shipped library by default; a directory
        of your own annotated units (with its own index, ``daskcl index build DIR``) is used
        beside it; a full library (laid out like ``cl/``, e.g. from ``daskcl index extract``)
        replaces it.
    options : str or sequence of str
        Further build options (``-D`` macros, ``-cl-*`` flags): a sequence of them, or one
        string, split as a shell splits it (``"-DN=4 -cl-fast-relaxed-math"``), as pyopencl
        takes them.
    """

    #: whether the source names the library units it calls in its opening comment
    #: (``// @depends_nmath:``), as a :class:`RawKernel`'s does, rather than having them found
    _annotated: bool = False
    #: what ``inspect.signature`` reports (the functions of :mod:`daskcl.nmath` set it)
    __signature__: inspect.Signature
    __name__: str
    __qualname__: str

    def __init__(self, name: str, *, library: LibraryRoots = None,
                 options: str | Sequence[str] = ()) -> None:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"a kernel's name must be a C identifier, not {name!r}")
        self.name = name
        self.library_roots = library_roots(library)
        self.options = _options(f"{type(self).__name__} {name}", options)

    @property
    def library(self) -> Library:
        """The :class:`~daskcl.runtime.library.Library` the kernel is assembled from."""
        return _get_library(self.library_roots)

    def source(self, variant: Any = None) -> ProgramSource:
        """The assembled program (of ``variant``, where a kernel has several)."""
        raise NotImplementedError

    def build_options(self, variant: Any = None) -> tuple[str, ...]:
        """Build options of ``variant`` on the bound device."""
        return self.options

    def program(self, variant: Any = None) -> _program.BuiltProgram:
        """The program for the bound device: from memory, the disk cache, or built now.

        Raises
        ------
        BuildError
            The compiler rejected it; the message points to the library file or to your own
            code, with its line.
        """
        try:
            return _program.build(self.source(variant), self.build_options(variant))
        except BuildError as e:
            # the message's log, whose locations are mapped to files (of the program, or of
            # the object that was compiled separately)
            hint = _undeclared_hint(self.library, str(e), annotated=self._annotated)
            if hint:
                e.args = (f"{e.args[0] if e.args else ''}\n{hint}", *e.args[1:])
            raise

    def variants(self) -> list[Any]:
        """The variants a call on the bound device uses (what :meth:`warm` builds)."""
        return [None]

    def warm(self) -> None:
        """Build (or load) the programs the bound device uses, ahead of the first call."""
        for v in self.variants():
            self.program(v)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _tree_unit_at(lib: Library, log: str, pos: int) -> str | None:
    """The stem of the unit of a tree whose file the line of the build ``log`` (its locations
    mapped to files) holding ``pos`` first names (``/home/me/mylib/f.cl:3:5: ...``); ``None``
    where it names none."""
    line = log[log.rfind("\n", 0, pos) + 1: pos]
    at = [(line.find(f"{u.name}:"), s) for s, u in lib.units.items() if u.tree is not None]
    return min(((i, s) for i, s in at if i >= 0), default=(0, None))[1]


#: a compiler's report of a name it does not know: clang's (PoCL's), and NVIDIA's, whose
#: front end lets an undeclared function through and whose assembler then fails on it
_UNDECLARED = re.compile(r"(?:undeclared identifier|implicit declaration of function|"
                         r"undeclared function|Unresolved extern function) '([A-Za-z_]\w*)'")


def _undeclared_hint(lib: Library, log: str, *, annotated: bool) -> str:
    """What to do about each name a build ``log`` (its locations mapped to files) reports
    undeclared, one line each: a name of ``lib`` that the program lacks is to be named in the
    ``@depends`` line of the unit of a tree that calls it, else in the opening comment of an
    ``annotated`` source; another name gets the library's names closest to it ("did you mean
    ...").  Empty where the log reports none."""
    lines: list[str] = []
    seen: set[tuple[str, str | None]] = set()
    for m in _UNDECLARED.finditer(log):
        name = m.group(1)
        unit_in = _tree_unit_at(lib, log, m.start())
        if (name, unit_in) in seen:
            continue
        seen.add((name, unit_in))
        stem = lib.stem_of(name)
        if stem is not None and unit_in is not None:
            owner = lib.units[unit_in]
            lines.append(f"  {name} is in the library ({lib.units[stem].name}) but "
                         f"{owner.name} does not depend on it: add {stem} to its "
                         f"// @depends: line, then run '{lib.index_command(owner.tree)}'")
            continue
        if stem is not None:
            if annotated:
                unit = lib.units[stem]
                tag = "depends" if unit.tree is not None else "depends_nmath"
                lines.append(f"  {name} is in the library ({unit.name}) but not in the program: "
                             f"name it in the comment that opens the source, // @{tag}: {stem}")
            continue
        close = lib.closest(name)
        if close:
            lines.append(f"  {name} is not a name of the library: did you mean "
                         f"{', '.join(close[:-1]) + ' or ' if close[1:] else ''}{close[-1]}?")
    return "What to do:\n" + "\n".join(lines) if lines else ""


# -- raw kernels ------------------------------------------------------------------------------

_SCALAR_TYPES = {
    "double": np.float64, "float": np.float32, "char": np.int8, "uchar": np.uint8,
    "short": np.int16, "ushort": np.uint16, "int": np.int32, "uint": np.uint32,
    "long": np.int64, "ulong": np.uint64, "size_t": np.uint64, "bool": np.int32,
    "unsigned char": np.uint8, "unsigned short": np.uint16, "unsigned int": np.uint32,
    "unsigned long": np.uint64, "unsigned": np.uint32,
}
_QUALIFIERS = {"const", "__const", "restrict", "__restrict", "volatile", "__private", "private"}
_ADDRESS_SPACES = {"__global", "global", "__constant", "constant", "__local", "local"}


def _scalar_arg(where: str, typ: str, value: Any) -> Any:
    """``value`` as the C type ``typ`` of a scalar parameter: a number of that kind (an
    integral number for an integer type), within its range; otherwise a ``TypeError`` or
    ``ValueError`` naming the argument."""
    dtype: Any = _SCALAR_TYPES.get(typ)
    if dtype is None:           # a type of the user's own (a struct, a vector): as given
        return value
    where += " is an" if typ[0] in "aeiou" else " is a"
    if isinstance(value, (str, bytes)) or not isinstance(value, (numbers.Number, np.generic)):
        raise TypeError(f"{where} {typ}: pass a number, not {value!r}")
    if np.dtype(dtype).kind in "iu":
        if not isinstance(value, (numbers.Integral, np.integer, np.bool_)):
            if not (isinstance(value, (numbers.Real, np.floating)) and float(value).is_integer()):
                raise TypeError(f"{where} {typ}: pass a whole number, not {value!r}")
        whole = int(value)
        info = np.iinfo(dtype)
        if not info.min <= whole <= info.max:
            raise ValueError(f"{where} {typ}: {whole} is outside its range "
                             f"[{info.min}, {info.max}]")
        return dtype(whole)
    if isinstance(value, (complex, np.complexfloating)):
        raise TypeError(f"{where} {typ}: pass a real number, not {value!r}")
    return dtype(value)


#: ``__kernel void`` before a kernel's name, with any ``__attribute__((...))`` between them
#: (``reqd_work_group_size``, ``vec_type_hint``)
_KERNEL_HEAD = (r"(?:__kernel|\bkernel)\s+(?:__attribute__\s*\(\([^;{]*?\)\)\s*)*void\s+"
                r"(?:__attribute__\s*\(\([^;{]*?\)\)\s*)*")


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


#: the preprocessor lines that define a macro, take one back, or save and restore one
_MACRO_LINE = re.compile(r'^[ \t]*#[ \t]*(?:(define|undef)[ \t]+([A-Za-z_]\w*)(\()?'
                         r'|pragma[ \t]+(push_macro|pop_macro)[ \t]*\([ \t]*"([A-Za-z_]\w*)"'
                         r'[ \t]*\))', re.M)


@functools.lru_cache(maxsize=32)
def _program_macros(src: ProgramSource) -> dict[str, tuple[bool, str, int]]:
    """The macros that the library's part of the program ``src`` (every part but the last, the
    kernel's own code) leaves defined for the kernel's code: their names, each with whether it
    is function-like and the file and line of its ``#define``.

    The ``#define``, ``#undef`` and ``#pragma push_macro``/``pop_macro`` lines are followed in
    order; conditionals are not evaluated, so a macro that either branch of an ``#ifdef``
    defines counts (``OPENCL.cl``'s ``log(x)``, defined with ``DASKCL_NOINLINE`` only, is
    restored by ``OPENCL_END.cl`` in the same way, and does not)."""
    lines = src.text.splitlines(keepends=True)
    end = src.line_map[-1][0] - 2 if src.line_map else len(lines)   # the kernel's // ==== line
    text = re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: "\n" * m[0].count("\n"),
                  "".join(lines[:end]), flags=re.S)             # comments out, the lines kept
    defined: dict[str, tuple[bool, int]] = {}
    saved: dict[str, list[tuple[bool, int] | None]] = {}
    line, pos = 1, 0
    for m in _MACRO_LINE.finditer(text):
        line, pos = line + text.count("\n", pos, m.start()), m.start()
        if m[1] == "define":
            defined[m[2]] = (m[3] is not None, line)
        elif m[1] == "undef":
            defined.pop(m[2], None)
        elif m[4] == "push_macro":
            saved.setdefault(m[5], []).append(defined.get(m[5]))
        elif saved.get(m[5]):
            before = saved[m[5]].pop()
            if before is None:
                defined.pop(m[5], None)
            else:
                defined[m[5]] = before
    return {name: (function_like, *src.locate(at))
            for name, (function_like, at) in defined.items()}


def _refuse_macro_name(name: str, src: ProgramSource) -> None:
    """A ``ValueError`` where the library's part of ``src`` leaves a macro named ``name`` (the
    kernel's) defined: the preprocessor would replace the kernel's name in its definition, and
    the build fail in a way that names neither (``pnorm``, ``dnorm`` and ``qnorm`` of
    ``OPENCL_END.cl``, function-like: "too few arguments provided to function-like macro
    invocation")."""
    found = _program_macros(src).get(name)
    if found is None:
        return
    function_like, file, line = found
    raise ValueError(f"RawKernel {name}: the library defines {name} as a "
                     f"{'function-like ' if function_like else ''}macro ({file}, line {line}), "
                     "which the preprocessor would put in place of the kernel's name: name the "
                     f"kernel otherwise (e.g. {name}_kernel)")


def _param_decls(code: str, name: str) -> list[str]:
    """The parameter declarations of ``__kernel void name(...)`` in ``code``, comments
    removed, one string each; a ``ValueError`` where ``code`` defines no kernel ``name``."""
    text = _strip_comments(code)
    m = re.search(_KERNEL_HEAD + re.escape(name) + r"\s*\(", text)
    if m is None:
        found = re.findall(_KERNEL_HEAD + r"([A-Za-z_]\w*)", text)
        raise ValueError(f"the source defines no __kernel void {name}(...); it defines "
                         + (", ".join(found) or "no kernel"))
    depth, j = 1, m.end()
    while depth and j < len(text):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        j += 1
    return [p.strip() for p in text[m.end(): j - 1].split(",") if p.strip()]


def _param(decl: str) -> tuple[str, str, bool]:
    """One parameter declaration as :func:`kernel_params` gives it.

    A pointer's data are read-only where a ``const`` qualifies what it points to, written
    before the ``*`` (``const double *x``, ``double const *x``, ``__global const double *x``),
    or where it points to ``__constant`` memory.  A ``const`` after the ``*`` (``double *const
    x``) makes the pointer itself constant, not the data: the kernel may write them."""
    words = decl.replace("*", " * ").split()
    if "*" in words:
        pointee = words[:words.index("*")]
        local = any(w in ("__local", "local") for w in pointee)
        const = any(w in ("const", "__const", "__constant", "constant") for w in pointee)
        typ = " ".join(w for w in pointee if w not in _QUALIFIERS and w not in _ADDRESS_SPACES)
        return ("local" if local else "global", typ, const)
    const = "const" in words or "__const" in words
    return ("scalar", " ".join(w for w in words[:-1] if w not in _QUALIFIERS), const)


def _param_name(decl: str) -> str:
    """The name a parameter declaration gives its parameter (empty where it names none)."""
    words = decl.replace("*", " * ").split()
    last = words[-1] if len(words) > 1 else ""
    if (not re.fullmatch(r"[A-Za-z_]\w*", last) or last in _QUALIFIERS
            or last in _ADDRESS_SPACES or last in _SCALAR_TYPES):
        return ""
    return last


def kernel_params(code: str, name: str) -> list[tuple[str, str, bool]]:
    """The parameters of ``__kernel void name(...)`` in ``code``: ``(kind, type, const)`` each,
    kind ``"global"`` (a pointer to global or constant memory), ``"local"`` or ``"scalar"``;
    type the scalar's C type, or the type a pointer points to; const, for a pointer, whether
    the data it points to are read-only (a ``const`` before the ``*``, or ``__constant``
    memory; not a ``const`` pointer, ``double *const x``, through which the kernel writes), for
    a scalar whether it is declared ``const``.

    Raises
    ------
    ValueError
        ``code`` defines no kernel ``name``.
    """
    return [_param(d) for d in _param_decls(code, name)]


class RawKernel(Kernel):
    """A ``__kernel`` source of your own, assembled with the library units it names and
    launched with explicit sizes.

    The source opens with a comment block naming what it calls, as the library's own kernels
    do: ``// @depends_nmath: pnorm, qbeta`` (Mathlib functions, by symbol or unit) and
    ``// @depends: my_unit`` (units of your own library tree); such a line anywhere else (below
    a ``#pragma``) is a ``ValueError``.  The program is layer 0 and 1 of
    the library, the minimal set of units those names need (in dependency order), and the
    source.

    Parameters
    ----------
    code : str
        OpenCL C defining ``__kernel void name(...)`` (and anything else it needs).
    name : str
        The kernel to launch.
    library, options
        As for :class:`Kernel`.

    Examples
    --------
    >>> import numpy as np
    >>> from daskcl import RawKernel
    >>> k = RawKernel('''// @depends_nmath: pnorm
    ... __kernel void tail(__global const double *x, __global double *y, const long n)
    ... {
    ...     const long i = get_global_id(0);
    ...     if (i < n) y[i] = pnorm5(x[i], 0.0, 1.0, 0, 1);     // log upper tail
    ... }''', "tail")
    >>> y = np.empty(2)
    >>> _ = k((2,), None, np.array([0.0, 40.0]), y, 2)
    >>> float(y[1])                                       # R: pnorm(40, lower=FALSE, log=TRUE)
    -804.6084420137538
    """

    _annotated = True

    def __init__(self, code: str, name: str, *, library: LibraryRoots = None,
                 options: str | Sequence[str] = ()) -> None:
        super().__init__(name, library=library, options=options)
        if not isinstance(code, str):
            raise TypeError(f"RawKernel {name}: the source must be a string of OpenCL C")
        self.code = code
        lines = code.lstrip().splitlines()
        opening = next((k for k, ln in enumerate(lines) if not ln.strip().startswith("//")),
                       len(lines))
        late = next((ln.strip() for ln in lines[opening:]
                     if re.match(r"\s*//\s*@depends(_nmath)?\s*:", ln)), None)
        if late is not None:
            raise ValueError(f"RawKernel {name}: {late!r} is read only in the comment block "
                             "that opens the source (its first lines, each a // comment): "
                             "move it there, before any #pragma or code")
        tags = parse_annotations(code.lstrip())
        self.depends = tuple(tags.get("depends_nmath", ())) + tuple(tags.get("depends", ()))
        decls = _param_decls(code, name)
        self.params = [_param(d) for d in decls]
        #: the parameters' names in the source, in messages (empty where one has none)
        self.param_names = tuple(_param_name(d) for d in decls)
        # the macros of the library every program has (OPENCL.cl, the shims, OPENCL_END.cl),
        # before anything is built; source() checks those of the units the kernel names too
        _refuse_macro_name(name, self.library.program_source((), "", f"<RawKernel {name}>"))

    def __reduce__(self) -> str | tuple[Any, ...]:
        return (_raw, (self.code, self.name, self.library_roots, self.options))

    def source(self, variant: Any = None) -> ProgramSource:
        src = self.library.program_source(self.depends, self.code, f"<RawKernel {self.name}>")
        _refuse_macro_name(self.name, src)
        return src

    def __call__(self, global_size: Sequence[int] | int, local_size: Sequence[int] | int | None,
                 *args: Any, wait: bool = True) -> Any:
        """Launch the kernel over ``global_size`` work-items in work-groups of ``local_size``
        (``None``: the driver's choice): each a whole number or a tuple of one to three, the
        global sizes multiples of the local ones (OpenCL 1.2).

        ``args`` follow the kernel's parameters: for a pointer, a ``pyopencl.array.Array`` or
        ``pyopencl.Buffer`` of the bound device's context (used in place), or a NumPy array
        (copied to the device, and back into the same array after the launch unless the
        parameter's data are ``const`` or the array is read-only); for ``__local`` pointers a
        ``pyopencl.LocalMemory``; for a scalar, a number (converted to the parameter's C type).

        A device array must be C-contiguous (a kernel reads a pointer's elements one after
        another); a view at an offset into its buffer (``out[3:]``) is passed as a sub-buffer
        where the offset is a multiple of the device's base address alignment
        (``CL_DEVICE_MEM_BASE_ADDR_ALIGN``), and otherwise through a buffer of its own: the
        view's contents are copied into it on the device before the launch, and, unless the
        parameter's data are ``const``, back into the view after it.

        Returns the launch's event; with ``wait`` (the default) the launch has finished and
        NumPy arrays hold the results.  A device array's pending work on another queue of the
        context (its ``events``) is waited for first, and the launch (for a view copied
        through a buffer of its own, the copy back) is added to the ``events`` of each one
        whose data are not ``const``, so that pyopencl's operations on any queue wait for it.
        """
        import pyopencl as cl

        if len(args) != len(self.params):
            raise TypeError(f"RawKernel {self.name}: takes {len(self.params)} arguments, "
                            f"got {len(args)}")
        bound = _device.current()
        queue = bound.queue
        kargs: list[Any] = []
        back: list[tuple[Any, np.ndarray]] = []
        arrays: list[tuple[Any, bool]] = []     # the device arrays, and whether const
        #: device-array views passed through a buffer of their own: (array, buffer, const)
        staged: list[tuple[Any, Any, bool]] = []
        for k, ((kind, typ, const), pname, a) in enumerate(zip(self.params, self.param_names,
                                                                args)):
            where = f"RawKernel {self.name}: argument {k}" + (f" ({pname})" if pname else "")
            if kind == "scalar":
                kargs.append(_scalar_arg(where, typ, a))
            elif kind == "local":
                kargs.append(a)
            elif _transfer.is_device_array(a):
                buf, own = _device_array_arg(where, typ, a, bound)
                if own:
                    staged.append((a, buf, const))
                kargs.append(buf)
                arrays.append((a, const))
            elif isinstance(a, cl.MemoryObjectHolder):
                if a.context != bound.context:
                    raise _another_context(where, f"a pyopencl {type(a).__name__}", bound)
                kargs.append(a)
            elif isinstance(a, np.ndarray):
                kargs.append(_host_array_arg(where, typ, a, bound))
                if not const and a.flags.writeable and a.size:
                    back.append((kargs[-1], a))
            else:
                raise TypeError(f"{where} is a pointer: pass a NumPy array, a pyopencl array "
                                f"or buffer, not {type(a).__name__}")
        gsize = _sizes(f"RawKernel {self.name}: global_size", global_size)
        lsize = None if local_size is None else _sizes(f"RawKernel {self.name}: local_size",
                                                        local_size)
        if lsize is not None and len(lsize) != len(gsize):
            raise ValueError(f"RawKernel {self.name}: local_size {lsize} and global_size "
                             f"{gsize} must have as many dimensions")
        _transfer.after_other_queues(queue, [a for a, _ in arrays])
        ev = self._launch(bound, kargs, gsize, lsize, staged)
        for a, const in arrays:
            if not const and not any(a is s for s, _, _ in staged):
                a.add_event(ev)  # what the array's contents now wait on, as pyopencl records it
        _copy_back(queue, ev, staged, back)
        if wait or back:
            queue.finish()
        return ev

    def _launch(self, bound: _device.BoundDevice, kargs: list[Any], gsize: tuple[int, ...],
                lsize: tuple[int, ...] | None, staged: list[tuple[Any, Any, bool]]) -> Any:
        """Enqueue the launch of :meth:`__call__` (after the staged views' copies into their
        own buffers); its event."""
        import pyopencl as cl

        queue = bound.queue
        kernel, lock = self.program().kernel(self.name)
        # a staged view's contents, in its own buffer: what the kernel reads, and what it
        # leaves of an output where it writes only some elements
        copied = [cl.enqueue_copy(queue, buf, a.base_data, src_offset=a.offset,
                                  byte_count=a.nbytes) for a, buf, _ in staged]
        with lock:
            _set_args(kernel, *kargs)
            try:
                return cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize,
                                                  wait_for=copied or None)
            except cl.LogicError as e:
                if e.code != cl.status_code.INVALID_WORK_GROUP_SIZE or lsize is None:
                    raise
                raise ValueError(
                    f"RawKernel {self.name}: the device refused work-groups of {lsize} over "
                    f"{gsize} work-items (at most {bound.device.max_work_group_size} "
                    "work-items a group, and on OpenCL 1.2 each global size a multiple of the "
                    "local one): round global_size up to a multiple of local_size and test the "
                    "index in the kernel (if (i < n)), or pass local_size=None") from None


def _device_array_arg(where: str, typ: str, a: Any, bound: _device.BoundDevice
                      ) -> tuple[Any, bool]:
    """The buffer a pointer parameter of type ``typ`` takes for the device array ``a``, and
    whether it is a buffer of its own (a view whose offset is not aligned: its contents are
    copied in before the launch)."""
    import pyopencl as cl

    want = _SCALAR_TYPES.get(typ)       # None: a type of the user's own, not checked
    if a.context != bound.context:
        raise _another_context(where, "a pyopencl array", bound)
    if want is not None and a.dtype != np.dtype(want):
        raise TypeError(f"{where} points to {typ}: the pyopencl array has dtype "
                        f"{a.dtype}; pass one of dtype {np.dtype(want)} "
                        f"(a.astype(numpy.{np.dtype(want).name}))")
    if not a.flags.c_contiguous:
        raise ValueError(f"{where}: the pyopencl array is not C-contiguous "
                         f"(strides {a.strides}); a kernel reads a pointer's "
                         "elements one after another: pass a C-contiguous array "
                         "(a contiguous copy, or the array the view is of, with "
                         "the kernel indexing it by the view's offset and strides)")
    buf = _view_buffer(where, a, bound)
    if buf is None:
        return cl.Buffer(bound.context, cl.mem_flags.READ_WRITE, a.nbytes), True
    return buf, False


def _host_array_arg(where: str, typ: str, a: np.ndarray, bound: _device.BoundDevice) -> Any:
    """A new buffer holding the NumPy array ``a`` for a pointer parameter of type ``typ``."""
    import pyopencl as cl

    want = _SCALAR_TYPES.get(typ)
    if want is not None and a.dtype != np.dtype(want):
        if a.dtype.newbyteorder("=") != np.dtype(want):
            raise TypeError(f"{where} points to {typ}: the NumPy array has dtype "
                            f"{a.dtype}; pass one of dtype {np.dtype(want)} "
                            f"(a.astype(numpy.{np.dtype(want).name}))")
        host = np.ascontiguousarray(a, dtype=want)     # byte order swapped
    else:
        host = np.ascontiguousarray(a)
    mf = cl.mem_flags
    return cl.Buffer(bound.context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                     hostbuf=host if host.size else np.zeros(1, host.dtype))


def _copy_back(queue: Any, ev: Any, staged: list[tuple[Any, Any, bool]],
               back: list[tuple[Any, np.ndarray]]) -> None:
    """After the launch ``ev``: the staged views' results into the views, and the NumPy
    arrays' (not waited for)."""
    import pyopencl as cl

    for a, buf, const in staged:
        if not const:       # the results into the view, after the launch
            a.add_event(cl.enqueue_copy(queue, a.base_data, buf, dst_offset=a.offset,
                                        byte_count=a.nbytes, wait_for=[ev]))
    for buf, a in back:
        if a.flags.c_contiguous and a.dtype.isnative:
            cl.enqueue_copy(queue, a, buf)
        else:
            tmp = np.empty(a.shape, a.dtype.newbyteorder("="))
            cl.enqueue_copy(queue, tmp, buf)
            a[...] = tmp


def _another_context(where: str, what: str, bound: _device.BoundDevice) -> ValueError:
    """The error for a pointer argument of another OpenCL context than the bound device's
    (daskcl never copies between contexts silently), worded as ``_transfer.device_operand``
    words it for the elementwise kernels."""
    return ValueError(f"{where} is {what} of another OpenCL context; daskcl computes on "
                      f"{bound.info.describe()} in its own context "
                      "(daskcl.runtime.device.current().context): create it there, or pass "
                      "a NumPy array to copy it through the host")


def _view_buffer(where: str, a: Any, bound: _device.BoundDevice) -> Any:
    """The buffer a kernel's pointer takes for the C-contiguous device array ``a``, or
    ``None`` where ``a`` is to be passed through a buffer of its own (staged).

    A kernel argument is a buffer and cannot carry an offset (pyopencl's ``Array.data`` of a
    view at one raises ``ArrayHasOffsetError``): a view at offset 0, or holding nothing, is
    its buffer; one at an offset a multiple of the device's base address alignment is a
    sub-buffer of it, which the device addresses in place; OpenCL refuses sub-buffers at
    other offsets, and of sub-buffers, so those views are staged."""
    import pyopencl as cl

    base = a.base_data
    if a.offset == 0 or a.size == 0:
        return base
    if not isinstance(base, cl.MemoryObjectHolder):
        raise ValueError(f"{where}: the pyopencl array is a view at offset {a.offset} of "
                         f"memory that is not an OpenCL buffer ({type(base).__name__}); pass "
                         "the array it is a view of, or a copy")
    if a.offset % max(1, bound.device.mem_base_addr_align // 8):
        return None
    if not isinstance(base, cl.Buffer):     # a block of a pool (pyopencl.tools.MemoryPool)
        base = cl.Buffer.from_int_ptr(base.int_ptr, retain=True)
    if base.associated_memobject is not None:
        return None
    return base.get_sub_region(a.offset, a.nbytes)


def _sizes(where: str, value: Any) -> tuple[int, ...]:
    """A launch's ``global_size`` or ``local_size`` (a whole number, or one to three of them)
    as a tuple of ints; otherwise a ``TypeError`` or ``ValueError`` naming it."""
    items = (list(value) if isinstance(value, (tuple, list))
             or (isinstance(value, np.ndarray) and value.ndim == 1) else [value])
    if not 1 <= len(items) <= 3 or not all(
            isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))
            for v in items):
        raise TypeError(f"{where} must be a whole number or a tuple of one to three, not "
                        f"{value!r}")
    if any(int(v) < 0 for v in items):
        raise ValueError(f"{where} may not be negative: {value!r}")
    return tuple(int(v) for v in items)


def _raw(code: str, name: str, roots: tuple[str, ...] | None, options: tuple[str, ...]
         ) -> RawKernel:
    return RawKernel(code, name, library=roots, options=options)
