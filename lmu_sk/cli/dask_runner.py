"""``lmu-sk features`` on Dask: Zarr stores and folders of ``.npy`` shards, any cluster.

Used when the input or the output is a Zarr store (a name ending in ``.zarr``) or a folder
of ``.npy`` shards, or when ``--scheduler`` names a dask.distributed scheduler. The input
becomes a dask array of row blocks read where they are computed (workers open the files
themselves: nothing is shipped from this process); each block's features are written by the
task that computed them, into its own rows of the output. The output is written under a
hidden name unique to the run and appears under its final name only once complete and
flushed to disk (:class:`~lmu_sk.cli.output_file.PartialOutput`).

Without ``--scheduler`` the blocks run on a pool of threads in this process, one block per
core; with it they run on the cluster's workers (which must see the same file system). A
cluster left without workers for ``--worker-timeout`` seconds ends the run. A ``.npy``
output is written with plain file writes at each block's offset (no memory map, so that a
full disk is an error, not a crash); an output that is a symbolic link is written through
to its target. An input block that cannot be read (a corrupt Zarr chunk, an I/O error) is
an :class:`InputReadError` naming the file, reported as a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import re
import stat
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FutureTimeoutError
from pathlib import Path
from typing import TextIO

import numpy as np

from .._extras import install_hint
from .common import (
    PROGRAM,
    ProgressBar,
    UsageError,
    batch_rows,
    check_free_space,
    check_input,
    check_input_file,
    check_npy_header,
    check_npy_name,
    check_regular_file,
    feature_error,
    make_transformer,
    not_regular_kind,
    npy_bytes,
    one_line,
    output_target,
    progress_bar,
    write_error,
)
from .output_file import PartialOutput, deferred_signals, npy_header

__all__ = ["InputReadError", "is_zarr_path", "open_input", "run_features_dask", "uses_dask"]

_NPY_SHARD_NAME = "part-{:05d}.npy"
# The names _NPY_SHARD_NAME gives (five digits or more): only these make a folder the
# command's own to replace.
_WRITTEN_SHARD = re.compile(r"part-[0-9]{5,}\.npy")
# Seconds that a --scheduler run waits for the scheduler to be connected and answer.
CONNECT_TIMEOUT = 10.0
# Seconds more before giving up on dask itself: a refused or unreachable address is retried
# until CONNECT_TIMEOUT, and dask's error then says which it was.
_CONNECT_GRACE = 2.0
# How often the cluster is asked whether it still has workers while no block finishes (s).
_POLL_SECONDS = 1.0


def _has_zarr_metadata(path: Path) -> bool:
    return any((path / name).exists() for name in (".zarray", "zarr.json"))


def is_zarr_path(path: Path) -> bool:
    """A Zarr store: a name ending in ``.zarr`` or a folder with Zarr metadata."""
    return path.suffix.lower() == ".zarr" or _has_zarr_metadata(path)


def _is_shard_folder(path: Path) -> bool:
    return path.is_dir() and not is_zarr_path(path)


def uses_dask(args: argparse.Namespace) -> bool:
    """Whether ``lmu-sk features`` with ``args`` runs through dask."""
    paths = (Path(args.input), Path(args.output))
    return (
        args.scheduler is not None
        or any(is_zarr_path(p) for p in paths)
        or _is_shard_folder(paths[0])
        or str(args.output).endswith(("/", os.sep))
        or _is_shard_folder(paths[1])
    )


class InputReadError(Exception):
    """Rows of the input could not be read (raised in the task that reads them)."""


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


def _read_rows(read: Callable[[], np.ndarray], path: str, start: int, stop: int) -> np.ndarray:
    """``read()``, with any failure an :class:`InputReadError` naming the file and rows."""
    try:
        return np.asarray(read())
    except Exception as exc:  # decompression, I/O and format errors of many types
        raise InputReadError(
            f"cannot read rows {start}-{stop - 1} of input {path}: {type(exc).__name__}: "
            f"{one_line(exc)}; the file is damaged or unreadable"
        ) from None


def _npy_rows(path: str, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of the .npy file at ``path``, read where the task runs."""

    def read():
        return np.array(np.load(path, mmap_mode="r", allow_pickle=False)[start:stop])

    return _read_rows(read, path, start, stop)


