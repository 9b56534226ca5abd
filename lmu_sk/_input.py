"""Validation of sequence inputs: equal-length arrays and lists of different lengths."""

from __future__ import annotations

import datetime
import numbers
import warnings
from collections.abc import Callable, Iterator, Mapping, MappingView
from collections.abc import Set as AbstractSet

import numpy as np
import scipy.sparse
from sklearn import get_config
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import _check_feature_names, check_array

from ._device import is_device_array, to_numpy

__all__ = [
    "as_sequences",
    "cast_checked",
    "channels_last",
    "check_channel_names",
    "check_device_matrix",
    "check_dtype_param",
    "check_finite_result",
    "check_output_container",
    "from_nested",
    "holds_text",
    "is_device_array",
    "is_ragged",
    "largest_magnitude",
    "object_as_float",
    "refuse_underflow",
    "refuse_unreadable",
]

_FLOAT_DTYPES = (np.float64, np.float32)


def check_output_container(estimator, output_ndim: int) -> None:
    """Refuse ``set_output(transform='pandas')`` (or polars) for 3-D features.

    scikit-learn wraps a transformer's output in a DataFrame after ``transform``; a 3-D
    array would fail there with the container's own error. Reads the estimator's
    ``set_output`` setting, else the global ``transform_output``.
    """
    if output_ndim <= 2:
        return
    config = getattr(estimator, "_sklearn_output_config", {}).get("transform")
    if config is None:
        config = get_config().get("transform_output", "default")
    if config not in ("default", None):
        raise ValueError(
            f"{type(estimator).__name__} with output='sequence' gives 3-D features "
            f"(n_samples, n_steps, n_features), which a {config} DataFrame cannot hold, "
            f"but set_output asks for {config!r} output. Use set_output(transform="
            "'default') for 'sequence', or a 2-D output ('final', 'mean' or 'max')."
        )


def check_dtype_param(dtype) -> np.dtype | None:
    """Validate a ``dtype`` parameter: None (keep the input's float dtype), float32 or float64."""
    if dtype is None:
        return None
    try:
        resolved = np.dtype(dtype)
    except TypeError as exc:
        raise ValueError(f"dtype must be None, 'float32' or 'float64'; got {dtype!r}.") from exc
    if resolved not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be None, 'float32' or 'float64'; got {dtype!r}.")
    return resolved


def holds_text(values: np.ndarray) -> bool:
    """Whether the array ``values`` holds text: strings, or text in an object array."""
    kind = values.dtype.kind
    return kind in "SU" or (
        kind == "O" and any(isinstance(value, (str, bytes)) for value in values.flat)
    )


def refuse_text_targets(y, input_name: str = "y") -> None:
    """Refuse regression targets holding text (strings, pandas' string dtype, text in an
    object array), before scikit-learn's validation parses an object array's as numbers."""
    if is_device_array(y):  # a CuPy array holds numbers (np.asarray would refuse it)
        return
    values = np.asarray(y)
    if holds_text(values):
        raise ValueError(
            f"{input_name} must hold numbers (the targets of a regression); got text "
            f"(dtype {values.dtype}). Convert numbers written as text first "
            f"(np.asarray({input_name}, dtype=float)), or use a classifier for labels."
        )


def check_regression_targets(y, input_name: str = "y") -> np.ndarray:
    """Validated regression targets (their text refused before, by
    :func:`refuse_text_targets`) as float64 and finite: scikit-learn's validation checks
    an object array before converting it, and a ``None`` in it became NaN."""
    return check_array(np.asarray(y), ensure_2d=False, dtype=np.float64, input_name=input_name)


def check_float_dtype(dtype, owner: str) -> np.dtype:
    """A ``dtype`` parameter that must be float32 or float64 (an estimator's; the
    transformers' may also be ``None``), resolved; an InvalidParameterError naming
    ``owner`` and the values allowed otherwise."""
    try:
        resolved = None if dtype is None else np.dtype(dtype)
    except TypeError:
        resolved = None
    if resolved not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise InvalidParameterError(
            f"The 'dtype' parameter of {owner} must be 'float32' or 'float64' (or "
            f"np.float32, np.float64); got {dtype!r}."
        )
    return resolved


def _device_all_finite(X) -> bool:
    """Whether a CuPy array holds only finite numbers: two reductions, no temporary array.

    NaN propagates through ``min`` and ``max``, so either comparison then fails too.
    """
    return bool(X.size == 0 or (-np.inf < X.min() and X.max() < np.inf))


def check_device_matrix(X, input_name: str = "X", estimator=None, reset: bool = True):
    """Validate a 2-D CuPy feature matrix without leaving the device.

    The checks ``sklearn.utils.validation.validate_data`` makes for a dense matrix: real
    numbers, two dimensions, at least one sample and one feature, finite values, and with
    an ``estimator`` the number of features (stored when ``reset``, compared otherwise).

    Returns
    -------
    CuPy array
        ``X`` itself when it holds float32 or float64, else ``X`` as float64.
    """
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"{input_name} must hold real numbers; got a CuPy array of dtype {X.dtype}."
        )
    if X.ndim != 2:
        raise ValueError(
            f"{input_name} must have shape (n_samples, n_features); got a CuPy array of "
            f"shape {X.shape}."
        )
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(
            f"Found array with shape {X.shape} in {input_name}: at least one sample and one "
            "feature are required."
        )
    if X.dtype not in _FLOAT_DTYPES:
        X = X.astype(np.float64)
    if not _device_all_finite(X):
        raise ValueError(f"Input {input_name} contains NaN or infinity; clean or impute it first.")
    if estimator is not None:
        name = type(estimator).__name__
        if reset:
            estimator.n_features_in_ = X.shape[1]
            estimator.__dict__.pop("feature_names_in_", None)
        elif X.shape[1] != estimator.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {name} is expecting "
                f"{estimator.n_features_in_} features as input."
            )
    return X


