"""Safe output for the ``lmu-sk`` command line: partial outputs, disk space and signals.

``lmu-sk features`` writes its output under a hidden name next to the final one,
``.NAME.PID-TOKEN.partial``, unique to the run, and renames it only once complete and
flushed to disk. This module keeps that promise when things go wrong:

* :class:`PartialOutput` creates the hidden file or folder and commits it: everything in it
  is flushed to disk (``fsync``), then one rename gives it the final name (for a folder
  replacing a folder, an atomic swap of the two names where the system has one), then the
  folder holding it is flushed, then the old output is removed. Until that rename the old
  output stays as it was. A run killed outright (``kill -9``, a crash, a power cut) cannot
  remove its partial output: the next run writing the same output removes the partial
  outputs of processes that are no longer running (:func:`remove_stale_partials`).
* :class:`PartialNpy` writes a ``.npy`` file with plain file writes (a header, then the rows
  in order) instead of a sparse memory map, so that a full disk is an ``OSError``
  (``ENOSPC``) rather than a ``SIGBUS`` that kills the process and leaves the partial file.
* :func:`interruptible` turns SIGINT, SIGTERM and SIGHUP into :class:`Interrupted` for the
  duration of a run, so that ``finally`` blocks remove the partial output; the command line
  then exits with status ``128 + signum``. Creating the partial output and committing it
  hold a signal until they are done.
"""

from __future__ import annotations

import ctypes
import errno
import io
import os
import re
import secrets
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = [
    "Interrupted",
    "PartialNpy",
    "PartialOutput",
    "deferred_signals",
    "free_bytes",
    "hidden_name_length",
    "interruptible",
    "is_out_of_space",
    "npy_header",
    "remove_stale_partials",
]

_SIGNAL_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")


class Interrupted(BaseException):
    """A run stopped by a signal (a ``BaseException``, like ``KeyboardInterrupt``).

    Parameters
    ----------
    signum : int
        The signal received.
    complete : bool
        Whether the output had already taken its final name when the signal arrived.
    """

    def __init__(self, signum: int, complete: bool = False):
        super().__init__(signum)
        self.signum = signum
        self.complete = complete

    @property
    def name(self) -> str:
        """The signal's name, e.g. ``'SIGTERM'``."""
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    @property
    def exit_status(self) -> int:
        """The conventional exit status of a process stopped by the signal: ``128 + signum``."""
        return 128 + self.signum


class _State:
    """What the signal handler knows; signals are process-wide, so is this."""

    def __init__(self) -> None:
        self.received: int | None = None  # the first signal of the run
        self.deferring = 0  # > 0 while a signal must wait (creating or renaming the output)
        self.complete = False  # the output has its final name
        # the partial outputs neither committed nor discarded: leaving interruptible()
        # removes them, so a signal between a PartialOutput's creation and its owner's
        # try/finally leaves nothing behind
        self.pending: list[PartialOutput] = []


_state = _State()


def _handle(signum: int, frame) -> None:
    if _state.received is not None:
        return  # already stopping: repeats must not interrupt the clean-up
    _state.received = signum
    if not _state.deferring:
        raise Interrupted(signum, _state.complete)


@contextmanager
def interruptible() -> Iterator[None]:
    """Raise :class:`Interrupted` on SIGINT, SIGTERM or SIGHUP while the block runs.

    Signals that the process ignores (``nohup`` ignores SIGHUP) stay ignored; the previous
    handlers are restored on leaving. Outside the main thread, where Python cannot set
    signal handlers, this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for name in _SIGNAL_NAMES:
        signum = getattr(signal, name, None)
        if signum is None or signal.getsignal(signum) == signal.SIG_IGN:
            continue
        previous[signum] = signal.signal(signum, _handle)
    _state.__init__()
    try:
        yield
    finally:
        for partial in list(_state.pending):
            partial.discard()
        for signum, handler in previous.items():
            # None: a handler not installed from Python; the default is the best guess
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        _state.__init__()


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold a signal that arrives during the block until the block is done."""
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
    if _state.received is not None and not _state.deferring:
        raise Interrupted(_state.received, _state.complete)


# ----------------------------------------------------------------------------------------------
# Disk space
# ----------------------------------------------------------------------------------------------


