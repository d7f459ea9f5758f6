# SPDX-License-Identifier: GPL-2.0-or-later
"""Sphinx extension: the pages and figures generated from the code when the docs build.

``_generated/function_table.rst`` (every row: daskcl's call, R's call, parameters, where R
differs, the algorithm and its reference) comes from :func:`daskcl._reference.function_table`;
``_generated/nmath_reference.rst`` lists every function of :mod:`daskcl.nmath` for autodoc, by
family; the figures of :mod:`daskcl_figures` are computed with daskcl on the bound device (PoCL on
a CPU-only machine).  The html build draws the figures; another builder draws only those that
are missing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

LOG = logging.getLogger(__name__)


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def nmath_reference() -> str:
    """An ``autofunction`` entry per public function, grouped as the function table is."""
    from daskcl.kernels import _docs, _nmath_table, _random

    groups: dict[str, list[str]] = {}
    for row in (*_nmath_table.ROWS, *_random.ROWS):
        groups.setdefault(_docs.group(row.name), []).append(row.name)
    out = []
    for g in [g for g in _docs.TITLES if g in groups]:
        title = _docs.TITLES[g]
        out += [title, "-" * len(title), ""]
        for name in groups[g]:
            out += [f".. autofunction:: daskcl.nmath.{name}", ""]
    return "\n".join(out)


def generate(app: Sphinx) -> None:
    import daskcl_figures

    from daskcl import _reference

    gen = Path(app.srcdir) / "_generated"
    gen.mkdir(exist_ok=True)
    _write(gen / "function_table.rst", _reference.function_table())
    _write(gen / "nmath_reference.rst", nmath_reference())
    facts_path = gen / "figures.json"
    facts: dict[str, Any] = json.loads(facts_path.read_text()) if facts_path.exists() else {}
    for name, draw in daskcl_figures.FIGURES.items():
        png = gen / name
        if app.builder.name != "html" and png.exists() and name in facts:
            continue
        t0 = time.perf_counter()
        facts[name] = draw(png)
        LOG.info("figure %s: %.1f s", name, time.perf_counter() - t0)
    _write(facts_path, json.dumps(facts, indent=1, sort_keys=True) + "\n")
    app.config.rst_prolog = _prolog(facts)


def _prolog(facts: dict[str, Any]) -> str:
    """Substitutions of the figures' computed numbers, for the pages' text."""
    p = facts["ttest_power.png"]
    t = facts["tukey_table.png"]
    b = facts["budworm_posterior.png"]
    mode = ", ".join(f"{k} {v:.4f}" for k, v in b["mode"].items())
    subs = {
        "power64": f"{p['power_64_0.5']:.4f}",
        "n80": ", ".join(f"{n} for d = {d}" for d, n in p["n_for_80"].items()),
        "tukey_entries": str(t["entries"]),
        "tukey_max4": f"{100 * t['max_rel_df_ge_4']:.3f} %",
        "tukey_max2": f"{100 * t['max_rel_df_2']:.0f} %",
        "budworm_mode": mode,
    }
    return "\n".join(f".. |{k}| replace:: {v}" for k, v in subs.items()) + "\n"


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True}