# the fix of an input beyond a dtype's range, where a wider dtype takes it
WIDER_DTYPE = "or use dtype='float64'"


def _overflow_error(X, dtype: np.dtype, wider: str = WIDER_DTYPE) -> ValueError:
    """The error for finite values of ``X`` beyond the range of ``dtype``; ``wider``
    ends the advice (see :data:`WIDER_DTYPE`)."""
    largest = ""
    if not is_device_array(X):
        largest = f" (up to {float(np.abs(X[np.isfinite(X)]).max()):.3g} in magnitude)"
    return ValueError(
        f"X holds finite values{largest} beyond the largest {dtype.name} "
        f"({np.finfo(dtype).max:.3g}): converting X to {dtype.name} overflows to infinity. "
        f"Rescale the input (e.g. sklearn.preprocessing.StandardScaler), {wider}."
    )


def _underflow_error(largest: float, dtype: np.dtype, wider: str = WIDER_DTYPE) -> ValueError:
    """The error for an ``X`` whose every value is below the normal range of ``dtype``."""
    return ValueError(
        f"X's values are at most {largest:.3g} in magnitude, below the smallest normal "
        f"{dtype.name} ({np.finfo(dtype).tiny:.3g}): converted to {dtype.name} they lose "
        "their precision or vanish, and every feature would be (nearly) constant. Rescale "
        f"the input (e.g. sklearn.preprocessing.StandardScaler), {wider}."
    )


def largest_magnitude(part) -> float:
    """The largest magnitude in the array ``part`` (NumPy or CuPy; 0 where empty, NaN where
    it holds NaN), from its maximum and minimum: no array of magnitudes is made (on 200
    series of 100 steps x 1 000 channels 0.009 s against 0.019 s, and 0.08 s where that
    array's fresh memory was first touched)."""
    if not part.size:
        return 0.0
    return max(float(part.max()), -float(part.min()))


def powers_of_two_near(largest, xp=np):
    """A power of two within a factor 2 of each of the positive magnitudes ``largest``
    (1 where zero), on ``xp``: dividing by it is exact, and brings squares of values up to
    ``largest`` within float64's range."""
    return xp.exp2(xp.floor(xp.log2(xp.where(largest > 0, largest, 1.0))))


def refuse_underflow(parts: list, dtype: np.dtype, wider: str = WIDER_DTYPE) -> None:
    """Raise where the arrays ``parts``, to be converted to ``dtype``, are not all zero but
    every value is below its normal range (NaN compares as False: the callers report
    non-finite values)."""
    floats = [part for part in parts if part.dtype.kind == "f" and part.size]
    if not floats or np.finfo(dtype).tiny <= max(np.finfo(p.dtype).tiny for p in floats):
        return
    largest = max(largest_magnitude(part) for part in floats)
    # compared as Python floats: NumPy 2 casts a Python float compared with a float32
    # scalar to float32, which warns of overflow for values beyond float32's range
    if 0 < largest < float(np.finfo(dtype).tiny):
        raise _underflow_error(largest, dtype, wider)


def cast_checked(X, dtype, wider: str = WIDER_DTYPE):
    """``X`` (a NumPy or CuPy array) as ``dtype``; a ValueError naming the overflow and the
    fix (``wider``: see :data:`WIDER_DTYPE`) where finite values exceed its range (NaN and
    infinity cast as they are)."""
    dtype = np.dtype(dtype)
    if X.dtype == dtype:
        return X
    if is_device_array(X):
        cast = X.astype(dtype)
        if not _device_all_finite(cast) and _device_all_finite(X):
            raise _overflow_error(X, dtype, wider)
        return cast
    try:
        # only finite values out of range raise: NaN and infinity cast silently; a copy
        # made C-contiguous (a Fortran-ordered one would be copied again by its callers)
        with np.errstate(over="raise"):
            return X.astype(dtype, order="K" if X.flags.c_contiguous else "C", copy=False)
    except FloatingPointError:
        raise _overflow_error(X, dtype, wider) from None


def _validate_device_array(X, dtype: np.dtype | None, wider: str = WIDER_DTYPE):
    """The checks of :func:`_validate_array` for a CuPy array, without leaving the device."""
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must hold real numbers; got a CuPy array of dtype {X.dtype}.")
    if X.ndim not in (2, 3):
        raise ValueError(
            f"X must have shape (n_samples, n_steps) or (n_samples, n_steps, n_channels); "
            f"got a CuPy array of shape {X.shape}."
        )
    if X.shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}).")
    if X.shape[1] == 0:
        raise _zero_length_error(X.shape)
    if dtype is None:
        dtype = X.dtype if X.dtype in _FLOAT_DTYPES else np.dtype(np.float64)
    X = cast_checked(X, dtype, wider)
    if not _device_all_finite(X):
        raise ValueError("Input X contains NaN or infinity; clean or impute it first.")
    return X if X.ndim == 3 else X[:, :, None]


_MISSING = (
    "Input X contains NaN or infinity. lmu_sk's estimators accept neither: impute or drop "
    "missing values first (e.g. sklearn.impute.SimpleImputer on each step), and replace or "
    "clip infinite ones."
)


def has_output_axis(y) -> bool:
    """Whether per-step targets hold one output on an axis of its own,
    ``(n_samples, n_steps, 1)`` (a model fitted on them predicts that shape)."""
    return np.ndim(y) == 3 and np.shape(y)[2] == 1


