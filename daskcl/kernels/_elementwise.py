# SPDX-License-Identifier: GPL-2.0-or-later
"""Elementwise kernels: :class:`ElementwiseKernel`, the kind of every :mod:`daskcl.nmath`
function, every random generator and your own fused kernels.

An elementwise kernel has double inputs (arrays or scalars, broadcast as NumPy broadcasts
them), optional ``int`` arguments (scalars), one or several double outputs, and an operation:
C statements that compute the outputs of one element from its inputs, calling any function of
the library.  The library units the operation (and its preamble) call are found from its
identifiers through the dependency index, so the program holds only their closure; the kernel
is generated from ``cl/kernels/elementwise.cl`` (:mod:`._codegen`).

NumPy broadcasting without materialising broadcast inputs: every array input goes to the device
as it is (made C-contiguous float64, its own size) and is read through its own element strides
over the broadcast shape (stride 0 along broadcast axes); scalars travel as kernel arguments.
Axes that every input traverses contiguously are collapsed first; one program serves up to four
collapsed axes (:mod:`._call`).  This module plans a call's launches (:func:`pieces`, of at
most :func:`._plan.launch_elements`, on CPU devices sized by the kernel's measured cost),
which :mod:`._transfer` streams through the device; device arrays (``pyopencl.array.Array``) in give
device arrays out, and dask arrays in give a lazy dask array out (:mod:`._dask`).  Calls that
need no broadcasting take a prepared launch (:mod:`._launch`), which also says when R's
warnings of calls on device arrays appear.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .. import config
from ..errors import ConfigError, DeviceError, LibraryError, outside_stacklevel, warn_r
from ..runtime import device as _device
from ..runtime import program as _program
from ..runtime.library import Library, ProgramSource
from ..runtime.program import set_args as _set_args
from . import _launch, _plan, _transfer
from ._call import (
    Call,
    Operand,
    _c_strides,
    _compact,
    _device_strides,
    _fits_together,
    _shape_of,
    called_as,
    called_name,
    collapse_axes,
    flag_value,
    is_dask_array,
    real_array,
    warning_name,
)
from ._codegen import (
    DEFAULT_BINNING,
    Binning,
    ElementwiseDef,
    _params,
    binning,
    check_code,
    kernel_parts,
    program_source,
    table_calls,
)
from ._counts import table_program, tables_for
from ._dask import _dask_call
from ._kernel import Kernel, LibraryRoots, _program_macros
from ._table import NCLASS

__all__ = [
    "DEFAULT_BINNING", "Binning", "Call", "ElementwiseDef", "ElementwiseKernel", "Operand",
    "binning", "called_as", "called_name", "collapse_axes", "flag_value", "is_dask_array",
    "real_array", "table_calls", "warning_name",
]

#: guards the kernels' sets of inlined programs to build later (ElementwiseKernel._tier_up)
_TIER_LOCK = threading.Lock()
#: collapsed axes one program handles (more: a program for that many)
DIMS = 4


class ElementwiseKernel(Kernel):
    """An elementwise kernel of your own, calling any function of the library.

    Parameters
    ----------
    in_params : str
        The inputs, ``"double alpha, double df, double ncp"``: double inputs are NumPy,
        dask or device arrays or scalars, broadcast against each other as NumPy broadcasts;
        ``int name`` items are integer scalars (flags).
    out_params : str
        The outputs, ``"double power"`` or several, ``"double lo, double hi"``.
    operation : str
        C statements that set the outputs of one element from its inputs (all named as
        declared; ``i`` is the element's flat index in the C order of the whole result, a
        dask array's too).  Any Mathlib function may be called with
        Rmath.h's arguments (``qt(p, df, lower_tail, log_p)``): the units it needs are found
        from the identifiers and assembled with their dependencies, nothing else.
    name : str
        The kernel's name (a C identifier): in messages, warnings and the program's kernel.
    preamble : str, optional
        C definitions (helper functions) placed before the kernel; its calls into the library
        are found as the operation's are.
    library : path or sequence of paths, optional
        Library roots besides or instead of the shipped one (:class:`daskcl.Kernel`).
    options : sequence of str
        Further build options.

    The kernel is called with its arguments in declaration order, by position or by name
    (``power(0.05, 18, ncp=3.0)``).  Calling it with NumPy arrays or scalars returns NumPy
    float64 arrays of the broadcast shape (a tuple for several outputs); a dask array among the
    inputs gives lazy dask arrays of its chunks; a ``pyopencl.array.Array`` among them gives
    device arrays (host inputs are uploaded, nothing comes back).  As for :mod:`daskcl.nmath`, elements with a NaN
    result from non-NaN inputs are counted and one ``RuntimeWarning`` per call says how many
    (on device arrays at the next wait: :func:`daskcl.synchronize`).

    Examples
    --------
    The power of a two-sided t test, fused into one kernel:

    >>> import numpy as np
    >>> from daskcl import ElementwiseKernel
    >>> power = ElementwiseKernel(
    ...     "double alpha, double df, double ncp", "double power",
    ...     '''double c = qt(alpha / 2, df, 0, 0);
    ...        power = pnt(c, df, ncp, 0, 0) + pnt(-c, df, ncp, 1, 0);''',
    ...     name="ttest_power")
    >>> round(float(power(0.05, 18, 3.0)), 12)    # R: power.t.test(10, 3 / sqrt(5), strict = TRUE)
    0.809706936963
    """

    #: work-items per work-group of the plain kernel on GPUs
    gpu_wg: int = 256
    #: whether the kernel runs faster with the library routines inlined, so that where they
    #: are built out of line first (``noinline`` ``tiered``: GPUs) its inlined program is built
    #: in the background and used once there (:meth:`program`); set for the
    #: functions of :data:`daskcl.kernels._nmath_function.INLINE_FASTER`
    tier_up: bool = False

    def __init__(self, in_params: str | Sequence[str], out_params: str | Sequence[str],
                 operation: str, name: str, *, preamble: str = "",
                 library: LibraryRoots = None, options: Sequence[str] = ()) -> None:
        super().__init__(name, library=library, options=options)
        ins = _params(in_params, "inputs", name, ("double", "int"))
        outs = _params(out_params, "outputs", name, ("double",))
        if not outs:
            raise ValueError(f"ElementwiseKernel {name}: it needs at least one output")
        names = [n for _, n in ins + outs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"ElementwiseKernel {name}: {', '.join(dup)} named twice")
        if not isinstance(operation, str) or not operation.strip():
            raise ValueError(f"ElementwiseKernel {name}: the operation must be C statements")
        check_code(name, "operation", operation, statements=True)
        if preamble:
            check_code(name, "preamble", preamble, statements=False)
        self.in_params, self.out_params = in_params, out_params
        self._order = [(t, n) for t, n in ins]
        inputs = tuple(n for t, n in ins if t == "double")
        self._setup(ElementwiseDef(
            name=name, inputs=inputs, outputs=tuple(n for _, n in outs),
            operation=operation, ints=tuple(n for t, n in ins if t == "int"),
            preamble=preamble, tables=table_calls(name, operation, preamble, inputs)))

    def warm(self) -> None:
        """Build (or load) the programs the bound device uses, ahead of the first call: the
        kernel's, and the count tables' where the operation calls a Wilcoxon or signed-rank
        function (the tables themselves depend on the arguments and are built by the call).
        A kernel that tiers up starts its inlined program's build in the background
        (:func:`daskcl.runtime.program.wait_background` waits for it)."""
        super().warm()
        if self.definition.tables:
            table_program()
        self._tier_up()

    def program(self, variant: Any = None) -> _program.BuiltProgram:
        """The program of ``variant`` on the bound device: from memory, the disk cache, or
        built now.  Where the library routines are built out of line first and the kernel
        tiers up (:attr:`tier_up`, :func:`daskcl.runtime.program.noinline_mode`), the inlined
        program once this process has it, and until then the out-of-line one, with the inlined
        one loaded or built in the background: the same bits either way."""
        if not (self.tier_up
                and _program.noinline_mode(_device.current().info.type) == "tiered"):
            return super().program(variant)
        source, options = self.source(variant), self.build_options(variant)
        fast = _program.in_memory(source, options, inlined=True)
        looked = (source, options, _program.memory_generation())
        if fast is None and looked not in self._tier_looked:
            # a process on a warm cache takes the inlined program from disk at once (the
            # out-of-line one is not loaded at all); looked for once per program
            self._tier_looked.add(looked)
            fast = _program.stored(source, options, inlined=True)
        if fast is not None:
            return fast
        with _TIER_LOCK:
            self._tier_later.add(variant)
        return _program.build(source, options)

    def _tier_up(self) -> None:
        """Start the background builds of the inlined programs that calls asked for
        (:meth:`program`).  Started once a call's result is there, not before: NVIDIA's OpenCL
        builds one program of a process at a time, so an inlined build begun first held back the
        out-of-line one, and the first result with it."""
        with _TIER_LOCK:
            later = list(self._tier_later)
            self._tier_later.clear()
        for variant in later:
            _program.build_later(self.source(variant), self.build_options(variant),
                                 inlined=True)

    def _setup(self, d: ElementwiseDef) -> None:
        self.definition = d
        #: the inputs of a call :func:`._launch.fast` may take (0: it takes none)
        self._fast_kind = (len(d.inputs) or -1) if not (d.tables or d.strided) \
            and len(d.outputs) == 1 else 0
        #: the variants whose inlined programs calls asked for (:meth:`program`, :meth:`_tier_up`)
        self._tier_later: set[Any] = set()
        #: the programs whose inlined build was looked for in the disk cache (:meth:`program`)
        self._tier_looked: set[tuple[ProgramSource, tuple[str, ...], int]] = set()
        #: the inputs' names in messages
        self.input_names: tuple[str, ...] = d.inputs
        self._depends: tuple[str, ...] | None = d.depends
        #: what was found and assembled from the library ``_from`` (the object: a tree edited
        #: since is read again by ``get_library``, a new object, under the same roots)
        self._from: Library | None = None
        self._found: dict[tuple[Any, ...], tuple[str, ...]] = {}
        self._sources: dict[tuple[Any, ...], ProgramSource] = {}
        if not hasattr(self, "_order"):
            self._order = [("double", n) for n in d.inputs] + [("int", n) for n in d.ints]

    def __reduce__(self) -> str | tuple[Any, ...]:
        return (_elementwise, (self.in_params, self.out_params, self.definition.operation,
                               self.name, self.definition.preamble, self.library_roots,
                               self.options))

    # -- the program --------------------------------------------------------------------------

    @property
    def depends(self) -> tuple[str, ...]:
        """The library names the operation and preamble call (their closure is assembled)."""
        if self._depends is not None:
            return self._depends
        lib = self._library_now()
        hit = self._found.get(lib.roots)
        if hit is None:
            d = self.definition
            found = lib.find_names(d.preamble + "\n" + d.operation)
            hit = tuple(dict.fromkeys([*found, *(f"{f}_tab" for f, _ in d.tables)]))
            self._found[lib.roots] = hit
        return hit

    def _library_now(self) -> Library:
        """:attr:`library`, forgetting what was found and assembled from another object: a
        unit file edited since (``get_library`` reads the tree again) is what the next call
        builds, as a new kernel's would be."""
        lib = self.library
        if lib is not self._from:
            with _TIER_LOCK:
                if lib is not self._from:
                    self._found, self._sources, self._from = {}, {}, lib
        return lib

    def binning(self) -> Binning | None:
        """How launches are sorted by class on the bound device (:func:`binning`)."""
        return binning(self.definition.classify, _device.current().info.type)

    def _variant(self, ndim: int) -> tuple[int, Binning | None]:
        return (max(DIMS, ndim), self.binning())

    def variants(self) -> list[Any]:
        return [self._variant(1)]

    def source(self, variant: Any = None) -> ProgramSource:
        """The assembled program (``variant``: ``(axes, binning)``; the bound device's usual
        one by default)."""
        ndims, bins = self._variant(1) if variant is None else variant
        lib = self._library_now()          # the config key ``library`` may change it
        # the config key ``accuracy`` changes which units a program holds (Library.program_source)
        key = (lib.roots, ndims, bins, config.get("accuracy"))
        hit = self._sources.get(key)
        if hit is None:
            depends = self.depends
            self._refuse_tree_macros(lib, depends)
            parts = kernel_parts(replace(self.definition, depends=depends), ndims, bins)
            hit = self._sources[key] = program_source(lib, depends, parts)
        return hit

    def _refuse_tree_macros(self, lib: Library, depends: tuple[str, ...]) -> None:
        """A ``ValueError`` where an argument is named like an object-like macro that a unit
        of a tree the kernel uses leaves defined (the shipped library's are refused when the
        kernel is made): the preprocessor would replace the argument's name in the template,
        and the build fail on a line of neither."""
        if not lib.trees:
            return
        macros = _program_macros(lib.program_source(depends, "", f"<{self.name}>"))
        tree_files = {u.name for u in lib.units.values() if u.tree is not None}
        for _, arg in self._order + [("double", n) for n in self.definition.outputs]:
            found = macros.get(arg)
            if found is not None and not found[0] and found[1] in tree_files:
                raise ValueError(f"ElementwiseKernel {self.name}: {arg!r} is a macro of "
                                 f"{found[1]} (line {found[2]}): the preprocessor would "
                                 "replace the argument's name: choose another name")

    def plain_source(self) -> ProgramSource:
        """The program without sorted launches, whatever the device (what a sweep's identity
        hashes: the same on every device)."""
        return self.source((DIMS, None))

    def build_options(self, variant: Any = None) -> tuple[str, ...]:
        key = self._variant(1) if variant is None else variant
        bins = key[1]
        extra = bins.options(_device.current()) if bins else ()
        return self.options + extra

    # -- calls ----------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = [n for _, n in self._order]
        if kwargs:
            args = self._bind(names, args, kwargs)
        if len(args) != len(self._order):
            raise TypeError(f"{self.name}: takes {len(self._order)} arguments "
                            f"({', '.join(names)}), got {len(args)}")
        doubles = [a for (t, _), a in zip(self._order, args) if t == "double"]
        ints = [self._int(n, a) for (t, n), a in zip(self._order, args) if t == "int"]
        return self.apply(doubles, ints)

    def _bind(self, names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[Any, ...]:
        """The arguments in declaration order, given by position and by name."""
        listed = ", ".join(names)
        if len(args) > len(names):
            raise TypeError(f"{self.name}: takes {len(names)} arguments ({listed}), got "
                            f"{len(args)} by position")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{self.name}: no argument named {k!r}; its arguments are "
                                f"({listed})")
            if k in bound:
                raise TypeError(f"{self.name}: argument {k!r} given by position and by name")
            bound[k] = v
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(f"{self.name}: missing argument(s) {', '.join(missing)} (its "
                            f"arguments are ({listed}))")
        return tuple(bound[n] for n in names)

    def _int(self, name: str, value: Any) -> int:
        if not isinstance(value, (bool, np.bool_, int, np.integer)):
            raise TypeError(f"{self.name}: {name} is an int argument; got {value!r}")
        if not -2**31 <= int(value) < 2**31:
            raise ValueError(f"{self.name}: {name} is an int argument (32 bits); {int(value)} "
                             "is outside its range [-2147483648, 2147483647]")
        return int(value)

    def apply(self, inputs: Sequence[Any], ints: Sequence[int] = ()) -> Any:
        """Evaluate on ``inputs`` (the double inputs in order) and ``ints``: NumPy, dask or
        device results as :class:`ElementwiseKernel` describes (one output: the array; several:
        a tuple)."""
        fast = _launch.fast(self, inputs, ints)
        if fast is not _launch.NO:
            return fast[0] if len(fast) == 1 else tuple(fast)
        if any(is_dask_array(v) for v in inputs):
            checked = []
            for n, v in zip(self.input_names, inputs):
                if _transfer.is_device_array(v):
                    raise TypeError(
                        f"{self.name}: argument {n!r} is a pyopencl array among dask arrays; a "
                        "dask graph's chunks are computed on its workers' devices from host "
                        f"memory: pass {n}.get(), or compute the dask arrays first")
                if is_dask_array(v):
                    if np.dtype(v.dtype).kind not in "biuf":
                        raise TypeError(f"{self.name}: argument {n!r} must be real numbers, "
                                        f"got a dask array of dtype {v.dtype}")
                    checked.append(v)
                else:
                    checked.append(real_array(self.name, n, v))
            self._check_dask_shapes(checked)
            return _dask_call(self, tuple(checked), tuple(ints))
        results = self.compute(inputs, ints)
        return results[0] if len(results) == 1 else tuple(results)

    def _check_dask_shapes(self, args: Sequence[Any]) -> None:
        """NumPy's broadcasting rule for a dask call, with this kernel's message.  Unknown
        (NaN) lengths pass."""
        shapes = [tuple(np.shape(a)) for a in args]
        ndim = max((len(sh) for sh in shapes), default=0)
        for k in range(1, ndim + 1):
            sizes = {sh[-k] for sh in shapes if len(sh) >= k}
            known = {int(d) for d in sizes
                     if not (isinstance(d, float) and math.isnan(d)) and d != 1}
            if len(known) > 1:
                listed = ", ".join(f"{n} {sh}" for n, sh, a in
                                   zip(self.input_names, shapes, args) if np.ndim(a))
                raise ValueError(f"{self.name}: the shapes of the arguments do not broadcast: "
                                 f"{listed}")

    def compute(self, inputs: Sequence[Any], ints: Sequence[int] = (),
                shape: tuple[int, ...] | None = None, device: bool = False,
                counter: tuple[int, int, tuple[int, ...] | None] | None = None) -> list[Any]:
        """The outputs for NumPy or device ``inputs`` (no dask): a list of NumPy arrays (0-d
        results as NumPy scalars), or of device arrays when an input is one or ``device``.
        ``shape`` and ``counter`` as for :meth:`prepare`.  R's warnings: see :mod:`._launch`."""
        try:
            if shape is None and not device and counter is None:
                fast = _launch.fast(self, inputs, ints)
                if fast is not _launch.NO:
                    return list(fast)
            call = self.prepare(inputs, ints, shape, counter)
            self.extend(call)
            to_device = device or call.on_device
            if to_device:
                outs, counts = self._run_device(call)
                if counts is not None:
                    self.warn(counts)
            else:
                earlier = _launch.take_counts(_device.current())
                outs, counts = self._run_host(call)
                _launch.raise_counts(earlier)
                self.warn(counts)
        except (ConfigError, DeviceError, LibraryError) as exc:
            # a device or library the configuration names that cannot be used: raised here,
            # by the call, with its message only (not the frames that bound and built)
            raise exc.with_traceback(None) from None
        if self._tier_later:
            self._tier_up()
        if not to_device and not call.shape:
            return [o[()] for o in outs]
        return outs

    def _operand(self, name: str, value: Any, bound: _device.BoundDevice) -> Operand:
        if _transfer.is_device_array(value):
            return Operand(dev=_transfer.device_operand(self.name, name, value, bound))
        try:
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
                    value, (bool, np.bool_)):
                return Operand(scalar=float(value))
            arr = real_array(self.name, name, value)
        except OverflowError:     # a Python int beyond the doubles (10**400)
            raise OverflowError(f"{self.name}: argument {name!r} holds an integer too large "
                                "for a double (beyond 1.8e308); pass float('inf') for "
                                "infinity") from None
        if arr.ndim == 0:
            return Operand(scalar=float(arr))
        return Operand(host=arr)

    def prepare(self, inputs: Sequence[Any], ints: Sequence[int] = (),
                shape: tuple[int, ...] | None = None,
                counter: tuple[int, int, tuple[int, ...] | None] | None = None) -> Call:
        """Check and broadcast the inputs of one call (no device work).  ``shape``: the result's
        shape, to which every input must broadcast (default: their broadcast shape);
        ``counter``: ``(seed, first counter, counter strides)`` of a random generator (the
        counter strides over ``shape``; ``None``: C order over ``shape``)."""
        bound = _device.current()
        ops = [self._operand(n, v, bound) for n, v in zip(self.input_names, inputs)]
        shapes = [_shape_of(o) for o in ops if o.is_array]
        try:
            bshape = np.broadcast_shapes(*shapes)
            if shape is not None and np.broadcast_shapes(bshape, shape) != tuple(shape):
                raise ValueError
        except ValueError:
            listed = ", ".join(f"{n} {_shape_of(o)}" for n, o in zip(self.input_names, ops)
                               if o.is_array)
            target = f" to the shape {tuple(shape)}" if shape is not None else ""
            if _fits_together([*shapes, *([tuple(shape)] if shape is not None else [])]):
                raise ValueError(f"{self.name}: the arguments ({listed}) broadcast to a result "
                                 "too large for NumPy (more elements than an index of 64 bits "
                                 "holds)") from None
            raise ValueError(f"{self.name}: the shapes of the arguments do not broadcast"
                             f"{target}: {listed}") from None
        out_shape = tuple(shape) if shape is not None else tuple(bshape)
        full: list[tuple[int, ...]] = []
        for o in ops:
            if o.host is not None:
                o.host = _compact(o.host)
                full.append(tuple(s // 8 for s in np.broadcast_to(o.host, out_shape).strides))
            elif o.dev is not None:
                full.append(_device_strides(o.dev, out_shape))
            else:
                full.append((0,) * len(out_shape))
        cst = (0,) * len(out_shape)
        if counter is None and self.definition.index:     # i: the flat index in C order
            counter = (0, 0, None)
        if counter is not None:
            cst = counter[2] if counter[2] is not None else _c_strides(out_shape)
        dims, strides = collapse_axes(out_shape, [*full, cst])
        for o, st in zip(ops, strides):
            o.strides = st
        call = Call(out_shape, dims, ops, list(ints))
        if counter is not None:
            call.seed, call.cbase = counter[0], counter[1]
            call.cstrides = strides[-1]
        return call

    def extend(self, call: Call) -> None:
        """Set ``call.extra`` (further kernel arguments) and ``call.cap``: for kernels with
        per-call device data (count tables) or launch limits (costly generators).  A kernel
        whose operation calls the Wilcoxon or signed-rank functions gets the count tables of
        the parameters of this call."""
        if not self.definition.tables or call.size == 0:
            return
        extra: list[Any] = []
        for family, idx in self.definition.tables:
            params = [call.operands[j].scalar if call.operands[j].array is None
                      else call.operands[j].array for j in idx]
            t = tables_for(self.name, family, params)
            extra += [t.tab, t.keys, t.offs, np.int32(t.nkeys)]
        call.extra = tuple(extra)

    # -- launching ----------------------------------------------------------------------------

    def _args(self, call: Call, ndims: int, dims: tuple[int, ...], offsets: list[int],
              buffers: list[Any], coff: int) -> list[Any]:
        """The kernel's arguments after ``dk_base`` for a launch over ``dims`` (its inputs at
        element ``offsets[j]`` of ``buffers[j]``)."""
        args: list[Any] = [np.int32(len(dims))]
        args += [np.int64(dims[a]) if a < len(dims) else np.int64(1) for a in range(1, ndims)]
        for o, buf, off in zip(call.operands, buffers, offsets):
            args += [np.int32(o.is_array), np.float64(0.0 if o.scalar is None else o.scalar), buf,
                     np.int64(off)]   # a scalar -0.0 stays -0.0 (R: pexp(0.5, -Inf) is -Inf)
            args += [np.int64(s) for s in o.strides] + [np.int64(0)] * (ndims - len(o.strides))
        if self.definition.strided:
            args += [np.uint64(call.seed), np.uint64((call.cbase + coff) % (1 << 64))]
            args += [np.int64(s) for s in call.cstrides]
            args += [np.int64(0)] * (ndims - len(call.cstrides))
        args += [np.int32(v) for v in call.ints]
        return args + list(call.extra)

    def _enqueue(self, call: Call, dims: tuple[int, ...], offsets: list[int],
                 buffers: list[Any], coff: int, outs: list[Any], ooff: int, base: int,
                 status: Any, queue: Any) -> Any:
        """Enqueue the kernels of one launch: ``dims`` elements starting at flat index ``base``
        of the call, outputs written from element ``ooff`` of ``outs``; returns the events of
        its kernels, the last one's last (keep them until it is done: releasing the event of
        a kernel still running waits for it on NVIDIA, holding the interpreter's lock)."""
        import pyopencl as cl

        bound = _device.current()
        ndims, bins = self._variant(len(call.dims))
        program = _launch.prepared(self, (ndims, bins)).program
        kname = self.definition.kernel_name
        kernel, lock = program.kernel(kname)
        n = math.prod(dims)
        head = [np.int64(n), status, *outs, np.int64(ooff), np.int64(base)]
        tail = self._args(call, ndims, dims, offsets, buffers, coff)
        if not bins:
            local: tuple[int, ...] | None = None
            gsize = n
            if bound.info.type == "GPU":
                local = (self.gpu_wg,)
                gsize = -(-n // self.gpu_wg) * self.gpu_wg
            with lock:
                _set_args(kernel, *head, *tail)
                return [cl.enqueue_nd_range_kernel(queue, kernel, (gsize,), local)]
        # sorted launch: class, scan, place, compute (n <= SORT_LAUNCH: see _cap), enqueued
        # together: the scratch buffers are the queue's, and another thread's launch on the
        # same queue must not come between them
        wg, block = bins.work_group, bins.work_group * bins.elements_per_item
        nblocks = -(-n // block)
        k_class, lock_class = program.kernel(kname + "_class")
        k_scan, lock_scan = program.kernel(kname + "_scan")
        k_place, lock_place = program.kernel(kname + "_place")
        with _plan.sort_lock(bound, queue):
            cls, counts, perm = _plan.sort_scratch(bound, queue, n, nblocks)
            events = []
            with lock_class:
                _set_args(k_class, np.int32(n), np.int32(bins.elements_per_item), cls, counts,
                          np.int32(nblocks), np.int64(base), *tail)
                events.append(cl.enqueue_nd_range_kernel(queue, k_class, (nblocks * wg,), (wg,)))
            with lock_scan:
                _set_args(k_scan, np.int32(NCLASS * nblocks), counts)
                events.append(cl.enqueue_nd_range_kernel(queue, k_scan, (wg,), (wg,)))
            with lock_place:
                _set_args(k_place, np.int32(n), np.int32(bins.elements_per_item), cls, counts,
                          np.int32(nblocks), perm)
                events.append(cl.enqueue_nd_range_kernel(queue, k_place, (nblocks * wg,), (wg,)))
            with lock:
                _set_args(kernel, *head, *tail, perm)
                events.append(cl.enqueue_nd_range_kernel(queue, kernel, (-(-n // wg) * wg,),
                                                         (wg,)))
            return events

    def _cap(self, call: Call, bound: _device.BoundDevice, streamed: bool) -> int:
        cap = _plan.launch_elements(bound)
        if streamed and _transfer.mode(bound) != "host":
            cap = min(cap, _transfer.slab(call.size))
        if self._variant(len(call.dims))[1] is not None:
            cap = min(cap, _plan.SORT_LAUNCH)
        if call.cap is not None:
            cap = min(cap, call.cap)
        return max(1, cap)

    def _run_host(self, call: Call) -> tuple[list[np.ndarray], np.ndarray]:
        """NumPy in, NumPy out, through :func:`._transfer.stream`."""
        bound = _device.current()
        nout = len(self.definition.outputs)
        results = [_transfer.result_array(bound, call.shape) for _ in range(nout)]
        if call.size == 0:
            return results, np.zeros(_transfer.STATUS_COUNTS, dtype=np.int32)
        status = _transfer.status_buffer(bound)
        cpu = bound.info.type == "CPU"
        # streamed: large host arrays (every host array on CPU devices, which read them in place)
        streamed: list[np.ndarray | None] = [
            o.host.reshape(-1) if o.host is not None and (
                cpu or o.host.nbytes > min(_plan.RESIDENT_BYTES, _plan.max_alloc(bound)))
            else None for o in call.operands]
        resident: list[Any] = [
            _transfer.upload(bound, o.host.reshape(-1)) if o.host is not None and s is None
            else None for o, s in zip(call.operands, streamed)]
        dummy = _plan.dummy(bound)
        strides = [o.strides for o in call.operands] + [call.cstrides or (0,) * len(call.dims)]
        fixed = self._cap(call, bound, True)
        cap: int | Callable[[], int] = fixed
        if _transfer.mode(bound) == "host":
            # each piece is done before the next: sized by the kernel's measured cost
            cap = lambda: min(fixed, _plan.cost_cap(self, bound))     # noqa: E731
        elif _plan.measured_cap(self, bound) is not None:
            # pieces planned ahead (they overlap on the slots): by the pace known now
            cap = fixed = min(fixed, _plan.cost_cap(self, bound))

        def plan_of() -> Iterator[_transfer.Piece]:
            for start, dims, offs in _plan.pieces(call.dims, strides, cap):
                n = math.prod(dims)
                ins = [None if a is None else
                       (offs[j], offs[j] + _plan.span(dims, call.operands[j].strides))
                       for j, a in enumerate(streamed)]
                yield _transfer.Piece(ins, [(start, start + n)] * nout, (start, dims, offs))

        plan: Iterator[_transfer.Piece] | list[_transfer.Piece] = (
            plan_of() if callable(cap) else list(plan_of()))

        def launch(p: _transfer.Piece, dev_in: list[Any], dev_out: list[Any], queue: Any) -> Any:
            start, dims, offs = p.arg
            bufs, boffs = [], []
            for j, _o in enumerate(call.operands):
                if dev_in[j] is not None:
                    bufs.append(dev_in[j])
                    boffs.append(0)
                elif resident[j] is not None:
                    bufs.append(resident[j])
                    boffs.append(offs[j])
                else:
                    bufs.append(dummy)
                    boffs.append(0)
            return self._enqueue(call, dims, boffs, bufs, offs[-1], dev_out, 0, start,
                                 status.buffer, queue)

        _transfer.stream(bound, plan, streamed, [r.reshape(-1) for r in results], launch,
                         status=status, timed=lambda n, t: _plan.record_cost(self, bound, n, t))
        # every slot is drained: the launches are done
        counts = status.read(bound.queue)
        _transfer.release_status(bound, status)
        return results, counts

    def _run_device(self, call: Call) -> tuple[list[Any], np.ndarray | None]:
        """Device arrays out (:meth:`enqueue`); R's counts read now (``warnings``
        ``immediate``) or left to the next wait (``None``, see :mod:`._launch`)."""
        import pyopencl.array as cla

        bound = _device.current()
        queue = bound.queue
        pool = _transfer.device_pool(bound)
        outs = [cla.empty(queue, call.shape, np.float64, allocator=pool)
                for _ in self.definition.outputs]
        if call.size == 0:
            return outs, np.zeros(_transfer.STATUS_COUNTS, dtype=np.int32)
        import pyopencl as cl

        def launches(status: _transfer.Status, own: bool) -> list[Any]:
            try:
                return self.enqueue(call, outs, status.buffer)
            except cl.MemoryError:
                # the pool's allocations are deferred (see device_pool): a full device shows
                # at the launch; the blocks the pool keeps go back to the device, once
                if not pool.held_blocks:
                    raise
                if own:
                    status.read(queue)    # what launches before the failure counted: again
                pool.free_held()
                return self.enqueue(call, outs, status.buffer)

        if _launch.deferring():
            _launch.defer(bound, self, lambda status: launches(status, False))
            return outs, None
        status = _transfer.status_buffer(bound)
        events = launches(status, True)
        # a blocking read on the (in-order) queue: the launches before it are done when it
        # returns, with no second wait for the queue to drain; their events go after it
        counts = status.read(queue)
        _transfer.release_status(bound, status)
        del events
        return outs, counts

    def enqueue(self, call: Call, outs: Sequence[Any], status: Any,
                queue: Any = None) -> list[Any]:
        """Enqueue a prepared call's launches on the device and return their events, without
        waiting: inputs on the device are read in place, host inputs uploaded whole first;
        ``outs`` are float64 device arrays of the call's shape (one per output), ``status``
        a buffer of two ints that counts NaNs produced and non-integer arguments.  Launches
        hold at most :func:`launch_elements` elements."""
        import pyopencl as cl

        bound = _device.current()
        queue = bound.queue if queue is None else queue
        bufs, base_off = [], []
        for o in call.operands:
            if o.dev is not None:
                bufs.append(o.dev.buffer)
                base_off.append(o.dev.offset)
            elif o.host is not None:
                if o.host.nbytes > _plan.max_alloc(bound):
                    raise ValueError(f"{self.name}: a host input of {o.host.nbytes} bytes exceeds "
                                     "the device's largest buffer; pass NumPy arrays only (the "
                                     "host path streams them) or upload it in parts")
                bufs.append(_transfer.upload(bound, o.host.reshape(-1)))
                base_off.append(0)
            else:
                bufs.append(_plan.dummy(bound))
                base_off.append(0)
        strides = [o.strides for o in call.operands] + [call.cstrides or (0,) * len(call.dims)]
        out_bufs = [o.base_data for o in outs]
        ooffs = {o.offset // 8 for o in outs}
        if len(ooffs) != 1 or any(o.shape != call.shape or not o.flags.c_contiguous
                                  or o.dtype != np.float64 for o in outs):
            raise ValueError(f"{self.name}: outputs must be C-contiguous float64 device arrays "
                             f"of shape {call.shape} at one offset")
        ooff = ooffs.pop()
        _transfer.after_other_queues(
            queue, [*(o.dev.array for o in call.operands if o.dev is not None), *outs])
        events: list[Any] = []
        for start, dims, offs in _plan.pieces(call.dims, strides, self._cap(call, bound, False)):
            events.extend(self._enqueue(call, dims, [b + o for b, o in zip(base_off, offs)], bufs,
                                        offs[-1], out_bufs, ooff + start, start, status, queue))
        if not events:
            events.append(cl.enqueue_marker(queue))
        for o in outs:          # what the outputs' contents now wait on, as pyopencl records it
            o.add_event(events[-1])
        return events

    def warn(self, counts: np.ndarray, stacklevel: int | None = None) -> None:
        """One ``RuntimeWarning`` per kind of count: NaNs produced, non-integer arguments; at
        the caller's line outside daskcl (through R's keywords, ``pchisq(..., ncp=1)``, the call
        goes on to another function, a frame deeper), unless ``stacklevel`` says otherwise,
        and named by the function called (:func:`called_as`)."""
        if stacklevel is None:
            stacklevel = outside_stacklevel()
        name = warning_name(self.name)
        if counts[0]:
            warn_r(f"{name}: {counts[0]} NaN(s) produced", stacklevel=stacklevel)
        if len(counts) > 1 and counts[1]:
            warn_r(f"{name}: {counts[1]} non-integer {'/'.join(self._nonint_names())}",
                   stacklevel=stacklevel)
        if len(counts) > 2 and counts[2] and self.definition.range_warn:
            warn_r(f"{name}: {counts[2]} {self.definition.range_warn[1]}", stacklevel=stacklevel)

    def _nonint_names(self) -> list[str]:
        return list(self.definition.nonint)


def _elementwise(in_params: Any, out_params: Any, operation: str, name: str, preamble: str,
                 roots: tuple[str, ...] | None, options: tuple[str, ...]) -> ElementwiseKernel:
    return ElementwiseKernel(in_params, out_params, operation, name, preamble=preamble,
                             library=roots, options=options)
