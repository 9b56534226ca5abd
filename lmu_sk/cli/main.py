"""The ``lmu-sk`` command line.

``lmu-sk features`` computes Delay Network features of a ``.npy`` array of sequences and
writes them to another ``.npy`` file, streaming through arrays larger than memory: the input
is memory-mapped, processed ``--batch-size`` rows at a time, and appended to a hidden
``.NAME.PID-TOKEN.partial`` file that only takes its final name once complete and flushed to
disk. Zarr stores, folders of ``.npy`` shards and ``--scheduler`` go to
:mod:`lmu_sk.cli.dask_runner`. ``lmu-sk demo`` runs the package's end-to-end example.

Usage errors (a missing, unreadable or damaged input, a bad shape or dtype, NaN in the data,
an output that cannot be written, a full disk, a cluster without workers) end with exit
status 2 and a one-line message. SIGINT, SIGTERM and SIGHUP remove the partial output and
end with status ``128 + signum`` (130, 143, 129) and a one-line message; they are acted on
between batches. Anything else is a bug: a traceback and exit status 1. An output that is a
symbolic link is written through: the file it points to is replaced and the link kept.
Messages that nobody reads any more (standard error a pipe whose reader has gone) are
dropped: the exit status stays the one the command computed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from .._memory import resolve_budget
from ..demo import main as demo_main
from ..dn import check_system_fits
from .common import (
    BATCH_BYTES,
    DEFAULT_BATCH_ROWS,
    OUTPUTS,
    POOLED_FIT_ROWS,
    PROGRAM,
    USAGE_ERROR,
    UsageError,
    as_options,
    batch_rows,
    check_free_space,
    check_input,
    check_input_file,
    check_name_lengths,
    check_npy_header,
    check_npy_name,
    check_regular_file,
    feature_error,
    feature_shape,
    fit_rows,
    make_transformer,
    npy_bytes,
    one_line,
    output_target,
    partial_name_extra,
    progress_bar,
    write_error,
)
from .dask_runner import connect_patience, run_features_dask, uses_dask
from .output_file import Interrupted, PartialNpy, interruptible

__all__ = ["build_parser", "main", "run_features"]

# Seconds that a --scheduler run waits for a cluster without workers to get some back.
DEFAULT_WORKER_TIMEOUT = 300.0


# ----------------------------------------------------------------------------------------------
# Argument parsing
# ----------------------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _memory_budget(text: str) -> int:
    """``--max-memory``: bytes, or a number with a decimal unit ('2GB')."""
    try:
        value: float | str = float(text)
    except ValueError:
        value = text
    try:
        return resolve_budget(value)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"expected a number of bytes (at least 1) or a size with a decimal unit such as "
            f"2GB or 512MB, got {text!r}; leave the option out for the default batches"
        ) from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not (np.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lmu_sk")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _OneLineErrors(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit status 2, as the command's other
    errors (argparse printed its whole usage block first); ``--help`` shows the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(prog: str = PROGRAM) -> argparse.ArgumentParser:
    """The ``lmu-sk`` argument parser (named ``prog`` in its messages)."""
    parser = _OneLineErrors(
        prog=prog,
        description="Legendre Memory Unit Delay Network features for scikit-learn.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    # no command: the demo, as python -m lmu_sk runs it (the package's main job)
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", help="features, or demo (the default)"
    )

    features = commands.add_parser(
        "features",
        help="compute Delay Network features of a .npy array of sequences",
        description=(
            "Compute Delay Network features of the sequences in INPUT (a .npy array of "
            "shape (n_samples, n_steps), or (n_samples, n_steps, n_channels) with "
            "--channels-last, or (n_samples, n_channels, n_steps) with --channels-first) "
            "and write them to OUTPUT (.npy): (n_samples, n_channels * order), or "
            "(n_samples, n_steps, n_channels * order) for --output sequence, or the "
            "default models' multi-scale pooled features for --output pooled "
            "(LMUPooledFeatures, its thresholds fitted on "
            f"{POOLED_FIT_ROWS} sequences evenly spaced over INPUT). The input is "
            "memory-mapped and processed in batches of rows, so it may be larger than memory. "
            "INPUT and OUTPUT may also be Zarr stores (names ending in .zarr) or folders of "
            ".npy shards (rows concatenated in the order of their names, numbers in them "
            "compared as numbers; an OUTPUT folder gets one shard per batch, part-NNNNN.npy, "
            "and an existing folder is replaced only if it holds nothing but such shards): "
            "these run through dask, on local threads or, with "
            "--scheduler, on "
            'a dask.distributed cluster (dask and zarr: pip install ".[dask]" in a checkout '
            'of lmu_sk, or pip install "dask[array]" distributed zarr).'
        ),
        epilog=(
            "OUTPUT is written under a hidden name beside it (.NAME.PID-TOKEN.partial, unique "
            "to the run), flushed to disk and only then renamed to OUTPUT; an existing OUTPUT "
            "stays as it was until that rename. Exit status: 0 when OUTPUT is written; 2 on a "
            "usage, input or output error (one line on stderr; nothing written); 128+N when "
            "stopped by signal N (SIGINT 130, SIGTERM 143, SIGHUP 129; the partial output is "
            "removed); 1 on an unexpected error (a traceback). Signals are acted on between "
            "batches: the batch being computed finishes first, so a large --batch-size delays "
            "them. With --scheduler, blocks not yet started are cancelled, and blocks already "
            "running on workers (which cannot be stopped) are waited for before the partial "
            "output is removed. A partial output left by a killed run is removed by the next "
            "run writing the same output."
        ),
    )
    features.add_argument("input", metavar="INPUT", help="input .npy file, .zarr or shard folder")
    features.add_argument(
        "output",
        metavar="OUTPUT",
        help="output .npy file, .zarr or shard folder (overwritten; a symbolic link is written "
        "through to its target)",
    )
    features.add_argument(
        "--order",
        type=_positive_int,
        default=None,
        help="Delay Network states per channel (default: 64, LMUFeatures' default; for "
        "--output pooled, per window and input, LMUPooledFeatures' choice: 2 to 8)",
    )
    features.add_argument(
        "--theta",
        type=_positive_float,
        default=None,
        help="window length in time steps (default: the number of steps of the input)",
    )
    features.add_argument("--discretizer", choices=("zoh", "euler"), default="zoh")
    features.add_argument(
        "--output",
        dest="output_kind",
        choices=OUTPUTS,
        default="final",
        help="final state, state after every step, states averaged / maximised over time, "
        "or the default models' pooled multi-scale features",
    )
    features.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    features.add_argument(
        "--method", choices=("auto", "gemm", "fft", "recurrence"), default="auto"
    )
    features.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto")
    features.add_argument(
        "--batch-size",
        type=_positive_int,
        default=None,
        help=(
            f"rows per batch (default: {DEFAULT_BATCH_ROWS}, fewer when that many rows, read "
            f"and with their features, would take more than {BATCH_BYTES // 1024**2} MiB)"
        ),
    )
    features.add_argument(
        "--max-memory",
        type=_memory_budget,
        default=None,
        metavar="BYTES",
        help=(
            "memory a batch may take, its rows and features and the computation's working "
            "memory, in bytes or with a unit such as 2GB (default: batches of at most "
            f"{BATCH_BYTES // 1024**2} MiB of rows and features, the computation within half "
            "of the memory available)"
        ),
    )
    layout = features.add_mutually_exclusive_group()
    layout.add_argument(
        "--channels-last",
        action="store_const",
        const="channels-last",
        dest="layout",
        help="a 3-D input is (n_samples, n_steps, n_channels)",
    )
    layout.add_argument(
        "--channels-first",
        action="store_const",
        const="channels-first",
        dest="layout",
        help="a 3-D input is (n_samples, n_channels, n_steps), as in aeon and sktime",
    )
    features.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help=(
            "address of a dask.distributed scheduler (e.g. tcp://host:8786) to compute on; "
            f"one that does not answer within {connect_patience():g} s is a usage error"
        ),
    )
    features.add_argument(
        "--worker-timeout",
        metavar="SECONDS",
        type=_non_negative_float,
        default=DEFAULT_WORKER_TIMEOUT,
        help=(
            "with --scheduler: give up (exit status 2, nothing written) once the cluster has "
            f"had no workers for this long (default: {DEFAULT_WORKER_TIMEOUT:g}; 0 waits "
            "forever)"
        ),
    )
    features.add_argument("--quiet", action="store_true", help="no progress bar or summary")

    commands.add_parser(
        "demo",
        help="run the end-to-end example on scikit-learn's bundled digits",
        description=(
            "Read scikit-learn's bundled 8x8 digits as permuted 64-step pixel sequences, "
            "compute their Delay Network features, fit a classifier and report what was "
            "computed and how long it took."
        ),
    )
    return parser


# ----------------------------------------------------------------------------------------------
# lmu-sk features
# ----------------------------------------------------------------------------------------------


def _open_input(path: Path) -> np.ndarray:
    """Memory-map the .npy array at ``path`` or raise a UsageError saying why not."""
    if not path.exists():
        raise UsageError(f"input file not found: {path}")
    if path.is_dir():
        raise UsageError(f"input is a directory, not a .npy file: {path}")
    check_input_file(path)  # a named pipe would block open() forever
    check_npy_header(path, "input")
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(f"input is not a readable .npy array: {path} ({exc})") from exc
    return array


def _check_output(output: Path, input_path: Path) -> Path:
    """Check that the .npy ``output`` can be written; return the file to replace."""
    check_npy_name(output)
    target = output_target(output)
    if target.exists():
        check_regular_file(target, output)
        if os.path.samefile(target, input_path):
            raise UsageError(f"output would overwrite the input: {output}")
    parent = target.parent
    if not parent.exists():
        raise UsageError(f"output folder does not exist: {parent}")
    return target


def _read_batch(array: np.ndarray, start: int, stop: int, layout: str | None) -> np.ndarray:
    batch = np.array(array[start:stop])
    if batch.ndim == 3 and layout == "channels-first":
        batch = np.ascontiguousarray(np.swapaxes(batch, 1, 2))
    return batch


def _check_finite(batch: np.ndarray, start: int) -> None:
    if not np.issubdtype(batch.dtype, np.floating):
        return
    bad = ~np.isfinite(batch.reshape(batch.shape[0], -1)).all(axis=1)
    if bad.any():
        row = start + int(np.flatnonzero(bad)[0])
        what = "NaN" if np.isnan(batch[row - start]).any() else "an infinite value"
        count = int(bad.sum())
        raise UsageError(
            f"input row {row} contains {what} ({count} bad row(s) in rows {start}-"
            f"{start + batch.shape[0] - 1}); clean or drop them first"
        )


def _check_paths(args: argparse.Namespace) -> None:
    """Checks of the named paths that no runner may skip: names the file system can hold
    (with the partial output's longer name), and an input that reading cannot block on."""
    if not args.input:  # Path("") is the working folder: read as a folder of shards
        raise UsageError("INPUT is an empty path; name a .npy file, Zarr store or folder")
    if Path(args.output).name in ("", ".", ".."):
        # ".", "..", "/" or "": a folder that is not the command's to replace
        raise UsageError(
            f"OUTPUT {args.output!r} names no file or folder of its own; name a new file "
            "or folder (e.g. features.npy or features/)"
        )
    input_path, output_path = Path(args.input), Path(args.output)
    check_name_lengths(input_path, "input")
    check_name_lengths(output_path, "output", partial_name_extra(output_path))
    check_input_file(input_path)


def _fitted_transformer(args: argparse.Namespace, array: np.ndarray):
    """The transformer fitted on the rows :func:`fit_rows` picks from the memory-mapped
    input (laid out as ``args`` says, checked for NaN first)."""
    transformer = make_transformer(args)
    take = fit_rows(array.shape[0], args)
    sample = np.array(array[take])
    if sample.ndim == 3 and args.layout == "channels-first":
        sample = np.ascontiguousarray(np.swapaxes(sample, 1, 2))
    bad = ~np.isfinite(sample.reshape(len(sample), -1)).all(axis=1)
    if np.issubdtype(sample.dtype, np.floating) and bad.any():
        first = int(np.flatnonzero(bad)[0])
        what = "NaN" if np.isnan(sample[first]).any() else "an infinite value"
        raise UsageError(
            f"input row {int(take[first])} contains {what} ({int(bad.sum())} bad row(s) "
            f"among the {len(take)} read to fit; the others are checked as they are "
            "read); clean or drop them first"
        )
    try:
        return transformer.fit(sample)
    except ValueError as exc:
        raise UsageError(feature_error(exc)) from exc


def run_features(args: argparse.Namespace, stderr: TextIO) -> int:
    """Carry out ``lmu-sk features``; raises UsageError for problems with the inputs."""
    _check_paths(args)
    make_transformer(args)  # options that do not go together
    if args.order is not None:  # a huge order named as such, not as a lack of disk space
        try:
            check_system_fits(args.order)
        except ValueError as exc:
            raise UsageError(feature_error(exc)) from exc
    if uses_dask(args):
        return run_features_dask(args, stderr)
    input_path, output_path = Path(args.input), Path(args.output)
    array = _open_input(input_path)
    check_input(array, input_path, args.layout)
    target = _check_output(output_path, input_path)
    n_rows = array.shape[0]
    pooled = args.output_kind == "pooled"
    if not pooled:  # the features' size is known: checked before anything is computed
        needed = npy_bytes(feature_shape(args, array.shape), args.dtype)
        check_free_space(target, needed, output_path)
    transformer = _fitted_transformer(args, array)
    if pooled:  # their width is known once fitted
        needed = npy_bytes(feature_shape(args, array.shape, transformer), args.dtype)
        check_free_space(target, needed, output_path)
    rows = batch_rows(args, array, transformer)

    try:
        partial = PartialNpy(target)
    except OSError as exc:
        raise UsageError(f"output path not writable: {output_path} ({exc.strerror})") from exc
    started = time.perf_counter()
    progress = progress_bar(n_rows, args, stderr)
    written = (np.dtype(args.dtype), ())
    try:
        progress.update(0)
        for start in range(0, n_rows, rows):
            stop = min(start + rows, n_rows)
            batch = _read_batch(array, start, stop, args.layout)
            _check_finite(batch, start)
            try:
                features = np.asarray(transformer.transform(batch))
            except ValueError as exc:
                raise UsageError(feature_error(exc)) from exc
            if not partial.started:
                partial.start((n_rows, *features.shape[1:]), features.dtype)
            partial.append(features)
            written = (features.dtype, features.shape[1:])
            # (not held while the next batch is computed: the peak is one batch's)
            del features, batch
            progress.update(stop)
        partial.commit()
    except OSError as exc:
        raise UsageError(write_error(output_path, exc, needed)) from exc
    finally:
        progress.close()
        partial.discard()
    if not args.quiet:
        elapsed = time.perf_counter() - started
        stderr.write(
            f"{PROGRAM}: wrote {output_path}: {written[0]} features of shape "
            f"{(n_rows, *written[1])} ({n_rows} sequences in {elapsed:.2f}s)\n"
        )
    return 0


def _interrupted_message(exc: Interrupted, output: str) -> str:
    if exc.complete:
        return f"interrupted by {exc.name} after writing {output}"
    return f"interrupted by {exc.name}; {output} not written, no partial output left"


# ----------------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------------


def _run_demo(prog: str = PROGRAM) -> int:
    """The demo, with the command's exit conventions: ``128 + signum`` and one line on a
    signal, and a reader that stops reading (``| head -1``) ends it quietly (a traceback
    each before)."""
    try:
        with interruptible():
            # no arguments of its own: its parser would read sys.argv, where 'demo' is
            status = demo_main([])
            # a block-buffered stdout (a pipe) meets a reader gone here, not in Python's
            # own flush at exit (a message on stderr and exit status 120)
            sys.stdout.flush()
    except Interrupted as exc:
        _Messages(sys.stderr).write(f"{prog}: interrupted by {exc.name}\n")
        return exc.exit_status
    except BrokenPipeError:
        # the reader is gone: nothing more to show it (and Python's own flush at exit
        # would report the closed pipe on stderr)
        _to_devnull(sys.stdout)
        return 0
    return 0 if status is None else int(status)


def _to_devnull(stream: TextIO) -> None:
    """Point the file descriptor under ``stream`` at the null device (when it has one)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        fd = stream.fileno()  # (none for a StringIO: nothing to redirect)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)


class _Messages:
    """Standard error for the command's lines, which a reader that has gone cannot break.

    Writing to a pipe whose reader has gone (``lmu-sk features ... 2>&1 | head -1``) raises
    BrokenPipeError: the summary of a run whose output was written, or the message of a
    usage error, ended in a traceback and exit status 1. The exit status says what the
    command did, not whether anyone read about it: from the first such failure on, the
    lines are dropped, and the stream's file descriptor points at the null device, so that
    the process's other writers to it (a library's log, Python's own messages) do not meet
    the closed pipe either. Anything else is the stream's (``isatty``, ``fileno``,
    ``encoding``).

    Parameters
    ----------
    stream : text stream or None
        Standard error as the command found it (None with ``2>&-``: nothing is written).
    """

    def __init__(self, stream: TextIO | None):
        self._stream = stream
        self._gone = stream is None

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                self._stream.write(text)
                # now, not at exit: a line must be out (or known lost) before the next
                self._stream.flush()
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self._gone = True
        _to_devnull(self._stream)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def _warnings_as_lines(stderr: TextIO) -> Iterator[None]:
    """Report the block's warnings as the command's own lines: ``lmu-sk: warning: ...``
    in the options' terms, each kind once (Python's format gave the source file and line
    of the package, and the pooled features' windows the same warning for each of their
    orders and thetas: those differing only in numbers are one kind)."""
    seen: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = as_options(one_line(message))
        kind = re.sub(r"[0-9][0-9.e+-]*", "#", text)
        if kind not in seen:
            seen.add(kind)
            stderr.write(f"{PROGRAM}: warning: {text}\n")

    with warnings.catch_warnings():  # (the filters as they are: -W and PYTHONWARNINGS hold)
        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None, prog: str = PROGRAM) -> int:
    """Run the ``lmu-sk`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.
    prog : str, default='lmu-sk'
        The command's name in its usage and its errors (``python -m lmu_sk`` runs the same
        command under that name).

    Returns
    -------
    status : int
        0 on success, 2 on a usage error, ``128 + signum`` when stopped by SIGINT, SIGTERM or
        SIGHUP (with a one-line message on standard error).
    """
    stderr = _Messages(sys.stderr)
    parser = build_parser(prog)
    try:
        with contextlib.redirect_stderr(stderr):  # (argparse writes its errors there)
            args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and argparse's own usage errors
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    if args.command in (None, "demo"):
        return _run_demo(prog)
    try:
        with interruptible(), _warnings_as_lines(stderr):
            return run_features(args, stderr)
    except UsageError as exc:
        stderr.write(f"{prog}: error: {exc}\n")
        return USAGE_ERROR
    except Interrupted as exc:
        stderr.write(f"{prog}: {_interrupted_message(exc, args.output)}\n")
        return exc.exit_status
