"""What both ``lmu-sk features`` runners share: errors, input and output checks, batch sizes.

The local ``.npy`` runner (:mod:`lmu_sk.cli.main`) and the Dask runner
(:mod:`lmu_sk.cli.dask_runner`) check their inputs and outputs, size their batches, check the
free disk space, show progress and word their one-line errors with these helpers.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
from pathlib import Path
from typing import TextIO

import numpy as np

from .. import LMUFeatures, LMUPooledFeatures
from .._memory import MemoryBudgetError, available_memory, check_fits, format_bytes
from .._progress import ProgressBar
from ..engine.plan import rows_within
from .output_file import free_bytes, hidden_name_length, is_out_of_space, npy_header

__all__ = [
    "BATCH_BYTES",
    "DEFAULT_BATCH_ROWS",
    "OUTPUTS",
    "PROGRAM",
    "USAGE_ERROR",
    "ProgressBar",
    "UsageError",
    "batch_budget",
    "batch_rows",
    "check_free_space",
    "check_input",
    "check_input_file",
    "check_name_lengths",
    "check_npy_name",
    "check_regular_file",
    "feature_shape",
    "fit_rows",
    "layout_axes",
    "make_transformer",
    "not_regular_kind",
    "npy_bytes",
    "one_line",
    "output_target",
    "partial_name_extra",
    "progress_bar",
    "write_error",
]

PROGRAM = "lmu-sk"
USAGE_ERROR = 2
#: --output: LMUFeatures' outputs, and 'pooled', the default models' LMUPooledFeatures
OUTPUTS = ("final", "sequence", "mean", "max", "pooled")
#: sequences an --output pooled run fits its thresholds on, evenly spaced over the input
#: (LMUPooledFeatures' bias_samples, as it fits on a dask array)
POOLED_FIT_ROWS = LMUPooledFeatures().bias_samples
DEFAULT_BATCH_ROWS = 4096
# With no --batch-size, batches are cut so that their input, its floating-point copies and their
# features take at most this much memory together.
BATCH_BYTES = 256 * 1024**2


class UsageError(Exception):
    """A problem with the command's inputs, reported in one line with exit status 2."""


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line."""
    return " ".join(str(exc).split())


# the estimators' parameters that are options of ``lmu-sk features``, as their messages
# name them (``dtype='float64'``): said as the options on the command line
_AS_OPTIONS = re.compile(
    r"\b(order|theta|discretizer|output|dtype|method|device)=(['\"]?)([\w.+-]+)\2"
)
_LAYOUTS = {"channels_first=True": "--channels-first", "channels_first=False": "--channels-last"}
# the transformer's max_memory where a message names it (not a value given, max_memory=...)
_MAX_MEMORY = re.compile(r"\bmax_memory\b(?!=)")


def as_options(message: str) -> str:
    """``message`` with the parameters it names that are options of the command said as
    those options (``dtype='float64'``: ``--dtype float64``)."""
    message = _AS_OPTIONS.sub(lambda match: f"--{match[1]} {match[3]}", message)
    for name, option in _LAYOUTS.items():
        message = message.replace(name, option)
    # (the transformer works within half of --max-memory: the other half is the batch's;
    # said once, where a message names it twice)
    message = _MAX_MEMORY.sub("--max-memory (half of it is the computation's)", message, 1)
    return _MAX_MEMORY.sub("--max-memory", message)


def feature_error(exc: BaseException) -> str:
    """The command's one-line message for an error of the feature computation."""
    return f"cannot compute features: {as_options(one_line(exc))}"


def progress_bar(n_rows: int, args: argparse.Namespace, stderr: TextIO) -> ProgressBar:
    """The command's progress over ``n_rows``: redrawn on a terminal; in a log, plain lines
    at each tenth and between those one every 30 s."""
    return ProgressBar(n_rows, stream=stderr, enabled=not args.quiet, line_interval=30.0)


