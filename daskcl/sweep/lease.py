# SPDX-License-Identifier: GPL-2.0-or-later
"""One writer per store: the lease a run holds on its store from the check to the last write.

The lease is the zarr group ``_daskcl_lease`` of the store, whose ``daskcl_lease`` attribute
names the run: its host, process (pid and the process's start, which tell it from a later
process given the same pid), when it started and last renewed the lease, and a token of its
own.  (A group, not a plain file, so that zarr sees nothing foreign in the store; it is left out
of the consolidated metadata.)  A run takes the lease before it
changes anything (``--overwrite`` and ``--resume`` too), renews it every :data:`RENEW_S`
seconds while it runs and removes it at its end.  Another run refuses the store while the
lease is live:

- held by a process of this host that still runs (however long since it renewed);
- held by a process of another host that renewed it within :data:`STALE_S` seconds.

A lease that is not live (its run was killed) is taken over, with a warning saying whose it was.
On a local file system the lease is read and written under an exclusive ``flock`` of the
``_daskcl`` directory, so two runs starting at once cannot both take it; on an fsspec store the
run writes its lease and reads it back, and the later writer wins.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import posixpath
import socket
import stat
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

from ..errors import SweepError
from .chunks import write_error

__all__ = ["LEASE", "RENEW_S", "STALE_S", "Lease", "acquire", "is_lease_file",
           "pid_alive", "process_start", "refuse_live"]

#: the lease's group (at the top of the store, beside the bookkeeping group ``_daskcl``, which
#: stores of the first format do not have) and the file that holds it
LEASE = "_daskcl_lease"
_FILE = f"{LEASE}/zarr.json"
#: how often a run renews its lease, and how long a lease of another host lives unrenewed
RENEW_S = 15.0
STALE_S = 120.0
#: tokens of the leases this process holds (a lease of this pid is live only if listed here)
_HELD: set[str] = set()


def is_lease_file(rel: str) -> bool:
    """Whether ``rel`` (a path in a store) is the lease's group or its file."""
    return rel.rstrip("/") in (LEASE, _FILE)


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (field 22 of ``/proc/<pid>/stat``), ``None`` where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()    # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else None


def pid_alive(pid: int, since: Any) -> bool:
    start = process_start(pid)
    if start is not None:
        return since in (None, start)
    if os.path.isdir("/proc"):
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _live(lease: Any, now: float) -> bool:
    """Whether ``lease`` (a lease file's JSON) is held by a run that may still write."""
    if not isinstance(lease, dict):
        return False
    pid, renewed = lease.get("pid"), lease.get("renewed")
    if lease.get("host") == socket.gethostname() and isinstance(pid, int) and pid > 0:
        if pid == os.getpid():
            return lease.get("token") in _HELD
        return pid_alive(pid, lease.get("since"))
    return isinstance(renewed, (int, float)) and now - renewed < STALE_S


def _who(lease: dict[str, Any]) -> str:
    started = lease.get("started")
    return (f"process {lease.get('pid')} on {lease.get('host')}"
            + (f", started {started}" if started else ""))


