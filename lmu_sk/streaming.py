"""Streaming inference: a fitted model run as a recurrent network, one step or chunk at a time.

A stream holds the Delay Network (DN) state of ``n_streams`` independent sequences and
whatever its features need besides: the running sum of the states for 'mean', their running
maximum for 'max', the pools of :class:`~lmu_sk.pooled.LMUPooledFeatures`. After every
update it answers what its estimator answers for the sequences seen so far (their
*prefix*): a stream of a classifier is an early classifier.

One step is one matrix product with the state kept next to its input slot, for the
increment of the state (smaller than the state, so rounded less)::

    m_{t+1} = m_t + [m_t, u_{t+1}] @ [[(Abar - I).T], [Bbar]]

A chunk of ``k`` steps whose output needs the final state only ('final', 'sequence',
'mean') goes through the impulse response ``H[j] = Abar^j Bbar`` and a power of the state
matrix, without a loop over steps::

    m_{t+k} = Abar^k m_t + sum_{j<k} H[k-1-j] u_{t+1+j}
    sum_{s=1..k} m_{t+s} = S_k m_t + sum_{j<k} C[k-1-j] u_{t+1+j}

with ``C = cumsum(H)`` and ``S_k = sum_{s=1..k} Abar^s``; ``Abar^k m`` and ``S_k m`` are
applied through the binary digits of ``k`` with precomputed ``Abar^(2^i)`` and
``S_(2^i)`` (``S_(a+b) m = S_a m + S_b Abar^a m``). Outputs that need every state of the
chunk ('max', the pools) compute them in time blocks of a few steps carrying the state from
block to block, one matrix product per block, holding one block at a time.

The engine provides the algebra (:func:`lmu_sk.engine.algebra.final_states` through the
reversed impulse response and its running sum, :func:`lmu_sk.engine.algebra.iter_blocks`
with the carried state), the constants (:mod:`lmu_sk.engine.constants`: the step matrix,
the powers of ``Abar`` and their sums, the impulse-response tables, the block matrices) and
the steps per block (:func:`lmu_sk.engine.plan.block_steps`); what is the stream's own is
the carried state, its powers, the running pools and the partial block of a stride.

The DN state of :class:`DNStream` is kept in the features' dtype, as in the batch
transform, except for 'mean': its state and running sum are float64, since the mean of a
float32 state over many steps keeps the state's rounding (about 2e-5 of the mean's scale
after a million steps of centred input) while the mean itself can be far smaller than the
states. The pooled features are accumulated in float64 as their batch transform on the CPU
does. Every array operation goes through the array module ``xp`` of the state (NumPy, or
CuPy with the same code).
"""

from __future__ import annotations

import copy
import math
import numbers
from types import ModuleType
from typing import Any

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._device import get_array_module, to_numpy
from ._input import check_dtype_param, is_device_array
from ._memory import check_fits
from .dn import impulse_response
from .engine import algebra, constants
from .engine.plan import block_steps
from .neural.network import forward_rows

__all__ = ["STREAM_OUTPUTS", "ClassifierStream", "DNStream", "PooledStream", "RegressorStream"]

#: Outputs of :class:`~lmu_sk.features.LMUFeatures` a stream can carry; a new output needs
#: its running state here.
STREAM_OUTPUTS = ("final", "sequence", "mean", "max")

Array = Any

# Longest piece of a chunk handled by one GEMM through the impulse response (longer chunks
# are split); the tables for it take at most _TABLE_BYTES.
_MAX_PIECE = 4096
_TABLE_BYTES = 64 * 1024**2
# Working memory of one time block of states (and of the comparisons of the pools) per
# group of rows.
_BLOCK_BYTES = 64 * 1024**2


# ---------------------------------------------------------------------------- helpers
def _step_matrix(Abar: np.ndarray, Bbar: np.ndarray) -> np.ndarray:
    """``[[Abar.T], [Bbar]]``, shape ``(..., order + 1, order)``: one step as one product."""
    return np.concatenate([np.swapaxes(Abar, -1, -2), Bbar[..., None, :]], axis=-2)


