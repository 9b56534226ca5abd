"""Streaming inference: a fitted model run as a recurrent network, one step or chunk at a time.

A stream holds the Delay Network (DN) state of ``n_streams`` independent sequences and
whatever its features need besides: the running sum of the states for 'mean', their running
maximum for 'max', the pools of :class:`~lmu_sk.pooled.LMUPooledFeatures`. After every
update it answers what its estimator answers for the sequences seen so far (their
*prefix*): a stream of a classifier is an early classifier.

The engine's step mode (:mod:`lmu_sk.engine.stream`) advances what a stream carries, by a
step or a chunk of steps, with the batch transform's maps, constants and kernels; what is
the stream's own is its state, the checks of its input and results (a failed update
leaves it unchanged), its checkpoints, its device and its pickling, and the model's head.

The DN state of :class:`DNStream` is kept in the features' dtype, as in the batch
transform, except for 'mean': its state and running sum are float64, since the mean of a
float32 state over many steps keeps the state's rounding (about 2e-5 of the mean's scale
after a million steps of centred input) while the mean itself can be far smaller than the
states. The pooled features keep their states and pools in float64 and compare the
states with the thresholds as their batch transform does on the same device (on the CPU
rounded to float32, elsewhere in the features' dtype); the windows fed by the 'cumsum'
input, which needs the whole sequence, are computed again from their first block at every
``transform()`` (see :class:`PooledStream`). Every array operation goes through the array
module ``xp`` of the state (NumPy, or CuPy with the same code).

A stream may be shared by threads: its public methods hold the stream's re-entrant lock,
so calls on one stream run one at a time, each on the whole state.
"""

from __future__ import annotations

import copy
import functools
import numbers
import threading
from types import ModuleType
from typing import Any

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._decisions import Decisions
from ._device import array_module_of, get_array_module, portable_device, to_numpy
from ._input import WIDER_DTYPE, check_dtype_param, is_device_array, object_as_float
from ._memory import check_fits
from .engine.pooling import FLOAT32_MAX, PooledSpec, checked_window_arrays, state_gain
from .engine.stream import CARRIED_SUMS, CarriedDN, CarriedPooledFeatures
from .neural.activations import log_probabilities, logistic_probabilities
from .neural.network import forward_rows

__all__ = [
    "STREAM_OUTPUTS",
    "ClassifierStream",
    "DNStream",
    "EarlyClassifierStream",
    "PooledStream",
    "RegressorStream",
]

#: Outputs of :class:`~lmu_sk.features.LMUFeatures` a stream can carry; a new output needs
#: its running state here.
STREAM_OUTPUTS = ("final", "sequence", "mean", "max")

Array = Any


# ---------------------------------------------------------------------------- helpers
def _filled(xp: ModuleType, shape: tuple, value: float, dtype) -> Array:
    a = xp.empty(shape, dtype)
    a[...] = value
    return a


class _InstanceLock:
    """A re-entrant lock of each stream, made on first use and never pickled.

    A stream's methods read and write its state in several steps; two threads calling them
    at once would interleave those steps and corrupt it. The methods decorated with
    :func:`_exclusive` hold this lock, so calls on one stream run one at a time.
    """

    _making = threading.Lock()

    def __get__(self, stream, owner=None):
        if stream is None:
            return self
        lock = stream.__dict__.get("_lock")
        if lock is None:
            with self._making:
                lock = stream.__dict__.setdefault("_lock", threading.RLock())
        return lock


