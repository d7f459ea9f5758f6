# SPDX-License-Identifier: GPL-2.0-or-later
"""The library's names that a piece of OpenCL C uses: calls and bare uses of its stems and
symbols, skipping comments, literals, members and OpenCL C's own built-ins."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping

from .units import Unit

__all__ = ["find_names", "object_symbols"]


def find_names(text: str, symbols: Mapping[str, str], stems: Collection[str],
               objects: Collection[str]) -> tuple[str, ...]:
    """The ``symbols`` and ``stems`` that ``text`` uses, in order of first use (the rules are
    :meth:`Library.find_names <daskcl.runtime.library.Library.find_names>`'s); ``objects``:
    the symbols that are not functions, which count bare."""
    found: dict[str, None] = {}
    for m in _TOKEN.finditer(_strip(text)):
        name, called = m.group(1), m.group(2) is not None
        if name is None or name in found:
            continue
        if name in symbols:
            if called or name in objects:
                found[name] = None
        elif called and name in stems and not _builtin(name):
            found[name] = None
    return tuple(found)


def object_symbols(units: Iterable[Unit], read: Callable[[str], str]) -> frozenset[str]:
    """The provided symbols that are not functions: a symbol is a function where its unit
    (its text by ``read(unit.name)``) defines it as a function-like macro (``#define s(``) or
    writes ``s(`` outside the preprocessor (its definition, a declaration, a call)."""
    out: set[str] = set()
    for unit in units:
        if not unit.provides:
            continue
        code = _strip(read(unit.name)).replace("\\\n", " ")
        lines = code.splitlines()
        pre = "\n".join(ln for ln in lines if ln.lstrip().startswith("#"))
        body = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#"))
        for sym in unit.provides:
            s = re.escape(sym)
            if not (re.search(rf"#\s*define\s+{s}\(", pre)
                    or re.search(rf"(?<![\w.]){s}\s*\(", body)):
                out.add(sym)
    return frozenset(out)


#: OpenCL C keywords, types, qualifiers and built-in functions (OpenCL C 1.2 and 2.0, 6.1-6.13)
_OPENCL_RESERVED = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while bool half uchar ushort uint ulong size_t ptrdiff_t
    intptr_t uintptr_t true false __global global __local local __constant constant __private
    private __generic generic __kernel kernel __read_only read_only __write_only write_only
    __read_write read_write __attribute__ uniform pipe
    acos acosh acospi asin asinh asinpi atan atan2 atanh atanpi atan2pi cbrt ceil copysign
    cos cosh cospi erfc erf exp exp2 exp10 expm1 fabs fdim floor fma fmax fmin fmod fract
    frexp hypot ilogb ldexp lgamma lgamma_r log log2 log10 log1p logb mad maxmag minmag modf
    nan nextafter pow pown powr remainder remquo rint rootn round rsqrt sin sincos sinh sinpi
    sqrt tan tanh tanpi tgamma trunc
    abs abs_diff add_sat hadd rhadd clamp clz ctz mad_hi mad_sat max min mul_hi rotate sub_sat
    upsample popcount mad24 mul24
    degrees mix radians step smoothstep sign
    cross dot distance length normalize fast_distance fast_length fast_normalize
    isequal isnotequal isgreater isgreaterequal isless islessequal islessgreater isfinite
    isinf isnan isnormal isordered isunordered signbit any all bitselect select
    barrier mem_fence read_mem_fence write_mem_fence work_group_barrier
    async_work_group_copy async_work_group_strided_copy wait_group_events prefetch
    get_work_dim get_global_size get_global_id get_local_size get_local_id get_num_groups
    get_group_id get_global_offset get_enqueued_local_size get_global_linear_id
    get_local_linear_id shuffle shuffle2 printf vec_step
""".split())
#: prefixes of families of built-ins (native_exp, half_exp, convert_int_rte, as_double, ...)
_OPENCL_PREFIXES = ("native_", "half_", "convert_", "as_", "vload", "vstore", "atomic_",
                    "atom_", "read_image", "write_image", "get_image_", "work_group_",
                    "sub_group_", "get_sub_group_")

#: comments and string or character literals
_NOISE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
#: member names and numbers (no group), or an identifier and the ( of a call after it
_TOKEN = re.compile(r"(?:\.|->)\s*[A-Za-z_]\w*|\.?\d(?:[eEpP][+-]|[\w.])*|([A-Za-z_]\w*)(\s*\()?")


def _strip(text: str) -> str:
    """``text`` without comments (newlines kept) and with empty string literals."""
    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return s[0] * 2 if s[0] in "\"'" else " " + "\n" * s.count("\n")
    return _NOISE.sub(blank, text)


def _builtin(name: str) -> bool:
    return name in _OPENCL_RESERVED or name.startswith(_OPENCL_PREFIXES)
