# SPDX-License-Identifier: GPL-2.0-or-later
"""Render the recorded results (benchmarks/results/*.json) as the tables of benchmarks/README.md.

Run:  python benchmarks/report.py   (rewrites the part of README.md between the RESULTS markers)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- RESULTS BEGIN -->", "<!-- RESULTS END -->"


def fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def render(path: Path) -> str:
    data = json.loads(path.read_text())
    m = data["machine"]
    if "calls" in data:    # a timeline (profile_stream.py): one row per call, its spans counted
        rows = [{"call": c["call"], "total_ms": c["total_ms"], "spans": len(c["rows"])}
                for c in data["calls"]]
    else:
        rows = data["results"] if "results" in data else data["rows"]
    cols = list(dict.fromkeys(k for r in rows for k in r))
    head = (f"### {path.stem}\n\n{m['date']}, daskcl {m['daskcl']}, **{m['device']}** "
            f"({m['device_type']}, driver {m['driver']}, {m['compute_units']} CUs)")
    extra = [f"{k} {fmt(v)}" for k, v in m.items()
             if k not in {"date", "daskcl", "device", "device_type", "driver", "compute_units", "host"}]
    lines = [head + ("; " + ", ".join(extra) if extra else "") + "\n",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    readme = HERE / "README.md"
    text = readme.read_text()
    body = "\n".join(render(p) for p in sorted((HERE / "results").glob("*.json")))
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    readme.write_text(text[:start] + "\n\n" + body + "\n" + text[end:])
    print(f"rendered {len(list((HERE / 'results').glob('*.json')))} result files into {readme}")


if __name__ == "__main__":
    main()
