"""Streaming inference: a fitted model run as a recurrent network, one step or chunk at a time.

A stream holds the Delay Network (DN) state of ``n_streams`` independent sequences and
whatever the feature output needs besides: the running sum of the states for 'mean', their
running maximum for 'max'. After every update it answers what its estimator answers for
the sequences seen so far (their *prefix*).

One step is one matrix product with the state kept next to its input slot::

    [m_t, u_{t+1}] @ [[Abar.T], [Bbar]] = m_{t+1}

A chunk of ``k`` steps goes through the impulse response ``H[j] = Abar^j Bbar`` and a
power of the state matrix, without a loop over steps::

    m_{t+k} = Abar^k m_t + sum_{j<k} H[k-1-j] u_{t+1+j}
    sum_{s=1..k} m_{t+s} = S_k m_t + sum_{j<k} C[k-1-j] u_{t+1+j}

with ``C = cumsum(H)`` and ``S_k = sum_{s=1..k} Abar^s``; ``Abar^k m`` and ``S_k m`` are
applied through the binary digits of ``k`` with precomputed ``Abar^(2^i)`` and
``S_(2^i)`` (``S_(a+b) m = S_a m + S_b Abar^a m``). The running maximum needs every state
of the chunk: they are computed in time blocks of a few steps, one GEMM each (the block
weights of :mod:`lmu_sk.kernels.cpu_gemm`), holding one block at a time; for fewer rows
than steps per block, step by step instead (as many flops, and the step matrix stays in
cache while the block weights would be streamed from memory).

The matrices are built in float64 and the state is kept in the features' dtype, as in the
batch transform. Every array operation goes through the array module ``xp`` of the state
(NumPy, or CuPy with the same code).
"""

from __future__ import annotations

import copy
import math
import numbers
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _compute
from ._device import get_array_module, to_numpy
from ._input import is_device_array
from ._memory import check_fits
from .dn import impulse_response
from .kernels.cpu_gemm import block_weights
from .neural.activations import ACTIVATIONS

__all__ = ["STREAM_OUTPUTS", "ClassifierStream", "DNStream", "RegressorStream"]

#: Feature outputs a stream can carry; a new output needs its running state here.
STREAM_OUTPUTS = ("final", "sequence", "mean", "max")

Array = Any

# Longest piece of a chunk handled by one GEMM through the impulse response (longer chunks
# are split); the tables for it take at most _TABLE_BYTES.
_MAX_PIECE = 4096
_TABLE_BYTES = 64 * 1024**2
# Working memory of the time blocks of 'max' per group of rows.
_BLOCK_BYTES = 64 * 1024**2


# ---------------------------------------------------------------------------- tables (float64)
@lru_cache(maxsize=8)
def _power_tables(order: int, theta: float, discretizer: str, n_levels: int, sums: bool):
    """``Abar^(2^i)`` and, with ``sums``, ``S_(2^i) = sum_{s=1..2^i} Abar^s`` for
    ``i < n_levels``, transposed (``None`` without ``sums``).

    Built by squaring in float64: ``Abar^(2n) = (Abar^n)^2``, ``S_2n = S_n + Abar^n S_n``.
    """
    Abar, _ = _compute._system(order, theta, discretizer)
    powers, partial = [Abar.copy()], [Abar.copy()]
    for _ in range(1, n_levels):
        if sums:
            partial.append(partial[-1] + powers[-1] @ partial[-1])
        powers.append(powers[-1] @ powers[-1])
    tables = [np.stack([p.T for p in powers]), np.stack([s.T for s in partial]) if sums else None]
    for table in tables:
        if table is not None:
            table.flags.writeable = False
    return tuple(tables)


@lru_cache(maxsize=8)
def _impulse_tables(order: int, theta: float, discretizer: str, length: int):
    """``H`` and ``cumsum(H)`` for ``length`` steps, reversed in time (row ``j`` is lag
    ``length - 1 - j``), float64."""
    H = impulse_response(*_compute._system(order, theta, discretizer), length)
    tables = np.ascontiguousarray(H[::-1]), np.ascontiguousarray(np.cumsum(H, axis=0)[::-1])
    for table in tables:
        table.flags.writeable = False
    return tables


@lru_cache(maxsize=8)
def _step_weights(order: int, theta: float, discretizer: str) -> np.ndarray:
    """``[[Abar.T], [Bbar]]``, shape ``(order + 1, order)``: one step as one product."""
    Abar, Bbar = _compute._system(order, theta, discretizer)
    weights = np.vstack([Abar.T, Bbar[None]])
    weights.flags.writeable = False
    return weights


