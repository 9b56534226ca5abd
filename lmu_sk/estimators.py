"""``LMUClassifier`` and ``LMURegressor``: Delay Network features plus a dense or ridge head.

Both precompute the Delay Network (DN) features of the whole training set once (the
feed-forward LMU's precomputation mode) and train a head on them: a hand-written dense
network, or a ridge model solved in closed form (the default for small training sets).
They are thin: :class:`~lmu_sk.features.LMUFeatures` computes the features and
:class:`~lmu_sk.head.DenseHeadClassifier` / :class:`~lmu_sk.head.DenseHeadRegressor`
train on them.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import mmap
import types
import warnings
from collections.abc import Callable, Iterator
from numbers import Integral, Real
from typing import Any, ClassVar, Generic, TypeVar, overload

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_feature_names,
    _num_samples,
    check_is_fitted,
    check_memory,
)

from . import _dask
from ._device import (
    HostScoreMixin,
    array_module_of,
    for_module,
    is_device_array,
    portable_device,
    resolve_device,
    to_numpy,
)
from ._input import (
    check_channel_names,
    check_dtype_param,
    check_float_dtype,
    check_step_names,
    from_nested,
    has_output_axis,
    is_ragged,
    nan_padded,
    powers_of_two_near,
    refuse_unreadable,
    step_target_rows,
    warn_channels_last,
)
from ._memory import MemoryBudgetError
from ._persistence import VersionedPickleMixin
from ._progress import StepLog, verbosity
from ._sample_weight import check_sample_weight
from ._state import state_kept_on_error
from ._threads import limits_threads
from ._typing import Result
from ._version import __version__
from .features import LMUFeatures
from .head import (
    DenseHeadClassifier,
    DenseHeadRegressor,
    _BaseDenseHead,
    _num_rows,
    _refuse_weights_as_classes,
    _refuse_weights_as_x_val,
    check_hidden_layer_sizes,
    refuse_multiclass_multioutput,
)
from .pooled import LMUPooledFeatures, check_thetas
from .ridge import (
    AUTO_KERNEL_MAX_SAMPLES,
    RidgeHeadClassifier,
    RidgeHeadRegressor,
    _check_alphas,
    auto_kernel,
    with_class_weight,
)
from .streaming import ClassifierStream, RegressorStream

__all__ = ["LMUClassifier", "LMURegressor"]

# The dense head's parameters, which the composites expose under the same names: every
# parameter of the head class but ``device`` (the composite's own, shared with the features).
# Derived from the class, so a new head parameter cannot be forgotten here; the composites'
# ``__init__`` lists them explicitly, as scikit-learn requires (a test checks both agree).
_HEAD_PARAMS = tuple(name for name in _BaseDenseHead._get_param_names() if name != "device")
HEADS = ("auto", "dense", "ridge")
# the parameters only one head reads (the others: the features', or both heads'): set away
# from their defaults where the other head trains, they change nothing, which a fit warns
# of (a grid search over alpha under the ridge head compared one model with itself)
_DENSE_ONLY_PARAMS = tuple(
    name for name in _HEAD_PARAMS if name not in ("dtype", "random_state", "verbose", "warm_start")
)
_RIDGE_ONLY_PARAMS = ("alphas", "kernel")
# rows standardized at a time (float64 temporaries of float32 features)
_SCALE_BLOCK_ROWS = 4096
# head='auto' solves ridge in closed form up to this many training sequences
_RIDGE_MAX_SAMPLES = 100_000
# beyond this many training sequences the default pooled features take this many
# thresholds instead of 16: about a quarter of the features (4 300 for one channel), so
# that the ridge head's O(n_samples * n_features^2) solve stays a few seconds per 10 000
_MANY_SAMPLES = 10_000
_MANY_SAMPLES_BIASES = 4
# the classifier's pooled features take this many thresholds where its ridge head fits the
# Gaussian kernel (kernel='rbf', or 'auto' taking it). Over the 42 development sets, with
# kernel='auto' (up to 400 training sequences averaging at least 10 per class): 0.8710 /
# 0.8776 (42 / 33 UCR sets) at 16, GesturePebbleZ2 3.2 points behind MiniRocket; 0.8706 /
# 0.8772 at 12, no set more than 2.4 points behind; 0.8687 / 0.8750 at 8
_KERNEL_BIASES = 12
# The classifier's ridge head on the pooled features of at most this many training
# sequences also chooses, by its leave-one-out error, how much the longer windows are
# down-weighted: window w's features times 2 ** (-g * r_w), r_w its log length from 0 (the
# shortest) to 1 (the longest), for each decay g here. The long windows hold most of the
# features (the cumulative sum feeds only them) and so most of the penalty's prior; where
# the sequences are few, the short ones can matter more (PigAirwayPressure, 52 classes of 2
# training series: 0.875 -> 0.938). Over the 42 development sets (one eigendecomposition
# more per fit) 0.8627 -> 0.8654, 0.8687 -> 0.8721 on the 33 UCR ones; decays (0, 1),
# (0, 2, 4) and (0, 1, 2, 3, 4) gave 0.8652, 0.8655 and 0.8642. Every set that changed has
# at most 400 training sequences: beyond, the second eigendecomposition costs more than
# the prior gives (up to 1 000 before: the same 42 accuracies, 0.3-0.7 s more of
# their ~23 s, the four sets of 600-613 sequences).
_WINDOW_DECAYS = (0.0, 2.0)
_WINDOW_DECAY_MAX_SAMPLES = 400


# the feature transformer's parameters that partial_fit does not compare with the fitted
# transformer's: the output (its own check and message), the device (the fitted features
# are continued where they run), those that depend on the training set's size or targets
_UNCOMPARED_FEATURE_PARAMS = frozenset({"output", "device", "n_biases", "target_type"})
# the composite's parameter behind a transformer's parameter of another name
_COMPOSITE_PARAM = {"thetas": "theta"}


def _same_value(a, b) -> bool:
    """Whether two parameter values are equal, sequences and arrays element by element."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    try:
        return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
    except (TypeError, ValueError):  # (ragged or unlike values)
        return a == b


def _window_decay_weights(features, decays) -> np.ndarray | None:
    """Candidate weights of pooled features that shrink the longer windows' columns.

    Parameters
    ----------
    features : LMUPooledFeatures, fitted
    decays : sequence of float
        Decays ``g``: candidate ``k`` weights window ``w``'s columns by
        ``2 ** (-decays[k] * r_w)``, ``r_w = log(theta_w / min theta) / log(max theta /
        min theta)``, 0 for the shortest window and 1 for the longest.

    Returns
    -------
    ndarray of shape (len(decays), n_features_out_) or None
        ``None`` for other features, fewer than two decays or windows of one length.
    """
    thetas = getattr(features, "thetas_", None)
    spec = getattr(features, "spec_", None)
    if thetas is None or spec is None or len(decays) < 2:
        return None
    offsets = spec.window_offsets()
    spread = float(np.log(thetas.max() / thetas.min()))
    if offsets[-1] != features.n_features_out_ or not spread > 0:
        return None
    rank = np.repeat(np.log(thetas / thetas.min()) / spread, np.diff(offsets))
    return np.stack([2.0 ** (-float(g) * rank) for g in decays])


@contextlib.contextmanager
def _estimator_memory_advice() -> Iterator[None]:
    """The features' refusals of memory advise what an estimator's user can do: the LMU
    estimators have no ``max_memory`` (their features take the transformers' default, at
    most half of the memory available), so 'raise max_memory' is said as freeing memory
    or giving a transformer its own budget."""
    try:
        yield
    except MemoryBudgetError as exc:
        message = str(exc).replace(
            "raise max_memory",
            "free memory (the estimator's features take at most half of what is available; "
            "LMUPooledFeatures or LMUFeatures in a Pipeline take a max_memory of their own)",
        )
        raise MemoryBudgetError(message) from exc


def _features_of(
    transformer_params: dict,
    X,
    y=None,
    on_device: bool = False,
    verbose=False,
    float64: bool = False,
    version: str = __version__,
    sample_weight=None,
):
    """Fit the feature transformer of ``transformer_params`` on ``X`` (and ``y``, which
    pooled features screen many channels against; the sequences of ``sample_weight`` 0
    left out) and transform ``X``.

    ``output='pooled'`` makes an :class:`LMUPooledFeatures`, anything else an
    :class:`LMUFeatures`. With ``on_device`` the features of a GPU computation are returned
    as CuPy arrays. ``verbose`` shows the transformer's progress (and is not part of the
    ``memory`` cache's key). ``float64`` returns the features in float64 whatever the
    transformer's dtype. ``version``, lmu_sk's, is part of the cache's key (given by the
    callers): features cached by another release, whose defaults or computation may
    differ, are computed again.
    """
    transformer = _make_transformer(transformer_params, verbose)
    dtype = np.float64 if float64 else None
    # X validated once, for both
    return transformer, transformer._fit_transform(
        X, return_gpu_arrays=on_device, dtype=dtype, y=y, sample_weight=sample_weight
    )


_SEQUENCE_NAN_PADDING = (
    "Input X contains NaN at the end of {} sequence(s) and nowhere else: sequences of "
    "different lengths padded with NaN. With feature_output='sequence' pad them with a "
    "finite value instead (np.nan_to_num(X)) and give the padded steps NaN targets: they "
    "are left out of training and scoring, and the steps after a sequence's end do not "
    "change the features before it."
)
_SEQUENCE_LENGTHS = (
    "feature_output='sequence' needs sequences of equal length (one target per step of "
    "each); pad them to one length, with NaN targets at the padded steps (left out of "
    "training and scoring), or fit one model per length."
)
_SEQUENCE_LENGTHS_PREDICTED = (
    "feature_output='sequence' predicts sequences of one length at a time (one prediction "
    "per step of each); pad them to one length (with zeros, say) and keep the first "
    "n_steps predictions of each (a step's prediction does not depend on the steps after "
    "it), or predict each length apart."
)


def _screening_targets(y):
    """``y`` as the pooled features' channel screening reads it: one target per sequence,
    a column vector as 1-D and several outputs as columns; ``None`` for anything else (the
    targets of every step of sequences of different lengths)."""
    if y is None:
        return None
    targets = y
    if not _dask.is_dask_array(y):  # a dask y stays lazy: only the rows screened are computed
        try:
            targets = np.asarray(y)
        except ValueError:  # ragged targets per step
            return None
    if targets.ndim == 2 and targets.shape[1] == 1:
        return targets[:, 0]
    return targets if targets.ndim in (1, 2) else None


def _as_float_targets(y):
    """Per-step targets as an array, pandas' missing values (``pd.NA`` of nullable
    columns) as NaN, which marks a missing step (they met NumPy as an object array the
    missing steps were not looked for in, and scikit-learn's checks failed on them)."""
    if hasattr(y, "to_numpy") and hasattr(y, "dtypes"):  # a pandas DataFrame or Series
        from pandas.api.types import is_numeric_dtype

        dtypes = [y.dtypes] if y.ndim == 1 else list(y.dtypes)
        if all(is_numeric_dtype(dtype) for dtype in dtypes):
            return y.to_numpy(dtype=np.float64, na_value=np.nan)
        return np.asarray(y)  # (text, which to_numpy(dtype=float) parses: the head refuses it)
    return np.asarray(to_numpy(y))  # (a CuPy y comes over to the host)


