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

import inspect
import numbers
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BuildError
from ..runtime import device as _device
from ..runtime import program as _program
from ..runtime.library import Library, ProgramSource, get_library, parse_annotations
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
    options : sequence of str
        Further build options (``-D`` macros, ``-cl-*`` flags).
    """

    #: whether the source names the library units it calls in its opening comment
    #: (``// @depends_nmath:``), as a :class:`RawKernel`'s does, rather than having them found
    _annotated: bool = False
    #: what ``inspect.signature`` reports (the functions of :mod:`daskcl.nmath` set it)
    __signature__: inspect.Signature
    __name__: str
    __qualname__: str

    def __init__(self, name: str, *, library: LibraryRoots = None,
                 options: Sequence[str] = ()) -> None:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"a kernel's name must be a C identifier, not {name!r}")
        self.name = name
        self.library_roots = library_roots(library)
        self.options = tuple(str(o) for o in options)

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
            hint = _undeclared_hint(self.library, e.log, annotated=self._annotated)
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


#: a compiler's report of a name it does not know: clang's (PoCL's), and NVIDIA's, whose
#: front end lets an undeclared function through and whose assembler then fails on it
_UNDECLARED = re.compile(r"(?:undeclared identifier|implicit declaration of function|"
                         r"undeclared function|Unresolved extern function) '([A-Za-z_]\w*)'")


def _undeclared_hint(lib: Library, log: str, *, annotated: bool) -> str:
    """What to do about each name a build ``log`` reports undeclared, one line each: a name of
    ``lib`` that the program lacks is to be named in the opening comment of an ``annotated``
    source; another name gets the library's names closest to it ("did you mean ...").  Empty
    where the log reports none."""
    lines: list[str] = []
    for name in dict.fromkeys(_UNDECLARED.findall(log)):
        stem = lib.stem_of(name)
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


def kernel_params(code: str, name: str) -> list[tuple[str, str, bool]]:
    """The parameters of ``__kernel void name(...)`` in ``code``: ``(kind, type, const)`` each,
    kind ``"global"`` (a pointer to global or constant memory), ``"local"`` or ``"scalar"``;
    type the scalar's C type, or the type a pointer points to.

    Raises
    ------
    ValueError
        ``code`` defines no kernel ``name``.
    """
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
    params = [p.strip() for p in text[m.end(): j - 1].split(",") if p.strip()]
    out: list[tuple[str, str, bool]] = []
    for p in params:
        words = p.replace("*", " * ").split()
        const = "const" in words or "__const" in words
        if "*" in words:
            local = any(w in ("__local", "local") for w in words)
            pointee = " ".join(w for w in words[:words.index("*")]
                               if w not in _QUALIFIERS and w not in _ADDRESS_SPACES)
            out.append(("local" if local else "global", pointee, const))
            continue
        typ = " ".join(w for w in words[:-1] if w not in _QUALIFIERS)
        out.append(("scalar", typ, const))
    return out


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

    Example
    -------
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
                 options: Sequence[str] = ()) -> None:
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
        self.params = kernel_params(code, name)

    def __reduce__(self) -> str | tuple[Any, ...]:
        return (_raw, (self.code, self.name, self.library_roots, self.options))

    def source(self, variant: Any = None) -> ProgramSource:
        return self.library.program_source(self.depends, self.code, f"<RawKernel {self.name}>")

    def __call__(self, global_size: Sequence[int] | int, local_size: Sequence[int] | int | None,
                 *args: Any, wait: bool = True) -> Any:
        """Launch the kernel over ``global_size`` work-items in work-groups of ``local_size``
        (``None``: the driver's choice): each a whole number or a tuple of one to three, the
        global sizes multiples of the local ones (OpenCL 1.2).

        ``args`` follow the kernel's parameters: for a pointer, a ``pyopencl.array.Array`` or
        ``pyopencl.Buffer`` on the bound device (used in place), or a NumPy array (copied to the
        device, and back into the same array after the launch unless the parameter is ``const``
        or the array is read-only); for ``__local`` pointers a ``pyopencl.LocalMemory``; for a
        scalar, a number (converted to the parameter's C type).

        Returns the launch's event; with ``wait`` (the default) the launch has finished and
        NumPy arrays hold the results.  A device array's pending work on another queue of the
        context (its ``events``) is waited for first, and the launch is added to the ``events``
        of each non-``const`` one, so that pyopencl's operations on any queue wait for it.
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
        mf = cl.mem_flags
        for k, ((kind, typ, const), a) in enumerate(zip(self.params, args)):
            where = f"RawKernel {self.name}: argument {k}"
            want = _SCALAR_TYPES.get(typ)       # None: a type of the user's own, not checked
            if kind == "scalar":
                kargs.append(_scalar_arg(where, typ, a))
            elif kind == "local":
                kargs.append(a)
            elif _transfer.is_device_array(a):
                if a.context != bound.context:
                    raise ValueError(f"{where} is a pyopencl array of another OpenCL context")
                if want is not None and a.dtype != np.dtype(want):
                    raise TypeError(f"{where} points to {typ}: the pyopencl array has dtype "
                                    f"{a.dtype}; pass one of dtype {np.dtype(want)} "
                                    f"(a.astype(numpy.{np.dtype(want).name}))")
                if not a.flags.c_contiguous:
                    raise ValueError(f"{where}: the pyopencl array is not C-contiguous "
                                     f"(strides {a.strides}); a kernel reads its buffer in "
                                     "order: pass a contiguous copy")
                kargs.append(a.base_data if a.offset == 0 else a.data)
                arrays.append((a, const))
            elif isinstance(a, cl.MemoryObjectHolder):
                kargs.append(a)
            elif isinstance(a, np.ndarray):
                if want is not None and a.dtype != np.dtype(want):
                    if a.dtype.newbyteorder("=") != np.dtype(want):
                        raise TypeError(f"{where} points to {typ}: the NumPy array has dtype "
                                        f"{a.dtype}; pass one of dtype {np.dtype(want)} "
                                        f"(a.astype(numpy.{np.dtype(want).name}))")
                    host = np.ascontiguousarray(a, dtype=want)     # byte order swapped
                else:
                    host = np.ascontiguousarray(a)
                buf = cl.Buffer(bound.context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                hostbuf=host if host.size else np.zeros(1, host.dtype))
                kargs.append(buf)
                if not const and a.flags.writeable and a.size:
                    back.append((buf, a))
            else:
                raise TypeError(f"{where} is a pointer: pass a NumPy array, a pyopencl array "
                                f"or buffer, not {type(a).__name__}")
        gsize = _sizes(f"RawKernel {self.name}: global_size", global_size)
        lsize = None if local_size is None else _sizes(f"RawKernel {self.name}: local_size",
                                                        local_size)
        if lsize is not None and len(lsize) != len(gsize):
            raise ValueError(f"RawKernel {self.name}: local_size {lsize} and global_size "
                             f"{gsize} must have as many dimensions")
        kernel, lock = self.program().kernel(self.name)
        _transfer.after_other_queues(queue, [a for a, _ in arrays])
        with lock:
            _set_args(kernel, *kargs)
            try:
                ev = cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize)
            except cl.LogicError as e:
                if e.code != cl.status_code.INVALID_WORK_GROUP_SIZE or lsize is None:
                    raise
                raise ValueError(
                    f"RawKernel {self.name}: the device refused work-groups of {lsize} over "
                    f"{gsize} work-items (at most {bound.device.max_work_group_size} "
                    "work-items a group, and on OpenCL 1.2 each global size a multiple of the "
                    "local one): round global_size up to a multiple of local_size and test the "
                    "index in the kernel (if (i < n)), or pass local_size=None") from None
        for a, const in arrays:
            if not const:       # what the array's contents now wait on, as pyopencl records it
                a.add_event(ev)
        for buf, a in back:
            if a.flags.c_contiguous and a.dtype.isnative:
                cl.enqueue_copy(queue, a, buf)
            else:
                tmp = np.empty(a.shape, a.dtype.newbyteorder("="))
                cl.enqueue_copy(queue, tmp, buf)
                a[...] = tmp
        if wait or back:
            queue.finish()
        return ev


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
