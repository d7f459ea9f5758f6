# SPDX-License-Identifier: GPL-2.0-or-later
"""The program of an elementwise kernel: its definition (:class:`ElementwiseDef`), the checks of
its code, the count tables it reads, its sorted launches (:class:`Binning`) and its text,
generated from ``cl/kernels/elementwise.cl`` for a number of collapsed axes."""

from __future__ import annotations

import functools
import keyword
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

from .. import config
from ..runtime import device as _device
from ..runtime.library import Library, ProgramSource
from ._table import NCLASS

__all__ = ["DEFAULT_BINNING", "Binning", "ElementwiseDef", "binning", "check_code",
           "kernel_parts", "program_source", "table_calls"]

_TEMPLATE = "kernels/elementwise.cl"


# -- sorted launches ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Binning:
    """Launches sorted by class (``cl/kernels/elementwise.cl``): the elements of a launch are
    counted by class in blocks of ``work_group * elements_per_item``, their indices sorted by
    class, and computed in that order by work-groups of ``work_group``.

    Parameters
    ----------
    work_group : int
        Work-items per work-group of the counting, placing and computing kernels (1 to 1024).
    elements_per_item : int
        Elements each work-item of the counting and placing kernels takes (1 to 1024).
    max_registers : int
        On NVIDIA devices the program is built with at most this many registers per work-item
        (``-cl-nv-maxrregcount``), so that more warps share a multiprocessor; 0: the compiler's
        choice, else 16 to 255 (NVIDIA's limits).  Ignored elsewhere.
    """

    work_group: int
    elements_per_item: int = 1
    max_registers: int = 0

    def __post_init__(self) -> None:
        if not (1 <= self.work_group <= 1024 and 1 <= self.elements_per_item <= 1024):
            raise ValueError(f"binning: the work-group size must be 1 to 1024 and the elements "
                             f"per work-item 1 to 1024, not {self.work_group} x "
                             f"{self.elements_per_item}")
        if self.max_registers not in (0, *range(16, 256)):
            raise ValueError(f"binning: the registers per work-item must be 0 (the compiler's "
                             f"choice) or 16 to 255, not {self.max_registers}")

    @classmethod
    def parse(cls, text: str) -> Binning:
        """``"WG"``, ``"WGxEPI"`` or ``"WGxEPIrMAXRREG"``."""
        m = re.fullmatch(r"(\d+)(?:x(\d+))?(?:r(\d+))?", text.strip())
        if not m:
            raise ValueError(f"not WGxEPI or WGxEPIrMAXRREG: {text!r}")
        return cls(work_group=int(m.group(1)), elements_per_item=int(m.group(2) or 1),
                   max_registers=int(m.group(3) or 0))

    def options(self, bound: _device.BoundDevice) -> tuple[str, ...]:
        """Build options on ``bound``'s device."""
        if self.max_registers and bound.nv_compiler_options:
            return (f"-cl-nv-maxrregcount={self.max_registers}",)
        return ()


#: the sorted launch on GPUs (tuned by benchmarks/tune_nmath.py)
DEFAULT_BINNING = Binning(work_group=256, elements_per_item=32, max_registers=64)


def binning(classify: str, device_type: str) -> Binning | None:
    """How a kernel with the class expression ``classify`` sorts its launches on a device of
    ``device_type`` (``None``: not at all).  On by default for GPUs, where lanes of a warp run
    in lock-step; the config key ``binning`` (``DASKCL_BINNING``) overrides it: ``0`` off,
    ``1`` on for every device (PoCL too), or ``WGxEPIrN`` (:meth:`Binning.parse`) on every
    device."""
    if not classify:
        return None
    spec = config.get("binning")
    if spec == "0" or (spec == "auto" and device_type != "GPU"):
        return None
    if spec in ("auto", "1"):
        return DEFAULT_BINNING
    return Binning.parse(spec)


