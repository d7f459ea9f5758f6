# SPDX-License-Identifier: GPL-2.0-or-later
"""A pytest plugin for runs that may be cut short (the device tool's time limit): each failing
test's id and the end of its traceback are appended to ``$DASKCL_FAILURE_LOG`` as the failure
is reported (with xdist: on the controller, as each worker's report arrives), so that a run
killed before pytest's summary still names its failures.

Use:  DASKCL_FAILURE_LOG=F PYTHONPATH=tests:$PYTHONPATH python3 -m pytest -p failure_log ...
"""

from __future__ import annotations

import os
from typing import Any


def pytest_runtest_logreport(report: Any) -> None:
    path = os.environ.get("DASKCL_FAILURE_LOG")
    if path and report.failed:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"==== {report.nodeid} ({report.when})\n{report.longreprtext[-4000:]}\n")
