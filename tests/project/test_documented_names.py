# SPDX-License-Identifier: GPL-2.0-or-later
"""Every name, call and command that README.md and the documentation's pages document exists
as documented.

The names are read from the README and ``docs/*.rst`` themselves (the pages' code blocks and
doctests read as the README's fenced blocks, their inline literals as its code spans), so a renamed
or moved name fails here until the text follows:

* every dotted ``daskcl.<...>`` name in it resolves (a module imported, then attributes), and so
  does a bare name listed right after one (``daskcl.cluster.local_cluster()``, ``DaskclPlugin``:
  ``daskcl.cluster.DaskclPlugin``); ``daskcl.nmath.<name>`` stands for every row of Rmath.h;
* every call written in inline code (``nmath.rgamma(10**6, 2.5, seed=1)``) and in the Python
  blocks binds to the signature of what it calls (the arguments' number and keywords);
* the Python blocks' ``import`` statements of daskcl run, and the doctest block runs;
* every ``daskcl ...`` command names existing subcommands and options (from ``--help``), every
  option written on its own is one of ``daskcl`` or ``python -m daskcl.deploy``, and a
  ``--preload`` module is a dask preload.
"""

from __future__ import annotations

import ast
import contextlib
import doctest
import importlib
import inspect
import io
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from daskcl import cli

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
API = Path(__file__).resolve().parents[1] / "data" / "rmath_api.tsv"


def rst_as_markdown(text: str) -> str:
    """A page of the documentation as the README writes it: its ``code-block`` and ``doctest``
    directives as fenced blocks, its inline literals in single backticks."""
    out: list[str] = []
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        m = re.match(r"( *)\.\. (code-block|doctest)::\s*(\w*)", lines[k])
        if not m:
            out.append(lines[k].replace("``", "`"))
            k += 1
            continue
        indent, k, body = len(m.group(1)), k + 1, []
        while k < len(lines) and (not lines[k].strip()
                                  or len(lines[k]) - len(lines[k].lstrip()) > indent):
            body.append(lines[k])
            k += 1
        code = textwrap.dedent("\n".join(b for b in body if not b.strip().startswith(":")))
        lang = "python" if m.group(2) == "doctest" else m.group(3)
        out += [f"```{lang}", code.strip("\n"), "```", ""]
    return "\n".join(out)


#: the README, then every page of the documentation
# benchmarks.rst is written by benchmarks/report.py: its options are the benchmark scripts'
TEXT = "\n".join([README, *(rst_as_markdown(p.read_text())
                             for p in sorted((ROOT / "docs").glob("*.rst"))
                             if p.name != "benchmarks.rst")])

#: fenced blocks: (language, text)
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", TEXT, re.M | re.S)
README_BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", README, re.M | re.S)
#: the prose with the fenced blocks taken out, and its inline code spans
PROSE = re.sub(r"^```\w*\n.*?^```", "", TEXT, flags=re.M | re.S)
SPANS = re.findall(r"`([^`\n]+)`", PROSE)

DOTTED = sorted(set(re.findall(r"(?<![\w./-])daskcl(?:\.\w+)+", TEXT)))
#: a bare name in backticks listed after a dotted one: (the dotted name, the bare name)
LISTED = [(m.group(1), bare)
          for m in re.finditer(r"`(daskcl(?:\.\w+)+)[^`]*`((?:,\s*`\w+(?:\([^`]*\))?`)+)", PROSE)
          for bare in re.findall(r"`(\w+)", m.group(2))]