def _exclusive(method):
    """Run ``method`` holding the stream's lock (see :class:`_InstanceLock`)."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def _check_n_streams(n_streams) -> int:
    if isinstance(n_streams, bool) or not isinstance(n_streams, numbers.Integral):
        raise TypeError(f"n_streams must be a positive integer; got {n_streams!r}.")
    if n_streams < 1:
        raise ValueError(f"n_streams must be a positive integer; got {n_streams}.")
    return int(n_streams)


# ---------------------------------------------------------------------------- shared machinery
class _FeatureStream:
    """Input checks, checkpoints, device moves and pickling shared by the feature streams.

    A subclass sets ``n_streams``, ``n_channels``, ``dtype``, ``device``,
    ``channels_first`` and ``return_device_arrays`` and implements :meth:`_setup` (constant
    arrays on ``xp``), :meth:`_allocate` (the state, zero), :meth:`_state_spec`,
    :meth:`_advance` and :meth:`_feature_rows`.
    """

    #: How the advice for input beyond the dtype's range ends (``_input.WIDER_DTYPE``).
    _wider_dtype = WIDER_DTYPE

    #: attributes that live on the device; rebuilt by _setup and _allocate, not pickled
    _device_attributes: tuple[str, ...] = ()
    _lock = _InstanceLock()

    # ------------------------------------------------------------------ subclass interface
    def _setup(self, xp: ModuleType) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _allocate(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _state_spec(self) -> dict:  # pragma: no cover - abstract
        """``{name: (shape, getter, setter, allowed_infinity)}`` of the state arrays; a
        shape may be a function of the steps seen."""
        raise NotImplementedError

    def _advance(self, U: Array, original: Array) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _feature_rows(
        self, float64: bool = False, out: Array = None
    ) -> Array:  # pragma: no cover - abstract
        """Features of the prefixes seen, ``(n_streams, n_features)`` in ``dtype`` on the
        stream's device (possibly a view of the state: do not modify); with ``float64``,
        in float64 where the stream computes them so (no cast to ``dtype``). ``out``, a
        C-contiguous float64 buffer of that shape the caller reuses, takes them where the
        stream computes them in float64 (rows written fresh: no new allocation)."""
        raise NotImplementedError

    def _keep_rows(self, rows: np.ndarray) -> None:
        """Keep what the sequences ``rows`` (ascending indices) carry and drop the others:
        the stream goes on with ``len(rows)`` sequences (the early classifier's stream drops
        the cases it has decided)."""
        index = self._xp.asarray(np.asarray(rows, dtype=np.intp))
        kept = {name: get()[index] for name, (_, get, _, _) in self._state_spec().items()}
        self.n_streams = len(rows)
        self._allocate()
        for name, (_, _, put, _) in self._state_spec().items():
            put(kept[name])

    def _snapshot(self, features, n_streams: int, return_device_arrays: bool | None) -> None:
        """The settings every feature stream takes from its fitted transformer."""
        check_is_fitted(features)
        self.n_streams = _check_n_streams(n_streams)
        self.n_channels = int(features.n_channels_)
        self.channels_first = bool(getattr(features, "channels_first", False))
        self.dtype = np.dtype(check_dtype_param(features.dtype) or np.float64)
        self.device = features.device
        if return_device_arrays is None:
            return_device_arrays = bool(features.return_gpu_arrays)
        self.return_device_arrays = return_device_arrays

    @property
    def _step_shape(self) -> tuple:
        """Shape of one step of input: ``(n_streams,)`` for one channel, else
        ``(n_streams, n_channels)``."""
        n, c = self.n_streams, self.n_channels
        return (n,) if c == 1 else (n, c)

    # ------------------------------------------------------------------ public state
    @property
    def steps_seen(self) -> int:
        """Steps seen since creation or the last :meth:`reset`."""
        return self._steps_seen

    @_exclusive
    def reset(self):
        """Forget everything seen: zero state, zero steps."""
        self._allocate()
        self._steps_seen = 0
        return self

    @property
    @_exclusive
    def state(self) -> dict:
        """A copy of everything the stream carries, for checkpoints; assign such a dict to
        restore it. Arrays live where the stream computes."""
        state = {name: get().copy() for name, (_, get, _, _) in self._state_spec().items()}
        state["steps_seen"] = self._steps_seen
        return state

    @state.setter
    @_exclusive
    def state(self, value: dict) -> None:
        spec = self._state_spec()
        if isinstance(value, dict):
            value = self._upgraded_state(value)
        expected = set(spec) | {"steps_seen"}
        if not isinstance(value, dict) or set(value) != expected:
            got = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ValueError(
                f"state must be a dict with the keys {sorted(expected)} (as read from "
                f"stream.state); got {got}."
            )
        steps = value["steps_seen"]
        if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
            raise ValueError(f"state['steps_seen'] must be an integer >= 0; got {steps!r}.")
        checked = {
            name: self._checked_array(
                value[name],
                name,
                shape(int(steps)) if callable(shape) else shape,  # may grow with the steps
                allowed(int(steps)),
            )
            for name, (shape, _, _, allowed) in spec.items()
        }
        self._check_state(checked, int(steps))
        # everything checked: now assign
        for name, (_, _, put, _) in spec.items():
            put(checked[name])
        self._steps_seen = int(steps)

    def _check_state(self, arrays: dict, steps: int) -> None:
        """Further checks of a state being restored (all arrays already on ``xp``)."""

    def _upgraded_state(self, value: dict) -> dict:
        """A state saved by an earlier version in today's layout (``value`` itself where
        it is one)."""
        return value

    def _checked_array(self, a, name: str, shape: tuple, allowed) -> Array:
        """``a`` on ``xp`` in the state's dtype; ``allowed`` is None or an array of the
        values of +-inf that entry by entry may stand in place of a finite value."""
        a = a if is_device_array(a) or isinstance(a, np.ndarray) else np.asarray(a)
        if a.dtype.kind not in "biuf":
            raise TypeError(f"state[{name!r}] must hold real numbers; got dtype {a.dtype}.")
        if a.shape != shape:
            raise ValueError(
                f"state[{name!r}] must have shape {shape} for this stream ({self!r}); got "
                f"{a.shape}."
            )
        xp = self._xp
        if xp is np and is_device_array(a):  # a GPU stream's state restored on the CPU
            a = to_numpy(a)
        a = xp.asarray(a, dtype=self._state_dtype(name))
        ok = xp.isfinite(a)
        if allowed is not None:
            ok |= a == xp.asarray(allowed, dtype=a.dtype)
        if not bool(ok.all()):
            raise ValueError(f"state[{name!r}] contains NaN or infinity.")
        return a

    def _state_dtype(self, name: str) -> np.dtype:
        return self.dtype

    # ------------------------------------------------------------------ update
    @_exclusive
    def update(self, U):
        """Advance every sequence by one step or by a chunk of steps.

        Parameters
        ----------
        U : array-like
            One step: ``(n_streams,)`` for one channel or ``(n_streams, n_channels)``.
            A chunk of ``n_steps``: ``(n_streams, n_steps)`` for one channel or
            ``(n_streams, n_steps, n_channels)`` (``(n_streams, n_channels, n_steps)`` for
            an estimator with ``channels_first=True``). A NumPy or CuPy array (CuPy input
            moves a CPU stream to the GPU).

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            For a wrong shape, non-numeric data, NaN or infinity, or values or features
            that would overflow the dtype; the stream is then left as it was.
        """
        if (
            type(U) is np.ndarray
            and U.shape == self._step_shape
            and self._xp is np
            and U.dtype.kind != "O"
        ):
            # the common case first: one step of a NumPy stream
            if U.dtype.kind not in "biuf":
                raise TypeError(f"U must hold real numbers; got an array of dtype {U.dtype}.")
            self._advance(U.reshape(self.n_streams, 1, self.n_channels), U)
            return self
        U = self._as_chunk(U)
        if U.shape[1]:
            self._advance(U, U)
        return self

    def _as_chunk(self, U, n_streams: int | None = None) -> Array:
        """``U`` (one step or a chunk for ``n_streams`` streams, by default this stream's
        number) as a chunk ``(n_streams, n_steps, n_channels)`` in this stream's array
        module, a view where it can be; CuPy input moves a CPU stream to the GPU."""
        if is_device_array(U) and self._xp is np:
            self._move_to(get_array_module("gpu"))
        xp = self._xp
        if not isinstance(U, xp.ndarray):
            try:
                U = np.asarray(U)
            except ValueError:  # rows of different lengths or shapes
                raise self._shape_error("ragged", n_streams) from None
        if U.dtype.kind == "O":  # numbers as objects (NumPy's), read as the batch reads them
            U = object_as_float(U, "U")
        U = xp.asarray(U)
        if U.dtype.kind not in "biuf":
            raise TypeError(f"U must hold real numbers; got an array of dtype {U.dtype}.")
        n, c = n_streams or self.n_streams, self.n_channels
        shape = U.shape
        if U.ndim == 3:
            if self.channels_first:
                U = U.swapaxes(1, 2)
            if U.shape[0] != n or U.shape[2] != c:
                raise self._shape_error(shape, n)
        elif U.ndim == 2 and c == 1:
            if shape[0] != n:
                raise self._shape_error(shape, n)
            U = U[:, :, None]
        elif (U.ndim == 1 and c == 1 and shape[0] == n) or (U.ndim == 2 and shape == (n, c)):
            U = U.reshape(n, 1, c)
        elif U.ndim == 0 and n * c == 1:
            U = U.reshape(1, 1, 1)
        else:
            raise self._shape_error(shape, n)
        return U

    def _shape_error(self, shape: tuple | str, n_streams: int | None = None) -> ValueError:
        """The error for input of ``shape`` (``'ragged'``: rows of different shapes) to a
        stream of ``n_streams``, by default this one's."""
        n, c = n_streams or self.n_streams, self.n_channels
        if c == 1:
            forms = f"({n},) for one step or ({n}, n_steps) for a chunk"
        elif self.channels_first:
            forms = f"({n}, {c}) for one step or ({n}, {c}, n_steps) for a chunk"
        else:
            forms = f"({n}, {c}) for one step or ({n}, n_steps, {c}) for a chunk"
        described = (
            "U, a list of rows of different shapes,"
            if shape == "ragged"
            else f"U of shape {shape}"
        )
        return ValueError(
            f"{described} does not fit this stream of {n} sequence(s) with {c} "
            f"channel(s); pass {forms} (every sequence takes the same steps in one "
            "update)."
        )

    def _cast(self, U: Array, dtype) -> Array:
        """``U`` as ``dtype``: finite values beyond its range raise instead of becoming
        infinity (as the cast alone would make them)."""
        if U.dtype == dtype:
            return U
        if self._xp is np:
            try:
                with np.errstate(over="raise"):
                    return U.astype(dtype)
            except FloatingPointError:
                raise self._non_finite_error(U) from None
        cast = U.astype(dtype)
        if not bool(self._xp.isfinite(cast).all()):
            raise self._non_finite_error(U)
        return cast

    def _check_range(self, U: Array, original: Array) -> None:
        """Raise for NaN, infinity or finite values of ``U`` beyond the features' dtype (the
        batch transform refuses them), where the stream computes in a wider dtype."""
        xp = self._xp
        if not bool(xp.isfinite(U).all()) or (
            U.size and float(xp.abs(U).max()) > float(np.finfo(self.dtype).max)
        ):
            raise self._non_finite_error(original)

    def _non_finite_error(self, U: Array) -> ValueError:
        """The error for input ``U`` (as given, before any cast) whose results are not
        finite: NaN or infinity in ``U``, or finite values beyond the dtype's range."""
        xp = self._xp
        if not bool(xp.isfinite(U).all()):
            return ValueError(
                "U contains NaN or infinity; the stream was left unchanged. Impute or drop "
                "missing values before updating."
            )
        dtype = self.dtype
        largest = float(xp.abs(U).max()) if U.size else 0.0
        # (no wider dtype to advise where the stream is float64 already)
        wider = f", {self._wider_dtype}" if dtype.itemsize < 8 else ""
        if U.dtype.kind == "f" and largest > float(np.finfo(dtype).max):
            return ValueError(
                f"U holds finite values (up to {largest:.3g} in magnitude) beyond the largest "
                f"{dtype.name} ({np.finfo(dtype).max:.3g}): the stream would overflow "
                f"{dtype.name}; the stream was left unchanged. Scale the input down"
                f"{wider}."
            )
        return ValueError(
            f"The Delay Network state would overflow {dtype.name} for this input; the "
            f"stream was left unchanged. Scale the input down{wider}."
        )

    # ------------------------------------------------------------------ features
    def _check_seen(self) -> None:
        if self._steps_seen == 0:
            raise ValueError(
                "The stream has seen no step yet; call update() with at least one step first."
            )

    @_exclusive
    def transform(self) -> Array:
        """Features of the prefixes seen so far, shape ``(n_streams, n_features)``.

        Equal to the transformer's ``transform`` of the prefixes (for
        ``output='sequence'`` its last step). A NumPy array, or a CuPy array when computed
        on the GPU and the transformer has ``return_gpu_arrays=True``.
        """
        F = self._feature_rows().copy()
        return F if self.return_device_arrays else to_numpy(F)

    # ------------------------------------------------------------------ device, pickling
    def _move_to(self, xp: ModuleType) -> None:
        state = self.state
        self._setup(xp)
        self._allocate()
        self.state = state

    def __getstate__(self) -> dict:
        # under the lock, and a copy (``state``'s): another thread's update neither
        # interleaves with the reading nor changes the arrays while pickle writes them
        with self._lock:
            keep = {
                key: value
                for key, value in self.__dict__.items()
                if key not in ("_xp", "_lock") and key not in self._device_attributes
            }
            keep["_saved_state"] = {
                key: value if key == "steps_seen" else to_numpy(value)
                for key, value in self.state.items()
            }
            return keep

    def __setstate__(self, saved: dict) -> None:
        state = saved.pop("_saved_state")
        self.__dict__.update(saved)
        # like fitted models, a stream pickled on a GPU machine loads on one without
        self._setup(get_array_module(portable_device(self.device)))
        self._allocate()
        self.state = state