def is_out_of_space(exc: OSError) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full."""
    return exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def free_bytes(folder: Path) -> int | None:
    """Bytes free to this user in the file system holding ``folder``; None when unknown."""
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return None
    return usage.free if usage.total else None  # some network file systems report all zeros


def npy_header(shape: tuple[int, ...], dtype: np.dtype) -> bytes:
    """The ``.npy`` header of a C-ordered array of ``shape`` and ``dtype``."""
    header = {
        "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
        "fortran_order": False,
        "shape": tuple(int(n) for n in shape),
    }
    buffer = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buffer, header)
    except ValueError:  # a header over 64 KiB: version 2.0 allows more
        buffer = io.BytesIO()
        np.lib.format.write_array_header_2_0(buffer, header)
    return buffer.getvalue()


# ----------------------------------------------------------------------------------------------
# Committing an output: flushed to disk, then one rename
# ----------------------------------------------------------------------------------------------

_AT_FDCWD = -100  # Linux: paths relative to the working directory
_RENAME_EXCHANGE = 2  # Linux renameat2 flag: swap two names atomically
_NOT_SUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}


_TOKEN_BYTES = 4


def _hidden_name(target: Path, suffix: str) -> Path:
    """A name beside ``target`` that no other run picks: ``.NAME.PID-TOKEN.SUFFIX``."""
    token = secrets.token_hex(_TOKEN_BYTES)
    return target.with_name(f".{target.name}.{os.getpid()}-{token}.{suffix}")


def hidden_name_length(target: Path) -> int:
    """Bytes of the name of ``target``'s partial output (the longest a process id gets)."""
    return len(os.fsencode(f".{target.name}.{'9' * 10}-{'0' * 2 * _TOKEN_BYTES}.partial"))


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (or cannot be told: then True)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's process, alive
        return True
    return True


def remove_stale_partials(target: Path) -> list[Path]:
    """Remove the partial outputs of ``target`` left by processes no longer running.

    A run killed outright (``SIGKILL``, a crash) leaves its ``.NAME.PID-TOKEN.partial``.
    Those whose process id is not running on this machine are removed; those of running
    processes (another run writing the same output, or a process that took a dead run's
    id) are kept. Only on POSIX systems, where a process can be probed without signalling
    it. Returns the paths removed.
    """
    if os.name != "posix":
        return []
    pattern = re.compile(
        rf"\.{re.escape(target.name)}\.(\d+)-[0-9a-f]{{{2 * _TOKEN_BYTES}}}\.partial"
    )
    removed = []
    try:
        entries = list(os.scandir(target.parent if str(target.parent) else "."))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        pid = int(match.group(1))
        if pid == os.getpid() or _running(pid):
            continue
        path = Path(entry.path)
        _remove(path)
        removed.append(path)
    return removed


def _fsync(path: str | os.PathLike, folder: bool = False) -> None:
    """Flush the file or folder at ``path`` to disk."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if folder else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError as exc:
        # some file systems cannot flush a folder; its entries are then as durable as it allows
        if not (folder and exc.errno in _NOT_SUPPORTED):
            raise
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    """Flush ``path`` to disk: a file, or a folder with everything in it (wherever written)."""
    if not path.is_dir():
        _fsync(path)
        return
    for root, _, files in os.walk(path, topdown=False):  # contents first, ``path`` last
        for name in files:
            _fsync(os.path.join(root, name))
        _fsync(root, folder=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` in one atomic step; False where that is not supported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2  # glibc 2.28, musl 1.2.2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NOT_SUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def _remove(path: Path) -> None:
    """Remove the file or folder at ``path``, if any; errors are ignored (best effort)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _put_in_place(new: Path, target: Path) -> Path | None:
    """Give ``new`` the name ``target``; return where a replaced folder now is, to remove.

    A file replaces a file in one atomic rename. A folder replacing a folder swaps names with
    it atomically where the system can (Linux ``renameat2(RENAME_EXCHANGE)``); elsewhere the
    old folder is renamed aside first, so that for the moment between the two renames the
    name ``target`` is missing but neither output is lost.
    """
    if new.is_dir() and target.is_dir() and not target.is_symlink():
        if _exchange(new, target):
            return new
        aside = _hidden_name(target, "old")
        os.rename(target, aside)
        try:
            os.rename(new, target)
        except BaseException:
            os.rename(aside, target)
            raise
        return aside
    os.replace(new, target)
    return None