# -- the definition and its source -----------------------------------------------------------------


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = set(keyword.kwlist) | {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while", "half", "bool", "uint",
    "ulong", "uchar", "ushort", "i",
    # OpenCL C's keywords, qualifiers and types beyond C's
    "true", "false", "_Bool", "_Complex", "_Imaginary", "global", "__global", "local",
    "__local", "constant", "__constant", "private", "__private", "generic", "__generic",
    "kernel", "__kernel", "read_only", "__read_only", "write_only", "__write_only",
    "read_write", "__read_write", "uniform", "pipe", "vec_step", "size_t", "ptrdiff_t",
    "intptr_t", "uintptr_t", "image1d_t", "image1d_array_t", "image1d_buffer_t", "image2d_t",
    "image2d_array_t", "image2d_depth_t", "image2d_array_depth_t", "image3d_t", "sampler_t",
    "event_t", "queue_t", "ndrange_t", "clk_event_t", "reserve_id_t", "cl_mem_fence_flags",
    # what the generated kernel calls after the arguments are declared (its NaN counts)
    "isnan", "isfinite", "atomic_inc", "R_nonint",
}
#: OpenCL C's vector types (double2, int16, ...)
_VECTOR_TYPE = re.compile(r"(?:char|uchar|short|ushort|int|uint|long|ulong|float|double|half|bool)"
                          r"(?:2|3|4|8|16)")


#: OpenCL C's own macros (math constants, limits, ``INFINITY``, ``NAN``, ...)
_OPENCL_MACRO = re.compile(
    r"(M_|FLT_|DBL_|HALF_|CHAR_|SCHAR_|UCHAR_|SHRT_|USHRT_|INT_|UINT_|LONG_|ULONG_|CLK_|CL_|"
    r"FP_|__)\w*|MAXFLOAT|HUGE_VALF?|INFINITY|NAN|NULL")


@functools.cache
def _shipped_object_macros() -> frozenset[str]:
    """The object-like macros the shipped library ``#define``s (``ML_NAN``, ``R_D__0``,
    ``M_LN_SQRT_2PI``, ...), which the preprocessor would replace wherever a kernel's code
    names them (a function-like one, ``pnorm(...)``, only where it is called)."""
    from ..runtime.library import get_library

    lib = get_library()
    files = ["OPENCL.cl", "OPENCL_END.cl", _TEMPLATE,
             *(u.name for u in lib.units.values() if u.tree is None)]
    names: set[str] = set()
    for f in files:
        if (lib.root / f).is_file():
            names.update(re.findall(r"^\s*#\s*define\s+([A-Za-z_]\w*)(?![\w(])", lib.read(f),
                                    flags=re.M))
    return frozenset(names)


_C_TOKENS = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def check_code(kernel: str, what: str, text: str, *, statements: bool) -> None:
    """Mistakes in a kernel's ``operation`` or ``preamble`` that a compiler would report only
    inside the template around it: an unterminated comment, unbalanced braces or parentheses;
    and, in the operation (``statements``), a ``return``, which would leave the outputs
    unwritten."""
    code = _C_TOKENS.sub(" ", text)
    if "/*" in code:
        raise ValueError(f"ElementwiseKernel {kernel}: the {what} has a /* comment that is "
                         "not closed")
    for open_, close in ("{}", "()"):
        depth = 0
        for ch in code:
            depth += (ch == open_) - (ch == close)
            if depth < 0:
                break
        if depth:
            which = f"a {close} too many" if depth < 0 else f"an {open_} not closed"
            raise ValueError(f"ElementwiseKernel {kernel}: the {what} has unbalanced "
                             f"{open_}{close} ({which})")
    if statements and re.search(r"\breturn\b", code):
        raise ValueError(f"ElementwiseKernel {kernel}: the operation may not return (its "
                         "outputs are written after it): assign the outputs, and leave one "
                         "unassigned to give NaN")