# ---------------------------------------------------------------------------- the DN stream
class DNStream(_FeatureStream):
    """Delay Network features of ``n_streams`` sequences, advanced step by step.

    Made by :meth:`LMUFeatures.stream <lmu_sk.features.LMUFeatures.stream>`; it snapshots
    the fitted transformer, so refitting that does not change the stream.

    Parameters
    ----------
    features : LMUFeatures
        A fitted transformer. Its fitted window ``theta_`` is used (with ``theta=None``
        the length of the training sequences), so the stream's features after ``t`` steps
        are those ``transform`` gives for the first ``t`` steps.
    n_streams : int, default=1
        Independent sequences advanced together.
    return_device_arrays : bool, default=None
        Return CuPy arrays from :meth:`transform` when computing on a GPU; ``None`` follows
        the transformer's ``return_gpu_arrays``.

    Attributes
    ----------
    n_streams, n_channels, order, output : int, int, int, str
    dtype : numpy.dtype
        Dtype of the state and the features: the transformer's ``dtype``, or float64 when
        that is None. Output 'mean' keeps its state and running sum in float64 (see the
        module notes) and casts its features to ``dtype``.
    steps_seen : int
        Steps since creation or the last :meth:`reset`.
    state : dict
        ``{'dn': (n_streams, n_channels, order), 'dn_rounding': (n_streams, n_channels,
        order), 'steps_seen': int}`` plus ``'mean'`` (the running sum of the states) or
        ``'max'`` (their running maximum) of shape ``(n_streams, n_channels * order)`` for
        those outputs. ``'dn_rounding'`` is what rounding added to the state, taken back
        at the next single step (Kahan's compensation, as the batch recurrence carries it:
        without it, a float32 stream of single steps of a window much longer than the
        order drifted ``4e-5`` of the scale from the batch over ``1e5`` steps); a state
        saved without it restores with zeros.

    Notes
    -----
    The DN state stays where the transformer computes: on the GPU (CuPy) when its
    ``device`` resolves to one, else on the CPU; the first CuPy input moves a CPU stream
    to the device. Pickling stores NumPy arrays, so a pickled stream loads anywhere.
    Threads may share a stream: its methods hold its lock, so calls run one at a time.
    """

    _device_attributes = ("_dn", "_state", "_running", "_rounding")

    def __init__(self, features, n_streams: int = 1, return_device_arrays: bool | None = None):
        self._snapshot(features, n_streams, return_device_arrays)
        if features.output not in STREAM_OUTPUTS:
            raise ValueError(
                f"Streaming supports the outputs {STREAM_OUTPUTS}; this model's features "
                f"use output {features.output!r}. Predict on whole sequences instead."
            )
        self.order = int(features.order_)
        self.theta = float(features.theta_)
        self.discretizer = features._fitted_discretizer
        self.output = features.output
        # the state of 'mean' is float64: its average over many steps has the scale of the
        # mean (near zero for centred input), far below the state's, and a float32 state's
        # rounding does not average out
        self._work = np.dtype(np.float64) if self.output == "mean" else self.dtype
        rows, d = self.n_streams * self.n_channels, self.order
        check_fits(
            (4 * rows * (d + 1) + 2 * d * d) * self._work.itemsize,
            f"A stream of {self.n_streams} sequences with {self.n_channels} channel(s) of "
            f"order {d}",
            "Use fewer streams per object (several streams can run side by side).",
        )
        self._setup(get_array_module(self.device))
        self.reset()

    # ------------------------------------------------------------------ device and state
    def _setup(self, xp: ModuleType) -> None:
        """The engine's Delay Network on ``xp`` (its constants come when needed)."""
        self._xp = xp
        self._dn = CarriedDN(self.order, self.theta, self.discretizer, self.output, self._work, xp)

    def _allocate(self) -> None:
        xp, rows, d = self._xp, self.n_streams * self.n_channels, self.order
        self._state = _filled(xp, (rows, d), 0.0, self._work)
        # what rounding added to the state, taken back at the next single step (Kahan)
        self._rounding = _filled(xp, (rows, d), 0.0, self._work)
        self._running = None  # the running sum ('mean') or maximum ('max') of the states
        if self.output == "mean":
            self._running = _filled(xp, (rows, d), 0.0, np.float64)
        elif self.output == "max":
            self._running = _filled(xp, (rows, d), -np.inf, self.dtype)

    def _state_dtype(self, name: str) -> np.dtype:
        return np.dtype(np.float64) if name == "mean" else self._work

    def _state_spec(self) -> dict:
        n, c, d = self.n_streams, self.n_channels, self.order

        def put_dn(a):
            self._state[...] = a.reshape(n * c, d)

        def put_running(a):
            self._running[...] = a.reshape(n * c, d)

        def put_rounding(a):
            self._rounding[...] = a.reshape(n * c, d)

        spec = {
            "dn": ((n, c, d), lambda: self._state.reshape(n, c, d), put_dn, _finite),
            "dn_rounding": (
                (n, c, d),
                lambda: self._rounding.reshape(n, c, d),
                put_rounding,
                _finite,
            ),
        }
        if self._running is not None:
            # the running maximum starts at -inf: allowed before the first step
            allowed = _minus_inf_before_first_step if self.output == "max" else _finite
            spec[self.output] = (
                (n, c * d),
                lambda: self._running.reshape(n, c * d),
                put_running,
                allowed,
            )
        return spec

    def _upgraded_state(self, value: dict) -> dict:
        if "dn" not in value or "dn_rounding" in value:
            return value
        # (saved before the rounding was carried: none taken back)
        return {**value, "dn_rounding": np.zeros(np.shape(value["dn"]))}

    # ------------------------------------------------------------------ update
    def _advance(self, U: Array, original: Array) -> None:
        n, k, c = U.shape
        if self._work != self.dtype:
            self._check_range(U, original)
        rows = U.reshape(n, k) if c == 1 else U.transpose(0, 2, 1).reshape(n * c, k)
        rows = self._cast(rows, self._work)
        # non-finite results raise below, naming their cause
        with np.errstate(over="ignore", invalid="ignore"):
            state, running, rounding = self._dn.advance(
                rows, self._state, self._running, self._rounding
            )
        if not bool(self._xp.isfinite(state).all() & self._xp.isfinite(rounding).all()):
            raise self._non_finite_error(original)
        if self.output == "mean":
            self._check_mean(running, self._steps_seen + k, original)
        self._state, self._running, self._rounding = state, running, rounding
        self._steps_seen += k

    def _check_mean(self, total: Array, steps: int, original: Array) -> None:
        """Raise unless the running sum ``total`` of ``steps`` states gives finite means
        within the features' dtype."""
        xp = self._xp
        if not bool(xp.isfinite(total).all()) or (
            self._work != self.dtype
            and float(xp.abs(total).max()) / steps > float(np.finfo(self.dtype).max)
        ):
            raise self._non_finite_error(original)

    # ------------------------------------------------------------------ features
    def _feature_rows(self, float64: bool = False, out: Array = None) -> Array:
        self._check_seen()
        n = self.n_streams
        if self.output == "mean":
            return (self._running / self._steps_seen).astype(self.dtype).reshape(n, -1)
        if self.output == "max":
            return self._running.reshape(n, -1)
        return self._state if self.n_channels == 1 else self._state.reshape(n, -1)

    def transform(self) -> Array:
        """Features of the prefixes seen so far, shape ``(n_streams, n_channels * order)``.

        Equal to ``LMUFeatures.transform`` of the prefixes; for ``output='sequence'`` its
        last step. A NumPy array, or a CuPy array when computed on the GPU and the
        transformer has ``return_gpu_arrays=True``.
        """
        return super().transform()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_streams={self.n_streams}, n_channels={self.n_channels}, "
            f"order={self.order}, output={self.output!r}, steps_seen={self._steps_seen})"
        )


def _finite(steps: int) -> None:
    """Entries must be finite."""
    return None


def _minus_inf_before_first_step(steps: int):
    """A running maximum may be -inf (its start) before the first step."""
    return -np.inf if steps == 0 else None


# ---------------------------------------------------------------------------- pooled stream
# Inputs and carried states of at most this magnitude cannot make a pool overflow: the
# states that follow are within a few dozen times it (the impulse response and the powers
# of Abar sum to at most ~25 in absolute value up to order 1024), so the float32 sums of
# FLUSH_STEPS of them stay far below float32's 3.4e38 and the float64 pools below 1e308.
MODERATE = 1e30
#: What a stream raises for features that are not finite.
NON_FINITE_FEATURES = "The pooled features of the prefixes seen are not finite; rescale the input."


# float64 copies of a chunk's size that a pooled stream's update holds at most
_CHUNK_COPIES = 10
# ... checked against the memory available where that is more than this
_CHUNK_UNCHECKED_BYTES = 64 * 1024**2


