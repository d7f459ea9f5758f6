# SPDX-License-Identifier: GPL-2.0-or-later
"""Which Python functions one warm call of a ``daskcl.nmath`` function runs, and how often.

Counts ``call`` and ``c_call`` events of ``sys.setprofile`` over ``--calls`` warm calls (as
``bench_small.python_calls`` does) and prints them per function (file:line name), most first,
for NumPy inputs and for device arrays, first as they come and then once the programs that tier
up in the background are in use (``program.wait_background``).  A tool for finding what a path still does in general
code; its totals are what bench_small records as ``calls``.

Run:  python3 benchmarks/profile_calls.py pgamma [--n 1024] [--calls 20] [--top 40]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small import _functions, _inputs


def count(fn: Any, calls: int) -> collections.Counter[str]:
    seen: collections.Counter[str] = collections.Counter()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            seen[f"{Path(code.co_filename).name}:{code.co_firstlineno} {code.co_name}"] += 1
        elif event == "c_call":
            seen[f"<C> {getattr(arg, '__qualname__', repr(arg))}"] += 1

    fn()
    sys.setprofile(hook)
    try:
        for _ in range(calls):
            fn()
    finally:
        sys.setprofile(None)
    return seen


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import pyopencl.array as cla

    from daskcl.runtime import device, program

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("function")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args(argv)
    ours = _functions()[a.function][0]
    args = _inputs(a.function, np.random.default_rng(0), a.n)
    q = device.current().queue
    dev = tuple(cla.to_device(q, x) for x in args)
    for settled in (False, True):
        if settled:         # the programs that tier up in the background, in use from here
            program.wait_background()
        for label, call_args in (("numpy", args), ("device", dev)):
            seen = count(lambda c=call_args: ours(*c), a.calls)
            total = sum(seen.values()) / a.calls
            print(f"== {a.function} n={a.n} {label}{' settled' if settled else ''}: "
                  f"{total:.1f} calls per call")
            for name, k in seen.most_common(a.top):
                print(f"{k / a.calls:7.2f}  {name}")
    q.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
