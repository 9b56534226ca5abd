"""Progress of long computations on standard error, for ``verbose=True``.

On a terminal the bar is redrawn in place with ``'\\r'``; on anything else (a log file, a
pipe, a notebook's captured stream) it writes plain lines, a bounded number of them.
"""

from __future__ import annotations

import math
import numbers
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import numpy as np

__all__ = ["ProgressBar", "StepLog", "check_verbose", "verbosity"]


def check_verbose(verbose) -> bool:
    """Validate a ``verbose`` parameter (a bool or an integer >= 0); return whether it is on.

    Raises
    ------
    TypeError
        If ``verbose`` is neither a bool nor an integer.
    ValueError
        If it is a negative integer.
    """
    if isinstance(verbose, (bool, np.bool_)):
        return bool(verbose)
    if not isinstance(verbose, numbers.Integral):
        raise TypeError(
            f"verbose must be True, False or an integer >= 0 (0 is quiet); got {verbose!r}."
        )
    if verbose < 0:
        raise ValueError(f"verbose must be True, False or an integer >= 0; got {verbose}.")
    return verbose > 0


def verbosity(verbose) -> int:
    """The level of a valid ``verbose`` parameter: 0 quiet, ``True`` 1, an integer itself."""
    return int(verbose) if check_verbose(verbose) else 0


def _emit(stream, text: str) -> None:
    """Write and flush ``text``; nothing where there is nowhere to write (``sys.stderr``
    is None under pythonw or ``2>&-``, or a closed stream): progress never stops a fit."""
    if stream is None:
        return
    try:
        stream.write(text)
        stream.flush()
    except (ValueError, OSError):  # (a closed stream)
        pass


# The unfinished line of each stream (by id, the stream held while it is: no other takes
# its id) and what wrote it (a step, a bar): a line written meanwhile first ends it, and
# the step whose line was ended writes its time on a line of its own (a compile notice
# within "screening 20 channels against y... ").
_open_lines: dict[int, tuple[object, object]] = {}


def _line_owner(stream) -> object:
    """What wrote the unfinished line on ``stream``, or ``None``."""
    entry = _open_lines.get(id(stream))
    return None if entry is None else entry[1]


def _end_others_line(stream, owner: object = None) -> None:
    """End the unfinished line on ``stream`` unless ``owner`` wrote it."""
    current = _line_owner(stream)
    if current is not None and current is not owner:
        _emit(stream, "\n")
        del _open_lines[id(stream)]


def _write_open(stream, text: str, owner: object) -> None:
    """Write ``text``, a line that ``owner`` finishes later, on a line of its own."""
    _end_others_line(stream, owner)
    _emit(stream, text)
    _open_lines[id(stream)] = (stream, owner)


def _finish_own_line(stream, owner: object, text: str, whole: str) -> None:
    """End ``owner``'s line with ``text`` or, where something ended it meanwhile, write
    ``whole`` as a line of its own."""
    if _line_owner(stream) is owner:
        del _open_lines[id(stream)]
        _emit(stream, text)
    else:
        _end_others_line(stream)
        _emit(stream, whole)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


