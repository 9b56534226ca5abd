"""Output losses fused with their output activation.

Each loss takes the output layer's pre-activation ``z`` of shape ``(n_samples, n_outputs)``
and the targets ``y`` of the same shape, overwrites ``z`` with the output activation
(probabilities or predictions), and returns ``(loss, grad)``: the mean loss over the
samples as a 0-d array of the array module (no host synchronisation) and the gradient of
that loss with respect to ``z``. For each pairing of activation and loss the gradient is
``(activation(z) - y) / n_samples``.

Sample weights
--------------
With ``sample_weight`` ``w`` (shape ``(n_samples,)``) the mean becomes the weighted mean,
as in scikit-learn's MLP: the loss is ``sum_i w_i * loss_i / W`` and the gradient of row
``i`` is ``w_i * (activation(z_i) - y_i) / W``, with ``W = weight_sum`` (the sum of the
weights; pass it when it is known on the host, which saves a device synchronisation).
Integer weights therefore give the loss and gradient of the data with each row repeated
``w_i`` times, and a zero weight removes a row.

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


def _total_weight(sample_weight: Array | None, weight_sum: float | None) -> Any:
    """The normaliser ``W`` of a weighted loss: ``weight_sum``, else the weights' sum."""
    if sample_weight is None:
        return None
    return sample_weight.sum() if weight_sum is None else weight_sum


def _average_gradient(grad: Array, n: int, sample_weight: Array | None, total: Any) -> Array:
    """Scale the per-row gradients ``grad`` in place to those of the (weighted) mean."""
    if sample_weight is None:
        grad *= 1.0 / n
    else:
        grad *= sample_weight[:, None] * (1.0 / total)
    return grad


def _weighted_rows(rows: Array, sample_weight: Array, xp: ModuleType) -> Array:
    """``sum_i w_i * rows_i`` for the per-row losses ``rows`` of shape (n, k), summed over k."""
    return xp.vdot(rows.sum(axis=1), sample_weight)


def log_loss(
    z: Array,
    y: Array,
    xp: ModuleType = np,
    out: Array | None = None,
    sample_weight: Array | None = None,
    weight_sum: float | None = None,
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
    sample_weight : array of shape (n_samples,), optional
        Non-negative sample weights (see the module docstring).
    weight_sum : float, optional
        Sum of ``sample_weight``, when known.

    Returns
    -------
    loss : 0-d array
        ``mean_i sum_k y_ik * (logsumexp(z_i) - z_ik)`` (weighted mean with weights).
    grad : array of shape (n_samples, n_classes)
        ``(softmax(z) - y) / n_samples`` (exact for rows of ``y`` that sum to one).
    """
    n = z.shape[0]
    z -= z.max(axis=1, keepdims=True)
    # log-softmax form: exact even where a probability underflows to zero
    if sample_weight is None:
        yz = xp.vdot(y, z)
    else:
        yz = _weighted_rows(y * z, sample_weight, xp)
    xp.exp(z, out=z)
    s = z.sum(axis=1, keepdims=True)
    log_s = xp.log(s).reshape(-1)
    total = _total_weight(sample_weight, weight_sum)
    if sample_weight is None:
        loss = (xp.vdot(log_s, y.sum(axis=1)) - yz) / n
    else:
        loss = (xp.vdot(log_s * y.sum(axis=1), sample_weight) - yz) / total
    z /= s
    grad = xp.subtract(z, y, out=_grad_buffer(z, out, xp))
    return loss, _average_gradient(grad, n, sample_weight, total)


def binary_log_loss(
    z: Array,
    y: Array,
    xp: ModuleType = np,
    out: Array | None = None,
    sample_weight: Array | None = None,
    weight_sum: float | None = None,
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
    sample_weight : array of shape (n_samples,), optional
        Non-negative sample weights (see the module docstring).
    weight_sum : float, optional
        Sum of ``sample_weight``, when known.

    Returns
    -------
    loss : 0-d array
        ``mean_i sum_k softplus(z_ik) - y_ik * z_ik`` (weighted mean with weights).
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
    total = _total_weight(sample_weight, weight_sum)
    if sample_weight is None:
        loss = (sp.sum() - xp.vdot(y, z)) / n
    else:
        sp -= y * z
        loss = _weighted_rows(sp, sample_weight, xp) / total
    inplace_logistic(z, xp)
    grad = xp.subtract(z, y, out=_grad_buffer(z, out, xp))
    return loss, _average_gradient(grad, n, sample_weight, total)


def squared_error(
    z: Array,
    y: Array,
    xp: ModuleType = np,
    out: Array | None = None,
    sample_weight: Array | None = None,
    weight_sum: float | None = None,
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
    sample_weight : array of shape (n_samples,), optional
        Non-negative sample weights (see the module docstring).
    weight_sum : float, optional
        Sum of ``sample_weight``, when known.

    Returns
    -------
    loss : 0-d array
        ``sum((z - y)**2) / (2 * n_samples)`` (``sum_i w_i * |z_i - y_i|**2 / (2 * W)``
        with weights).
    grad : array of shape (n_samples, n_outputs)
        ``(z - y) / n_samples``.
    """
    n = z.shape[0]
    grad = xp.subtract(z, y, out=_grad_buffer(z, out, xp))
    total = _total_weight(sample_weight, weight_sum)
    if sample_weight is None:
        loss = xp.vdot(grad, grad) / (2 * n)
    else:
        loss = _weighted_rows(grad * grad, sample_weight, xp) / (2 * total)
    return loss, _average_gradient(grad, n, sample_weight, total)


#: The losses scikit-learn's MLP reports averaged over the outputs while its gradient is
#: the summed loss's: ``MLPRegressor``'s squared error. Its ``tol`` compares that value, so
#: a multi-output model reporting the sum stopped at another epoch (99 against 71 in one
#: case); the training loop reports it so (``DenseNetwork.loss_and_gradients(...,
#: reported=True)``), and these functions stay the loss of their own gradient.
AVERAGED_OVER_OUTPUTS = frozenset({"squared_error"})

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