def _zarr_rows(path: str, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of the Zarr array at ``path``, read where the task runs."""
    import zarr

    return _read_rows(lambda: zarr.open_array(path, mode="r")[start:stop], path, start, stop)


def _concatenate(parts: list, path: Path):
    """The row-wise concatenation of the dask arrays ``parts`` read from ``path``."""
    import dask.array as da

    shapes = {p.shape[1:] for p in parts}
    dtypes = {p.dtype for p in parts}
    if len(shapes) > 1 or len(dtypes) > 1:
        raise UsageError(
            "the .npy shards differ in their trailing shape or dtype "
            f"({sorted(map(str, shapes))}, {sorted(map(str, dtypes))}); all shards must hold "
            "the same kind of sequences"
        )
    if not parts:
        raise UsageError(f"input holds no sequences: {path}")
    return da.concatenate(parts, axis=0)


def _row_blocks(read, path: Path, array, rows: Callable[[np.ndarray], int]) -> list:
    """Dask arrays of ``rows(array)`` rows each, read from ``path`` by ``read`` in the task."""
    import dask
    import dask.array as da

    step = max(1, rows(array))
    blocks = []
    for start in range(0, array.shape[0], step):
        stop = min(start + step, array.shape[0])
        # absolute: a worker of a cluster reads it from its own working folder
        block = dask.delayed(read)(os.path.abspath(path), start, stop)
        blocks.append(da.from_delayed(block, (stop - start, *array.shape[1:]), array.dtype))
    return blocks


def _npy_as_dask(source: Path, paths: list[Path], rows: Callable[[np.ndarray], int]):
    """The .npy ``paths`` of ``source`` (a file or a folder of shards), concatenated row-wise
    as a dask array of blocks of ``rows(file)``."""
    parts = []
    for path in paths:
        check_input_file(path)  # a shard that is a named pipe would block the read forever
        check_npy_header(path, "input shard")
        try:
            header = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise UsageError(f"input shard is not a readable .npy array: {path} ({exc})") from exc
        if header.ndim == 0:
            raise UsageError(f"input shard holds a single number, not sequences: {path}")
        parts += _row_blocks(_npy_rows, path, header, rows)
    return _concatenate(parts, source)


def _zarr_as_dask(path: Path, rows: Callable[[np.ndarray], int]):
    """The Zarr array at ``path`` as a dask array of blocks of ``rows(array)`` rows."""
    import zarr

    try:
        array = zarr.open_array(str(path), mode="r")
    except Exception as exc:  # zarr raises many types for a store it cannot read
        raise UsageError(f"input is not a readable Zarr array: {path} ({exc})") from exc
    if array.ndim == 0:
        raise UsageError(f"input Zarr array holds a single number, not sequences: {path}")
    return _concatenate(_row_blocks(_zarr_rows, path, array, rows), path)


def _shard_order(path: Path) -> tuple:
    """A shard's place among its folder's: its name, with every run of digits compared as
    a number (``part-100000.npy`` after ``part-99999.npy``, where the text sorts it
    before)."""
    # runs of ASCII digits at the odd places ('²' is a digit to str.isdigit, not to int);
    # the name itself last, so that part-1.npy and part-01.npy have an order of their own
    runs = re.split(r"([0-9]+)", path.name)
    return tuple(int(run) if i % 2 else run for i, run in enumerate(runs)), path.name


def open_input(path: Path, rows: int | Callable[[np.ndarray], int] | None):
    """The input at ``path`` as a dask array (Zarr store, .npy shard folder or .npy file).

    Each block is read by the task that uses it; one that cannot be read raises
    :class:`InputReadError` there.

    Parameters
    ----------
    path : Path
        A Zarr store, a folder of .npy shards or a .npy file.
    rows : int, callable or None
        Rows per block: a number, a function of each file's array (its ``shape``, ``ndim``
        and ``dtype``), or None for 4096.
    """
    if not callable(rows):
        fixed = rows or 4096

        def rows(array) -> int:
            return fixed

    if is_zarr_path(path):
        return _zarr_as_dask(path, rows)
    if path.is_dir():
        return _npy_as_dask(path, sorted(path.glob("*.npy"), key=_shard_order), rows)
    return _npy_as_dask(path, [path], rows)


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def _write_zarr(block: np.ndarray, store: str, start: int) -> int:
    import zarr

    zarr.open_array(store, mode="r+")[start : start + block.shape[0]] = block
    return block.shape[0]


def _write_npy_rows(block: np.ndarray, path: str, offset: int, dtype: str) -> int:
    """Write ``block`` at byte ``offset`` of the .npy file ``path`` (plain writes, no mmap)."""
    data = np.ascontiguousarray(block, dtype=np.dtype(dtype))
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(memoryview(data).cast("B"))
    return block.shape[0]


def _write_shard(block: np.ndarray, folder: str, index: int) -> int:
    np.save(os.path.join(folder, _NPY_SHARD_NAME.format(index)), block)
    return block.shape[0]


def _output_kind(name: str) -> str:
    """'zarr', 'shards' (an existing folder or a name ending in a separator) or 'npy'."""
    path = Path(name)
    if is_zarr_path(path):
        return "zarr"
    if name.endswith(("/", os.sep)):
        if path.suffix.lower() == ".npy" and not path.exists():  # (a new one)
            raise UsageError(
                f"output {name} names a folder of shards ending in .npy, which a later "
                f"output {path.name} would meet as a folder; name the folder without .npy "
                f"(e.g. {path.with_suffix('')}/)"
            )
        return "shards"
    if path.is_dir():
        if path.suffix == ".npy":  # named as a file: a folder of shards there is a surprise
            raise UsageError(
                f"output {name} is a folder, where its name asks for a .npy file; name a "
                f"file that is not a folder, or write {name}/ for a folder of shards"
            )
        return "shards"
    return "npy"


def _prepare_output(kind: str, partial: Path, F) -> None:
    """Lay out the (empty, just created) partial output for features ``F``."""
    if kind == "zarr":
        import zarr

        zarr.open_array(
            str(partial), mode="w", shape=F.shape, chunks=(F.chunks[0][0], *F.shape[1:]),
            dtype=F.dtype,
        )  # fmt: skip
    elif kind == "npy":  # the header only: each block's task writes its rows at their offset
        with open(partial, "r+b") as f:
            f.write(npy_header(F.shape, F.dtype))


def _write_tasks(kind: str, target: str, F) -> list:
    """One delayed task per row block: compute its features and write them."""
    import dask

    starts = np.cumsum((0, *F.chunks[0]))[:-1]
    blocks = F.to_delayed().ravel()
    if kind == "npy":
        header = len(npy_header(F.shape, F.dtype))
        row_bytes = int(np.prod(F.shape[1:])) * F.dtype.itemsize
        dtype = F.dtype.str
        return [
            dask.delayed(_write_npy_rows)(block, target, header + int(start) * row_bytes, dtype)
            for block, start in zip(blocks, starts, strict=True)
        ]
    write = {"zarr": _write_zarr, "shards": _write_shard}[kind]
    return [
        dask.delayed(write)(block, target, index if kind == "shards" else int(start))
        for index, (block, start) in enumerate(zip(blocks, starts, strict=True))
    ]


def _check_output_path(output: Path, input_path: Path, kind: str) -> Path:
    """Check that ``output`` can be written as ``kind``; return the path to replace.

    A symbolic link is written through: the returned path is its target.
    """
    if kind == "npy":
        check_npy_name(output)
    target = output_target(output)
    written, read = target.resolve(), input_path.resolve()
    # the output replaced whole (a folder of shards is swapped out): neither the input nor
    # a folder holding it, nor a file inside the input's folder of shards
    if written == read or written in read.parents or read in written.parents:
        raise UsageError(f"output would overwrite the input: {output}")
    if not target.parent.exists():
        raise UsageError(f"output folder does not exist: {target.parent}")
    if not target.exists():
        return target
    mode = target.stat().st_mode
    if kind == "npy":
        check_regular_file(target, output)
    elif kind == "zarr" and not (stat.S_ISDIR(mode) and _has_zarr_metadata(target)):
        raise UsageError(f"output exists and is not a Zarr store: {output}")
    elif kind == "shards":
        if not stat.S_ISDIR(mode):
            what = "a regular file" if stat.S_ISREG(mode) else not_regular_kind(mode)
            raise UsageError(
                f"output {output} is {what}, not a folder for .npy shards; name a new folder"
            )
        # a folder of shards written by the command is replaced as a whole (swapped with
        # the new one); a folder holding anything else is not lmu-sk's to replace: the
        # user's own .npy files (labels.npy, weights.npy) were lost that way
        others = sorted(entry.name for entry in target.iterdir() if not _is_shard(entry))
        if others:
            raise UsageError(
                f"output folder {output} holds more than .npy shards ({others[0]}"
                f"{', ...' if len(others) > 1 else ''}): only a folder of the part-NNNNN.npy "
                "shards that lmu-sk writes is replaced; name another folder, or delete this "
                "one first"
            )
    return target


def _is_shard(entry: Path) -> bool:
    """Whether ``entry`` of a folder is a shard as the command writes them: a regular file
    named ``part-NNNNN.npy``."""
    return (
        bool(_WRITTEN_SHARD.fullmatch(entry.name)) and entry.is_file() and not entry.is_symlink()
    )


# ----------------------------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------------------------


def _connect(address: str):
    """A dask.distributed client of the scheduler at ``address``, or a UsageError saying why
    there is none.

    The whole connection is bounded by :data:`CONNECT_TIMEOUT` (and a little grace): dask's
    own ``timeout`` covers opening the TCP connection but not the handshake after it, so a
    service that accepts and stays silent (an HTTP server) held the command forever, and one
    that greets first (an SSH server) had its greeting read as a message length (a failed
    allocation of exbibytes, a traceback). The client is made in a daemon thread that is
    left behind when it does not finish in time: it cannot keep the process from exiting,
    and a client that it makes too late is closed.
    """
    try:
        from distributed import Client
    except ImportError as exc:
        raise UsageError(f"--scheduler needs dask.distributed: {install_hint('dask')}") from exc
    failed = f"cannot connect to the scheduler at {address}"
    check = (
        f"check that {address} is the address of a running dask.distributed scheduler "
        "(tcp://HOST:PORT, port 8786 by default) that this machine can reach"
    )
    connecting: Future = Future()
    # a Client makes itself dask's default scheduler before it connects, and one that
    # fails (or is given up on) leaves that setting: dask's computations in this process
    # would then ask for a client that is not there
    default = _default_scheduler()

    def connect() -> None:
        try:
            connecting.set_result(Client(address, timeout=f"{CONNECT_TIMEOUT:g}s"))
        except BaseException as exc:  # whatever a reply that is not dask's makes of dask
            _restore_default_scheduler(default)
            _close_unconnected_clients(Client)
            connecting.set_exception(exc)

    threading.Thread(target=connect, name="lmu-sk scheduler connection", daemon=True).start()
    patience = connect_patience()
    try:
        return connecting.result(timeout=patience)
    except BaseException as exc:
        if not (connecting.done() and exc is connecting.exception()):
            # the wait ended, not the connection: no answer in time, or a signal (a client
            # made later must not linger)
            connecting.add_done_callback(_close_late_client)
            _restore_default_scheduler(default)
            # (concurrent.futures' own TimeoutError: not yet the builtin on Python 3.10)
            if isinstance(exc, (TimeoutError, FutureTimeoutError)):
                raise UsageError(
                    f"{failed}: no answer as a dask scheduler within {patience:g} s; {check}"
                ) from None
            raise
        error = exc
    if isinstance(error, (OSError, ValueError, TypeError)):
        # refused, unreachable, timed out, a bad address: dask's message says which
        reason = one_line(error)
    else:  # a reply that is not dask's protocol fails in many ways (MemoryError, ...)
        reason = f"the service there does not answer as a dask scheduler ({type(error).__name__})"
    raise UsageError(f"{failed}: {reason}; {check}") from error


def connect_patience() -> float:
    """Seconds a --scheduler run waits for its scheduler at most: dask's own timeout and
    the grace for its error to come through."""
    return CONNECT_TIMEOUT + _CONNECT_GRACE


_UNSET = object()


def _default_scheduler():
    """dask's configured default scheduler (``_UNSET`` where none is)."""
    import dask

    return dask.config.config.get("scheduler", _UNSET)