class ProgressBar:
    """A one-line text progress bar over ``total`` units.

    Parameters
    ----------
    total : int
        Number of units to process.
    stream : text stream, optional
        Where to write; standard error (looked up when the bar is made) by default.
    enabled : bool, default=True
        Write nothing when False.
    width : int, default=30
        Characters of the bar itself (terminal mode).
    plain : bool or None, default=None
        Write plain lines instead of redrawing one line with ``'\\r'``. ``None`` draws on
        a terminal and writes plain lines anywhere else.
    unit : str, default='rows'
        Name of the units, for the text.
    label : str, default=''
        Text before the bar, e.g. ``'LMUFeatures: '``.
    redraw_interval : float, default=0.1
        Terminal mode: seconds between redraws (the last one is always drawn).
    line_interval : float, default=10.0
        Plain mode: a line at each further tenth of ``total`` and otherwise at most one per
        this many seconds (and always the last one), so a log stays short.

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> with ProgressBar(4, stream, unit="sequences") as bar:
    ...     bar.update(2)
    ...     bar.advance(2)
    >>> stream.getvalue().splitlines()[-1].split(",")[0]
    '100% 4/4 sequences'
    """

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        enabled: bool = True,
        width: int = 30,
        plain: bool | None = None,
        unit: str = "rows",
        label: str = "",
        redraw_interval: float = 0.1,
        line_interval: float = 10.0,
    ):
        self.total = max(int(total), 0)
        self.stream = sys.stderr if stream is None else stream
        self.enabled = bool(enabled)
        self.width = width
        self.plain = not _is_terminal(self.stream) if plain is None else bool(plain)
        self.unit = unit
        self.label = label
        self.redraw_interval = redraw_interval
        self.line_interval = line_interval
        self._clock = time.perf_counter
        self.started = self._clock()
        self.done = 0
        self._last_write = -math.inf  # when the last line was written or redrawn
        self._last_tenth = 0
        self._first_update: float | None = None
        self._drawn = False
        self._finished = False

    def update(self, done: int) -> None:
        """Show ``done`` units processed (throttled; the last one is always shown)."""
        self.done = min(max(int(done), 0), self.total)
        if not self.enabled or self._finished:
            return
        now = self._clock()
        if self._first_update is None:
            self._first_update = now
        last = self.done >= self.total
        if self.plain:
            if not (last or self._plain_line_due(now)):
                return
            self._last_tenth = 10 * self.done // self.total if self.total else 10
            _end_others_line(self.stream)
            _emit(self.stream, f"{self.label}{self._text(now)}\n")
        else:
            if not (last or now - self._last_write >= self.redraw_interval):
                return
            fraction = self.done / self.total if self.total else 1.0
            filled = round(fraction * self.width)
            bar = "#" * filled + "." * (self.width - filled)
            _write_open(self.stream, f"\r{self.label}[{bar}] {self._text(now)}  ", self)
        self._last_write = now
        self._drawn = True
        self._finished = last

    def _plain_line_due(self, now: float) -> bool:
        """A plain line is due at an explicit start (``update(0)``), at each further tenth,
        and ``line_interval`` seconds after the last line (or the first update)."""
        if not self._drawn:
            if self.done == 0:
                return True
            since = self._first_update
        else:
            since = self._last_write
        tenth = 10 * self.done // self.total if self.total else 10
        return tenth > self._last_tenth or (self.done > 0 and now - since >= self.line_interval)

    def advance(self, n: int = 1) -> None:
        """Show ``n`` more units processed."""
        self.update(self.done + n)

    def close(self) -> None:
        """End the bar's line (terminal mode); safe to call more than once."""
        if self.enabled and self._drawn and not self.plain:
            if _line_owner(self.stream) is self:  # (else a line ended it already)
                del _open_lines[id(self.stream)]
                _emit(self.stream, "\n")
        self._drawn = False
        self._finished = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _text(self, now: float) -> str:
        fraction = self.done / self.total if self.total else 1.0
        elapsed = now - self.started
        eta = ""
        if 0 < fraction < 1:
            eta = f", {elapsed / fraction - elapsed:.0f}s left"
        return f"{fraction:4.0%} {self.done}/{self.total} {self.unit}, {elapsed:.1f}s{eta}"


class StepLog:
    """One line per step of a computation, with the seconds it took, for ``verbose``.

    For the steps that take seconds without a count to show progress over (a Gram matrix,
    an eigendecomposition): the line is written, and flushed, when the step starts and
    completed with its time when it ends, so a log shows what is running now.

    Parameters
    ----------
    label : str
        Text before every line, e.g. ``'RidgeHeadClassifier: '``.
    level : int, default=1
        The ``verbose`` level; 0 writes nothing. :meth:`note` takes a level of its own.
    stream : text stream, optional
        Where to write; standard error (looked up when the log is made) by default.

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> log = StepLog("ridge: ", 1, stream)
    >>> with log.step("Gram matrix"):
    ...     pass
    >>> stream.getvalue().startswith("ridge: Gram matrix... ")
    True
    """

    def __init__(self, label: str, level: int = 1, stream: TextIO | None = None):
        self.label = label
        self.level = int(level)
        self.stream = sys.stderr if stream is None else stream

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        """Write ``what`` when the block starts and the seconds it took when it ends."""
        if self.level < 1:
            yield
            return
        owner = object()  # (this step's line)
        _write_open(self.stream, f"{self.label}{what}... ", owner)
        started = time.perf_counter()
        try:
            yield
        except BaseException:
            _finish_own_line(self.stream, owner, "stopped\n", f"{self.label}{what}: stopped\n")
            raise
        took = f"{time.perf_counter() - started:.1f}s"
        _finish_own_line(self.stream, owner, f"{took}\n", f"{self.label}{what}: {took}\n")

    def note(self, text: str, level: int = 1) -> None:
        """Write ``text`` as a line of its own when the log's level is at least ``level``."""
        if self.level >= level:
            _end_others_line(self.stream)
            _emit(self.stream, f"{self.label}{text}\n")