class PooledStream(_FeatureStream):
    """Pooled Delay Network features of ``n_streams`` sequences, online.

    Made by :meth:`LMUPooledFeatures.stream <lmu_sk.pooled.LMUPooledFeatures.stream>`; it
    snapshots the fitted transformer. After ``t`` steps :meth:`transform` equals
    ``LMUPooledFeatures.transform`` of the first ``t`` steps (and
    :func:`lmu_sk.reference.pooled`).

    Every window (:class:`~lmu_sk.engine.pooling.WindowSpec`: its own order, theta,
    stride and inputs) runs its Delay Network over the means of blocks of ``stride``
    steps of its inputs. The stream keeps per stride the sum of the steps of the block
    under way; :meth:`transform` evaluates that partial block, averaged over its own
    steps as the batch transform does, without committing it.

    Inputs of the transforms 'series' and 'difference' stream in constant memory and
    time per step: per window the state after the last whole block and, per state, the
    running pools: the counts of blocks above each threshold, the sums of the states above
    them, the current and the longest runs above them, the sum, maximum and minimum, and
    the counts of blocks on which the state wins or loses the competition. The
    'cumsum' input cannot: it subtracts the mean of the whole sequence and divides by
    the square root of its length, both known only at :meth:`transform`. For it the
    stream keeps the running sum of the steps and, per stride of the windows it feeds,
    the block means of that running sum (``t / stride`` numbers per channel after ``t``
    steps); :meth:`transform` rebuilds those windows' inputs from them and computes their
    pools from the first block: ``O(t / stride)`` work and memory per call for windows
    fed by 'cumsum', ``O(1)`` for the others.

    Parameters
    ----------
    features : LMUPooledFeatures
        A fitted transformer; its ``spec_``, ``biases_`` and ``scales_`` are used.
    n_streams : int, default=1
    return_device_arrays : bool, default=None
        As for :class:`DNStream`.

    Attributes
    ----------
    n_streams, n_channels, n_features : int
    spec : lmu_sk.engine.pooling.PooledSpec
    dtype : numpy.dtype
        Dtype of the features: the transformer's ``dtype``, or float64 when that is None.
        The states and the pools are float64.
    steps_seen : int
    state : dict
        ``'steps_seen'``; with 'difference' ``'last'`` ``(n_streams, n_channels)``, the
        latest step; with 'cumsum' ``'origin'`` (the first step) and ``'sum'`` (the sum of
        the steps less the first, every step), both ``(n_streams, n_channels)``; per
        stride ``s > 1`` ``'block_sum_s'`` ``(n_streams, n_transforms * n_channels)``, the
        sums of the block under way (of the running sum for 'cumsum'); per stride of
        windows fed by 'cumsum' ``'cumsum_s'`` ``(n_streams, steps_seen // s,
        n_channels)``, the block means of the running sum; per window ``w`` with
        streamed inputs ``k`` (those not 'cumsum', in the window's order) ``'dn_w'``
        ``(n_streams, k, order)``, ``'moments_w'`` ``(n_streams, k, order, 3)`` (sum,
        maximum, minimum), with threshold pools ``'thresholds_w'`` ``(n_streams, k, order,
        5, n_biases)`` (count, excess flushed from float32 every 1 024 blocks as the batch
        kernel flushes it, current run, longest run, float32 excess since the last flush;
        a state saved with the first four is taken, the fifth zero) and with 'compete'
        ``'compete_w'`` ``(n_streams, k, 2, order)`` (counts of wins, then of losses).

    Notes
    -----
    The states and pools are float64; as the batch transform's CPU kernel does, the
    stream compares every state rounded to float32 with the float32 thresholds, so a
    state within float32 rounding of a threshold counts as it counts there
    (:func:`lmu_sk.reference.pooled` compares in float64 and may count it on the other
    side). On a GPU, as the batch transform there, it compares them in the features'
    dtype.
    """

    # a wider dtype does not take input beyond float32's range (see LMUPooledFeatures)
    _wider_dtype = (
        "not dtype='float64': the pooled features compare their states with float32 "
        "thresholds whatever their dtype"
    )

    _device_attributes = ("_pooled", "_arrays", "_history", "_mixing", "_largest")

    def __init__(self, features, n_streams: int = 1, return_device_arrays: bool | None = None):
        self._snapshot(features, n_streams, return_device_arrays)
        spec = features.spec_
        self.spec = spec
        # the channels the windows read: the input's, or combinations of them (mixing_)
        mixing = getattr(features, "mixing_", None)
        self._mixing_host = None if mixing is None else np.array(mixing, dtype=np.float64)
        C = self._n_read
        self._biases_host, self._scales_host = checked_window_arrays(
            spec, C, features.biases_, features.scales_
        )
        self.n_features = int(features.n_features_out_)
        if self.n_features != spec.n_features:
            raise ValueError(
                f"The fitted n_features_out_ ({self.n_features}) does not match the fitted "
                f"spec_ ({spec.n_features} features); fit the transformer again."
            )
        K, n = spec.n_biases, self.n_streams
        per_stream = sum(
            len(w.inputs) * w.order * (8 * (4 + CARRIED_SUMS * K + 2 * 2) + 4 * (K + 1) * 30)
            for w in spec.windows
        ) + 8 * C * (3 + len(spec.transforms) * len(spec.strides))
        check_fits(
            n * per_stream,
            f"A pooled stream of {n} sequences with {self.n_features} features",
            "Use fewer streams per object (several streams can run side by side).",
        )
        self._setup(get_array_module(self.device))
        self.reset()

    # ------------------------------------------------------------------ device and state
    @property
    def _n_read(self) -> int:
        """The channels the windows read: the input's, or their combinations."""
        mixing = getattr(self, "_mixing_host", None)  # None in streams saved before it
        return self.n_channels if mixing is None else int(mixing.shape[1])

    def _setup(self, xp: ModuleType) -> None:
        self._xp = xp
        mixing = getattr(self, "_mixing_host", None)
        self._mixing = None if mixing is None else xp.asarray(mixing)
        self._pooled = CarriedPooledFeatures(
            self.spec, self._n_read, self._biases_host, self._scales_host, self.dtype, xp
        )

    def _allocate(self) -> None:
        xp, n, C = self._xp, self.n_streams, self._n_read
        self._arrays = self._pooled.empty(n)
        # every stream's largest magnitude of the windows' input so far (_check_state_range)
        self._largest = _filled(xp, (n,), 0.0, np.float64)
        self._history = {
            s: _filled(xp, (n, 16, C), 0.0, np.float64) for s in self._pooled.history_strides
        }

    def _state_dtype(self, name: str) -> np.dtype:
        return np.dtype(np.float64)

    def _state_spec(self) -> dict:
        n, C = self.n_streams, self._n_read

        def put(name):
            def assign(a):
                self._arrays[name][...] = a

            return assign

        def history(s):
            return lambda: self._history[s][:, : self._steps_seen // s]

        def put_history(s):
            def assign(a):
                self._history[s] = self._grown(self._history[s], a.shape[1])
                self._history[s][:, : a.shape[1]] = a

            return assign

        spec = {}
        for name, a in self._arrays.items():
            allowed = _finite
            if name.startswith("moments_"):
                stride = self.spec.windows[int(name.split("_")[1])].stride
                allowed = _extremes_before_first_block(stride)
            spec[name] = (a.shape, (lambda a=a: a), put(name), allowed)
        for s in self._pooled.history_strides:
            spec[f"cumsum_{s}"] = (
                lambda steps, s=s: (n, steps // s, C),
                history(s),
                put_history(s),
                _finite,
            )

        def put_largest(a):
            self._largest[...] = a

        spec["largest_seen"] = ((n,), lambda: self._largest, put_largest, _finite)
        return spec

    def _upgraded_state(self, value: dict) -> dict:
        """Threshold pools saved with four sums per threshold (before the float32 sum
        since the last flush was carried apart: it was in the float64 sum) get a fifth,
        zero."""
        upgraded = dict(value)
        if "largest_seen" not in value:  # (saved before it was carried: nothing bounded)
            upgraded["largest_seen"] = np.zeros(self.n_streams)
        for name, a in value.items():
            if not name.startswith("thresholds_"):
                continue
            if not (is_device_array(a) or isinstance(a, np.ndarray)):
                a = np.asarray(a)  # (nested lists: checked as arrays below)
            if a.ndim == 5 and a.shape[3] == CARRIED_SUMS - 1:
                xp = array_module_of(a)
                upgraded[name] = xp.concatenate([a, xp.zeros_like(a[..., :1, :])], axis=3)
        return upgraded

    def _check_state(self, arrays: dict, steps: int) -> None:
        xp = self._xp
        for w, window in enumerate(self.spec.windows):
            blocks = steps // window.stride
            for name, counts in (
                (f"thresholds_{w}", lambda a: a[..., [0, 2, 3], :]),
                (f"compete_{w}", lambda a: a),
            ):
                if name not in arrays:
                    continue
                c = counts(arrays[name])
                if not bool(((c >= 0) & (c <= blocks) & (c == xp.round(c))).all()):
                    raise ValueError(
                        f"state[{name!r}] must hold counts of blocks (of its counts and "
                        f"runs), whole numbers from 0 to {blocks} (steps_seen // stride)."
                    )

    def _grown(self, buffer: Array, blocks: int) -> Array:
        """``buffer`` with room for at least ``blocks`` blocks (doubling)."""
        if blocks <= buffer.shape[1]:
            return buffer
        n, capacity, C = buffer.shape
        while capacity < blocks:
            capacity *= 2
        check_fits(
            n * capacity * C * 8,
            f"The block means of the running sums ('cumsum') of {n} stream(s) over "
            f"{blocks} blocks",
            "Reset the stream, or use fewer streams per object.",
        )
        grown = _filled(self._xp, (n, capacity, C), 0.0, np.float64)
        grown[:, : buffer.shape[1]] = buffer
        return grown

    # ------------------------------------------------------------------ update
    def _advance(self, U: Array, original: Array, weights: Array = None) -> Array | None:
        # a chunk's float64 copies (the input read, its transforms and channel sums, the
        # windows' block means and states): 8.4 times its float64 size measured (a chunk
        # of 160 MB took 1.34 GB more), unplanned before
        need = _CHUNK_COPIES * 8.0 * U.shape[0] * U.shape[1] * max(self.n_channels, 1)
        if need > _CHUNK_UNCHECKED_BYTES:  # (a step's update does not read the memory)
            check_fits(
                need,
                f"A chunk of {U.shape[1]} steps of {U.shape[0]} streams",
                "Update with shorter chunks (the same features: a stream's state carries "
                "over from chunk to chunk).",
            )
        X = self._as_read(U)
        self._check_range(X, original)
        X, per_stream, largest = self._windows_input(X)
        self._check_state_range(largest, X.shape[1])
        # inputs and states of moderate size cannot make a pool overflow: the pools are
        # advanced where they are, unchecked; else into new arrays, checked, then kept
        in_place = self._moderate(largest)
        xp = self._xp
        scores = None
        if weights is not None and in_place:  # computed as the pools advance, in cache
            scores = xp.zeros((self.n_streams, weights.shape[1]))
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite results raise below
            updates, appended = self._pooled.advance(
                self._arrays,
                X,
                self._steps_seen,
                in_place=in_place,
                weights=None if scores is None else xp.asarray(weights),
                scores=scores,
            )
        for a in [] if in_place else [*updates.values(), *appended.values()]:
            if a is not None and not bool(xp.isfinite(a).all()):
                raise self._non_finite_error(original)
        # everything computed and checked: commit
        for s, means in appended.items():
            done = self._steps_seen // s
            self._history[s] = self._grown(self._history[s], done + means.shape[1])
            self._history[s][:, done : done + means.shape[1]] = means
        self._arrays.update(updates)
        self._steps_seen += X.shape[1]
        self._largest = xp.maximum(self._largest, per_stream)
        if weights is not None and scores is None:
            scores = self._streamed_scores(weights)
        return scores

    def _as_read(self, U: Array) -> Array:
        """The chunk ``U`` in float64, at its own precision, as the batch transform reads
        its input (float32 as float32, other numbers as float64: exact in float64)."""
        return self._cast(U, np.float64)

    def _windows_input(self, X: Array) -> tuple[Array, Array, float]:
        """What the windows read of the chunk ``X`` as read (its channels, or their sums
        where the stream mixes them, in float64 as the batch mixes them), every stream's
        largest magnitude in it and the largest of those."""
        xp = self._xp
        if self._mixing is not None:
            X = self._cast(X @ self._mixing, np.float64)
        if not X.size:
            return X, xp.zeros(X.shape[0]), 0.0
        per_stream = xp.abs(X).max(axis=(1, 2))
        return X, per_stream, float(per_stream.max())

    def _check_chunk_state_range(self, U: Array) -> None:
        """:meth:`_check_state_range` of a whole chunk ``U`` ``(n_rows, n_steps,
        n_channels)`` before any of it is taken (as :meth:`_advance` reads it): a caller
        that advances the stream piece by piece checks the chunk first."""
        X, _, largest = self._windows_input(self._as_read(U))
        self._check_state_range(largest, X.shape[1])

    def _check_state_range(self, largest: float, n_steps: int) -> None:
        """Refuse a chunk of ``n_steps`` steps whose largest value (of the windows'
        channels) is ``largest`` where states may pass float32's range over the steps seen
        after it, as the batch transform refuses such input (see
        :func:`~lmu_sk.engine.pooling.state_gain`): the states are compared with float32
        thresholds, whatever the dtype."""
        spec = self._pooled.spec
        orders = [window.order for window in spec.windows]
        gain = state_gain(
            orders, tuple(spec.transforms), self._steps_seen + n_steps, tuple(spec.pools)
        )
        # the largest of every step seen, as the batch transform bounds its whole input by
        # its length's gain: a value taken step by step early grows with the steps after
        seen = self._seen_magnitude()
        if self._mixing is None:
            holder = "U holds" if largest >= seen else "the steps seen before U hold"
        else:  # the windows read the channels and their sums
            holder = (
                "U's channels and their sums hold"
                if largest >= seen
                else "the channels and their sums of the steps seen before U hold"
            )
        largest = max(largest, seen)
        if largest * gain > FLOAT32_MAX:
            raise ValueError(
                f"{holder} values up to {largest:.3g}, which over "
                f"{self._steps_seen + n_steps} steps can give Delay Network states "
                f"beyond the largest float32 ({FLOAT32_MAX:.3g}): the pooled features "
                "compare their states with float32 thresholds, whatever their dtype, so they "
                "would count wrongly; the stream was left unchanged. Scale the input down, "
                f"to keep those below {FLOAT32_MAX / gain:.3g} in magnitude (e.g. "
                "sklearn.preprocessing.StandardScaler, fitted on the training input)."
            )

    def _seen_magnitude(self) -> float:
        """The largest magnitude of the windows' input over the steps seen by the streams
        (carried in the state as 'largest_seen', one per stream)."""
        return float(self._xp.max(self._largest)) if self.n_streams else 0.0

    def _update_scored(self, U: Array, weights: np.ndarray) -> Array:
        """:meth:`update` with a chunk ``U`` ``(n_streams, n_steps, n_channels)``,
        returning the streamed features after it times ``weights`` (as
        :meth:`_streamed_scores`), computed as the pools advance where it can."""
        U = self._as_chunk(U)
        return self._advance(U, U, weights)

    def _moderate(self, largest: float) -> bool:
        """Whether the chunk, whose largest value (of the windows' channels) is
        ``largest``, and every window's carried states are at most :data:`MODERATE` in
        magnitude (then no pool can overflow)."""
        xp = self._xp
        carried = [a for name, a in self._arrays.items() if name.startswith("dn_")]
        return largest <= MODERATE and all(
            not a.size or bool(xp.abs(a).max() <= MODERATE) for a in carried
        )

    def _feature_rows(
        self,
        float64: bool = False,
        out: Array = None,
        streamed: bool = False,
        checked: bool = True,
    ) -> Array:
        """As the base class's; ``streamed``: only the features of the inputs streamed
        step by step (:meth:`LMUPooledFeatures.streamed_columns
        <lmu_sk.pooled.LMUPooledFeatures.streamed_columns>`), at a constant cost per call.
        ``checked=False`` (float64 only): not checked finite here, for a caller that checks
        what it makes of them (a pass over the rows costs a sixth of computing them)."""
        self._check_seen()
        xp = self._xp
        F = self._pooled.features(
            self._arrays, self._history, self._steps_seen, out=out, streamed=streamed
        )
        if not checked and float64:
            return F
        # the sum is finite when every feature is (unless it overflows: then look closer)
        if not bool(xp.isfinite(F.sum())) and not bool(xp.isfinite(F).all()):
            raise ValueError(NON_FINITE_FEATURES)
        if self.dtype == np.float64 or float64:
            return F
        with np.errstate(over="ignore"):
            F = F.astype(self.dtype)
        if not bool(xp.isfinite(F).all()):
            raise ValueError(
                f"The pooled features of the prefixes seen overflow {self.dtype.name}; use "
                "dtype='float64' or rescale the input."
            )
        return F

    def _streamed_scores(self, weights: np.ndarray) -> Array:
        """The streamed features (``_feature_rows(streamed=True)``) times ``weights``
        ``(n_streamed_features, n_outputs)``, ``(n_streams, n_outputs)`` float64, without
        the features written out; not checked finite (the caller checks what it makes of
        them)."""
        self._check_seen()
        return self._pooled.streamed_scores(
            self._arrays, self._steps_seen, self._xp.asarray(weights)
        )

    def transform(self) -> Array:
        """Pooled features of the prefixes seen so far, shape ``(n_streams, n_features)``.

        Equal to ``LMUPooledFeatures.transform`` of the prefixes. A NumPy array, or a CuPy
        array when computed on the GPU and the transformer has ``return_gpu_arrays=True``.
        Windows fed by the 'cumsum' input are computed here from their first block (see
        the class notes); the others from their running pools.
        """
        return super().transform()

    def __getstate__(self) -> dict:
        saved = super().__getstate__()
        saved["spec"] = self.spec.to_plain()  # plain data: the pickle names no engine class
        return saved

    def __setstate__(self, saved: dict) -> None:
        if isinstance(saved["spec"], dict):
            saved["spec"] = PooledSpec.from_plain(saved["spec"])
        super().__setstate__(saved)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_streams={self.n_streams}, n_channels={self.n_channels}, "
            f"n_windows={len(self.spec.windows)}, n_features={self.n_features}, "
            f"steps_seen={self._steps_seen})"
        )


def _extremes_before_first_block(stride: int):
    """Running maxima and minima may be -inf and +inf (their start) before the first
    whole block of their window's stride."""

    def allowed(steps: int):
        return np.array([0.0, -np.inf, np.inf]) if steps < stride else None

    return allowed


# ---------------------------------------------------------------------------- the head
def _is_dense_head(head) -> bool:
    """A fitted dense head: the network's weights ``coefs_``, ``intercepts_`` and the
    activations it was fitted with, ``activation_`` and ``out_activation_``."""
    return all(
        hasattr(head, name) for name in ("coefs_", "intercepts_", "activation_", "out_activation_")
    )


class _DenseOutputs:
    """A fitted dense head on the rows of a stream, through the network's own forward pass
    (:func:`lmu_sk.neural.network.forward_rows`) with buffers allocated once.

    The head computes in its training dtype. The feature standardization is applied as
    ``F - mean`` followed by the first layer with its rows divided by the scale (in
    float64, then cast); where that would overflow the dtype (features of tiny scale), the
    features are standardized in float64 on every call instead, as the estimator does.
    """

    def __init__(self, head, mean, scale, n_rows: int, xp: ModuleType):
        dtype = np.dtype(head.coefs_[0].dtype)
        first = np.asarray(head.coefs_[0], dtype=np.float64)
        self.mean = self.scale = None
        if scale is not None:
            folded = first / np.asarray(scale, dtype=np.float64)[:, None]
            with np.errstate(over="ignore"):
                fits = bool(np.isfinite(folded.astype(dtype)).all())
            if fits:
                first = folded
                self.mean = xp.asarray(mean, dtype=dtype)
            else:
                self.mean = xp.asarray(mean, dtype=np.float64)
                self.scale = xp.asarray(scale, dtype=np.float64)
        self.coefs = [xp.asarray(first, dtype=dtype)] + [
            xp.asarray(c, dtype=dtype) for c in head.coefs_[1:]
        ]
        self.intercepts = [xp.asarray(b, dtype=dtype) for b in head.intercepts_]
        self.activation = head.activation_
        self.out_activation = head.out_activation_
        self.xp = xp
        self.inputs = xp.empty((n_rows, first.shape[0]), dtype)
        self.acts = [xp.empty((n_rows, c.shape[1]), dtype) for c in self.coefs]

    def __call__(self, F: Array, raw: bool = False) -> Array:
        """Output activations for the feature rows ``F`` (``raw``: the output layer's
        logits); a buffer (do not keep it)."""
        if self.mean is None:
            self.inputs[...] = F
        elif self.scale is None:
            self.xp.subtract(F, self.mean, out=self.inputs)
        else:
            self.inputs[...] = (F.astype(np.float64) - self.mean) / self.scale
        return forward_rows(
            self.inputs,
            self.coefs,
            self.intercepts,
            self.activation,
            self.out_activation,
            self.acts,
            self.xp,
            raw=raw,
        )


def _head_has(method: str):
    return lambda stream: hasattr(stream._head, method)


class _ModelStream:
    """A fitted LMU estimator as a stream: its features' stream, the feature scaling and
    the head.

    The features stream through their own ``stream()`` method (any fitted ``features_``
    that has one: :class:`DNStream` for ``LMUFeatures``, :class:`PooledStream` for
    ``LMUPooledFeatures``). A dense head runs through the network's forward pass on
    preallocated buffers; any other head is asked through its own API on the scaled
    features, so new heads stream without changes here.
    """

    _lock = _InstanceLock()

    def __init__(self, estimator, n_streams: int = 1):
        check_is_fitted(estimator, "head_")
        features = estimator.features_
        if not callable(getattr(features, "stream", None)):
            raise TypeError(
                f"The fitted features {type(features).__name__} of this model have no "
                "stream() method, so the model cannot run online; predict on whole "
                "sequences instead."
            )
        self._stream = features.stream(_check_n_streams(n_streams))
        scaled = estimator._standardized
        self._mean = np.asarray(estimator.feature_mean_) if scaled else None
        self._scale = np.asarray(estimator.feature_scale_) if scaled else None
        # a snapshot: refitting the estimator does not change the stream
        self._head = copy.deepcopy(estimator.head_)
        self._dense = _is_dense_head(self._head)
        self._outputs_of = None
        # per-step targets fitted as (n_samples, n_steps, 1): predictions keep that axis
        self._output_axes = estimator._output_axes()
        # a ridge head takes the features as they come, its standardization folded into
        # its coefficients (the Gaussian kernel's: into the rows it compares), as the
        # estimator's batch prediction does where that is well conditioned: no pass over
        # the features to scale them (None: scale them)
        self._folded = None
        if self._mean is not None and hasattr(self._head, "_standardization_folded"):
            self._folded = self._head._standardization_folded(self._mean, self._scale)

    # ------------------------------------------------------------------ delegation
    n_streams = property(lambda self: self._stream.n_streams)
    n_channels = property(lambda self: self._stream.n_channels)
    steps_seen = property(lambda self: self._stream.steps_seen)

    @property
    @_exclusive
    def state(self) -> dict:
        """The features stream's :attr:`~DNStream.state` (the head has none)."""
        return self._stream.state

    @state.setter
    @_exclusive
    def state(self, value: dict) -> None:
        self._stream.state = value

    @_exclusive
    def update(self, U):
        """Advance every sequence by one step or a chunk; see :meth:`DNStream.update`."""
        self._stream.update(U)
        return self

    @_exclusive
    def reset(self):
        """Forget everything seen."""
        self._stream.reset()
        return self

    @_exclusive
    def transform(self) -> np.ndarray:
        """The features of the prefixes seen (unscaled), as ``features_.transform``."""
        return to_numpy(self._stream.transform())

    # ------------------------------------------------------------------ head
    def _feature_rows(self, float64: bool = False) -> tuple[Array, ModuleType]:
        stream = self._stream
        if hasattr(stream, "_feature_rows"):
            return stream._feature_rows(float64=float64), stream._xp
        F = np.asarray(stream.transform())  # another stream: its public answer
        return (F.astype(np.float64) if float64 else F), np

    def _outputs(self, raw: bool = False) -> Array:
        """Output activations of the dense head (``raw``: its logits), on the stream's
        device (a buffer)."""
        F, xp = self._feature_rows()
        forward = self._outputs_of
        if forward is None or forward.xp is not xp:
            forward = self._outputs_of = _DenseOutputs(
                self._head, self._mean, self._scale, F.shape[0], xp
            )
        return forward(F, raw=raw)

    def _head_and_rows(self) -> tuple[object, Array]:
        """The head and the feature rows it takes: a ridge head whose standardization is
        folded into its coefficients (``_folded``) and the rows in float64, as the
        estimator's batch prediction gives them; else the head and the scaled rows."""
        folded = getattr(self, "_folded", None)  # (streams saved before it: None)
        if folded is not None:
            return folded, self._feature_rows(float64=True)[0]
        return self._head, self._scaled_features()

    def _scaled_features(self) -> Array:
        """Scaled feature rows as the estimator gives them to its head: standardized in
        float64, in the features' dtype."""
        F, xp = self._feature_rows()
        if self._mean is None:
            return F
        mean = xp.asarray(self._mean, dtype=np.float64)
        scaled = (F.astype(np.float64) - mean) / xp.asarray(self._scale, dtype=np.float64)
        return scaled.astype(F.dtype, copy=False)

    def __getstate__(self) -> dict:
        # the feature stream, the one part an update changes, is read under its own lock
        # when pickle writes it (its own __getstate__)
        with self._lock:
            saved = dict(self.__dict__)
            saved["_outputs_of"] = None
            saved.pop("_lock", None)
            return saved

    def __copy__(self):
        """An independent stream, as ``copy.copy`` of a features' stream is (a stream is
        its state): a shallow copy would advance this one's features too."""
        with self._lock:
            return copy.deepcopy(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._stream!r})"