def make_transformer(args: argparse.Namespace):
    """The transformer that ``lmu-sk features`` with ``args`` computes, unfitted.

    :class:`~lmu_sk.LMUPooledFeatures` for ``--output pooled`` (the default models'
    features), else :class:`~lmu_sk.LMUFeatures`; without ``--order`` the class's default
    order. Raises a UsageError for options the pooled features do not take.
    """
    params = {
        "discretizer": args.discretizer,
        "dtype": args.dtype,
        "device": args.device,
        "channels_first": False,  # the runners lay the input out themselves
    }
    if args.order is not None:
        params["order"] = args.order
    if getattr(args, "max_memory", None) is not None:  # (half: the other is the batch's)
        params["max_memory"] = max(args.max_memory // 2, 1)
    if args.output_kind == "pooled":
        if args.theta is not None or args.method != "auto":
            option = "--theta" if args.theta is not None else "--method"
            raise UsageError(
                f"{option} does not apply to --output pooled: its windows and route are "
                "chosen from the input's length; drop the option"
            )
        return LMUPooledFeatures(**params)
    return LMUFeatures(**params, theta=args.theta, output=args.output_kind, method=args.method)


def fit_rows(n_rows: int, args: argparse.Namespace) -> np.ndarray:
    """The rows the transformer is fitted on: the first for LMUFeatures (only the shape
    counts), for ``--output pooled`` ``POOLED_FIT_ROWS`` evenly spaced ones (its
    thresholds are quantiles of their states)."""
    if args.output_kind != "pooled":
        return np.zeros(1, dtype=np.int64)
    count = max(1, min(n_rows, POOLED_FIT_ROWS))
    return np.unique(np.linspace(0, n_rows - 1, count).round().astype(np.int64))


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


def check_input(array, path: Path, layout: str | None) -> None:
    """Refuse an input (an array-like with ``shape``, ``ndim`` and ``dtype``) it cannot use."""
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


def layout_axes(layout: str | None, ndim: int) -> tuple[int, int, int | None]:
    """Axes of (samples, steps, channels) in the input."""
    if ndim == 2:
        return 0, 1, None
    return (0, 2, 1) if layout == "channels-first" else (0, 1, 2)


def feature_shape(
    args: argparse.Namespace, shape: tuple[int, ...], transformer=None
) -> tuple[int, ...]:
    """Shape of the features of an input of ``shape``; ``--output pooled`` needs the
    fitted ``transformer`` (its width is known once fitted)."""
    _, steps_axis, channels_axis = layout_axes(args.layout, len(shape))
    if args.output_kind == "pooled":
        if transformer is None:  # before fitting: the width is not known yet
            return (shape[0], 0)
        return (shape[0], int(transformer.n_features_out_))
    order = LMUFeatures().order if args.order is None else args.order
    width = (1 if channels_axis is None else shape[channels_axis]) * order
    if args.output_kind == "sequence":
        return (shape[0], shape[steps_axis], width)
    return (shape[0], width)


def batch_rows(args: argparse.Namespace, array, transformer=None) -> int:
    """Rows per batch: ``--batch-size``, or as many as fit the memory budget.

    A batch's working memory is its input rows as read, their transposed copy for
    ``--channels-first``, their floating-point copy for the transformer (counted as float64)
    and their features. Without ``--batch-size``, batches hold as many rows as keep that
    under ``BATCH_BYTES`` (half of ``--max-memory`` where given), at most
    ``DEFAULT_BATCH_ROWS`` and at least one.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``lmu-sk features`` arguments.
    array : array-like
        The input (only its ``shape``, ``ndim`` and ``dtype`` are used).
    transformer : fitted transformer, optional
        For ``--output pooled``, whose features' width is known once fitted (without it
        their bytes are not counted).

    Returns
    -------
    rows : int
    """
    itemsize = np.dtype(array.dtype).itemsize
    copies = itemsize + np.dtype(np.float64).itemsize
    if array.ndim == 3 and args.layout == "channels-first":
        copies += itemsize
    input_bytes = math.prod(array.shape[1:]) * copies
    feature_values = math.prod(feature_shape(args, array.shape, transformer)[1:])
    feature_bytes = feature_values * np.dtype(args.dtype).itemsize
    budget = getattr(args, "max_memory", None)
    rows = (
        args.batch_size
        if args.batch_size is not None
        else rows_within(batch_budget(args), input_bytes + feature_bytes, DEFAULT_BATCH_ROWS)
    )
    # a batch (one row at least) checked against the memory available (and --max-memory's
    # half: the other is the computation's) before it is read: --batch-size was taken as
    # given (a raw MemoryError, exit 1, at the first batch)
    if args.batch_size is not None:
        advice = "Use a smaller --batch-size."
    elif budget is not None:
        advice = "Use a larger --max-memory or fewer features (a smaller --order)."
    else:
        advice = "Use fewer features (a smaller --order, fewer thetas or n_biases)."
    try:
        check_fits(
            float(min(rows, array.shape[0] or 1)) * (input_bytes + feature_bytes),
            f"A batch of {rows} rows",
            advice,
            None if budget is None else min(batch_budget(args), available_memory()),
        )
    except MemoryBudgetError as exc:
        raise UsageError(str(exc)) from exc
    return rows


def batch_budget(args: argparse.Namespace) -> int:
    """The bytes of a batch's rows and features: half of ``--max-memory`` (the other half
    the transformer's working memory), else ``BATCH_BYTES``."""
    budget = getattr(args, "max_memory", None)
    return BATCH_BYTES if budget is None else max(budget // 2, 1)


# ----------------------------------------------------------------------------------------------
# Outputs
# ----------------------------------------------------------------------------------------------


def output_target(output: Path) -> Path:
    """What writing ``output`` replaces: ``output`` itself or, for a symbolic link, its target.

    Parameters
    ----------
    output : Path
        The output named on the command line.

    Returns
    -------
    target : Path
        ``output``, or the file a symbolic link points to (the link is written through and
        kept).

    Raises
    ------
    UsageError
        For a link to nothing (a dangling link, or a loop of links).
    """
    if not output.is_symlink():
        return output
    target = Path(os.path.realpath(output))
    if not target.exists():
        raise UsageError(
            f"output {output} is a symbolic link to nothing ({os.readlink(output)}); "
            "remove the link or create the file it points to"
        )
    return target


def check_npy_name(output: Path) -> None:
    """Refuse a ``.npy`` output named as another format: ``features.csv`` or ``.npz``
    would receive ``.npy`` bytes. A name without a suffix is taken as given."""
    suffix = output.suffix
    if suffix and suffix.lower() != ".npy":
        # features.npy.bak: features.npy, not features.npy.npy
        named = output.with_suffix("" if output.stem.lower().endswith(".npy") else ".npy")
        raise UsageError(
            f"output {output} ends in {suffix}, but {PROGRAM} features writes .npy arrays "
            "(or Zarr stores, names ending in .zarr, or folders of .npy shards, names ending "
            f"in /); name it {named}"
        )


def check_name_lengths(path: Path, what: str, extra: int = 0) -> None:
    """Refuse a path whose file name, with ``extra`` more bytes (the hidden partial
    output's name adds some), passes the file system's limit, before any call on it fails
    with ``ENAMETOOLONG``."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no such folder, or no pathconf here
        limit = 255
    for part in path.parts[:-1]:
        if len(os.fsencode(part)) > limit:
            raise UsageError(f"{what} path has a folder name longer than {limit} bytes: {path}")
    length = len(os.fsencode(path.name))
    if length + extra > limit:
        room = f", and the hidden name it is written under first adds {extra}" if extra else ""
        raise UsageError(
            f"{what} name is too long: {length} bytes{room}, where this file system allows "
            f"{limit} per name; use a name of at most {limit - extra} bytes"
        )


def check_input_file(path: Path) -> None:
    """Refuse an input that exists but is not a regular file or a folder (a named pipe
    would block the first read forever, a device never end)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing or unreadable: the runners' own checks say which
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UsageError(
            f"input {path} is {not_regular_kind(mode)}, not a .npy file, Zarr store or "
            "folder of shards"
        )


# the first bytes of every .npy file
NPY_MAGIC = b"\x93NUMPY"


def check_npy_header(path: Path, what: str) -> None:
    """Refuse a file that does not start as a .npy file does, naming it ``what`` (NumPy's
    own error for some such files speaks of pickled data and ``allow_pickle``)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(len(NPY_MAGIC))
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if magic != NPY_MAGIC:
        raise UsageError(f"{what} is not a .npy file (no .npy header): {path}")


def partial_name_extra(target: Path) -> int:
    """Bytes that the hidden partial output's name adds to ``target``'s name."""
    return hidden_name_length(target) - len(os.fsencode(target.name))


def not_regular_kind(mode: int) -> str:
    """What a file of ``mode`` is, said of one that is neither a regular file nor a folder."""
    kinds = (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((what for test, what in kinds if test(mode)), "not a regular file")


def check_regular_file(target: Path, output: Path) -> None:
    """Refuse an existing .npy ``output`` (resolved to ``target``) that is not a regular file."""
    mode = target.stat().st_mode
    if stat.S_ISDIR(mode):
        raise UsageError(f"output is a directory: {output}")
    if not stat.S_ISREG(mode):
        raise UsageError(
            f"output {output} is {not_regular_kind(mode)}, not a regular file; "
            "name a .npy file to write"
        )


def npy_bytes(shape: tuple[int, ...], dtype) -> int:
    """Size of the .npy file of an array of ``shape`` and ``dtype``."""
    return len(npy_header(shape, np.dtype(dtype))) + math.prod(shape) * np.dtype(dtype).itemsize


def check_free_space(target: Path, needed: int, output: Path) -> None:
    """Raise a UsageError when ``target``'s file system has less than ``needed`` bytes free."""
    folder = os.path.abspath(target.parent)
    free = free_bytes(Path(folder))
    if free is not None and needed > free:
        raise UsageError(
            f"not enough free space for output {output}: it needs {format_bytes(needed)}, "
            f"{format_bytes(free)} free in {folder}; free some space or write it elsewhere"
        )


def write_error(output: Path, exc: OSError, needed: int | None) -> str:
    """The one-line message for an error writing ``output`` (``needed`` bytes, if known)."""
    if is_out_of_space(exc):
        size = "" if needed is None else f" (it needs {format_bytes(needed)})"
        return (
            f"no space left on the device for output {output}{size}; "
            "free some space or write it elsewhere"
        )
    return f"cannot write output {output}: {one_line(exc)}"