class PartialOutput:
    """An output written under a hidden name beside ``target``, then committed or discarded.

    The hidden name, ``.NAME.PID-TOKEN.partial``, belongs to this run alone, so that two runs
    writing the same output do not share one. :meth:`commit` flushes everything written to
    disk and then renames it to ``target`` (the one step that makes the output visible);
    :meth:`discard` removes it instead, and is safe to call at any time, and again.

    Parameters
    ----------
    target : Path
        The final name. The partial output is created in the same folder, so that the rename
        is atomic.
    folder : bool
        Create an empty folder (for a Zarr store or .npy shards) rather than an empty file.

    Raises
    ------
    OSError
        When the folder of ``target`` cannot be written (read-only, missing, not a folder).
    """

    def __init__(self, target: Path, folder: bool = False):
        self.target = target
        self.path: Path | None = None
        remove_stale_partials(target)
        try:
            with deferred_signals():  # a signal now waits until there is a name to remove
                self.path = self._create(target, folder)
                _state.pending.append(self)
        except BaseException:
            self.discard()
            raise

    @staticmethod
    def _create(target: Path, folder: bool) -> Path:
        while True:
            path = _hidden_name(target, "partial")
            try:
                if folder:
                    os.mkdir(path)  # the umask applies, as to any new folder
                else:
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except FileExistsError:
                continue
            return path

    def commit(self) -> None:
        """Flush the output to disk and give it its final name, replacing what was there.

        What was there is removed only once the new output has its name: a signal meanwhile
        waits until that is done, and a crash leaves the old output or the new one under the
        name (or, where names cannot be swapped atomically, both under hidden names).
        """
        _fsync_tree(self.path)
        with deferred_signals():
            replaced = _put_in_place(self.path, self.target)
            self.path = replaced  # what is left to remove: the old output, if a folder
            _state.complete = True
            _fsync(self.target.parent, folder=True)  # the rename itself, to disk
            self.discard()

    def discard(self) -> None:
        """Remove the partial output, if any (errors are ignored: this is clean-up)."""
        path, self.path = self.path, None
        if self in _state.pending:
            _state.pending.remove(self)
        if path is not None:
            _remove(path)


# ----------------------------------------------------------------------------------------------
# Writing a .npy file row block by row block
# ----------------------------------------------------------------------------------------------


def _write_all(fd: int, data: memoryview) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than it is given)."""
    while data:
        data = data[os.write(fd, data) :]


class PartialNpy(PartialOutput):
    """A ``.npy`` file written in order under a hidden name beside ``target``.

    Call :meth:`start` with the array's shape and dtype, :meth:`append` its rows in order,
    then :meth:`commit` to give it the name ``target``; :meth:`discard` (safe to call at any
    time, and again) removes it instead. Write errors, a full disk included, are ``OSError``.

    Parameters
    ----------
    target : Path
        The final name.
    """

    def __init__(self, target: Path):
        self._fd: int | None = None
        self._row_shape: tuple[int, ...] = ()
        self._dtype: np.dtype | None = None
        self._rows_left = 0
        super().__init__(target)
        try:
            self._fd = os.open(self.path, os.O_WRONLY)
        except BaseException:
            self.discard()
            raise

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has written the header."""
        return self._dtype is not None

    def start(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        """Write the header of an array of ``shape`` and ``dtype``."""
        self._row_shape, self._dtype = tuple(shape[1:]), np.dtype(dtype)
        self._rows_left = int(shape[0])
        _write_all(self._fd, memoryview(npy_header(shape, self._dtype)))

    def append(self, rows: np.ndarray) -> None:
        """Write the next ``rows`` (an array of the shape given to :meth:`start` less rows)."""
        if rows.shape[1:] != self._row_shape or rows.shape[0] > self._rows_left:
            raise ValueError(
                f"rows of shape {rows.shape} do not continue an array of rows "
                f"{self._row_shape} with {self._rows_left} left"
            )
        data = np.ascontiguousarray(rows, dtype=self._dtype)
        _write_all(self._fd, memoryview(data).cast("B"))
        self._rows_left -= rows.shape[0]

    def commit(self) -> None:
        """Flush the file to disk and give it its final name, replacing what was there."""
        if not self.started or self._rows_left:
            raise ValueError(f"the array is incomplete: {self._rows_left} rows not written")
        self._close()
        super().commit()

    def discard(self) -> None:
        """Close and remove the partial file, if any."""
        self._close()
        super().discard()

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