def _restore_default_scheduler(value) -> None:
    """Set dask's default scheduler back to ``value`` (from :func:`_default_scheduler`)."""
    import dask

    if value is _UNSET:
        dask.config.config.pop("scheduler", None)
    else:
        dask.config.config["scheduler"] = value


def _close_unconnected_clients(Client) -> None:
    """Close the clients registered as dask's default that never connected: a Client
    registers itself before connecting, and one that fails stays the 'active client'
    (dask's local computations in this process then warn of it)."""
    while True:
        try:
            current = Client.current()
        except ValueError:  # none left
            return
        if current.status == "running":  # (the user's own, connected)
            return
        with contextlib.suppress(Exception):
            current.close()
        if current.status != "closed":
            return


def _close_late_client(connecting: Future) -> None:
    """Close the client of a connection given up on, should it come after all."""
    if not connecting.cancelled() and connecting.exception() is None:
        with contextlib.suppress(Exception):
            connecting.result().close()


def _worker_count(client) -> int:
    """Workers the scheduler knows now; 0 when it cannot be asked."""
    try:
        return len(client.nthreads())
    except Exception:  # a lost scheduler fails in many ways: as good as no workers
        return 0


# Task states of a worker in which a task of ours may still write (or start writing):
# anything but done, failed or gone. A task cancelled while executing stays "cancelled"
# (or "resumed") until its code returns.
_SETTLED_STATES = frozenset({"memory", "error", "released", "forgotten"})


