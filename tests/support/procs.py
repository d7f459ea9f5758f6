# SPDX-License-Identifier: GPL-2.0-or-later
"""Python subprocesses for the tests that tell why when they hang.

A child that outlives its timeout gets SIGABRT; with ``PYTHONFAULTHANDLER`` set it prints every
thread's stack first, and the test fails with that stack instead of a bare timeout (a hung
driver call and a slow compile look different there).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence


def repo_pythonpath(root: os.PathLike[str] | str) -> str:
    """``PYTHONPATH`` for a child that imports this checkout's daskcl: ``root`` first, then
    whatever the parent's ``PYTHONPATH`` held (where the environment keeps its packages)."""
    return os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])


def run_python(args: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
               cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python args...`` with output captured; on timeout, fail showing the child's stacks."""
    full_env = {**(os.environ if env is None else env), "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=full_env, cwd=cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        raise AssertionError(
            f"python {' '.join(args)[:200]} did not finish in {timeout:g} s; its stacks at "
            f"SIGABRT:\n{err[-6000:]}\nstdout:\n{out[-2000:]}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stop(*procs: subprocess.Popen[str] | None, sig: int = signal.SIGTERM,
         timeout: float = 30) -> None:
    """Send ``sig`` to each started process, then wait for each, killing one that outlasts
    ``timeout`` seconds."""
    started = [p for p in procs if p is not None]
    for proc in started:
        proc.send_signal(sig)
    for proc in started:
        try:
            proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
