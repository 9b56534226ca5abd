"""What pooled Delay Network features are: the windows, their inputs and the pools.

The pooled features (:class:`~lmu_sk.pooled.LMUPooledFeatures`) run, for every window, a
Delay Network (DN) over some *inputs* derived from each channel, fed the means of blocks
of ``stride`` steps, and summarise every state over the sequence's own steps by *pools*.
This module holds that description (:class:`PooledSpec`) and the layout of the features
it implies; :mod:`~lmu_sk.engine.run` computes them, :mod:`~lmu_sk.reference` spells them
out step by step.

Inputs (``transforms``), each one value per channel and step, zero past a sequence's end:

* ``'series'``: the channel itself;
* ``'difference'``: ``x_t - x_{t-1}``, zero at the first step;
* ``'cumsum'``: ``(x_1 + ... + x_t - t * mean(x)) / sqrt(n)`` over the sequence's own
  ``n`` steps: where the series sits above or below its own level, accumulated. It uses the
  whole sequence (its mean and length).

Pools of state ``m_t[i]`` over the ``n`` steps (blocks) of a sequence, for every threshold
``b_k`` of that state:

* ``'ppv'``: the proportion of steps with ``m_t[i] > b_k``;
* ``'mpv'``: the mean of ``m_t[i] - b_k`` over those steps (0 when there are none);
* ``'lspv'``: the longest run of consecutive such steps, divided by ``n``;

and per state ``'mean'``, ``'max'``, ``'min'``; and per window and input ``'compete'``:
for every state the proportion of steps on which it is the largest of the window's states
(each scaled by its fitted ``scale``; the first within ``reference.COMPETE_TIE`` of the
largest), then the same for the smallest.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..kernels import cpu

__all__ = [
    "FLOAT32_MAX",
    "MOMENT_POOLS",
    "POOLS",
    "THRESHOLD_POOLS",
    "TRANSFORMS",
    "PooledSpec",
    "WindowSpec",
    "checked_window_arrays",
    "state_columns",
    "state_gain",
    "streamed_window_arrays",
]

TRANSFORMS = ("series", "difference", "cumsum")
#: The largest float32: the pooled states are compared with float32 thresholds, so states
#: beyond it would count wrongly, whatever the features' dtype.
FLOAT32_MAX = float(np.finfo(np.float32).max)
THRESHOLD_POOLS = ("ppv", "mpv", "lspv")
MOMENT_POOLS = ("mean", "max", "min")
POOLS = THRESHOLD_POOLS + MOMENT_POOLS + ("compete",)


@dataclasses.dataclass(frozen=True)
class WindowSpec:
    """One window: a Delay Network of ``order`` states and window ``theta`` (in steps of
    its input, the block means of ``stride`` steps) over the prepared inputs ``inputs``
    (indices into the transforms' channels, transform-major)."""

    order: int
    theta: float
    stride: int
    inputs: tuple[int, ...]

    def n_steps(self, n_raw_steps: int) -> int:
        """Blocks of a sequence of ``n_raw_steps`` steps."""
        return -(-n_raw_steps // self.stride)

    def n_features(self, n_biases: int, pools: tuple[str, ...]) -> int:
        per_state = n_biases * sum(p in pools for p in THRESHOLD_POOLS) + sum(
            p in pools for p in MOMENT_POOLS
        )
        compete = 2 if "compete" in pools else 0
        return len(self.inputs) * self.order * (per_state + compete)


@dataclasses.dataclass(frozen=True)
class PooledSpec:
    """The fitted maps of pooled features.

    Attributes
    ----------
    windows : tuple of WindowSpec
    transforms : tuple of str
        The inputs made of every channel, in this order (see the module's notes).
    pools : tuple of str
        The pools computed, in the order of :data:`POOLS`.
    n_biases : int
        Thresholds per state.
    discretizer : str
    """

    windows: tuple[WindowSpec, ...]
    transforms: tuple[str, ...]
    pools: tuple[str, ...]
    n_biases: int
    discretizer: str = "zoh"

    @property
    def n_features(self) -> int:
        return sum(w.n_features(self.n_biases, self.pools) for w in self.windows)

    @property
    def strides(self) -> tuple[int, ...]:
        """The distinct strides, in the order of first use."""
        return tuple(dict.fromkeys(w.stride for w in self.windows))

    def window_offsets(self) -> list[int]:
        """Where each window's features start, and (last) their total."""
        sizes = [w.n_features(self.n_biases, self.pools) for w in self.windows]
        return [0, *np.cumsum(sizes).tolist()]

    def streamed_inputs(self, n_channels: int) -> list[np.ndarray]:
        """Per window, the positions among its inputs of the *streamed* ones: every input
        but those of 'cumsum', whose centring and scaling use the whole sequence, so that
        a stream recomputes their windows from the first step whenever it reports them.
        The features of the streamed inputs after ``t`` steps are a fold of those steps:
        a stream carries them at a constant cost per step."""
        C = int(n_channels)
        return [
            np.flatnonzero([self.transforms[i // C] != "cumsum" for i in w.inputs])
            for w in self.windows
        ]

    def streamed(self, n_channels: int) -> PooledSpec:
        """The spec of the streamed inputs' features alone (see :meth:`streamed_inputs`):
        every window with its streamed inputs, windows left with none dropped. Its
        features are those of this spec at :meth:`streamed_columns`, in their order."""
        windows = tuple(
            dataclasses.replace(window, inputs=tuple(window.inputs[p] for p in at))
            for window, at in zip(self.windows, self.streamed_inputs(n_channels), strict=True)
            if len(at)
        )
        return dataclasses.replace(self, windows=windows)

    def streamed_columns(self, n_channels: int) -> np.ndarray:
        """The columns of the streamed inputs' features among this spec's, ascending."""
        columns = []
        offsets = self.window_offsets()
        per_state = len(state_columns(self.n_biases, self.pools))
        for w, (window, at) in enumerate(
            zip(self.windows, self.streamed_inputs(n_channels), strict=True)
        ):
            d, k = window.order, len(window.inputs)
            columns += [offsets[w] + p * d * per_state + np.arange(d * per_state) for p in at]
            if "compete" in self.pools:
                compete = offsets[w] + k * d * per_state
                columns += [compete + p * 2 * d + np.arange(2 * d) for p in at]
        return np.concatenate(columns) if columns else np.zeros(0, dtype=np.intp)

    def to_plain(self) -> dict:
        """The spec as plain data (builtins only), as saved models hold it: a pickle then
        names no class of the engine."""
        return {
            "windows": [
                [int(w.order), float(w.theta), int(w.stride), [int(i) for i in w.inputs]]
                for w in self.windows
            ],
            "transforms": [str(t) for t in self.transforms],
            "pools": [str(p) for p in self.pools],
            "n_biases": int(self.n_biases),
            "discretizer": str(self.discretizer),
        }

    @classmethod
    def from_plain(cls, data: dict) -> PooledSpec:
        """The spec of :meth:`to_plain`'s data."""
        windows = tuple(
            WindowSpec(int(order), float(theta), int(stride), tuple(int(i) for i in inputs))
            for order, theta, stride, inputs in data["windows"]
        )
        return cls(
            windows,
            tuple(data["transforms"]),
            tuple(data["pools"]),
            int(data["n_biases"]),
            str(data["discretizer"]),
        )


def state_columns(n_biases: int, pools: tuple[str, ...]) -> np.ndarray:
    """Which of the kernels' per-state columns ``[ppv x K, mpv x K, lspv x K, mean, max,
    min]`` the features keep, in that order."""
    K = n_biases
    columns = []
    for j, name in enumerate(THRESHOLD_POOLS):
        if name in pools:
            columns.extend(range(j * K, (j + 1) * K))
    for j, name in enumerate(MOMENT_POOLS):
        if name in pools:
            columns.append(3 * K + j)
    return np.asarray(columns, dtype=np.intp)


def cumsum_windows(thetas: np.ndarray) -> np.ndarray:
    """The windows the ``'cumsum'`` input feeds: the longer half (at least one)."""
    n = len(thetas)
    rank = np.argsort(np.argsort(thetas, kind="stable"), kind="stable")
    return rank >= n - max(1, math.ceil(n / 2))


def streamed_window_arrays(
    spec: PooledSpec, n_channels: int, biases: list, scales: list
) -> tuple[PooledSpec, list, list]:
    """:meth:`PooledSpec.streamed` and the thresholds and scales of its windows, taken
    from the fitted ``biases`` and ``scales`` of ``spec``'s windows."""
    streamed_biases, streamed_scales = [], []
    for at, b, s in zip(spec.streamed_inputs(n_channels), biases, scales, strict=True):
        if len(at):
            streamed_biases.append(b[at])
            streamed_scales.append(s[at])
    return spec.streamed(n_channels), streamed_biases, streamed_scales


def checked_window_arrays(
    spec: PooledSpec, n_channels: int, biases: list, scales: list
) -> tuple[list, list]:
    """Fitted thresholds and scales checked against ``spec``: float64 host copies, the
    thresholds rounded to float32 first (as the batch transform uses them).

    Raises
    ------
    ValueError
        Unless there is one array of each per window, of the window's ``(n_inputs,
        order, n_biases)`` and ``(n_inputs, order)``, and every window reads inputs that
        ``n_channels`` channels make.
    """
    n_inputs = len(spec.transforms) * n_channels
    biases, scales = list(biases), list(scales)
    if len(biases) != len(spec.windows) or len(scales) != len(spec.windows):
        raise ValueError(
            f"The fitted biases_ and scales_ must hold one array per window of spec_ "
            f"({len(spec.windows)}); got {len(biases)} and {len(scales)}. Fit again."
        )
    checked_biases, checked_scales = [], []
    for w, (window, b, s) in enumerate(zip(spec.windows, biases, scales, strict=True)):
        b = np.array(b, dtype=np.float32).astype(np.float64)
        s = np.array(s, dtype=np.float64)
        shape = (len(window.inputs), window.order)
        if b.shape != (*shape, spec.n_biases) or s.shape != shape:
            raise ValueError(
                f"Window {w}: biases_ of shape {b.shape} and scales_ of shape "
                f"{s.shape} do not fit its {shape[0]} input(s) of order {shape[1]} with "
                f"{spec.n_biases} threshold(s); fit the transformer again."
            )
        if min(window.inputs, default=0) < 0 or max(window.inputs, default=0) >= n_inputs:
            raise ValueError(
                f"Window {w} reads inputs {window.inputs}, beyond the {n_inputs} inputs "
                "of the fitted transforms and channels; fit the transformer again."
            )
        checked_biases.append(b)
        checked_scales.append(s)
    return checked_biases, checked_scales


def state_gain(
    orders, transforms: tuple[str, ...], n_steps: int, pools: tuple[str, ...] = ()
) -> float:
    """How many times the largest input the pooled features' Delay Network states (and,
    with 'mpv' among the ``pools``, their float32 sums) can reach, over ``n_steps`` steps.

    A state of order ``d`` is at most ``d`` times the largest input it sums (the impulse
    response's absolute sum is below the order: 1.7 for 4, 2.4 for 8, 13 for 256); the
    first difference at most doubles the input, the centred cumulative sum of ``n`` steps
    multiplies it by ``2 sqrt(n)`` at most. 'mpv' sums the states above a threshold in
    float32 over up to ``cpu.FLUSH_STEPS`` steps (then into float64): that many times.
    """
    gain = float(np.max(orders))
    if "cumsum" in transforms:
        gain *= 2.0 * math.sqrt(n_steps)
    elif "difference" in transforms:
        gain *= 2.0
    if "mpv" in pools:
        gain *= max(1, min(int(n_steps), cpu.FLUSH_STEPS))
    return gain