def _params(spec: str | Sequence[str], what: str, kernel: str,
            types: tuple[str, ...]) -> list[tuple[str, str]]:
    """``"double a, double b"`` (or a sequence of such items) as ``[(type, name), ...]``."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[tuple[str, str]] = []
    for item in items:
        words = str(item).split()
        if not words:
            continue
        if len(words) != 2 or words[0] not in types:
            raise ValueError(
                f"ElementwiseKernel {kernel}: {what} are 'TYPE NAME' items separated by commas, "
                f"TYPE one of {', '.join(types)}; got {str(item).strip()!r}")
        typ, name = words
        if (not _IDENT.fullmatch(name) or name.startswith("dk_") or name in _RESERVED
                or _VECTOR_TYPE.fullmatch(name)):
            raise ValueError(f"ElementwiseKernel {kernel}: {name!r} cannot name an argument (a C "
                             "identifier not starting with dk_, not a keyword or type of OpenCL "
                             "C, not i, not a function the kernel around the operation calls)")
        if name in _shipped_object_macros() or _OPENCL_MACRO.fullmatch(name):
            raise ValueError(f"ElementwiseKernel {kernel}: {name!r} is a macro of OpenCL C or "
                             "of the library (the preprocessor would replace the argument's "
                             "name): choose another name")
        out.append((typ, name))
    return out


@dataclass(frozen=True)
class ElementwiseDef:
    """Everything an elementwise kernel's program is generated from (plain, picklable data).

    ``inputs`` are the double inputs, ``ints`` the int arguments (scalars), ``outputs`` the
    double outputs, by name; ``operation`` computes the outputs of element ``i`` from the
    inputs; ``depends`` names the library units it calls (``None``: found from its
    identifiers); ``classify`` is a C expression of an element's method for sorted launches;
    ``nonint`` the inputs counted for R's "non-integer" warning (from ``nonint_min`` on,
    where given; with ``nonint_nan`` also where the result is NaN, as pbinom's size, provided no
    input is NaN and every input after the first is finite; with ``nonint_abs`` more than 1e-7
    from an integer, as choose's k, not 1e-7 relative); ``range_warn`` a C condition on the
    inputs where R warns that they are out of range but gives a value, and the warning's words
    (bessel_j beyond x = 1e5); ``counter``: the element's
    Philox counter ``dk_oc`` and key ``dk_seed`` are available (random generators), whose NaN
    results are all counted, except where the C condition ``quiet_nan`` on the inputs holds
    (R computes such a NaN in R code, without a warning); ``tables``
    the count-table families the operation calls (the Wilcoxon and signed-rank functions) with the positions of
    the inputs that are their parameters.
    """

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    operation: str
    ints: tuple[str, ...] = ()
    preamble: str = ""
    depends: tuple[str, ...] | None = None
    classify: str = ""
    nonint: tuple[str, ...] = ()
    nonint_min: float | None = None
    nonint_nan: bool = False
    nonint_abs: bool = False
    range_warn: tuple[str, str] | None = None
    counter: bool = False
    quiet_nan: str = ""
    tables: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @property
    def kernel_name(self) -> str:
        return f"ew_{self.name}"

    @functools.cached_property
    def index(self) -> bool:
        """Whether the operation reads ``i``, the element's flat index in the C order of the
        whole result: then ``i`` is computed from the element's coordinates and strides (as a
        generator's counter is), so that a dask chunk's elements get their indices in the whole
        array, not in the chunk.  A kernel that does not read it pays nothing."""
        return not self.counter and re.search(r"(?<![\w.])i(?!\w)",
                                              _C_TOKENS.sub(" ", self.operation)) is not None

    @property
    def strided(self) -> bool:
        """Whether the kernel takes the counter's arguments (``dk_seed``, ``dk_offc`` and its
        strides): a generator's counter, or the index ``i`` (:attr:`index`)."""
        return self.counter or self.index


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line.lstrip() for line in text.splitlines() if line.strip())


def _index_code(d: ElementwiseDef, ndims: int) -> str:
    """Offsets ``dk_o<j>`` of each input (and ``dk_oc``, the counter) for element ``dk_k``."""
    nin = len(d.inputs)
    lines = ["long dk_r = dk_k;"] + [f"long dk_o{j} = dk_off{j};" for j in range(nin)]
    if d.strided:
        lines.append("ulong dk_oc = dk_offc;")
    for a in range(ndims - 1, 0, -1):
        body = [f"dk_o{j} += dk_q * dk_st{j}_{a};" for j in range(nin)]
        if d.strided:
            body.append(f"dk_oc += (ulong)(dk_q * dk_cst_{a});")
        lines.append(f"if (dk_nd > {a}) {{ const long dk_q = dk_r % dk_N{a}; dk_r /= dk_N{a}; "
                     + " ".join(body) + " }")
    lines += [f"dk_o{j} += dk_r * dk_st{j}_0;" for j in range(nin)]
    if d.strided:
        lines.append("dk_oc += (ulong)(dk_r * dk_cst_0);")
    return "\n".join(lines)


def _load_code(d: ElementwiseDef) -> str:
    return "\n".join(f"const double {n} = dk_m{j} ? dk_p{j}[dk_o{j}] : dk_s{j};"
                     for j, n in enumerate(d.inputs))


def _in_params(d: ElementwiseDef, ndims: int) -> str:
    ps = [", const int dk_nd"] + [f", const long dk_N{a}" for a in range(1, ndims)]
    for j in range(len(d.inputs)):
        ps.append(f",\n    const int dk_m{j}, const double dk_s{j}, "
                  f"__global const double *restrict dk_p{j}, const long dk_off{j}"
                  + "".join(f", const long dk_st{j}_{a}" for a in range(ndims)))
    if d.strided:
        ps.append(",\n    const ulong dk_seed, const ulong dk_offc"
                  + "".join(f", const long dk_cst_{a}" for a in range(ndims)))
    ps += [f", const int {n}" for n in d.ints]
    ps += [_TABLE_PARAMS[f] for f, _ in d.tables]
    return "".join(ps)