def _unsettled(keys: list, dask_worker=None) -> list:
    """The ``keys`` a worker still holds in a state where they may run (run on workers)."""
    tasks = dask_worker.state.tasks
    return [key for key in keys if key in tasks and tasks[key].state not in _SETTLED_STATES]


def _wait_for_workers_to_stop(client, futures: list, patience: float) -> None:
    """After cancelling ``futures``: wait until no worker still runs one of their tasks.

    Cancelling cannot stop a task that is already running: its code runs to its end and
    writes its block. The partial output must be removed only after that, or a late write
    recreates it (a Zarr store's folders are created by the writes). Waits at most
    ``patience`` seconds (0: as long as it takes); a worker that cannot be asked (lost) is
    taken as stopped.
    """
    keys = [future.key for future in futures]
    deadline = time.monotonic() + patience if patience else None
    while deadline is None or time.monotonic() < deadline:
        try:
            running = client.run(_unsettled, keys, on_error="return")
        except Exception:  # the scheduler is gone: nothing more to wait for
            return
        if not any(isinstance(left, list) and left for left in running.values()):
            return
        time.sleep(0.1)


def _run_on_cluster(
    tasks: list, rows: list[int], client, progress: ProgressBar, patience: float
) -> None:
    """Compute the write tasks (of ``rows`` rows each) on the cluster.

    A block counts as written once its task has finished, even if the worker holding its
    result (only a row count) dies afterwards. Gives up with a UsageError once the cluster
    has had no workers for ``patience`` seconds (0: never). On an error, a signal or giving
    up, tasks not yet started are cancelled and those already running on workers (which
    cannot be stopped from here) are waited for, up to ``patience`` seconds, so that none
    writes after the partial output is removed.
    """
    finished: queue.SimpleQueue = queue.SimpleQueue()
    futures = client.compute(tasks)
    for future, n_rows in zip(futures, rows, strict=True):
        future.add_done_callback(lambda future, n_rows=n_rows: finished.put((future, n_rows)))
    done, left = 0, len(futures)
    no_workers_since = None
    try:
        while left:
            try:
                future, n_rows = finished.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if _worker_count(client):
                    no_workers_since = None
                    continue
                now = time.monotonic()
                no_workers_since = no_workers_since or now
                if patience and now - no_workers_since >= patience:
                    raise UsageError(
                        f"the cluster at {client.scheduler.address} has had no workers for "
                        f"{patience:g} s; gave up (--worker-timeout sets how long to wait)"
                    ) from None
                continue
            if future.status == "error":
                future.result()  # raises the task's exception
            if future.status == "cancelled":
                raise UsageError(
                    f"the run on the cluster at {client.scheduler.address} was cancelled "
                    "(the scheduler stopped or restarted)"
                )
            future.release()  # "finished", or "lost" with its worker: the rows are written
            done += n_rows
            left -= 1
            progress.update(done)
    except BaseException:
        client.cancel(futures)
        _wait_for_workers_to_stop(client, futures, patience)
        raise