def step_target_rows(y, n_rows: int):
    """Per-step targets ``(n_samples, n_steps[, n_outputs])`` as ``n_rows`` rows, one
    output on an axis of its own as 1-D rows (one column of targets to a head, which
    warned of a column vector)."""
    return y.reshape(n_rows, *([] if has_output_axis(y) else y.shape[2:]))


def nan_padded(X: np.ndarray) -> int:
    """How many sequences of the channels-last array ``X`` end in NaN padding, where its
    non-finite values are all such padding (NaN on every channel at the last steps of a
    sequence, after at least one step of data, as sktime and aeon pad unequal lengths);
    0 otherwise."""
    if X.dtype.kind != "f" or X.ndim != 3:
        return 0
    if not np.isnan(X[:, -1]).any():  # no sequence ends in NaN: none padded (one step read)
        return 0
    missing = np.isnan(X)
    if np.isinf(X).any():
        return 0
    any_channel = missing.any(axis=2)  # (n_samples, n_steps)
    if not (missing.all(axis=2) == any_channel).all():
        return 0
    trailing = np.logical_or.accumulate(any_channel, axis=1)
    if (trailing != any_channel).any() or any_channel[:, 0].any():
        return 0
    return int(any_channel[:, -1].sum())


# how to pass NaN-padded sequences at their own lengths, per layout of X
_PADDING_RECIPES = {
    "steps": (
        "for X of shape (n_samples, n_steps) pass [x[~np.isnan(x)] for x in X] (x in "
        "X.to_numpy() for a DataFrame)"
    ),
    "channels last": (
        "for X of shape (n_samples, n_steps, n_channels) pass "
        "[x[~np.isnan(x).any(axis=1)] for x in X]"
    ),
    "channels first": (
        "for sktime/aeon's (n_cases, n_channels, n_timepoints) pass "
        "[x[:, ~np.isnan(x).any(axis=0)] for x in X] with channels_first=True"
    ),
}


def _non_finite_error(X, ndim: int | None = None) -> ValueError:
    """The error for ``X`` (channels-last, validated) with NaN or infinity; NaN padding
    (unequal lengths, as sktime and aeon pad them) gets the exact way to pass them.

    ``ndim``: the dimensions of ``X`` as it came (2: ``(n_samples, n_steps)``, whose
    recipe alone is named; 3: channels last or, swapped, first; 0: one sequence of a list;
    ``None``: unknown)."""
    padded = 0 if is_device_array(X) else nan_padded(np.asarray(X))
    if not padded:
        return ValueError(_MISSING)
    if ndim == 0:
        return ValueError(
            "Input X holds a sequence with NaN at its end and nowhere else: padding? lmu_sk "
            "reads each sequence of a list at its own length, so drop the padding "
            "(x[~np.isnan(x)] for a sequence of shape (n_steps,), "
            "x[~np.isnan(x).any(axis=1)] for (n_steps, n_channels), "
            "x[:, ~np.isnan(x).any(axis=0)] for (n_channels, n_steps) with "
            "channels_first=True). Impute the values instead if they are missing data."
        )
    layouts = {2: ["steps"], 3: ["channels last", "channels first"]}.get(ndim)
    named = [_PADDING_RECIPES[layout] for layout in layouts or _PADDING_RECIPES]
    return ValueError(
        f"Input X contains NaN at the end of {padded} sequence(s) and nowhere else: "
        "sequences of different lengths padded with NaN (as sktime and aeon pad them). "
        f"lmu_sk reads each sequence at its own length from a list of arrays: "
        f"{'; '.join(named)}. Impute the values instead if they are missing data rather "
        "than padding."
    )


def _all_finite(a) -> bool:
    if is_device_array(a):
        return _device_all_finite(a)
    # a finite sum says every value is finite in one pass (no array of flags); a sum that
    # overflows or holds NaN leaves the answer to the element-wise check
    a = np.asarray(a)
    with np.errstate(over="ignore", invalid="ignore"):
        if a.dtype.kind == "f" and np.isfinite(a.sum()):
            return True
    return bool(np.isfinite(a).all())


def check_finite_result(result, U, cause: Callable[[], str | None] | None = None) -> None:
    """Raise if the features ``result`` of the inputs ``U`` hold NaN or infinity.

    Every feature is a weighted sum of inputs with nonzero weights, so a non-finite input
    always makes some feature non-finite: checking the (smaller) result checks the input
    too, and also catches features that overflow their dtype. ``cause``, called only when
    finite inputs overflow, names what made them (an unstable system) where it knows.
    """
    parts = result if isinstance(result, list) else [result]
    if all(_all_finite(part) for part in parts):
        return
    inputs = U if isinstance(U, list) else [U]
    if not all(_all_finite(part) for part in inputs):
        raise ValueError(_MISSING) if isinstance(U, list) else _non_finite_error(U)
    dtype = np.dtype(parts[0].dtype)
    reason = cause() if cause is not None else None
    if reason is not None:
        raise ValueError(
            f"The input X is finite but its Delay Network features overflow {dtype.name}: {reason}"
        )
    fix = "Use dtype='float64', or rescale" if dtype != np.float64 else "Rescale"
    raise ValueError(
        f"The input X is finite but its Delay Network features overflow {dtype.name} (largest "
        f"{np.finfo(dtype).max:.3g}): some state, or a sum the route forms on the way (an "
        "FFT's transforms, a mean's running sum), exceeds that range. "
        f"{fix} the input (e.g. sklearn.preprocessing.StandardScaler); where only those "
        "sums overflow, method='recurrence' computes the states one step at a time."
    )


