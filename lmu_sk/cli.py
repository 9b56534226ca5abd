"""The ``lmu-sk`` command line.

``lmu-sk features`` computes Delay Network features of a ``.npy`` array of sequences and
writes them to another ``.npy`` file, streaming through arrays larger than memory: the input
is memory-mapped, processed ``--batch-size`` rows at a time, and written into a memory-mapped
output that only takes its final name once complete. ``lmu-sk demo`` runs the package's
end-to-end example.

Usage errors (a missing or unreadable input, a bad shape or dtype, NaN in the data, an
output that cannot be written) end with exit status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

__all__ = ["main"]

PROGRAM = "lmu-sk"
USAGE_ERROR = 2
_NPY_MAGIC = b"\x93NUMPY"
_OUTPUTS = ("final", "sequence", "mean", "max")
_DEFAULT_BATCH_ROWS = 4096
# With no --batch-size, batches are cut so that their features take at most this much memory.
_BATCH_FEATURE_BYTES = 256 * 1024**2


class UsageError(Exception):
    """A problem with the command's inputs, reported in one line with exit status 2."""


# ----------------------------------------------------------------------------------------------
# Progress
# ----------------------------------------------------------------------------------------------


class ProgressBar:
    """A one-line text progress bar, redrawn in place on a terminal stream.

    Parameters
    ----------
    total : int
        Number of units (rows) to process.
    stream : text stream
        Where to draw (standard error by default).
    enabled : bool
        Draw nothing when False.
    width : int
        Characters of the bar itself.
    plain : bool
        Write one plain line per update instead of redrawing (for logs, not terminals).
    """

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        enabled: bool = True,
        width: int = 30,
        plain: bool = False,
    ):
        self.total = max(int(total), 0)
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.width = width
        self.plain = plain
        self.started = time.perf_counter()

    def update(self, done: int) -> None:
        """Redraw the bar for ``done`` units processed."""
        if not self.enabled:
            return
        fraction = done / self.total if self.total else 1.0
        filled = round(fraction * self.width)
        elapsed = time.perf_counter() - self.started
        remaining = elapsed / fraction - elapsed if fraction > 0 else float("nan")
        eta = f", {remaining:.0f}s left" if 0 < fraction < 1 else ""
        if self.plain:
            self.stream.write(f"{fraction:4.0%} {done}/{self.total} rows, {elapsed:.1f}s{eta}\n")
            self.stream.flush()
            return
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {fraction:4.0%} "
            f"{done}/{self.total} rows, {elapsed:.1f}s{eta}  "
        )
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled and not self.plain:
            self.stream.write("\n")
            self.stream.flush()


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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lmu_sk")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The ``lmu-sk`` argument parser."""
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description="Legendre Memory Unit Delay Network features for scikit-learn.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    features = commands.add_parser(
        "features",
        help="compute Delay Network features of a .npy array of sequences",
        description=(
            "Compute Delay Network features of the sequences in INPUT (a .npy array of "
            "shape (n_samples, n_steps), or (n_samples, n_steps, n_channels) with "
            "--channels-last, or (n_samples, n_channels, n_steps) with --channels-first) "
            "and write them to OUTPUT (.npy): (n_samples, n_channels * order), or "
            "(n_samples, n_steps, n_channels * order) for --output sequence. The input is "
            "memory-mapped and processed in batches of rows, so it may be larger than memory. "
            "INPUT and OUTPUT may also be Zarr stores (names ending in .zarr) or folders of "
            ".npy shards (rows concatenated in name order; an OUTPUT folder gets one shard "
            "per batch): these run through dask, on local threads or, with --scheduler, on "
            "a dask.distributed cluster (pip install lmu_sk[dask])."
        ),
    )
    features.add_argument("input", metavar="INPUT", help="input .npy file, .zarr or shard folder")
    features.add_argument(
        "output", metavar="OUTPUT", help="output .npy file, .zarr or shard folder (overwritten)"
    )
    features.add_argument(
        "--order", type=_positive_int, required=True, help="Delay Network states per channel"
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
        choices=_OUTPUTS,
        default="final",
        help="final state, state after every step, or states averaged / maximised over time",
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
            f"rows per batch (default: {_DEFAULT_BATCH_ROWS}, fewer when that many rows of "
            f"features would exceed {_BATCH_FEATURE_BYTES // 1024**2} MiB)"
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
        help="address of a dask.distributed scheduler (e.g. tcp://host:8786) to compute on",
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
    try:
        with open(path, "rb") as f:
            magic = f.read(len(_NPY_MAGIC))
    except OSError as exc:
        raise UsageError(f"cannot read input {path}: {exc.strerror or exc}") from exc
    if magic != _NPY_MAGIC:
        raise UsageError(f"input is not a .npy file (no .npy header): {path}")
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(f"input is not a readable .npy array: {path} ({exc})") from exc
    return array


def _check_input(array: np.ndarray, path: Path, layout: str | None) -> None:
    dtype = array.dtype
    if not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
        raise UsageError(
            f"input has non-numeric dtype {dtype} (need real integers or floats): {path}"
        )
    if array.ndim not in (2, 3):
        raise UsageError(
            f"input must be 2-D (n_samples, n_steps) or 3-D with channels; got {array.ndim}-D "
            f"shape {array.shape}: {path}"
        )
    if array.ndim == 3 and layout is None:
        raise UsageError(
            f"input is 3-D {array.shape}: say which axis holds the channels with "
            "--channels-last (n_samples, n_steps, n_channels) or --channels-first "
            "(n_samples, n_channels, n_steps)"
        )
    if array.shape[0] == 0:
        raise UsageError(f"input holds no sequences (shape {array.shape}): {path}")
    if 0 in array.shape[1:]:
        raise UsageError(f"input has sequences with no steps or no channels ({array.shape})")


def _check_output(output: Path, input_path: Path) -> None:
    if output.exists():
        if output.is_dir():
            raise UsageError(f"output is a directory: {output}")
        if os.path.samefile(output, input_path):
            raise UsageError(f"output would overwrite the input: {output}")
    parent = output.parent
    if not parent.exists():
        raise UsageError(f"output folder does not exist: {parent}")


def _layout_axes(layout: str | None, ndim: int) -> tuple[int, int, int | None]:
    """Axes of (samples, steps, channels) in the input."""
    if ndim == 2:
        return 0, 1, None
    return (0, 2, 1) if layout == "channels-first" else (0, 1, 2)


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


def _batch_rows(args: argparse.Namespace, array: np.ndarray) -> int:
    if args.batch_size is not None:
        return args.batch_size
    _, steps_axis, channels_axis = _layout_axes(args.layout, array.ndim)
    n_channels = 1 if channels_axis is None else array.shape[channels_axis]
    row_values = n_channels * args.order
    if args.output_kind == "sequence":
        row_values *= array.shape[steps_axis]
    row_bytes = row_values * np.dtype(args.dtype).itemsize
    return int(max(1, min(_DEFAULT_BATCH_ROWS, _BATCH_FEATURE_BYTES // row_bytes)))


def _make_transformer(args: argparse.Namespace):
    from lmu_sk.features import LMUFeatures

    return LMUFeatures(
        order=args.order,
        theta=args.theta,
        discretizer=args.discretizer,
        output=args.output_kind,
        method=args.method,
        dtype=args.dtype,
        device=args.device,
    )


def _give_default_permissions(path: Path) -> None:
    """Make a temporary file readable like any newly created one (``0o666`` less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def run_features(args: argparse.Namespace, stderr: TextIO) -> int:
    """Carry out ``lmu-sk features``; raises UsageError for problems with the inputs."""
    from . import _cli_dask

    if _cli_dask.uses_dask(args):
        return _cli_dask.run_features_dask(args, stderr)
    input_path, output_path = Path(args.input), Path(args.output)
    array = _open_input(input_path)
    _check_input(array, input_path, args.layout)
    _check_output(output_path, input_path)
    n_rows = array.shape[0]
    batch_rows = _batch_rows(args, array)

    try:
        fd, partial_name = tempfile.mkstemp(
            dir=output_path.parent, prefix=f".{output_path.name}.", suffix=".partial"
        )
    except OSError as exc:
        raise UsageError(f"output path not writable: {output_path} ({exc.strerror})") from exc
    os.close(fd)
    partial = Path(partial_name)
    _give_default_permissions(partial)
    started = time.perf_counter()
    progress = ProgressBar(
        n_rows, stream=stderr, enabled=not args.quiet, plain=not stderr.isatty()
    )
    transformer = None
    result = None
    try:
        progress.update(0)
        for start in range(0, n_rows, batch_rows):
            stop = min(start + batch_rows, n_rows)
            batch = _read_batch(array, start, stop, args.layout)
            _check_finite(batch, start)
            try:
                if transformer is None:
                    transformer = _make_transformer(args).fit(batch)
                features = np.asarray(transformer.transform(batch))
            except ValueError as exc:
                raise UsageError(f"cannot compute features: {_one_line(exc)}") from exc
            if result is None:
                result = np.lib.format.open_memmap(
                    partial, mode="w+", dtype=features.dtype, shape=(n_rows, *features.shape[1:])
                )
            result[start:stop] = features
            progress.update(stop)
        result.flush()
        shape, dtype = result.shape, result.dtype
        del result
        os.replace(partial, output_path)
    except OSError as exc:
        raise UsageError(f"cannot write output {output_path}: {_one_line(exc)}") from exc
    finally:
        progress.close()
        partial.unlink(missing_ok=True)
    if not args.quiet:
        elapsed = time.perf_counter() - started
        stderr.write(
            f"{PROGRAM}: wrote {output_path}: {dtype} features of shape {shape} "
            f"({n_rows} sequences in {elapsed:.2f}s)\n"
        )
    return 0


# ----------------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------------


def _run_demo() -> int:
    from lmu_sk.demo import main as demo_main

    status = demo_main()
    return 0 if status is None else int(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``lmu-sk`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success, 2 on a usage error (with a one-line message on standard error).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and argparse's own usage errors
        return exc.code if isinstance(exc.code, int) else USAGE_ERROR
    if args.command == "demo":
        return _run_demo()
    try:
        return run_features(args, sys.stderr)
    except UsageError as exc:
        sys.stderr.write(f"{PROGRAM}: error: {exc}\n")
        return USAGE_ERROR


if __name__ == "__main__":
    # run the package's copy of this module, so that its helpers share one UsageError
    from lmu_sk.cli import main as package_main

    sys.exit(package_main())
