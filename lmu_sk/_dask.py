"""Dask arrays: Delay Network features blockwise over row chunks, heads trained by streaming.

Every sequence is independent of the others, so the features of a ``dask.array.Array`` are
computed block by block with ``map_blocks``: one task per chunk of rows, each running the
fitted (small, pickled) ``LMUFeatures`` on its block wherever the scheduler puts it. The
time and channel axes must be whole in every block; :func:`blocks_of` merges them and sizes
the row chunks so that one block stays within the memory budget.

The estimators' heads train by mini-batches, so they can stream: :func:`fit_estimator`
computes the feature scaling with dask reductions, then either gathers the features (when
they fit the gather limit) and trains as in memory, or runs every epoch block by block,
computing the next blocks' features on the workers while the head trains on the current
one.

Dask is imported lazily: nothing here needs it unless a dask array is passed.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ._input import check_dtype_param
from ._memory import format_bytes, resolve_budget

__all__ = [
    "GATHER_LIMIT_KEY",
    "blocks_of",
    "fit_estimator",
    "fit_features",
    "is_dask_array",
    "partial_fit_estimator",
    "predict_estimator",
    "transform_features",
]

#: dask config key with the most feature bytes that training gathers on the client
#: (bytes or a string such as '2GB'); unset means half of the client's available memory.
GATHER_LIMIT_KEY = "lmu_sk.gather_limit"
#: blocks of features computed ahead of the one the head trains on, when streaming
PREFETCH_BLOCKS = 4


def is_dask_array(X: Any) -> bool:
    """True for a ``dask.array.Array`` (checked without importing dask)."""
    cls = type(X)
    return cls.__name__ == "Array" and cls.__module__.split(".")[0] == "dask"


# ----------------------------------------------------------------------------------------------
# Input checks and chunking
# ----------------------------------------------------------------------------------------------


def _compute_dtype(X, dtype: np.dtype | None) -> np.dtype:
    """The dtype features are computed in: the parameter, else float32 kept, else float64.

    The NumPy path's rule: integers, booleans and float16 are cast to float64.
    """
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"X must hold real numbers; got a dask array of dtype {X.dtype}. A dask array "
            "has one dtype: convert mixed or object data with X.astype('float64') first."
        )
    if dtype is not None:
        return np.dtype(dtype)
    return X.dtype if X.dtype == np.float32 else np.dtype(np.float64)


def check_dask_input(X, name: str = "X"):
    """Validate the shape of a dask array of sequences; return it 3-D (rows, steps, channels)."""
    if any(math.isnan(size) for size in X.shape) or any(
        math.isnan(c) for chunks in X.chunks for c in chunks
    ):
        raise ValueError(
            f"{name} is a dask array with unknown chunk sizes (shape {X.shape}), e.g. after "
            f"boolean indexing; call {name}.compute_chunk_sizes() first."
        )
    if X.ndim not in (2, 3):
        raise ValueError(
            f"{name} must have shape (n_samples, n_steps) or (n_samples, n_steps, n_channels); "
            f"got a dask array of shape {X.shape}. For data laid out as (n_samples, "
            f"n_channels, n_steps) pass {name}.transpose(0, 2, 1)."
        )
    if X.shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}).")
    if X.shape[1] == 0:
        raise ValueError(f"{name} holds sequences of length zero (shape={X.shape}).")
    if X.ndim == 3 and X.shape[2] == 0:
        raise ValueError(f"{name} has zero channels; the last axis holds the channels.")
    return X if X.ndim == 3 else X[:, :, None]


def blocks_of(X, out_values_per_row: int, dtype: np.dtype, budget: int):
    """``X`` (3-D) rechunked so that every block holds whole sequences and fits ``budget``.

    The rule: the time and channel axes become single chunks. Row chunks that are already
    small enough are kept; otherwise rows are cut into chunks of
    ``budget // bytes_per_row`` rows, where a row costs its input and its features. A single
    sequence larger than the budget is an error.
    """
    _, n_steps, n_channels = X.shape
    row_bytes = (n_steps * n_channels + out_values_per_row) * dtype.itemsize
    if row_bytes > budget:
        raise ValueError(
            f"One sequence and its features need {format_bytes(row_bytes)}, more than the "
            f"memory budget of {format_bytes(budget)} per block; raise max_memory or use "
            "output='final' / 'mean' / 'max' instead of 'sequence'."
        )
    rows_fit = max(1, budget // row_bytes)
    row_chunks = X.chunks[0]
    whole = len(X.chunks[1]) == 1 and len(X.chunks[2]) == 1
    if whole and max(row_chunks) <= rows_fit:
        return X
    rows = row_chunks if max(row_chunks) <= rows_fit else rows_fit
    return X.rechunk({0: rows, 1: -1, 2: -1})


# ----------------------------------------------------------------------------------------------
# LMUFeatures
# ----------------------------------------------------------------------------------------------


def fit_features(transformer, X):
    """Fit ``transformer`` on the shapes of a dask array alone: nothing is computed."""
    from sklearn.utils.validation import _check_feature_names

    _check_feature_names(transformer, X, reset=True)
    U = check_dask_input(X)
    _compute_dtype(U, check_dtype_param(transformer.dtype))
    # _fit only reads (n_steps, n_channels): give it an empty array of that shape
    return transformer._fit(np.empty((0, *U.shape[1:])))


def lmu_features(block, transformer, return_gpu_arrays):
    """One block's features (the task's name in the graph: ``lmu_features-<hash>``)."""
    return transformer._features(block, return_gpu_arrays)


def transform_features(transformer, X, return_gpu_arrays: bool):
    """Lazy features of a dask array: ``transformer._features`` mapped over row blocks."""
    import dask.array as da

    U = check_dask_input(X)
    if U.shape[2] != transformer.n_channels_:
        raise ValueError(
            f"X has {U.shape[2]} channel(s) but LMUFeatures was fitted with "
            f"{transformer.n_channels_}; pass sequences with {transformer.n_channels_} "
            "channel(s) on the last axis, or fit again."
        )
    dtype = _compute_dtype(U, check_dtype_param(transformer.dtype))
    n_features = transformer.n_channels_ * int(transformer.order)
    sequence = transformer.output == "sequence"
    per_row = n_features * (U.shape[1] if sequence else 1)
    U = blocks_of(U.astype(dtype), per_row, dtype, resolve_budget(transformer.max_memory))
    xp = _meta_module(U, transformer, return_gpu_arrays)
    if sequence:
        chunks = (U.chunks[0], (U.shape[1],), (n_features,))
        meta = xp.empty((0, 0, 0), dtype=dtype)
        drop = None
    else:
        chunks = (U.chunks[0], (n_features,))
        meta = xp.empty((0, 0), dtype=dtype)
        drop = 2
    return da.map_blocks(
        lmu_features,
        U,
        transformer=transformer,
        return_gpu_arrays=return_gpu_arrays,
        chunks=chunks,
        drop_axis=drop,
        dtype=dtype,
        meta=meta,
    )


def _meta_module(U, transformer, return_gpu_arrays: bool):
    """NumPy, or CuPy when blocks are CuPy arrays that stay on the device."""
    meta_module = type(U._meta).__module__.split(".")[0]
    if meta_module == "cupy" and return_gpu_arrays and transformer.device != "cpu":
        import cupy

        return cupy
    return np


# ----------------------------------------------------------------------------------------------
# LMUClassifier / LMURegressor
# ----------------------------------------------------------------------------------------------


def _gather_limit() -> int:
    import dask

    return resolve_budget(dask.config.get(GATHER_LIMIT_KEY, None))


def _targets_aligned(y, n_rows: int):
    """``y`` as a NumPy array (targets are one value per row: small next to the features)."""
    y = np.asarray(y.compute() if is_dask_array(y) else y)
    if y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} sequences but y has {y.shape[0]} targets.")
    return y


def _rows(estimator, F, y=None):
    """Feature rows and their targets: per-step ones flattened for 'sequence' features."""
    if F.ndim == 3:
        n_samples, n_steps = F.shape[:2]
        F = F.reshape(n_samples * n_steps, F.shape[2])
        if y is not None:
            if y.shape[:2] != (n_samples, n_steps):
                raise ValueError(
                    f"With feature_output='sequence' y needs one target per step, shape "
                    f"({n_samples}, {n_steps}) or ({n_samples}, {n_steps}, n_outputs); got "
                    f"{y.shape}."
                )
            y = y.reshape(n_samples * n_steps, *y.shape[2:])
    return F, y


def _fit_scaling(estimator, F) -> None:
    """Feature mean and standard deviation: dask reductions (one pass over the blocks) for
    a dask ``F``, plain NumPy for a gathered one."""
    import dask

    if not estimator.scale_features:
        return
    F = _rows(estimator, F)[0]
    mean, std = dask.compute(F.mean(axis=0, dtype=np.float64), F.std(axis=0, dtype=np.float64))
    estimator.feature_mean_ = np.asarray(mean)
    estimator.feature_scale_ = np.where(std > 0, std, 1.0)


def _lazy_features(estimator, X):
    """Fit ``estimator.features_`` on the shapes of ``X``; return the lazy training features."""
    from .features import LMUFeatures

    params = estimator._transformer_params(X)
    estimator.features_ = LMUFeatures(**params).fit(X)
    estimator.order_ = int(params["order"])
    estimator.n_features_in_ = estimator.features_.n_features_in_
    return estimator.features_.transform(X)


def _row_slices(chunks: tuple[int, ...]) -> list[slice]:
    bounds = np.cumsum((0, *chunks))
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(bounds)]


def _blocks_in_order(F, order, ahead: int = PREFETCH_BLOCKS):
    """Yield ``(rows, NumPy features)`` of the row blocks of ``F`` in ``order``.

    Up to ``ahead`` next blocks are computed (by whatever scheduler is active, in parallel
    on a cluster) while the caller trains on the current one: at most ``ahead + 1`` blocks
    are in memory on the client.
    """
    slices = _row_slices(F.chunks[0])
    with ThreadPoolExecutor(max_workers=ahead) as pool:
        pending = deque()
        for k, index in enumerate(order):
            while len(pending) <= ahead and k + len(pending) < len(order):
                pending.append(pool.submit(F[slices[order[k + len(pending)]]].compute))
            yield slices[index], pending.popleft().result()


def _one_streamed_epoch(estimator, head, F, y, order, classes) -> float:
    """Train ``head`` for one pass over the blocks of ``F`` in ``order``; the mean loss."""
    total, rows = 0.0, 0
    for rows_slice, block in _blocks_in_order(F, order):
        Fb, yb = _rows(estimator, block, y[rows_slice])
        Fb = estimator._scale(Fb)
        if classes is None:
            head.partial_fit(Fb, yb)
        else:
            head.partial_fit(Fb, yb, classes=classes)
        # the head's own plateau bookkeeping would act on block losses: epochs decide here
        head._history.no_improvement_count = 0
        total += head.loss_ * Fb.shape[0]
        rows += Fb.shape[0]
    return total / rows


def _validation_blocks(estimator, F, y, rng):
    """Hold out ``validation_fraction`` of the row blocks of ``F`` for early stopping.

    Returns the indices of the training blocks and the gathered, scaled validation
    features and targets (which must fit the gather limit).
    """
    n_blocks = len(F.chunks[0])
    n_val = max(1, round(estimator.validation_fraction * n_blocks))
    if n_val >= n_blocks:
        raise ValueError(
            f"early_stopping on streamed features holds out whole blocks: "
            f"validation_fraction={estimator.validation_fraction} of {n_blocks} block(s) "
            "leaves none to train on. Use smaller row chunks or pass X_val, y_val."
        )
    blocks = rng.permutation(n_blocks)
    slices = _row_slices(F.chunks[0])
    held_out = np.sort(blocks[:n_val])
    rows = np.concatenate([np.arange(slices[b].start, slices[b].stop) for b in held_out])
    return np.sort(blocks[n_val:]), _gathered_validation(estimator, F[rows], y[rows])


def _gathered_validation(estimator, F_val, y_val):
    if F_val.nbytes > _gather_limit():
        raise ValueError(
            f"The validation features ({format_bytes(F_val.nbytes)}) exceed the gather limit "
            f"(dask config {GATHER_LIMIT_KEY!r}); lower validation_fraction or pass a "
            "smaller X_val."
        )
    F_val = F_val.compute() if is_dask_array(F_val) else F_val
    F_val, y_val = _rows(estimator, F_val, y_val)
    return estimator._scale(F_val), y_val


def _train_streaming(estimator, F, y, validation=None) -> None:
    """Train a fresh head for up to ``max_iter`` epochs streaming the blocks of ``F``.

    Each epoch visits the blocks in a new random order (``shuffle``) and shuffles the rows
    within each block; the stopping rule is the head's (``tol``, ``n_iter_no_change``),
    applied to the epoch loss, or with ``early_stopping`` to the score on ``validation``
    (scaled features and targets; by default ``validation_fraction`` of the blocks), the
    weights of the best epoch restored at the end.
    """
    from sklearn.utils import check_random_state

    from .neural.optimizers import make_schedule

    head = getattr(estimator, "head_", None)
    if head is None or not estimator.warm_start:
        head = estimator._make_head()
    classes = np.unique(y) if hasattr(estimator._head_class, "predict_proba") else None
    rng = check_random_state(estimator.random_state)
    schedule = make_schedule(estimator.learning_rate)
    blocks = np.arange(len(F.chunks[0]))
    if estimator.early_stopping and validation is None:
        blocks, validation = _validation_blocks(estimator, F, y, rng)
    early_stopping = estimator.early_stopping
    losses: list[float] = []
    scores: list[float] = []
    best, best_score, best_weights, stalled = math.inf, -math.inf, None, 0
    for _ in range(estimator.max_iter):
        order = rng.permutation(blocks) if estimator.shuffle else blocks
        loss = _one_streamed_epoch(estimator, head, F, y, order, classes)
        losses.append(loss)
        line = f"Epoch {len(losses)}, loss = {loss:.8f}"
        if early_stopping:
            score = float(head.score(*validation))
            scores.append(score)
            line += f", validation score = {score:.6f}"
            stalled = stalled + 1 if score < best_score + estimator.tol else 0
            if score > best_score:
                best_score = score
                best_weights = copy.deepcopy((head.coefs_, head.intercepts_))
        else:
            stalled = stalled + 1 if loss > best - estimator.tol else 0
        best = min(best, loss)
        if estimator.verbose:
            print(f"{line} (streamed over {len(blocks)} blocks)")
        if stalled > estimator.n_iter_no_change:
            if schedule.on_plateau(head._optimizer):
                break
            stalled = 0
    if best_weights is not None:
        head.coefs_, head.intercepts_ = best_weights
    head.n_iter_ = len(losses)
    head.loss_curve_ = losses
    head.loss_ = losses[-1] if losses else None
    head.best_loss_ = None if early_stopping else best
    head.validation_scores_ = scores if early_stopping else None
    head.best_validation_score_ = best_score if early_stopping else None
    estimator.head_ = head
    estimator._copy_head_attributes()


def _dense_head_kind(estimator) -> str:
    """The head on dask arrays: the dense head, which trains block by block.

    ``head='auto'`` means the dense head here (data on a cluster is rarely small); the
    closed-form ridge head and the pooled features it uses by default need every feature
    at once.
    """
    if estimator.head not in ("auto", "dense"):
        raise ValueError(
            f"head={estimator.head!r} is not supported on dask arrays: only the dense head "
            "trains block by block. Use head='dense', or compute X into memory first "
            "(X.compute())."
        )
    if estimator.feature_output == "pooled":
        raise ValueError(
            "feature_output='pooled' is not supported on dask arrays; use 'final', 'mean', "
            "'max' (or 'sequence' for LMURegressor), or compute X into memory first."
        )
    return "dense"


def fit_estimator(estimator, X, y, X_val=None, y_val=None):
    """``LMUClassifier.fit`` / ``LMURegressor.fit`` for a dask array ``X``.

    Features are computed on the workers. When they take at most the gather limit (dask
    config ``'lmu_sk.gather_limit'``, default half of the client's available memory) they
    are gathered and the head trains as in memory (every option supported); otherwise each
    epoch streams them block by block.
    """
    if not estimator.warm_start or not hasattr(estimator, "head_"):
        estimator.__dict__.pop("head_", None)
    if (X_val is None) != (y_val is None):
        raise ValueError("Pass both X_val and y_val, or neither.")
    estimator.head_kind_ = _dense_head_kind(estimator)
    F = _lazy_features(estimator, X)
    y = _targets_aligned(y, F.shape[0])
    gather = F.nbytes <= _gather_limit()
    if gather:
        F = F.compute()
    _fit_scaling(estimator, F)
    validation = None
    if X_val is not None:
        F_val = estimator.features_.transform(X_val)
        y_val = _targets_aligned(y_val, F_val.shape[0])
        validation = _gathered_validation(estimator, F_val, y_val)
    if gather:
        X_val, y_val = (None, None) if validation is None else validation
        F, y_rows = _rows(estimator, F, y)
        return estimator._fit_head(
            estimator._scale(F), y_rows, partial=False, X_val=X_val, y_val=y_val
        )
    if validation is not None and not estimator.early_stopping:
        raise ValueError(
            "X_val and y_val are used for early stopping only; set early_stopping=True or "
            "leave them out."
        )
    _train_streaming(estimator, F, y, validation)
    return estimator


def partial_fit_estimator(estimator, X, y, classes=None):
    """``partial_fit`` of a dask array: one epoch over its row blocks, block by block.

    The first call fits the features on the shapes of ``X`` and the scaling on all of its
    features (dask reductions).
    """
    if not hasattr(estimator, "head_"):
        estimator.head_kind_ = _dense_head_kind(estimator)
        F = _lazy_features(estimator, X)
        _fit_scaling(estimator, F)
    else:
        F = estimator.features_.transform(X)
    y = _targets_aligned(y, F.shape[0])
    head = getattr(estimator, "head_", None)
    if head is None:
        head = estimator._make_head()
    else:
        head.set_params(**{name: getattr(estimator, name) for name in _head_params()})
    if classes is None and hasattr(estimator._head_class, "predict_proba"):
        classes = getattr(head, "classes_", None)
    _one_streamed_epoch(estimator, head, F, y, np.arange(len(F.chunks[0])), classes)
    estimator.head_ = head
    estimator._copy_head_attributes()
    return estimator


def _head_params() -> tuple[str, ...]:
    from .estimators import _HEAD_PARAMS

    return _HEAD_PARAMS


def lmu_prediction(block, estimator, method):
    """The head's ``method`` on one block of features, scaled as in training."""
    rows = _rows(estimator, block)[0]
    result = getattr(estimator.head_, method)(estimator._scale(rows))
    return result.reshape(*block.shape[:-1], *result.shape[1:]) if block.ndim == 3 else result


def predict_estimator(estimator, X, method: str):
    """Lazy ``predict`` / ``predict_proba`` / ``predict_log_proba`` of a dask array."""
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "head_")
    F = estimator.features_.transform(X)
    # the shape and dtype of a block's result, from one sample of zeros
    probe = lmu_prediction(np.zeros((1, *F.shape[1:]), F.dtype), estimator, method)
    dtype = probe.dtype
    chunks = (F.chunks[0], *((size,) for size in probe.shape[1:]))
    return da.map_blocks(
        lmu_prediction,
        F,
        estimator=estimator,
        method=method,
        chunks=chunks,
        drop_axis=list(range(len(chunks), F.ndim)) or None,
        dtype=dtype,
        meta=np.empty((0,) * len(chunks), dtype=dtype),
    )