def kernel_parts(d: ElementwiseDef, ndims: int, bins: Binning | None
                 ) -> list[tuple[str, str]]:
    """The layer-3 text of ``d``'s program for ``ndims`` collapsed axes, as named parts (the
    preamble and the operation are parts of their own, so that a build log points into them)."""
    from ..runtime.library import get_library

    template = get_library().read(_TEMPLATE)
    out_params = "".join(f", __global double *restrict dk_out{k}" for k in range(len(d.outputs)))
    out_params += ", const long dk_ooff"
    any_out_nan = " || ".join(f"isnan({n})" for n in d.outputs)
    any_in_nan = " || ".join(f"isnan({n})" for n in d.inputs)
    # a generator counts every NaN it gives, as R's r functions warn "NAs produced" for a NaN
    # parameter too (rnorm(2, NaN)); the d, p and q functions only those of inputs not NaN
    quiet = f" && !({d.quiet_nan})" if d.quiet_nan else ""
    nan_check = (f"if (({any_out_nan}) && !({any_in_nan})) atomic_inc(dk_status);"
                 if d.inputs and not d.counter else
                 f"if (({any_out_nan}){quiet}) atomic_inc(dk_status);")
    # R warns "non-integer x" only where it computes a value (not where the result is NaN),
    # except where it warns and then returns NaN (pbinom's size: after its NaN and finiteness
    # checks of the parameters)
    computes = (f"!({any_out_nan})" if not d.nonint_nan else
                " && ".join([f"!isnan({d.inputs[0]})"]
                            + [f"isfinite({n})" for n in d.inputs[1:]]))
    # R_nonint: 1e-7 relative to the value; choose's k: 1e-7 absolute (nonint_abs)
    nonint = "\n".join(f"if ({computes} && !isnan({n}) && "
                       + (f"fabs({n} - rint({n})) > 1e-7" if d.nonint_abs else f"R_nonint({n})")
                       + ("" if d.nonint_min is None else f" && {n} >= {d.nonint_min!r}")
                       + ") atomic_inc(dk_status + 1);" for n in d.nonint)
    out_of_range = [f"if ({d.range_warn[0]}) atomic_inc(dk_status + 2);"] if d.range_warn else []
    # i: from the element's coordinates (dk_oc) where the operation reads it, else its place
    head = "\n".join(([_index_code(d, ndims), "const long i = (long)dk_oc;"] if d.index else
                      ["const long i = dk_base + dk_k;", _index_code(d, ndims)])
                     + [_load_code(d)]
                     + [f"double {n} = ML_NAN;" for n in d.outputs] + ["{"])
    tail = "\n".join(["}", nan_check, nonint, *out_of_range]
                     + [f"dk_out{k}[dk_ooff + dk_k] = {n};" for k, n in enumerate(d.outputs)])
    sort_wg = bins.work_group if bins else 0
    if sort_wg and not d.classify:
        raise ValueError(f"{d.name}: no class function to sort elements by")
    mark = "\x00OPERATION\x00"
    text = string.Template(template).substitute(
        DEPENDS=", ".join(d.depends or ()), NAME=d.kernel_name, DIMS=ndims,
        PREAMBLE="\x00PREAMBLE\x00", IN_PARAMS=_in_params(d, ndims), OUT_PARAMS=out_params,
        ELEMENT=_indent(head, 8) + "\n" + mark + "\n" + _indent(tail, 8),
        SORT=sort_wg, NCLASS=NCLASS,
        SORT_INDEX=_indent(_index_code(d, ndims), 12), SORT_LOADS=_indent(_load_code(d), 12),
        CLASS=d.classify if sort_wg else "0",
    )
    before, rest = text.split("\x00PREAMBLE\x00")
    before += "".join(_TABLE_MACROS[f] for f, _ in d.tables)
    op = d.operation if d.operation.endswith("\n") else d.operation + "\n"
    pre = d.preamble if not d.preamble or d.preamble.endswith("\n") else d.preamble + "\n"
    kname = f"{_TEMPLATE}[{d.name}, {ndims}d" + (f", sorted {sort_wg}]" if sort_wg else "]")
    parts = [(kname, before)]
    if pre:
        parts.append((f"<{d.name} preamble>", pre))
    # the operation stands in each kernel the template defines (the plain and the sorted one)
    chunks = rest.split(mark)
    for k, chunk in enumerate(chunks):
        if k:
            parts.append((f"<{d.name} operation>", op))
        parts.append((kname, chunk))
    return parts