def resolve(dotted: str) -> Any:
    """The object ``dotted`` names: its longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ModuleNotFoundError as exc:
            if exc.name is None or not ".".join(parts[:n]).startswith(exc.name):
                raise  # a module that exists but imports something missing
            continue
        for k, attr in enumerate(parts[n:], start=n):
            assert hasattr(obj, attr), f"{'.'.join(parts[:k])} has no attribute {attr!r}"
            obj = getattr(obj, attr)
        return obj
    raise AssertionError(f"no module of {dotted!r} imports")


def known_names() -> dict[str, Any]:
    """What a bare name of the README refers to: each component of a dotted daskcl name (``nmath``,
    ``local_cluster``) and each name listed after one."""
    known: dict[str, Any] = {}
    for dotted in DOTTED:
        parts = dotted.split(".")
        for n in range(2, len(parts) + 1):
            known.setdefault(parts[n - 1], resolve(".".join(parts[:n])))
    for dotted, bare in LISTED:
        known.setdefault(bare, getattr(resolve(dotted.rsplit(".", 1)[0]), bare))
    return known


def dotted_of(node: ast.expr) -> str | None:
    """``a.b.c`` of a Name/Attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_of(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def calls_in(code: str) -> list[tuple[str, int, list[str]]]:
    """``(function, positional count, keywords)`` of every call in ``code`` with a dotted name."""
    out = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and (name := dotted_of(node.func)):
            out.append((name, len(node.args), [k.arg for k in node.keywords if k.arg]))
    return out


def python_code(block: str) -> str:
    """A Python block's code: its doctest lines without prompts, or the block itself."""
    if ">>>" not in block:
        return block
    return "\n".join(line[4:] for line in block.splitlines() if line.startswith((">>> ", "... ")))


def documented_calls() -> list[tuple[str, int, list[str]]]:
    calls = []
    for span in SPANS:
        try:
            calls += calls_in(span.replace("...", "None"))
        except SyntaxError:
            continue  # prose in backticks, a command line
    for lang, block in BLOCKS:
        if lang == "python":
            calls += calls_in(python_code(block))
    return calls


def test_the_readme_documents_names():
    """The parsing finds what it should (a README restructured out of its reach fails here)."""
    assert {"daskcl.glm.FactorialGrid", "daskcl.cluster.local_cluster", "daskcl.nmath",
            "daskcl.random.RSIGNRANK_MAX_N"} <= set(DOTTED)
    assert ("daskcl.cluster.local_cluster", "worker_devices") in LISTED
    assert ("daskcl.random.RSIGNRANK_MAX_N", "RHYPER_MAX_N") in LISTED
    assert any(name.endswith("rgamma") for name, _, _ in documented_calls())
    assert len(commands()) >= 8


@pytest.mark.parametrize("dotted", DOTTED)
def test_dotted_name_resolves(dotted):
    resolve(dotted)


@pytest.mark.parametrize(("dotted", "bare"), LISTED, ids=[f"{d}-{b}" for d, b in LISTED])
def test_listed_name_resolves(dotted, bare):
    module = dotted.rsplit(".", 1)[0]
    assert hasattr(resolve(module), bare), f"{module} has no {bare!r} (README lists it after {dotted})"


def test_every_rmath_row_is_a_function():
    """``daskcl.nmath.<name>`` for every row of Rmath.h."""
    assert "`daskcl.nmath.<name>` for every row of Rmath.h" in README
    nmath = resolve("daskcl.nmath")
    rows = [line.split("\t")[0] for line in API.read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(rows) > 100
    assert [r for r in rows if not callable(getattr(nmath, r, None))] == []


def test_documented_calls_bind():
    """Each documented call's arguments fit the signature of the function it names."""
    known = known_names()
    checked = 0
    for name, npos, keywords in documented_calls():
        root, *rest = name.split(".")
        if root == "daskcl":
            func = resolve(name)
        elif root in known:
            func = known[root]
            for attr in rest:
                assert hasattr(func, attr), f"{name}: {root} has no attribute {attr!r}"
                func = getattr(func, attr)
        else:
            continue  # not daskcl's (zarr.open_group, plt.contour, float)
        try:
            inspect.signature(func).bind(*[None] * npos, **dict.fromkeys(keywords))
        except TypeError as exc:
            raise AssertionError(f"README's call of {name} ({npos} positional, keywords "
                                 f"{keywords}) does not fit {inspect.signature(func)}: {exc}") from None
        checked += 1
    assert checked >= 6


def test_python_blocks_import():
    """The daskcl imports of the README's Python blocks run."""
    imports = 0
    for lang, block in BLOCKS:
        if lang != "python":
            continue
        for node in ast.walk(ast.parse(python_code(block))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                if any(m and m.split(".")[0] == "daskcl" for m in mods):
                    exec(compile(ast.Module([node], []), "README.md", "exec"), {})
                    imports += 1
    assert imports >= 1


def test_doctest_block_runs():
    """The README's example session gives the output it shows."""
    (block,) = [b for lang, b in README_BLOCKS if lang == "python" and ">>>" in b]
    test = doctest.DocTestParser().get_doctest(block, {}, "README.md", "README.md", 0)
    out = io.StringIO()
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test, out=out.write)
    assert result.failed == 0, out.getvalue()
    assert result.attempted >= 3


def commands() -> list[list[str]]:
    """Every ``daskcl ...`` command line of the README, split into words."""
    lines = [s for s in SPANS if s.startswith("daskcl ") or s == "daskcl"]
    for lang, block in BLOCKS:
        if lang == "sh":
            lines += [part.strip() for line in block.splitlines()
                      for part in line.split(" #")[0].split("&&")
                      if part.strip().startswith("daskcl ")]
    return [line.split()[1:] for line in lines]


def cli_help(path: list[str], main: Any = cli.main) -> str:
    """The ``--help`` text of the command ``path`` of ``main``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        main([*path, "--help"])
    assert exit_.value.code == 0, path
    return out.getvalue()


def subcommands(text: str) -> list[str]:
    """The subcommands that a ``--help`` text's usage offers."""
    choices = re.search(r"\{([\w,-]+)\}", text.split("\n\n")[0])
    return choices.group(1).split(",") if choices else []


def every_help() -> str:
    """The help texts of every command of ``daskcl`` and ``python -m daskcl.deploy``."""
    texts = []
    for main in (cli.main, resolve("daskcl.deploy.main")):
        paths: list[list[str]] = [[]]
        while paths:
            path = paths.pop()
            texts.append(cli_help(path, main))
            paths += [[*path, c] for c in subcommands(texts[-1])]
    return "\n".join(texts)


@pytest.mark.parametrize("words", commands(), ids=lambda w: " ".join(w) or "daskcl")
def test_command_exists(words):
    """The subcommands of a documented command exist, and so do its options and keywords."""
    path: list[str] = []
    rest = list(words)
    while rest and rest[0] in subcommands(cli_help(path)):
        path.append(rest.pop(0))
    text = cli_help(path)
    for k, word in enumerate(rest):
        after_option = k > 0 and rest[k - 1].startswith("--")
        if word.startswith("--"):
            assert re.search(rf"{re.escape(word)}(?![\w-])", text), f"daskcl {' '.join(path)}: no {word}"
        elif re.fullmatch(r"[a-z]+", word) and not after_option:
            # a keyword in a positional place (daskcl sweep verify STORE)
            assert re.search(rf"\b{word}\b", text), f"daskcl {' '.join(path)}: no {word!r}"
        else:
            assert re.fullmatch(r"[A-Z]+|[\w./,:-]+", word), word  # a placeholder or value


def test_options_exist():
    """Every option the README writes on its own (``--dry-run``, ``--cache-shared``) is an
    option of some command of ``daskcl`` or ``python -m daskcl.deploy``."""
    options = {o for s in SPANS if s.startswith("--") for o in re.findall(r"--[\w-]+", s)}
    assert {"--dry-run", "--resume", "--overwrite", "--cache-shared"} <= options
    text = every_help()
    assert sorted(o for o in options if not re.search(rf"{o}(?![\w-])", text)) == []


def test_preload_modules_are_preloads():
    preloads = [m for s in SPANS for m in re.findall(r"--preload (\S+)", s)]
    assert preloads
    for name in preloads:
        assert callable(getattr(importlib.import_module(name), "dask_setup", None)), name
