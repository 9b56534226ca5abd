"""The engine's step mode: a carried state advanced by a chunk of steps, one step a chunk of one.

The streams (:mod:`lmu_sk.streaming`) hold the state of their sequences; the engine
advances it, with the batch's maps (:mod:`~lmu_sk.engine.algebra`), constants
(:mod:`~lmu_sk.engine.constants`) and kernels, and returns new arrays: the caller checks
them before it keeps them. As in state-spaces' s4, one object serves a whole sequence
and its steps: ``advance(chunk, state)`` returns the state after the chunk.

Delay Network states (:class:`CarriedDN`). A chunk of ``k`` steps goes through the
impulse response ``H[j] = Abar^j Bbar`` and a power of the state matrix, without a loop
over the steps::

    m_{t+k} = Abar^k m_t + sum_{j<k} H[k-1-j] u_{t+1+j}
    sum_{s=1..k} m_{t+s} = S_k m_t + sum_{j<k} C[k-1-j] u_{t+1+j}

with ``C = cumsum(H)`` and ``S_k = sum_{s=1..k} Abar^s``; ``Abar^k m`` and ``S_k m`` are
applied through the binary digits of ``k`` with the precomputed ``Abar^(2^i)`` and
``S_(2^i)`` (``S_(a+b) m = S_a m + S_b Abar^a m``). For ``k = 1`` the two products are one,
written for the increment of the state (smaller than the state, so rounded less)::

    m_{t+1} = m_t + [m_t, u_{t+1}] @ [[(Abar - I).T], [Bbar]]

The running maximum needs every state of the chunk: they come in time blocks from
:func:`~lmu_sk.engine.algebra.iter_blocks`, carrying the state, one block held at a time.

Pools of the pooled features (:class:`CarriedPools`), carried in the layout of the
compiled pooled kernel: on the CPU, the batch transform's kernel continued from them
(:func:`lmu_sk.kernels.cpu.pooled_window_carried`: the states in float64, compared with
the thresholds rounded to float32); on any other array module, the batch's one pool
arithmetic (:func:`~lmu_sk.engine.algebra.pool_blocks`), the states compared in the
features' dtype as the batch transform compares them there. On the CPU the kernel
finishes them too (:func:`lmu_sk.kernels.cpu.pooled_features`: the carried pools, only
read, continued over the block under way, written straight into the rows of features);
elsewhere :func:`~lmu_sk.engine.algebra.pool_values` does. The inputs of the pools,
made of the steps as they come (:func:`carried_inputs`, :func:`carried_block_means`,
:func:`cumsum_inputs`), carry what they need of the steps before.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from ..kernels import cpu
from ..kernels.cpu import CARRIED_SUMS
from . import algebra, constants
from .plan import block_steps, kernel_threads, pooled_update_seconds, rows_within
from .pooling import MOMENT_POOLS, THRESHOLD_POOLS, WindowSpec, state_columns

__all__ = [
    "CarriedDN",
    "CarriedPooledFeatures",
    "CarriedPools",
    "carried_block_means",
    "carried_inputs",
    "cumsum_inputs",
]

Array = Any

# Longest piece of a chunk handled by one GEMM through the impulse response (longer chunks
# are split); the tables for it take at most _TABLE_BYTES.
_MAX_PIECE = 4096
_TABLE_BYTES = 64 * 1024**2
# Working memory of one time block of states (and of the comparisons of the pools) per
# group of rows.
_BLOCK_BYTES = 64 * 1024**2


def _device(xp: ModuleType) -> str:
    return "cpu" if xp is np else "gpu"


def _piece_levels(order: int) -> int:
    """Powers of two of ``Abar`` a chunk piece needs: pieces have at most ``_MAX_PIECE``
    steps, and their impulse-response tables take at most ``_TABLE_BYTES``."""
    fits = max(1, _TABLE_BYTES // (2 * 8 * order))
    return min(int(math.log2(_MAX_PIECE)), int(math.log2(fits))) + 1


class CarriedDN:
    """One Delay Network advanced from carried states of rows, on ``xp`` in ``dtype``.

    Parameters
    ----------
    order, theta, discretizer
        The Delay Network.
    output : {'final', 'sequence', 'mean', 'max'}
        What is carried besides the state: nothing, the running sum of the states (float64)
        or their running maximum.
    dtype : float32 or float64
        Of the state (and of the running maximum).
    xp : module
    """

    def __init__(self, order: int, theta: float, discretizer: str, output: str, dtype, xp):
        self.key = (int(order), float(theta), discretizer)
        self.order = int(order)
        self.output = output
        self.dtype = np.dtype(dtype)
        self.xp = xp
        self._step = self._constant("step")
        self._carry = None  # [state, input] of one step
        self._powers = self._sums = None  # Abar^(2^i), S_(2^i), transposed
        self._impulse = self._cumulative = None  # reversed H, reversed cumsum(H)
        self._blocks = None  # the block matrix of 'max'

    def _constant(self, name: str, n_steps: int = 0, param: int = 0) -> Array:
        return constants.get(name, *self.key, n_steps, self.dtype, self.xp, param)

    def advance(
        self, rows: Array, state: Array, running: Array = None, rounding: Array = None
    ) -> tuple[Array, Array, Array]:
        """The state after the steps ``rows``, the running sum or maximum with them, and the
        state's carried rounding.

        Parameters
        ----------
        rows : array of shape (n_rows, n_steps), n_steps >= 1
            Inputs in ``dtype``.
        state : array of shape (n_rows, order)
            The state before the first step.
        running : array of shape (n_rows, order), optional
            For 'mean' the running sum of the states (float64), for 'max' their running
            maximum, over the steps before.
        rounding : array of shape (n_rows, order), optional
            What rounding added to ``state`` so far and single steps have not yet taken
            back (their Kahan compensation, as the batch recurrence carries it: a step's
            increment is small against the state, and without it a float32 stream of
            single steps drifts, ``4e-5`` of the scale over ``1e5`` steps of a window of
            ``1e7``); ``None``: none carried.

        Returns
        -------
        state, running, rounding : new arrays (``running`` None for 'final' and 'sequence',
        ``rounding`` None where none was given)
        """
        if rows.shape[1] == 1:
            new_state, rounding = self._one_step(rows, state, rounding)
            if self.output == "mean":
                return new_state, running + new_state, rounding
            if self.output == "max":
                return new_state, self.xp.maximum(running, new_state), rounding
            return new_state, None, rounding
        if rounding is not None:  # a chunk starts from the compensated state
            state = state - rounding
            rounding = self.xp.zeros_like(rounding)
        if self.output == "max":
            return (*self._chunk_max(rows, state, running), rounding)
        limit = 1 << (_piece_levels(self.order) - 1)
        for start in range(0, rows.shape[1], limit):
            state, running = self._chunk_piece(rows[:, start : start + limit], state, running)
        return state, running, rounding

    def _one_step(self, rows: Array, state: Array, rounding: Array = None) -> tuple:
        """``m + [m, u] @ [[(Abar - I).T], [Bbar]]``: the increment is small against the
        state (Abar is near I), so rounding it costs less than rounding ``Abar m`` (about
        4x less for order 32, theta 1000, in float32); with the carried ``rounding`` taken
        back from the increment and the addition's own rounding carried on (Kahan)."""
        d, n_rows = self.order, rows.shape[0]
        if self._carry is None or self._carry.shape[0] != n_rows:
            self._carry = self.xp.empty((n_rows, d + 1), self.dtype)
        carry = self._carry
        carry[:, :d] = state
        carry[:, d:] = rows
        increment = carry @ self._step
        if rounding is None:
            increment += state
            return increment, None
        increment -= rounding
        new_state = state + increment
        new_rounding = new_state - state
        new_rounding -= increment
        return new_state, new_rounding

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

    def _chunk_piece(self, rows: Array, state: Array, running: Array):
        """The state (and the running sum) after ``rows`` through the impulse response."""
        xp, k = self.xp, rows.shape[1]
        self._tables(1 << (k - 1).bit_length())  # tables in powers of two: few sizes
        carried, carried_sum = state, None
        for level in range(k.bit_length()):
            if k >> level & 1:
                if running is not None:
                    term = carried @ self._sums[level]
                    carried_sum = term if carried_sum is None else carried_sum + term
                carried = carried @ self._powers[level]
        new_state = carried + algebra.final_states(rows, self._impulse, xp)
        if running is None:
            return new_state, None
        # the running sum is float64: add the piece's sum (in the state's dtype) to it
        new_sum = running + carried_sum
        new_sum += algebra.final_states(rows, self._cumulative, xp)
        return new_state, new_sum

    def _chunk_max(self, rows: Array, state: Array, maximum: Array):
        """The state and the running maximum, every state of the chunk in time blocks."""
        xp, d = self.xp, self.order
        block = block_steps(d, None, _device(xp))
        if self._blocks is None:
            self._blocks = self._constant("W", param=block)
        n_rows = rows.shape[0]
        new_max = maximum.copy()
        new_state = xp.empty((n_rows, d), self.dtype)
        group = rows_within(_BLOCK_BYTES, block * d * self.dtype.itemsize, n_rows)
        for r0 in range(0, n_rows, group):
            r1 = min(n_rows, r0 + group)
            G = None
            for _, G in algebra.iter_blocks(rows[r0:r1], self._blocks, d, xp, state=state[r0:r1]):
                xp.maximum(new_max[r0:r1], G.max(axis=1), out=new_max[r0:r1])
            new_state[r0:r1] = G[:, -1]
        return new_state, new_max


