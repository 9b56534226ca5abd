"""The epoch loop: shuffled minibatches, stopping rules and bookkeeping.

One loop trains every dense network of the package. Its rows come from a minibatch
source: :class:`RowBatches` for rows held in memory, :class:`BlockBatches` for rows that
arrive in blocks (:class:`RowBlocks`: the features of a dask array, computed by the
workers while the network trains on the block before).

Stopping follows scikit-learn's MLP. After every epoch the monitored quantity (the
training loss, or the validation score with early stopping) is compared with its best
value so far; an epoch that does not improve it by at least ``tol`` increments a counter,
any other epoch resets it. When the counter exceeds ``n_iter_no_change`` the learning-rate
schedule decides: the constant schedule stops training, the plateau schedule divides the
learning rate by ten and training goes on (until the rate would drop below its minimum),
the adaptive one divides it by five, the cosine one goes on (it runs all ``max_iter``
epochs, and reaching them gives no ``ConvergenceWarning``); every schedule may also change
the rate at the end of each epoch (inverse scaling and cosine decay do).

Divergence: after every epoch the loss and the parameters are checked for finiteness; if
either is not finite, :class:`TrainingDivergedError` is raised (a ``ValueError`` and a
``FloatingPointError``). Training never ends silently with NaN weights; the caller decides
what to keep (the estimators keep their previous state). A loss that stays finite but
explodes, an epoch loss above ``DIVERGENCE_FACTOR`` times the loss of the initial weights
(measured on the first minibatch ever trained on), gives a :class:`UserWarning` that asks
for a lower ``learning_rate_init`` (once per call).

Sample weights: ``RowBatches(..., sample_weight=w)`` trains on the weighted loss of
:mod:`lmu_sk.neural.losses` (each minibatch: the weighted mean loss and an L2 penalty
divided by the batch's total weight, as scikit-learn's MLP). A minibatch whose weights
are all zero has no gradient and is skipped. The epoch loss is, as in scikit-learn, the
mean of the batch losses weighted by the batches' numbers of rows.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._device import array_module_of, to_numpy
from .._sample_weight import check_sample_weight
from .network import DenseNetwork, make_device_rng
from .optimizers import BaseOptimizer, LearningRateSchedule

__all__ = [
    "DIVERGENCE_FACTOR",
    "BlockBatches",
    "Minibatch",
    "RowBatches",
    "RowBlocks",
    "TrainingDivergedError",
    "TrainingHistory",
    "check_sample_weight",
    "resolve_batch_size",
    "train_epochs",
]

Array = Any

#: An epoch loss above this many times the loss of the initial weights warns of divergence.
DIVERGENCE_FACTOR = 100.0


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
    initial_loss : float or None
        Loss of the initial weights on the first minibatch trained on (the reference of
        the divergence warning).
    """

    n_iter: int = 0
    t: int = 0
    loss: float | None = None
    loss_curve: list[float] = field(default_factory=list)
    validation_scores: list[float] | None = None
    best_loss: float = math.inf
    best_validation_score: float = -math.inf
    no_improvement_count: int = 0
    initial_loss: float | None = None

    def to_plain(self) -> dict[str, Any]:
        """The history as plain data (builtins), as saved models hold it."""
        return {
            name: list(value) if isinstance(value, list) else value
            for name, value in vars(self).items()
        }

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> TrainingHistory:
        """The history of :meth:`to_plain`'s data."""
        return cls(**data)


# the largest total sample weight, relative to the training dtype's largest number: the
# weighted sum of the rows' losses stays finite for losses up to a million per row
_WEIGHT_SUM_ROOM = 1e-6


def _check_weights_fit(weights: np.ndarray, dtype, batch_size: int | None = None) -> None:
    """A clear error where positive weights underflow to zero or overflow in the training
    dtype (the loss was then NaN, reported as a divergence blaming the learning rate), or
    where the heaviest batch of ``batch_size`` rows (all of them: ``None``) sums beyond it."""
    finfo = np.finfo(dtype)
    positive = weights[weights > 0]
    # (a batch's sum too, with room for the rows' losses it weighs: a batch's loss is
    # their weighted sum over its total weight, in the dtype)
    heaviest = positive
    if batch_size is not None and batch_size < positive.size:
        heaviest = np.partition(positive, positive.size - batch_size)[-batch_size:]
    total = float(heaviest.sum(dtype=np.float64))
    room = _WEIGHT_SUM_ROOM * finfo.max
    if positive.size and (
        positive.min() < finfo.tiny or positive.max() > finfo.max or total > room
    ):
        raise ValueError(
            f"sample_weight holds values from {positive.min():.3g} to {positive.max():.3g} "
            f"(the heaviest batch summing to {total:.3g}), beyond what training in "
            f"{np.dtype(dtype).name} can hold ({finfo.tiny:.3g} to {finfo.max:.3g}, a batch's "
            f"sum at most {room:.3g}). "
            "Rescale them (their scale matters only against the L2 "
            "penalty, which is divided by a batch's total weight), or use dtype='float64'."
        )


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


