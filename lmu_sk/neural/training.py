"""The epoch loop: shuffled minibatches, stopping rules and bookkeeping.

Stopping follows scikit-learn's MLP. After every epoch the monitored quantity (the
training loss, or the validation score with early stopping) is compared with its best
value so far; an epoch that does not improve it by at least ``tol`` increments a counter,
any other epoch resets it. When the counter exceeds ``n_iter_no_change`` the learning-rate
schedule decides: the constant schedule stops training, the plateau schedule divides the
learning rate by ten and training goes on (until the rate would drop below its minimum).

Divergence: after every epoch the loss and the parameters are checked for finiteness; if
either is not finite, :class:`TrainingDivergedError` is raised (a ``ValueError`` and a
``FloatingPointError``). Training never ends silently with NaN weights; the caller decides
what to keep (the estimators keep their previous state).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .network import DenseNetwork, make_device_rng
from .optimizers import BaseOptimizer, ConstantLearningRate, PlateauLearningRate

__all__ = ["TrainingDivergedError", "TrainingHistory", "resolve_batch_size", "train_epochs"]

Array = Any


class TrainingDivergedError(ValueError, FloatingPointError):
    """The training loss or the weights became infinite or NaN."""


@dataclass
class TrainingHistory:
    """Bookkeeping carried across epochs and across incremental calls.

    Attributes
    ----------
    n_iter : int
        Epochs run so far.
    t : int
        Training samples seen so far (``n_iter * n_samples`` for full epochs).
    loss : float or None
        Loss of the last epoch.
    loss_curve : list of float
        Loss of every epoch.
    validation_scores : list of float or None
        Validation score after every epoch; None without early stopping.
    best_loss : float
        Lowest epoch loss so far (used without early stopping).
    best_validation_score : float
        Highest validation score so far (used with early stopping).
    no_improvement_count : int
        Consecutive epochs without an improvement by at least ``tol``.
    """

    n_iter: int = 0
    t: int = 0
    loss: float | None = None
    loss_curve: list[float] = field(default_factory=list)
    validation_scores: list[float] | None = None
    best_loss: float = math.inf
    best_validation_score: float = -math.inf
    no_improvement_count: int = 0


def resolve_batch_size(batch_size: int | str, n_samples: int) -> int:
    """Return the minibatch size: ``'auto'`` is ``min(200, n_samples)``.

    An integer outside ``[1, n_samples]`` is clipped with a warning, as scikit-learn does.
    """
    if isinstance(batch_size, str):
        if batch_size != "auto":
            raise ValueError(f"batch_size must be a positive int or 'auto', got {batch_size!r}")
        return min(200, n_samples)
    if batch_size < 1 or batch_size > n_samples:
        warnings.warn(
            "Got `batch_size` less than 1 or larger than sample size. It is going to be clipped",
            stacklevel=3,
        )
    return int(np.clip(batch_size, 1, n_samples))


class _BatchBuffers:
    """Gather buffers of the inputs and targets, one pair per batch size."""

    def __init__(self, X: Array, Y: Array, xp: Any) -> None:
        self.X, self.Y, self.xp = X, Y, xp
        self._buffers: dict[int, tuple[Array, Array]] = {}

    def gather(self, idx: Array) -> tuple[Array, Array]:
        n = idx.shape[0]
        buf = self._buffers.get(n)
        if buf is None:
            xp = self.xp
            buf = self._buffers[n] = (
                xp.empty((n, self.X.shape[1]), self.X.dtype),
                xp.empty((n, self.Y.shape[1]), self.Y.dtype),
            )
        self.xp.take(self.X, idx, axis=0, out=buf[0])
        self.xp.take(self.Y, idx, axis=0, out=buf[1])
        return buf


def train_epochs(
    network: DenseNetwork,
    optimizer: BaseOptimizer,
    schedule: ConstantLearningRate | PlateauLearningRate,
    X: Array,
    Y: Array,
    history: TrainingHistory,
    *,
    rng: np.random.Generator,
    batch_size: int,
    max_iter: int,
    shuffle: bool = True,
    tol: float = 1e-4,
    n_iter_no_change: int = 10,
    validation_score: Callable[[], float] | None = None,
    verbose: bool = False,
    incremental: bool = False,
) -> TrainingHistory:
    """Train ``network`` in place for up to ``max_iter`` epochs.

    Parameters
    ----------
    network : DenseNetwork
        Network whose parameters are trained in place.
    optimizer : BaseOptimizer
        Optimizer built for ``[network.params]``; it receives the L2-penalty gradient
        through its ``l2`` argument (see :meth:`DenseNetwork.l2_terms`).
    schedule : ConstantLearningRate or PlateauLearningRate
        What to do at a plateau (see the module docstring).
    X : array of shape (n_samples, n_features)
        C-contiguous training inputs on the network's array module and dtype.
    Y : array of shape (n_samples, n_outputs)
        C-contiguous training targets (one-hot / 0-1 columns for classification).
    history : TrainingHistory
        Bookkeeping, updated in place and returned.
    rng : numpy.random.Generator
        Host generator for the shuffles; dropout masks come from a generator derived from
        it (:func:`~lmu_sk.neural.network.make_device_rng`).
    batch_size : int
        Minibatch size (already resolved, see :func:`resolve_batch_size`).
    max_iter : int
        Maximum number of epochs of this call.
    shuffle : bool, default=True
        Draw a new permutation of the samples every epoch.
    tol : float, default=1e-4
        Minimal improvement of the monitored quantity.
    n_iter_no_change : int, default=10
        Epochs without improvement tolerated before the schedule is consulted.
    validation_score : callable, optional
        ``validation_score() -> float`` scores the current parameters on held-out data
        (higher is better). When given, it is the monitored quantity (early stopping)
        and the parameters of the best epoch are restored at the end.
    verbose : bool, default=False
        Print one line per epoch: epoch, loss, validation score, seconds.
    incremental : bool, default=False
        One call of ``partial_fit``: no :class:`ConvergenceWarning` at ``max_iter``.

    Returns
    -------
    TrainingHistory

    Raises
    ------
    TrainingDivergedError
        When the loss or the parameters stop being finite.
    """
    xp = network.xp
    n = X.shape[0]
    params, grads = network.params, network.grads
    uses_dropout = network.dropout > 0 or network.input_dropout > 0
    dropout_rng = make_device_rng(xp, rng) if uses_dropout else None
    buffers = _BatchBuffers(X, Y, xp)
    starts = range(0, n, batch_size)
    early_stopping = validation_score is not None
    best_params = xp.empty_like(params) if early_stopping else None
    if early_stopping and history.validation_scores is None:
        history.validation_scores = []
    stopped = saved_best = False

    for _ in range(max_iter):
        tic = time.perf_counter()
        perm = xp.asarray(rng.permutation(n)) if shuffle else None
        epoch_loss = xp.zeros((), dtype=np.float64)
        # NumPy's overflow warnings are silenced: divergence is reported below instead
        with np.errstate(over="ignore", invalid="ignore"):
            for start in starts:
                stop = min(start + batch_size, n)
                if shuffle:
                    Xb, Yb = buffers.gather(perm[start:stop])
                else:
                    Xb, Yb = X[start:stop], Y[start:stop]
                # the optimizer adds the L2 gradient during its update (one pass less)
                batch_loss = network.loss_and_gradients(
                    Xb, Yb, dropout_rng=dropout_rng, l2_gradient=False
                )
                optimizer.update([params], [grads], l2=network.l2_terms(stop - start))
                epoch_loss += batch_loss * (stop - start)

        history.n_iter += 1
        history.t += n
        loss = float(epoch_loss) / n
        if not math.isfinite(loss) or not bool(xp.isfinite(params).all()):
            raise TrainingDivergedError(
                f"Training diverged at epoch {history.n_iter}: the loss is {loss}. "
                f"Lower learning_rate_init (currently {optimizer.learning_rate_init:g}) "
                "or scale the features (e.g. with StandardScaler)."
            )
        history.loss = loss
        history.loss_curve.append(loss)

        if early_stopping:
            score = float(validation_score())
            history.validation_scores.append(score)
            if score < history.best_validation_score + tol:
                history.no_improvement_count += 1
            else:
                history.no_improvement_count = 0
            if score > history.best_validation_score:
                history.best_validation_score = score
                best_params[...] = params
                saved_best = True
        else:
            if loss > history.best_loss - tol:
                history.no_improvement_count += 1
            else:
                history.no_improvement_count = 0
            history.best_loss = min(history.best_loss, loss)

        if verbose:
            line = f"Epoch {history.n_iter}, loss = {loss:.8f}"
            if early_stopping:
                line += f", validation score = {score:.6f}"
            print(f"{line}, time = {time.perf_counter() - tic:.2f}s")

        if history.no_improvement_count > n_iter_no_change:
            what = "Validation score" if early_stopping else "Training loss"
            msg = f"{what} did not improve more than tol={tol} for {n_iter_no_change} epochs."
            old_lr = optimizer.learning_rate
            stopped = schedule.on_plateau(optimizer)
            if verbose:
                if stopped:
                    print(f"{msg} Stopping.")
                else:
                    print(f"{msg} Learning rate {old_lr:g} -> {optimizer.learning_rate:g}.")
            if stopped:
                break
            history.no_improvement_count = 0

    if not stopped and not incremental and max_iter > 0:
        warnings.warn(
            f"Stochastic Optimizer: Maximum iterations ({max_iter}) reached and the "
            "optimization hasn't converged yet.",
            ConvergenceWarning,
            stacklevel=3,
        )
    if saved_best:
        params[...] = best_params
    return history
