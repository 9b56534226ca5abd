"""Output losses fused with their output activation.

Each loss takes the output layer's pre-activation ``z`` of shape ``(n_samples, n_outputs)``
and the targets ``y`` of the same shape, overwrites ``z`` with the output activation
(probabilities or predictions), and returns ``(loss, grad)``: the mean loss over the
samples as a 0-d array of the array module (no host synchronisation) and the gradient of
that loss with respect to ``z``. For each pairing of activation and loss the gradient is
``(activation(z) - y) / n_samples``.

The L2 penalty is not part of these functions; the network adds it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .activations import inplace_logistic

__all__ = [
    "LOSSES",
    "OUTPUT_ACTIVATION_OF_LOSS",
    "binary_log_loss",
    "log_loss",
    "squared_error",
]

Array = Any


def _grad_buffer(z: Array, out: Array | None, xp: ModuleType) -> Array:
    return xp.empty_like(z) if out is None else out


def log_loss(
    z: Array, y: Array, xp: ModuleType = np, out: Array | None = None
) -> tuple[Array, Array]:
    """Softmax followed by the categorical cross-entropy (multiclass).

    Parameters
    ----------
    z : array of shape (n_samples, n_classes)
        Logits; overwritten with the softmax probabilities.
    y : array of shape (n_samples, n_classes)
        One-hot targets (any rows of non-negative weights work; for one-hot rows the
        loss is ``-mean(log p[y])``).
    xp : module
        Array module of ``z`` and ``y``.
    out : array of shape (n_samples, n_classes), optional
        Preallocated gradient buffer.

    Returns
    -------
    loss : 0-d array
        ``mean_i sum_k y_ik * (logsumexp(z_i) - z_ik)``.
    grad : array of shape (n_samples, n_classes)
        ``(softmax(z) - y) / n_samples`` (exact for rows of ``y`` that sum to one).
    """
    n = z.shape[0]
    z -= z.max(axis=1, keepdims=True)
    # log-softmax form: exact even where a probability underflows to zero
    yz = xp.vdot(y, z)
    xp.exp(z, out=z)
    s = z.sum(axis=1, keepdims=True)
    loss = (xp.vdot(xp.log(s), y.sum(axis=1)) - yz) / n
    z /= s
    grad = _grad_buffer(z, out, xp)
    xp.subtract(z, y, out=grad)
    grad *= 1.0 / n
    return loss, grad


def binary_log_loss(
    z: Array, y: Array, xp: ModuleType = np, out: Array | None = None
) -> tuple[Array, Array]:
    """Logistic sigmoid followed by the binary cross-entropy, summed over the outputs.

    Used for binary classification (one output unit) and for multilabel targets.

    Parameters
    ----------
    z : array of shape (n_samples, n_outputs)
        Logits; overwritten with the sigmoid probabilities.
    y : array of shape (n_samples, n_outputs)
        Targets in {0, 1}.
    xp : module
        Array module of ``z`` and ``y``.
    out : array of shape (n_samples, n_outputs), optional
        Preallocated gradient buffer.

    Returns
    -------
    loss : 0-d array
        ``mean_i sum_k softplus(z_ik) - y_ik * z_ik``.
    grad : array of shape (n_samples, n_outputs)
        ``(sigmoid(z) - y) / n_samples``.
    """
    n = z.shape[0]
    # softplus(z) = max(z, 0) + log1p(exp(-|z|)) never overflows
    sp = xp.abs(z)
    xp.negative(sp, out=sp)
    xp.exp(sp, out=sp)
    xp.log1p(sp, out=sp)
    sp += xp.maximum(z, 0)
    loss = (sp.sum() - xp.vdot(y, z)) / n
    inplace_logistic(z, xp)
    grad = _grad_buffer(z, out, xp)
    xp.subtract(z, y, out=grad)
    grad *= 1.0 / n
    return loss, grad


def squared_error(
    z: Array, y: Array, xp: ModuleType = np, out: Array | None = None
) -> tuple[Array, Array]:
    """Identity output and half the squared error, summed over outputs.

    For a single output this equals scikit-learn's ``squared_error`` loss of
    ``MLPRegressor`` (``mean((y - z)**2) / 2``); for several outputs the squared errors
    are summed over the outputs (and averaged over the samples), so that the loss and its
    gradient ``(z - y) / n_samples`` agree.

    Parameters
    ----------
    z : array of shape (n_samples, n_outputs)
        Predictions; left unchanged (the identity activation).
    y : array of shape (n_samples, n_outputs)
        Targets.
    xp : module
        Array module of ``z`` and ``y``.
    out : array of shape (n_samples, n_outputs), optional
        Preallocated gradient buffer.

    Returns
    -------
    loss : 0-d array
        ``sum((z - y)**2) / (2 * n_samples)``.
    grad : array of shape (n_samples, n_outputs)
        ``(z - y) / n_samples``.
    """
    n = z.shape[0]
    grad = _grad_buffer(z, out, xp)
    xp.subtract(z, y, out=grad)
    loss = xp.vdot(grad, grad) / (2 * n)
    grad *= 1.0 / n
    return loss, grad


LOSSES: dict[str, Callable[..., tuple[Array, Array]]] = {
    "log_loss": log_loss,
    "binary_log_loss": binary_log_loss,
    "squared_error": squared_error,
}

#: The output activation that each loss applies to ``z``.
OUTPUT_ACTIVATION_OF_LOSS = {
    "log_loss": "softmax",
    "binary_log_loss": "logistic",
    "squared_error": "identity",
}