@dataclass(frozen=True)
class Minibatch:
    """One minibatch: inputs, targets, sample weights (or None) and their sum (or None)."""

    X: Array
    Y: Array
    weights: Array | None
    weight_sum: float | None


class RowBatches:
    """The minibatches of training rows held in memory.

    Parameters
    ----------
    X : array of shape (n_rows, n_features)
        C-contiguous inputs on ``xp`` in the network's dtype.
    Y : array of shape (n_rows, n_outputs)
        C-contiguous targets on ``xp`` in the same dtype.
    batch_size : int
        Minibatch size (already resolved, see :func:`resolve_batch_size`).
    sample_weight : array of shape (n_rows,), optional
        Non-negative weights with a positive sum (host or ``xp`` array); moved to ``xp``
        once. A minibatch whose weights are all zero has no gradient and is skipped.
    xp : module, optional
        The array module of ``X``; by default NumPy or CuPy, whichever ``X`` belongs to.
    """

    def __init__(
        self,
        X: Array,
        Y: Array,
        batch_size: int,
        sample_weight: Array | None = None,
        xp: Any = None,
    ) -> None:
        self.X, self.Y, self.batch_size = X, Y, int(batch_size)
        self.xp = array_module_of(X) if xp is None else xp
        self.n_rows = int(X.shape[0])
        # the weights on the host give every batch's total weight without a device trip
        self._w_host = self._W = None
        if sample_weight is not None:
            w_host = np.asarray(to_numpy(sample_weight), dtype=np.float64)
            if w_host.shape != (self.n_rows,) or not w_host.sum() > 0:
                raise ValueError(
                    f"sample_weight must hold {self.n_rows} non-negative weights with a "
                    "positive sum."
                )
            _check_weights_fit(w_host, X.dtype, self.batch_size)
            self._w_host, self._W = w_host, self.xp.asarray(w_host, dtype=X.dtype)
        self._buffers: dict[int, tuple[Array, Array, Array | None]] = {}

    def epoch(self, rng: np.random.Generator, shuffle: bool) -> Iterator[Minibatch]:
        """Yield the minibatches of one pass over the rows, in a new random order when
        ``shuffle`` (one ``rng.permutation`` of the rows)."""
        xp, n, size = self.xp, self.n_rows, self.batch_size
        perm_host = rng.permutation(n) if shuffle else None
        perm = xp.asarray(perm_host) if shuffle else None
        for start in range(0, n, size):
            stop = min(start + size, n)
            weight_sum = None
            if self._w_host is not None:
                rows = perm_host[start:stop] if perm_host is not None else slice(start, stop)
                weight_sum = float(self._w_host[rows].sum())
                if weight_sum == 0.0:
                    continue
            if perm is not None:
                Xb, Yb, Wb = self._gather(perm[start:stop])
            else:
                Xb, Yb = self.X[start:stop], self.Y[start:stop]
                Wb = None if self._W is None else self._W[start:stop]
            yield Minibatch(Xb, Yb, Wb, weight_sum)

    def _gather(self, idx: Array) -> tuple[Array, Array, Array | None]:
        """The rows ``idx`` copied into reused buffers (one set per batch size)."""
        n, xp = idx.shape[0], self.xp
        buf = self._buffers.get(n)
        if buf is None:
            buf = self._buffers[n] = (
                xp.empty((n, self.X.shape[1]), self.X.dtype),
                xp.empty((n, self.Y.shape[1]), self.Y.dtype),
                None if self._W is None else xp.empty(n, self._W.dtype),
            )
        xp.take(self.X, idx, axis=0, out=buf[0])
        xp.take(self.Y, idx, axis=0, out=buf[1])
        if self._W is not None:
            xp.take(self._W, idx, axis=0, out=buf[2])
        return buf


