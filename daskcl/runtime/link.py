# SPDX-License-Identifier: GPL-2.0-or-later
"""Separate compilation of an assembled program: one object per library unit, linked per kernel.

OpenCL 1.2 compiles sources into objects (``clCompileProgram``) and links objects into an
executable (``clLinkProgram``).  The units of ``cl/`` are written for one translation unit (every
function defined before it is used, the d/p/q macros of the shims, ``static inline`` helpers,
``__constant`` tables), so each object is compiled from a text that declares what the unit may
use, derived from the same files:

* the *interface* of a unit is its text with the body of every function of external linkage
  replaced by a semicolon (its prototype), the initializer of every ``__constant`` table of
  external linkage removed (an ``extern`` declaration), and its ``static`` functions and
  ``static`` tables dropped unless the unit provides them (``@provides``) or something the
  interface keeps names them (a macro, a provided ``static inline`` helper).  Preprocessor lines,
  types, prototypes and top-level macro invocations are kept.  Whatever is removed is replaced
  by as many newlines as it held, so a line of an interface is the same line of its file;
* the object of a unit is ``OPENCL.cl``, the interfaces of every shim, the interfaces of the
  unit's transitive dependencies (its ``@depends`` closure within the program, in load order)
  and the unit itself.  Only units that define something of external linkage have an object;
* the kernel's object is ``OPENCL.cl``, the interfaces of every unit of the program in load order,
  then the kernel's parts (everything after the last unit).

An object's text depends only on its unit and on the interfaces of its dependencies, so the
object of ``toms708`` (TOMS 708's bratio) is the same text in pbeta's program as in pf's,
qbeta's or a user's kernel: compiled once per device and build options, and cached.

A build option ``-DNAME`` or ``-DNAME=VALUE`` is passed to an object only where ``NAME`` occurs in
its text (the library's units test ``DASKCL_*`` macros in ``OPENCL.cl`` only; a kernel's tuning
macros reach the kernel object alone), so that kernels built with different tunings share their
unit objects; every other option is passed to every object.

Nothing here touches OpenCL: :func:`plan` turns a :class:`ProgramSource` into the objects to
compile and the options to link with, :func:`diagnose` explains a failed link from the texts.

Example
-------
>>> from daskcl.runtime.link import interface
>>> interface("double twice(double x)\\n{\\n    return 2 * x;\\n}\\n", ())
'double twice(double x);\\n\\n\\n\\n'
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .library import ProgramSource, parse_annotations

__all__ = [
    "LINK_OPTIONS",
    "LinkPlan",
    "ObjectSource",
    "Symbols",
    "diagnose",
    "interface",
    "plan",
    "symbols",
]

#: the options clLinkProgram takes (OpenCL 1.2, 5.6.5.3), and NVIDIA's own (``-cl-nv-*``)
LINK_OPTIONS = (
    "-cl-denorms-are-zero", "-cl-no-signed-zeros", "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only", "-cl-fast-relaxed-math", "-cl-no-subgroup-ifp",
)


# -- a lexer and the top-level items of a file ----------------------------------------------------


@dataclass(frozen=True)
class _Tok:
    kind: str   # "pp" (a preprocessor directive, continuation lines included), "id", "num",
    #             "str", "p" (punctuation, one character)
    value: str
    start: int
    end: int


_ID = re.compile(r"[A-Za-z_]\w*")
_NUM = re.compile(r"\.?\d(?:[eEpP][+-]|[\w.])*")


@functools.lru_cache(maxsize=1024)
def _lex(text: str) -> tuple[_Tok, ...]:
    """The tokens of ``text``, comments left out; a directive is one token."""
    toks: list[_Tok] = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
        elif c in " \t\r\f\v":
            i += 1
        elif c == "\\" and text.startswith("\n", i + 1):
            i += 2                                   # a spliced line
        elif text.startswith("//", i):
            i = _line_end(text, i)
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "#" and line_start:
            j = i
            while j < n:
                if text.startswith("/*", j):
                    k = text.find("*/", j + 2)
                    j = n if k < 0 else k + 2
                elif text.startswith("//", j):
                    j = _line_end(text, j)
                elif text[j] == "\n":
                    if text[j - 1] == "\\":
                        j += 1
                    else:
                        break
                else:
                    j += 1
            toks.append(_Tok("pp", text[i:j], i, j))
            i = j
        else:
            line_start = False
            m = _ID.match(text, i)
            if m:
                toks.append(_Tok("id", m.group(), i, m.end()))
                i = m.end()
                continue
            m = _NUM.match(text, i)
            if m:
                toks.append(_Tok("num", m.group(), i, m.end()))
                i = m.end()
                continue
            if c in "\"'":
                j = i + 1
                while j < n and text[j] != c and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                toks.append(_Tok("str", text[i:j + 1], i, min(j + 1, n)))
                i = j + 1
                continue
            toks.append(_Tok("p", c, i, i + 1))
            i += 1
    return tuple(toks)


def _line_end(text: str, i: int) -> int:
    """The end of the ``//`` comment at ``i``: the next newline not spliced by a backslash."""
    while True:
        j = text.find("\n", i)
        if j < 0:
            return len(text)
        if text[j - 1] != "\\":
            return j
        i = j + 1