def is_ragged(X) -> bool:
    """True for a list or tuple of sequences that do not all have the same length."""
    if not isinstance(X, (list, tuple)) or len(X) == 0:
        return False
    try:
        first = X[0]
        if isinstance(first, numbers.Number) or np.ndim(first) == 0:
            return False
        lengths = {len(seq) if np.ndim(seq) > 0 else -1 for seq in X}
    except ValueError:  # a sequence itself ragged: checked sequence by sequence
        return True
    return len(lengths) > 1


def _zero_length_error(shape: tuple[int, ...]) -> ValueError:
    return ValueError(
        f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required: "
        "a sequence of length zero. Every sequence needs at least one time step; drop "
        "empty sequences before calling."
    )


def _refuse_text(X) -> None:
    """Raise for sequences of strings, which a float conversion would read silently."""
    if holds_text(X):
        raise ValueError(
            f"X holds strings (dtype {X.dtype}); lmu_sk's estimators take numbers. Convert "
            "them first (e.g. X.astype(float) for numbers written as text)."
        )


def _shapes_shown(shapes: list) -> str:
    """The first four distinct ``shapes``, in order, for a message."""
    distinct = sorted(set(shapes), key=shapes.index)
    shown = ", ".join(str(shape) for shape in distinct[:4])
    return shown + (", ..." if len(distinct) > 4 else "")


def _ragged_sequence_error(index: int, seq) -> ValueError:
    """The error of sequence ``X[index]`` whose elements have different shapes."""
    return ValueError(
        f"X[{index}] is not an array of numbers: its elements have different shapes "
        f"({_shapes_shown([_shape_of(value) for value in seq])}). Every sequence must be "
        "(n_steps,) or (n_steps, n_channels), with the same channels at every step."
    )


def _inhomogeneous_error(X) -> ValueError:
    """The error of a list of sequences of one length whose other axes differ: most often
    aeon's or sktime's ``(n_channels, n_timepoints)`` arrays of different lengths read
    channels last."""
    shapes = []
    for index, seq in enumerate(X):
        try:
            shapes.append(np.shape(seq))
        except ValueError:  # the sequence itself ragged
            return _ragged_sequence_error(index, seq)
    shown = _shapes_shown(shapes)
    if all(len(shape) == 2 for shape in shapes) and len({shape[0] for shape in shapes}) == 1:
        seconds = sorted({shape[1] for shape in shapes})
        return ValueError(
            f"X is a list of sequences of shapes {shown}: the same first axis "
            f"({shapes[0][0]}) and different second ones ({seconds}). lmu_sk reads a "
            f"sequence as (n_steps, n_channels): read so, these sequences have different "
            "numbers of channels, and every sequence must have the same channels. If they "
            "are aeon's or sktime's (n_channels, n_timepoints) arrays of different lengths, "
            "pass channels_first=True."
        )
    return ValueError(
        f"X is a list of sequences whose shapes do not fit together: {shown}. Every "
        "sequence must be (n_steps,) or (n_steps, n_channels) with the same channels "
        "(or (n_channels, n_steps) with channels_first=True)."
    )


def refuse_unreadable(X) -> None:
    """Raise, naming the fix, for inputs NumPy would read wrongly or with a raw error:
    nothing, a single string, an iterator, masked values, complex numbers, dates and
    times."""
    if X is None:
        raise ValueError("X is None; pass the sequences as an array or a list of arrays.")
    if isinstance(X, (str, bytes)):
        raise ValueError(
            f"X is a string ({X[:20]!r}); lmu_sk's estimators take sequences of numbers."
        )
    if isinstance(X, Iterator):
        raise TypeError(
            f"X is an iterator ({type(X).__name__}), which can be read once only; pass "
            "list(X) or an array."
        )
    if isinstance(X, (Mapping, AbstractSet, MappingView)) and not scipy.sparse.issparse(X):
        # (a dok_matrix is a dict too: refused as sparse by the checks below)
        raise TypeError(
            f"X is of type {type(X).__name__}, a mapping, set or view of one; pass the "
            "sequences as an array or a list of arrays, in the order of their labels."
        )
    _refuse_masked(X, "X")
    if isinstance(X, (list, tuple)):  # (NumPy drops the sequences' masks)
        for index, seq in enumerate(X):
            _refuse_masked(seq, f"X[{index}]")
    kind = getattr(getattr(X, "dtype", None), "kind", None)
    # a DataFrame's columns (its dates were read as nanoseconds since 1970)
    kinds = {getattr(dtype, "kind", None) for dtype in _column_dtypes(X)}
    if kind is None and kinds & {"M", "m"}:
        kind = "M" if "M" in kinds else "m"
    if kind == "c":
        raise _complex_error(f"dtype {X.dtype}")
    if kind == "V":
        raise TypeError(
            f"X has a structured dtype ({X.dtype}); lmu_sk's estimators take an array of "
            "numbers. Make its fields channels: "
            "numpy.lib.recfunctions.structured_to_unstructured(X)."
        )
    if kind in ("M", "m"):
        dtype = getattr(X, "dtype", None)
        if dtype is None:  # (a DataFrame: its columns')
            dtype = ", ".join(sorted({str(column) for column in _column_dtypes(X)}))
        raise ValueError(
            f"X holds dates or times (dtype {dtype}); "
            + _DATES_ADVICE.format("datetime64" if kind == "M" else "timedelta64")
        )


# (pandas casts its dates to no float: their NumPy array is cast)
_DATES_ADVICE = (
    "lmu_sk's estimators take numbers. Convert them first (e.g. to seconds: "
    "np.asarray(X).astype('{}[s]').astype(float))."
)