@dataclass(frozen=True)
class RowBlocks:
    """Training rows that arrive in blocks, each computed when it is needed.

    The features of a dataset too large for memory (a dask array's row chunks, computed by
    the workers) are one such source; the targets stay whole, in memory, indexed by row.

    Attributes
    ----------
    bounds : array of int of shape (n_blocks + 1,)
        Rows ``bounds[k]:bounds[k + 1]`` are block ``k``; ``bounds[-1]`` is the number of
        targets.
    indices : array of int
        The blocks to train on (others may be held out for validation).
    n_features : int
        Features per row.
    load : callable
        ``load(order)`` yields ``(k, X_k)``, the index and the feature rows of every block
        ``k`` of ``order`` in that order (it may compute the next ones ahead).
    """

    bounds: np.ndarray
    indices: np.ndarray
    n_features: int
    load: Callable[[np.ndarray], Iterator[tuple[int, Array]]]

    @property
    def n_rows(self) -> int:
        """Rows in the blocks trained on."""
        return int(sum(self.bounds[k + 1] - self.bounds[k] for k in self.indices))


class BlockBatches:
    """The minibatches of training rows that arrive in :class:`RowBlocks`.

    Every epoch visits the blocks in a new random order and the rows of each block in a
    new random order (when ``shuffle``): one block is in memory at a time, besides what
    the blocks' loader computes ahead. With a single block this is :class:`RowBatches`.

    Parameters
    ----------
    blocks : RowBlocks
        Where the feature rows come from.
    Y : array of shape (bounds[-1], n_outputs)
        Host targets of all rows, moved to ``xp`` a block at a time.
    batch_size : int
        Minibatch size (already resolved, see :func:`resolve_batch_size`).
    dtype : numpy.dtype
        The network's dtype.
    xp : module
        The network's array module.
    """

    def __init__(
        self, blocks: RowBlocks, Y: np.ndarray, batch_size: int, dtype: Any, xp: Any
    ) -> None:
        self.blocks, self.Y, self.batch_size = blocks, Y, int(batch_size)
        self.dtype, self.xp = np.dtype(dtype), xp
        self.n_rows = blocks.n_rows

    def epoch(self, rng: np.random.Generator, shuffle: bool) -> Iterator[Minibatch]:
        """Yield the minibatches of one pass over the blocks."""
        xp, bounds = self.xp, self.blocks.bounds
        indices = self.blocks.indices
        order = rng.permutation(indices) if shuffle else indices
        for k, X_block in self.blocks.load(order):
            rows = slice(int(bounds[k]), int(bounds[k + 1]))
            if X_block.shape != (rows.stop - rows.start, self.blocks.n_features):
                raise ValueError(
                    f"Block {k} has feature rows of shape {X_block.shape}; expected "
                    f"{(rows.stop - rows.start, self.blocks.n_features)}."
                )
            Xk = xp.ascontiguousarray(xp.asarray(X_block), dtype=self.dtype)
            Yk = xp.asarray(np.ascontiguousarray(self.Y[rows]), dtype=self.dtype)
            yield from RowBatches(Xk, Yk, self.batch_size, xp=xp).epoch(rng, shuffle)


