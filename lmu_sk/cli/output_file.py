"""Safe output for the ``lmu-sk`` command line: partial files, disk space and signals.

``lmu-sk features`` writes its output under a hidden ``.partial`` name next to the final one
and renames it only once complete. This module keeps that promise when things go wrong:

* :class:`PartialNpy` writes a ``.npy`` file with plain file writes (a header, then the rows
  in order) instead of a sparse memory map, so that a full disk is an ``OSError``
  (``ENOSPC``) rather than a ``SIGBUS`` that kills the process and leaves the partial file.
* :func:`interruptible` turns SIGINT, SIGTERM and SIGHUP into :class:`Interrupted` for the
  duration of a run, so that ``finally`` blocks remove the partial output; the command line
  then exits with status ``128 + signum``. Renaming the partial output and creating it wait
  for a signal to be handled until they are done (:func:`replace`).
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = [
    "Interrupted",
    "PartialNpy",
    "free_bytes",
    "interruptible",
    "is_out_of_space",
    "npy_header",
    "replace",
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
        for signum, handler in previous.items():
            # None: a handler not installed from Python; the default is the best guess
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        _state.__init__()


@contextmanager
def _deferred() -> Iterator[None]:
    """Hold a signal that arrives during the block until the block is done."""
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
    if _state.received is not None and not _state.deferring:
        raise Interrupted(_state.received, _state.complete)


def replace(partial: Path, target: Path) -> None:
    """Rename ``partial`` to ``target``, replacing a file or a folder there.

    A signal arriving meanwhile is handled once the rename is done, so that the output is
    either the old one or the complete new one, never lost in between.
    """
    with _deferred():
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(partial, target)
        _state.complete = True


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
# Writing a .npy file row block by row block
# ----------------------------------------------------------------------------------------------


def _write_all(fd: int, data: memoryview) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than it is given)."""
    while data:
        data = data[os.write(fd, data) :]


def _give_default_permissions(path: Path) -> None:
    """Make a temporary file readable like any newly created one (``0o666`` less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


class PartialNpy:
    """A ``.npy`` file written in order under a hidden ``.partial`` name next to ``target``.

    Call :meth:`start` with the array's shape and dtype, :meth:`append` its rows in order,
    then :meth:`commit` to give it the name ``target``; :meth:`discard` (safe to call at any
    time, and again) removes it instead. Write errors, a full disk included, are ``OSError``.

    Parameters
    ----------
    target : Path
        The final name. The partial file is created in the same folder, so that the rename
        is atomic.
    """

    def __init__(self, target: Path):
        self.target = target
        self.path: Path | None = None
        self._fd: int | None = None
        self._row_shape: tuple[int, ...] = ()
        self._dtype: np.dtype | None = None
        self._rows_left = 0
        try:
            with _deferred():  # a signal now waits until there is a name to remove
                fd, name = tempfile.mkstemp(
                    dir=target.parent, prefix=f".{target.name}.", suffix=".partial"
                )
                self._fd, self.path = fd, Path(name)
            _give_default_permissions(self.path)
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
        os.fsync(self._fd)
        fd, self._fd = self._fd, None
        os.close(fd)
        replace(self.path, self.target)
        self.path = None

    def discard(self) -> None:
        """Close and remove the partial file, if any."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        path, self.path = self.path, None
        if path is not None:
            path.unlink(missing_ok=True)