class CarriedPools:
    """The Delay Network of one window over some of its inputs and the pools of its
    states, carried from chunk to chunk of blocks, on ``xp``.

    The pools of ``n`` sequences are a tuple ``(dn, thresholds, moments, compete)``, all
    float64:

    * ``dn`` ``(n, k, order)``: the state after the last block;
    * ``thresholds`` ``(n, k, order, 5, n_biases)`` (None without 'ppv', 'mpv', 'lspv'):
      per threshold the count of blocks above it, the sum of the states on those blocks
      (on the CPU: flushed from float32 every ``FLUSH_STEPS`` blocks, as the batch
      transform's kernel sums them), the current run of blocks above it, the longest such
      run, and the float32 sum since the last flush (zero off the CPU);
    * ``moments`` ``(n, k, order, 3)``: the sum, maximum and minimum of every state;
    * ``compete`` ``(n, k, 2, order)`` (None without 'compete'): the count of blocks on
      which each state, scaled, is the largest of the window's states, then the smallest.

    :meth:`advance` returns new arrays and leaves those it is given unchanged.

    Parameters
    ----------
    window : WindowSpec
    discretizer : str
    biases : ndarray of shape (k, order, n_biases)
        The thresholds of the window's ``k`` inputs (float32 values).
    scale : ndarray of shape (k, order)
        The scales of the competition.
    pools : tuple of str
        The pools of the features.
    dtype : float32 or float64
        The features' dtype: off the CPU, the states are compared with the thresholds in
        it, as the batch transform compares them there.
    xp : module
    """

    def __init__(
        self,
        window: WindowSpec,
        discretizer: str,
        biases: np.ndarray,
        scale: np.ndarray,
        pools: tuple[str, ...],
        dtype,
        xp: ModuleType,
    ):
        self.order = d = int(window.order)
        self.key = (d, float(window.theta), discretizer)
        self.n_inputs, _, self.n_biases = biases.shape
        self.pools = pools
        self.thresholds = any(p in pools for p in THRESHOLD_POOLS)
        self.compete = "compete" in pools
        self.moments = any(p in pools for p in MOMENT_POOLS)
        self.xp = xp
        # the CPU's compiled kernel carries its pools; off the CPU, block products do (the
        # Numba-CUDA pooled kernel runs whole sequences from the zero state only)
        self.route = "pooled_recurrence" if xp is np else "pooled_blocked"
        self.compare = np.dtype(np.float32) if self.route == "pooled_recurrence" else dtype
        Abar, Bbar = constants.system(*self.key)
        self.A_T = np.ascontiguousarray(Abar.T)
        self.B = Bbar
        self.biases = xp.asarray(biases, dtype=self.compare)  # exact: float32 values
        self.biases64 = xp.asarray(biases, dtype=np.float64)
        self.scale = xp.asarray(scale, dtype=np.float64)
        self._rows: dict[int, tuple[Array, Array]] = {}  # per n: biases, scale of the rows
        used = self.biases if self.thresholds else self.biases[..., :0]
        self.columns = state_columns(used.shape[-1], pools)  # the per-state columns kept
        if self.route == "pooled_recurrence":  # the compiled kernels, prepared once
            self.kernels = cpu.WindowKernels(
                self.A_T, self.B, used, self.scale, self.columns, self.moments
            )

    def empty(self, n: int) -> tuple:
        """The pools before the first block."""
        k, d = self.n_inputs, self.order
        state, thresholds, moments, wins = algebra.empty_pools(
            n * k, d, self.n_biases if self.thresholds else 0, self.xp
        )
        return (
            state.reshape(n, k, d),
            thresholds.reshape(n, k, d, CARRIED_SUMS, -1) if self.thresholds else None,
            moments.reshape(n, k, d, 3),
            wins.reshape(n, k, 2, d) if self.compete else None,
        )

    def _filled_in(self, pools: tuple) -> tuple:
        """``pools`` with zero-size thresholds and zero counts of the competition where
        they are not pooled (None)."""
        dn, thresholds, moments, wins = pools
        xp, (n, k, d) = self.xp, moments.shape[:3]
        if thresholds is None:
            thresholds = xp.empty((n, k, d, CARRIED_SUMS, 0))
        if wins is None:
            wins = xp.empty((n, k, 2, d))
            wins[...] = 0.0
        return dn, thresholds, moments, wins

    def advance(self, pools: tuple, U: Array, in_place: bool = False, seen: int = 0) -> tuple:
        """The pools of ``seen`` blocks after the blocks of inputs ``U`` ``(n, n_blocks,
        k)`` (float64): new arrays, or ``pools`` themselves advanced where ``in_place``."""
        n = U.shape[0]
        if not in_place:
            pools = tuple(None if a is None else a.copy() for a in pools)
        dn, thresholds, moments, wins = self._filled_in(pools)
        if self.route == "pooled_recurrence":
            updates = U.shape[0] * U.shape[1] * U.shape[2]
            seconds = updates * pooled_update_seconds(
                self.order, self.kernels.n_biases, self.route, "cpu"
            )
            carried = (dn, thresholds, moments, wins.reshape(n, self.n_inputs, 2 * self.order))
            self.kernels.advance(U, carried, threads=kernel_threads(seconds), seen=seen)
            if "mpv" not in self.pools:  # unused, and infinite for states beyond float32
                thresholds[..., 1, :] = 0.0
                thresholds[..., 4, :] = 0.0
        else:
            self._advance_blocked(U, (dn, thresholds, moments, wins))
        return (
            dn,
            thresholds if self.thresholds else None,
            moments,
            wins if self.compete else None,
        )

    def _row_constants(self, n: int) -> tuple[Array, Array]:
        """The thresholds and scales of the ``n * k`` rows of ``n`` sequences."""
        if n not in self._rows:
            xp = self.xp
            biases = self.biases if self.thresholds else self.biases[..., :0]
            self._rows = {n: (xp.tile(biases, (n, 1, 1)), xp.tile(self.scale, (n, 1)))}
        return self._rows[n]

    def _advance_blocked(self, U: Array, pools: tuple) -> None:
        """:func:`~lmu_sk.engine.algebra.pool_blocks` over groups of sequences whose time
        block of states and comparisons fits ``_BLOCK_BYTES``, in place."""
        xp, d, k = self.xp, self.order, self.n_inputs
        n = U.shape[0]
        block = block_steps(d, None, _device(xp))
        W = constants.get("W", *self.key, dtype=np.float64, xp=xp, param=block)
        rows = algebra.rows(U, xp)
        biases, scale = self._row_constants(n)
        K = biases.shape[-1]
        flat = [a.reshape(n * k, *a.shape[2:]) for a in pools]
        flat[3] = flat[3].reshape(n * k, 2, d)
        group = rows_within(_BLOCK_BYTES, k * block * d * (32 + 26 * K), n)
        for s0 in range(0, n, group):
            part = slice(s0 * k, min(n, s0 + group) * k)
            algebra.pool_blocks(
                rows[part],
                W,
                d,
                tuple(a[part] for a in flat),
                biases[part],
                scale[part],
                xp,
                compare=self.compare,
            )

    def features(self, pools: tuple, blocks: int) -> tuple[Array, Array]:
        """The pools of ``blocks`` blocks as features: ``(n, k, order, columns)`` per state
        (the columns the features keep, in their order) and ``(n, k, 2, order)`` for
        'compete' (None without it)."""
        filled = self._filled_in(pools)
        biases = self.biases64 if self.thresholds else self.biases64[..., :0]
        values, compete = algebra.pool_values(filled, blocks, biases, self.xp, self.pools)
        return values, compete.reshape(filled[3].shape) if self.compete else None

    def write_features(
        self,
        F: Array,
        at: int,
        n_positions: int,
        positions: np.ndarray,
        pools: tuple | None,
        U: Array,
        blocks: int,
    ) -> None:
        """Write the features of the pools ``pools`` (None: from the first block) continued
        over the blocks of inputs ``U`` ``(n, n_blocks, k)`` (evaluated, not committed), as
        features of ``blocks`` blocks, into the rows ``F`` ``(n, n_features)`` (float64):
        the window's features start at column ``at``, its ``n_positions`` inputs of which
        these pools have those at ``positions``.

        On the CPU one pass of the compiled kernel from the pools to the features
        (:func:`lmu_sk.kernels.cpu.pooled_features`, which reads the pools without copying
        them); elsewhere :meth:`advance` and :meth:`features` and a scatter into ``F``."""
        xp, d, k = self.xp, self.order, self.n_inputs
        n = U.shape[0]
        C = len(self.columns)
        compete_at = at + n_positions * d * C if self.compete else None
        if self.route == "pooled_recurrence":
            if pools is not None:
                dn, thresholds, moments, wins = self._filled_in(pools)
                pools = (dn, thresholds, moments, wins.reshape(n, k, 2 * d))
            updates = n * k * max(1, U.shape[1])
            seconds = updates * pooled_update_seconds(d, self.kernels.n_biases, self.route, "cpu")
            self.kernels.write(
                U, np.full(n, U.shape[1]), pools, np.full(n, blocks), F, positions, at,
                compete_at, threads=kernel_threads(seconds),
            )  # fmt: skip
            return
        pools = self.empty(n) if pools is None else pools
        if U.shape[1]:
            pools = self.advance(pools, U)
        values, compete = self.features(pools, blocks)
        p = positions[:, None, None]
        where = at + (p * d + np.arange(d)[:, None]) * C + np.arange(C)
        F[:, xp.asarray(where.ravel())] = values.reshape(n, -1)
        if compete is not None:
            where = compete_at + (p * 2 + np.arange(2)[:, None]) * d + np.arange(d)
            F[:, xp.asarray(where.ravel())] = compete.reshape(n, -1)

    def add_scores(
        self, scores: Array, weights: Array, pools: tuple, U: Array, blocks: int
    ) -> None:
        """Add to ``scores`` ``(n, n_outputs)`` (float64) the features of the pools
        ``pools`` continued over the blocks of inputs ``U`` ``(n, n_blocks, k)`` (at most
        one: evaluated, not committed), as features of ``blocks`` blocks, times ``weights``
        ``(n_window_features, n_outputs)``: every input at its position, in the window's
        layout (:meth:`write_features` with ``at`` 0 and the inputs in order).

        On the CPU the compiled kernel multiplies a few rows' features at a time, in cache
        (:func:`lmu_sk.kernels.cpu.pooled_scores`); elsewhere the features are written
        out and multiplied."""
        xp, k = self.xp, self.n_inputs
        n = U.shape[0]
        if self.route == "pooled_recurrence" and U.shape[1] <= 1:
            dn, thresholds, moments, wins = self._filled_in(pools)
            carried = (dn, thresholds, moments, wins.reshape(n, k, 2 * self.order))
            K = self.kernels.n_biases
            seconds = n * k * pooled_update_seconds(self.order, K, self.route, "cpu")
            self.kernels.add_scores(
                U, np.full(n, U.shape[1]), carried, np.full(n, blocks), self.compete,
                weights, scores, threads=kernel_threads(seconds),
            )  # fmt: skip
            return
        F = xp.empty((n, weights.shape[0]))
        self.write_features(F, 0, k, np.arange(k), pools, U, blocks)
        scores += F @ weights


