"""``LMUPooledFeatures``: multi-scale Delay Network states pooled over time.

A time-series classifier needs to know *what happened* in a series, not only where it
ended. These features run Delay Networks of many windows over each series, its first
difference and its centred cumulative sum, and summarise every state over the series' own
steps: how often, by how much and for how long at a stretch it exceeds each of its
thresholds (quantiles of the training states), and which state of a window is the largest
or the smallest most often. The pools are accumulated as the states are computed
(:mod:`lmu_sk.engine`), so memory is ``O(n_samples * n_features)``; the states of a dataset
are never all held.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings
from collections.abc import Callable, Iterator
from typing import ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _dask, engine
from ._device import array_module_of, for_module, get_array_module, to_numpy
from ._input import check_dtype_param, check_finite_result, holds_text, largest_magnitude
from ._logging import get_logger
from ._memory import check_fits, format_bytes, resolve_budget
from ._progress import ProgressBar, StepLog, verbosity
from ._screening import channel_scores, choose_channels, unscreenable
from ._transformer import SequenceTransformer
from ._typing import Result
from .dn import (
    check_count,
    check_system_fits,
    euler_instability,
    validate_order_theta,
    warn_if_euler_unstable,
)
from .engine import algebra
from .engine.plan import rows_within
from .engine.pooling import (
    FLOAT32_MAX,
    MOMENT_POOLS,
    POOLS,
    THRESHOLD_POOLS,
    TRANSFORMS,
    PooledSpec,
    WindowSpec,
    cumsum_windows,
    state_gain,
    streamed_window_arrays,
)
from .streaming import PooledStream

__all__ = [
    "LMUPooledFeatures",
    "check_thetas",
    "default_orders",
    "default_strides",
    "default_thetas",
]

logger = get_logger(__name__)

# Training states used to fit the thresholds: at most this many bytes of states per
# window from the evenly spaced samples ...
_BIAS_STATE_BYTES = 32 * 1024**2
# ... and at most this many of their steps, evenly spaced, per state
_BIAS_MAX_STEPS = 2048
# blocks of sequences whose mixed channels (channel_sums) are made at once to check their range
_MIXED_BLOCK_BYTES = 32 * 1024**2
# a threshold closer than this (relative) to a value that several training steps share is
# moved above it: float32 rounding is 6e-8, the arithmetic of two routes differs by 1e-15
_SHARED_RTOL = 1e-6
# the widths of a normal distribution's middle 90 % and 98 %, in standard deviations
_MIDDLE_90_DEVIATIONS = 3.29
_MIDDLE_98_DEVIATIONS = 4.65
# fitting holds about this many arrays of the thresholds' size at once (np.quantile's
# results and their ascending copy)
_THRESHOLD_COPIES = 2.5
# default windows: this many, from this fraction of the longest training length, or this
# many steps where that is shorter, to all of it. Sequences of up to 2 048 steps keep
# 1/128; on longer ones the finest window stays at 16 steps, where events of a few steps
# still show (bench_shapes' probe of 20 000 steps, a burst of width 12: 0.530 with 1/128,
# whose finest window is 156 steps, 0.975 with 16 steps, 0.835 with 32)
_N_WINDOWS = 16
_FINEST = 1 / 128
_FINEST_STEPS = 16.0
# default orders: ceil(theta), at least 2, at most 8 and at most 16 states per window
# across the channels
_MIN_ORDER = 2
_MAX_ORDER = 8
_STATES_PER_WINDOW = 16
# default strides: a window sees block means of about theta / (2 * order) steps
_STEPS_PER_STATE = 2
_SHORT_NAMES = {"series": "x", "difference": "d", "cumsum": "s"}
# channels='auto' keeps every channel up to this many; beyond, it screens them against the
# target and keeps at most this many
MAX_CHANNELS = 16
# the screening features: per channel, its series and difference through three windows of
# two states, pooled at three thresholds and by their mean, maximum and minimum (fractions
# of the length in geometric progression, to _FINEST_STEPS beyond 256 steps)
_SCREEN_WINDOWS = (1 / 16, 1 / 4, 1.0)
_SCREEN_PARAMS = {
    "order": 2,
    "n_biases": 3,
    "pools": ("ppv", "mean", "max", "min"),
    "transforms": ("series", "difference"),
}
# channels are screened on at most this many of the rows (and their targets), evenly
# spaced: with them, the F test at the family-wise 1 % finds a screening feature whose
# correlation with the target is 0.07 (17 channels) to 0.08 (1 000 channels); the
# screening of more rows finds little more that a head would use. Fewer rows when the
# sample, its float64 copy and its screening features would take more than half of
# max_memory (the fit works within the other half).
SCREEN_SAMPLES = 4096
_INPUT_NAME = re.compile(r"^w\d+_[xds](\d+)_")
# channel_sums='auto' adds the sum of every pair of channels to inputs of 2 to this many
# (not to the channels a screening kept: a window's states are shared among the channels
# read, so there the pairs take states from the channels that carry the class, and the
# 64-channel probe of bench_shapes loses 5.5 points)
_MAX_SUMMED_CHANNELS = 4


def _screen_features_per_channel() -> int:
    """How many screening features each channel has (every screening window is fed all of
    its transforms: none is the cumulative sum)."""
    pools = _SCREEN_PARAMS["pools"]
    per_state = _SCREEN_PARAMS["n_biases"] * sum(p in THRESHOLD_POOLS for p in pools) + sum(
        p in MOMENT_POOLS for p in pools
    )
    n_inputs = len(_SCREEN_WINDOWS) * len(_SCREEN_PARAMS["transforms"])
    return n_inputs * _SCREEN_PARAMS["order"] * per_state


def _screening_thetas(n_steps: int) -> list[float]:
    """The screening's windows: 1/16, 1/4 and all of ``n_steps`` steps (at least one
    each), from ``_FINEST_STEPS`` instead of 1/16 beyond 256 steps, as the default windows
    keep a fine one (:func:`default_thetas`' rule): a channel whose class shows in events
    of a few steps is still seen."""
    return default_thetas(n_steps, len(_SCREEN_WINDOWS), _SCREEN_WINDOWS[0]).tolist()


def _check_targets_per_sequence(y, n_samples: int, screening: bool = False) -> None:
    """Refuse a ``y`` whose first axis is not the sequences' (whether or not it screens
    channels: 16 channels or fewer took any ``y`` silently, more refused it); to screen,
    also one that is not one target, or one row of them, per sequence (a dask ``y`` by
    its shape alone)."""
    shape = getattr(y, "shape", None)  # (a dask y's without computing it)
    if shape is None:  # a list, or an array-like NumPy's shape cannot read (its __array__)
        shape = np.shape(y if isinstance(y, (list, tuple)) else np.asarray(y))
    shape = tuple(shape)
    wrong = not shape or shape[0] != n_samples
    if screening:
        wrong = wrong or len(shape) > 2 or (len(shape) == 2 and not shape[1])
    if wrong:
        purpose = " to screen the channels" if screening else ""
        raise ValueError(
            f"y must hold one target (or one row of targets) per sequence{purpose}: "
            f"{n_samples} sequences, y of shape {shape}."
        )


# target_type: whether y is continuous (None: read from y)
_TARGET_TYPES = {"auto": None, "classes": False, "continuous": True}


def _continuous(target_type) -> bool | None:
    """Whether ``target_type`` says ``y`` is continuous (``None``: read it from ``y``); a
    ValueError naming the choices for anything else."""
    if not (isinstance(target_type, str) and target_type in _TARGET_TYPES):
        raise ValueError(
            "target_type must be 'auto', 'classes' or 'continuous' (what y holds to screen "
            f"the channels); got {target_type!r}."
        )
    return _TARGET_TYPES[target_type]


def _screening_array(y, n_samples: int, continuous: bool | None) -> np.ndarray:
    """The targets that screen the channels as an array, checked: one (or one row) per
    sequence, numbers without NaN or infinity for a continuous target, and labels that
    can be sorted."""
    y = to_numpy(y)  # (a CuPy y comes to the host: the screening runs there)
    _check_targets_per_sequence(y, n_samples, screening=True)
    if y.dtype.kind == "c":
        raise ValueError(
            "y holds complex numbers; the channels are screened against labels or real "
            "targets: give its real part or its magnitude (np.abs(y))."
        )
    if y.dtype.kind == "O" and not holds_text(y):
        # numbers held as objects are numbers (labels of text stay labels), where float64
        # holds them exactly (integers beyond 2^53 would merge: they stay labels)
        try:
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                numbers_of = y.astype(np.float64)
            if np.all((numbers_of == y) | np.isnan(numbers_of)):
                y = numbers_of
        except (TypeError, ValueError, OverflowError):
            pass
    numeric = y.dtype.kind in "biuf"
    if continuous and not numeric:
        raise ValueError(
            f"y must hold numbers to screen the channels against a continuous target "
            f"(target_type='continuous'); got dtype {y.dtype}."
        )
    if numeric and not np.isfinite(y).all():
        raise ValueError(
            "y holds NaN or infinity; the channels are screened against it: drop those "
            "sequences or fill their targets."
        )
    if not numeric:
        try:
            np.unique(y)
        except TypeError as error:
            raise ValueError(
                "y's labels cannot be compared with one another (mixed types, or None); "
                "the channels are screened against them: give every label one type."
            ) from error
    return y


def channel_sums(kept: np.ndarray, n_channels: int) -> np.ndarray:
    """The ``(n_channels, n_read)`` 0/1 matrix that makes the channels the windows read:
    the ``kept`` channels, then the sum of every pair of them, in ``itertools``'
    combinations order."""
    kept = [int(k) for k in kept]
    pairs = list(itertools.combinations(kept, 2))
    mixing = np.zeros((n_channels, len(kept) + len(pairs)))
    for column, k in enumerate(kept):
        mixing[k, column] = 1.0
    for column, (i, j) in enumerate(pairs, start=len(kept)):
        mixing[[i, j], column] = 1.0
    return mixing


def default_thetas(
    n_steps: int,
    n_windows: int = _N_WINDOWS,
    finest: float = _FINEST,
    finest_steps: float = _FINEST_STEPS,
) -> np.ndarray:
    """``n_windows`` windows in geometric progression from ``finest * n_steps``, or
    ``finest_steps`` where that is shorter, to ``n_steps``, at least one step each."""
    if finest * n_steps <= finest_steps:  # (up to 2 048 steps by default: 1/128's bits)
        return np.maximum(float(n_steps) * np.geomspace(finest, 1.0, n_windows), 1.0)
    # geomspace's ends are exact: the finest window is finest_steps itself, so its stride
    # (floor(theta / (2 order))) does not depend on a rounding
    return np.maximum(np.geomspace(float(finest_steps), float(n_steps), n_windows), 1.0)


def default_orders(thetas: np.ndarray, n_channels: int) -> np.ndarray:
    """States per window when ``order=None``: ``ceil(theta)``, at least 2, at most
    ``max(2, min(8, 16 // n_channels))``."""
    cap = max(_MIN_ORDER, min(_MAX_ORDER, _STATES_PER_WINDOW // n_channels))
    return np.asarray(
        [min(cap, max(_MIN_ORDER, math.ceil(theta))) for theta in thetas], dtype=np.int64
    )


def default_strides(thetas: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """Steps per block mean when ``stride='auto'``: ``floor(theta / (2 * order))``, >= 1;
    a ValueError naming the window where that is beyond ``MAX_STRIDE``."""
    strides = [theta // (_STEPS_PER_STATE * d) for theta, d in zip(thetas, orders, strict=True)]
    for theta, stride in zip(thetas, strides, strict=True):
        if stride > MAX_STRIDE:
            raise ValueError(
                f"thetas holds a window of {theta:.3g} steps, whose block means (stride='auto'"
                f": theta / (2 * order) steps) exceed {MAX_STRIDE:.3g} steps; use windows of "
                "at most the longest sequence's length, or an integer stride."
            )
    return np.asarray([max(1, int(stride)) for stride in strides], dtype=np.int64)


def check_thetas(thetas, name: str = "thetas") -> np.ndarray:
    """The windows ``thetas`` (one or a sequence) as a float array; a clear error naming
    the parameter ``name`` (the composites call theirs ``theta``) for anything else."""
    if isinstance(thetas, (set, frozenset, Iterator)):
        raise TypeError(
            f"{name} must be a number or a sequence of numbers (a list, tuple or array: the "
            f"windows in order); got a {type(thetas).__name__}. Pass list({name})."
        )
    values = np.atleast_1d(np.asarray(thetas, dtype=object))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of windows; got {thetas!r}.")
    try:
        return np.asarray([validate_order_theta(1, theta)[1] for theta in values])
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"{name} must be positive, finite numbers of time steps; got {thetas!r}."
        ) from error


def _check_names(value, name: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """A non-empty selection of ``allowed`` names, returned in the order of ``allowed``."""
    if isinstance(value, str):
        value = (value,)
    try:
        chosen = list(value)
    except TypeError:
        chosen = None
    if not chosen or not all(isinstance(v, str) for v in chosen):
        raise TypeError(
            f"{name} must be a non-empty sequence of names from {allowed}; got {value!r}."
        )
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise ValueError(f"Unknown {name} {unknown}; use names from {allowed}.")
    return tuple(v for v in allowed if v in chosen)


def _check_state_range(
    U,
    orders: np.ndarray,
    transforms: tuple[str, ...],
    pools: tuple[str, ...] = (),
    mixing=None,
    budget: int | None = None,
) -> None:
    """Refuse inputs whose states (or the float32 sums of 'mpv' among the ``pools``) may
    pass float32's range: they are compared with float32 thresholds (on the CPU; on a GPU a
    float32 output computes in float32), where they would become infinite and count
    wrongly, whatever the output ``dtype`` (see
    :func:`~lmu_sk.engine.pooling.state_gain`). ``mixing``: the windows read those
    combinations of the channels (:func:`channel_sums`), whose values count (made in
    blocks of at most a quarter of ``budget``)."""
    largest = _largest_read(U, mixing, budget)
    n_steps = max(len(part) for part in U) if isinstance(U, list) else U.shape[1]
    gain = state_gain(orders, transforms, n_steps, pools)
    if largest * gain > FLOAT32_MAX:
        sums = " and sums them in float32 for 'mpv'" if "mpv" in pools else ""
        # (with channel_sums the windows also read sums of channels: up to twice X)
        read = "X holds" if mixing is None else "X's channels and their sums hold"
        kept = "X" if mixing is None else "them"
        raise ValueError(
            f"{read} values up to {largest:.3g}, which can give Delay Network states beyond "
            f"the largest float32 ({FLOAT32_MAX:.3g}): LMUPooledFeatures compares its "
            f"states with float32 thresholds{sums}, whatever its dtype, so they would count "
            f"wrongly. Scale X down, to keep {kept} below {FLOAT32_MAX / gain:.3g} in "
            "magnitude (e.g. sklearn.preprocessing.StandardScaler)."
        )


def _largest_read(U, mixing=None, budget: int | None = None) -> float:
    """The largest magnitude of the channels the windows read: ``U``'s (an array or a list
    of sequences), or the combinations ``mixing`` makes of them, mixed block by block of
    sequences of at most :data:`_MIXED_BLOCK_BYTES` and a quarter of ``budget`` (no copy
    of the input's size)."""
    parts = U if isinstance(U, list) else [U]
    if mixing is None:
        return max(largest_magnitude(part) for part in parts)
    block_bytes = _MIXED_BLOCK_BYTES if budget is None else min(_MIXED_BLOCK_BYTES, budget // 4)
    largest = 0.0
    for part in parts:
        rows = part[None] if part.ndim == 2 else part  # (one sequence of a list)
        # the mixed rows are float64 (algebra.mixed_channels)
        step = max(1, block_bytes // max(8 * rows.shape[1] * mixing.shape[1], 1))
        for start in range(0, rows.shape[0], step):
            block = algebra.mixed_channels(
                rows[start : start + step], mixing, array_module_of(rows)
            )
            largest = max(largest, largest_magnitude(block))
    return largest


def _refuse_unresolved_states(states: list[np.ndarray], cause: Callable[[], str | None]) -> None:
    """Refuse training states (every window's, float64) whose every nonzero value is below
    float32's normal range, or some beyond it: the thresholds they are compared with are
    float32, which cannot tell them apart (every feature would be constant), or would be
    infinite. ``cause`` names what made them grow (an unstable window) where it knows."""
    largest = max((float(np.abs(s).max()) for s in states if s.size), default=0.0)
    huge, tiny = float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny)
    if not largest <= huge:  # NaN too: infinite states' differences
        reason = cause() or ("rescale the input (e.g. sklearn.preprocessing.StandardScaler).")
        size = f"{largest:.3g}" if np.isfinite(largest) else "infinity"
        raise ValueError(
            f"The Delay Network states of the training sequences reach {size} in "
            f"magnitude, beyond float32's range ({huge:.3g}) of the thresholds the pooled "
            f"features compare them with: {reason}"
        )
    if 0 < largest < tiny:
        raise ValueError(
            f"The Delay Network states of the training sequences are at most {largest:.3g} "
            f"in magnitude, below the smallest normal float32 ({tiny:.3g}): the pooled "
            "features compare them with float32 thresholds, which cannot tell them apart, "
            "whatever the dtype. Rescale the input (e.g. sklearn.preprocessing."
            "StandardScaler)."
        )


def _thresholds(states: np.ndarray, levels: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """The quantiles ``(n_levels, n_states)`` of ``states`` ``(n_states, n_steps)`` at
    ``levels`` (NumPy's linear method, from one sort: NumPy's vectorised sort of a row is
    several times faster than partitioning it at the ~50 ranks read), each that falls on
    a value several steps share, or on one training value, moved just above it.

    A state held by a constant stretch of input (a flat segment, zero padding) takes one
    value for many steps; a quantile there equals that value, and whether the state counts
    as above it would be decided by the last bit of the arithmetic (the GPU's blocked route
    against the compiled kernel, or the kernel's order of operations, changed such features
    by up to 0.9). Above it, those steps count as not above the threshold on every route. A
    quantile is on such a value when the two training values it lies between (or, on one of
    them, that one and the value below) are within ``_SHARED_RTOL`` of it, or of the
    states' spread: the range of their middle 90 % (as a normal deviation), of their middle
    98 % where that is zero (a state at one value 95 % of the steps), ``spread`` (their
    standard deviation) where both are. Not the standard deviation alone: one outlier of
    the input (1e9 in one series of values about 1) made it so large that every quantile
    counted as shared and moved above every other state, and the features constant.
    """
    n = states.shape[1]
    at = (n - 1) * levels
    below = np.floor(at).astype(np.intp)
    above = np.minimum(below + 1, n - 1)
    before = np.maximum(below - 1, 0)
    ordered = np.sort(states, axis=1)
    a, b, c = (ordered[:, i].T for i in (below, above, before))
    gamma = (at - below)[:, None]
    # NumPy's lerp, from the nearer end
    q = np.where(gamma >= 0.5, b - (b - a) * (1 - gamma), a + (b - a) * gamma)
    middle = ordered[:, round(0.95 * (n - 1))] - ordered[:, round(0.05 * (n - 1))]
    wide = ordered[:, round(0.99 * (n - 1))] - ordered[:, round(0.01 * (n - 1))]
    robust = np.where(
        middle > 0,
        middle / _MIDDLE_90_DEVIATIONS,
        np.where(wide > 0, wide / _MIDDLE_98_DEVIATIONS, spread),
    )
    tol = _SHARED_RTOL * np.maximum(np.abs(q), robust)
    shared = (b - a <= tol) | ((gamma == 0) & (a - c <= tol) & (below > 0)[:, None])
    # a quantile on one training value, or within rounding of it (the rank (n - 1) * level
    # whole: every level where n_biases + 1 divides n - 1), is moved just above it too:
    # that step of the training series counts as not above it on every route
    # (at most halfway to the next training value that is not within tol of it: a move
    # of 2 * tol past it could land within rounding of that one instead, where tol is wide
    # against the gaps, as for a state offset from zero by ~1e3 of its spread)
    d = ordered[:, np.minimum(above + 1, n - 1)].T
    near_b = ~shared & (b - q <= tol)
    near_a = ~shared & ~near_b & (q - a <= tol)
    past_b = np.where(d - b > tol, np.minimum(b + 2 * tol, (b + d) / 2), b + 2 * tol)
    past_a = np.minimum(q + 2 * tol, (a + b) / 2)
    return np.where(near_b, past_b, np.where(near_a, past_a, np.where(shared, q + 2 * tol, q)))


# a channel whose values' mean exceeds this many times their spread: its states, compared
# with the thresholds in float32 (7 significant digits), keep less than ~1e-3 of a spread
OFFSET_WARNING_RATIO = 1e4
# the longest stride (steps per block mean) taken: an int64 holds it (a window of 1e20
# steps, whose stride='auto' is beyond, raised a bare OverflowError)
MAX_STRIDE = 2**62


def _warn_of_offsets(U, read: np.ndarray) -> None:
    """Warn, with the fix, where a channel read (of ``read``) has training values that sit
    on an offset far larger than their spread: the 'series' input's states then carry the
    offset, and float32's comparisons with the thresholds lose its variation (the
    difference and the cumulative sum, made of the input at its own precision, keep it;
    while the input was read in float32, a classifier's accuracy fell from 0.99 to 0.86
    with an offset of 1e6 on values of spread 6, and to chance at 1e8, unwarned: the cast
    made the channel constant)."""
    parts = U if isinstance(U, list) else [U]
    n_channels = parts[0].shape[-1]
    total = sum(p.shape[0] * (p.shape[1] if p.ndim == 3 else 1) for p in parts)
    if total == 0:
        return
    # only the channels read (a copy of those alone: of many channels, screening keeps
    # 16), each in one pass: E[x^2] - E[x]^2 rounds by ~1e-16 of the mean's square, a
    # spread of 1e-8 of the mean, far below the ratio tested (per channel, on the host:
    # the input may be on a GPU)
    read = np.asarray(read, dtype=np.intp)
    # every channel read: the rows as they are (a view of contiguous input; a fancy index
    # of all channels copied the whole input, whatever max_memory)
    every = np.array_equal(read, np.arange(n_channels))
    flat = [
        p.reshape(-1, n_channels)
        if every
        else p.reshape(-1, n_channels)[:, array_module_of(p).asarray(read)]
        for p in parts
        if p.size
    ]
    mean = sum(to_numpy(f.sum(axis=0, dtype=np.float64)) for f in flat) / total
    squares = (
        sum(to_numpy(array_module_of(f).einsum("ij,ij->j", f, f, dtype=np.float64)) for f in flat)
        / total
    )
    spread = np.sqrt(np.maximum(squares - mean**2, 0.0))
    offset = np.abs(mean) > OFFSET_WARNING_RATIO * spread
    # a constant channel carries nothing to lose (its spread above is rounding: a channel
    # of 0.1 warned of an offset of 3e7 times its spread)
    highs = np.max([to_numpy(f.max(axis=0)) for f in flat], axis=0)
    lows = np.min([to_numpy(f.min(axis=0)) for f in flat], axis=0)
    offset &= highs != lows
    if offset.any():
        channels = read[offset]
        ratio = float(np.max(np.abs(mean[offset]) / spread[offset]))
        warnings.warn(
            f"The values of channel(s) {channels.tolist()} sit on an offset up to "
            f"{ratio:.3g} times their spread; the pooled features compare the states with "
            "their thresholds in float32 (7 significant digits), so the states of the "
            "series itself lose most of its variation (those of its difference and "
            "cumulative sum keep it). Subtract the offset first (e.g. each series' or "
            "channel's mean).",
            UserWarning,
            stacklevel=4,
        )


class LMUPooledFeatures(SequenceTransformer):
    """Delay Network states of many windows, pooled over time.

    Every channel gives up to three inputs (``transforms``): the series, its first
    difference and its centred cumulative sum. Each window ``theta`` in ``thetas`` runs a
    Delay Network (DN) of its own order over the inputs, fed the means of blocks of its
    own ``stride`` steps (the cumulative sum feeds only the longer half of the windows).
    Every state is summarised over the sequence's own steps (``pools``), for each of
    ``n_biases`` thresholds fitted on the training states: the proportion of steps above
    it ('ppv'), the mean excess on those steps ('mpv') and the longest stretch above it
    ('lspv'); optionally the state's mean, maximum and minimum; and, per window and input,
    the proportion of steps each state is the largest of the window, and the smallest
    ('compete', states scaled by their training standard deviations).

    Parameters
    ----------
    order : int, default=None
        DN states per window and input. ``None`` gives each window ``ceil(theta)`` states,
        at least 2 and at most ``max(2, min(8, 16 // n_channels))``, ``n_channels`` the
        channels read (with ``channel_sums``, the pair sums too: 2, 3 and 4 channels read
        3, 6 and 10).
    thetas : float or sequence of float, default=None
        Windows in time steps. ``None`` uses 16 windows in geometric progression from
        1/128 of the longest training sequence (at most 16 steps: beyond 2 048 steps the
        finest window stays at 16) to the whole of it (at least one step).
    transforms : sequence of {'series', 'difference', 'cumsum'}, default=('series', \
'difference', 'cumsum')
        The inputs made of every channel. 'cumsum' is ``(x_1 + ... + x_t - t * mean) /
        sqrt(n)`` with the sequence's own mean and length ``n``: it uses the whole
        sequence, so a :meth:`stream` recomputes the windows it feeds at each
        ``transform()``.
    pools : sequence of {'ppv', 'mpv', 'lspv', 'mean', 'max', 'min', 'compete'}, \
default=('ppv', 'mpv', 'lspv', 'compete')
        The pools of every state (see above).
    stride : 'auto' or int, default='auto'
        Steps per block mean fed to the DNs. 'auto' gives each window
        ``floor(theta / (2 * order))`` steps (at least 1): about two blocks per state,
        whatever the window. An integer applies to every window. Windows stay in steps of
        the original series.
    n_biases : int, default=16
        Thresholds per state: the quantiles ``k / (n_biases + 1)``, ``k = 1 .. n_biases``,
        of the state over training steps (a quantile on a value that several of those
        steps share, as a constant stretch of input gives, is moved just above it).
    bias_samples : int, default=64
        At most this many training sequences (evenly spaced in the training set) provide
        the states the thresholds and scales are fitted on, at most 2048 of their steps
        (evenly spaced) per state.
    discretizer : {'zoh', 'euler'}, default='zoh'
    dtype : {None, 'float32', 'float64'}, default=None
        Output dtype; ``None`` keeps float32 input as float32 and makes the rest float64.
        The input is read at its own precision whatever the dtype (float32 as float32,
        other numbers as float64). On the CPU the states run in float64 and are compared
        with the thresholds in float32; on a GPU everything runs in the output dtype.
        Inputs large enough for a state to pass float32's range (about ``3.4e38 / order``,
        less with the difference and cumulative sum, and with 'mpv', which sums up to 1 024
        states in float32, 1 024 times less) are refused with a ValueError, whatever the
        dtype.
    max_memory : int, float or str, default=None
        Working memory allowed besides the result (bytes or a string like ``'2GB'``);
        samples are processed in chunks that fit, in ``fit`` too. ``None`` allows half of
        what is free. Besides it, ``fit`` keeps the sampled states its thresholds come
        from, at most 2 048 of each state of every window (16 KB per state: 5 MB for a
        univariate input's 320 states, 7 MB for four channels' 800 by default, 240 MB
        for four channels at ``order=64``): bounding them by ``max_memory`` would make
        the thresholds, and so the features, depend on it.
    device : {'auto', 'cpu', 'gpu'}, default='auto'
        Where to compute: 'auto' uses a CUDA GPU when CuPy finds one.
    return_gpu_arrays : bool, default=False
        On the GPU, return CuPy arrays (C-contiguous: ``torch.from_dlpack`` and
        ``jax.numpy.from_dlpack`` take them without a copy).
    channels : 'auto', 'all' or int, default='auto'
        Which channels feed the windows. 'all': every one. An integer ``k``: at most ``k``,
        screened against the target ``y`` given to :meth:`fit` (the channels whose pooled
        states of three short, two-state windows separate the classes, or correlate with a
        continuous target, significantly: one-way analysis of variance at a family-wise
        level of 1 %, the highest-scoring first; the ``k`` highest when none does; with
        several targets, ``y`` of shape ``(n_samples, n_outputs)``, a channel's best over
        them). 'auto': every channel up to 16; beyond, the screening with ``k = 16`` when ``y``
        is given, every channel without it. The features then grow with the channels kept,
        not with the channels given. The screening reads at most 4096 of the rows
        (``SCREEN_SAMPLES``), evenly spaced, not stratified, and their targets; fewer
        when they, their float64 copy and their screening features would take more than
        half of ``max_memory`` (a warning is logged). A dask array's sample (``y`` a NumPy
        or a dask array, of which only those targets are computed) is all the fit reads:
        the thresholds are then fitted on evenly spaced rows of it. With at most 4096 rows
        that fit half of ``max_memory`` this is the in-memory fit.
    channel_sums : 'auto' or bool, default='auto'
        Also read the sum of every pair of the channels kept, as channels of their own
        (their states are the sums of the pair's states; pooled, they say when the pair
        rises together). 'auto': for an input of 2 to 4 channels, all kept (1 to 6
        pairs); ``True``: whatever their number (``k (k - 1) / 2`` pairs); ``False``:
        never. The states per window are shared among the channels read
        (``order=None``).
    target_type : {'auto', 'classes', 'continuous'}, default='auto'
        What the ``y`` that screens the channels holds: class labels (one-way analysis of variance)
        or a continuous target (the squared correlation's statistic, whatever its scale). 'auto':
        continuous where scikit-learn's ``type_of_target`` says so or where the numbers are all
        different, labels otherwise, so integer-valued targets that repeat are read as labels: pass
        'continuous' for them. :class:`~lmu_sk.LMUClassifier` and :class:`~lmu_sk.LMURegressor` set
        it.
    channels_first : bool or None, default=None
        Layout of 3-D input. ``True``: ``(n_samples, n_channels, n_steps)`` as aeon and
        sktime hold it (``aeon.datasets.load_classification``), or a list of
        ``(n_channels, n_steps_i)`` arrays. ``None``: ``(n_samples, n_steps, n_channels)``,
        warning when a 3-D array has fewer steps than channels. ``False``: the same, silent.
    verbose : bool or int, default=False
        Show the progress of ``transform`` and ``fit_transform`` over the samples on
        standard error. Results do not change.
    n_jobs : int or None, default=None
        CPU threads of the compiled kernels (Numba) and of BLAS during ``fit``,
        ``transform`` and ``fit_transform``, restored afterwards. ``None`` keeps the
        libraries' own settings (all cores, unless ``NUMBA_NUM_THREADS`` or
        ``OMP_NUM_THREADS`` say otherwise); ``-1`` is all cores, ``-2`` all but one.
        Results do not depend on it beyond rounding. Dask arrays are computed later, on
        dask's threads or workers, and are not affected.

    Attributes
    ----------
    thetas_ : ndarray of shape (n_windows,)
        The windows, in steps of the original series.
    orders_, strides_ : int ndarray of shape (n_windows,)
    spec_ : lmu_sk.engine.PooledSpec
        The fitted windows, inputs and pools, as the engine computes them.
    biases_ : list of ndarray of shape (n_inputs_w, order_w, n_biases), float32
        The thresholds of every window's states, ascending. Input ``j * n_channels + k`` is
        transform ``j`` of channel ``k``, over the transforms the window is fed.
    scales_ : list of ndarray of shape (n_inputs_w, order_w)
        One over every state's training standard deviation, for 'compete'.
    n_features_in_ : int
        Steps of the training sequences (the longest one when lengths differ); any length
        can be transformed.
    n_channels_ : int
        Channels of the input.
    channels_ : int ndarray
        The channels that feed the windows, ascending (all of them unless screened).
    mixing_ : ndarray of shape (n_channels, n_read) or None
        How the channels the windows read are made of the input's (:func:`channel_sums`),
        or ``None`` when they read the kept channels themselves.
    channel_scores_ : ndarray of shape (n_channels,) or None
        Each channel's screening score (its features' largest F statistic), ``None`` when
        no screening ran.
    n_features_out_ : int

    Notes
    -----
    Feature order: window; then input, state and pool (each threshold pool at every
    threshold, then the moments); then, with 'compete', input and state's wins and losses.
    :meth:`get_feature_names_out` names them. Input layout as for
    :class:`~lmu_sk.features.LMUFeatures`. Every pool runs over each sequence's own steps:
    unequal lengths are neither padded nor resampled.

    Examples
    --------
    >>> import numpy as np
    >>> from lmu_sk import LMUPooledFeatures
    >>> X = np.random.default_rng(0).standard_normal((5, 100))
    >>> f = LMUPooledFeatures(order=4, thetas=[10, 100], n_biases=4).fit(X)
    >>> f.transform(X).shape
    (5, 280)
    """

    # saved as plain data: a pickle names no class of the engine
    _plain_attributes: ClassVar[dict] = {"spec_": (PooledSpec.to_plain, PooledSpec.from_plain)}
    # a wider dtype does not take input beyond float32's range: the states are compared
    # with float32 thresholds whatever the dtype
    _wider_dtype: ClassVar[str] = (
        "not dtype='float64': the pooled features compare their states with float32 "
        "thresholds whatever their dtype"
    )
    # set on the instance that screens another's channels: it warns of no offsets
    _screening: bool = False

    # what every fitted LMUPooledFeatures holds (checked when a saved one is loaded)
    _fitted_attributes = (
        "thetas_",
        "orders_",
        "strides_",
        "spec_",
        "n_features_in_",
        "n_channels_",
        "biases_",
        "scales_",
        "n_features_out_",
    )

    def __init__(
        self,
        order=None,
        thetas=None,
        transforms=TRANSFORMS,
        pools=("ppv", "mpv", "lspv", "compete"),
        stride="auto",
        n_biases=16,
        bias_samples=64,
        discretizer="zoh",
        dtype=None,
        max_memory=None,
        device="auto",
        return_gpu_arrays=False,
        channels="auto",
        channel_sums="auto",
        target_type="auto",
        channels_first=None,
        verbose=False,
        n_jobs=None,
    ):
        self.order = order
        self.thetas = thetas
        self.transforms = transforms
        self.pools = pools
        self.stride = stride
        self.n_biases = n_biases
        self.bias_samples = bias_samples
        self.discretizer = discretizer
        self.dtype = dtype
        self.max_memory = max_memory
        self.device = device
        self.return_gpu_arrays = return_gpu_arrays
        self.channels = channels
        self.channel_sums = channel_sums
        self.target_type = target_type
        self.channels_first = channels_first
        self.verbose = verbose
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fit
    def _fit_dask(self, X, y=None):
        """Fit on evenly spaced rows of the dask array ``X``, gathered: only the
        ``bias_samples`` the thresholds are fitted on when every channel is kept; when the
        channels are screened, at most ``SCREEN_SAMPLES`` rows and their targets, which the
        in-memory fit screens and takes the thresholds' rows from (all the rows, when they
        are no more: the in-memory fit itself)."""
        bias_samples = check_count(self.bias_samples, "bias_samples", 1)
        _dask.check_dask_input(X)
        n_channels = X.shape[1 if self.channels_first else 2] if X.ndim == 3 else 1
        if self._screening_cap(n_channels, y is not None) is None:
            self._fit_validated(_dask.evenly_spaced_rows(X, bias_samples))
            return self
        _check_targets_per_sequence(y, X.shape[0], screening=True)
        n_steps = X.shape[2 if self.channels_first else 1]
        # the rows in the precision the fit reads them at, as the in-memory screening
        # counts them: the same rows
        itemsize = _dask._compute_dtype(X, self._input_dtype(None)).itemsize
        n_rows = self._screening_rows(X.shape[0], n_steps, n_channels, itemsize)
        rows, targets = _dask.evenly_spaced_sample(X, y, n_rows)
        self._fit_validated(rows, y=targets)
        return self

    def _screening_rows(self, n_samples: int, n_steps: int, n_channels: int, itemsize: int) -> int:
        """Rows to screen the channels on: ``SCREEN_SAMPLES`` (or all of them, when fewer),
        fewer when the rows (of at most ``n_steps`` steps, ``itemsize`` bytes each), their
        float64 copy and their screening features would take more than half of
        ``max_memory``."""
        per_row = n_steps * n_channels * (itemsize + 8)
        per_row += 8 * n_channels * _screen_features_per_channel()
        wanted = min(n_samples, SCREEN_SAMPLES)
        n_rows = rows_within(
            resolve_budget(self.max_memory) // 2,
            per_row,
            wanted,
            what=f"{type(self).__name__}'s screening of {n_channels} channels",
            fix=", or pass fewer channels (or channels='all')",
        )
        if n_rows < wanted:
            logger.warning(
                "%s: the channels are screened on %d of %d sequence(s), as many as half of "
                "max_memory holds (%s each); raise max_memory to screen on up to %d",
                type(self).__name__,
                n_rows,
                n_samples,
                format_bytes(per_row),
                wanted,
            )
        return n_rows

    def _fit(self, U, y=None):
        """Choose the channels and the windows, build the Delay Networks and fit the
        thresholds; ``y`` (one target, or one row of targets, per sequence) screens many
        channels."""
        n_steps = max(len(u) for u in U) if isinstance(U, list) else U.shape[1]
        n_channels = U[0].shape[1] if isinstance(U, list) else U.shape[2]
        n_biases = check_count(self.n_biases, "n_biases (the number of quantile thresholds)", 1)
        check_count(self.bias_samples, "bias_samples", 1)
        transforms = _check_names(self.transforms, "transforms", TRANSFORMS)
        pools = _check_names(self.pools, "pools", POOLS)
        continuous = _continuous(self.target_type)  # checked whether or not screening runs
        if y is not None and not _dask.is_dask_array(y):  # (used or not: a mistake either way)
            _check_targets_per_sequence(y, len(U))
        budget = resolve_budget(self.max_memory)
        thetas = default_thetas(n_steps) if self.thetas is None else check_thetas(self.thetas)
        kept, scores = self._choose_channels(U, y, n_steps, n_channels, continuous)
        if "series" in transforms and not self._screening:
            _warn_of_offsets(U, kept)
        mixing = self._mixing(kept, n_channels, budget)
        # the channels the windows read: the kept ones of the input, or all the mixed ones
        # (made by the engine chunk by chunk)
        if mixing is None:
            read, n_read = kept, n_channels
        else:
            read, n_read = np.arange(mixing.shape[1]), mixing.shape[1]
        if self.order is None:
            orders = default_orders(thetas, len(read))
        else:
            orders = np.full(len(thetas), check_count(self.order, "order", 1), dtype=np.int64)
        if isinstance(self.stride, str) and self.stride == "auto":
            strides = default_strides(thetas, orders)
        else:
            stride = check_count(self.stride, "stride (or 'auto')", 1)
            if stride > MAX_STRIDE:
                raise ValueError(
                    f"stride must be at most {MAX_STRIDE} steps per block mean; got {stride}."
                )
            strides = np.full(len(thetas), stride)
        fed_cumsum = cumsum_windows(thetas)
        # input j * n_read + k is transform j of channel k; only the channels read feed
        plain = [j for j, name in enumerate(transforms) if name != "cumsum"]
        plain_inputs = tuple(j * n_read + int(k) for j in plain for k in read)
        cumsum_inputs = tuple(len(plain) * n_read + int(k) for k in read)
        windows = []
        for theta, d, stride, cumsum in zip(thetas, orders, strides, fed_cumsum, strict=True):
            inputs = plain_inputs
            if "cumsum" in transforms and cumsum:
                inputs += cumsum_inputs
            if not inputs:  # only the cumulative sum, and this window is not fed it
                continue
            warn_if_euler_unstable(int(d), theta / stride, self.discretizer)
            windows.append(WindowSpec(int(d), float(theta / stride), int(stride), inputs))
        spec = PooledSpec(tuple(windows), transforms, pools, n_biases, self.discretizer)
        check_system_fits(max((w.order for w in spec.windows), default=1), budget)
        self._check_memory(spec, budget)
        _check_state_range(U, orders, transforms, pools, mixing, budget)
        self.thetas_ = np.asarray([w.theta * w.stride for w in spec.windows])
        self.orders_ = np.asarray([w.order for w in spec.windows], dtype=np.int64)
        self.strides_ = np.asarray([w.stride for w in spec.windows], dtype=np.int64)
        self.spec_ = spec
        self.n_features_in_ = n_steps
        self.n_channels_ = n_channels
        self.channels_ = kept
        self.mixing_ = mixing
        self.channel_scores_ = scores
        self.biases_, self.scales_ = self._fit_biases(U, budget, mixing)
        self.n_features_out_ = spec.n_features
        return self

    def _mixing(self, kept: np.ndarray, n_channels: int, budget: int | None = None):
        """``channel_sums``' matrix of the channels read, or ``None``; with a ``budget``
        (fitting), the matrix's memory is checked against it first (1 000 channels' pairs
        made a 4 GB matrix before any check)."""
        if isinstance(self.channel_sums, str) and self.channel_sums == "auto":
            wanted = 2 <= len(kept) == n_channels <= _MAX_SUMMED_CHANNELS
        elif isinstance(self.channel_sums, (bool, np.bool_)):
            wanted = bool(self.channel_sums) and len(kept) >= 2
        else:
            raise ValueError(
                f"channel_sums must be 'auto', True or False; got {self.channel_sums!r}."
            )
        if not wanted:
            return None
        if budget is not None:
            n_read = len(kept) * (len(kept) + 1) // 2
            check_fits(
                8.0 * n_channels * n_read,
                f"The matrix of the sums of every pair of {len(kept)} channels ({n_read} "
                "channels read)",
                "Use channel_sums=False, or keep fewer channels (channels=k).",
                budget,
            )
        return channel_sums(kept, n_channels)

    def _screening_cap(self, n_channels: int, has_target: bool) -> int | None:
        """How many of ``n_channels`` a screening keeps at most, or ``None`` when every
        channel is kept unscreened (``channels``' rule)."""
        if isinstance(self.channels, str) and self.channels in ("auto", "all"):
            if self.channels == "all" or n_channels <= MAX_CHANNELS or not has_target:
                return None
            return MAX_CHANNELS
        most = check_count(self.channels, "channels (or 'auto' or 'all')", 1)
        if not has_target and n_channels <= most:  # at most k, and nothing to screen on
            return None
        if not has_target:
            raise ValueError(
                f"channels={most} keeps the {most} of {n_channels} channels that best "
                "separate the target: pass y to fit, or use channels='all'."
            )
        return min(most, n_channels)  # screened however large k is: at most k are kept

    def _fit_targets(self, y, n_samples: int):
        """``y`` (screening many channels) checked against the ``n_samples`` sequences
        before the ones of weight 0 are left out (a dask ``y`` by its shape alone)."""
        # (a dask y by its shape, unless its length is unknown: NaN)
        if y is not None and not np.isnan(np.sum(getattr(y, "shape", ()), dtype=float)):
            _check_targets_per_sequence(y, n_samples)
        return y

    def _choose_channels(self, U, y, n_steps: int, n_channels: int, continuous: bool | None):
        """The channels that feed the windows, and the screening scores (or ``None``);
        ``continuous``: what ``y`` holds (see :func:`_continuous`)."""
        most = self._screening_cap(n_channels, y is not None)
        if most is None:
            return np.arange(n_channels), None
        y = _screening_array(y, len(U), continuous)
        # at most SCREEN_SAMPLES evenly spaced rows, fewer where half of max_memory would not
        # hold them (and their float64 copy and features), as a dask array's; their targets
        # must tell the channels apart
        itemsize = (U[0] if isinstance(U, list) else U).dtype.itemsize
        n_rows = self._screening_rows(len(U), n_steps, n_channels, itemsize)
        rows = ""
        if n_rows < len(U):
            take = _dask.evenly_spaced(len(U), n_rows)
            U = [U[i] for i in take] if isinstance(U, list) else U[take]
            y = y[take]
            rows = f" on the {len(take)} evenly spaced rows screened"
        reason = unscreenable(y, continuous)
        if reason is not None:
            warnings.warn(
                f"{type(self).__name__}: y {reason}{rows}, so it cannot tell the "
                f"{n_channels} channels apart; the first {most} are kept. Pass "
                "channels='all', or a target that varies.",
                UserWarning,
                stacklevel=4,
            )
            return np.arange(most), None
        screen = LMUPooledFeatures(
            thetas=_screening_thetas(n_steps),
            **_SCREEN_PARAMS,
            discretizer=self.discretizer,
            dtype="float64",
            max_memory=self.max_memory,
            device="cpu",
            channels="all",
            channel_sums=False,
            channels_first=False,
        )
        screen._screening = True  # (the offsets of the channels read are warned of after)
        log = StepLog(f"{type(self).__name__}: ", verbosity(self.verbose))
        with log.step(f"screening {n_channels} channels against y"):
            F = screen.fit_transform(U)
        channel_of = [int(_INPUT_NAME.match(name)[1]) for name in screen.get_feature_names_out()]
        scores, threshold = channel_scores(F, np.asarray(channel_of), n_channels, y, continuous)
        kept = choose_channels(scores, threshold, most)
        logger.info(
            "%s: %d of %d channel(s) kept by screening (%d significant)",
            type(self).__name__,
            len(kept),
            n_channels,
            int(np.sum(scores > threshold)),
        )
        return kept, scores

    def _input_dtype(self, dtype):
        # the input at its own precision (float32 as float32, anything else as float64),
        # whatever the features' dtype: the states run in float64, and the difference and
        # the cumulative sum of a series on an offset (1e8 + values of spread 1) keep the
        # variation a cast to float32 first rounded away (a classifier at chance)
        return None

    def _instability(self) -> str | None:
        """Why the fitted windows' states grow without bound (the first window that
        ``discretizer='euler'`` makes unstable, and the fix), or ``None``."""
        for window in self.spec_.windows:
            reason = euler_instability(window.order, window.theta, self.discretizer)
            if reason is not None:
                return reason
        return None

    def _check_memory(self, spec: PooledSpec, budget: int) -> None:
        """Refuse, before allocating, thresholds and features that exceed ``max_memory``."""
        n_thresholds = sum(len(w.inputs) * w.order for w in spec.windows) * spec.n_biases
        features = spec.n_features * 8
        # the thresholds while they are fitted, and one sample's float64 pools and features
        need = n_thresholds * 8 * _THRESHOLD_COPIES + 4 * features
        check_fits(
            need,
            f"{type(self).__name__} with n_biases={spec.n_biases} ({len(spec.windows)} "
            f"window(s), {n_thresholds} thresholds, and {format_bytes(features)} of "
            "features per sequence)",
            "Use fewer thresholds (n_biases of 4 to 16 is usual), fewer windows or a "
            "smaller order, or raise max_memory.",
            budget,
        )

    def _fit_biases(self, U, budget: int, mixing=None) -> tuple[list, list]:
        """Quantiles and standard deviations over time of the states of a few evenly
        spaced training sequences (their channels combined by ``mixing`` where given).

        The states come window of steps by window of steps from the engine, which keeps
        only the evenly spaced ones: the working memory stays within ``max_memory``
        however long the sequences.
        """
        U = to_numpy(U) if not isinstance(U, list) else U
        n_samples = len(U)
        spec = self.spec_
        per_sample = (
            8 * (self.n_features_in_ + 1) * max(len(w.inputs) * w.order for w in spec.windows)
        )
        n_take = max(1, min(n_samples, int(self.bias_samples), _BIAS_STATE_BYTES // per_sample))
        take = np.unique(np.linspace(0, n_samples - 1, n_take).round().astype(int))
        taken = [U[i] for i in take]  # views of the taken sequences, not a copy
        levels = np.arange(1, spec.n_biases + 1) / (spec.n_biases + 1)
        biases, scales = [], []
        states = engine.sampled_states(taken, spec, _BIAS_MAX_STEPS, budget=budget, mixing=mixing)
        _refuse_unresolved_states(states, self._instability)
        for window, steps in zip(spec.windows, states, strict=True):
            # steps: (n_kept, n_inputs * order)
            shape = (len(window.inputs), window.order)
            by_state = np.ascontiguousarray(steps.T)  # partitioned along contiguous rows
            spread = by_state.std(axis=1)
            quantiles = _thresholds(by_state, levels, spread)
            quantiles = quantiles.T.reshape(*shape, -1)
            # ascending, as the kernels need
            biases.append(np.maximum.accumulate(quantiles, axis=-1).astype(np.float32))
            spread = spread.reshape(shape)
            scales.append(1.0 / np.where(spread > 0, spread, 1.0))
        return biases, scales

    # ------------------------------------------------------------------ transform
    def transform(self, X) -> Result:
        """Pooled multi-scale Delay Network features of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps[, n_channels]) or list of sequences
            Any lengths; the channels must match those seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, ``n_features_out_``)
        """
        return super().transform(X)

    def _features(
        self,
        U,
        return_gpu_arrays: bool,
        dtype=None,
        progress: bool = False,
        streamed: bool = False,
        reduce=None,
    ):
        """The features of the validated ``U``, in ``dtype`` where given (the estimators ask
        for float64, which their ridge head computes in: the compiled kernel then writes
        its float64 pools straight into the features). ``streamed``: only the columns
        :meth:`streamed_columns` (computed alone). ``reduce``: its rows of the features,
        applied chunk by chunk as they are computed (:func:`engine.pooled_features
        <lmu_sk.engine.run.pooled_features>`), each chunk checked to be finite first."""
        spec, biases, scales = self.spec_, self.biases_, self.scales_
        if streamed:
            spec, biases, scales = streamed_window_arrays(spec, self._n_read, biases, scales)
            if not spec.windows:  # every window reads 'cumsum' alone
                xp = get_array_module(self.device)
                none = xp.zeros((len(U), 0), dtype=dtype or np.float64)
                return none if reduce is None else reduce(none)
        mixing = getattr(self, "mixing_", None)  # None too in models saved before it
        transforms, pools = tuple(self.spec_.transforms), tuple(self.spec_.pools)
        budget = resolve_budget(self.max_memory)
        _check_state_range(U, self.orders_, transforms, pools, mixing, budget)
        if dtype is None:
            dtype = check_dtype_param(self.dtype) or (
                U[0].dtype if isinstance(U, list) else U.dtype
            )
        xp = get_array_module(self.device)
        U = for_module(U, xp)
        bar = ProgressBar(
            len(U), enabled=progress, unit="sequences", label=f"{type(self).__name__}: "
        )
        checked = None
        if reduce is not None:

            def checked(F):
                check_finite_result(F, U, self._instability)
                return reduce(F)

        with bar:
            out = engine.pooled_features(
                U,
                spec,
                biases,
                scales,
                dtype=dtype,
                xp=xp,
                budget=budget,
                progress=bar.advance,
                return_device=return_gpu_arrays,
                reduce=checked,
                mixing=mixing,
            )
        if reduce is None:
            check_finite_result(out, U, self._instability)
        return out

    def _reduced_features(self, U, return_gpu_arrays: bool, dtype, progress: bool, reduce):
        return self._features(U, return_gpu_arrays, dtype, progress, reduce=reduce)

    @property
    def _n_read(self) -> int:
        """The channels the windows read: the input's, or their combinations (mixing_)."""
        mixing = getattr(self, "mixing_", None)
        return int(self.n_channels_) if mixing is None else int(mixing.shape[1])

    def streamed_columns(self) -> np.ndarray:
        """The columns of the features a :meth:`stream` carries step by step, ascending:
        all but those of the windows' 'cumsum' inputs, which the stream recomputes from
        the first step whenever it reports them (the centring and scaling of 'cumsum'
        use the whole sequence). :class:`~lmu_sk.LMUEarlyClassifier` decides from these
        before the training length."""
        check_is_fitted(self)
        return self.spec_.streamed_columns(self._n_read)

    def stream(self, n_streams: int = 1) -> PooledStream:
        """A :class:`~lmu_sk.streaming.PooledStream` of ``n_streams`` sequences, advanced one
        step or one chunk at a time; after ``t`` steps its ``transform()`` equals
        :meth:`transform` of the first ``t`` steps."""
        return PooledStream(self, n_streams)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names ``'w{w}_{input}_m{i}_{pool}'``: window, input (``x{k}`` channel ``k``,
        ``d{k}`` its difference, ``s{k}`` its cumulative sum; ``x{i}+{j}`` the sum of
        channels ``i`` and ``j``), state and pool (``ppv{j}``, ``mpv{j}``, ``lspv{j}`` at
        threshold ``j``; ``mean``, ``max``, ``min``; ``top`` and ``bottom`` for
        'compete')."""
        check_is_fitted(self)
        self._check_input_features(input_features)
        spec = self.spec_
        mixing = getattr(self, "mixing_", None)
        if mixing is None:
            read = [str(k) for k in range(self.n_channels_)]
        else:
            read = ["+".join(str(k) for k in np.flatnonzero(column)) for column in mixing.T]
        inputs = [f"{_SHORT_NAMES[t]}{k}" for t in spec.transforms for k in read]
        per_state = [
            f"{name}{j}"
            for name in THRESHOLD_POOLS
            if name in spec.pools
            for j in range(spec.n_biases)
        ] + [name for name in MOMENT_POOLS if name in spec.pools]
        names = []
        for w, window in enumerate(spec.windows):
            fed = [inputs[j] for j in window.inputs]
            d = window.order
            names += [f"w{w}_{x}_m{i}_{p}" for x in fed for i in range(d) for p in per_state]
            if "compete" in spec.pools:
                names += [
                    f"w{w}_{x}_m{i}_{p}" for x in fed for p in ("top", "bottom") for i in range(d)
                ]
        return np.asarray(names, dtype=object)
