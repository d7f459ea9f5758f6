# SPDX-License-Identifier: GPL-2.0-or-later
"""A local cluster: :func:`local_cluster` starts a scheduler and one worker process per device
slot of this host, listening on loopback unless given ``host=`` (whoever can connect to a
dask scheduler or worker can run code in it)."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import dask
from distributed import SpecCluster

from .. import config
from ..errors import ClusterError
from .plugin import LOCAL_WORKER_ENV
from .slots import DeviceSlot, check_worker_config, device_slots, first_cause

__all__ = ["LocalDaskclCluster", "local_cluster"]

#: Where local clusters listen unless told otherwise: this host only.
_LOOPBACK = "127.0.0.1"


def local_cluster(
    n_workers: int | str | Sequence[str] | None = None,
    *,
    threads_per_worker: int = 1,
    warm_names: Sequence[str] = (),
    dashboard_address: str | None = ":0",
    silence_logs: int | bool = False,
    host: str = _LOOPBACK,
    **worker_options: Any,
) -> Any:
    """A ``distributed.SpecCluster`` on this host with one worker process per device.

    ``n_workers`` is passed to :func:`device_slots` (``None``: one worker per GPU, or one on the
    CPU device without a GPU).  Each worker is a nanny-supervised process (restarted if it dies),
    with ``threads_per_worker`` threads, bound and warmed by :class:`DaskclPlugin` through the
    ``daskcl.cluster`` preload.  ``silence_logs``: a logging level for distributed's loggers,
    in this process and in the workers from their start (``logging.WARNING`` keeps a command's
    output readable; ``DASK_LOGGING__DISTRIBUTED`` in this process's environment, when set,
    decides the workers' level instead).  The workers ignore SIGINT: a Ctrl-C reaches the
    process that started the cluster, which closes it (a Ctrl-C while the workers start is
    held until they have, then closes the cluster: ``KeyboardInterrupt``).  Extra keyword
    arguments go to
    every ``distributed.Nanny`` (``memory_limit``, ``local_directory``, ...).

    ``host``: the address that the scheduler, the nannies, the workers and the dashboard listen
    on; by default loopback (``127.0.0.1``), so that only processes of this host can connect.
    Anyone who can reach a dask scheduler or worker can run code there as this user: give
    another address (``"0.0.0.0"`` for every interface) only on a network you trust, or
    secure the cluster yourself (``distributed.Security``, TLS).  A ``dashboard_address``
    given as a port only (``":0"``, ``":8787"``) listens on ``host`` too.

    Parameters
    ----------
    n_workers : int, str, sequence of str or None
        The workers, as :func:`device_slots` takes them: ``None`` one per GPU (or one on the
        CPU device without a GPU); an int that many; device names or ``P:D`` indices, one
        worker each.
    threads_per_worker : int
        Threads of each worker (1: a device runs one kernel at a time).
    warm_names : sequence of str
        Kernels each worker builds before its first task (``"pnorm"``,
        ``"glm:binomial:logit"``).
    dashboard_address : str or None
        Where the dashboard listens (``":0"``: a free port; None: no dashboard).
    silence_logs : int or bool
        The level of distributed's loggers (False: unchanged).
    host : str
        The address every process of the cluster listens on (loopback by default).
    **worker_options
        Passed to every ``distributed.Nanny``.

    Returns
    -------
    LocalDaskclCluster
        The running cluster, a ``distributed.SpecCluster`` (a context manager that closes it);
        ``distributed.Client(cluster)`` submits to it.  Its workers are the device slots chosen
        here: ``scale`` and ``adapt`` raise :class:`~daskcl.errors.ClusterError` (start another
        cluster for other workers).

    Examples
    --------
    >>> from distributed import Client
    >>> from daskcl import nmath
    >>> with local_cluster() as cluster, Client(cluster) as client:         # doctest: +SKIP
    ...     client.submit(nmath.qnorm, 0.975).result()
    np.float64(1.9599639845400536)
    """
    from distributed import Scheduler

    _check_arguments(n_workers, threads_per_worker, host)
    slots = device_slots(n_workers)
    check_worker_config(warm_names)
    workers = _worker_specs(slots, threads_per_worker, warm_names, host, worker_options)
    # distributed's scheduler serves HTTP (health, metrics) on its default port 8787 when no
    # address is given: without a dashboard it takes a free port, never a fixed one
    scheduler = {"cls": Scheduler, "options": {
        "host": host, "dashboard_address": _on_host(dashboard_address or ":0", host),
        "dashboard": dashboard_address is not None}}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": _spawn_env(silence_logs)}), \
            _sigint_deferred() as interrupted:
        try:
            cluster = LocalDaskclCluster(workers=workers, scheduler=scheduler,
                                         name="daskcl", silence_logs=silence_logs)
        except Exception as exc:    # distributed's "Nanny failed to start": say why in a line
            raise ClusterError(f"the local cluster did not start: {first_cause(exc)}"
                               ) from exc
    if interrupted:     # a Ctrl-C while the workers started: said now, the cluster closed
        cluster.close()
        raise KeyboardInterrupt
    return cluster


def _check_arguments(n_workers: Any, threads_per_worker: Any, host: Any) -> None:
    """:func:`local_cluster`'s arguments of the wrong kind, refused in one line."""
    if not isinstance(host, str) or not host:
        raise ClusterError(f"local_cluster: host must be an address such as {_LOOPBACK!r}, "
                          f"got {host!r}")
    # a whole count: 0 would be distributed's default (a thread per core); True, 3.0 and "2"
    # (a device name substring, as "avx512" is) are not counts
    if isinstance(threads_per_worker, bool) or not isinstance(threads_per_worker, int) \
            or threads_per_worker < 1:
        raise ClusterError(f"local_cluster: threads_per_worker must be a whole number of "
                           f"threads, 1 or more, got {threads_per_worker!r}")
    if isinstance(n_workers, (bool, float)) \
            or (isinstance(n_workers, str) and n_workers.strip().isdigit()):
        raise ClusterError(f"local_cluster: n_workers is a count (an int), device names or "
                           f"'P:D' indices, or None, got {n_workers!r}")


def _worker_specs(slots: list[DeviceSlot], threads_per_worker: int, warm_names: Sequence[str],
                  host: str, worker_options: dict[str, Any]) -> dict[str, Any]:
    """The ``SpecCluster`` spec of a nanny per slot, each with the slot's environment."""
    from distributed import Nanny

    # settings made in code reach the worker processes through their environment; the device
    # is each slot's own
    warm_env = config.environ({k: v for k, v in config.explicit().items() if k != "device"})
    if warm_names:
        warm_env["DASKCL_WARM"] = ",".join(warm_names)
    # the workers leave SIGINT to this process (see _sigint_deferred)
    warm_env[LOCAL_WORKER_ENV] = "1"
    return {
        f"daskcl-{i}": {
            "cls": Nanny,
            "options": {
                "nthreads": threads_per_worker,
                "env": {**slot.env, **warm_env},
                "preload": ["daskcl.cluster"],
                "host": host,
                **worker_options,
            },
        }
        for i, slot in enumerate(slots)
    }


def _spawn_env(silence_logs: int | bool) -> dict[str, Any]:
    """The environment of a worker process as it is spawned: dask's, with the level of
    distributed's loggers where ``silence_logs`` sets it."""
    spawn_env = dict(dask.config.get("distributed.nanny.pre-spawn-environ") or {})
    if silence_logs:
        # A worker process configures distributed's logging as it imports it, before the
        # nanny's ``env`` or the preload apply: only its environment at spawn sets the level
        # (an explicit DASK_LOGGING__DISTRIBUTED in this process's environment wins).
        level = logging.WARNING if silence_logs is True else silence_logs
        spawn_env["DASK_LOGGING__DISTRIBUTED"] = logging.getLevelName(level).lower()
    return spawn_env


class LocalDaskclCluster(SpecCluster):
    """The cluster :func:`local_cluster` starts: one worker per device slot, chosen when it
    starts.  It does not scale: a worker added later would have no device slot."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]   # distributed's, untyped

    def scale(self, n: int = 0, memory: Any = None, cores: Any = None) -> Any:
        """Only to the workers it has, or to none (as closing does); anything else is a
        :class:`~daskcl.errors.ClusterError`."""
        if n == 0 or n == len(self.worker_spec):     # closing; or nothing to change
            return super().scale(n, memory=memory, cores=cores)  # type: ignore[no-untyped-call]
        raise ClusterError(_NO_SCALE.format(f" ({len(self.worker_spec)} here)"))

    def adapt(self, *args: Any, **kwargs: Any) -> Any:
        """A :class:`~daskcl.errors.ClusterError`: the workers are the device slots."""
        raise ClusterError(_NO_SCALE.format(""))


_NO_SCALE = ("a daskcl local cluster has one worker per device slot, chosen when it starts{}; "
             "it does not scale or adapt: start local_cluster(n_workers=...) anew")


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[list[bool]]:
    """Hold SIGINT back while the cluster starts its workers (from the main thread only), and
    say afterwards whether one came: the list yielded then holds ``True``.

    SIGINT is blocked in this thread, so the threads and worker processes started meanwhile
    inherit the block and never see a Ctrl-C: only this process takes it, and closes the
    cluster in order (a worker started later ignores SIGINT from its preload,
    :func:`dask_setup`).  A Ctrl-C that comes meanwhile is reported once the workers are up."""
    interrupted: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    if not (hasattr(signal, "pthread_sigmask") and hasattr(signal, "sigtimedwait")):
        # no signal masks (Windows) or no sigtimedwait (macOS): ignored meanwhile, so that the
        # workers still inherit it ignored; a Ctrl-C then is lost
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield interrupted
        finally:
            signal.signal(signal.SIGINT, old)
        return
    # multiprocessing starts its resource tracker with the first spawned process and unblocks
    # SIGINT in the starting thread afterwards, whatever it was: started now, before the block
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()

    def note(signum: int, frame: Any) -> None:
        interrupted.append(True)

    old = signal.signal(signal.SIGINT, note)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield interrupted
    finally:
        if signal.SIGINT in signal.sigpending():
            signal.sigtimedwait({signal.SIGINT}, 0)     # taken here: unblocking raises nothing
            interrupted.append(True)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, old)


def _on_host(address: str | None, host: str) -> str | None:
    """A dashboard address given as ``":port"`` (or a bare port) on ``host``; others as given."""
    if address is None:
        return None
    text = str(address)
    if text.startswith(":") or text.isdigit():
        from distributed.comm.addressing import unparse_host_port

        return str(unparse_host_port(host, int(text.lstrip(":") or 0)))
    return text
