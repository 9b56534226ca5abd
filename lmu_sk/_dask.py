"""Dask arrays: Delay Network features blockwise over row chunks, heads trained by blocks.

Every sequence is independent of the others, so the features of a ``dask.array.Array`` are
computed block by block with ``map_blocks``: one task per chunk of rows, each running the
fitted (small, pickled) feature transformer on its block wherever the scheduler puts it.
The time and channel axes must be whole in every block; :func:`blocks_of` merges them and
sizes the row chunks so that a block (its inputs and features) takes at most half of
``max_memory``; the task's transformer works within the rest, so that a task stays
within ``max_memory``.

The tools here serve the transformers and the composites, which call them; nothing here
imports an estimator. A composite fits on dask features either by gathering them (when
they fit :func:`gather_limit`; always for the closed-form ridge head) or, for the dense
head, by handing the head :func:`row_blocks`: its epoch loop trains on one block while the
next blocks' features are computed on the workers. Prediction is :func:`map_rows`: lazy.

Dask is imported lazily: nothing here needs it unless a dask array is passed.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._device import get_array_module, is_dask_array, resolve_device, to_numpy
from ._input import cast_checked, check_dtype_param, powers_of_two_near, step_target_rows
from ._memory import available_memory, check_fits, format_bytes, resolve_budget
from .engine.plan import rows_within
from .neural.training import RowBlocks

__all__ = [
    "GATHER_LIMIT_KEY",
    "aligned_targets",
    "blocks_of",
    "column_moments",
    "evenly_spaced_rows",
    "evenly_spaced_sample",
    "feature_rows",
    "fit_features",
    "gather_limit",
    "gathered",
    "gathering_fits",
    "is_dask_array",
    "map_rows",
    "row_blocks",
    "transform_features",
    "validation_blocks",
]

#: dask config key with the most feature bytes that training gathers on the client
#: (bytes or a string such as '2GB'); unset means half of the client's available memory.
GATHER_LIMIT_KEY = "lmu_sk.gather_limit"
#: blocks of features computed ahead of the one the head trains on, when streaming
PREFETCH_BLOCKS = 4
#: copies of the features a gather holds at its peak: the computed blocks and their join
GATHER_COPIES = 2
#: the memory the dense head gathers its features within, in copies of them: the gather's
#: two, and the room its training takes beside them (a gather that leaves none is not
#: worth it: the head can stream the blocks instead)
DENSE_GATHER_COPIES = 3


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
            f"got a dask array of shape {X.shape} ({X.ndim} dimension(s)): one row per "
            "sequence, reshaped so."
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
    small enough are kept; otherwise rows are cut into chunks of as many rows as
    ``budget`` holds (:func:`lmu_sk.engine.plan.rows_within`), where a row costs its input
    and its features. A single sequence larger than the budget is an error.
    """
    _, n_steps, n_channels = X.shape
    row_bytes = (n_steps * n_channels + out_values_per_row) * dtype.itemsize
    rows_fit = rows_within(
        budget,
        row_bytes,
        what="A block of sequences and their features",
        fix=" or use output='final' / 'mean' / 'max' instead of 'sequence'",
    )
    row_chunks = X.chunks[0]
    whole = len(X.chunks[1]) == 1 and len(X.chunks[2]) == 1
    if whole and max(row_chunks) <= rows_fit:
        return X
    rows = row_chunks if max(row_chunks) <= rows_fit else rows_fit
    return X.rechunk({0: rows, 1: -1, 2: -1})


# ----------------------------------------------------------------------------------------------
# Feature transformers
# ----------------------------------------------------------------------------------------------


def fit_features(transformer, X):
    """Fit ``transformer`` on the shapes of a dask array alone: nothing is computed."""
    from sklearn.utils.validation import _check_feature_names

    _check_feature_names(transformer, X, reset=True)
    U = check_dask_input(X)
    _compute_dtype(U, check_dtype_param(transformer.dtype))
    # _fit only reads (n_steps, n_channels): give it an empty array of that shape
    return transformer._fit(np.empty((0, *U.shape[1:])))