def _piece_limit(order: int) -> int:
    """Steps per GEMM piece: a power of two, at most ``_MAX_PIECE``, tables within budget."""
    fits = max(1, _TABLE_BYTES // (2 * 8 * order))
    return 1 << min(int(math.log2(_MAX_PIECE)), int(math.log2(fits)))


def _filled(xp: ModuleType, shape: tuple, value: float, dtype: np.dtype) -> Array:
    a = xp.empty(shape, dtype)
    a[...] = value
    return a


# ---------------------------------------------------------------------------- the DN stream
class DNStream:
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

    Attributes
    ----------
    n_streams, n_channels, order, output : int, int, int, str
    dtype : numpy.dtype
        Dtype of the state and the features: the transformer's ``dtype``, or float64 when
        that is None.
    steps_seen : int
        Steps since creation or the last :meth:`reset`.

    Notes
    -----
    The DN state stays where the transformer computes: on the GPU (CuPy) when its
    ``device`` resolves to one, else on the CPU; the first CuPy input moves a CPU stream
    to the device. Pickling stores NumPy arrays, so a pickled stream loads anywhere.
    """

    def __init__(self, features, n_streams: int = 1, return_device_arrays: bool | None = None):
        check_is_fitted(features)
        if isinstance(n_streams, bool) or not isinstance(n_streams, numbers.Integral):
            raise TypeError(f"n_streams must be a positive integer; got {n_streams!r}.")
        if n_streams < 1:
            raise ValueError(f"n_streams must be a positive integer; got {n_streams}.")
        if features.output not in STREAM_OUTPUTS:
            raise ValueError(
                f"Streaming supports the outputs {STREAM_OUTPUTS}; this model's features "
                f"use output {features.output!r}. Predict on whole sequences instead."
            )
        self.n_streams = int(n_streams)
        self.order = int(features.order)
        self.theta = float(features.theta_)
        self.discretizer = features.discretizer
        self.output = features.output
        self.n_channels = int(features.n_channels_)
        self.channels_first = bool(getattr(features, "channels_first", False))
        self.dtype = np.dtype(features.dtype or np.float64)
        self.device = features.device
        if return_device_arrays is None:
            return_device_arrays = bool(features.return_gpu_arrays)
        self.return_device_arrays = return_device_arrays
        rows, d = self.n_streams * self.n_channels, self.order
        check_fits(
            (4 * rows * (d + 1) + 2 * d * d) * self.dtype.itemsize,
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
        key = (self.order, self.theta, self.discretizer)
        self._key = key
        self._step = xp.asarray(_step_weights(*key), dtype=self.dtype)
        self._powers = self._sums = None  # Abar^(2^i), S_(2^i), transposed
        self._impulse = self._cumulative = None  # reversed H, reversed cumsum(H)
        self._blocks = None  # block weights of 'max'

    def _move_to(self, xp: ModuleType) -> None:
        state = self.state
        self._setup(xp)
        self._allocate()
        self.state = state

    def _allocate(self) -> None:
        xp, rows, d = self._xp, self.n_streams * self.n_channels, self.order
        # the state lives in columns :d of an (rows, d + 1) buffer, column d is the input slot
        self._buffer = _filled(xp, (rows, d + 1), 0.0, self.dtype)
        self._next = xp.empty((rows, d), self.dtype)
        self._pooled = None
        if self.output in ("mean", "max"):
            start = 0.0 if self.output == "mean" else -np.inf
            self._pooled = _filled(xp, (rows, d), start, self.dtype)

    def _power_levels(self, n_levels: int) -> None:
        if self._powers is None or len(self._powers) < n_levels:
            with_sums = self.output == "mean"
            powers, sums = _power_tables(*self._key, n_levels, with_sums)
            self._powers = self._xp.asarray(powers, dtype=self.dtype)
            if with_sums:
                self._sums = self._xp.asarray(sums, dtype=self.dtype)

    def _impulse_length(self, length: int) -> None:
        if self._impulse is None or len(self._impulse) < length:
            impulse, cumulative = _impulse_tables(*self._key, length)
            self._impulse = self._xp.asarray(impulse, dtype=self.dtype)
            if self.output == "mean":
                self._cumulative = self._xp.asarray(cumulative, dtype=self.dtype)

    # ------------------------------------------------------------------ public state
    @property
    def steps_seen(self) -> int:
        """Steps seen since creation or the last :meth:`reset`."""
        return self._steps_seen

    def reset(self) -> DNStream:
        """Forget everything seen: zero state, zero steps."""
        self._allocate()
        self._steps_seen = 0
        return self

    @property
    def state(self) -> dict:
        """A copy of everything the stream carries, for checkpoints.

        ``{'dn': (n_streams, n_channels, order), 'steps_seen': int}`` plus
        ``'sum'`` (output 'mean') or ``'max'`` (output 'max') of shape
        ``(n_streams, n_channels * order)``, the running sum or maximum of the states.
        Arrays live where the stream computes. Assign such a dict to restore it.
        """
        n, c, d = self.n_streams, self.n_channels, self.order
        state = {"dn": self._buffer[:, :d].reshape(n, c, d).copy(), "steps_seen": self._steps_seen}
        if self._pooled is not None:
            state[self.output] = self._pooled.reshape(n, c * d).copy()
        return state

    @state.setter
    def state(self, value: dict) -> None:
        n, c, d = self.n_streams, self.n_channels, self.order
        expected = {"dn", "steps_seen"} | ({self.output} if self._pooled is not None else set())
        if not isinstance(value, dict) or set(value) != expected:
            got = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ValueError(
                f"state must be a dict with the keys {sorted(expected)} (as read from "
                f"stream.state); got {got}."
            )
        steps = value["steps_seen"]
        if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
            raise ValueError(f"state['steps_seen'] must be an integer >= 0; got {steps!r}.")
        xp = self._xp
        dn = self._checked_array(value["dn"], "dn", (n, c, d), allow_minus_inf=False)
        pooled = None
        if self._pooled is not None:
            pooled = self._checked_array(
                value[self.output], self.output, (n, c * d), allow_minus_inf=steps == 0
            )
        # everything checked: now assign
        self._buffer[:, :d] = xp.asarray(dn.reshape(n * c, d))
        if pooled is not None:
            self._pooled[...] = xp.asarray(pooled.reshape(n * c, d))
        self._steps_seen = int(steps)

    def _checked_array(self, a, name: str, shape: tuple, allow_minus_inf: bool):
        a = a if is_device_array(a) or isinstance(a, np.ndarray) else np.asarray(a)
        if a.dtype.kind not in "biuf":
            raise TypeError(f"state[{name!r}] must hold real numbers; got dtype {a.dtype}.")
        if a.shape != shape:
            raise ValueError(
                f"state[{name!r}] must have shape {shape} for this stream "
                f"(n_streams={self.n_streams}, n_channels={self.n_channels}, "
                f"order={self.order}); got {a.shape}."
            )
        xp = self._xp
        a = xp.asarray(a, dtype=self.dtype)
        ok = xp.isfinite(a) | (a == -np.inf) if allow_minus_inf else xp.isfinite(a)
        if not bool(ok.all()):
            raise ValueError(f"state[{name!r}] contains NaN or infinity.")
        return a

    # ------------------------------------------------------------------ update
    def update(self, U) -> DNStream:
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
            For a wrong shape, non-numeric data, NaN or infinity, or features that would
            overflow the dtype; the stream is then left as it was.
        """
        if is_device_array(U) and self._xp is np:
            self._move_to(get_array_module("gpu"))
        xp = self._xp
        if not isinstance(U, xp.ndarray):
            U = xp.asarray(np.asarray(U))
        if U.dtype.kind not in "biuf":
            raise TypeError(f"U must hold real numbers; got an array of dtype {U.dtype}.")
        if self.channels_first and U.ndim == 3:
            U = U.swapaxes(1, 2)
        n, c = self.n_streams, self.n_channels
        shape = U.shape
        if U.ndim == 3 or (U.ndim == 2 and c == 1):  # a chunk
            if shape[0] != n or (U.ndim == 3 and shape[2] != c):
                raise self._shape_error(shape)
            if shape[1] == 0:
                return self
            if shape[1] > 1:
                rows = U.reshape(n, -1) if c == 1 else U.transpose(0, 2, 1).reshape(n * c, -1)
                return self._advance_chunk(rows.astype(self.dtype, copy=False))
            U = U.reshape(n * c)
        elif (U.ndim == 1 and c == 1 and shape[0] == n) or (U.ndim == 2 and shape == (n, c)):
            U = U.reshape(n * c)
        elif not (U.ndim == 0 and n * c == 1):
            raise self._shape_error(shape)
        return self._advance_step(U)

    def _shape_error(self, shape: tuple) -> ValueError:
        n, c = self.n_streams, self.n_channels
        if c == 1:
            forms = f"({n},) for one step or ({n}, n_steps) for a chunk"
        else:
            forms = f"({n}, {c}) for one step or ({n}, n_steps, {c}) for a chunk"
        return ValueError(
            f"U of shape {shape} does not fit this stream of {n} sequence(s) with {c} "
            f"channel(s); pass {forms}."
        )

    def _advance_step(self, u: Array) -> DNStream:
        xp, d = self._xp, self.order
        buffer, state = self._buffer, self._next
        buffer[:, d] = u
        # into a contiguous array: BLAS needs one (a strided output falls back to a loop)
        xp.matmul(buffer, self._step, out=state)
        if not bool(xp.isfinite(state).all()):
            raise self._non_finite_error(u)
        buffer[:, :d] = state
        if self.output == "mean":
            self._pooled += state
        elif self.output == "max":
            xp.maximum(self._pooled, state, out=self._pooled)
        self._steps_seen += 1
        return self

    def _advance_chunk(self, rows: Array) -> DNStream:
        """Advance by the chunk ``rows`` of shape ``(n_streams * n_channels, n_steps)``."""
        xp, d = self._xp, self.order
        state = self._buffer[:, :d]
        pooled = self._pooled
        if self.output == "max":
            state, pooled = self._chunk_max(rows, state, pooled)
        else:
            limit = _piece_limit(d)
            for start in range(0, rows.shape[1], limit):
                state, pooled = self._chunk_piece(rows[:, start : start + limit], state, pooled)
        if not bool(xp.isfinite(state).all()) or (
            self.output == "mean" and not bool(xp.isfinite(pooled).all())
        ):
            raise self._non_finite_error(rows)
        self._buffer[:, :d] = state
        if pooled is not None:
            self._pooled = pooled
        self._steps_seen += rows.shape[1]
        return self

    def _chunk_piece(self, rows: Array, state: Array, pooled: Array | None):
        """New state (and running sum) after the steps ``rows`` through the impulse response."""
        k = rows.shape[1]
        length = 1 << (k - 1).bit_length()  # tables in powers of two: few distinct sizes
        self._impulse_length(length)
        self._power_levels(k.bit_length())
        carried, carried_sum = state, None
        for level in range(k.bit_length()):
            if k >> level & 1:
                if pooled is not None:
                    term = carried @ self._sums[level]
                    carried_sum = term if carried_sum is None else carried_sum + term
                carried = carried @ self._powers[level]
        new_state = carried + rows @ self._impulse[len(self._impulse) - k :]
        if pooled is None:
            return new_state, None
        return new_state, pooled + carried_sum + rows @ self._cumulative[
            len(self._cumulative) - k :
        ]

    def _chunk_max(self, rows: Array, state: Array, pooled: Array):
        """New state and running maximum, every state of the chunk in blocks of a few steps."""
        xp, d = self._xp, self.order
        block = _compute.block_length(d)
        if self._blocks is None:
            H = _impulse_tables(*self._key, block)[0][::-1]
            weights = block_weights(_compute._system(*self._key)[0], H, block)
            self._blocks = xp.asarray(weights, dtype=self.dtype)
        n_rows, k = rows.shape
        new_max = pooled.copy()
        if n_rows < block:
            # as many flops either way; for a few rows the (order + 1, order) step matrix
            # stays in cache while the block weights would be streamed from memory
            carry = xp.empty((n_rows, d + 1), self.dtype)
            carry[:, :d] = state
            new_state = xp.empty((n_rows, d), self.dtype)
            for t in range(k):
                carry[:, d] = rows[:, t]
                xp.matmul(carry, self._step, out=new_state)
                xp.maximum(new_max, new_state, out=new_max)
                carry[:, :d] = new_state
            return new_state, new_max
        group = max(1, _BLOCK_BYTES // (block * d * self.dtype.itemsize))
        new_state = xp.empty((n_rows, d), self.dtype)
        for r0 in range(0, n_rows, group):
            r1 = min(n_rows, r0 + group)
            carry = xp.empty((r1 - r0, d + block), self.dtype)
            carry[:, :d] = state[r0:r1]
            for t0 in range(0, k, block):
                steps = min(block, k - t0)
                carry[:, d : d + steps] = rows[r0:r1, t0 : t0 + steps]
                states = carry[:, : d + steps] @ self._blocks[: d + steps, : steps * d]
                states = states.reshape(r1 - r0, steps, d)
                xp.maximum(new_max[r0:r1], states.max(axis=1), out=new_max[r0:r1])
                carry[:, :d] = states[:, -1]
            new_state[r0:r1] = carry[:, :d]
        return new_state, new_max

    def _non_finite_error(self, U: Array) -> ValueError:
        if not bool(self._xp.isfinite(U).all()):
            return ValueError(
                "U contains NaN or infinity; the stream was left unchanged. Impute or drop "
                "missing values before updating."
            )
        return ValueError(
            f"The Delay Network state would overflow {self.dtype.name} for this input; the "
            "stream was left unchanged. Scale the input down or use dtype='float64'."
        )

    # ------------------------------------------------------------------ features
    def _check_seen(self) -> None:
        if self._steps_seen == 0:
            raise ValueError(
                "The stream has seen no step yet; call update() with at least one step first."
            )

    def _features(self) -> Array:
        """Features of the prefix seen, on the stream's device: ``(n_streams, n_channels,
        order)``, possibly a view of the internal state (do not modify)."""
        self._check_seen()
        n, c, d = self.n_streams, self.n_channels, self.order
        if self.output == "mean":
            return (self._pooled / self._steps_seen).reshape(n, c, d)
        if self.output == "max":
            return self._pooled.reshape(n, c, d)
        return self._buffer[:, :d].reshape(n, c, d)

    def transform(self) -> Array:
        """Features of the prefixes seen so far, shape ``(n_streams, n_channels * order)``.

        Equal to ``LMUFeatures.transform`` of the prefixes; for ``output='sequence'`` its
        last step. A NumPy array, or a CuPy array when computed on the GPU and the
        transformer has ``return_gpu_arrays=True``.
        """
        F = self._features().reshape(self.n_streams, -1).copy()
        return F if self.return_device_arrays else to_numpy(F)

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict:
        keep = {
            key: value
            for key, value in self.__dict__.items()
            if key
            not in ("_xp", "_step", "_powers", "_sums", "_impulse", "_cumulative", "_blocks")
            and key not in ("_buffer", "_next", "_pooled")
        }
        keep["_saved_state"] = {
            key: to_numpy(value) if key != "steps_seen" else value
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

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_streams={self.n_streams}, n_channels={self.n_channels}, "
            f"order={self.order}, output={self.output!r}, steps_seen={self._steps_seen})"
        )


# ---------------------------------------------------------------------------- the head
class _DenseForward:
    """The forward pass of a fitted dense head on the features of a stream.

    The weights are copied to ``xp`` once and every buffer is allocated once for the
    ``n_rows`` rows of the stream: a prediction allocates only its result. The feature
    standardization is applied as ``(F - mean)`` followed by the first layer with its
    rows divided by the scale.
    """

    def __init__(self, head, mean, scale, n_rows: int, xp: ModuleType):
        dtype = np.dtype(head.coefs_[0].dtype)
        first = np.asarray(head.coefs_[0], dtype=np.float64)
        if scale is not None:
            first = first / np.asarray(scale, dtype=np.float64)[:, None]
        self.coefs = [xp.asarray(first, dtype=dtype)] + [
            xp.asarray(c, dtype=dtype) for c in head.coefs_[1:]
        ]
        self.intercepts = [xp.asarray(b, dtype=dtype) for b in head.intercepts_]
        self.mean = None if mean is None else xp.asarray(mean, dtype=dtype)
        self.hidden = ACTIVATIONS[head.activation]
        self.out = ACTIVATIONS[head.out_activation_]
        self.xp = xp
        self.inputs = xp.empty((n_rows, first.shape[0]), dtype)
        self.acts = [xp.empty((n_rows, c.shape[1]), dtype) for c in self.coefs]

    def __call__(self, F: Array) -> Array:
        """Output activations for features ``F`` of shape ``(n_rows, ...)``; a buffer."""
        xp = self.xp
        inputs = self.inputs.reshape(F.shape)
        if self.mean is None:
            inputs[...] = F
        else:
            xp.subtract(F, self.mean.reshape(F.shape[1:]), out=inputs)
        x = self.inputs
        last = len(self.coefs) - 1
        layers = zip(self.coefs, self.intercepts, self.acts, strict=True)
        for i, (coef, intercept, z) in enumerate(layers):
            xp.matmul(x, coef, out=z)
            z += intercept
            (self.out if i == last else self.hidden)(z, xp)
            x = z
        return x


def _is_dense_head(head) -> bool:
    from .head import _BaseDenseHead

    return isinstance(head, _BaseDenseHead)


class _ModelStream:
    """A fitted LMU estimator as a stream: DN state, feature scaling and head.

    The dense heads of :mod:`lmu_sk.head` run through :class:`_DenseForward` (preallocated,
    no validation per call); any other head is asked through its own ``predict`` /
    ``predict_proba`` on the scaled features, so new heads stream without changes here.
    """

    def __init__(self, estimator, n_streams: int = 1):
        check_is_fitted(estimator, "head_")
        self._dn = DNStream(estimator.features_, n_streams, return_device_arrays=False)
        self.feature_output = estimator.feature_output
        self._scaled = bool(estimator.scale_features)
        self._mean = estimator.feature_mean_ if self._scaled else None
        self._scale = estimator.feature_scale_ if self._scaled else None
        # a snapshot: refitting the estimator does not change the stream
        self._head = copy.deepcopy(estimator.head_)
        self._forward = None

    # ------------------------------------------------------------------ delegation
    n_streams = property(lambda self: self._dn.n_streams)
    n_channels = property(lambda self: self._dn.n_channels)
    steps_seen = property(lambda self: self._dn.steps_seen)

    @property
    def state(self) -> dict:
        """See :attr:`DNStream.state`."""
        return self._dn.state

    @state.setter
    def state(self, value: dict) -> None:
        self._dn.state = value

    def update(self, U):
        """Advance every sequence by one step or a chunk; see :meth:`DNStream.update`."""
        self._dn.update(U)
        return self

    def reset(self):
        """Forget everything seen."""
        self._dn.reset()
        return self

    def transform(self):
        """The DN features of the prefixes seen (unscaled), as ``features_.transform``."""
        return self._dn.transform()

    # ------------------------------------------------------------------ head
    def _outputs(self) -> Array | None:
        """Output activations of a dense head (a buffer), or None for another head."""
        F = self._dn._features()
        if not _is_dense_head(self._head):
            return None
        xp = self._dn._xp
        if self._forward is None or self._forward.xp is not xp:
            self._forward = _DenseForward(self._head, self._mean, self._scale, len(F), xp)
        return self._forward(F)

    def _scaled_features(self):
        """Scaled feature rows for a head without a fast path, asked through its own API."""
        F = self._dn._features().reshape(self.n_streams, -1)
        if self._scaled:
            xp = self._dn._xp
            F = (F - xp.asarray(self._mean, dtype=F.dtype)) / xp.asarray(
                self._scale, dtype=F.dtype
            )
        return F

    def __getstate__(self) -> dict:
        saved = dict(self.__dict__)
        saved["_forward"] = None
        return saved

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n_streams={self.n_streams}, n_channels={self.n_channels}, "
            f"feature_output={self.feature_output!r}, steps_seen={self.steps_seen})"
        )


class ClassifierStream(_ModelStream):
    """A fitted :class:`~lmu_sk.LMUClassifier` run online; made by its ``stream`` method.

    After every :meth:`update`, :meth:`predict_proba`, :meth:`predict` and
    :meth:`predict_log_proba` answer what the classifier answers for the prefixes seen.
    """

    def predict_proba(self) -> np.ndarray:
        """Class probabilities of the prefixes seen, ``(n_streams, n_classes)``, float64."""
        out = self._outputs()
        if out is None:
            return self._head.predict_proba(self._scaled_features())
        p = to_numpy(out).astype(np.float64)
        if p.shape[1] == 1:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        return p

    def predict_log_proba(self) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        p = self.predict_proba()
        with np.errstate(divide="ignore"):
            return np.log(p, out=p)

    def predict(self) -> np.ndarray:
        """Predicted class labels of the prefixes seen, ``(n_streams,)``."""
        out = self._outputs()
        if out is None:
            return self._head.predict(self._scaled_features())
        y = to_numpy(out)
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
        out = self._outputs()
        if out is None:
            return self._head.predict(self._scaled_features())
        y = to_numpy(out).astype(np.float64)
        return y.ravel() if y.shape[1] == 1 else y