def _broadcast_rows(rows: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A boolean per row, shaped to broadcast against the rows of ``like``."""
    return rows.reshape(len(rows), *([1] * (np.ndim(like) - 1)))


def _fitted_order(features) -> int:
    """The order of fitted features: pooled ones choose one per window (the largest)."""
    if isinstance(features, LMUPooledFeatures):
        return int(features.orders_.max())
    return int(features.order_)


def _make_transformer(transformer_params: dict, verbose=False):
    """The unfitted feature transformer of ``transformer_params``: ``output='pooled'``
    makes an :class:`LMUPooledFeatures`, anything else an :class:`LMUFeatures`."""
    params = dict(transformer_params, verbose=verbose)
    if params["output"] == "pooled":
        params.pop("output")
        return LMUPooledFeatures(**params)
    return LMUFeatures(**params)


def _refuse_no_sequences(X, name: str, fitting: bool) -> None:
    """A ValueError in the estimator's own name where ``X`` holds no sequence (the feature
    transformer's check would name the transformer, which the user did not build)."""
    if _dask.is_dask_array(X):
        return
    try:
        n_samples = _num_samples(X)
    except TypeError:  # (not array-like: the input's own checks say what it is)
        return
    if n_samples == 0:
        doing = "fit" if fitting else "predict"
        raise ValueError(
            f"{name} got X with no sequences (shape {getattr(X, 'shape', (0,))}): {doing} "
            "needs at least one."
        )


def _head_has(method: str):
    """For ``available_if``: the head (before fitting: the one ``head`` names, or for
    'auto' either head, which fit chooses) has ``method``."""

    def check(estimator) -> bool:
        head = getattr(estimator, "head_", None)
        if head is not None:
            return hasattr(head, method)
        ridge, dense = (
            hasattr(estimator._ridge_class, method),
            hasattr(estimator._head_class, method),
        )
        if estimator.head == "ridge":
            return ridge
        if estimator.head == "dense":
            return dense
        # 'auto': the ridge head up to 100 000 sequences, the dense head beyond; before
        # fit, a meta-estimator that asks (StackingClassifier's stack_method) sees what
        # the model will almost always have (the ridge head's decision_function)
        return ridge or dense

    return check


# a column whose standard deviation is at most this fraction of its mean is constant
_CONSTANT_SPREAD = 1e-12
# float32 training features: a column whose standard deviation is at most this many times
# its rounding, measured on this many training sequences computed in float64, is constant
# (see _LMUBase._scale_within_rounding)
_ROUNDING_SPREADS = 4.0
_ROUNDING_ROWS = 64


def _weighted_moments(F, sample_weight=None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean and (biased) standard deviation of the columns of ``F`` (NumPy or
    CuPy), in float64 on the host; ``None`` weighs every row alike. Passes over blocks of
    rows whose float64 temporaries stay in the cache (~4 MiB): faster than ``F.std``'s
    feature-sized ones. Columns whose squares leave float64's range (values beyond 1e154,
    or below 1e-140: their variance infinite or below 1e-280) are summed again over a power
    of two near their largest value (they became an infinite scale, or a scale of their
    rounding, and every standardized feature 0)."""
    xp = array_module_of(F)
    if sample_weight is None:
        w = xp.full(F.shape[0], 1.0 / max(F.shape[0], 1))
    else:
        w = xp.asarray(sample_weight, dtype=np.float64) / float(np.sum(sample_weight))
    block = max(16, (1 << 19) // max(F.shape[1], 1))
    mean = xp.zeros(F.shape[1], dtype=np.float64)
    for start in range(0, F.shape[0], block):
        mean += w[start : start + block] @ F[start : start + block].astype(np.float64, copy=False)
    with np.errstate(over="ignore", under="ignore"):  # (such columns are summed again)
        var = _weighted_squares(F, w, mean, block, xp)
    extreme = ~xp.isfinite(var) | (var < 1e-280)
    if bool(extreme.any()):
        columns = xp.flatnonzero(extreme)
        part = F[:, columns]
        largest = xp.abs(part).max(axis=0).astype(np.float64)
        unit = powers_of_two_near(largest, xp)
        scaled = _weighted_squares(part, w, mean[columns], block, xp, unit)
        std = xp.sqrt(xp.where(extreme, 0.0, var))
        std[columns] = xp.sqrt(scaled) * unit
        return to_numpy(mean), to_numpy(std)
    return to_numpy(mean), to_numpy(xp.sqrt(var))


def _weighted_squares(F, w, mean, block: int, xp: types.ModuleType, unit=None):
    """``sum_i w_i ((F_i - mean) / unit)^2`` per column, by blocks of rows."""
    var = xp.zeros(F.shape[1], dtype=np.float64)
    for start in range(0, F.shape[0], block):
        centered = F[start : start + block] - mean  # float64, a fresh block
        if unit is not None:
            centered /= unit
        centered *= centered
        var += w[start : start + block] @ centered
    return var


def _scale_of(mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """The scale of columns of ``mean`` and standard deviation ``std``: ``std``, but 1 for
    a constant column, whose spread is the rounding of its mean (~1e-16 of it), not zero
    (standardized, its values are that rounding)."""
    constant = std <= _CONSTANT_SPREAD * np.abs(mean)
    return np.where((std > 0) & ~constant, std, 1.0)


def standardization(F, sample_weight=None) -> tuple[np.ndarray, np.ndarray]:
    """The (weighted) mean and the scale that standardize the columns of the feature rows
    ``F`` (NumPy or CuPy), float64 on the host, as the composites' ``scale_features``
    standardizes their features."""
    mean, std = _weighted_moments(F, sample_weight)
    return mean, _scale_of(mean, std)


def _without_names(X):
    """A DataFrame (anything with ``columns`` and ``to_numpy``) as a NumPy array, else ``X``.

    The composites check feature names themselves (naming the composite in the messages),
    so the feature transformer gets plain arrays and does not check (and warn) twice.
    """
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):
        return X.to_numpy()
    return X


def _shape_of(y) -> tuple[int, ...]:
    """The shape of the targets ``y`` as an array (array-likes without NumPy's functions,
    as scikit-learn's checks pass, too; a dask array's without computing it); ``()``
    where they are ragged."""
    if _dask.is_dask_array(y):
        return tuple(y.shape)
    try:
        return np.asarray(y).shape
    except ValueError:  # ragged
        return ()


# how the held-out input is named in the errors of its checks
_X_VAL = "X_val (the held-out sequences)"
_Y_VAL = "y_val (the held-out targets)"


def _check_held_out_lengths(X_val, y_val) -> None:
    """Refuse held-out sequences (read: their layout checked) and targets of different
    numbers, naming both; a count dask does not know yet is left to the targets' own
    alignment."""
    if y_val is None:
        return
    if not len(_shape_of(y_val)):  # a single number, or rows of different lengths
        raise ValueError(
            "y_val must hold one target (or one row of targets of one length) per held-out "
            f"sequence; got {type(y_val).__name__} {y_val!r:.60}."
        )
    n_val, n_targets = _num_samples(X_val), _shape_of(y_val)[0]
    if math.isnan(n_val) or math.isnan(n_targets):
        return
    if n_val != n_targets:
        raise ValueError(
            f"X_val holds {n_val} sequences but y_val {n_targets} targets (or rows of "
            "targets); give one per held-out sequence."
        )


def _is_default(value, default) -> bool:
    """Whether a parameter's ``value`` equals its ``default`` as the head reads it: numbers
    by value whatever their type (``np.float64(1e-4)``, ``np.int64(200)``, ``0`` for
    ``0.0``: as a grid search or a table of parameters passes them), booleans as booleans,
    a sequence of layer sizes by its items (``[100]``, ``np.array([100])`` or ``100`` for
    ``(100,)``); anything else equal and of the same type (an object that cannot be
    compared counts as set)."""
    if value is default:
        return True
    if isinstance(default, bool) or isinstance(value, (bool, np.bool_)):
        return isinstance(value, (bool, np.bool_)) and bool(value) == default
    if isinstance(default, Real) and isinstance(value, Real):
        return bool(value == default)
    if isinstance(default, tuple):
        if isinstance(value, np.ndarray):
            value = value.tolist() if value.ndim == 1 else value
        elif isinstance(value, Integral):
            value = (value,)
        if isinstance(value, (list, tuple)):
            return len(value) == len(default) and all(
                _is_default(item, item_default)
                for item, item_default in zip(value, default, strict=True)
            )
        return False
    if isinstance(default, str):
        return isinstance(value, str) and value == default
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):
        return False


def _standardized_block(F, mean, scale):
    """``(F - mean) / scale`` in float64, in the dtype of ``F``, on the array module of
    ``F`` (a block of dask features: NumPy or CuPy), without writing to ``F``."""
    xp = array_module_of(F)
    mean = xp.asarray(mean, dtype=np.float64)
    scale = xp.asarray(scale, dtype=np.float64)
    return ((F.astype(np.float64, copy=False) - mean) / scale).astype(F.dtype, copy=False)


def _maps_a_file(a) -> bool:
    """Whether the array ``a`` is, or is a view of, a memory-mapped file."""
    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


@contextlib.contextmanager
def _naming(name: str) -> Iterator[None]:
    """Re-raise the ValueErrors of the block as errors of the input ``name`` (the
    checks' messages speak of X and y)."""
    try:
        yield
    except (ValueError, TypeError) as error:
        raise _renamed(error, name) from error


def _renamed(error: Exception, name: str) -> Exception:
    """``error`` (a ValueError or TypeError of the input ``X``) saying it is of ``name``:
    of its own type where that takes a message alone."""
    message = f"In {name}: {error}"
    try:
        return type(error)(message)
    except TypeError:
        return (TypeError if isinstance(error, TypeError) else ValueError)(message)


def _why_not_incremental(estimator) -> str | None:
    """Why ``estimator`` has no ``partial_fit``, or None where it has one.

    Only the dense head trains incrementally, so ``partial_fit`` needs ``head='dense'``
    (or 'auto' where that is the dense head whatever the data: a regressor's per-step
    features): elsewhere 'auto' would train another model than ``fit`` (the ridge head up
    to 100 000 sequences), 'ridge' none at all.
    """
    name = type(estimator).__name__
    # ('auto' with per-step features is the dense head whatever the data: see
    # LMURegressor._resolved_head)
    if estimator.head == "dense" or (
        estimator.head == "auto" and estimator._resolved_head(0) == "dense"
    ):
        if getattr(estimator, "head_kind_", "dense") == "dense":
            return None
        return (
            f"This {name} was fitted with the {estimator.head_kind_} head, which partial_fit "
            "cannot continue: call fit (now with head='dense') first, then partial_fit."
        )
    if estimator.head == "auto":
        why = (
            "head='auto': fit chooses the ridge head, solved in closed form, up to 100 000 "
            "sequences (the dense head beyond), and partial_fit cannot train it"
        )
    elif estimator.head == "ridge":
        why = "head='ridge': the ridge head is solved in closed form by fit"
    else:
        return None  # an unknown head: partial_fit's validation names it
    return (
        f"{name} has no partial_fit with {why}. Use fit, or set head='dense' to train "
        "incrementally with partial_fit."
    )


class _OnlyIncremental:
    """``partial_fit``, present only where the head trains incrementally (``head='dense'``).

    Elsewhere reading it raises an ``AttributeError`` that says why and what to use (so
    ``hasattr(model, 'partial_fit')`` is False, as for scikit-learn's estimators that
    cannot train incrementally); scikit-learn's ``available_if`` would replace the reason
    with a bare "has no attribute".
    """

    def __init__(self, method):
        self.method = method
        functools.update_wrapper(self, method)

    def __get__(self, estimator, owner=None) -> Any:
        if estimator is None:
            return self.method
        reason = _why_not_incremental(estimator)
        if reason is not None:
            raise AttributeError(reason)
        return types.MethodType(self.method, estimator)


_Value = TypeVar("_Value")


class _FromHead(Generic[_Value]):
    """A fitted attribute of the composite read through its fitted head ``head_``.

    The composites hold their head rather than copy its fitted values: ``clf.coefs_`` is
    ``clf.head_.coefs_``. Before fitting, or when the head has no such attribute (the ridge
    head has no ``loss_curve_``), reading it raises ``AttributeError``, so ``hasattr``
    answers as for an attribute that was never set. The type parameter is the attribute's
    type, for type checkers (``alpha_: _FromHead[float]`` reads as a float).
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, estimator: None, owner: type | None = None) -> _FromHead[_Value]: ...

    @overload
    def __get__(self, estimator: object, owner: type | None = None) -> _Value: ...

    def __get__(self, estimator, owner=None):
        if estimator is None:
            return self
        head = estimator.__dict__.get("head_")
        if head is None:
            raise AttributeError(
                f"{type(estimator).__name__} has no attribute {self.name!r} before fit."
            )
        try:
            return getattr(head, self.name)
        except AttributeError:
            raise AttributeError(
                f"{type(estimator).__name__} has no attribute {self.name!r}: its "
                f"{type(head).__name__} head has none."
            ) from None


class _LMUBase(BaseEstimator):
    """Shared logic of the LMU estimators; not meant to be used directly."""

    # The head's constraints (checked here, so that errors name the composite) and the
    # composite's own simple ones, whichever head and features use them; order, theta,
    # head, feature_output and alphas keep their dedicated checks and messages (alphas
    # checked in fit whatever the head: see _validate_params).
    _parameter_constraints: ClassVar[dict] = {
        **{name: _BaseDenseHead._parameter_constraints[name] for name in _HEAD_PARAMS},
        "device": [StrOptions({"auto", "cpu", "gpu"})],
        "scale_features": ["boolean"],
        "memory": [None, str, HasMethods(["cache"])],
        "channels_first": ["boolean", None],
        "kernel": [StrOptions({"linear", "rbf"})],
        "discretizer": [StrOptions({"zoh", "euler"})],
        "channels": [StrOptions({"auto", "all"}), Interval(Integral, 1, None, closed="left")],
        "channel_sums": [StrOptions({"auto"}), "boolean"],
    }

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.alphas is not None:  # (the ridge head's penalties: checked for any head)
            _check_alphas(self.alphas)
        # (the dense head's layers: checked for any head, naming this estimator)
        check_hidden_layer_sizes(self.hidden_layer_sizes, type(self).__name__)
        check_float_dtype(self.dtype, type(self).__name__)  # the features' and the head's

    _head_class: type
    _feature_outputs: tuple[str, ...] = ("auto", "final", "mean", "max", "pooled")
    # what head='auto' becomes for a small training set
    _small_data_head = "ridge"
    # the decays of the longer windows the ridge head chooses from (none: not weighted)
    _window_decays: tuple[float, ...] = ()
    # what y holds for the pooled features' screening of many channels
    _target_type: str

    # fitted values of the head, read through head_ (see _FromHead)
    coefs_: _FromHead[list[np.ndarray]] = _FromHead()
    intercepts_: _FromHead[list[np.ndarray]] = _FromHead()
    loss_: _FromHead[float] = _FromHead()
    loss_curve_: _FromHead[list[float]] = _FromHead()
    validation_scores_: _FromHead[list[float] | None] = _FromHead()
    best_loss_: _FromHead[float | None] = _FromHead()
    best_validation_score_: _FromHead[float | None] = _FromHead()
    n_iter_: _FromHead[int] = _FromHead()
    t_: _FromHead[int] = _FromHead()
    n_outputs_: _FromHead[int] = _FromHead()
    n_layers_: _FromHead[int] = _FromHead()
    out_activation_: _FromHead[str] = _FromHead()
    activation_: _FromHead[str] = _FromHead()
    alpha_: _FromHead[float] = _FromHead()

    @property
    def _standardized(self) -> bool:
        """Whether the fitted model standardizes its features: ``scale_features`` as it
        was at fit (a value set later applies at the next fit, as every parameter does)."""
        return self.__dict__.get("feature_mean_") is not None

    @staticmethod
    def _migrated_state(state: dict) -> dict:
        """A saved state as this version holds it: a model fitted without standardization
        by a build before it was recorded as ``None`` (the same version number, 0.3.0's
        development) has neither attribute."""
        if "head_" in state and state.get("scale_features") is False:
            state.setdefault("feature_mean_", None)
            state.setdefault("feature_scale_", None)
        return state

    @classmethod
    def _required_fitted(cls, state: dict) -> tuple[str, ...]:
        """What every fitted composite of the saved parameters holds (checked at load)."""
        # the standardization as fitted (None where scale_features was False then)
        return (
            "features_",
            "head_",
            "head_kind_",
            "order_",
            "n_features_in_",
            "feature_mean_",
            "feature_scale_",
        )

    @classmethod
    def _inconsistent_state(cls, state: dict) -> str | None:
        """What makes a fitted saved state unusable though complete (checked at load, where
        it would fail later with a raw error or predict otherwise), or None."""
        head = state["head_"]
        heads = (_BaseDenseHead, RidgeHeadClassifier, RidgeHeadRegressor)
        if not isinstance(head, heads):
            return f"a head_ of type {type(head).__name__}"
        mean, scale = state["feature_mean_"], state["feature_scale_"]
        if (mean is None) != (scale is None):
            return "only one of feature_mean_ and feature_scale_"
        if mean is None:
            return None
        width = getattr(head, "n_features_in_", None)
        for name, values in (("feature_mean_", mean), ("feature_scale_", scale)):
            if np.ndim(values) != 1 or (width is not None and len(values) != width):
                return f"a {name} of shape {np.shape(values)} for a head of {width} features"
        return None

    # the composite's own fitted attributes, declared for type checkers (set by fit)
    features_: LMUFeatures | LMUPooledFeatures
    head_: Any
    head_kind_: str
    order_: int
    n_features_in_: int
    feature_names_in_: np.ndarray
    feature_mean_: np.ndarray
    feature_scale_: np.ndarray

    def __init__(
        self,
        order=None,
        theta=None,
        discretizer="zoh",
        feature_output="auto",
        scale_features=True,
        memory=None,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        head="auto",
        alphas=None,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=1e-3,
        power_t=0.5,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        warm_start=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        dropout=0.0,
        input_dropout=0.0,
        dtype="float32",
        device="auto",
        channels_first=None,
        n_jobs=None,
        channels="auto",
        channel_sums="auto",
        kernel="linear",
    ):
        self.order = order
        self.theta = theta
        self.discretizer = discretizer
        self.feature_output = feature_output
        self.scale_features = scale_features
        self.memory = memory
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.head = head
        self.alphas = alphas
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.dropout = dropout
        self.input_dropout = input_dropout
        self.dtype = dtype
        self.device = device
        self.channels_first = channels_first
        self.n_jobs = n_jobs
        self.channels = channels
        self.channel_sums = channel_sums
        self.kernel = kernel

    # ------------------------------------------------------------------ choices
    def _warn_of_unused_head_params(self, stacklevel: int = 5) -> None:
        """Warn where parameters only the other head reads are set away from their
        defaults: they change nothing in this fit."""
        unused = _DENSE_ONLY_PARAMS if self.head_kind_ == "ridge" else _RIDGE_ONLY_PARAMS
        defaults = {
            name: parameter.default
            for name, parameter in inspect.signature(type(self).__init__).parameters.items()
        }
        changed = [name for name in unused if not _is_default(getattr(self, name), defaults[name])]
        if not changed:
            return
        other = "dense" if self.head_kind_ == "ridge" else "ridge"
        why = f"head={self.head!r}" + (
            " chose it for this training set" if self.head == "auto" else ""
        )
        hint = (
            "its penalty is chosen among alphas by leave-one-out"
            if self.head_kind_ == "ridge"
            else "its penalties are alpha (L2) and dropout"
        )
        warnings.warn(
            f"{type(self).__name__} fits the {self.head_kind_} head ({why}; {hint}), which "
            f"does not read {', '.join(changed)}: the {other} head's, set here to no "
            f"effect. Set head={other!r} to train the {other} head, or leave them at their "
            "defaults.",
            UserWarning,
            stacklevel=stacklevel,
        )

    def _resolved_head(self, n_samples: int) -> str:
        """'dense' or 'ridge': ``head``, with 'auto' decided by the training set's size."""
        if self.head not in HEADS:
            raise ValueError(f"Unknown head {self.head!r}; use one of {HEADS}.")
        if self.head != "auto":
            return self.head
        return self._small_data_head if n_samples <= _RIDGE_MAX_SAMPLES else "dense"

    def _resolved_output(self, head: str) -> str:
        """``feature_output``, with 'auto' pooled for the ridge head and final for dense."""
        if self.feature_output not in self._feature_outputs:
            raise ValueError(
                f"Unknown feature_output {self.feature_output!r} for "
                f"{type(self).__name__}; use one of {self._feature_outputs}."
            )
        if self.feature_output != "auto":
            return self.feature_output
        return "pooled" if head == "ridge" else "final"

    # ------------------------------------------------------------------ features
    def _transformer_params(self, n_samples: int = 0, gaussian: bool = False) -> dict:
        """The feature transformer's parameters for a training set of ``n_samples``, for a
        ridge head that fits the Gaussian kernel where ``gaussian``."""
        if not isinstance(self.scale_features, (bool, np.bool_)):
            raise TypeError(f"scale_features must be True or False; got {self.scale_features!r}.")
        output = self._resolved_output(self.head_kind_)
        dtype = check_dtype_param(self.dtype).name
        # checked here (device='gpu' needs one now) but stored as 'auto' so that the
        # fitted model also transforms on machines without a GPU
        device = portable_device(resolve_device(self.device))
        if output == "pooled":
            if self.theta is not None:  # checked in this estimator's name
                check_thetas(self.theta, "theta")
            # LMUPooledFeatures' own defaults, but for what the composite is given, and
            # fewer thresholds for many training sequences
            params = {
                "order": self.order,
                "thetas": self.theta,
                "discretizer": self.discretizer,
                "output": output,
                "dtype": dtype,
                "device": device,
                "channels_first": bool(self.channels_first),  # None's warning: see _layout
                "channels": self.channels,
                "channel_sums": self.channel_sums,
                "target_type": self._target_type,
            }
            if n_samples > _MANY_SAMPLES:
                params["n_biases"] = _MANY_SAMPLES_BIASES
            elif gaussian:
                params["n_biases"] = _KERNEL_BIASES
            return params
        if np.ndim(self.theta) > 0 and not isinstance(self.theta, str):
            raise ValueError(
                f"theta={self.theta!r} (several windows) is for pooled features, of "
                f"feature_output='pooled' (the default of the ridge head); with "
                f"feature_output={self.feature_output!r} and head={self.head!r} the features "
                f"are those of one window ({output!r}): pass one theta."
            )
        return {
            "order": self.order,
            "theta": self.theta,
            "discretizer": self.discretizer,
            "output": output,
            "dtype": dtype,
            "device": device,
            "channels_first": bool(self.channels_first),  # None's warning: see _layout
        }

    def _takes_gaussian_kernel(self, y, sample_weight, n_samples: int) -> bool:
        """Whether the ridge head will fit the Gaussian kernel on these targets (the
        classifier's pooled features then take ``_KERNEL_BIASES`` thresholds)."""
        return False

    def _fit_features(self, X, y=None, sample_weight=None):
        """Fit the transformer, compute training features and the scaling; cached by memory.

        On a GPU the features stay on the device (a CuPy array) for the head, except when
        ``memory`` caches them: the cache lives on the host. With ``sample_weight`` (one
        weight per feature row) the scaling uses the weighted mean and standard deviation,
        so integer weights scale as repeated rows do and a zero weight takes no part.
        """
        n_samples = _num_samples(X)
        gaussian = self._takes_gaussian_kernel(y, sample_weight, n_samples)
        params = self._transformer_params(n_samples, gaussian)
        on_device = params["device"] != "cpu" and self.memory is None
        compute = check_memory(self.memory).cache(_features_of, ignore=["verbose"])
        # the ridge head solves in float64: its features are made so, and scaled in place
        float64 = self.head_kind_ == "ridge"
        with _estimator_memory_advice():
            self.features_, F = compute(
                params,
                X,
                _screening_targets(y),
                on_device,
                verbose=self.verbose,
                float64=float64,
                version=__version__,
                # the sequences of weight 0 left out of the transformer's fit (per-step
                # weights: one length, whose features' fit the weights cannot change)
                sample_weight=None if params["output"] == "sequence" else sample_weight,
            )
        self.features_.set_params(verbose=self.verbose)  # a cached transformer may differ
        self.order_ = _fitted_order(self.features_)
        self.n_features_in_ = self.features_.n_features_in_
        F = self._as_rows(F)
        log = StepLog(
            f"{type(self).__name__}: ", verbosity(self.verbose) if self.scale_features else 0
        )
        with log.step(f"standardization of {F.shape[0]} x {F.shape[1]} features"):
            self._fit_scaling(F, sample_weight)
            self._scale_within_rounding(X, F)
            return self._scale(F)

    def _fit_scaling(self, F, sample_weight=None) -> None:
        """The standardization of the feature rows ``F`` (NumPy, CuPy or dask), float64."""
        if not self.scale_features:  # recorded: none (scale_features may be set later)
            self.feature_mean_ = self.feature_scale_ = None
            return
        if _dask.is_dask_array(F):
            mean, std = _dask.column_moments(F)
            self.feature_mean_, self.feature_scale_ = mean, _scale_of(mean, std)
        else:
            self.feature_mean_, self.feature_scale_ = standardization(F, sample_weight)

    def _scale_within_rounding(self, X, F) -> None:
        """Columns of float32 training features whose spread is their rounding: constant.

        Identical sequences can give float32 features that differ by their rounding (BLAS
        sums a row in an order set by its place in the block), and predictions compute
        the features in float64: a constant column (a constant channel's states) scaled
        by that rounding put every new value tens of standard deviations away (a dense
        head's accuracy 0.86 -> 0.20 with a constant channel added). The rounding is
        measured on ``_ROUNDING_ROWS`` training sequences spread over the set, computed
        again in float64 (for a dask array, those sequences' features are computed twice,
        in float32 and float64; no block's are taken), and a column whose spread is within
        ``_ROUNDING_SPREADS`` times it is treated as constant (scale 1), as a column of one
        value is.
        """
        lazy = _dask.is_dask_array(F)
        if not (self._standardized and (isinstance(F, np.ndarray) or is_device_array(F) or lazy)):
            return
        n_samples = _num_samples(X)
        if F.dtype != np.float32 or F.ndim != 2 or n_samples == 0 or F.shape[0] != n_samples:
            return  # (rows of steps: not measured)
        # evenly spread: the rounding of a row depends on its place in the blocks
        rows = np.unique(np.linspace(0, n_samples - 1, _ROUNDING_ROWS).astype(np.int64))
        if isinstance(X, (list, tuple)):
            sample = [X[i] for i in rows]
        elif _dask.is_dask_array(X):  # (a dask array's rows computed: only these)
            sample = X[rows].compute()
        elif is_device_array(X):  # (on its device: NumPy's asarray refuses a CuPy array)
            sample = X[array_module_of(X).asarray(rows)]
        else:
            sample = np.asarray(X)[rows]
        exact = np.asarray(self.features_._transform(sample, False, dtype=np.float64))
        # a dask array's: the sample's float32 features computed as a block computes them
        # (taking its rows of F would compute every block)
        computed = (
            np.asarray(self.features_._transform(sample, False)) if lazy else to_numpy(F[rows])
        )
        rounding = np.sqrt(np.mean((exact - computed) ** 2, axis=0))
        within = self.feature_scale_ <= _ROUNDING_SPREADS * rounding
        self.feature_scale_ = np.where(within, 1.0, self.feature_scale_)

    def _layout(self, X, reset: bool = False):
        """``X`` as the feature transformer reads it (sktime's nested DataFrames as lists,
        their channel names recorded where ``reset``, else checked), with
        ``channels_first=None``'s warning in this estimator's name (the transformer is
        given ``channels_first=False`` then, which reads alike without warning)."""
        check_channel_names(self, X, reset)
        X = from_nested(X, self.channels_first)
        _refuse_no_sequences(X, type(self).__name__, reset)
        if self.channels_first is None:
            features = None if reset else self.__dict__.get("features_")
            fitted = None if features is None else features._layout_settled()
            # (refused at a fit only: a fitted model predicts on prefixes of any length)
            warn_channels_last(X, type(self).__name__, fitted, refuse_one_step=reset)
        return X

    def _apply_head(self, X, method: str):
        """The fitted head's ``method`` on the features of ``X`` (not a dask array)."""
        check_is_fitted(self, "head_")
        X = self._layout(X)
        check_step_names(self, X, reset=False)
        predict = self._head_method(method)
        # float64 at prediction: see _transform. Pooled features reach the head chunk by
        # chunk as they are computed, never all held at once.
        on_device = self.device != "cpu"
        return self.features_._transform(
            _without_names(X),
            on_device,
            dtype=np.float64,
            reduce=lambda F: predict(self._as_rows(F)),
        )

    def _head_method(self, method: str) -> Callable:
        """The fitted head's ``method`` as a map of float64 feature rows, standardized as
        in training.

        A ridge head's standardization folds into its coefficients (the Gaussian kernel's
        model: into the weights and offset of the rows it compares): where that is well
        conditioned it acts on the features as they are, which spares two passes over
        them (most of a small model's prediction time).
        """
        if self.head_kind_ == "ridge" and self._standardized:
            folded = self.head_._standardization_folded(self.feature_mean_, self.feature_scale_)
            if folded is not None:
                return getattr(folded, method)
        head_method = getattr(self.head_, method)
        return lambda rows: head_method(self._scale(rows))

    def _transform(self, X):
        """Scaled feature rows of ``X``; on a GPU they stay on the device for the head."""
        # features_ runs on the GPU only where one is present ('auto'), so a model fitted on
        # a GPU predicts anywhere; asking for device arrays is a no-op on the CPU
        on_device = self.device != "cpu"
        # float64 at prediction: a row's output then does not depend on the rows predicted
        # with it (BLAS sums a row of a product in an order set by its place in the block)
        with _estimator_memory_advice():
            F = self.features_._transform(X, on_device, dtype=np.float64)
        return self._scale(self._as_rows(F))

    def _scale(self, F):
        """Standardized features, computed in float64 and stored in the dtype of ``F``.

        In float64 because a float32 scale can underflow: features of inputs around 1e-30
        have standard deviations below float32's smallest number, which would divide by
        zero. Rows go in blocks, so the float64 temporaries stay small.
        """
        if not self._standardized:
            return F
        if _dask.is_dask_array(F):
            # block by block, each on its own array module: a dask array's blocks may be
            # CuPy arrays (return_gpu_arrays on a GPU), which take no NumPy mean
            scaled = functools.partial(
                _standardized_block, mean=self.feature_mean_, scale=self.feature_scale_
            )
            return F.map_blocks(scaled, dtype=F.dtype, meta=F._meta)
        xp = array_module_of(F)
        mean = xp.asarray(self.feature_mean_, dtype=np.float64)
        scale = xp.asarray(self.feature_scale_, dtype=np.float64)
        # the callers' features are their own fresh arrays: scaled in place, without
        # temporaries of their size (whose first touch costs more than the sums); not
        # those of a file (a `memory` cache opened with mmap_mode='r+': they would be
        # written back to it, and the next fit read them as raw features)
        # (CuPy's flags have no ``writeable``: its arrays always are)
        in_place = getattr(F.flags, "writeable", True) and not _maps_a_file(F)
        if F.dtype == np.float64:
            if not in_place:
                return (F - mean) / scale
            F -= mean
            F /= scale
            return F
        out = F if in_place else xp.empty(F.shape, dtype=F.dtype)
        for start in range(0, F.shape[0], _SCALE_BLOCK_ROWS):
            rows = slice(start, start + _SCALE_BLOCK_ROWS)
            out[rows] = _standardized_block(F[rows], mean, scale)
        return out

    def _as_rows(self, F):
        return F

    def _rows_per_sequence(self) -> int:
        """The head's rows per training sequence (every step's with per-step features)."""
        return 1

    # ------------------------------------------------------------------ head
    def _window_weights(self, F) -> np.ndarray | None:
        """The ridge head's ``feature_weights``: window decays to choose from on few
        training sequences (see ``_WINDOW_DECAYS``), or ``None``."""
        if not self._window_decays or F.shape[0] > _WINDOW_DECAY_MAX_SAMPLES:
            return None
        return _window_decay_weights(self.features_, self._window_decays)

    # the ridge head's own parameters that the composite passes on (beyond alphas, verbose
    # and kernel)
    _ridge_params: tuple[str, ...] = ()

    def _make_head(self):
        if self.head_kind_ == "ridge":
            own = {name: getattr(self, name) for name in self._ridge_params}
            return self._ridge_class(
                alphas=self.alphas, verbose=self.verbose, kernel=self.kernel, **own
            )
        params = {name: getattr(self, name) for name in _HEAD_PARAMS}
        return self._head_class(**params, device=self.device)

    def _fit_head(self, F, y, partial: bool, sample_weight=None, **kwargs):
        kwargs = {key: value for key, value in kwargs.items() if value is not None}
        if self.head_kind_ == "ridge":
            if partial:
                raise ValueError(
                    "partial_fit trains the dense head; the ridge head is fitted in closed "
                    "form by fit. Use head='dense' for incremental training."
                )
            if kwargs:
                raise ValueError(
                    "X_val and y_val serve early stopping of the dense head; the ridge head "
                    "chooses its penalty by leave-one-out cross-validation. Drop them or use "
                    "head='dense'."
                )
            # standardized features: the Gram matrices of float32's products (1.7x-1.9x
            # faster; over the 42 development sets the same penalties, decisions within 1e-5)
            self.head_ = self._make_head().fit(
                F,
                y,
                sample_weight=sample_weight,
                feature_weights=self._window_weights(F),
                gram_dtype=np.float32 if self._standardized else None,
            )
            return self
        head = getattr(self, "head_", None)
        # warm start continues a dense head; after a ridge head (set_params(head='dense')
        # on a fitted model) there is nothing to continue, so training starts afresh, as
        # scikit-learn's estimators do where a warm start cannot apply
        if not isinstance(head, self._head_class) or not (partial or self.warm_start):
            head = self._make_head()
        else:
            # (rows in memory, or blocks of rows from dask)
            n_features = F.n_features if hasattr(F, "n_features") else F.shape[1]
            fitted = getattr(head, "n_features_in_", n_features)
            if fitted != n_features:
                raise ValueError(
                    f"{'partial_fit' if partial else 'warm_start=True'} continues the fitted "
                    f"network, which takes {fitted} features; the features now number "
                    f"{n_features} (order, theta, feature_output or another feature "
                    "parameter, or the number of channels, changed). "
                    + (
                        "fit (with warm_start=False) or a new estimator fits a new network."
                        if partial
                        else "Set warm_start=False, or use a new estimator, to fit a new network."
                    )
                )
            head.set_params(**{name: getattr(self, name) for name in _HEAD_PARAMS})
        # early stopping holds out whole sequences where the rows are their every step
        head._rows_per_group = self._rows_per_sequence()
        if partial:
            head.partial_fit(F, y, sample_weight=sample_weight, **kwargs)
        else:
            head.fit(F, y, sample_weight=sample_weight, **kwargs)
        self.head_ = head
        return self

    @limits_threads
    def fit(self, X, y, X_val=None, y_val=None, sample_weight=None):
        """Compute the DN features of ``X`` once and train the head on them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps) or (n_samples, n_steps, n_channels),
            or a list of sequences of different lengths
            A pandas DataFrame of shape (n_samples, n_steps) sets ``feature_names_in_``.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        X_val, y_val : optional
            Held-out sequences and targets for early stopping (``early_stopping=True``) in
            place of a ``validation_fraction`` split of ``X``.
        sample_weight : array-like of shape (n_samples,), default=None
            One non-negative weight per sequence (not all zero), passed to the head: the
            dense head weights its loss as ``MLPClassifier`` / ``MLPRegressor`` do, the
            ridge head its least squares as ``RidgeClassifierCV`` / ``RidgeCV`` do. With
            ``feature_output='sequence'`` each sequence's weight applies to every step.
            The feature standardization uses the weighted mean and standard deviation;
            the features' own fit leaves the sequences of weight 0 out (the pooled
            features' quantile thresholds are otherwise fitted unweighted). Not
            supported for dask arrays. Pass it by keyword.

        Returns
        -------
        self
        """
        # a fit that fails (refused input, a diverged head) leaves a fitted model as it
        # was: not new features before an old network (warm_start), nor unfitted
        fitted = hasattr(self, "head_")
        with state_kept_on_error(self) if fitted else contextlib.nullcontext():
            return self._fit_or_raise(X, y, X_val, y_val, sample_weight)

    def _fit_or_raise(self, X, y, X_val, y_val, sample_weight):
        """:meth:`fit`, leaving whatever state it reached where it raises."""
        self._validate_params()
        self.__dict__.pop("_output_axis", None)  # (a previous fit's per-step targets')
        refuse_unreadable(X)  # (an iterator, a dict: before anything counts its rows)
        if is_device_array(y):  # (targets are read on the host: a CuPy y comes over once)
            y = to_numpy(y)
        if is_device_array(y_val):  # (and the held-out targets, as y)
            y_val = to_numpy(y_val)
        X = self._layout(X, reset=True)
        _check_feature_names(self, X, reset=True)
        if _dask.is_dask_array(X):
            self._refuse_dask_weights(sample_weight)
            return self._fit_dask(X, y, X_val, y_val)
        # fit(X, y, w) as scikit-learn passes weights: refused before any feature is made
        _refuse_weights_as_x_val(X_val, y_val, _num_samples(X))
        X = _without_names(X)
        sample_weight = check_sample_weight(sample_weight, _num_samples(X))
        if not self.warm_start or not hasattr(self, "head_"):
            self.__dict__.pop("head_", None)
        self.head_kind_ = self._resolved_head(_num_samples(X))
        self._warn_of_unused_head_params()
        self._check_targets_for_head(y)
        weights = self._weights(sample_weight, X, y)
        # the targets' shape is checked before the features are computed
        targets = self._targets(y, X)
        weights, targets = self._missing_unweighted(weights, targets)
        F = self._fit_features(X, y, weights)
        if X_val is not None:
            X_val, y_val = self._held_out(X_val, y_val)
        return self._fit_head(
            F,
            targets,
            partial=False,
            sample_weight=weights,
            X_val=X_val,
            y_val=y_val,
        )

    def _partial_fit(self, X, y, sample_weight, **kwargs):
        """``partial_fit`` of both composites: the first call fits the features."""
        self._validate_params()
        if self.early_stopping:  # refused before any feature is computed or kept
            raise ValueError(
                f"{type(self).__name__}.partial_fit does not support early_stopping=True "
                "(as scikit-learn's MLP): it trains one epoch on the sequences given, none "
                "held out to stop on. Use fit to stop early, or "
                "set_params(early_stopping=False) to train by partial_fit."
            )
        refuse_unreadable(X)  # (an iterator, a dict: before anything counts its rows)
        if is_device_array(y):  # (targets are read on the host, as fit reads them)
            y = to_numpy(y)
        first = not hasattr(self, "head_")
        if first:
            self.__dict__.pop("_output_axis", None)  # (a previous fit's per-step targets')
        X = self._layout(X, reset=first)
        check_step_names(self, X, reset=first)
        if not first:  # in memory and on dask alike
            self._check_output_unchanged()
            self._check_features_unchanged()
        if _dask.is_dask_array(X):
            self._refuse_dask_weights(sample_weight)
            return self._partial_fit_dask(X, y, **kwargs)
        X = _without_names(X)
        sample_weight = check_sample_weight(sample_weight, _num_samples(X))
        if first:
            self.head_kind_ = self._partial_head()
        self._check_targets_for_head(y)
        weights = self._weights(
            sample_weight, X, y, classes=kwargs.get("classes"), incremental=True
        )
        targets = self._targets(y, X)  # (checked before the features are computed)
        weights, targets = self._missing_unweighted(weights, targets)
        if first:
            F = self._fit_features(X, y, weights)
        else:
            F = self._transform(X)
        return self._fit_head(F, targets, partial=True, sample_weight=weights, **kwargs)

    def _check_output_unchanged(self) -> None:
        """Refuse a ``feature_output`` set since the first ``partial_fit`` to another than
        the fitted features' (the targets' rows would follow the new one, the features
        the fitted one)."""
        if isinstance(self.features_, LMUPooledFeatures):  # (no 'output' parameter)
            fitted = "pooled"
        else:
            fitted = self.features_.output
        if self._resolved_output(self.head_kind_) != fitted:
            raise ValueError(
                f"feature_output={self.feature_output!r} was set after the first "
                f"partial_fit, whose features are {fitted!r}: partial_fit continues the "
                f"fitted features. Set it back (set_params(feature_output={fitted!r})) or "
                "call fit to start over."
            )

    def _check_features_unchanged(self) -> None:
        """Refuse feature parameters (``order``, ``theta``, ...) set since the first
        ``partial_fit`` to values that make other features than the fitted transformer's:
        the later calls continue the fitted features, so the model would silently keep
        them while ``get_params`` shows the new values. Compared as the transformer takes
        them (``dtype=np.float32`` and ``'float32'`` alike), with the transformer fitted
        last, in memory or on dask."""
        fitted = self.features_.get_params()
        wanted = self._transformer_params()
        changed = [
            key
            for key, value in wanted.items()
            if key not in _UNCOMPARED_FEATURE_PARAMS
            and key in fitted
            and not _same_value(value, fitted[key])
        ]
        if changed:
            names = [_COMPOSITE_PARAM.get(key, key) for key in changed]
            now = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
            then = ", ".join(
                f"{name}={fitted[key]!r}" for name, key in zip(names, changed, strict=True)
            )
            raise ValueError(
                f"{now} set after the first partial_fit, whose features were made with "
                f"{then}: partial_fit continues the fitted features. Set them back "
                f"(set_params({then})) or call fit to start over."
            )

    def _held_out(self, X_val, y_val):
        """The held-out sequences' scaled features and their targets (in memory), with
        errors of their input naming ``X_val`` and ``y_val``."""
        with _naming(_X_VAL):
            X_val = _without_names(self._layout(X_val))
            F_val = self._transform(X_val)
            if _dask.is_dask_array(F_val):  # (gathered, as a dask fit's held-out set)
                F_val = _dask.gathered(F_val, "X_val", _dask.HELD_OUT_FIX)
        _check_held_out_lengths(X_val, y_val)
        with _naming(_Y_VAL):
            return F_val, self._targets(y_val, X_val, held_out=True)

    # ------------------------------------------------------------------ dask arrays
    def _fit_dask(self, X, y, X_val=None, y_val=None):
        """``fit`` of a dask array ``X``: features computed on the workers.

        The head is chosen as in memory (``head='auto'``: ridge on pooled features up to
        100 000 sequences), so the model equals the in-memory fit on the same data. Features
        that fit the gather limit (dask config ``'lmu_sk.gather_limit'``, default half of
        the client's available memory) and, for the dense head, the memory available
        three times over (``_dask.gathering_fits``) are gathered and the head trains as in
        memory (every option supported; the ridge head always gathers); otherwise the dense head
        trains block by block, each epoch streaming the features.
        """
        if not self.warm_start or not hasattr(self, "head_"):
            self.__dict__.pop("head_", None)
        if (X_val is None) != (y_val is None):
            raise ValueError("Pass both X_val and y_val, or neither.")
        # missing steps refused before anything is computed (targets in memory; a dask
        # y is checked once computed, below)
        for targets, name in ((y, "y"), (y_val, "y_val")):
            if targets is not None and not _dask.is_dask_array(targets):
                self._refuse_missing_on_dask(targets, name)
        self.head_kind_ = self._resolved_head(X.shape[0])
        self._warn_of_unused_head_params(stacklevel=6)
        # as in memory: the ridge head's features in float64
        F = self._fit_transformer(X, y, float64=self.head_kind_ == "ridge")
        y = _dask.aligned_targets(y, F.shape[0])
        self._refuse_missing_on_dask(y, "y")
        if X_val is not None and not _dask.is_dask_array(X_val):
            X_val = _without_names(self._layout(X_val))
        if self.head_kind_ == "ridge" or _dask.gathering_fits(F):
            F = _dask.gathered(F, f"{type(self).__name__} with the {self.head_kind_} head")
            F = self._as_rows(F)
            self._fit_scaling(F)
            self._scale_within_rounding(X, F)
            if X_val is not None:
                with _naming(_X_VAL):
                    F_val = self._transform(X_val)
                    if _dask.is_dask_array(F_val):
                        F_val = _dask.gathered(F_val, "X_val", _dask.HELD_OUT_FIX)
                _check_held_out_lengths(X_val, y_val)
                with _naming(_Y_VAL):
                    y_val = _dask.aligned_targets(y_val, _num_samples(X_val))
                    self._refuse_missing_on_dask(y_val, "y_val")
                    X_val, y_val = F_val, self._targets(y_val, X_val, held_out=True)
            return self._fit_head(
                self._scale(F), self._targets(y, X), partial=False, X_val=X_val, y_val=y_val
            )
        self._fit_scaling(F)
        self._scale_within_rounding(X, F)
        indices = None
        if X_val is not None:
            with _naming(_X_VAL):
                F_val = self.features_.transform(X_val)
                F_val = _dask.gathered(F_val, "X_val", _dask.HELD_OUT_FIX)
            _check_held_out_lengths(X_val, y_val)
            with _naming(_Y_VAL):
                y_val = _dask.aligned_targets(y_val, len(F_val))
                self._refuse_missing_on_dask(y_val, "y_val")
                X_val, y_val = self._prepare_block(F_val, y_val)
        elif self.early_stopping:
            rng = check_random_state(self.random_state)
            indices, X_val, y_val = _dask.validation_blocks(
                F, y, self._prepare_block, self.validation_fraction, rng
            )
        blocks = _dask.row_blocks(F, self._prepare_block, indices)
        y_rows = _dask.feature_rows(F, y)[1]
        if F.ndim == 3:  # per-step targets: (n_samples, n_steps, 1) predicted so
            self._output_axis = has_output_axis(y)
        return self._fit_head(blocks, y_rows, partial=False, X_val=X_val, y_val=y_val)

    def _partial_fit_dask(self, X, y, classes=None):
        """``partial_fit`` of a dask array: one epoch over its row blocks, block by block.

        The first call fits the features on ``X`` and the scaling on all of its features
        (dask reductions).
        """
        if not hasattr(self, "head_"):
            self.head_kind_ = self._partial_head()
            F = self._fit_transformer(X, y)
            self._fit_scaling(F)
            self._scale_within_rounding(X, F)
        else:
            F = self.features_.transform(X)
        y = _dask.aligned_targets(y, F.shape[0])
        self._refuse_missing_on_dask(y, "y")
        if F.ndim == 3:  # per-step targets: (n_samples, n_steps, 1) predicted so
            self._output_axis = has_output_axis(y)
        blocks = _dask.row_blocks(F, self._prepare_block)
        return self._fit_head(blocks, _dask.feature_rows(F, y)[1], partial=True, classes=classes)

    def _fit_transformer(self, X, y=None, float64: bool = False):
        """Fit ``features_`` on the dask array ``X``; its lazy training features (in
        float64 with ``float64``, else in the transformer's dtype). One target (or row of
        targets) per sequence (``y``, NumPy or dask) screens the channels of many-channel
        data, as in memory: only the targets of the sample screened are computed."""
        gaussian = self._takes_gaussian_kernel(y, None, X.shape[0])
        params = self._transformer_params(X.shape[0], gaussian)
        self.features_ = _make_transformer(params, self.verbose).fit(X, _screening_targets(y))
        self.order_ = _fitted_order(self.features_)
        self.n_features_in_ = self.features_.n_features_in_
        return self.features_._transform(X, False, dtype=np.float64 if float64 else None)

    def _prepare_block(self, F, y=None):
        """A block of features as the head's scaled input rows (and their targets)."""
        F, y = _dask.feature_rows(F, y)
        return self._scale(F), y

    def _predict_block(self, F, method: str):
        """The head's ``method`` on one block of (float64) features, scaled as in training."""
        result = self._head_method(method)(_dask.feature_rows(F)[0])
        if F.ndim != 3:
            return result
        return result.reshape(*F.shape[:-1], *result.shape[1:], *self._output_axes())

    def _output_axes(self) -> tuple[int, ...]:
        """``(1,)`` where per-step targets of shape ``(n_samples, n_steps, 1)`` were fitted
        (their predictions take that shape), else ``()``."""
        return (1,) if self.__dict__.get("_output_axis", False) else ()

    def _predict_dask(self, X, method: str):
        """Lazy ``predict`` / ``predict_proba`` / ``decision_function`` of a dask array:
        the same float64 features and head as in memory, block by block."""
        check_is_fitted(self, "head_")
        X = self._layout(X)
        check_step_names(self, X, reset=False)
        F = self.features_._transform(X, False, dtype=np.float64)
        probe = self._predict_block(np.zeros((1, *F.shape[1:]), F.dtype), method)
        return _dask.map_rows(functools.partial(self._predict_block, method=method), F, probe)

    def _refuse_dask_weights(self, sample_weight) -> None:
        if getattr(self, "class_weight", None) is not None:
            raise ValueError(
                "class_weight is not supported for dask arrays. Compute X into memory "
                "(X.compute()) to train with class weights."
            )
        if sample_weight is not None:
            raise ValueError(
                "sample_weight is not supported for dask arrays. Compute X into memory "
                "(X.compute()) to train with sample weights, or repeat/subsample the rows "
                "of X by their weights instead."
            )

    def _weights(self, sample_weight, X, y=None, classes=None, incremental=False):
        """The head's sample weights for per-sequence ``sample_weight`` (of ``partial_fit``
        where ``incremental``, ``classes`` its own)."""
        return sample_weight

    def _partial_head(self) -> str:
        """The head of incremental training: the dense head (see _OnlyIncremental)."""
        return self._resolved_head(0)

    def _targets(self, y, X, held_out: bool = False):
        """The head's targets for ``y`` (per-step targets are flattened to rows); those
        of training, or of the held-out set (``held_out``)."""
        return y

    def _missing_unweighted(self, weights, targets):
        """``(weights, targets)`` with missing targets given weight 0 (the regressor's
        per-step NaN: steps of padding); as they are here."""
        return weights, targets

    def _refuse_missing_on_dask(self, y, name: str) -> None:
        """Refuse missing targets (the regressor's per-step NaN) of a dask fit, which
        takes no weights; nothing to refuse here."""

    def _check_targets_for_head(self, y) -> None:
        """Refuse targets the resolved head (``head_kind_``) cannot take, before any
        feature is computed."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags


class LMUClassifier(VersionedPickleMixin, HostScoreMixin, ClassifierMixin, _LMUBase):
    """Legendre Memory Unit classifier: Delay Network features and a ridge or dense head.

    The DN features of the training set are computed once, standardized, and a head is
    trained on them. By default (``head='auto'``) a training set of up to 100 000 sequences
    gets multi-scale pooled features and a closed-form ridge classifier, the choice that
    competes with the best feature-based time-series classifiers (above 10 000 sequences
    with 4 thresholds per state instead of 16, a quarter of the features, so that the
    ridge solve stays linear in the sequences); larger sets get the LMU papers' setting,
    final states and a dense network with hand-written forward and backward passes
    trained with Adam or SGD (``head='dense'`` asks for it always).

    Parameters
    ----------
    order : int, default=None
        DN states per channel (per window and input for pooled features). ``None`` uses
        ``min(n_steps, 128, 2048 // n_channels)`` for final/mean/max/sequence features
        and, for pooled ones, ``ceil(theta)`` per window between 2 and
        ``max(2, min(8, 16 // n_channels))``, ``n_channels`` the channels read (with
        ``channel_sums``, the pair sums too: 2, 3 and 4 channels read 3, 6 and 10).
    theta : float or sequence of float, default=None
        DN window in time steps; ``None`` uses the training sequences' length. Pooled
        features take several windows; ``None`` gives 16 in geometric progression, from
        1/128 of the training length (at most 16 steps) to the whole of it.
    discretizer : {'zoh', 'euler'}, default='zoh'
        See :class:`~lmu_sk.features.LMUFeatures`.
    feature_output : {'auto', 'final', 'mean', 'max', 'pooled'}, default='auto'
        The DN state at each sequence's end, the states averaged or maximised over time, or
        multi-scale states of the series and its difference pooled over time
        (:class:`~lmu_sk.pooled.LMUPooledFeatures`, 16 thresholds, windows from 1/128 of the
        training length (at most 16 steps) to all of it, each fed the means of blocks of
        about ``theta / (2 order)`` steps). 'auto' is 'pooled' for the ridge head and
        'final' for the dense head.
    scale_features : bool, default=True
        Standardize the features with the training set's mean and standard deviation.
    memory : str or joblib.Memory, default=None
        Cache the training features on disk, keyed on ``X`` and the DN parameters, so that
        refits that change only head parameters (a grid search) reuse them.
    head : {'auto', 'dense', 'ridge'}, default='auto'
        The dense network (the LMU papers' setting) or a ridge classifier solved in closed
        form with the penalty chosen by leave-one-out cross-validation
        (:class:`~lmu_sk.ridge.RidgeHeadClassifier`). On pooled features of up to 400
        training sequences leave-one-out also chooses whether the longer windows' features
        are down-weighted (by ``2 ** (-2 r)``, ``r`` the window's log length from 0 for the
        shortest to 1 for the longest: a stronger prior on them), the head's
        ``feature_weights_``. 'auto' is 'ridge' for up to 100 000
        training sequences and 'dense' above. ``partial_fit`` needs ``head='dense'`` (with
        'auto' it would train another model than ``fit``, but for a regressor's
        ``feature_output='sequence'``, where 'auto' is the dense head); with the other
        heads reading it raises an ``AttributeError`` that says so.
    alphas : sequence of float, default=None
        Penalties the ridge head chooses from (``None``: 1e-3 to 1e5 in half decades).
    hidden_layer_sizes, activation, solver, alpha, batch_size, learning_rate, \
learning_rate_init, power_t, max_iter, shuffle, random_state, tol, verbose, warm_start, \
momentum, nesterovs_momentum, early_stopping, validation_fraction, n_iter_no_change, \
beta_1, beta_2, epsilon, dropout, input_dropout, dtype
        The dense head's parameters, as in :class:`~lmu_sk.head.DenseHeadClassifier` and
        :class:`sklearn.neural_network.MLPClassifier` (``learning_rate`` also takes
        'plateau' and 'cosine', and every schedule applies to Adam too). ``dtype`` ('float32'
        or 'float64', or ``np.float32`` / ``np.float64`` as the transformers take it) is also
        the features'. They are validated by ``fit`` and ``partial_fit`` whatever the head, with
        errors that name this estimator. ``warm_start=True`` continues the dense head as
        ``MLPClassifier`` does (``n_iter_`` counts the epochs of the last call, ``t_`` and
        ``loss_curve_`` carry over); the features and their scaling are fitted again on the
        new ``X``. ``verbose`` also shows the progress of the features over the sequences.
    device : {'auto', 'cpu', 'gpu'}, default='auto'
        Where features and head are computed; 'auto' uses a GPU when CuPy finds one.
    channels_first : bool or None, default=None
        ``True`` reads 3-D ``X`` as ``(n_samples, n_channels, n_steps)`` (aeon, sktime) and
        lists of ``(n_channels, n_steps_i)`` arrays; ``None`` reads ``(n_samples, n_steps,
        n_channels)`` and warns when a 3-D ``X`` has fewer steps than channels; ``False``
        reads the same without the warning. See :class:`~lmu_sk.features.LMUFeatures`.
    n_jobs : int or None, default=None
        CPU threads of the compiled kernels (Numba) and of BLAS (the ridge head's
        decomposition, the dense head's products) during ``fit``, ``partial_fit`` and the
        predictions, restored afterwards. ``None`` keeps the libraries' own settings (all
        cores, unless ``NUMBA_NUM_THREADS`` or ``OMP_NUM_THREADS`` say otherwise); ``-1``
        is all cores, ``-2`` all but one. Results do not depend on it beyond rounding.
        Dask arrays are computed on dask's threads or workers and are not affected.
        Where Numba's threads are GNU OpenMP's (Linux), a process forked after a fit or
        prediction (``multiprocessing``'s 'fork' start method) cannot run the compiled
        kernels and is refused with a ``RuntimeError``: start worker processes with
        'spawn' or 'forkserver' (joblib's default backend does), or set
        ``NUMBA_THREADING_LAYER='workqueue'`` before Python starts.
    channels : 'auto', 'all' or int, default='auto'
        The channels the pooled features read (:class:`~lmu_sk.pooled.LMUPooledFeatures`'
        ``channels``): 'auto' keeps every channel up to 16 and beyond screens them against
        ``y``, keeping the significant ones (at most 16); 'all' every channel; an integer
        at most that many, by the same screening. Other feature outputs read every channel.
    channel_sums : 'auto' or bool, default='auto'
        The pooled features also read the sum of every pair of the channels kept ('auto':
        for an input of 2 to 4 channels); see :class:`~lmu_sk.pooled.LMUPooledFeatures`.
    kernel : {'linear', 'rbf', 'auto'}, default='auto'
        The ridge head's model (:class:`~lmu_sk.ridge.RidgeHeadClassifier`'s ``kernel``):
        linear in the features, or kernel ridge with a Gaussian kernel on them, whose
        squared length scale is 3 times the median squared distance between two training
        sequences' standardized features (up to 3 000 training sequences, the Gaussian
        kernel's exact leave-one-out size: ``lmu_sk.ridge.KERNEL_MAX_SAMPLES``). The
        Gaussian kernel is the more accurate model where each class has training
        sequences enough, at a cost that grows with them, most of it prediction: it keeps
        the training features (``head_.X_fit_``, 8 bytes per feature and sequence) and
        scores a new sequence by its distances to all of them, ``O(n_train * n_features)``
        per sequence instead of ``O(n_classes * n_features)``, which also makes a stream's
        step that much costlier. 'auto' takes the Gaussian kernel where the training
        sequences number at most 400 and average at least 10 per class, the linear model
        elsewhere (where the kernel loses, 0.938 -> 0.870 on a set of 2 per class, or costs
        more than it gains); with the Gaussian kernel the pooled features take 12
        thresholds instead of 16. Over the 42 development sets 'auto' gives a mean
        accuracy of 0.8706 against the linear model's 0.8655, at 1.13x its time (0.58x
        MiniRocket's). ``head_.kernel_`` says which. See the guide's parameters page.
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, as in :class:`sklearn.linear_model.RidgeClassifierCV`:
        every sequence's weight is multiplied by its class's (``'balanced'``:
        ``n_samples / (n_classes * count of the class)``), for either head. ``partial_fit``
        takes a dict only. Not supported for dask arrays.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    features_ : LMUFeatures or LMUPooledFeatures
        The fitted feature transformer.
    head_ : DenseHeadClassifier or RidgeHeadClassifier
        The fitted head.
    head_kind_ : {'dense', 'ridge'}
        The head used.
    alpha_ : float
        The penalty the ridge head chose.
    order_ : int
        The order used.
    feature_mean_, feature_scale_ : ndarray of shape (n_features,) or None
        The standardization; ``None`` where ``scale_features`` was False at fit (a value
        set since applies at the next fit).
    n_features_in_ : int
        Steps of the training sequences.
    feature_names_in_ : ndarray of str
        Column names of ``X`` when it was a DataFrame of shape (n_samples, n_steps);
        prediction checks them as scikit-learn estimators do.
    loss_, loss_curve_, validation_scores_, best_loss_, best_validation_score_, n_iter_, \
t_, coefs_, intercepts_, n_outputs_, n_layers_, out_activation_
        As in :class:`sklearn.neural_network.MLPClassifier`, from the head (the dense
        head's only: with the ridge head reading them raises an AttributeError that says
        so).

    Notes
    -----
    scikit-learn's ``check_estimator`` passes but for these checks, by design:
    ``check_n_features_in_after_fitting`` and the part of ``check_classifiers_train``
    that expects an error for another number of columns at prediction (sequences of any
    length can be predicted: the Delay Network is causal), and with the dense head
    ``check_estimators_partial_fit_n_features`` (sequences of any length can be trained
    on by ``partial_fit`` too);
    ``check_non_transformer_estimators_n_iter`` (``max_iter`` is the dense head's: the
    ridge head, solved in closed form, has no ``n_iter_``);
    ``check_sample_weight_equivalence_on_dense_data`` (the ridge head's leave-one-out
    penalty, as :class:`sklearn.linear_model.RidgeCV`'s, and the pooled features'
    thresholds are not invariant to repeating rows; the dense head's float32 training
    agrees to ~1e-6, not to the check's 1e-7); and with the linear ridge head
    ``check_class_weight_classifiers`` (its blobs, read as 2-step sequences, fall under
    the check's accuracy bar; the Gaussian kernel's model passes).

    The pooled features' thresholds come from 64 training sequences evenly spaced in the
    training set (:class:`~lmu_sk.pooled.LMUPooledFeatures`' ``bias_samples``), so with
    more than 64 the order of the rows changes the model a little, as a subsample would
    (150 series shuffled: probabilities within about 0.01); the same rows in the same
    order give the same model.
    """

    _parameter_constraints: ClassVar[dict] = {
        **_LMUBase._parameter_constraints,
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "kernel": [StrOptions({"linear", "rbf", "auto"})],
    }
    _head_class = DenseHeadClassifier
    _ridge_class = RidgeHeadClassifier
    _window_decays = _WINDOW_DECAYS
    _target_type = "classes"
    classes_: _FromHead[np.ndarray] = _FromHead()
    head_: DenseHeadClassifier | RidgeHeadClassifier

    def __init__(
        self,
        order=None,
        theta=None,
        discretizer="zoh",
        feature_output="auto",
        scale_features=True,
        memory=None,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        head="auto",
        alphas=None,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=1e-3,
        power_t=0.5,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        warm_start=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        dropout=0.0,
        input_dropout=0.0,
        dtype="float32",
        device="auto",
        channels_first=None,
        n_jobs=None,
        channels="auto",
        channel_sums="auto",
        kernel="auto",
        class_weight=None,
    ):
        super().__init__(
            order=order,
            theta=theta,
            discretizer=discretizer,
            feature_output=feature_output,
            scale_features=scale_features,
            memory=memory,
            hidden_layer_sizes=hidden_layer_sizes,
            activation=activation,
            head=head,
            alphas=alphas,
            solver=solver,
            alpha=alpha,
            batch_size=batch_size,
            learning_rate=learning_rate,
            learning_rate_init=learning_rate_init,
            power_t=power_t,
            max_iter=max_iter,
            shuffle=shuffle,
            random_state=random_state,
            tol=tol,
            verbose=verbose,
            warm_start=warm_start,
            momentum=momentum,
            nesterovs_momentum=nesterovs_momentum,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            dropout=dropout,
            input_dropout=input_dropout,
            dtype=dtype,
            device=device,
            channels_first=channels_first,
            n_jobs=n_jobs,
            channels=channels,
            channel_sums=channel_sums,
            kernel=kernel,
        )
        self.class_weight = class_weight

    def _check_targets_for_head(self, y) -> None:
        if self.head_kind_ != "ridge":  # (the dense head's refusal, in this one's name)
            refuse_multiclass_multioutput(y, type(self).__name__)
            return
        # (array-likes without NumPy's functions too; a CuPy array's own shape)
        shape = y.shape if is_device_array(y) else np.asarray(y).shape
        if len(shape) == 2 and shape[1] > 1:
            raise ValueError(
                f"{type(self).__name__} with the ridge head (head={self.head!r}) takes one "
                f"label per sample; got y of shape {shape} (several labels per sample). Use "
                "head='dense', which takes them as an indicator matrix of 0 and 1, or for "
                "labels of more than two values one model per column "
                "(sklearn.multioutput.MultiOutputClassifier)."
            )

    def _takes_gaussian_kernel(self, y, sample_weight, n_samples: int) -> bool:
        """Whether the ridge head will fit the Gaussian kernel on the labels ``y`` (one
        per sequence; dask's computed where they are few enough for 'auto' to take it) of
        weights ``sample_weight``: ``kernel='rbf'``, or 'auto' by the head's own rule
        (:func:`lmu_sk.ridge.auto_kernel`)."""
        if self.head_kind_ != "ridge" or y is None or not isinstance(self.kernel, str):
            return False
        if self.kernel != "auto":
            return self.kernel == "rbf"
        if n_samples > AUTO_KERNEL_MAX_SAMPLES:
            return False
        if _dask.is_dask_array(y):
            y = y.compute()
        labels = _screening_targets(for_module(y, np))  # (dask's blocks may be CuPy's)
        if labels is None or labels.ndim != 1:
            return False
        # labels that are no classes (None among strings) refused as the head refuses
        # them, before np.unique sorts them
        check_classification_targets(labels)
        counted = len(labels)
        if sample_weight is not None:  # a sequence of zero weight counts as left out
            counted = int(np.count_nonzero(to_numpy(sample_weight) > 0))
        return auto_kernel(counted, len(np.unique(labels)), len(labels)) == "rbf"

    def _weights(self, sample_weight, X, y=None, classes=None, incremental=False):
        """Per-sequence weights times the class weights, as ``RidgeClassifierCV`` and
        ``LogisticRegression`` apply ``class_weight``."""
        if self.class_weight is None or y is None:
            return sample_weight
        # the ridge head's checks and messages, whichever head trains; y as an array
        # (an array-like without NumPy's functions failed in scikit-learn's weights)
        # partial_fit: the model's classes (later batches may lack some), else those
        # given to its first call; fit: y's (a warm start continues a dense head only on
        # the classes it has, which y must hold; the ridge head is fitted anew)
        fitted = getattr(self.__dict__.get("head_"), "classes_", None)
        classes = (fitted if fitted is not None else classes) if incremental else None
        return with_class_weight(self.class_weight, np.asarray(y), sample_weight, classes)

    @_OnlyIncremental
    @limits_threads
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Train the dense head for one epoch on ``(X, y)``; the first call fits the features.

        Only with ``head='dense'``: the other heads are fitted by :meth:`fit` (reading
        ``partial_fit`` then raises an ``AttributeError`` that says so). With
        ``early_stopping=True`` it raises a ``ValueError``, as scikit-learn's MLP does.

        Parameters
        ----------
        X : array-like of sequences
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            All classes; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sequence weights, as in :meth:`fit`. Pass it by keyword.

        Returns
        -------
        self
        """
        if is_device_array(classes):  # (read on the host, as y is)
            classes = to_numpy(classes)
        if not _dask.is_dask_array(X):
            _refuse_weights_as_classes(classes, _num_rows(X), y)
        if isinstance(self.class_weight, str) and self.class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit: the class "
                "frequencies of one batch are not those of the data. Pass a dict of class "
                "weights, or use fit."
            )
        return self._partial_fit(X, y, sample_weight, classes=classes)

    @limits_threads
    def predict(self, X) -> Result:
        """Predicted class labels of the sequences ``X``."""
        if _dask.is_dask_array(X):
            return self._predict_dask(X, "predict")
        return self._apply_head(X, "predict")

    @available_if(_head_has("predict_proba"))
    @limits_threads
    def predict_proba(self, X) -> Result:
        """Class probabilities of the sequences ``X``, shape (n_samples, n_classes)."""
        if _dask.is_dask_array(X):
            return self._predict_dask(X, "predict_proba")
        return self._apply_head(X, "predict_proba")

    @available_if(_head_has("decision_function"))
    @limits_threads
    def decision_function(self, X) -> Result:
        """Confidence scores of the ridge head, shape (n_samples,) or (n_samples, n_classes)."""
        if _dask.is_dask_array(X):
            return self._predict_dask(X, "decision_function")
        return self._apply_head(X, "decision_function")

    @available_if(_head_has("predict_log_proba"))
    @limits_threads
    def predict_log_proba(self, X) -> Result:
        """Logarithm of :meth:`predict_proba`."""
        if _dask.is_dask_array(X):
            return self._predict_dask(X, "predict_log_proba")
        return self._apply_head(X, "predict_log_proba")

    def stream(self, n_streams: int = 1):
        """The fitted model run online: a :class:`~lmu_sk.streaming.ClassifierStream` of
        ``n_streams`` sequences whose ``predict_proba()`` after any update equals
        :meth:`predict_proba` of the prefixes seen."""
        return ClassifierStream(self, n_streams)


class LMURegressor(VersionedPickleMixin, HostScoreMixin, RegressorMixin, _LMUBase):
    """Legendre Memory Unit regressor: Delay Network features and a ridge or dense head.

    Parameters are those of :class:`LMUClassifier` but ``class_weight`` (none here), with
    ``kernel`` in ``{'linear', 'rbf'}`` (no 'auto') and ``feature_output`` in
    ``{'auto', 'final', 'mean', 'max', 'pooled', 'sequence'}``.
    As for the classifier, ``head='auto'`` fits the closed-form
    :class:`~lmu_sk.ridge.RidgeHeadRegressor` on pooled features up to 100 000 training
    sequences (a time-series regressor out of the box) and the dense network on final
    states beyond; with ``feature_output='sequence'`` it is the dense head. With 'sequence' the
    head is applied at every time step (time-distributed; early stopping holds out whole
    sequences): ``y`` holds one target per
    step, shape ``(n_samples, n_steps)`` or ``(n_samples, n_steps, n_outputs)``, and
    ``predict`` returns the same shape — the setting of forecasting tasks such as
    Mackey-Glass.

    With ``feature_output='sequence'`` a per-sequence ``sample_weight`` applies to every
    step of the sequence, and a step whose targets are all NaN is missing: it weighs
    nothing in training, the standardization, early stopping's score and :meth:`score`
    (sequences of different lengths padded to one, NaN targets at the padding).

    ``kernel='rbf'`` (the ridge head's Gaussian kernel) raised the RMSE on two of the three
    regression sets (Tecator 0.448 to 0.566, CardanoSentiment 0.295 to 0.300; Covid3Month
    0.0419 to 0.0418).

    ``clip_margin`` (float or None, default=0.1), the ridge head's only: its predictions
    are clipped to the range of the training targets widened on each side by
    ``clip_margin`` times its width, per target (see
    :class:`~lmu_sk.ridge.RidgeHeadRegressor`: a linear model on standardized pooled
    features can extrapolate wildly where a nearly constant pool moves). ``None`` never
    clips. The dense head does not clip.

    Attributes
    ----------
    features_, head_, order_, feature_mean_, feature_scale_, n_features_in_, \
feature_names_in_
        As in :class:`LMUClassifier`.
    loss_, loss_curve_, validation_scores_, best_loss_, best_validation_score_, n_iter_, \
t_, coefs_, intercepts_, n_outputs_, n_layers_, out_activation_
        As in :class:`sklearn.neural_network.MLPRegressor`, from the head (the dense
        head's only).

    Notes
    -----
    ``check_estimator`` passes but for the checks :class:`LMUClassifier` lists (those of
    the regressor: the number of columns, with the dense head at ``partial_fit`` too,
    ``n_iter_`` and the sample weights' equivalence).
    As for :class:`LMUClassifier`, with more than 64 training sequences their order
    changes the pooled features' thresholds a little (they come from 64 evenly spaced).
    """

    _parameter_constraints: ClassVar[dict] = {
        **_LMUBase._parameter_constraints,
        "clip_margin": [Interval(Real, 0, None, closed="left"), None],
    }
    _head_class = DenseHeadRegressor
    _ridge_class = RidgeHeadRegressor
    _ridge_params = ("clip_margin",)

    def _validate_params(self) -> None:
        super()._validate_params()
        if isinstance(self.clip_margin, (bool, np.bool_)):  # (a Real to scikit-learn)
            raise InvalidParameterError(
                "The 'clip_margin' parameter of LMURegressor must be None (no clipping) or a "
                f"number >= 0; got {self.clip_margin!r}."
            )

    # integer-valued targets too: a continuous target (not labels)
    _target_type = "continuous"
    head_: DenseHeadRegressor | RidgeHeadRegressor
    _feature_outputs = ("auto", "final", "mean", "max", "pooled", "sequence")
    _small_data_head = "ridge"

    def __init__(
        self,
        order=None,
        theta=None,
        discretizer="zoh",
        feature_output="auto",
        scale_features=True,
        memory=None,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        head="auto",
        alphas=None,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=1e-3,
        power_t=0.5,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        warm_start=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        dropout=0.0,
        input_dropout=0.0,
        dtype="float32",
        device="auto",
        channels_first=None,
        n_jobs=None,
        channels="auto",
        channel_sums="auto",
        kernel="linear",
        clip_margin=0.1,
    ):
        super().__init__(
            order=order,
            theta=theta,
            discretizer=discretizer,
            feature_output=feature_output,
            scale_features=scale_features,
            memory=memory,
            hidden_layer_sizes=hidden_layer_sizes,
            activation=activation,
            head=head,
            alphas=alphas,
            solver=solver,
            alpha=alpha,
            batch_size=batch_size,
            learning_rate=learning_rate,
            learning_rate_init=learning_rate_init,
            power_t=power_t,
            max_iter=max_iter,
            shuffle=shuffle,
            random_state=random_state,
            tol=tol,
            verbose=verbose,
            warm_start=warm_start,
            momentum=momentum,
            nesterovs_momentum=nesterovs_momentum,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            dropout=dropout,
            input_dropout=input_dropout,
            dtype=dtype,
            device=device,
            channels_first=channels_first,
            n_jobs=n_jobs,
            channels=channels,
            channel_sums=channel_sums,
            kernel=kernel,
        )
        self.clip_margin = clip_margin

    def _resolved_head(self, n_samples: int) -> str:
        """As for the classifier, but 'sequence' (one target per step) trains the dense
        head: its rows are every step of every sequence."""
        if self.head == "auto" and self.feature_output == "sequence":
            return "dense"
        return super()._resolved_head(n_samples)

    def _per_step(self) -> bool:
        """Whether the fitted features are every step's ('sequence'): the transformer's
        output, not ``feature_output`` as set since."""
        return getattr(getattr(self, "features_", None), "output", None) == "sequence"

    def _rows_per_sequence(self) -> int:
        return int(self.features_.n_features_in_) if self._per_step() else 1

    def _as_rows(self, F):
        if not self._per_step():
            return F
        if isinstance(F, list):
            raise ValueError(_SEQUENCE_LENGTHS_PREDICTED)
        return F.reshape(-1, F.shape[-1])

    def _sequence_shape(self, X, predicting: bool = False) -> tuple[int, int]:
        """``(n_samples, n_steps)`` of an equal-length batch of sequences (pandas' layouts
        read as the transformer reads them); the advice for other lengths is the fit's or,
        ``predicting``, the prediction's."""
        X = _without_names(from_nested(X, self.channels_first))
        if is_ragged(X):
            raise ValueError(_SEQUENCE_LENGTHS_PREDICTED if predicting else _SEQUENCE_LENGTHS)
        shape = np.shape(X)
        if len(shape) < 2:
            raise ValueError("feature_output='sequence' needs X of shape (n_samples, n_steps).")
        if isinstance(X, np.ndarray) and X.ndim in (2, 3) and X.dtype.kind == "f":
            last = X[:, :, None] if X.ndim == 2 else X
            swapped = self.channels_first and X.ndim == 3  # (2-D X: (n_samples, n_steps))
            padded = nan_padded(last.swapaxes(1, 2) if swapped else last)
            if padded:  # (the features' own advice, a list of arrays, is refused here)
                raise ValueError(_SEQUENCE_NAN_PADDING.format(padded))
        if self.channels_first and len(shape) == 3:
            return shape[0], shape[2]
        return shape[0], shape[1]

    def _weights(self, sample_weight, X, y=None, classes=None, incremental=False):
        """Per-sequence weights, repeated for every step with 'sequence' features (whose
        sequences' lengths are checked here, before anything reads their targets)."""
        if self.feature_output != "sequence":
            return sample_weight
        n_steps = self._sequence_shape(X)[1]
        return None if sample_weight is None else np.repeat(sample_weight, n_steps)

    def _targets(self, y, X, held_out: bool = False):
        if self.feature_output != "sequence":
            shape = _shape_of(y)
            if len(shape) == 3:
                raise ValueError(
                    f"y of shape {shape} holds targets per step (n_samples, n_steps, "
                    "n_outputs): they need feature_output='sequence'; give one target (or "
                    "one row of targets) per sequence otherwise."
                )
            if len(shape) == 2 and shape[1] == 0:
                raise ValueError(
                    f"y of shape {shape} holds no outputs: give one target, or one row of "
                    "targets, per sequence."
                )
            return y
        n_samples, n_steps = self._sequence_shape(X)
        try:
            y = _as_float_targets(y)
        except ValueError as error:  # ragged: targets of different lengths per sequence
            raise ValueError(
                f"With feature_output='sequence' y needs one target per step, shape "
                f"({n_samples}, {n_steps}) or ({n_samples}, {n_steps}, n_outputs); got "
                "sequences of targets of different lengths."
            ) from error
        empty = y.ndim == 3 and y.shape[2] == 0
        if y.ndim > 3 or empty or y.shape[:2] != (n_samples, n_steps):
            raise ValueError(
                f"With feature_output='sequence' y needs one target per step, shape "
                f"({n_samples}, {n_steps}) or ({n_samples}, {n_steps}, n_outputs); got "
                f"{y.shape}."
            )
        if not held_out:  # (targets of shape (n_samples, n_steps, 1): predicted so)
            self._output_axis = has_output_axis(y)
        return step_target_rows(y, n_samples * n_steps)

    def _missing_unweighted(self, weights, targets):
        """Steps whose targets are all NaN (the padding of sequences of different lengths
        padded to one) weigh 0 in training and the standardization, their targets set to
        0; per-sequence targets as they are (NaN there is refused by the head)."""
        missing = self._missing_steps(targets)
        if missing is None:
            return weights, targets
        targets = np.where(_broadcast_rows(missing, targets), 0.0, targets)
        weights = np.ones(len(targets)) if weights is None else np.array(weights, dtype=float)
        weights[missing] = 0.0
        if not weights.any():
            raise ValueError(
                "Every training step's targets are NaN (missing) or weigh 0: nothing to train on."
            )
        return weights, targets

    def _missing_steps(self, targets, per_step: bool | None = None) -> np.ndarray | None:
        """The rows of per-step ``targets`` that are all NaN (``None`` where none is, or
        the targets are not per step: ``per_step``, else as ``feature_output`` says); a
        ValueError for a step with some outputs NaN."""
        if not (self.feature_output == "sequence" if per_step is None else per_step):
            return None
        targets = np.asarray(targets)
        if targets.dtype.kind not in "fc":
            return None
        nan = np.isnan(targets)
        if not nan.any():
            return None
        rows = nan.reshape(len(nan), -1)
        missing = rows.all(axis=1)
        if not np.array_equal(rows.any(axis=1), missing):
            raise ValueError(
                "y holds NaN in some outputs of a step but not in others. NaN marks a "
                "missing step (padding of sequences of different lengths) and must then "
                "fill all of its outputs; fill or drop the other missing values."
            )
        return missing

    def _refuse_missing_on_dask(self, y, name: str) -> None:
        """Per-step targets of a dask fit with steps all NaN (padding): refused by name
        (a dask fit takes no weights, and the head's own message, 'Input y contains NaN',
        contradicted the in-memory support)."""
        try:
            y = _as_float_targets(y)
        except ValueError:  # (ragged: refused by the checks of their shape)
            return
        if y.ndim < 2 or self._missing_steps(y.reshape(-1, *y.shape[2:])) is None:
            return
        raise ValueError(
            f"{name} marks missing steps (NaN targets, the padding of sequences of different "
            "lengths), which a fit on dask arrays does not support (it takes no weights). "
            "Fit on NumPy arrays (X.compute()), or drop the padded steps."
        )

    def _held_out(self, X_val, y_val):
        """As for the classifier; held-out steps whose targets are NaN are left out of the
        validation score."""
        F_val, targets = super()._held_out(X_val, y_val)
        with _naming(_Y_VAL):
            missing = self._missing_steps(targets)
        if missing is None:
            return F_val, targets
        if missing.all():
            raise ValueError(
                "Every held-out step's targets in y_val are NaN (missing): no step to score "
                "early stopping on."
            )
        F_rows = self._as_rows(F_val)
        if len(F_rows) != len(targets):  # (refused downstream, with its own message)
            return F_val, targets
        return F_rows[~missing], targets[~missing]

    @_OnlyIncremental
    @limits_threads
    def partial_fit(self, X, y, sample_weight=None):
        """Train the dense head for one epoch on ``(X, y)``; the first call fits the features.

        Only with ``head='dense'``, or 'auto' with ``feature_output='sequence'`` (the dense
        head there): the other heads are fitted by :meth:`fit` (reading ``partial_fit``
        then raises an ``AttributeError`` that says so). With
        ``early_stopping=True`` it raises a ``ValueError``, as scikit-learn's MLP does.

        Parameters
        ----------
        X : array-like of sequences
        y : array-like
            Targets, shape (n_samples,) or (n_samples, n_outputs); per step for
            ``feature_output='sequence'``.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sequence weights, as in :meth:`fit`.

        Returns
        -------
        self
        """
        return self._partial_fit(X, y, sample_weight)

    @limits_threads
    def predict(self, X) -> Result:
        """Predicted targets of the sequences ``X`` (per step for 'sequence')."""
        if _dask.is_dask_array(X):
            return self._predict_dask(X, "predict")
        # (the shape first: NaN padding gets the per-step advice)
        shape = self._sequence_shape(X, predicting=True) if self._per_step() else None
        return self._predicted(X, shape)

    @limits_threads
    def _predicted(self, X, shape: tuple[int, int] | None) -> Result:
        """:meth:`predict` of ``X`` in memory, the per-step ``(n_samples, n_steps)`` of
        :meth:`_sequence_shape` given (``None``: one prediction per sequence)."""
        prediction = self._apply_head(X, "predict")
        if shape is not None:
            return prediction.reshape(*shape, *prediction.shape[1:], *self._output_axes())
        return prediction

    def score(self, X, y, sample_weight=None) -> float:
        """The coefficient of determination R^2 of :meth:`predict`, as scikit-learn's
        regressors give it; for 'sequence' features, over every step of every sequence
        (each step a sample, R^2 averaged over the outputs), ``y`` of shape
        ``(n_samples, n_steps[, n_outputs])``."""
        if not self._per_step():
            return super().score(X, y, sample_weight)
        from sklearn.metrics import r2_score

        if _dask.is_dask_array(X):
            prediction = self.predict(X)
            if _dask.is_dask_array(prediction):
                prediction = prediction.compute()
        else:  # (other lengths get the fit's advice, of NaN targets at the padded steps)
            prediction = self._predicted(X, self._sequence_shape(X))
        y = _as_float_targets(y.compute() if _dask.is_dask_array(y) else y)
        if y.shape[:2] != prediction.shape[:2] or y.size != prediction.size:
            raise ValueError(
                f"y must hold the targets of every step of X, shape {prediction.shape}; "
                f"got shape {y.shape}."
            )
        # R^2 over every step of every sequence, per output (as the head is trained and
        # its early stopping scores): the steps are samples, not outputs of their own
        n_samples, n_steps = prediction.shape[:2]
        n_rows = n_samples * n_steps
        if sample_weight is not None:
            sample_weight = np.repeat(check_sample_weight(sample_weight, n_samples), n_steps)
        y, prediction = y.reshape(n_rows, -1), prediction.reshape(n_rows, -1)
        # (steps of padding: NaN targets, not scored; per step as fitted, whatever
        # feature_output was set to since)
        missing = self._missing_steps(y, per_step=True)
        if missing is not None:
            if missing.all():
                raise ValueError("Every step's targets in y are NaN (missing): no step to score.")
            y, prediction = y[~missing], prediction[~missing]
            sample_weight = None if sample_weight is None else sample_weight[~missing]
        return float(r2_score(y, prediction, sample_weight=sample_weight))

    def stream(self, n_streams: int = 1):
        """The fitted model run online: a :class:`~lmu_sk.streaming.RegressorStream` of
        ``n_streams`` sequences whose ``predict()`` after any update equals :meth:`predict`
        of the prefixes seen (for 'sequence', at the latest step)."""
        return RegressorStream(self, n_streams)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # y of shape (n_samples, n_outputs)
        return tags