def evenly_spaced(n_samples: int, n_rows: int) -> np.ndarray:
    """Indices of ``n_rows`` rows of ``n_samples``, evenly spaced (first and last included):
    the rows the in-memory fits pick."""
    take = np.linspace(0, n_samples - 1, max(1, min(n_samples, n_rows))).round()
    return np.unique(take).astype(np.int64)


def evenly_spaced_rows(X, n_rows: int) -> np.ndarray:
    """``n_rows`` rows of the dask array ``X``, evenly spaced over it, computed into NumPy.

    For transformers that fit on a sample of the training sequences (the thresholds of the
    pooled features): the rows are those the in-memory fit picks from a NumPy ``X``, so
    both fits agree.
    """
    check_dask_input(X)
    return to_numpy(X[evenly_spaced(X.shape[0], n_rows)].compute())


def evenly_spaced_sample(X, y, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """``n_rows`` evenly spaced rows of the dask array ``X`` and their targets, in NumPy.

    ``y`` (one target per row of ``X``, checked by the caller) is a NumPy array or a dask
    array: of a dask array only the targets taken are computed, with the rows, in one
    computation.
    """
    import dask

    check_dask_input(X)
    take = evenly_spaced(X.shape[0], n_rows)
    targets = y[take] if is_dask_array(y) else to_numpy(y)[take]
    rows, targets = dask.compute(X[take], targets)
    return to_numpy(rows), to_numpy(targets)


def transform_block(block, transformer, return_gpu_arrays, compute_dtype, channels_first):
    """One block's features (the task's name in the graph: ``transform_block-<hash>``).

    ``block`` holds whole sequences, channels last; it is handed to the transformer in the
    layout the transformer reads.
    """
    if channels_first:
        block = block.transpose(0, 2, 1)
    return transformer._transform(block, return_gpu_arrays, compute_dtype)


def _without_empty_chunks(U):
    """``U`` without chunks of zero rows (as filtering and ``compute_chunk_sizes()`` leave
    them), whose tasks the transformers would refuse as empty input; ``U`` itself where
    it has none, or no rows at all."""
    rows = tuple(size for size in U.chunks[0] if size)
    if not rows or len(rows) == len(U.chunks[0]):
        return U
    return U.rechunk({0: rows})


def transform_features(transformer, X, return_gpu_arrays: bool, dtype=None):
    """Lazy features of a dask array: the fitted ``transformer`` mapped over row blocks.

    Works for any fitted transformer of this package (``LMUFeatures``,
    ``LMUPooledFeatures``): the shape and dtype of a block's result come from the
    transformer itself, run on one sequence of zeros. ``X`` is channels last.
    """
    import dask.array as da

    U = _without_empty_chunks(check_dask_input(X))
    if U.shape[2] != transformer.n_channels_:
        raise ValueError(
            f"X has {U.shape[2]} channel(s) but {type(transformer).__name__} was fitted with "
            f"{transformer.n_channels_}; pass sequences with {transformer.n_channels_} "
            "channel(s) on the last axis, or fit again."
        )
    # the precision the transformer reads its input at (the pooled features: the input's)
    in_dtype = _compute_dtype(U, transformer._input_dtype(dtype))
    channels_first = bool(getattr(transformer, "channels_first", False))
    options = dict(
        transformer=transformer,
        return_gpu_arrays=return_gpu_arrays,
        compute_dtype=dtype,
        channels_first=channels_first,
    )
    # one sequence of zeros, on the CPU, gives the shape and dtype of a block's result;
    # the probe's and the tasks' copies show no progress (dask's tasks report none) and
    # read the blocks channels last, as given, without channels_first=None's warning
    # (given once, for X, by the caller)
    quiet = {"verbose": False, "channels_first": channels_first}
    on_cpu = copy.copy(transformer)
    on_cpu.__dict__.update(quiet, device="cpu")
    probe = transform_block(
        np.zeros((1, *U.shape[1:]), in_dtype), **{**options, "transformer": on_cpu}
    )
    per_row = int(np.prod(probe.shape[1:]))
    # a task holds its block (inputs and features, at most half the budget) and the
    # transformer's working memory, given the rest: together within max_memory
    budget = resolve_budget(transformer.max_memory)
    # cast block by block with the in-memory path's check: a finite value beyond float32
    # is refused naming it, not cast to infinity and then refused as non-finite input
    cast = U if U.dtype == in_dtype else U.map_blocks(cast_checked, in_dtype, dtype=in_dtype)
    U = blocks_of(cast, per_row, in_dtype, budget // 2)
    block_bytes = max(U.chunks[0]) * (int(np.prod(U.shape[1:])) + per_row) * in_dtype.itemsize
    within = copy.copy(transformer)
    within.__dict__.update(quiet, max_memory=int(budget - block_bytes))
    options["transformer"] = within
    xp = _meta_module(U, transformer, return_gpu_arrays)
    chunks = (U.chunks[0], *((size,) for size in probe.shape[1:]))
    return da.map_blocks(
        transform_block,
        U,
        **options,
        chunks=chunks,
        drop_axis=None if probe.ndim == 3 else 2,
        dtype=probe.dtype,
        meta=xp.empty((0,) * probe.ndim, dtype=probe.dtype),
    )


def _meta_module(U, transformer, return_gpu_arrays: bool):
    """NumPy, or CuPy when the blocks' features stay on the device: asked for on a GPU,
    the transformer returns CuPy arrays whatever the blocks are (NumPy blocks included)."""
    if return_gpu_arrays and resolve_device(transformer.device) == "gpu":
        return get_array_module("gpu")
    return np


# ----------------------------------------------------------------------------------------------
# Training and prediction on dask features
# ----------------------------------------------------------------------------------------------


def gather_limit() -> int:
    """The most feature bytes training gathers on the client (dask config
    ``'lmu_sk.gather_limit'``; unset: half of the client's available memory)."""
    import dask

    return resolve_budget(dask.config.get(GATHER_LIMIT_KEY, None))


def aligned_targets(y, n_rows: int) -> np.ndarray:
    """``y`` as a NumPy array (targets are one value per row: small next to the features)."""
    y = to_numpy(y.compute() if is_dask_array(y) else y)
    if y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} sequences but y has {y.shape[0]} targets.")
    return y


def feature_rows(F, y=None):
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
            y = step_target_rows(y, n_samples * n_steps)
    return F, y


def column_moments(F) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of the feature columns, float64: dask reductions (one
    pass over the blocks) for a dask ``F``, NumPy for a gathered one."""
    import dask

    F = feature_rows(F)[0]
    mean, std, largest = dask.compute(
        F.mean(axis=0, dtype=np.float64),
        F.std(axis=0, dtype=np.float64),
        abs(F).max(axis=0),
    )
    largest = np.asarray(largest, dtype=np.float64)
    if np.any((largest > 1e150) | ((largest > 0) & (largest < 1e-150))):
        # squares beyond float64's range (they overflow or vanish): the deviations of
        # the columns over a power of two near their largest, as in memory (one more pass)
        unit = powers_of_two_near(largest)
        (std,) = dask.compute((F / unit).std(axis=0, dtype=np.float64))
        std = np.asarray(std) * unit
    return np.asarray(mean), np.asarray(std)


# what a refused gather of training features suggests; held-out rows suggest fewer of them
TRAINING_FIX = "use fewer sequences, or use head='dense', which trains block by block"
HELD_OUT_FIX = "hold out fewer rows (a lower validation_fraction, or a smaller X_val)"


def gathering_fits(F) -> bool:
    """Whether the dense head gathers the dask features ``F``: they fit the gather limit,
    and :data:`DENSE_GATHER_COPIES` of them the memory available now (else it streams
    their blocks)."""
    return F.nbytes <= gather_limit() and DENSE_GATHER_COPIES * F.nbytes <= available_memory()


def gathered(F, what: str, fix: str = TRAINING_FIX):
    """``F`` computed into memory on the client, refused above :func:`gather_limit` with
    the advice ``fix`` besides raising the limit, and with a
    :class:`~lmu_sk._memory.MemoryBudgetError` where the gather's peak (the blocks and
    their join, :data:`GATHER_COPIES` copies) exceeds the memory available."""
    limit = gather_limit()
    if F.nbytes > limit:
        raise ValueError(
            f"{what} needs all {format_bytes(F.nbytes)} of features in memory, more than the "
            f"gather limit of {format_bytes(limit)} (dask config {GATHER_LIMIT_KEY!r}). "
            f"Raise the limit, or {fix}."
        )
    if not is_dask_array(F):
        return F
    check_fits(
        GATHER_COPIES * F.nbytes,
        f"{what}: gathering {format_bytes(F.nbytes)} of features (the computed blocks and "
        "their join)",
        f"Free memory, or {fix}.",
        available_memory(),
    )
    return F.compute()


def _row_slices(chunks: tuple[int, ...]) -> list[slice]:
    bounds = np.cumsum((0, *chunks))
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(bounds)]


def _blocks_in_order(F, order, ahead: int = PREFETCH_BLOCKS):
    """Yield ``(k, NumPy features of row block k)`` for the blocks ``k`` of ``order``.

    Up to ``ahead`` next blocks are computed (by whatever scheduler is active, in parallel
    on a cluster) while the caller trains on the current one: at most ``ahead + 1`` blocks
    are in memory on the client.
    """
    slices = _row_slices(F.chunks[0])
    with ThreadPoolExecutor(max_workers=ahead) as pool:
        pending = deque()
        for i, k in enumerate(order):
            while len(pending) <= ahead and i + len(pending) < len(order):
                pending.append(pool.submit(F[slices[order[i + len(pending)]]].compute))
            yield int(k), pending.popleft().result()


def row_blocks(F, prepare, indices=None) -> RowBlocks:
    """The row blocks of the dask features ``F`` as training rows for a dense head.

    ``prepare(block) -> (rows, None)`` turns a computed block of features into the head's
    (scaled) input rows; ``indices`` are the blocks to train on (default: all). For
    'sequence' features every step of a sequence is a row, so the blocks' row bounds are
    in steps.
    """
    steps = F.shape[1] if F.ndim == 3 else 1
    bounds = np.cumsum((0, *F.chunks[0])) * steps

    def load(order):
        for k, block in _blocks_in_order(F, order):
            yield k, prepare(block)[0]

    if indices is None:
        indices = np.arange(len(F.chunks[0]))
    return RowBlocks(bounds, np.asarray(indices), int(F.shape[-1]), load)


def validation_blocks(F, y, prepare, validation_fraction: float, rng):
    """Hold out ``validation_fraction`` of the row blocks of ``F`` for early stopping.

    Returns the indices of the training blocks, and the gathered, prepared validation rows
    and their targets (which must fit the gather limit).
    """
    n_blocks = len(F.chunks[0])
    n_val = max(1, round(validation_fraction * n_blocks))
    if n_val >= n_blocks:
        raise ValueError(
            f"early_stopping on streamed features holds out whole blocks: "
            f"validation_fraction={validation_fraction} of {n_blocks} block(s) "
            "leaves none to train on. Use smaller row chunks or pass X_val, y_val."
        )
    blocks = rng.permutation(n_blocks)
    slices = _row_slices(F.chunks[0])
    held_out = np.sort(blocks[:n_val])
    rows = np.concatenate([np.arange(slices[b].start, slices[b].stop) for b in held_out])
    F_val = gathered(F[rows], "Early stopping on held-out blocks", HELD_OUT_FIX)
    X_val, y_val = prepare(F_val, y[rows])
    return np.sort(blocks[n_val:]), X_val, y_val


def map_rows(function, F, probe):
    """Lazy ``function`` of every row block of the dask features ``F``.

    ``probe`` is ``function`` of one row of zeros: it gives the result's trailing shape and
    dtype. Used for ``predict`` / ``predict_proba`` / ``decision_function``.
    """
    import dask.array as da

    dtype = probe.dtype
    chunks = (F.chunks[0], *((size,) for size in probe.shape[1:]))
    return da.map_blocks(
        function,
        F,
        chunks=chunks,
        drop_axis=list(range(len(chunks), F.ndim)) or None,
        dtype=dtype,
        meta=np.empty((0,) * len(chunks), dtype=dtype),
    )