@dataclass(frozen=True)
class _Item:
    """A top-level construct of a file."""

    kind: str        # "pp", "func", "table", "decl" (types, prototypes), "macro" (an invocation)
    start: int
    end: int
    name: str = ""
    static: bool = False
    inline: bool = False
    kernel: bool = False
    body: int = -1   # "func": where its body starts; "table": where its initializer starts
    head_end: int = -1  # the end of the last token before the body or the initializer


def _match(toks: Sequence[_Tok], i: int) -> int:
    """The index of the bracket closing the one at ``i``."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    want, depth = pairs[toks[i].value], 0
    for j in range(i, len(toks)):
        v = toks[j].value if toks[j].kind == "p" else ""
        if v == toks[i].value:
            depth += 1
        elif v == want:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced {toks[i].value!r} at offset {toks[i].start}")


def _call_name(toks: Sequence[_Tok]) -> str:
    """The identifier before the first ``(`` of a declarator (not ``__attribute__``)."""
    for a, b in itertools.pairwise(toks):
        if b.kind == "p" and b.value == "(" and a.kind == "id" and not a.value.startswith(
                "__attribute"):
            return a.value
    return ""


@functools.lru_cache(maxsize=1024)
def _items(text: str) -> tuple[_Item, ...]:
    toks = _lex(text)
    items: list[_Item] = []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        if t.kind == "pp":
            items.append(_Item("pp", t.start, t.end))
            i += 1
            continue
        if (t.kind == "id" and i + 1 < n and toks[i + 1].value == "("
                and toks[i + 1].kind == "p"):
            k = _match(toks, i + 1)
            nxt = toks[k + 1] if k + 1 < n else None
            if nxt is None or not (nxt.kind == "p" and nxt.value in "{;"):
                # NAME(args) alone: the invocation of a macro that defines something
                items.append(_Item("macro", t.start, toks[k].end, t.value))
                i = k + 1
                continue
        j = i
        while j < n:
            tj = toks[j]
            if tj.kind == "p" and tj.value in "([":
                j = _match(toks, j) + 1
                continue
            if tj.kind == "p" and tj.value == "{":
                prev = toks[j - 1] if j > i else None
                if prev is not None and prev.kind == "p" and prev.value == ")":
                    end = _match(toks, j)
                    head = toks[i:j]
                    words = {h.value for h in head if h.kind == "id"}
                    items.append(_Item(
                        "func", t.start, toks[end].end, _call_name(head),
                        static="static" in words, inline="inline" in words,
                        kernel=bool(words & {"__kernel", "kernel"}), body=tj.start,
                        head_end=prev.end))
                    j = end + 1
                    break
                j = _match(toks, j) + 1
                continue
            if tj.kind == "p" and tj.value == ";":
                items.append(_decl(toks[i:j], toks[j].end))
                j += 1
                break
            j += 1
        else:
            items.append(_decl(toks[i:n], toks[-1].end))
        i = j
    return tuple(items)


def _decl(toks: Sequence[_Tok], end: int) -> _Item:
    """A declaration ending at ``end``: a table of ``__constant`` data, or another kind."""
    words = [t.value for t in toks if t.kind == "id"]
    eq = next((t for t in toks if t.kind == "p" and t.value == "="), None)
    if eq is not None and ("__constant" in words or "constant" in words) and "typedef" not in words:
        before = [t for t in toks if t.start < eq.start]
        name = next((a.value for a, b in zip(before, [*before[1:], eq])
                     if a.kind == "id" and b.kind == "p" and b.value in "[="), "")
        return _Item("table", toks[0].start, end, name, static="static" in words, body=eq.start,
                     head_end=before[-1].end)
    return _Item("decl", toks[0].start, end, _call_name(toks))


def _identifiers(text: str) -> set[str]:
    out: set[str] = set()
    for t in _lex(text):
        if t.kind == "id":
            out.add(t.value)
        elif t.kind == "pp":
            out.update(_ID.findall(_strip_comments(t.value)))
    return out


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


# -- interfaces -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def interface(text: str, provides: tuple[str, ...]) -> str:
    """The interface of a unit of text ``text`` that provides ``provides`` (see the module's
    docstring), line for line: line k of the interface is line k of ``text`` or blank.

    Parameters
    ----------
    text
        The unit's OpenCL C.
    provides
        The names of its ``@provides`` annotation: its ``static`` functions and tables of these
        names are kept.
    """
    items = _items(text)
    keep: dict[int, str] = {}
    candidates: dict[str, list[int]] = {}
    for k, it in enumerate(items):
        span = text[it.start:it.end]
        if it.kind == "func" and it.kernel:
            continue
        if it.kind == "func" and not (it.static or it.inline):
            keep[k] = text[it.start:it.head_end] + ";"
        elif it.kind in ("func", "table"):
            candidates.setdefault(it.name, []).append(k)
        else:
            keep[k] = span
    wanted = set(provides)
    seen: set[str] = set()
    frontier = set(wanted) | set().union(*(_identifiers(s) for s in keep.values()))
    while frontier:
        name = frontier.pop()
        if name in seen:
            continue
        seen.add(name)
        for k in candidates.get(name, ()):
            it = items[k]
            if it.kind == "table" and not it.static:
                keep[k] = "extern " + text[it.start:it.head_end] + ";"
            else:
                keep[k] = text[it.start:it.end]
                frontier |= _identifiers(keep[k]) - seen
    out: list[str] = []
    pos = 0
    for k, it in enumerate(items):
        out.append(text[pos:it.start])
        span = text[it.start:it.end]
        kept = keep.get(k, "")
        out.append(kept + "\n" * (span.count("\n") - kept.count("\n")))
        pos = it.end
    out.append(text[pos:])
    return "".join(out)


# -- symbols, for explaining a link that failed ----------------------------------------------------


@dataclass(frozen=True)
class Symbols:
    """What a full text (a unit compiled in its own object, or a kernel) defines and uses, by name:
    ``(file, line)`` of the first place."""

    defines: dict[str, tuple[str, int]]
    declares: dict[str, tuple[str, int]]
    calls: dict[str, tuple[str, int]]


def symbols(text: str, name: str, first_line: int = 1) -> Symbols:
    """The external definitions, the prototypes and the calls of the file ``name`` whose text
    ``text`` starts at line ``first_line`` of the file."""
    defines: dict[str, tuple[str, int]] = {}
    declares: dict[str, tuple[str, int]] = {}
    calls: dict[str, tuple[str, int]] = {}

    def line(offset: int) -> tuple[str, int]:
        return name, first_line + text.count("\n", 0, offset)

    toks = _lex(text)
    for it in _items(text):
        if it.kind in ("func", "table") and not it.static and not (
                it.kind == "func" and it.inline):
            defines.setdefault(it.name, line(it.start))
        elif it.kind == "decl" and it.name:
            declares.setdefault(it.name, line(it.start))
        if it.kind == "func":
            body = [t for t in toks if it.body <= t.start < it.end]
            for a, b in itertools.pairwise(body):
                if a.kind == "id" and b.kind == "p" and b.value == "(":
                    calls.setdefault(a.value, line(a.start))
    return Symbols(defines, declares, calls)


# -- the plan of a linked build ---------------------------------------------------------------------


@dataclass(frozen=True)
class ObjectSource:
    """One object to compile: its text (with the line map of a :class:`ProgramSource`), the
    options to compile it with, and the file whose object it is (the kernel's parts for the
    kernel's object)."""

    source: ProgramSource
    options: tuple[str, ...]
    unit: str
    #: the file's own text and where it starts in ``source`` (for :func:`diagnose`)
    own: tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class LinkPlan:
    """The objects of a program (the units' first, in load order, then the kernel's) and the
    options of the link."""

    objects: tuple[ObjectSource, ...]
    link_options: tuple[str, ...]
    granularity: str


@dataclass(frozen=True)
class _Part:
    name: str
    text: str
    stem: str = ""
    provides: tuple[str, ...] = ()
    depends: tuple[str, ...] = ()


def _parts(source: ProgramSource) -> list[_Part] | None:
    """The files of an assembled program, or ``None`` when it was not assembled by
    :meth:`Library.program_source` (then it cannot be split)."""
    lines = source.text.split("\n")
    bounds = [start for start, _ in source.line_map] + [len(lines) + 1]
    parts: list[_Part] = []
    rebuilt: list[str] = []
    for (start, name), nxt in zip(source.line_map, bounds[1:]):
        if start < 2 or lines[start - 2] != f"// ==== {name} ====":
            return None
        text = "\n".join(lines[start - 1:nxt - 2]) + "\n"
        rebuilt.append(f"// ==== {name} ====\n{text}")
        if name.startswith(("shims/", "nmath/")) and name.endswith(".cl"):
            tags = parse_annotations(text)
            if "provides" not in tags or "depends" not in tags:
                return None
            stem = name.rsplit("/", 1)[1][:-3]
            parts.append(_Part(name, text, stem, tuple(tags["provides"]), tuple(tags["depends"])))
        else:
            parts.append(_Part(name, text))
    joined = "".join(rebuilt)
    if joined != source.text and joined != source.text + "\n":
        return None
    return parts


def _assemble(parts: Iterable[tuple[str, str]]) -> ProgramSource:
    chunks: list[str] = []
    line_map: list[tuple[int, str]] = []
    line = 1
    files: list[str] = []
    for name, text in parts:
        chunks.append(f"// ==== {name} ====\n")
        line += 1
        line_map.append((line, name))
        chunks.append(text)
        line += text.count("\n")
        files.append(name)
    return ProgramSource("".join(chunks), tuple(files), tuple(line_map))


_DEFINE = re.compile(r"-D\s*([A-Za-z_]\w*)")


def _split_options(options: Sequence[str]) -> list[tuple[str, ...]]:
    """``options`` as groups: ``("-D", "X=1")`` and ``("-DX=1",)`` are one group each."""
    groups: list[tuple[str, ...]] = []
    i = 0
    while i < len(options):
        if options[i] in ("-D", "-I") and i + 1 < len(options):
            groups.append((options[i], options[i + 1]))
            i += 2
        else:
            groups.append((options[i],))
            i += 1
    return groups


def _object_options(groups: Sequence[tuple[str, ...]], names: set[str]) -> tuple[str, ...]:
    out: list[str] = []
    for g in groups:
        m = _DEFINE.match(" ".join(g))
        if m is None or m.group(1) in names:
            out.extend(g)
    return tuple(out)


def plan(source: ProgramSource, options: Sequence[str], granularity: str = "unit"
         ) -> LinkPlan | None:
    """The objects that ``source`` (an assembled program) is compiled into and linked from, or
    ``None`` when it cannot be split (a program not assembled from a library's layers).

    Parameters
    ----------
    source
        The assembled program: ``OPENCL.cl``, the shims, the nmath units, then the kernel's
        parts.
    options
        Its build options.
    granularity
        ``"unit"``: an object per unit that defines something of external linkage (shared by
        every kernel that uses the unit); ``"closure"``: one object holding all the units of
        the program whole, as the assembled program holds them (shared by the kernels of the
        same units: a function's kernels for other numbers of axes, its sorted launch).
    """
    if granularity not in ("unit", "closure"):
        raise ValueError(f"granularity must be 'unit' or 'closure', not {granularity!r}")
    parts = _parts(source)
    if not parts or parts[0].name != "OPENCL.cl":
        return None
    n_units = next((k for k, p in enumerate(parts[1:]) if not p.stem), len(parts) - 1)
    units, kernel = parts[1:1 + n_units], parts[1 + n_units:]
    if not kernel or any(p.stem for p in kernel):
        return None       # units must come first, then at least one part of the kernel
    by_stem = {u.stem: u for u in units}
    order = {u.stem: k for k, u in enumerate(units)}
    shims = [u for u in units if u.name.startswith("shims/")]

    @functools.cache
    def closure(stem: str) -> frozenset[str]:
        out: set[str] = set()
        for d in by_stem[stem].depends:     # a _best unit: left out in the default mode
            if d not in by_stem and not d.endswith("_best"):
                raise KeyError(d)
            out |= {d} | closure(d) if d in by_stem else set()
        return frozenset(out)

    try:
        defines = {u.name: bool(symbols(u.text, u.name).defines) for u in units}
        faces = {u.name: interface(u.text, u.provides) for u in units}
    except ValueError:          # a file the scanner cannot read (unbalanced brackets)
        return None

    def iface(u: _Part) -> tuple[str, str]:
        return u.name, faces[u.name]

    head = ("OPENCL.cl", parts[0].text)
    groups = _split_options(options)
    objects: list[ObjectSource] = []
    if granularity == "closure" and any(defines.values()):
        src = _assemble([head, *((u.name, u.text) for u in units)])
        own = tuple((u.name, u.text, start) for (start, _), u in zip(src.line_map[1:], units))
        objects.append(ObjectSource(src, _object_options(groups, _identifiers(src.text)),
                                    f"the {len(units)} library units", own))
    units_done = units if granularity == "unit" else []
    try:
        for u in units_done:
            if not defines[u.name]:
                continue            # macros, types and static helpers only: nothing to link
            deps = sorted(closure(u.stem) - {s.stem for s in shims}, key=order.__getitem__)
            # every shim precedes every nmath unit, as in the assembled program
            before = [s for s in shims if order[s.stem] < order[u.stem]]
            body = [head, *(iface(s) for s in before),
                    *(iface(by_stem[d]) for d in deps), (u.name, u.text)]
            src = _assemble(body)
            objects.append(ObjectSource(src, _object_options(groups, _identifiers(src.text)),
                                        u.name, ((u.name, u.text, src.line_map[-1][0]),)))
    except (KeyError, RecursionError):
        return None                 # a dependency outside the program: not a library's program
    body = [head, *(iface(u) for u in units), *((k.name, k.text) for k in kernel)]
    src = _assemble(body)
    own = tuple((k.name, k.text, start) for (start, _), k in
                zip(src.line_map[-len(kernel):], kernel))
    objects.append(ObjectSource(src, _object_options(groups, _identifiers(src.text)),
                                " + ".join(k.name for k in kernel), own))
    link_opts = [o for g in groups for o in g
                 if len(g) == 1 and (o in LINK_OPTIONS or o.startswith("-cl-nv-"))]
    return LinkPlan(tuple(objects), tuple(link_opts), granularity)


def diagnose(objects: Sequence[ObjectSource]) -> list[str]:
    """Why objects compiled from these sources cannot be linked, read from their texts: symbols
    defined twice, and symbols declared and called but defined by none (each with the file and
    line); empty when the texts show no reason."""
    defined: dict[str, list[tuple[str, int]]] = {}
    declared: dict[str, tuple[str, int]] = {}
    called: dict[str, tuple[str, int]] = {}
    for obj in objects:
        for name, text, _ in obj.own:
            try:
                syms = symbols(text, name)
            except ValueError:          # unbalanced brackets: the compiler has said so
                continue
            for sym, where in syms.defines.items():
                defined.setdefault(sym, []).append(where)
            for sym, where in syms.declares.items():
                declared.setdefault(sym, where)
            for sym, where in syms.calls.items():
                called.setdefault(sym, where)
    problems = [
        f"'{sym}' is defined more than once: " + ", ".join(f"{f}:{ln}" for f, ln in where)
        for sym, where in defined.items() if len(where) > 1
    ]
    for sym, (f, ln) in declared.items():
        if sym not in defined and sym in called:
            cf, cl = called[sym]
            problems.append(f"unresolved symbol '{sym}': declared at {f}:{ln} and called at "
                            f"{cf}:{cl}, but no file of the program defines it")
    return problems