class _Files:
    """The lease's file in a local directory store or an fsspec one."""

    def __init__(self, url: str, options: dict[str, Any] | None) -> None:
        self.url = url
        self.local = "://" not in url
        if self.local:
            self.root = os.path.abspath(url)
            self.fs: Any = None
        else:
            import fsspec

            self.fs, self.root = fsspec.core.url_to_fs(url, **(options or {}))

    def path(self, rel: str) -> str:
        return (os.path.join(self.root, *rel.split("/")) if self.local
                else posixpath.join(str(self.root), rel))

    def read(self) -> Any:
        """The lease, ``None`` where there is none or it is not ours to read (not a regular
        file, not a lease)."""
        try:
            if self.local:
                fd = os.open(self.path(_FILE), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                             | os.O_CLOEXEC)
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        return None
                    with os.fdopen(os.dup(fd), "rb") as f:
                        data = f.read(1 << 16)
                finally:
                    os.close(fd)
            else:
                self.fs.invalidate_cache(self.path(_FILE))   # another run's write, not cached
                data = self.fs.cat_file(self.path(_FILE))
            meta = json.loads(data)
        except Exception:   # missing, unreadable or not JSON: no lease
            return None
        attrs = meta.get("attributes") if isinstance(meta, dict) else None
        lease = attrs.get("daskcl_lease") if isinstance(attrs, dict) else None
        return lease if isinstance(lease, dict) else None

    def write(self, lease: dict[str, Any]) -> None:
        data = json.dumps({"zarr_format": 3, "node_type": "group",
                           "attributes": {"daskcl_lease": lease}}, sort_keys=True).encode()
        if not self.local:
            self.fs.pipe_file(self.path(_FILE), data)
            return
        fd = os.open(self.path(_FILE), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            if self.local:
                os.unlink(self.path(_FILE))
            else:
                self.fs.rm(self.path(LEASE), recursive=True)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """An exclusive lock for reading and writing the lease (local stores, an ``flock`` of
        its directory; the fsspec path reads its write back instead)."""
        if not self.local:
            yield
            return
        fd = os.open(self.path(LEASE), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                     | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def refuse_live(url: str, options: dict[str, Any] | None) -> None:
    """A :class:`SweepError` where another run holds a live lease on the store at ``url``
    (reads only)."""
    files = _Files(url, options)
    lease = files.read()
    if _live(lease, time.time()) and lease.get("token") not in _HELD:
        raise _busy(url, lease)


def _busy(url: str, lease: dict[str, Any]) -> SweepError:
    return SweepError(
        f"{url} is being written by another run ({_who(lease)}); --overwrite and --resume "
        "wait for it too: let it finish or stop it, then run again (the lease of a run that "
        f"was killed is taken over once its process has ended, or after {STALE_S:.0f} s "
        "unrenewed for a run on another host)")


class Lease:
    """A run's lease on its store (:func:`acquire`): renewed on a thread until
    :meth:`release`; :meth:`check` raises once another run has taken it."""

    def __init__(self, files: _Files, record: dict[str, Any], made: list[str]) -> None:
        self._files = files
        self._record = record
        self._made = made
        self._lost: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="daskcl-lease", daemon=True)
        self._thread.start()

    @property
    def token(self) -> str:
        return str(self._record["token"])

    def _renew(self) -> None:
        while not self._stop.wait(RENEW_S):
            try:
                with self._files.locked():
                    now = self._files.read()
                    if not isinstance(now, dict) or now.get("token") != self.token:
                        self._lost = now if isinstance(now, dict) else {}
                        return
                    self._record["renewed"] = time.time()
                    self._files.write(self._record)
            except Exception:    # a passing failure of the store: try again next time
                continue

    def check(self) -> None:
        """Raise where another run took the lease over (this run then stops writing)."""
        if self._lost is not None:
            who = _who(self._lost) if self._lost else "its lease was removed"
            raise SweepError(f"{self._files.url}: another run took this store over ({who}); "
                             "this run stops")

    def release(self) -> None:
        """Stop renewing and remove the lease if it is still this run's; directories this
        run made for it go too where they are empty."""
        self._stop.set()
        self._thread.join()
        _HELD.discard(self.token)
        try:
            with self._files.locked():
                now = self._files.read()
                if isinstance(now, dict) and now.get("token") == self.token:
                    self._files.remove()
        except OSError:
            pass
        if self._files.local:       # its group, and what it made for it, where empty
            for d in [self._files.path(LEASE), *self._made]:
                with contextlib.suppress(OSError):
                    os.rmdir(d)


def acquire(url: str, options: dict[str, Any] | None) -> Lease:
    """Take the lease of the store at ``url`` for this run, or raise :class:`SweepError`
    where another run holds it (:func:`refuse_live`); a dead run's lease is taken over with a
    ``RuntimeWarning`` naming it."""
    files = _Files(url, options)
    made: list[str] = []
    if files.local:
        chain: list[str] = []
        d = files.root       # the store's directories missing, from the top down
        while not os.path.lexists(d) and d != os.path.dirname(d):
            chain.insert(0, d)
            d = os.path.dirname(d)
        for d in [*chain, files.path(LEASE)]:
            try:
                os.mkdir(d)
            except FileExistsError:
                continue
            except OSError as exc:
                raise write_error(url, exc) from exc
            if d != files.path(LEASE):
                made.append(d)
        if os.path.islink(files.path(LEASE)) or not os.path.isdir(files.path(LEASE)):
            raise SweepError(f"{url}: {LEASE} is not a directory daskcl made; choose another "
                             "--out")
    token = uuid.uuid4().hex
    host, pid = socket.gethostname(), os.getpid()
    record = {"daskcl_lease": 1, "host": host, "pid": pid, "since": process_start(pid),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "renewed": time.time(),
              "token": token}
    with files.locked():
        old = files.read()
        if _live(old, time.time()):
            raise _busy(url, old)
        files.write(record)
    if not files.local:   # no lock there: the later writer wins, the earlier sees it
        time.sleep(0.2)
        now = files.read()
        if not isinstance(now, dict) or now.get("token") != token:
            raise _busy(url, now if isinstance(now, dict) else {})
    if isinstance(old, dict):
        warnings.warn(f"{url}: taking over the store from a run that ended without releasing "
                      f"it ({_who(old)})", RuntimeWarning, stacklevel=3)
    _HELD.add(token)
    return Lease(files, record, made[::-1])