def _run_locally(tasks: list, progress: ProgressBar) -> None:
    """Compute the write tasks on a pool of threads, one per core.

    On an error or a signal, blocks not yet started are cancelled and blocks already running
    are waited for (they write into the partial output, removed next).
    """
    done = 0
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
    try:
        # a signal while the pool starts its threads is held until every task is submitted:
        # one raised inside Thread.start left a running thread that shutdown() does not
        # wait for, whose late shard the partial output's removal then missed
        with deferred_signals():
            running = [pool.submit(task.compute, scheduler="synchronous") for task in tasks]
        for future in as_completed(running):
            done += future.result()
            progress.update(done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_features_dask(args: argparse.Namespace, stderr: TextIO) -> int:
    """Carry out ``lmu-sk features`` through dask; raises UsageError for bad inputs."""
    input_path, output_path = Path(args.input), Path(args.output)
    kind = _output_kind(str(args.output))
    if not input_path.exists():
        raise UsageError(f"input not found: {input_path}")
    if _is_shard_folder(input_path) and not any(input_path.glob("*.npy")):
        raise UsageError(f"input folder holds no .npy shards: {input_path}")
    target = _check_output_path(output_path, input_path, kind)
    try:
        import dask.array  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            f"Zarr stores, .npy shard folders and --scheduler need dask: {install_hint('dask')}"
        ) from exc
    if kind == "zarr" or is_zarr_path(input_path):
        try:
            import zarr  # noqa: F401
        except ImportError as exc:
            raise UsageError(f"Zarr stores need zarr: {install_hint('dask')}") from exc
    client = _connect(args.scheduler) if args.scheduler is not None else None
    try:
        return _run(args, stderr, input_path, output_path, target, kind, client)
    except InputReadError as exc:
        raise UsageError(str(exc)) from exc
    finally:
        if client is not None:
            client.close()