def program_source(lib: Library, names: Sequence[str], parts: list[tuple[str, str]]
                   ) -> ProgramSource:
    """Layers 0 and 1, the minimal subset for ``names``, then the kernel ``parts``, each under
    its own ``// ==== name ====`` line as the library's files are (so that build-log lines map
    into the part they are in, and the program can be compiled in separate objects)."""
    first = parts[0][0]
    texts = [t if t.endswith("\n") else t + "\n" for _, t in parts]
    text = texts[0] + "".join(f"// ==== {name} ====\n{t}" for (name, _), t
                              in zip(parts[1:], texts[1:]))
    base = lib.program_source(tuple(names), text, first)
    start = next(s for s, n in base.line_map if n == first)
    line_map = list(base.line_map)
    line = start + texts[0].count("\n")
    for (name, _), t in zip(parts[1:], texts[1:]):
        line += 1                               # the part's header line
        line_map.append((line, name))
        line += t.count("\n")
    files = tuple(dict.fromkeys([*base.files, *(n for n, _ in parts)]))
    return ProgramSource(base.text, files, tuple(line_map))


#: the count-table functions: family, and the positions of its parameters among the arguments
_TABLE_FUNCTIONS = {
    "dwilcox": ("wilcox", (1, 2)), "pwilcox": ("wilcox", (1, 2)), "qwilcox": ("wilcox", (1, 2)),
    "dsignrank": ("signrank", (1,)), "psignrank": ("signrank", (1,)),
    "qsignrank": ("signrank", (1,)),
}
_TABLE_PARAMS = {
    f: (f",\n    __global const double *restrict dk_{f}_tab, "
        f"__global const double *restrict dk_{f}_keys, __global const long *restrict dk_{f}_offs, "
        f"const int dk_{f}_nkeys")
    for f in ("wilcox", "signrank")
}
_TABLE_MACROS = {
    f: "".join(
        f"#define {name}(...) {name}_tab(__VA_ARGS__, dk_{f}_tab, dk_{f}_keys, dk_{f}_offs, "
        f"dk_{f}_nkeys)\n"
        for name, (fam, _) in _TABLE_FUNCTIONS.items() if fam == f)
    for f in ("wilcox", "signrank")
}


def _call_args(text: str, start: int) -> list[str]:
    """The top-level arguments of the call whose opening parenthesis is at ``start``."""
    depth = 0
    args: list[str] = []
    cur: list[str] = []
    for ch in text[start:]:
        if ch == "(":
            depth += 1
            if depth == 1:
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
        elif ch == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    return args


def table_calls(name: str, operation: str, preamble: str, inputs: tuple[str, ...]
                ) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The count-table families the operation calls and, for each, the inputs holding their
    parameters.  Their tables are built before each launch from those inputs' values, so the
    parameters must be inputs of the kernel, named as they are, and the same in every call of
    a family; calls in the preamble cannot reach the tables."""
    found: dict[str, tuple[int, ...]] = {}
    pattern = re.compile(r"\b(" + "|".join(_TABLE_FUNCTIONS) + r")\s*\(")
    if pattern.search(re.sub(r"//[^\n]*|/\*.*?\*/", " ", preamble, flags=re.S)):
        raise ValueError(f"ElementwiseKernel {name}: the Wilcoxon and signed-rank functions "
                         "read count tables built for each call, and can be called in the "
                         "operation only, not in the preamble")
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", operation, flags=re.S)
    for m in pattern.finditer(text):
        fn = m.group(1)
        family, pos = _TABLE_FUNCTIONS[fn]
        args = _call_args(text, m.end() - 1)
        params = [args[k] if k < len(args) else "" for k in pos]
        if not all(p in inputs for p in params):
            raise ValueError(
                f"ElementwiseKernel {name}: {fn}'s parameter(s) {', '.join(params)} must each "
                f"be one of the kernel's double inputs ({', '.join(inputs)}): the count tables "
                "are built before the launch from their values")
        idx = tuple(inputs.index(p) for p in params)
        if found.setdefault(family, idx) != idx:
            raise ValueError(f"ElementwiseKernel {name}: every {family} call must take the same "
                             "inputs as its parameters")
    return tuple(sorted(found.items()))
