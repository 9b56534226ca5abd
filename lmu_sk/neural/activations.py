"""Activation functions and their derivatives, computed in place.

Every forward function overwrites its argument with the activation and returns it. Every
derivative function takes the activation's *output* ``Z`` (not its input) and multiplies
``delta`` in place by the derivative expressed through ``Z``, which is how backpropagation
needs it. ``xp`` is the array module (NumPy or CuPy) that owns the arrays; ``work`` is an
optional preallocated scratch array shaped like ``Z`` that avoids a temporary.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
from scipy.special import expit, log_softmax

__all__ = [
    "ACTIVATIONS",
    "DERIVATIVES",
    "HIDDEN_ACTIVATIONS",
    "inplace_identity",
    "inplace_identity_derivative",
    "inplace_logistic",
    "inplace_logistic_derivative",
    "inplace_relu",
    "inplace_relu_derivative",
    "inplace_softmax",
    "inplace_tanh",
    "inplace_tanh_derivative",
    "log_probabilities",
    "logistic_probabilities",
]

Array = Any


def inplace_identity(X: Array, xp: ModuleType = np) -> Array:
    """Identity activation: leaves ``X`` unchanged and returns it."""
    return X


def inplace_relu(X: Array, xp: ModuleType = np) -> Array:
    """Rectified linear unit ``max(x, 0)``, in place."""
    xp.maximum(X, 0, out=X)
    return X


def inplace_tanh(X: Array, xp: ModuleType = np) -> Array:
    """Hyperbolic tangent, in place."""
    xp.tanh(X, out=X)
    return X


def inplace_logistic(X: Array, xp: ModuleType = np) -> Array:
    """Logistic sigmoid ``1 / (1 + exp(-x))``, in place.

    ``x`` is first clipped to ``+-0.99 * log(finfo.max)`` so that ``exp(-x)`` cannot
    overflow; the sigmoid is below 1e-38 (float32) there anyway. Unlike the
    ``(1 + tanh(x / 2)) / 2`` form this keeps full relative precision of small outputs.
    """
    bound = 0.99 * float(np.log(np.finfo(X.dtype).max))
    xp.clip(X, -bound, bound, out=X)
    xp.negative(X, out=X)
    xp.exp(X, out=X)
    X += 1
    xp.reciprocal(X, out=X)
    return X


def inplace_softmax(X: Array, xp: ModuleType = np) -> Array:
    """Row-wise softmax, in place, shifted by the row maximum for stability."""
    X -= X.max(axis=1, keepdims=True)
    xp.exp(X, out=X)
    X /= X.sum(axis=1, keepdims=True)
    return X


def inplace_identity_derivative(
    Z: Array, delta: Array, xp: ModuleType = np, work: Array | None = None
) -> Array:
    """Derivative of the identity: ``delta`` is left unchanged."""
    return delta


def inplace_relu_derivative(
    Z: Array, delta: Array, xp: ModuleType = np, work: Array | None = None
) -> Array:
    """Multiply ``delta`` by the ReLU derivative ``1[z > 0]``, read from the output ``Z``."""
    if work is None:
        work = xp.empty_like(Z)
    xp.greater(Z, 0, out=work)
    xp.multiply(delta, work, out=delta)
    return delta


def inplace_tanh_derivative(
    Z: Array, delta: Array, xp: ModuleType = np, work: Array | None = None
) -> Array:
    """Multiply ``delta`` by the tanh derivative ``1 - Z**2``."""
    if work is None:
        work = xp.empty_like(Z)
    xp.multiply(Z, Z, out=work)
    xp.subtract(1, work, out=work)
    xp.multiply(delta, work, out=delta)
    return delta


def inplace_logistic_derivative(
    Z: Array, delta: Array, xp: ModuleType = np, work: Array | None = None
) -> Array:
    """Multiply ``delta`` by the logistic derivative ``Z * (1 - Z)``."""
    if work is None:
        work = xp.empty_like(Z)
    xp.subtract(1, Z, out=work)
    xp.multiply(work, Z, out=work)
    xp.multiply(delta, work, out=delta)
    return delta


ACTIVATIONS: dict[str, Callable[..., Array]] = {
    "identity": inplace_identity,
    "relu": inplace_relu,
    "tanh": inplace_tanh,
    "logistic": inplace_logistic,
    "softmax": inplace_softmax,
}

DERIVATIVES: dict[str, Callable[..., Array]] = {
    "identity": inplace_identity_derivative,
    "relu": inplace_relu_derivative,
    "tanh": inplace_tanh_derivative,
    "logistic": inplace_logistic_derivative,
}

#: Activations accepted for hidden layers.
HIDDEN_ACTIVATIONS = ("identity", "logistic", "tanh", "relu")


def logistic_probabilities(z: np.ndarray) -> np.ndarray:
    """Class probabilities, float64, from the logits ``z`` ``(n, n_outputs)`` of a
    classifier's logistic outputs (NumPy): taken from the logits, as ``1 - p`` would round
    a class's small probability away beside its complement's near 1; one output is two
    classes, ``(n, 2)``."""
    z = np.asarray(z, dtype=np.float64)
    if z.shape[1] == 1:
        z = z[:, 0]
        return np.column_stack([expit(-z), expit(z)])
    return expit(z)


def log_probabilities(z: np.ndarray, out_activation: str) -> np.ndarray:
    """The logarithm of the class probabilities of a classifier's output logits ``z``
    ``(n, n_outputs)`` (NumPy), float64, from the logits (``log_softmax``, ``-log(1 +
    exp(-z))``): finite wherever they are, where the logarithm of a rounded probability
    would be ``-inf``."""
    z = np.asarray(z, dtype=np.float64)
    if out_activation == "softmax":
        return log_softmax(z, axis=1)
    if z.shape[1] == 1:
        z = z[:, 0]
        return -np.column_stack([np.logaddexp(0.0, z), np.logaddexp(0.0, -z)])
    return -np.logaddexp(0.0, -z)