def _piece_levels(order: int) -> int:
    """Powers of two of ``Abar`` a chunk piece needs: pieces have at most ``_MAX_PIECE``
    steps, and their impulse-response tables take at most ``_TABLE_BYTES``."""
    fits = max(1, _TABLE_BYTES // (2 * 8 * order))
    return min(int(math.log2(_MAX_PIECE)), int(math.log2(fits))) + 1


def _device_name(xp: ModuleType) -> str:
    return "cpu" if xp is np else "gpu"


def _filled(xp: ModuleType, shape: tuple, value: float, dtype) -> Array:
    a = xp.empty(shape, dtype)
    a[...] = value
    return a


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

    #: attributes that live on the device; rebuilt by _setup and _allocate, not pickled
    _device_attributes: tuple[str, ...] = ()

    # ------------------------------------------------------------------ subclass interface
    def _setup(self, xp: ModuleType) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _allocate(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _state_spec(self) -> dict:  # pragma: no cover - abstract
        """``{name: (shape, getter, setter, allowed_infinity)}`` of the state arrays."""
        raise NotImplementedError

    def _advance(self, U: Array, original: Array) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _feature_rows(self) -> Array:  # pragma: no cover - abstract
        """Features of the prefixes seen, ``(n_streams, n_features)`` in ``dtype`` on the
        stream's device (possibly a view of the state: do not modify)."""
        raise NotImplementedError

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

    def reset(self):
        """Forget everything seen: zero state, zero steps."""
        self._allocate()
        self._steps_seen = 0
        return self

    @property
    def state(self) -> dict:
        """A copy of everything the stream carries, for checkpoints; assign such a dict to
        restore it. Arrays live where the stream computes."""
        state = {name: get().copy() for name, (_, get, _, _) in self._state_spec().items()}
        state["steps_seen"] = self._steps_seen
        return state

    @state.setter
    def state(self, value: dict) -> None:
        spec = self._state_spec()
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
            name: self._checked_array(value[name], name, shape, allowed(int(steps)))
            for name, (shape, _, _, allowed) in spec.items()
        }
        self._check_state(checked, int(steps))
        # everything checked: now assign
        for name, (_, _, put, _) in spec.items():
            put(checked[name])
        self._steps_seen = int(steps)

    def _check_state(self, arrays: dict, steps: int) -> None:
        """Further checks of a state being restored (all arrays already on ``xp``)."""

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
        if type(U) is np.ndarray and U.shape == self._step_shape and self._xp is np:
            # the common case first: one step of a NumPy stream
            if U.dtype.kind not in "biuf":
                raise TypeError(f"U must hold real numbers; got an array of dtype {U.dtype}.")
            self._advance(U.reshape(self.n_streams, 1, self.n_channels), U)
            return self
        if is_device_array(U) and self._xp is np:
            self._move_to(get_array_module("gpu"))
        xp = self._xp
        if not isinstance(U, xp.ndarray):
            U = xp.asarray(np.asarray(U))
        if U.dtype.kind not in "biuf":
            raise TypeError(f"U must hold real numbers; got an array of dtype {U.dtype}.")
        n, c = self.n_streams, self.n_channels
        shape = U.shape
        if U.ndim == 3:
            if self.channels_first:
                U = U.swapaxes(1, 2)
            if U.shape[0] != n or U.shape[2] != c:
                raise self._shape_error(shape)
        elif U.ndim == 2 and c == 1:
            if shape[0] != n:
                raise self._shape_error(shape)
            U = U[:, :, None]
        elif (U.ndim == 1 and c == 1 and shape[0] == n) or (U.ndim == 2 and shape == (n, c)):
            U = U.reshape(n, 1, c)
        elif U.ndim == 0 and n * c == 1:
            U = U.reshape(1, 1, 1)
        else:
            raise self._shape_error(shape)
        if U.shape[1]:
            self._advance(U, U)
        return self

    def _shape_error(self, shape: tuple) -> ValueError:
        n, c = self.n_streams, self.n_channels
        if c == 1:
            forms = f"({n},) for one step or ({n}, n_steps) for a chunk"
        elif self.channels_first:
            forms = f"({n}, {c}) for one step or ({n}, {c}, n_steps) for a chunk"
        else:
            forms = f"({n}, {c}) for one step or ({n}, n_steps, {c}) for a chunk"
        return ValueError(
            f"U of shape {shape} does not fit this stream of {n} sequence(s) with {c} "
            f"channel(s); pass {forms}."
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
        if U.dtype.kind == "f" and largest > float(np.finfo(dtype).max):
            return ValueError(
                f"U holds finite values (up to {largest:.3g} in magnitude) beyond the largest "
                f"{dtype.name} ({np.finfo(dtype).max:.3g}): the stream would overflow "
                f"{dtype.name}; the stream was left unchanged. Scale the input down or use "
                "dtype='float64'."
            )
        return ValueError(
            f"The Delay Network state would overflow {dtype.name} for this input; the "
            "stream was left unchanged. Scale the input down or use dtype='float64'."
        )

    # ------------------------------------------------------------------ features
    def _check_seen(self) -> None:
        if self._steps_seen == 0:
            raise ValueError(
                "The stream has seen no step yet; call update() with at least one step first."
            )

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
        keep = {
            key: value
            for key, value in self.__dict__.items()
            if key != "_xp" and key not in self._device_attributes
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
        self._setup(get_array_module("cpu" if self.device == "cpu" else "auto"))
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
        ``{'dn': (n_streams, n_channels, order), 'steps_seen': int}`` plus ``'mean'``
        (the running sum of the states) or ``'max'`` (their running maximum) of shape
        ``(n_streams, n_channels * order)`` for those outputs.

    Notes
    -----
    The DN state stays where the transformer computes: on the GPU (CuPy) when its
    ``device`` resolves to one, else on the CPU; the first CuPy input moves a CPU stream
    to the device. Pickling stores NumPy arrays, so a pickled stream loads anywhere.
    """

    _device_attributes = (
        "_step",
        "_powers",
        "_sums",
        "_impulse",
        "_cumulative",
        "_blocks",
        "_buffer",
        "_next",
        "_pooled",
    )

    def __init__(self, features, n_streams: int = 1, return_device_arrays: bool | None = None):
        check_is_fitted(features)
        n_streams = _check_n_streams(n_streams)
        if features.output not in STREAM_OUTPUTS:
            raise ValueError(
                f"Streaming supports the outputs {STREAM_OUTPUTS}; this model's features "
                f"use output {features.output!r}. Predict on whole sequences instead."
            )
        self.n_streams = n_streams
        self.order = int(features.order)
        self.theta = float(features.theta_)
        self.discretizer = features.discretizer
        self.output = features.output
        self.n_channels = int(features.n_channels_)
        self.channels_first = bool(getattr(features, "channels_first", False))
        self.dtype = np.dtype(features.dtype or np.float64)
        # the state of 'mean' is float64: its average over many steps has the scale of the
        # mean (near zero for centred input), far below the state's, and a float32 state's
        # rounding does not average out
        self._work = np.dtype(np.float64) if self.output == "mean" else self.dtype
        self.device = features.device
        if return_device_arrays is None:
            return_device_arrays = bool(features.return_gpu_arrays)
        self.return_device_arrays = return_device_arrays
        rows, d = self.n_streams * self.n_channels, self.order
        check_fits(
            (4 * rows * (d + 1) + 2 * d * d) * self._work.itemsize,
            f"A stream of {self.n_streams} sequences with {self.n_channels} channel(s) of "
            f"order {d}",
            "Use fewer streams per object (several streams can run side by side).",
        )
        self._setup(get_array_module(self.device))
        self.reset()

    # ------------------------------------------------------------------ device and tables
    def _setup(self, xp: ModuleType) -> None:
        """Put the constant matrices on ``xp``; the tables of chunks come when needed."""
        self._xp = xp
        self._key = (self.order, self.theta, self.discretizer)
        # one step as its increment, m_t+1 = m_t + [m_t, u] @ [[(Abar - I).T], [Bbar]]: the
        # increment is small against the state (Abar is near I), so rounding it costs less
        # than rounding Abar m_t (about 4x less for order 32, theta 1000, in float32)
        increment = np.vstack(
            [
                constants.get("D_T", *self._key, 0, np.float64, np),
                constants.system(*self._key)[1][None],
            ]
        )
        self._step = xp.asarray(increment, dtype=self._work)
        self._powers = self._sums = None  # Abar^(2^i), S_(2^i), transposed
        self._impulse = self._cumulative = None  # reversed H, reversed cumsum(H)
        self._blocks = None  # block weights of 'max'

    def _allocate(self) -> None:
        xp, rows, d = self._xp, self.n_streams * self.n_channels, self.order
        # the state lives in columns :d of an (rows, d + 1) buffer, column d is the input slot
        self._buffer = _filled(xp, (rows, d + 1), 0.0, self._work)
        self._next = xp.empty((rows, d), self._work)
        self._pooled = None
        if self.output == "mean":
            self._pooled = _filled(xp, (rows, d), 0.0, np.float64)
        elif self.output == "max":
            self._pooled = _filled(xp, (rows, d), -np.inf, self.dtype)

    def _state_dtype(self, name: str) -> np.dtype:
        return np.dtype(np.float64) if name == "mean" else self._work

    def _state_spec(self) -> dict:
        n, c, d = self.n_streams, self.n_channels, self.order

        def put_dn(a):
            self._buffer[:, :d] = a.reshape(n * c, d)

        def put_pooled(a):
            self._pooled[...] = a.reshape(n * c, d)

        spec = {
            "dn": ((n, c, d), lambda: self._buffer[:, :d].reshape(n, c, d), put_dn, _finite),
        }
        if self._pooled is not None:
            # the running maximum starts at -inf: allowed before the first step
            allowed = _minus_inf_before_first_step if self.output == "max" else _finite
            spec[self.output] = (
                (n, c * d),
                lambda: self._pooled.reshape(n, c * d),
                put_pooled,
                allowed,
            )
        return spec

    def _constant(self, name: str, n_steps: int = 0, param: int = 0) -> Array:
        """A constant of this stream's system from the engine's cache, in the state's dtype
        on its device."""
        return constants.get(name, *self._key, n_steps, self._work, self._xp, param)

    def _tables(self, length: int) -> None:
        """The tables of chunk pieces of up to ``length`` steps (a power of two)."""
        if self._powers is None:
            levels = _piece_levels(self.order)
            self._powers = self._constant("powers", param=levels)
            if self.output == "mean":
                self._sums = self._constant("power_sums", param=levels)
        if self._impulse is None or len(self._impulse) < length:
            self._impulse = self._constant("H_rev", length)
            if self.output == "mean":
                self._cumulative = self._constant("C_rev", length)

    # ------------------------------------------------------------------ update
    def _advance(self, U: Array, original: Array) -> None:
        n, k, c = U.shape
        if self._work != self.dtype:
            self._check_range(U, original)
        if k == 1:
            self._advance_step(U.reshape(n * c), original)
        else:
            rows = U.reshape(n, k) if c == 1 else U.transpose(0, 2, 1).reshape(n * c, k)
            rows = self._cast(rows, self._work)
            # non-finite results raise below, naming their cause
            with np.errstate(over="ignore", invalid="ignore"):
                self._advance_chunk(rows, original)

    def _advance_step(self, u: Array, original: Array) -> None:
        xp, d = self._xp, self.order
        buffer, state = self._buffer, self._next
        if u.dtype != self._work and xp is np:
            # finite values beyond float32 raise here rather than turning into infinity
            try:
                with np.errstate(over="raise"):
                    buffer[:, d] = u
            except FloatingPointError:
                buffer[:, d] = 0.0
                raise self._non_finite_error(original) from None
        else:
            buffer[:, d] = u
        # into a contiguous array: BLAS needs one (a strided output falls back to a loop)
        xp.matmul(buffer, self._step, out=state)  # the increment
        state += buffer[:, :d]
        if not bool(xp.isfinite(state).all()):
            raise self._non_finite_error(original)
        if self.output == "mean":
            total = self._pooled + state
            self._check_mean(total, self._steps_seen + 1, original)
            self._pooled = total
        elif self.output == "max":
            xp.maximum(self._pooled, state, out=self._pooled)
        buffer[:, :d] = state
        self._steps_seen += 1

    def _advance_chunk(self, rows: Array, original: Array) -> None:
        """Advance by the chunk ``rows`` of shape ``(n_streams * n_channels, n_steps)``."""
        xp, d = self._xp, self.order
        state = self._buffer[:, :d]
        pooled = self._pooled
        if self.output == "max":
            state, pooled = self._chunk_max(rows, state, pooled)
        else:
            limit = 1 << (_piece_levels(d) - 1)
            for start in range(0, rows.shape[1], limit):
                state, pooled = self._chunk_piece(rows[:, start : start + limit], state, pooled)
        if not bool(xp.isfinite(state).all()):
            raise self._non_finite_error(original)
        if self.output == "mean":
            self._check_mean(pooled, self._steps_seen + rows.shape[1], original)
        self._buffer[:, :d] = state
        if pooled is not None:
            self._pooled = pooled
        self._steps_seen += rows.shape[1]

    def _check_mean(self, total: Array, steps: int, original: Array) -> None:
        """Raise unless the running sum ``total`` of ``steps`` states gives finite means
        within the features' dtype."""
        xp = self._xp
        if not bool(xp.isfinite(total).all()) or (
            self._work != self.dtype
            and float(xp.abs(total).max()) / steps > float(np.finfo(self.dtype).max)
        ):
            raise self._non_finite_error(original)

    def _chunk_piece(self, rows: Array, state: Array, pooled: Array | None):
        """New state (and running sum) after the steps ``rows`` through the impulse response."""
        xp, k = self._xp, rows.shape[1]
        self._tables(1 << (k - 1).bit_length())  # tables in powers of two: few sizes
        carried, carried_sum = state, None
        for level in range(k.bit_length()):
            if k >> level & 1:
                if pooled is not None:
                    term = carried @ self._sums[level]
                    carried_sum = term if carried_sum is None else carried_sum + term
                carried = carried @ self._powers[level]
        new_state = carried + algebra.final_states(rows, self._impulse, xp)
        if pooled is None:
            return new_state, None
        # the running sum is float64: add the piece's sum (in the state's dtype) to it
        new_sum = pooled + carried_sum
        new_sum += algebra.final_states(rows, self._cumulative, xp)
        return new_state, new_sum

    def _chunk_max(self, rows: Array, state: Array, pooled: Array):
        """New state and running maximum, every state of the chunk in blocks of a few steps."""
        xp, d = self._xp, self.order
        block = block_steps(d, None, _device_name(xp))
        if self._blocks is None:
            self._blocks = self._constant("W", param=block)
        n_rows = rows.shape[0]
        new_max = pooled.copy()
        new_state = xp.empty((n_rows, d), self._work)
        group = max(1, _BLOCK_BYTES // (block * d * self._work.itemsize))
        for r0 in range(0, n_rows, group):
            r1 = min(n_rows, r0 + group)
            G = None
            for _, G in algebra.iter_blocks(rows[r0:r1], self._blocks, d, xp, state=state[r0:r1]):
                xp.maximum(new_max[r0:r1], G.max(axis=1), out=new_max[r0:r1])
            new_state[r0:r1] = G[:, -1]
        return new_state, new_max

    # ------------------------------------------------------------------ features
    def _feature_rows(self) -> Array:
        self._check_seen()
        n, d = self.n_streams, self.order
        if self.output == "mean":
            return (self._pooled / self._steps_seen).astype(self.dtype).reshape(n, -1)
        if self.output == "max":
            return self._pooled.reshape(n, -1)
        state = self._buffer[:, :d]
        return state if self.n_channels == 1 else state.reshape(n, -1)

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
class PooledStream(_FeatureStream):
    """Pooled multi-scale Delay Network features of ``n_streams`` sequences, online.

    Made by :meth:`LMUPooledFeatures.stream <lmu_sk.pooled.LMUPooledFeatures.stream>`; it
    snapshots the fitted transformer. After ``t`` steps :meth:`transform` equals
    ``LMUPooledFeatures.transform`` of the first ``t`` steps.

    Every window's Delay Network runs over each channel (and, with the fitted
    ``difference``, its first difference); every state is pooled as it comes: its count of
    steps above each fitted threshold, its sum, maximum and minimum, in float64. With a
    fitted ``stride > 1`` the networks see means of blocks of ``stride`` steps: the stream
    keeps the state after the last whole block and the sum of the steps of the block under
    way; :meth:`transform` then evaluates that partial block, averaged over its own steps
    as the batch transform does, without committing it.

    Parameters
    ----------
    features : LMUPooledFeatures
        A fitted transformer; its fitted windows, systems, thresholds, ``stride_`` and
        ``difference_`` are used.
    n_streams : int, default=1
    return_device_arrays : bool, default=None
        As for :class:`DNStream`.

    Attributes
    ----------
    n_streams, n_channels, n_windows, n_inputs, order, n_biases, stride : int
    difference : bool
    dtype : numpy.dtype
        Dtype of the features: the transformer's ``dtype``, or float64 when that is None.
        The state and the pools are float64.
    steps_seen : int
    state : dict
        ``'dn'`` ``(n_streams, n_windows, n_inputs, order)``: the states after the last
        whole block; ``'pools'`` ``(n_streams, n_windows, n_inputs, order, n_biases + 3)``:
        per state the counts of blocks above each threshold, then the sum, maximum and
        minimum over the whole blocks; ``'steps_seen'``; with ``stride > 1``
        ``'block_sum'`` ``(n_streams, n_channels)``, the sum of the inputs of the block
        under way; with ``difference`` ``'previous'`` ``(n_streams, n_channels)``, the
        input (block mean) of the last whole block.

    Notes
    -----
    A proportion pool counts the steps on which a state exceeds a threshold: where a state
    equals a threshold exactly (inputs that repeat exact values, such as integers, can
    give the very state a threshold was fitted on), stream and batch compute it with
    different rounding and may count that step differently.
    """

    _device_attributes = (
        "_step",
        "_blocks",
        "_biases",
        "_buffer",
        "_next",
        "_cmp",
        "_above",
        "_total",
        "_high",
        "_low",
        "_block_sum",
        "_previous",
    )

    def __init__(self, features, n_streams: int = 1, return_device_arrays: bool | None = None):
        check_is_fitted(features)
        self.n_streams = _check_n_streams(n_streams)
        stride = getattr(features, "stride_", features.stride)
        difference = getattr(features, "difference_", features.difference)
        if isinstance(stride, bool) or not isinstance(stride, numbers.Integral) or stride < 1:
            raise ValueError(
                f"The fitted stride must be an integer >= 1; got {stride!r}. Fit the "
                "transformer again."
            )
        self.stride = int(stride)
        self.difference = bool(difference)
        self._biases_host = np.asarray(features.biases_, dtype=np.float64)
        self.n_windows, self.n_inputs, self.order, self.n_biases = self._biases_host.shape
        self.n_channels = int(features.n_channels_)
        if self.n_inputs != self.n_channels * (2 if self.difference else 1):
            raise ValueError(
                f"The fitted thresholds serve {self.n_inputs} inputs, not the "
                f"{self.n_channels} channel(s){' and their differences' * self.difference} "
                "of the fitted transformer: difference was changed after fit. Fit again."
            )
        self._Abars = np.asarray(features.state_matrices_, dtype=np.float64)
        self._Bbars = np.asarray(features.input_matrices_, dtype=np.float64)
        self.n_features = int(features.n_features_out_)
        self.channels_first = bool(getattr(features, "channels_first", False))
        self.dtype = np.dtype(check_dtype_param(features.dtype) or np.float64)
        self.device = features.device
        if return_device_arrays is None:
            return_device_arrays = bool(features.return_gpu_arrays)
        self.return_device_arrays = return_device_arrays
        states = self.n_windows * self.n_streams * self.n_inputs * self.order
        check_fits(
            states * (17 * self.n_biases + 8 * 6),
            f"A pooled stream of {self.n_streams} sequences with {self.n_features} features",
            "Use fewer streams per object (several streams can run side by side).",
        )
        self._setup(get_array_module(self.device))
        self.reset()

    # ------------------------------------------------------------------ device and state
    def _setup(self, xp: ModuleType) -> None:
        self._xp = xp
        self._step = xp.asarray(_step_matrix(self._Abars, self._Bbars))  # (W, d + 1, d)
        # thresholds first, against states (W, n_streams, n_inputs, order): the comparisons
        # then run along the states, not along the few thresholds
        self._biases = xp.asarray(np.moveaxis(self._biases_host, -1, 0)[:, :, None])
        self._blocks = None  # block weights of every window, for chunks

    def _allocate(self) -> None:
        xp = self._xp
        W, n, k, d, b = self.n_windows, self.n_streams, self.n_inputs, self.order, self.n_biases
        f64 = np.float64
        self._buffer = _filled(xp, (W, n * k, d + 1), 0.0, f64)  # state, then input slot
        self._next = xp.empty((W, n * k, d), f64)
        self._cmp = xp.empty((b, W, n, k, d), bool)
        # the pools: counts above each threshold, sum, maximum and minimum of every state
        self._above = _filled(xp, (b, W, n, k, d), 0, np.int64)
        self._total = _filled(xp, (W, n, k, d), 0.0, f64)
        self._high = _filled(xp, (W, n, k, d), -np.inf, f64)
        self._low = _filled(xp, (W, n, k, d), np.inf, f64)
        c = self.n_channels
        self._block_sum = _filled(xp, (n, c), 0.0, f64) if self.stride > 1 else None
        self._previous = _filled(xp, (n, c), 0.0, f64) if self.difference else None

    def _state_dtype(self, name: str) -> np.dtype:
        return np.dtype(np.float64)

    def _pools(self, above: Array, total: Array, high: Array, low: Array) -> Array:
        """The pools in the features' layout ``(n_streams, W, n_inputs, order, n_biases +
        3)``: counts, sum, maximum and minimum (float64, a new array)."""
        b = self.n_biases
        out = self._xp.empty((self.n_streams, *total.shape[:1], *total.shape[2:], b + 3))
        out[..., :b] = above.transpose(2, 1, 3, 4, 0)
        for column, pool in enumerate((total, high, low), start=b):
            out[..., column] = pool.transpose(1, 0, 2, 3)
        return out

    def _put_pools(self, a: Array) -> None:
        b = self.n_biases
        self._above[...] = a[..., :b].transpose(4, 1, 0, 2, 3)
        for column, pool in enumerate((self._total, self._high, self._low), start=b):
            pool[...] = a[..., column].transpose(1, 0, 2, 3)

    def _state_spec(self) -> dict:
        W, n, k, d, b = self.n_windows, self.n_streams, self.n_inputs, self.order, self.n_biases
        c = self.n_channels

        def put_dn(a):
            self._buffer[..., :d] = a.transpose(1, 0, 2, 3).reshape(W, n * k, d)

        def put(name):
            def assign(a):
                getattr(self, name)[...] = a

            return assign

        def pools_allowed(steps: int):
            if steps >= self.stride:
                return None
            # before the first whole block the maximum and minimum are still -inf and +inf
            allowed = np.zeros(b + 3)
            allowed[b + 1 :] = (-np.inf, np.inf)
            return allowed

        spec = {
            "dn": (
                (n, W, k, d),
                lambda: self._buffer[..., :d].reshape(W, n, k, d).transpose(1, 0, 2, 3),
                put_dn,
                _finite,
            ),
            "pools": (
                (n, W, k, d, b + 3),
                lambda: self._pools(self._above, self._total, self._high, self._low),
                self._put_pools,
                pools_allowed,
            ),
        }
        if self.stride > 1:
            spec["block_sum"] = ((n, c), lambda: self._block_sum, put("_block_sum"), _finite)
        if self.difference:
            spec["previous"] = ((n, c), lambda: self._previous, put("_previous"), _finite)
        return spec

    def _check_state(self, arrays: dict, steps: int) -> None:
        counts = arrays["pools"][..., : self.n_biases]
        blocks = steps // self.stride
        xp = self._xp
        if not bool(((counts >= 0) & (counts <= blocks) & (counts == xp.round(counts))).all()):
            raise ValueError(
                f"state['pools'][..., :{self.n_biases}] must hold counts of blocks, whole "
                f"numbers from 0 to {blocks} (steps_seen // stride)."
            )

    # ------------------------------------------------------------------ update
    def _advance(self, U: Array, original: Array) -> None:
        X = self._cast(U, np.float64)
        self._check_range(X, original)
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite results raise below
            self._advance_blocks(X, original)

    def _advance_blocks(self, X: Array, original: Array) -> None:
        xp, d = self._xp, self.order
        means, block_sum = self._block_inputs(X)
        if means.shape[1] == 0:  # still within the block under way
            self._block_sum[...] = block_sum
            self._steps_seen += X.shape[1]
            return
        inputs, previous = self._with_difference(means, self._steps_seen // self.stride)
        n, m, k = inputs.shape
        rows = inputs.transpose(0, 2, 1).reshape(n * k, m)
        if m == 1:
            state = self._one_step(rows[:, 0], self._buffer, out=self._next)
            total = self._total + state.reshape(self._total.shape)
            if not (bool(xp.isfinite(state).all()) and bool(xp.isfinite(total).all())):
                raise self._non_finite_error(original)
            self._add_step(state, self._above, self._total, self._high, self._low)
        else:
            state, pools = self._chunk_states(rows)
            if not (bool(xp.isfinite(state).all()) and bool(xp.isfinite(pools[1]).all())):
                raise self._non_finite_error(original)
            self._above, self._total, self._high, self._low = pools
        # everything computed and checked: commit
        self._buffer[..., :d] = state
        if block_sum is not None:
            self._block_sum[...] = block_sum
        if previous is not None:
            self._previous[...] = previous
        self._steps_seen += X.shape[1]

    def _block_inputs(self, X: Array):
        """The means of the blocks ``X`` completes ``(n, n_blocks, c)`` and the sum of the
        steps of the block then under way (None for ``stride == 1``)."""
        s = self.stride
        if s == 1:
            return X, None
        xp = self._xp
        n, k, c = X.shape
        filled = self._steps_seen % s
        missing = (s - filled) % s  # steps that complete the block under way
        if filled and k < missing:
            return X[:, :0], self._block_sum + X.sum(axis=1)
        parts = []
        if filled:
            parts.append(((self._block_sum + X[:, :missing].sum(axis=1)) / s)[:, None])
        rest = X[:, missing:]
        whole = rest.shape[1] // s
        if whole:
            parts.append(rest[:, : whole * s].reshape(n, whole, s, c).sum(axis=2) / s)
        if not parts:  # no block completed: the chunk stays within the first one
            return X[:, :0], self._block_sum + X.sum(axis=1)
        means = parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=1)
        return means, rest[:, whole * s :].sum(axis=1)

    def _with_difference(self, means: Array, blocks_done: int):
        """The DN inputs of the blocks ``means``: with ``difference``, their first
        difference as further channels (zero for the first block of a sequence)."""
        if not self.difference:
            return means, None
        xp = self._xp
        previous = self._previous if blocks_done else means[:, 0]
        diffs = xp.empty_like(means)
        diffs[:, 0] = means[:, 0] - previous
        diffs[:, 1:] = means[:, 1:] - means[:, :-1]
        return xp.concatenate([means, diffs], axis=2), means[:, -1]

    def _one_step(self, x: Array, buffer: Array, out: Array = None) -> Array:
        """The states ``(W, n * n_inputs, order)`` after the block input ``x`` ``(n *
        n_inputs,)`` from the states in ``buffer`` (whose input slot takes ``x``)."""
        buffer[..., self.order] = x
        return self._xp.matmul(buffer, self._step, out=out)

    def _add_step(self, states: Array, above, total, high, low) -> None:
        """Add the states ``(W, n * n_inputs, order)`` of one step to the pools, in place."""
        xp = self._xp
        states = states.reshape(total.shape)
        xp.greater(states[None], self._biases, out=self._cmp)
        xp.add(above, self._cmp, out=above)
        total += states
        xp.maximum(high, states, out=high)
        xp.minimum(low, states, out=low)

    def _chunk_states(self, rows: Array):
        """The states after the block inputs ``rows`` ``(n * n_inputs, m)`` and the pools
        with them (new arrays), every state computed in time blocks."""
        xp, d = self._xp, self.order
        W, n, k, b = self.n_windows, self.n_streams, self.n_inputs, self.n_biases
        block = block_steps(d, None, _device_name(xp))
        if self._blocks is None:  # from the fitted systems, as fitted
            self._blocks = [
                xp.asarray(constants.block_matrix(A, impulse_response(A, B, block), block))
                for A, B in zip(self._Abars, self._Bbars, strict=True)
            ]
        above, total, high, low = (
            a.copy() for a in (self._above, self._total, self._high, self._low)
        )
        state = xp.empty((W, n * k, d))
        # streams per group: a block of states and its comparisons within _BLOCK_BYTES
        group = max(1, _BLOCK_BYTES // (k * block * d * (b + 16)))
        for w in range(W):
            thresholds = self._biases[:, w, :, :, None, :]  # (b, 1, k, 1, d)
            for s0 in range(0, n, group):
                s1 = min(n, s0 + group)
                r0, r1 = s0 * k, s1 * k
                G = None
                blocks = algebra.iter_blocks(
                    rows[r0:r1], self._blocks[w], d, xp, state=self._buffer[w, r0:r1, :d]
                )
                for _, G in blocks:
                    states = G.reshape(s1 - s0, k, G.shape[1], d)
                    above[:, w, s0:s1] += (states[None] > thresholds).sum(axis=3)
                    total[w, s0:s1] += states.sum(axis=2)
                    xp.maximum(high[w, s0:s1], states.max(axis=2), out=high[w, s0:s1])
                    xp.minimum(low[w, s0:s1], states.min(axis=2), out=low[w, s0:s1])
                state[w, r0:r1] = G[:, -1]
        return state, (above, total, high, low)

    # ------------------------------------------------------------------ features
    def _feature_rows(self) -> Array:
        self._check_seen()
        xp, b = self._xp, self.n_biases
        blocks = self._steps_seen // self.stride
        out = self._pools(self._above, self._total, self._high, self._low)
        if self._steps_seen % self.stride:
            # the block under way, averaged over its own steps, evaluated but not committed
            partial = self._steps_seen % self.stride
            inputs, _ = self._with_difference((self._block_sum / partial)[:, None], blocks)
            states = self._one_step(inputs[:, 0].reshape(-1), self._buffer.copy())
            states = states.reshape(self._total.shape)
            out[..., :b] += (states[None] > self._biases).transpose(2, 1, 3, 4, 0)
            by_stream = states.transpose(1, 0, 2, 3)
            out[..., b] += by_stream
            xp.maximum(out[..., b + 1], by_stream, out=out[..., b + 1])
            xp.minimum(out[..., b + 2], by_stream, out=out[..., b + 2])
            blocks += 1
        out[..., : b + 1] /= blocks
        F = out.reshape(self.n_streams, -1)
        if self.dtype == np.float64:
            return F
        with np.errstate(over="ignore"):
            F = F.astype(self.dtype)
        if not bool(xp.isfinite(F).all()):
            raise ValueError(
                f"The pooled features of the prefixes seen overflow {self.dtype.name}; use "
                "dtype='float64' or rescale the input."
            )
        return F

    def transform(self) -> Array:
        """Pooled features of the prefixes seen so far, shape ``(n_streams, n_features)``.

        Equal to ``LMUPooledFeatures.transform`` of the prefixes. A NumPy array, or a CuPy
        array when computed on the GPU and the transformer has ``return_gpu_arrays=True``.
        """
        return super().transform()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_streams={self.n_streams}, n_channels={self.n_channels}, "
            f"n_windows={self.n_windows}, order={self.order}, stride={self.stride}, "
            f"steps_seen={self._steps_seen})"
        )


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

    def __call__(self, F: Array) -> Array:
        """Output activations for the feature rows ``F``; a buffer (do not keep it)."""
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
        scaled = bool(estimator.scale_features)
        self._mean = np.asarray(estimator.feature_mean_) if scaled else None
        self._scale = np.asarray(estimator.feature_scale_) if scaled else None
        # a snapshot: refitting the estimator does not change the stream
        self._head = copy.deepcopy(estimator.head_)
        self._dense = _is_dense_head(self._head)
        self._outputs_of = None

    # ------------------------------------------------------------------ delegation
    n_streams = property(lambda self: self._stream.n_streams)
    n_channels = property(lambda self: self._stream.n_channels)
    steps_seen = property(lambda self: self._stream.steps_seen)

    @property
    def state(self) -> dict:
        """The features stream's :attr:`~DNStream.state` (the head has none)."""
        return self._stream.state

    @state.setter
    def state(self, value: dict) -> None:
        self._stream.state = value

    def update(self, U):
        """Advance every sequence by one step or a chunk; see :meth:`DNStream.update`."""
        self._stream.update(U)
        return self

    def reset(self):
        """Forget everything seen."""
        self._stream.reset()
        return self

    def transform(self) -> np.ndarray:
        """The features of the prefixes seen (unscaled), as ``features_.transform``."""
        return to_numpy(self._stream.transform())

    # ------------------------------------------------------------------ head
    def _feature_rows(self) -> tuple[Array, ModuleType]:
        stream = self._stream
        if hasattr(stream, "_feature_rows"):
            return stream._feature_rows(), stream._xp
        return np.asarray(stream.transform()), np  # another stream: its public answer

    def _outputs(self) -> Array:
        """Output activations of the dense head, on the stream's device (a buffer)."""
        F, xp = self._feature_rows()
        forward = self._outputs_of
        if forward is None or forward.xp is not xp:
            forward = self._outputs_of = _DenseOutputs(
                self._head, self._mean, self._scale, F.shape[0], xp
            )
        return forward(F)

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
        saved = dict(self.__dict__)
        saved["_outputs_of"] = None
        return saved

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._stream!r})"


class ClassifierStream(_ModelStream):
    """A fitted :class:`~lmu_sk.LMUClassifier` run online; made by its ``stream`` method.

    After every :meth:`update`, :meth:`predict`, :meth:`predict_proba`,
    :meth:`predict_log_proba` and :meth:`decision_function` (those the head has) answer
    what the classifier answers for the prefixes seen: an early classifier.
    """

    @available_if(lambda self: self._dense or hasattr(self._head, "predict_proba"))
    def predict_proba(self) -> np.ndarray:
        """Class probabilities of the prefixes seen, ``(n_streams, n_classes)``, float64."""
        if not self._dense:
            return to_numpy(self._head.predict_proba(self._scaled_features()))
        p = to_numpy(self._outputs()).astype(np.float64)
        if p.shape[1] == 1:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        return p

    @available_if(lambda self: self._dense or hasattr(self._head, "predict_proba"))
    def predict_log_proba(self) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        p = self.predict_proba()
        with np.errstate(divide="ignore"):
            return np.log(p, out=p)

    @available_if(_head_has("decision_function"))
    def decision_function(self) -> np.ndarray:
        """The head's scores of the prefixes seen, ``(n_streams,)`` or
        ``(n_streams, n_classes)``."""
        return to_numpy(self._head.decision_function(self._scaled_features()))

    def predict(self) -> np.ndarray:
        """Predicted class labels of the prefixes seen, ``(n_streams,)``."""
        if not self._dense:
            return to_numpy(self._head.predict(self._scaled_features()))
        y = to_numpy(self._outputs())
        if y.shape[1] == 1:
            y = y.ravel()
        return self._head._label_binarizer.inverse_transform(y)


class RegressorStream(_ModelStream):
    """A fitted :class:`~lmu_sk.LMURegressor` run online; made by its ``stream`` method.

    After every :meth:`update`, :meth:`predict` answers what the regressor answers for the
    prefixes seen; for ``feature_output='sequence'`` its prediction at the latest step.
    """

    def predict(self) -> np.ndarray:
        """Predicted targets, ``(n_streams,)`` or ``(n_streams, n_outputs)``, float64."""
        if not self._dense:
            return to_numpy(self._head.predict(self._scaled_features()))
        y = to_numpy(self._outputs()).astype(np.float64)
        return y.ravel() if y.shape[1] == 1 else y