class CarriedPooledFeatures:
    """The pooled features of sequences seen chunk by chunk: every window's
    :class:`CarriedPools`, fed the block means of its stride of the inputs made of the
    steps as they come, on ``xp``.

    What is carried is a dict of named arrays (:meth:`empty`, the names of the streams'
    checkpoints) and, per stride of the windows fed by 'cumsum', the block means of the
    running sum seen (the caller keeps them: :meth:`advance` returns those it completes).
    Windows fed by 'cumsum' are computed from their first block by :meth:`features`:
    that input subtracts the mean of the whole prefix and divides by the square root of its
    length.

    Parameters
    ----------
    spec : PooledSpec
    n_channels : int
    biases, scales : list of ndarray
        Per window the thresholds ``(k, order, n_biases)`` (float32 values) and the scales
        ``(k, order)`` of its inputs.
    dtype : float32 or float64
        The features' dtype (see :class:`CarriedPools`).
    xp : module
    """

    def __init__(self, spec, n_channels: int, biases: list, scales: list, dtype, xp):
        self.spec = spec
        self.n_channels = C = int(n_channels)
        self.xp = xp
        transforms = tuple(spec.transforms)
        self.cumsum_column = transforms.index("cumsum") * C if "cumsum" in transforms else None
        # per window: the positions in its inputs streamed and their columns, and those fed
        # by 'cumsum' and their channels
        self.split = []
        self.windows, self.cumsum_windows = [], []
        positions = spec.streamed_inputs(C)
        for window, b, s, streamed in zip(spec.windows, biases, scales, positions, strict=True):
            inputs = np.asarray(window.inputs, dtype=np.intp)
            cumsum = np.setdiff1d(np.arange(len(inputs)), streamed)
            channels = inputs[cumsum] - (self.cumsum_column or 0)
            self.split.append((streamed, inputs[streamed], cumsum, channels))
            made = [
                CarriedPools(window, spec.discretizer, b[at], s[at], spec.pools, dtype, xp)
                if len(at)
                else None
                for at in (streamed, cumsum)
            ]
            self.windows.append(made[0])
            self.cumsum_windows.append(made[1])
        fed = [w.stride for w, part in zip(spec.windows, self.split, strict=True) if len(part[2])]
        #: the strides of the windows fed by 'cumsum'
        self.history_strides = tuple(dict.fromkeys(fed))
        # per window with streamed inputs, where their features start in the layout of
        # :meth:`PooledSpec.streamed` (which drops the windows without any), and the total
        offsets = spec.streamed(C).window_offsets()
        with_streamed = [w for w, part in enumerate(self.split) if len(part[0])]
        #: per window with streamed inputs, the columns of their features in that layout
        self.streamed_spans = {
            w: (offsets[j], offsets[j + 1]) for j, w in enumerate(with_streamed)
        }
        self.n_streamed_features = offsets[-1]

    @staticmethod
    def pool_names(w: int) -> tuple[str, ...]:
        """The names of window ``w``'s carried pools."""
        return (f"dn_{w}", f"thresholds_{w}", f"moments_{w}", f"compete_{w}")

    def _pools(self, w: int, arrays: dict) -> tuple:
        return tuple(arrays.get(name) for name in self.pool_names(w))

    def empty(self, n: int) -> dict:
        """The carried arrays of ``n`` sequences before their first step, float64:
        'last' (the latest step) with 'difference'; 'origin' (the first step) and 'sum'
        (the running sum of the steps less the first) with 'cumsum'; per stride ``s > 1``
        'block_sum_s', the sums of the block under way; per window ``w`` its pools."""
        xp, C = self.xp, self.n_channels
        transforms = self.spec.transforms
        shapes = {}
        if "difference" in transforms:
            shapes["last"] = (n, C)
        if "cumsum" in transforms:
            shapes["origin"] = shapes["sum"] = (n, C)
        for s in self.spec.strides:
            if s > 1:
                shapes[f"block_sum_{s}"] = (n, len(transforms) * C)
        arrays = {}
        for name, shape in shapes.items():
            arrays[name] = xp.empty(shape, dtype=np.float64)
            arrays[name][...] = 0.0
        for w, pools in enumerate(self.windows):
            if pools is not None:
                made = zip(self.pool_names(w), pools.empty(n), strict=True)
                arrays.update((name, a) for name, a in made if a is not None)
        return arrays

    def advance(
        self,
        arrays: dict,
        X: Array,
        steps: int,
        in_place: bool = False,
        weights: Array = None,
        scores: Array = None,
    ) -> tuple[dict, dict]:
        """The carried arrays that change with the chunk ``X`` ``(n, k, n_channels)``
        (float64) after ``steps`` steps, and per stride of the windows fed by 'cumsum' the
        block means of the running sum the chunk completes. The windows' pools are new
        arrays, or those of ``arrays`` advanced where ``in_place`` (the others are new
        either way).

        With ``weights`` ``(n_streamed_features, n_outputs)``, the streamed features after
        the chunk times ``weights`` are added to ``scores`` ``(n, n_outputs)``
        (:meth:`streamed_scores`), each window's right after its pools advance, while they
        are in cache."""
        xp = self.xp
        P, updates = carried_inputs(X, self.spec.transforms, arrays, steps == 0, xp)
        after = steps + X.shape[1]
        scored = set()
        appended = {}
        for s in self.spec.strides:
            block_sum = arrays.get(f"block_sum_{s}")
            means, block_sum = carried_block_means(P, s, block_sum, steps % s, xp)
            if block_sum is not None:
                updates[f"block_sum_{s}"] = block_sum
            if means.shape[1] == 0:
                continue
            for w, window in enumerate(self.spec.windows):
                pools = self.windows[w]
                if window.stride != s or pools is None:
                    continue
                new = pools.advance(
                    self._pools(w, arrays), means[:, :, self.split[w][1]], in_place, steps // s
                )
                made = zip(self.pool_names(w), new, strict=True)
                updates.update((name, a) for name, a in made if a is not None)
                if weights is not None:
                    self._add_scores(w, scores, weights, {**arrays, **updates}, after)
                    scored.add(w)
            if s in self.history_strides:
                c0 = self.cumsum_column
                appended[s] = means[:, :, c0 : c0 + self.n_channels]
        if weights is not None:  # the windows the chunk completes no block of
            for w in self.streamed_spans.keys() - scored:
                self._add_scores(w, scores, weights, {**arrays, **updates}, after)
        return updates, appended

    def features(
        self, arrays: dict, history: dict, steps: int, out: Array = None, streamed: bool = False
    ) -> Array:
        """The features ``(n, n_features)`` (float64) of the prefixes of ``steps`` steps:
        every window from its carried pools and the block under way (evaluated, not
        committed), or from its first block for the inputs fed by 'cumsum' (``history``:
        per stride of those windows, the block means of the running sum of the whole
        blocks seen); written into ``out`` (C-contiguous) where given. ``streamed``: only
        the streamed inputs' features, ``(n, n_streamed_features)``, in the layout of
        :meth:`PooledSpec.streamed` (no window computed from its first block)."""
        xp, spec = self.xp, self.spec
        n = next(iter(arrays.values())).shape[0]
        rebuilt = {}  # the 'cumsum' inputs per stride
        width = self.n_streamed_features if streamed else spec.n_features
        F = xp.empty((n, width)) if out is None else out
        offsets = spec.window_offsets()
        for w, window in enumerate(spec.windows):
            s = window.stride
            blocks = -(-steps // s)
            positions, _, cumsum, channels = self.split[w]
            pools = self.windows[w]
            if pools is not None:
                U = self._under_way(w, arrays, steps, n)
                carried = self._pools(w, arrays)
                if streamed:
                    k, at = len(positions), self.streamed_spans[w][0]
                    pools.write_features(F, at, k, np.arange(k), carried, U, blocks)
                else:
                    k = len(window.inputs)
                    pools.write_features(F, offsets[w], k, positions, carried, U, blocks)
            pools = self.cumsum_windows[w]
            if pools is not None and not streamed:  # from the first block
                if s not in rebuilt:
                    rebuilt[s] = self._cumsum_inputs(arrays, history[s], steps, s)
                U = rebuilt[s][:, :, channels]
                pools.write_features(F, offsets[w], len(window.inputs), cumsum, None, U, blocks)
        return F

    def streamed_scores(self, arrays: dict, steps: int, weights: Array) -> Array:
        """The streamed features of the prefixes of ``steps`` steps (:meth:`features` with
        ``streamed``) times ``weights`` ``(n_streamed_features, n_outputs)`` (float64),
        ``(n, n_outputs)``: a linear head's scores without the features written out."""
        n = next(iter(arrays.values())).shape[0]
        scores = self.xp.zeros((n, weights.shape[1]))
        for w in self.streamed_spans:
            self._add_scores(w, scores, weights, arrays, steps)
        return scores

    def _add_scores(self, w: int, scores: Array, weights: Array, arrays: dict, steps: int):
        """Add window ``w``'s share of :meth:`streamed_scores` to ``scores``."""
        U = self._under_way(w, arrays, steps, scores.shape[0])
        blocks = -(-steps // self.spec.windows[w].stride)
        at, end = self.streamed_spans[w]
        self.windows[w].add_scores(scores, weights[at:end], self._pools(w, arrays), U, blocks)

    def _under_way(self, w: int, arrays: dict, steps: int, n: int) -> Array:
        """The mean of window ``w``'s block under way after ``steps`` steps as one more
        block of its streamed inputs, ``(n, 1, k)``; ``(n, 0, k)`` when none is."""
        s = self.spec.windows[w].stride
        partial, columns = steps % s, self.split[w][1]
        if partial:
            return (arrays[f"block_sum_{s}"][:, columns] / partial)[:, None]
        return self.xp.empty((n, 0, len(columns)))

    def _cumsum_inputs(self, arrays: dict, history: Array, steps: int, s: int) -> Array:
        """The 'cumsum' inputs of every channel of the blocks of ``s`` steps seen."""
        whole, partial = divmod(steps, s)
        last = None
        if partial:
            c0 = self.cumsum_column
            last = arrays[f"block_sum_{s}"][:, c0 : c0 + self.n_channels] / partial
        return cumsum_inputs(history[:, :whole], last, arrays["sum"], steps, s, self.xp)


# ----------------------------------------------------------------------------- inputs
def carried_inputs(
    X: Array, transforms: tuple[str, ...], carried: dict, first: bool, xp: ModuleType
) -> tuple[Array, dict]:
    """The inputs of the pools made of the chunk ``X`` ``(n, k, n_channels)`` (float64),
    continued from the steps before, transform-major.

    'series' is ``X``; 'difference' ``x_t - x_{t-1}`` (zero at the first step), from
    ``carried['last']``, the step before the chunk; 'cumsum' the running sum of the steps
    less the first one (fewer cancellations), from ``carried['origin']`` (the first step)
    and ``carried['sum']`` (the running sum before the chunk): its windows centre and
    scale it only when the whole prefix is known (:func:`cumsum_inputs`).

    Returns
    -------
    inputs : array of shape (n, k, len(transforms) * n_channels)
    updates : dict
        The carried arrays after the chunk.
    """
    updates, parts = {}, []
    for name in transforms:
        if name == "series":
            parts.append(X)
        elif name == "difference":
            previous = X[:, 0] if first else carried["last"]
            D = xp.empty_like(X)
            D[:, 0] = X[:, 0] - previous
            D[:, 1:] = X[:, 1:] - X[:, :-1]
            parts.append(D)
            updates["last"] = X[:, -1].copy()
        else:
            origin = X[:, 0].copy() if first else carried["origin"]
            S = xp.cumsum(X - origin[:, None], axis=1) + carried["sum"][:, None]
            parts.append(S)
            updates["origin"], updates["sum"] = origin, S[:, -1].copy()
    inputs = parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=2)
    return inputs, updates


def carried_block_means(
    P: Array, stride: int, block_sum: Array, filled: int, xp: ModuleType
) -> tuple[Array, Array | None]:
    """The means of the blocks of ``stride`` steps the chunk ``P`` ``(n, k, n_inputs)``
    completes, ``(n, n_blocks, n_inputs)``, continued from the block under way (the sum
    ``block_sum`` of its ``filled`` steps); and the sum of the steps of the block then
    under way (None for ``stride == 1``)."""
    if stride == 1:
        return P, None
    s = stride
    n, k, c = P.shape
    missing = (s - filled) % s  # steps that complete the block under way
    if filled and k < missing:
        return P[:, :0], block_sum + P.sum(axis=1)
    parts = []
    if filled:
        parts.append(((block_sum + P[:, :missing].sum(axis=1)) / s)[:, None])
    rest = P[:, missing:]
    whole = rest.shape[1] // s
    if whole:
        parts.append(rest[:, : whole * s].reshape(n, whole, s, c).sum(axis=2) / s)
    left = rest[:, whole * s :].sum(axis=1)
    if not parts:
        return P[:, :0], left
    return (parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=1)), left


def cumsum_inputs(
    means: Array, partial: Array | None, total: Array, steps: int, stride: int, xp: ModuleType
) -> Array:
    """The 'cumsum' inputs of the blocks of ``stride`` steps of a prefix of ``steps``
    steps, ``(n, n_blocks, n_channels)``: the block means of ``(S_t - t * mean) /
    sqrt(steps)`` from those of the running sum ``S_t`` (``means``, the whole blocks, and
    ``partial``, the mean of the block under way or None) and its last value ``total``."""
    if partial is not None:
        means = xp.concatenate([means, partial[:, None]], axis=1)
    first = np.arange(means.shape[1]) * stride + 1
    middle = xp.asarray((first + np.minimum(first + stride - 1, steps)) / 2.0)  # mean of t
    level = total / steps
    return (means - middle[None, :, None] * level[:, None]) / math.sqrt(steps)
