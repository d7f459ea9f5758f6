# SPDX-License-Identifier: GPL-2.0-or-later
"""A pytest plugin for runs that may be cut short (the device tool's time limit).

- ``$DASKCL_FAILURE_LOG``: each failing test's id and the end of its traceback are appended as
  the failure is reported (with xdist: on the controller, as each worker's report arrives, so
  each failure once), so that a run killed before pytest's summary still names its failures;
- ``$DASKCL_DONE_LOG``: the id of each test that has finished, whatever its outcome, is
  appended as it finishes, with its seconds (set-up, call and tear-down) after a tab;
- ``$DASKCL_SKIP_DONE``: the tests named in that file (an earlier run's done log) are
  deselected, so that a second run finishes what a cut one left.

Use:  DASKCL_FAILURE_LOG=F PYTHONPATH=tests:$PYTHONPATH python3 -m pytest -p support.failure_log ...
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _append(var: str, text: str) -> None:
    path = os.environ.get(var)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


#: seconds of each test's phases so far, by id
_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: Any) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):    # the controller writes the workers' reports
        return
    if report.failed:
        _append("DASKCL_FAILURE_LOG",
                f"==== {report.nodeid} ({report.when})\n{report.longreprtext[-4000:]}\n")
    _seconds[report.nodeid] = _seconds.get(report.nodeid, 0.0) + float(report.duration)
    if report.when == "teardown":
        _append("DASKCL_DONE_LOG", f"{report.nodeid}\t{_seconds.pop(report.nodeid):.2f}\n")


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    path = os.environ.get("DASKCL_SKIP_DONE")
    if not path or not Path(path).is_file():
        return
    done = {line.split("\t")[0] for line in Path(path).read_text(encoding="utf-8").split("\n")}
    keep = [it for it in items if it.nodeid not in done]
    skipped = [it for it in items if it.nodeid in done]
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = keep