def train_epochs(
    network: DenseNetwork,
    optimizer: BaseOptimizer,
    schedule: LearningRateSchedule,
    batches: RowBatches | BlockBatches,
    history: TrainingHistory,
    *,
    rng: np.random.Generator,
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
    schedule : LearningRateSchedule
        How the learning rate changes after each epoch and at a plateau (see the module
        docstring).
    batches : RowBatches or BlockBatches
        The training rows: ``batches.epoch(rng, shuffle)`` yields the minibatches of one
        epoch, on the network's array module and dtype. Rows in memory, with optional
        sample weights, are :class:`RowBatches`; rows computed block by block (features
        of a dask array) are :class:`BlockBatches`.
    history : TrainingHistory
        Bookkeeping, updated in place and returned.
    rng : numpy.random.Generator
        Host generator for the shuffles; dropout masks come from a generator derived from
        it (:func:`~lmu_sk.neural.network.make_device_rng`).
    max_iter : int
        Maximum number of epochs of this call.
    shuffle : bool, default=True
        Visit the rows in a new random order every epoch.
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
    params, grads = network.params, network.grads
    uses_dropout = network.dropout > 0 or network.input_dropout > 0
    dropout_rng = make_device_rng(xp, rng) if uses_dropout else None
    warned_divergence = False
    # the loss of the last epoch before this call (None on a first call, and after early
    # stopping, which restored the best weights rather than the last): where it had
    # already exploded, a divergence now is the weights', not this call's learning rate
    carried_loss = None
    if history.loss_curve and history.validation_scores is None:
        carried_loss = history.loss_curve[-1]
    early_stopping = validation_score is not None
    best_params = xp.empty_like(params) if early_stopping else None
    if early_stopping and history.validation_scores is None:
        history.validation_scores = []
    stopped = saved_best = False

    for _ in range(max_iter):
        tic = time.perf_counter()
        epoch_loss = xp.zeros((), dtype=np.float64)
        first_loss = None
        rows_trained = 0
        # NumPy's overflow warnings are silenced: divergence is reported below instead
        with np.errstate(over="ignore", invalid="ignore"):
            for batch in batches.epoch(rng, shuffle):
                n_batch = batch.X.shape[0]
                # the optimizer adds the L2 gradient during its update (one pass less)
                batch_loss = network.loss_and_gradients(
                    batch.X,
                    batch.Y,
                    dropout_rng=dropout_rng,
                    l2_gradient=False,
                    sample_weight=batch.weights,
                    weight_sum=batch.weight_sum,
                    reported=True,
                )
                if first_loss is None and history.initial_loss is None:
                    first_loss = xp.asarray(batch_loss, dtype=np.float64).copy()
                scale = n_batch if batch.weight_sum is None else batch.weight_sum
                optimizer.update([params], [grads], l2=network.l2_terms(scale))
                epoch_loss += batch_loss * n_batch
                rows_trained += n_batch

        history.n_iter += 1
        history.t += batches.n_rows
        loss = float(epoch_loss) / rows_trained
        if not math.isfinite(loss) or not bool(xp.isfinite(params).all()):
            initial = history.initial_loss
            # each batch's loss is of the weights before its update: finite, an update broke them
            what = (
                f"the loss is {loss}"
                if not math.isfinite(loss)
                else f"its updates made the weights non-finite (its loss, computed before "
                f"each update, was {loss:.4g})"
            )
            if carried_loss is not None and initial and carried_loss > DIVERGENCE_FACTOR * initial:
                raise TrainingDivergedError(
                    f"Training diverged at epoch {history.n_iter}: {what}, and "
                    "the weights it continued from had already diverged (loss "
                    f"{carried_loss:.3g} at the last epoch before, {initial:.3g} at the "
                    "start): lowering the learning rate now does not bring them back. "
                    "Train from fresh weights (fit with warm_start=False) with a lower "
                    "learning_rate_init than the one that diverged, or scale the features "
                    "(e.g. with StandardScaler) or, for regression, the targets."
                )
            raise TrainingDivergedError(
                f"Training diverged at epoch {history.n_iter}: {what}. "
                f"Lower learning_rate_init (currently {optimizer.learning_rate_init:g}), "
                "or scale the features (e.g. with StandardScaler) or, for regression, the "
                "targets (e.g. sklearn.compose.TransformedTargetRegressor(model, "
                "transformer=StandardScaler()): the squared loss of targets beyond about "
                "1e19 passes float32's range, beyond 1e154 float64's)."
            )
        if not optimizer.state_finite():
            wider = " Or use dtype='float64'." if params.dtype == np.float32 else ""
            penalty = ""
            if network.alpha:
                penalty = (
                    f" An L2 penalty alpha ({network.alpha:g}) far larger than the total "
                    "sample weight does it too: use a smaller alpha or sample weights nearer "
                    "1 (their scale matters only against alpha)."
                )
            raise TrainingDivergedError(
                f"Training stalled at epoch {history.n_iter}: the optimizer's running "
                f"moments overflowed {params.dtype} (a gradient beyond the square root of "
                "its largest number), so its steps are zero. Lower learning_rate_init "
                f"(currently {optimizer.learning_rate_init:g}), or scale the features (e.g. "
                "with StandardScaler) or, for regression, the targets."
                f"{penalty}{wider}"
            )
        if first_loss is not None:
            history.initial_loss = float(first_loss)
        if (
            not warned_divergence
            and history.initial_loss is not None
            and history.initial_loss > 0
            and loss > DIVERGENCE_FACTOR * history.initial_loss
        ):
            warned_divergence = True
            warnings.warn(
                f"The training loss exploded: {loss:.3g} at epoch {history.n_iter}, more "
                f"than {DIVERGENCE_FACTOR:g} times the loss of the initial weights "
                f"({history.initial_loss:.3g}). Training is diverging: lower "
                f"learning_rate_init (currently {optimizer.learning_rate_init:g}), e.g. "
                "by a factor of 10, or scale the features (e.g. with StandardScaler).",
                UserWarning,
                stacklevel=3,
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

        # as in scikit-learn, the schedule's end-of-epoch update comes before the plateau
        schedule.on_epoch_end(optimizer, history.t)

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

    if not stopped and not incremental and max_iter > 0 and not schedule.fixed_length:
        warnings.warn(
            f"Stochastic Optimizer: Maximum iterations ({max_iter}) reached and the "
            "optimization hasn't converged yet.",
            ConvergenceWarning,
            stacklevel=3,
        )
    if saved_best:
        params[...] = best_params
    return history