class ClassifierStream(_ModelStream):
    """A fitted :class:`~lmu_sk.LMUClassifier` run online; made by its ``stream`` method.

    After every :meth:`update`, :meth:`predict`, :meth:`predict_proba`,
    :meth:`predict_log_proba` and :meth:`decision_function` (those the head has) answer
    what the classifier answers for the prefixes seen: an early classifier. Threads may
    share a stream: its methods hold its lock, so calls run one at a time.
    """

    @available_if(lambda self: self._dense or hasattr(self._head, "predict_proba"))
    @_exclusive
    def predict_proba(self) -> np.ndarray:
        """Class probabilities of the prefixes seen, ``(n_streams, n_classes)``, float64."""
        if not self._dense:
            head, rows = self._head_and_rows()
            checked = getattr(head, "_predict_proba_checked", None)  # rows checked finite
            return to_numpy(checked(rows) if checked is not None else head.predict_proba(rows))
        if self._head.out_activation_ == "softmax":
            return to_numpy(self._outputs()).astype(np.float64)
        # logistic outputs from the logits, as the head's batch prediction takes them
        return logistic_probabilities(to_numpy(self._outputs(raw=True)))

    @available_if(lambda self: self._dense or hasattr(self._head, "predict_proba"))
    @_exclusive
    def predict_log_proba(self) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`: the head's own, without underflow, where it
        has one (the ridge head's), as the classifier's batch prediction gives it."""
        if not self._dense:
            head, rows = self._head_and_rows()
            if hasattr(head, "predict_log_proba"):
                return to_numpy(head.predict_log_proba(rows))
            p = self.predict_proba()
            with np.errstate(divide="ignore"):
                return np.log(p, out=p)
        # from the logits, as the dense head's batch prediction
        return log_probabilities(to_numpy(self._outputs(raw=True)), self._head.out_activation_)

    @available_if(_head_has("decision_function"))
    @_exclusive
    def decision_function(self) -> np.ndarray:
        """The head's scores of the prefixes seen, ``(n_streams,)`` or
        ``(n_streams, n_classes)``."""
        head, rows = self._head_and_rows()
        return to_numpy(head.decision_function(rows))

    @_exclusive
    def predict(self) -> np.ndarray:
        """Predicted class labels of the prefixes seen, ``(n_streams,)``."""
        if not self._dense:
            head, rows = self._head_and_rows()
            return to_numpy(head.predict(rows))
        y = to_numpy(self._outputs())
        if y.shape[1] == 1:
            y = y.ravel()
        return self._head._label_binarizer.inverse_transform(y)


class RegressorStream(_ModelStream):
    """A fitted :class:`~lmu_sk.LMURegressor` run online; made by its ``stream`` method.

    After every :meth:`update`, :meth:`predict` answers what the regressor answers for the
    prefixes seen; for ``feature_output='sequence'`` its prediction at the latest step.
    """

    @_exclusive
    def predict(self) -> np.ndarray:
        """Predicted targets, ``(n_streams,)`` or ``(n_streams, n_outputs)``, float64
        (``(n_streams, 1)`` for a model fitted on per-step targets of shape
        ``(n_samples, n_steps, 1)``, as its ``predict`` keeps that axis)."""
        if not self._dense:
            head, rows = self._head_and_rows()
            y = to_numpy(head.predict(rows))
        else:
            y = to_numpy(self._outputs()).astype(np.float64)
            y = y.ravel() if y.shape[1] == 1 else y
        # (streams saved before the axis was kept: none)
        return y.reshape(*y.shape, *self.__dict__.get("_output_axes", ()))


# ---------------------------------------------------------------------------- early decisions
class _CheckpointModel:
    """The probabilities of one checkpoint's ridge head on a stream's feature rows: the
    head (its standardization folded into its coefficients where that is well
    conditioned) and the columns of the model's classes its classes fill."""

    def __init__(self, head, mean, scale, classes: np.ndarray):
        self.head = head
        self.mean = self.scale = None
        if mean is not None:
            folded = head._standardization_folded(mean, scale)
            if folded is not None:
                self.head = folded
            else:
                self.mean, self.scale = np.asarray(mean), np.asarray(scale)
        self.columns = np.searchsorted(classes, head.classes_)
        self.n_classes = len(classes)
        # a ridge head on the features as they come: its scores are the features times
        # these weights (n_features, n_targets) plus its intercept
        self.weights = None
        linear = hasattr(self.head, "_proba_of_scores") and not self.head._is_kernel_model()
        if self.mean is None and linear:
            self.weights = np.ascontiguousarray(np.asarray(self.head.coef_, dtype=np.float64).T)

    def __call__(self, F: Array, rows: np.ndarray) -> np.ndarray:
        """``(n_streams, n_classes)`` probabilities of the rows ``rows`` (bool), NaN in
        the others."""
        picked = np.flatnonzero(rows)
        if not len(picked):
            return np.full((F.shape[0], self.n_classes), np.nan)
        xp = array_module_of(F)
        if len(picked) < F.shape[0]:  # (every row: no copy of the features)
            F = F[xp.asarray(picked)]
        if self.mean is not None:
            F = (F.astype(np.float64) - xp.asarray(self.mean)) / xp.asarray(self.scale)
        # the stream's rows are checked finite: a ridge head need not check them again
        checked = getattr(self.head, "_predict_proba_checked", None)
        proba = to_numpy(checked(F) if checked is not None else self.head.predict_proba(F))
        return self._spread(proba, picked, len(rows))

    def of_scores(self, scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """As calling it on features whose products with :attr:`weights` are ``scores``
        ``(n_streams, n_targets)``."""
        picked = np.flatnonzero(rows)
        if not len(picked):
            return np.full((len(rows), self.n_classes), np.nan)
        proba = self.head._proba_of_scores(scores[picked] + np.asarray(self.head.intercept_))
        return self._spread(proba, picked, len(rows))

    def _spread(self, proba: np.ndarray, picked: np.ndarray, n_rows: int) -> np.ndarray:
        """The probabilities ``proba`` of the head's classes for the rows ``picked``, in
        the columns of the model's classes, NaN in the other rows."""
        out = np.full((n_rows, self.n_classes), np.nan)
        part = np.zeros((len(picked), self.n_classes))
        part[:, self.columns] = proba
        out[picked] = part
        return out


class EarlyClassifierStream:
    """A fitted :class:`~lmu_sk.early.LMUEarlyClassifier` run online; made by its ``stream``
    method.

    Every :meth:`update` advances the features of ``n_streams`` series (one step or a chunk
    of steps), and at each checkpoint it passes (the model's ``checkpoints_``) the cases not
    yet decided get that checkpoint's calibrated probabilities and the decision rule
    (:attr:`~lmu_sk.early.LMUEarlyClassifier.threshold_` reached at
    :attr:`~lmu_sk.early.LMUEarlyClassifier.consecutive_` checkpoints in a row, the same
    class each time). At the training length every case still undecided is decided by
    the model of whole series; :meth:`finish` decides cases whose series end earlier.

    After any update :meth:`predict`, :meth:`predict_proba`, :attr:`decided` and
    :attr:`decision_steps` report the state: a decided case keeps its label, probabilities
    and step whatever comes after; an undecided case reports the estimate of the latest
    checkpoint passed (before the first one, the training set's class frequencies).

    A decided case's later steps are not read (they may be NaN; updates still take a row
    for every case): the stream stops computing its features, so updates get cheaper as
    cases are decided. After the training length every case is decided and updates only
    count the steps (they may be NaN too). A chunk is checked before its first step is
    taken, for the cases undecided when it starts: NaN in the steps of a case after its
    decision within that chunk is refused with them (pass such steps in later updates).

    Threads may share a stream: its methods hold its lock, so calls run one at a time.

    Attributes
    ----------
    n_streams, n_channels : int
    classes_ : ndarray of shape (n_classes,)
    checkpoints : int ndarray
        The steps at which cases can be decided; the last is the training length.
    """

    _lock = _InstanceLock()

    def __init__(self, model, n_streams: int = 1, *, _snapshot: bool = True):
        check_is_fitted(model, "threshold_")
        estimator = model.estimator_
        self.n_streams = _check_n_streams(n_streams)
        self.classes_ = np.asarray(model.classes_)
        self.checkpoints = np.asarray(model.checkpoints_, dtype=np.int64)
        scaled = estimator._standardized
        models = [
            None if head is None else _CheckpointModel(head, mean, scale, self.classes_)
            for head, mean, scale in zip(
                model.heads_, model.head_means_, model.head_scales_, strict=True
            )
        ]
        end = _CheckpointModel(
            estimator.head_,
            estimator.feature_mean_ if scaled else None,
            estimator.feature_scale_ if scaled else None,
            self.classes_,
        )
        # a snapshot: refitting the model does not change the stream (the model's own
        # batch runs, which refit nothing meanwhile, share its parts)
        parts = [estimator.features_, [*models, end]]
        self._transformer, self._models = copy.deepcopy(parts) if _snapshot else parts
        self.threshold = float(model.threshold_)
        self.consecutive = int(model.consecutive_)
        self._prior = np.asarray(model.class_prior_, dtype=np.float64)
        self._lengths: np.ndarray | None = None  # per case, in the estimator's batch runs
        self._start()

    def _start(self) -> None:
        self._features = self._transformer.stream(self.n_streams)
        self._decisions = Decisions(self.n_streams, len(self.classes_), prior=self._prior)
        self._rows = np.arange(self.n_streams)  # the cases the feature stream carries
        self._next = 0  # the index of the next checkpoint
        self._steps_seen = 0
        self._buffer = None  # the features' rows, reused at every checkpoint

    # ------------------------------------------------------------------ state
    @property
    def n_channels(self) -> int:
        return self._features.n_channels

    @property
    def steps_seen(self) -> int:
        """Steps seen since creation or the last :meth:`reset`."""
        return self._steps_seen

    @property
    @_exclusive
    def decided(self) -> np.ndarray:
        """Whether each case is decided, ``(n_streams,)`` bool (a copy)."""
        return self._decisions.decided.copy()

    @property
    @_exclusive
    def decision_steps(self) -> np.ndarray:
        """The steps seen when each case was decided, ``(n_streams,)``; -1 while undecided."""
        return self._decisions.step.copy()

    @_exclusive
    def predict(self) -> np.ndarray:
        """The label of every case, ``(n_streams,)``: the decision of a decided case, the
        latest estimate of an undecided one."""
        return self.classes_[self._decisions.label]

    @_exclusive
    def predict_proba(self) -> np.ndarray:
        """The probabilities of every case, ``(n_streams, n_classes)``, float64: those it
        was decided with, or the latest estimate of an undecided one."""
        return self._decisions.proba.copy()

    @_exclusive
    def reset(self):
        """Forget everything seen: zero steps, every case undecided."""
        self._start()
        return self

    # ------------------------------------------------------------------ update
    @_exclusive
    def update(self, U):
        """Advance every series by one step or a chunk of steps, deciding at the
        checkpoints passed.

        Parameters
        ----------
        U : array-like
            As for :meth:`DNStream.update`: ``(n_streams,)`` or ``(n_streams, n_channels)``
            for one step, ``(n_streams, n_steps)`` or ``(n_streams, n_steps, n_channels)``
            (``(n_streams, n_channels, n_steps)`` for ``channels_first=True``) for a chunk.
            The rows of decided cases are not read and may hold NaN.

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            For a wrong shape, non-numeric data, NaN or infinity in an undecided case or
            values beyond the features' dtype, checked before any step is taken: the
            stream is then left as it was.
        """
        U = self._steps_last(U)
        if U.shape[1]:
            if len(self._rows) < self.n_streams:
                U = U[self._features._xp.asarray(self._rows)]
            self._advance(U, U.shape[1])
        return self

    def _steps_last(self, U) -> Array:
        """``U`` as a chunk ``(n_streams, n_steps, n_channels)`` (a view where it can be),
        its undecided cases checked."""
        stream = self._features
        n = self.n_streams
        U = stream._as_chunk(U, n)
        xp = stream._xp
        undecided = ~self._decisions.decided
        read = U
        if not undecided.all():
            read = U[xp.asarray(np.flatnonzero(undecided))]
        # steps after the last checkpoint are only counted (every case is decided there)
        last = int(self.checkpoints[-1]) - self._steps_seen
        if read.shape[1] > last:
            read = read[:, : max(last, 0)]
        if U.dtype.kind == "f" and read.size:
            stream._check_range(read, read)  # NaN, infinity, beyond the features' dtype
        if isinstance(stream, PooledStream) and read.size:
            # states beyond float32 over the whole chunk: refused before its first piece
            # (and the checkpoint after it) is taken, not at a later piece
            stream._check_chunk_state_range(read)
        return U

    def _advance(self, U: Array, n_steps: int) -> None:
        """Advance the cases the feature stream carries by their chunk ``U`` ``(n_rows,
        n_steps, n_channels)``, deciding at every checkpoint it reaches."""
        stream = self._features
        done = 0
        while done < n_steps:
            if self._next >= len(self.checkpoints) or not len(self._rows):
                self._steps_seen += n_steps - done  # every case decided: nothing to read
                return
            take = min(n_steps - done, int(self.checkpoints[self._next]) - self._steps_seen)
            piece = U[:, done : done + take]
            stale = self._decisions.decided[self._rows]
            if stale.any():  # decided cases still carried (too few to drop): not read
                piece = piece.copy()
                piece[stream._xp.asarray(stale)] = 0.0
            if stream.n_channels == 1:
                piece = piece[:, :, 0]
            elif stream.channels_first:
                piece = piece.swapaxes(1, 2)
            weights = self._scores_weights(self._steps_seen + take)
            if weights is None:
                stream.update(piece)
                scores = None
            else:  # the checkpoint's ridge scores, computed as the pools advance
                scores = to_numpy(stream._update_scored(piece, weights))
            done += take
            self._steps_seen += take
            if self._steps_seen == self.checkpoints[self._next]:
                kept = self._checkpoint(scores)
                if kept is not None:
                    U = U[kept]

    def _scores_weights(self, steps: int) -> np.ndarray | None:
        """The weights of the ridge head of the checkpoint reached after ``steps`` steps
        when its scores can be computed with the streamed features (None otherwise)."""
        k = self._next
        if k >= len(self.checkpoints) - 1 or steps != self.checkpoints[k]:
            return None
        model = self._models[k]
        if model is None or not isinstance(self._features, PooledStream):
            return None
        return model.weights

    def _checkpoint(self, scores: np.ndarray | None = None) -> np.ndarray | None:
        """The decisions of the checkpoint just reached (``scores``: its ridge head's,
        computed with the streamed features); the positions, among the rows the feature
        stream carried, of those it keeps carrying (None: all of them)."""
        k = self._next
        self._next += 1
        decisions, rows = self._decisions, self._rows
        steps = int(self.checkpoints[k])
        active = np.zeros(self.n_streams, dtype=bool)
        active[rows] = True
        if self._lengths is not None:
            active &= self._lengths >= steps
        model = self._models[k]
        if model is not None and active.any():
            last = k == len(self.checkpoints) - 1
            proba = np.full((self.n_streams, len(self.classes_)), np.nan)
            if scores is not None:
                proba[rows] = model.of_scores(scores, active[rows])
            else:
                proba[rows] = model(self._feature_rows(streamed=not last), active[rows])
            if not last and not np.isfinite(proba[active]).all():
                # the streamed rows were not checked: their probabilities are
                raise ValueError(NON_FINITE_FEATURES)
            if last:
                decisions.force(proba, active, steps)
            else:
                decisions.advance(proba, active, steps, self.threshold, self.consecutive)
        kept = np.flatnonzero(~decisions.decided[rows])
        # dropping what decided cases carry copies the rest: worth it for an eighth of them
        if len(kept) < len(rows) and (not len(kept) or 8 * (len(rows) - len(kept)) >= len(rows)):
            if len(kept):
                self._features._keep_rows(kept)
            self._rows = rows[kept]
            return kept
        return None

    def _feature_rows(self, streamed: bool = False) -> Array:
        """The float64 features of the cases the feature stream carries, in a buffer this
        stream reuses from checkpoint to checkpoint (fresh memory costs its page faults
        each time). ``streamed``: those the checkpoints before the last read, the pooled
        features' streamed columns (carried step by step: no window is recomputed)."""
        stream = self._features
        if not isinstance(stream, PooledStream):
            return stream._feature_rows(float64=True)
        n_rows, width = len(self._rows), stream.spec.n_features
        if self._buffer is None or self._buffer.shape[0] < n_rows:
            self._buffer = stream._xp.empty((n_rows, width), dtype=np.float64)
        if streamed:  # fewer columns: a C-contiguous block at the buffer's start
            width = stream._pooled.n_streamed_features
        out = self._buffer.reshape(-1)[: n_rows * width].reshape(n_rows, width)
        return stream._feature_rows(float64=True, out=out, streamed=streamed, checked=not streamed)

    @_exclusive
    def finish(self, rows=None):
        """Decide the cases whose series end now, with the model of whole series.

        Parameters
        ----------
        rows : array-like of int or bool, default=None
            The cases (indices or a mask); ``None``: every undecided case. Decided ones are
            left as they are.

        Returns
        -------
        self
        """
        n = self.n_streams
        if rows is None:
            mask = np.ones(n, dtype=bool)
        else:
            picked = np.asarray(rows)
            if picked.size == 0 and picked.ndim == 1:  # [] reads as floats: no row
                picked = picked.astype(np.intp)
            if picked.dtype == bool:
                if picked.shape != (n,):
                    raise ValueError(
                        f"rows must be {n} booleans (one per stream) or indices; got shape "
                        f"{picked.shape}."
                    )
                mask = picked.copy()
            else:
                if picked.dtype.kind not in "iu" or picked.ndim > 1:
                    raise TypeError(f"rows must be indices or a boolean mask; got {rows!r}.")
                if picked.size and (picked.min() < -n or picked.max() >= n):
                    raise ValueError(f"rows holds indices outside 0 .. {n - 1}.")
                mask = np.zeros(n, dtype=bool)
                mask[picked] = True
        mask &= ~self._decisions.decided
        if not mask.any():
            return self
        self._features._check_seen()
        carried = mask[self._rows]
        proba = np.full((n, len(self.classes_)), np.nan)
        proba[self._rows] = self._models[-1](self._feature_rows(), carried)
        self._decisions.force(proba, mask, self._steps_seen)
        return self

    def _resume(self, next_checkpoint: int, run: np.ndarray, label: np.ndarray) -> None:
        """Continue the decisions of cases seen before (aeon's ``update_predict``): the
        checkpoints before ``next_checkpoint`` are passed without deciding."""
        self._next = int(next_checkpoint)
        self._decisions.run = np.asarray(run, dtype=np.int64).copy()
        self._decisions.label = np.asarray(label, dtype=np.int64).copy()

    # ------------------------------------------------------------------ pickling
    def __copy__(self):
        """An independent stream, as ``copy.copy`` of a features' stream is: a shallow
        copy would share this one's features but not its decisions."""
        with self._lock:
            return copy.deepcopy(self)

    def __getstate__(self) -> dict:
        # under the lock, what an update changes copied (the feature stream's state, the
        # decisions, the cases carried): of one moment, and unchanged by another thread's
        # update while pickle writes it; the checkpoints' models, which none changes, shared
        with self._lock:
            saved = dict(self.__dict__)
            saved.pop("_lock", None)
            saved["_buffer"] = None
            saved["_features"] = copy.copy(self._features)
            saved["_rows"] = np.array(self._rows)
            decisions = self._decisions.to_plain()  # plain arrays: no internal class
            saved["_decisions"] = {
                key: np.array(value) if isinstance(value, np.ndarray) else value
                for key, value in decisions.items()
            }
            saved["_models"] = [None if m is None else m.__dict__ for m in self._models]
            return saved

    def __setstate__(self, saved: dict) -> None:
        # writable copies of the arrays (joblib's mmap_mode='r' loads read-only ones)
        saved = {k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in saved.items()}
        saved["_decisions"] = Decisions.from_plain(saved["_decisions"])
        models = []
        for plain in saved["_models"]:
            model = None
            if plain is not None:
                model = _CheckpointModel.__new__(_CheckpointModel)
                model.__dict__.update(plain)
            models.append(model)
        saved["_models"] = models
        self.__dict__.update(saved)

    def __repr__(self) -> str:
        decided = int(self._decisions.decided.sum())
        return (
            f"{type(self).__name__}(n_streams={self.n_streams}, n_channels={self.n_channels}, "
            f"steps_seen={self._steps_seen}, decided={decided})"
        )
