"""Weight initialisation: Glorot (Xavier) uniform and He uniform.

Random numbers are drawn on the host from a NumPy ``Generator`` or ``RandomState`` (in
float64, so a seed gives the same weights in every dtype up to rounding) and moved to the
array module ``xp`` in the requested dtype. Biases start at zero.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["glorot_uniform", "he_uniform", "init_bound", "initialize_layer"]

Array = Any


def init_bound(fan_in: int, fan_out: int, activation: str) -> float:
    """Return the half-width ``b`` of the uniform distribution ``U(-b, b)`` of a layer.

    Parameters
    ----------
    fan_in, fan_out : int
        Number of inputs and outputs of the layer.
    activation : str
        Activation applied to the layer's output. ``'relu'`` uses He initialisation,
        ``b = sqrt(6 / fan_in)`` (variance ``2 / fan_in``); everything else uses Glorot,
        ``b = sqrt(6 / (fan_in + fan_out))`` (variance ``2 / (fan_in + fan_out)``).
    """
    if activation == "relu":
        return float(np.sqrt(6.0 / fan_in))
    return float(np.sqrt(6.0 / (fan_in + fan_out)))


def _uniform(
    rng: np.random.Generator | np.random.RandomState,
    bound: float,
    shape: tuple[int, ...],
    dtype: Any,
    xp: ModuleType,
) -> Array:
    w = rng.uniform(-bound, bound, size=shape).astype(dtype, copy=False)
    return xp.asarray(w)


def glorot_uniform(
    rng: np.random.Generator | np.random.RandomState,
    fan_in: int,
    fan_out: int,
    dtype: Any = np.float32,
    xp: ModuleType = np,
) -> Array:
    """Glorot uniform weights of shape ``(fan_in, fan_out)``; for tanh, logistic, identity."""
    return _uniform(rng, init_bound(fan_in, fan_out, "tanh"), (fan_in, fan_out), dtype, xp)


def he_uniform(
    rng: np.random.Generator | np.random.RandomState,
    fan_in: int,
    fan_out: int,
    dtype: Any = np.float32,
    xp: ModuleType = np,
) -> Array:
    """He uniform weights of shape ``(fan_in, fan_out)``; for ReLU layers."""
    return _uniform(rng, init_bound(fan_in, fan_out, "relu"), (fan_in, fan_out), dtype, xp)


def initialize_layer(
    rng: np.random.Generator | np.random.RandomState,
    fan_in: int,
    fan_out: int,
    activation: str,
    dtype: Any = np.float32,
    xp: ModuleType = np,
) -> tuple[Array, Array]:
    """Return ``(weights, bias)`` of one layer whose output goes through ``activation``.

    The weights follow :func:`he_uniform` for ``'relu'`` and :func:`glorot_uniform`
    otherwise; the bias is zero.
    """
    init = he_uniform if activation == "relu" else glorot_uniform
    coef = init(rng, fan_in, fan_out, dtype=dtype, xp=xp)
    intercept = xp.zeros(fan_out, dtype=dtype)
    return coef, intercept