def _refuse_masked(X, where: str) -> None:
    """Raise for a masked array with masked values: NumPy would read them as numbers."""
    if isinstance(X, np.ma.MaskedArray) and np.ma.count_masked(X):
        raise ValueError(
            f"{where} is a masked array with {np.ma.count_masked(X)} masked value(s); "
            "lmu_sk does not read masks (the masked values would be used as numbers). "
            "Fill them (X.filled(value)) or pass the sequences without them as a list."
        )


def _column_dtypes(X) -> list:
    """The dtypes of a DataFrame's columns (a Series' one); none for anything else."""
    if not hasattr(X, "to_numpy") or getattr(X, "dtypes", None) is None:
        return []
    return list(X.dtypes) if np.ndim(X.dtypes) else [X.dtypes]


def _complex_error(where: str) -> ValueError:
    # (scikit-learn's checks expect this ValueError and its first words)
    return ValueError(
        f"Complex data not supported: X holds complex numbers ({where}); lmu_sk's "
        "estimators take real numbers. Pass the real and imaginary parts as two channels "
        "(np.stack([X.real, X.imag], axis=-1)), or their magnitude (np.abs(X))."
    )


def _is_missing(value) -> bool:
    """``None`` or pandas' missing-value markers (``pd.NA``, ``pd.NaT``), without pandas."""
    return value is None or type(value).__name__ in ("NAType", "NaTType")


def object_as_float(X: np.ndarray, name: str = "X") -> np.ndarray:
    """An object array of numbers as float64, its missing values (``None``, ``pd.NA``)
    NaN, so that the messages of missing values apply; otherwise an error naming the first
    value that is not a real number and the fix."""
    try:
        return X.astype(np.float64)
    except (TypeError, ValueError):
        pass
    # (an array: of a 0-d array frompyfunc returns a Python bool)
    missing = np.asarray(np.frompyfunc(_is_missing, 1, 1)(X), dtype=bool)
    if missing.any():
        filled = X.copy()
        filled[missing] = np.nan
        try:
            return filled.astype(np.float64)
        except (TypeError, ValueError):
            pass
    # the first value that is not a number, named with its place
    for position, value in enumerate(X.flat):
        if _is_missing(value):
            continue
        index = ", ".join(map(str, np.unravel_index(position, X.shape)))
        where = f"{name}[{index}]" if X.ndim else name
        if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
            raise _complex_error(f"{where} is {value!r}")
        elif np.ndim(value) > 0:
            raise ValueError(
                f"{where} is a sequence ({type(value).__name__} of shape "
                f"{_shape_of(value)}), not a number: X is an array of arrays. Pass a list of "
                "sequences, each an array (n_steps,) or (n_steps, n_channels), or one array "
                "(n_samples, n_steps, n_channels) (np.stack)."
            )
        if isinstance(value, (datetime.date, datetime.timedelta, np.datetime64, np.timedelta64)):
            # (a timezone's dates, which NumPy holds as objects)
            unit = (
                "timedelta64"
                if isinstance(value, (datetime.timedelta, np.timedelta64))
                else "datetime64"
            )
            raise ValueError(
                f"{where} is a date or time ({value!r:.60}); " + _DATES_ADVICE.format(unit)
            )
        try:
            float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"{where} is {type(value).__name__} {value!r:.40}, not a number (a float() "
                "argument must be a string or a real number); lmu_sk's estimators take "
                "real numbers."
            ) from None
    return X.astype(np.float64)  # (what no single value shows: NumPy's own error)


def _shape_of(value) -> str:
    try:
        return str(np.shape(value))
    except ValueError:
        return "ragged"


