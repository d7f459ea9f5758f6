# SPDX-License-Identifier: GPL-2.0-or-later
"""The function table of the reference documentation, generated from the rows and the public
functions (``docs/_ext`` writes it when the pages build; ``tests/nmath/test_docs.py`` checks it)."""

from __future__ import annotations

import inspect
import re

from .kernels import _nmath_table, _random
from .kernels._docs import (
    ALIASES,
    TITLES,
    group,
    order_note,
    parameter_meanings,
    source,
)
from .kernels._registry import FUNCTIONS
from .kernels._table import Fn, RFn

__all__ = ["function_table"]


def _rst_text(text: str) -> str:
    """Plain text for reStructuredText (no markup is read in it)."""
    for ch in ("\\", "*", "`", "|", "_"):
        text = text.replace(ch, "\\" + ch)
    # an initial "C. Loader" would open an enumerated list
    return re.sub(r"^(\w{1,3})\. ", r"\1\\. ", text)


def _cell(lines: list[str]) -> list[str]:
    out = [f"     - {lines[0]}" if lines else "     -"]
    out += [f"       {line}" if line else "" for line in lines[1:]]
    return out


def function_table() -> str:
    """The reStructuredText of the function table: for every row, daskcl's call, R's call,
    what each parameter means, where R differs (R's keywords accepted), and the algorithm
    with its reference; grouped by family."""
    rows: list[Fn | RFn] = [*_nmath_table.ROWS, *_random.ROWS]
    groups: dict[str, list[Fn | RFn]] = {}
    for row in rows:
        groups.setdefault(group(row.name), []).append(row)
    order = [g for g in TITLES if g in groups] + sorted(set(groups) - set(TITLES))
    out: list[str] = []
    for g in order:
        title = TITLES.get(g, g)
        out += [title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1",
                "   :widths: 20 18 26 14 22", "",
                "   * - daskcl", "     - R", "     - parameters", "     - differences from R",
                "     - algorithm and reference"]
        for row in sorted(groups[g], key=lambda r: ("dpqr".find(r.name[0]), r.name)):
            sig = str(inspect.signature(FUNCTIONS[row.name]))
            r = row.r_call
            diff = [order_note(row)] if order_note(row) else []
            for alias in ALIASES.get(row.name, {}).values():
                diff.append(f"``{alias.name}=``: {alias.meaning}")
            path, src = source(row)
            params = [f"* ``{a}``: {m}" for a, m in parameter_meanings(row).items()]
            out += [f"   * - :func:`~daskcl.nmath.{row.name}`", "",
                    f"       ``{row.name}{sig}``"]
            out += _cell([f"``{r}``" if r else "none (Rmath.h only)"])
            out += _cell(params)
            out += _cell(_join_paragraphs(diff) if diff else ["same order and names"])
            out += _cell([_rst_text(src), "", f"``{path}``"] if src else ["(not found)"])
        out.append("")
    return "\n".join(out) + "\n"


def _join_paragraphs(paras: list[str]) -> list[str]:
    out: list[str] = []
    for p in paras:
        if out:
            out.append("")
        out.append(p)
    return out
