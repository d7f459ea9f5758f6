# SPDX-License-Identifier: GPL-2.0-or-later
"""``python -m daskcl.runtime.builder``: the helper process that builds one program into the
disk cache for another process (:func:`daskcl.runtime.program.build_later`).

It reads from its standard input what the process that started it resolved (the device's
``P:D`` and identity, the program's text, full build options and cache key), binds the same
device, builds the program through the cache (its lock, its trust rules, its atomic write) and
exits: 0 once the program is in the cache, 2 where what it was given does not hold here (another
device, a key that does not match the text), 1 where the build failed (the log says why).  It
runs nothing but the compiler on that text, and it lowers its own priority first: the process
that waits for it goes on with its own work meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from . import device as _device
from . import program as _program
from .library import ProgramSource

__all__ = ["main"]


def main() -> int:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(5)
    asked = json.load(sys.stdin)
    if _program.cache_dir() is None:
        print("daskcl builder: no disk cache to build into", file=sys.stderr)
        return 2
    bound = _device.bind(asked["device"])
    if bound.info.identity != asked["identity"]:
        print(f"daskcl builder: bound {bound.info.describe()}, not the device asked for",
              file=sys.stderr)
        return 2
    source = ProgramSource(asked["text"], tuple(asked["files"]),
                           tuple((int(line), str(name)) for line, name in asked["line_map"]))
    options = tuple(asked["options"])
    key = asked["key"]
    if _program._key(bound.info.identity, source.text, options) != key:
        print("daskcl builder: the key does not match the program", file=sys.stderr)
        return 2
    _program._build(bound, source, options, "assembled", key)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:          # said to the process that waits, which logs it
        print(f"daskcl builder: {type(exc).__name__}: {str(exc)[:400]}", file=sys.stderr)
        sys.exit(1)