def _with_missing_as_nan(X):
    """A pandas DataFrame or Series of nullable dtypes (``Float64``, ``Int64``,
    ``boolean``) as a float64 array (float32 where every column is ``Float32``) with its
    ``pd.NA`` NaN (scikit-learn's conversion raises a raw error on ``pd.NA``); anything
    else as it is."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "to_numpy"):
        return X
    dtypes = list(dtypes) if np.ndim(dtypes) else [dtypes]
    nullable = [
        dtype
        for dtype in dtypes
        if not isinstance(dtype, np.dtype)
        and getattr(dtype, "kind", "O") in "biuf"
        and type(dtype).__name__ != "SparseDtype"  # (sparse frames are refused as sparse)
    ]
    if not nullable or any(isinstance(dtype, np.dtype) and dtype.kind == "O" for dtype in dtypes):
        return X
    # float32 where every column is (as NumPy and pandas' own float32 columns are read)
    single = all(np.dtype(getattr(dtype, "numpy_dtype", dtype)) == np.float32 for dtype in dtypes)
    try:
        return X.to_numpy(dtype=np.float32 if single else np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        return X


def _validate_array(
    X,
    dtype: np.dtype | None,
    estimator_name: str,
    check_finite: bool = True,
    wider: str = WIDER_DTYPE,
) -> np.ndarray:
    refuse_unreadable(X)
    X = _with_missing_as_nan(X)
    if isinstance(X, (list, tuple, np.ndarray)):
        try:
            X = np.asarray(X)
        except ValueError as error:  # sequences of the same length, shaped unlike
            raise _inhomogeneous_error(X) from error
        refuse_unreadable(X)  # (a list of complex arrays is a complex array)
        _refuse_text(X)
    elif any(getattr(kind, "kind", "O") in "OSU" for kind in getattr(X, "dtypes", ())):
        X = np.asarray(X)  # a DataFrame with a column of objects
        _refuse_text(X)
    if isinstance(X, np.ndarray) and X.dtype.kind == "O":
        X = object_as_float(X)
    X = check_array(
        X,
        dtype=_FLOAT_DTYPES,
        allow_nd=True,
        ensure_2d=False,
        ensure_min_features=0,
        ensure_all_finite=False,
        estimator=estimator_name,
        input_name="X",
    )
    if X.ndim not in (2, 3):
        raise ValueError(
            f"X must have shape (n_samples, n_steps) or (n_samples, n_steps, n_channels); "
            f"got an array with {X.ndim} dimension(s) and shape {X.shape}. Reshape your data: "
            "X.reshape(1, -1) for a single sequence; for data laid out as (n_samples, "
            "n_channels, n_steps) (aeon, sktime), pass channels_first=True."
        )
    if X.shape[1] == 0:
        raise _zero_length_error(X.shape)
    if X.ndim == 3 and X.shape[2] == 0:
        raise ValueError("X has zero channels; the last axis of a 3-D X holds the channels.")
    ndim = X.ndim
    if ndim == 2:
        X = X[:, :, None]
    if check_finite and not np.isfinite(X).all():
        raise _non_finite_error(X, ndim)
    if dtype is not None:
        refuse_underflow([X], dtype, wider)
        X = cast_checked(X, dtype, wider)
    return X


def _is_plain_float_sequence(seq) -> bool:
    """Whether ``seq`` is a NumPy float32/float64 sequence of shape ``(n_steps,)`` or
    ``(n_steps, n_channels)`` with at least one step and one channel: valid as it is."""
    return (
        type(seq) is np.ndarray
        and seq.dtype in _FLOAT_DTYPES
        and seq.ndim in (1, 2)
        and seq.shape[0] > 0
        and (seq.ndim == 1 or seq.shape[1] > 0)
    )


def as_sequences(
    X,
    dtype: np.dtype | None,
    estimator_name: str = "LMUFeatures",
    check_finite: bool = True,
    wider: str = WIDER_DTYPE,
):
    """Validate ``X`` and return it as a float array or a list of float arrays.

    With ``check_finite=False`` NaN and infinity pass; the caller must then check its
    results with :func:`check_finite_result`. ``wider`` ends the advice of input beyond
    ``dtype``'s range (see :data:`WIDER_DTYPE`).

    Returns
    -------
    ndarray of shape (n_samples, n_steps, n_channels), or for sequences of different
    lengths a list of arrays of shape (n_steps_i, n_channels) sharing one dtype.
    """
    if is_device_array(X):
        return _validate_device_array(X, dtype, wider)
    if isinstance(X, (list, tuple)) and any(is_device_array(seq) for seq in X):
        # sequences given as CuPy arrays: read on the host, as NumPy cannot convert them
        X = [to_numpy(seq) if is_device_array(seq) else seq for seq in X]
    if _is_array_of_sequences(X):
        X = list(X)  # (a pandas Series' .values of arrays): read as the list it holds
    if not is_ragged(X):
        return _validate_array(X, dtype, estimator_name, check_finite, wider)
    sequences = []
    for index, seq in enumerate(X):
        _refuse_masked(seq, f"X[{index}]")
        if seq is None or isinstance(seq, (str, bytes, dict)):
            raise ValueError(
                f"X[{index}] is {'None' if seq is None else type(seq).__name__}: every "
                "sequence of X must be an array "
                "of numbers, (n_steps,) or (n_steps, n_channels)."
            )
        if _is_plain_float_sequence(seq):
            # what check_array would return for it, without its cost per call (most of the
            # validation of thousands of short sequences)
            seq = seq if seq.ndim == 2 else seq[:, None]
            if check_finite and not np.isfinite(seq).all():
                raise _non_finite_error(seq[None], 0)
        else:
            try:
                seq = np.asarray(seq)
            except ValueError:
                raise _ragged_sequence_error(index, seq) from None
            seq = _validate_array(seq[None], None, estimator_name, check_finite)[0]
        sequences.append(seq)
    channels = {seq.shape[1] for seq in sequences}
    if len(channels) > 1:
        raise ValueError(
            f"All sequences must have the same number of channels; found {sorted(channels)}."
        )
    common = np.dtype(dtype or np.result_type(*[seq.dtype for seq in sequences]))
    refuse_underflow(sequences, common, wider)  # of the sequences together: one may be tiny
    return [cast_checked(seq, common, wider) for seq in sequences]


def _is_array_of_sequences(X) -> bool:
    """Whether ``X`` is a 1-D NumPy object array whose every element is a sequence."""
    if not (isinstance(X, np.ndarray) and X.dtype.kind == "O" and X.ndim == 1 and X.size):
        return False
    try:
        return all(np.ndim(seq) > 0 for seq in X)
    except ValueError:  # a ragged element: left to the list's own checks
        return True


def _is_nested(X) -> bool:
    """Whether ``X`` is sktime's nested DataFrame: a non-empty table whose cells hold
    sequences (a plain table of numbers holds sequences as rows, its columns steps)."""
    if not (hasattr(X, "columns") and hasattr(X, "to_numpy")) or 0 in X.shape:
        return False
    first = X.iloc[0, 0] if hasattr(X, "iloc") else X.to_numpy()[0, 0]
    return not isinstance(first, (str, bytes)) and hasattr(first, "__len__")


def _nested_channel_names(X) -> np.ndarray | None:
    """The column names of sktime's nested DataFrame ``X`` (they name its channels) where
    all are strings; ``None`` for anything else."""
    if not _is_nested(X):
        return None
    names = list(X.columns)
    if not all(isinstance(name, str) for name in names):
        return None
    return np.asarray(names, dtype=object)


def check_channel_names(estimator, X, reset: bool) -> None:
    """Record (``reset``) or check the channel names of sktime's nested DataFrame ``X``.

    Its columns name channels, which scikit-learn's feature names cannot hold (they name
    the steps of a plain table): fitted on them, ``estimator.channel_names_in_`` keeps
    them, and a nested DataFrame whose channels come in another order or under other
    names is refused, as scikit-learn refuses reordered columns (the model would read one
    channel as another, silently). Other inputs are not checked.
    """
    names = _nested_channel_names(X)
    if reset:
        estimator.__dict__.pop("channel_names_in_", None)
        if names is not None:
            estimator.channel_names_in_ = names
        return
    fitted = getattr(estimator, "channel_names_in_", None)
    if fitted is None or names is None or np.array_equal(fitted, names):
        return
    raise ValueError(
        f"The channels of X are named {list(names)}, but {type(estimator).__name__} was "
        f"fitted on channels {list(fitted)}: a nested DataFrame's columns must come in the "
        f"order of fit, under the same names (the model reads channels by position). "
        f"Reorder them: X[{list(fitted)!r}]."
    )


def from_nested(X, channels_first):
    """sktime's nested DataFrame as a list of arrays; anything else as it is.

    sktime's ``nested_univ`` layout holds a collection as a pandas DataFrame with a column
    per channel and a pandas Series (or 1-D array) of the series' values per cell. It
    becomes a list of one array per sequence, laid out as ``channels_first`` reads it
    (``(n_channels, n_steps_i)`` for True, ``(n_steps_i, n_channels)`` otherwise), so that
    :func:`channels_last` and :func:`as_sequences` take it from there. Call it before
    checking feature names: its column names name channels, not steps.

    A pandas Series is read as what it holds: sequences (a Series of arrays) as their
    list, numbers (one row of a table) as their 1-D array, which is refused with the
    reshape advice a 1-D array gets. A 1-D object array of sequences is their list too.
    """
    if getattr(X, "ndim", None) == 1 and hasattr(X, "to_numpy"):  # a pandas Series
        values = X.to_numpy()
        return list(values) if values.dtype == object else values
    if isinstance(X, np.ndarray) and X.ndim == 1 and X.dtype == object:
        # sequences of different lengths in an object array (``Series.to_numpy()``,
        # ``np.array(sequences, dtype=object)``): their list
        if any(np.ndim(seq) > 0 and not isinstance(seq, (str, bytes)) for seq in X):
            return list(X)
    if not _is_nested(X):
        return X
    cells = X.to_numpy()
    sequences = []
    for i, row in enumerate(cells):
        channels = [np.asarray(cell) for cell in row]
        if any(channel.ndim != 1 for channel in channels):
            raise ValueError(
                f"Row {i} of the nested DataFrame holds a cell that is not a 1-D series; "
                "each cell must be one channel of one sequence (a pandas Series)."
            )
        lengths = {len(channel) for channel in channels}
        if len(lengths) > 1:
            raise ValueError(
                f"Row {i} of the nested DataFrame has channels of different lengths "
                f"{sorted(lengths)}; the channels of a sequence must have equal lengths."
            )
        sequences.append(np.stack(channels, axis=0 if channels_first else 1))
    return _StackedSequences(sequences)


class _StackedSequences(list):
    """The sequences of a nested DataFrame, stacked in the layout asked for: whose layout
    is known, so no warning of a likely mix-up is given for them."""


def check_step_names(estimator, X, reset: bool) -> None:
    """scikit-learn's check of a DataFrame's column names (``_check_feature_names``), whose
    columns here are time steps: a DataFrame of another number of columns than the fit's
    is refused as one of another length, with the way through (sequences of any length
    are read as arrays), not as missing feature names."""
    try:
        _check_feature_names(estimator, X, reset=reset)
    except ValueError as error:
        columns = getattr(X, "columns", None)
        fitted = getattr(estimator, "n_features_in_", None)
        if reset or columns is None or fitted is None or len(columns) == fitted:
            raise
        raise ValueError(
            f"{type(estimator).__name__} was fitted on a DataFrame whose {fitted} columns "
            f"are time steps; X has {len(columns)}. Sequences of another length are read as "
            "arrays: pass X.to_numpy() (or a list of sequences); scikit-learn then warns "
            "that X has no feature names."
        ) from error


def _refuse_channels_last_list(X) -> None:
    """Refuse 2-D sequences given with ``channels_first=True`` that read so would have
    different channel counts over the same steps: channels-last sequences of different
    lengths (``(n_steps_i, n_channels)``)."""
    shapes = [np.shape(seq) for seq in X]
    if len(shapes) < 2 or not all(len(shape) == 2 for shape in shapes):
        return
    if len({shape[0] for shape in shapes}) > 1 and len({shape[1] for shape in shapes}) == 1:
        distinct = sorted(set(shapes), key=shapes.index)
        shown = ", ".join(str(shape) for shape in distinct[:4])
        shown += ", ..." if len(distinct) > 4 else ""
        raise ValueError(
            f"X is a list of sequences of shapes {shown}: with channels_first=True each is "
            "read as (n_channels, n_steps), which would give them different channel "
            f"counts over the same {shapes[0][1]} steps. They look like (n_steps, "
            "n_channels) sequences of different lengths: pass channels_first=False."
        )


def channels_last(
    X,
    channels_first,
    estimator_name: str = "LMUFeatures",
    fitted_channels: int | None = None,
    param: str = "channels_first={}",
    refuse_one_step: bool = False,
):
    """``X`` laid out as ``(n_samples, n_steps, n_channels)`` for a ``channels_first`` parameter.

    ``True``: ``X`` is ``(n_samples, n_channels, n_steps)`` (aeon, sktime) or a list of
    ``(n_channels, n_steps_i)`` arrays; a 2-D ``X`` or 1-D sequences have one channel.
    ``None``: ``X`` is taken as channels-last, with a warning when a 3-D array has fewer
    steps than channels (the sign of aeon data passed as it comes). ``False``: channels-last,
    no warning. Arrays are swapped as views (NumPy, CuPy and dask alike). A fitted
    estimator's ``fitted_channels`` settle the layout where the last axis holds as many
    (no warning).
    """
    if channels_first is not None and not isinstance(channels_first, (bool, np.bool_)):
        raise TypeError(f"channels_first must be None, True or False; got {channels_first!r}.")
    if channels_first:
        if isinstance(X, (list, tuple)):
            _refuse_channels_last_list(X)
            return [np.swapaxes(seq, 0, 1) if np.ndim(seq) == 2 else seq for seq in X]
        if np.ndim(X) == 3:
            if np.shape(X)[1] == 0:  # named in this layout's terms, before the swap
                raise ValueError(
                    f"X of shape {tuple(np.shape(X))} has zero channels; with "
                    "channels_first=True (aeon's and sktime's layout) axis 1 holds them."
                )
            return X.swapaxes(1, 2) if hasattr(X, "swapaxes") else np.swapaxes(X, 1, 2)
        return X
    if channels_first is None:
        warn_channels_last(X, estimator_name, fitted_channels, param, refuse_one_step)
    return X


def warn_channels_last(
    X,
    estimator_name: str,
    fitted_channels: int | None = None,
    param: str = "channels_first={}",
    refuse_one_step: bool = False,
) -> None:
    """Warn where ``X``, read channels last, is a 3-D array of fewer steps than channels
    (the sign of aeon data passed as it comes), in ``estimator_name``'s name; not where
    its last axis holds the ``fitted_channels`` a fitted estimator was trained on (a
    prefix of few steps of its own layout). With ``refuse_one_step`` (a model's fit),
    refuse it where it would read sequences of one step of several channels (aeon's
    univariate layout ``(n, 1, n_steps)`` as it comes: a model of one step, at chance, with
    only a warning). ``param`` is how the estimator takes ``channels_first``, a template
    of its value (``LMUEarlyClassifier``: ``'estimator=LMUClassifier(channels_first={})'``)."""
    if fitted_channels is not None and _channels_last_match(X, fitted_channels):
        return
    first, last = param.format(True), param.format(False)
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 3 and shape[1] < shape[2]:
        if shape[1] == 1 and refuse_one_step and fitted_channels is None:
            raise ValueError(
                f"{estimator_name} reads X of shape {tuple(shape)} as (n_samples, n_steps, "
                f"n_channels): sequences of 1 step of {shape[2]} channels, which a sequence "
                f"model learns nothing from. If X is laid out as (n_samples, n_channels, "
                f"n_steps) (aeon, sktime: here 1 channel of {shape[2]} steps), pass {first}; "
                f"pass {last} to read it as given."
            )
        warnings.warn(
            f"{estimator_name} reads X of shape {tuple(shape)} as (n_samples, n_steps, "
            f"n_channels): {shape[1]} steps of {shape[2]} channels. If X is laid out as "
            f"(n_samples, n_channels, n_steps) (aeon, sktime), pass {first}; "
            f"pass {last} to silence this warning.",
            UserWarning,
            stacklevel=4,
        )
    elif (
        isinstance(X, (list, tuple))
        and not isinstance(X, _StackedSequences)
        and X
        and _all_wider_than_long(X)
    ):
        first_shape = tuple(np.shape(X[0]))
        if refuse_one_step and fitted_channels is None and all(np.shape(seq)[0] == 1 for seq in X):
            shown = ", ".join(str(tuple(np.shape(seq))) for seq in X[:4])
            more = ", ..." if len(X) > 4 else ""
            raise ValueError(
                f"{estimator_name} reads each sequence of X (of shapes {shown}{more}) as "
                "(n_steps, n_channels): every sequence is 1 step of several channels, "
                "which a sequence model learns nothing from. If they are "
                f"laid out as (n_channels, n_steps) (aeon, sktime), pass {first}; pass "
                f"{last} to read them as given."
            )
        warnings.warn(
            f"{estimator_name} reads each sequence of X (the first of shape {first_shape}) "
            f"as (n_steps, n_channels): {first_shape[0]} steps of {first_shape[1]} channels, "
            "and every sequence has fewer steps than channels. If they are laid out as "
            f"(n_channels, n_steps) (aeon, sktime), pass {first}; pass {last} "
            "to silence this warning.",
            UserWarning,
            stacklevel=4,
        )


def _channels_last_match(X, n_channels: int) -> bool:
    """Whether ``X`` read channels last has ``n_channels`` channels: a 3-D array's last
    axis, or every 2-D sequence's of a list."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return len(shape) == 3 and shape[2] == n_channels
    if isinstance(X, (list, tuple)) and X:
        try:
            return all(np.ndim(seq) == 2 and np.shape(seq)[1] == n_channels for seq in X)
        except ValueError:  # a sequence itself ragged: as_sequences names it
            return False
    return False


def _all_wider_than_long(X) -> bool:
    """Whether every sequence of the list ``X`` is a 2-D array of fewer rows than columns
    (the sign of aeon's ``(n_channels, n_timepoints)`` sequences read channels last)."""
    for seq in X:
        shape = getattr(seq, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] >= shape[1]:
            return False
    return True