def _block_rows(args: argparse.Namespace, array) -> int:
    """Rows per block of an input laid out as ``args.layout`` says (any shape)."""
    return batch_rows(args, array) if array.ndim in (2, 3) else 4096


def _needed_bytes(kind: str, F) -> int | None:
    """Bytes the output of features ``F`` takes; None for Zarr (compressed: unknown)."""
    if kind == "npy":
        return npy_bytes(F.shape, F.dtype)
    if kind == "shards":
        return sum(npy_bytes((rows, *F.shape[1:]), F.dtype) for rows in F.chunks[0])
    return None


def _run(args, stderr, input_path, output_path, target, kind, client) -> int:
    X = open_input(input_path, lambda array: _block_rows(args, array))
    check_input(X, input_path, args.layout)
    rows = batch_rows(args, X)  # before the transpose: it reads X as args.layout says
    if X.ndim == 3 and args.layout == "channels-first":
        X = X.transpose(0, 2, 1)
    X = X.rechunk({0: rows})
    n_rows = X.shape[0]
    try:
        transformer = make_transformer(args).fit(X)
        F = transformer.transform(X)
    except (TypeError, ValueError) as exc:
        raise UsageError(feature_error(exc)) from exc
    needed = _needed_bytes(kind, F)
    if needed is not None:
        check_free_space(target, needed, output_path)
    try:
        partial = PartialOutput(target, folder=kind != "npy")
    except OSError as exc:
        raise UsageError(
            f"output path not writable: {output_path} ({exc.strerror or one_line(exc)})"
        ) from exc
    started = time.perf_counter()
    progress = progress_bar(n_rows, args, stderr)
    try:
        _prepare_output(kind, partial.path, F)
        progress.update(0)
        tasks = _write_tasks(kind, os.path.abspath(partial.path), F)
        try:
            if client is None:
                _run_locally(tasks, progress)
            else:
                _run_on_cluster(tasks, F.chunks[0], client, progress, args.worker_timeout)
        except ValueError as exc:
            raise UsageError(feature_error(exc)) from exc
        partial.commit()
    except OSError as exc:
        raise UsageError(write_error(output_path, exc, needed)) from exc
    finally:
        progress.close()
        partial.discard()
    if not args.quiet:
        elapsed = time.perf_counter() - started
        where = f" on {args.scheduler}" if args.scheduler else ""
        stderr.write(
            f"{PROGRAM}: wrote {output_path}: {F.dtype} features of shape {F.shape} "
            f"({n_rows} sequences in {len(F.chunks[0])} "
            f"block{'s' if len(F.chunks[0]) != 1 else ''}{where}, {elapsed:.2f}s)\n"
        )
    return 0
