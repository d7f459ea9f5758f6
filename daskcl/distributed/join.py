# SPDX-License-Identifier: GPL-2.0-or-later
"""``daskcl worker``: one nanny and worker per device of this host, joined to a running
scheduler (by address or scheduler file), listening on this host's address towards it; and
the checks that what answers there is a dask scheduler."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence

from ..errors import ClusterError, Terminated
from .slots import DeviceSlot, check_worker_config, device_slots, first_cause

__all__ = ["probe_scheduler", "run_workers"]

def _route_to(address: str | None, scheduler_file: str | None = None) -> str:
    """This host's address on the route to the scheduler (loopback for a scheduler on this
    host): where ``daskcl worker`` listens unless told otherwise.  ``address`` or, without it,
    the address in ``scheduler_file`` (read as it is now: no wait)."""
    import time

    from distributed.comm import get_address_host
    from distributed.utils import get_ip

    if not address:
        assert scheduler_file is not None
        address = _scheduler_file_address(scheduler_file, 0, time.monotonic())
    try:
        return str(get_ip(get_address_host(address)))
    except (OSError, ValueError) as exc:
        raise ClusterError(f"cannot find this host's address towards the scheduler {address}: "
                          f"{exc}; give --listen HOST") from exc


#: Seconds ``daskcl worker`` waits for its scheduler (its file included) unless told otherwise.
_CONNECT_TIMEOUT = 10.0


def _scheduler_file_address(path: str, timeout: float, deadline: float) -> str:
    """The scheduler's address in the scheduler file ``path``, waiting for the file (and for
    its contents: a scheduler may be writing it) until ``deadline`` (``time.monotonic()``).
    Waiting is said on stderr once, so that a mistyped path is no silent wait."""
    import json
    import sys
    import time

    said = False
    what = "no scheduler file"
    while True:
        try:
            with open(path, encoding="utf-8") as f:
                address = json.load(f).get("address")
            if isinstance(address, str) and address:
                return address
            what = "not a dask scheduler file (JSON with the scheduler's \"address\")"
        except FileNotFoundError:
            what = "no scheduler file"
        except IsADirectoryError:
            raise ClusterError(f"{path} is a directory, not a dask scheduler file") from None
        except (ValueError, AttributeError):   # half written, or not JSON of an object
            what = "not a dask scheduler file (JSON with the scheduler's \"address\")"
        except OSError as exc:
            raise ClusterError(f"cannot read the scheduler file {path}: {exc}") from None
        if time.monotonic() >= deadline:
            if what == "no scheduler file":
                raise ClusterError(f"no scheduler file {path} (waited {timeout:g} s for it; "
                                   "--timeout SECONDS waits longer)")
            raise ClusterError(f"{path} is {what}, as `dask scheduler --scheduler-file` "
                               f"writes it (waited {timeout:g} s)")
        if not said:
            print(f"daskcl worker: waiting up to {timeout:g} s for the scheduler file {path} "
                  "(--timeout)", file=sys.stderr, flush=True)
            said = True
        time.sleep(0.1)


#: the most bytes of the first message of a dask comm's handshake (its few settings)
_MAX_HANDSHAKE = 1 << 20


def probe_scheduler(address: str, timeout: float) -> None:
    """That what listens at a ``tcp://`` address speaks dask's protocol, within ``timeout``
    seconds: a scheduler sends its handshake as it accepts (8 bytes of length, 8 of its
    number of frames, then their lengths and the frames, the first msgpack), an HTTP server (a dashboard) waits for a request,
    an SSH server sends its banner.  Distributed reads any 8 bytes as a length, and allocated
    exabytes for a banner, or waited past its timeout on a dashboard: a :class:`ClusterError`
    in one line instead.  Other protocols, and an address that refuses the connection (a
    scheduler still starting: distributed tries again), are left to distributed."""
    import time

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        protocol, location = parse_address(address)
        if protocol != "tcp":
            return
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except OSError:
        return
    data, closed, want = b"", False, 16
    with sock:
        try:
            while len(data) < want and (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                got = sock.recv(want - len(data))
                if not got:
                    closed = True
                    break
                data += got
                if want == 16 and len(data) == 16 and _prelude(data):
                    want = 8 + int.from_bytes(data[:8], "little")   # the whole handshake
        except TimeoutError:
            pass
        except OSError as exc:
            raise ClusterError(f"{address} is not a dask scheduler (the connection failed "
                               f"before it said anything: {exc.strerror or exc})") from None
    if len(data) >= 16 and _prelude(data) and (len(data) < want or _handshake(data)):
        return      # a handshake, or the start of one (a slow scheduler: distributed waits)
    if not data and closed:
        raise ClusterError(f"{address} is not a dask scheduler: it closed the connection "
                           "without a word, where a scheduler greets at once")
    if not data:
        raise ClusterError(
            f"{address} is not a dask scheduler: it accepted the connection but sent nothing "
            f"within {timeout:g} s, as a scheduler does at once (an HTTP server, such as the "
            "dashboard? give the scheduler's own port, 8786 by default)")
    text = data.split(b"\r")[0].split(b"\n")[0]
    said = (repr(text.decode()) if text and text.isascii() and text.decode().isprintable()
            else "only zero bytes" if not data.strip(b"\0")
            else f"{len(data)} bytes that are not dask's handshake")
    raise ClusterError(f"{address} is not a dask scheduler (it answered {said})")


def _prelude(data: bytes) -> bool:
    """Whether the first 16 bytes of ``data`` may start a dask handshake: its length, then a
    few frames."""
    total, frames = int.from_bytes(data[:8], "little"), int.from_bytes(data[8:16], "little")
    return 1 <= frames <= 16 and 8 + 8 * frames <= total <= _MAX_HANDSHAKE


def _handshake(data: bytes) -> bool:
    """Whether ``data`` (a whole first message) is one dask sends: its first frame msgpack
    (distributed logged a traceback and failed on one that was not)."""
    import msgpack  # type: ignore[import-untyped]

    frames = int.from_bytes(data[8:16], "little")
    start = 16 + 8 * frames
    first = int.from_bytes(data[16:24], "little")
    if start + first > len(data):
        return False
    try:
        msgpack.unpackb(data[start:start + first], raw=False, strict_map_key=False)
    except Exception:       # whatever msgpack makes of junk
        return False
    return True


async def _check_scheduler(address: str, timeout: float) -> None:
    """That a dask scheduler answers at ``address`` within ``timeout`` seconds: one line
    (:class:`ClusterError`) if not, instead of every nanny's traceback after 30 s."""
    from distributed import Security
    from distributed.core import rpc

    where = f"cannot reach the scheduler {address} within {timeout:g} s"
    probe_scheduler(address, timeout)
    try:
        args = Security().get_connection_args("worker")
        async with rpc(address, timeout=timeout, connection_args=args) as remote:
            ident = await asyncio.wait_for(remote.identity(n_workers=0), timeout)
    except (OSError, TimeoutError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClusterError(f"{where}: {why}") from None
    except ValueError as exc:       # no address distributed can parse
        raise ClusterError(f"{address!r} is not a scheduler address (tcp://host:port): "
                           f"{exc}") from None
    except Exception as exc:    # a protocol not spoken here: tls:// without TLS settings,
        # ucx:// without ucx, ws:// at a server that is no websocket
        said = str(exc).strip().splitlines()
        raise ClusterError(f"cannot connect to the scheduler {address}: {type(exc).__name__}"
                           + (f": {said[0]}" if said else "")) from None
    kind = ident.get("type") if isinstance(ident, dict) else None
    if kind != "Scheduler":
        raise ClusterError(f"{address} is not a dask scheduler (it is {kind or 'something else'})")


def _check_listen(host: str) -> None:
    """That this host can listen on ``host`` (``--listen``): one line if not, before any nanny
    tries (and logs its failure at length)."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as s:
            s.bind(addr)
    except (OSError, UnicodeError) as exc:
        raise ClusterError(f"cannot listen on {host}: {exc}") from None


async def _serve(address: str, slots: list[DeviceSlot], nthreads: int, name: str | None,
                 local_directory: str | None, listen: str | None, timeout: float) -> None:
    from distributed import Nanny

    await _check_scheduler(address, timeout)
    host = socket.gethostname()
    listen = listen or _route_to(address)
    nannies = [
        Nanny(address, nthreads=nthreads,
              env=slot.env, preload=["daskcl.cluster"], host=listen,
              name=f"{name or host}-daskcl-{i}", local_directory=local_directory)
        for i, slot in enumerate(slots)
    ]
    try:
        try:
            await asyncio.gather(*(n.start() for n in nannies))
        except Exception as exc:    # "Nanny failed to start": said in a line, with its cause
            cause = first_cause(exc)
            if "name taken" in cause:   # the scheduler has workers of this name: another run's
                raise ClusterError(
                    f"the workers did not start: the scheduler already has workers named "
                    f"{nannies[0].name!r} and on (another daskcl worker on this host, with "
                    f"the same --name); give each run its own --name") from exc
            raise ClusterError(f"the workers did not start: {cause}") from exc
        for n, slot in zip(nannies, slots):
            print(f"daskcl worker {n.name} ({slot.label}) joined {n.scheduler_addr}", flush=True)
        await asyncio.gather(*(n.finished() for n in nannies))
    finally:
        await asyncio.gather(*(n.close() for n in nannies), return_exceptions=True)


def run_workers(address: str | None, *, scheduler_file: str | None = None,
                devices: str | int | Sequence[str] | None = None, nthreads: int = 1,
                name: str | None = None, local_directory: str | None = None,
                listen: str | None = None, timeout: float = _CONNECT_TIMEOUT) -> int:
    """Start one dask worker per device of this host, joined to the scheduler at ``address`` (or
    the one in ``scheduler_file``); run until they are stopped (Ctrl-C, SIGTERM, or the scheduler
    retiring them).

    ``timeout``: seconds to wait for the scheduler before any worker starts: for its file to
    appear (a scheduler started beside the workers writes it; the wait is said on stderr), then
    for the scheduler to answer.  A scheduler that does not is a :class:`ClusterError` in one line.

    ``listen``: the address the nannies and workers listen on.  By default, this host's address
    on the route to the scheduler: loopback when the scheduler is on this host, else the one
    interface the scheduler reaches (never every interface).  Anyone who can reach a worker's
    port can run code in it as this user; securing a multi-host cluster (a trusted network,
    ``distributed.Security`` with TLS) is up to whoever runs it.

    Raises
    ------
    ClusterError
        No scheduler given, both given, a bad ``nthreads`` or ``timeout``, a ``DASKCL_WARM``
        name that is no function, a scheduler (or its file) not there within ``timeout``, or
        workers that did not start (with the cause).
    NoMatchingDeviceError, NoFp64DeviceError
        The devices, as :func:`device_slots` refuses them (checked first).
    """
    import time

    if not address and not scheduler_file:
        raise ClusterError("give the scheduler's address (tcp://host:8786) or --scheduler-file")
    if address and scheduler_file:
        raise ClusterError("give the scheduler's address or --scheduler-file, not both")
    if isinstance(nthreads, bool) or not isinstance(nthreads, int) or nthreads < 1:
        raise ClusterError(f"nthreads must be a whole number of at least 1, not {nthreads!r}")
    if not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):
        raise ClusterError(f"timeout must be a positive number of seconds, not {timeout!r}")
    slots = device_slots(devices)
    check_worker_config(())    # a DASKCL_WARM name that is none: said here, not by each worker
    if listen:
        _check_listen(listen)
    try:
        if scheduler_file:
            address = _scheduler_file_address(scheduler_file, timeout,
                                              time.monotonic() + timeout)
        assert address is not None
        asyncio.run(_serve(address, slots, nthreads, name, local_directory, listen, timeout))
    except Terminated:      # SIGTERM (kill, a batch system): the workers closed as at Ctrl-C
        return 143
    except KeyboardInterrupt:
        pass
    return 0
