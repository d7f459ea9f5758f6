# SPDX-License-Identifier: GPL-2.0-or-later
"""Helper processes: a program built by another process (``python -m daskcl.runtime.builder``)
into the disk cache, for a background build (:func:`daskcl.runtime.program.build_later`) that
does not hold back this process's own builds; :mod:`daskcl.runtime.program` loads what a helper
built once it has ended.  Its names are the runtime's own (nothing public)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import TYPE_CHECKING

from .. import config as _config
from . import device as _device

if TYPE_CHECKING:
    from .library import ProgramSource


class _Helper:
    """A program built by a helper process (``python -m daskcl.runtime.builder``) into the disk
    cache: :func:`daskcl.runtime.program.in_memory` loads it from there once the helper has
    ended (a few milliseconds on NVIDIA, whose compiled code the helper left in the shared
    driver cache).

    NVIDIA's OpenCL builds one program of a process at a time, so an inlined build on a thread
    of the process held back the process's next build (for tens of seconds:
    benchmarks/results/inline-tiered-gpu-h200.json); another process builds beside it."""

    def __init__(self, bound: _device.BoundDevice, source: ProgramSource,
                 options: tuple[str, ...], key: str) -> None:
        import subprocess
        import tempfile

        self.bound, self.source, self.options, self.key = bound, source, options, key
        self.done = False
        payload = {"device": bound.info.spec, "identity": bound.info.identity, "key": key,
                   "text": source.text, "files": list(source.files),
                   "line_map": [list(m) for m in source.line_map], "options": list(options)}
        # files, not pipes: the caller does not wait for the helper to read, nor the helper
        # for anyone to read what it says
        stdin = tempfile.TemporaryFile()
        stdin.write(json.dumps(payload).encode())
        stdin.seek(0)
        self.log = tempfile.TemporaryFile()
        env = {**os.environ, **_config.environ(_config.explicit()),
               "DASKCL_DEVICE": bound.info.spec}
        try:
            self.proc = subprocess.Popen(_helper_command(), stdin=stdin, stdout=self.log,
                                         stderr=subprocess.STDOUT, env=env, close_fds=True)
        finally:
            stdin.close()
        self.lock = threading.Lock()

    def is_alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Forget what the helper said (its log file)."""
        self.log.close()

    def detach(self) -> None:
        """At this process's exit: a helper still building goes on and writes its program for
        the next process; its log is closed, and the ``Popen`` no longer answers for it (else,
        collected at exit, it warns that the process still runs).  The system reaps it."""
        self.close()
        if self.proc.poll() is None:
            self.proc.returncode = 0     # not waited for by this process, which is ending

    def join(self, timeout: float | None = None) -> None:
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)


def _helper_command() -> list[str]:
    """The command line of a helper process (:class:`_Helper`)."""
    import sys

    return [sys.executable, "-m", "daskcl.runtime.builder"]
