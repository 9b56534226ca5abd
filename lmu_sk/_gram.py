"""The Gram matrices of the ridge heads' features: ``X X^T`` and ``X^T X``, centered and
weighted, by blocks where the features are many, in float64 or from float32 products.

Written against the features' array module (NumPy or CuPy), for :mod:`lmu_sk.ridge`.
"""

from __future__ import annotations

import itertools
from types import ModuleType

import numpy as np

# The Gram matrix of the centered features is formed from the uncentered one where the
# column means carry at most this fraction of the features' energy (``n |mean|^2`` against
# ``trace(X X^T)``): its rounding then grows by that fraction at most, and no centered copy
# of the features is made. Standardized features (the composites') have means ~1e-16.
GRAM_MEAN_ENERGY = 1e-3
# rows of centered features (or of leverages) made at a time where they are made by blocks
BLOCK_BYTES = 32 * 1024**2
# centered_product's shortcut ``X^T B - mean sum(B)`` rounds a column by up to its
# ``|mean| / spread`` times the centered product's rounding: at most this ratio (1e4 * eps
# ~ 2e-12 of the product's scale; the standardized features of the LMU estimators have
# means ~1e-16 of their spread). Over the 42 development sets it spares a copy of the
# features per fit (about 4 % of the default's time).
SHORTCUT_MEAN_RATIO = 1e4
# feature weights constant over at most this many runs of adjacent columns share one pass
# of Gram matrices (a run's matrix serves every candidate); beyond, one Gram per candidate
_MAX_WEIGHT_RUNS = 64
# Gram matrices in single precision (``gram_dtype=np.float32``, the LMU estimators' for
# their standardized features): the products of float32 columns summed in float64 over
# blocks of this many columns (1.7x-1.9x faster than float64's products on one core, for
# 300-1 800 rows of 12 000-15 000 features; blocks of 1 024: 1.65x-1.75x)
_SINGLE_BLOCK_COLUMNS = 4096
# float32's products of values of at most this magnitude, summed over such a block, stay
# finite (2**(2 * 57 + 12) < 2**128); where a block's largest value is beyond it, or
# below the lower bound (its products all below float32's normal range), the whole
# product takes float64's.
# The rounding moves the Gram matrix's eigenvalues by ~1e-9 of its trace (spectral norm),
# below the smallest nonzero eigenvalue of the development sets' standardized features
# (8e-6 of it) and the penalties' floor: no other floor than float64's is set (one of
# float32's eps times the trace zeroed real directions of re-recorded, near-duplicate
# series). Exact duplicate rows keep their null difference: their float32 products are
# the same numbers; the intercept's direction is projected out.
_SINGLE_RANGE = (2.0**-60, 2.0**57)


def refuse_overflow(a, root, xp: ModuleType) -> None:
    """Raise a ValueError naming the cause where the (weighted) Gram matrix or centered
    features ``a`` overflow float64; ``root`` is the column of square-root weights."""
    if bool(xp.isfinite(a).all()):
        return
    largest = 0.0 if root is None else float(xp.max(root)) ** 2
    # weights up to 1 shrink the products: then the features alone overflow
    if largest > 1.0:
        raise ValueError(
            f"The ridge head's weighted features overflow float64: sample_weight (up to "
            f"{largest:.3g}) times the squared features exceeds its range. Divide "
            "sample_weight by a constant (e.g. its mean); the penalty acts against the "
            "weighted sum of squares, so divide alphas by the same constant to keep the model."
        )
    raise ValueError(
        "The ridge head's Gram matrix of the features overflows float64: the features are "
        "too large. Standardize them (the LMU estimators do with scale_features=True) or "
        "scale them down."
    )


def weight_runs(weights: np.ndarray) -> list[slice] | None:
    """The runs of adjacent columns that every candidate of ``weights`` (``(n_candidates,
    n_features)``) weights alike, or ``None`` where there are more than
    ``_MAX_WEIGHT_RUNS`` (then each candidate's Gram matrix is formed on its own)."""
    change = np.flatnonzero(np.any(weights[:, 1:] != weights[:, :-1], axis=0)) + 1
    if len(change) >= _MAX_WEIGHT_RUNS:
        return None
    bounds = [0, *change.tolist(), weights.shape[1]]
    return [slice(a, b) for a, b in itertools.pairwise(bounds)]


def weighted_grams(
    X, x_mean, root, weights, xp: ModuleType, single: bool = False, centered=True
) -> list:
    """``Xc diag(w^2) Xc^T`` for every row ``w`` of ``weights`` (a host array; ``None``:
    one, ``w = 1``), ``Xc = root * (X - x_mean)``.

    Over runs of columns weighted alike (:func:`weight_runs`) each run's Gram matrix is
    formed once and added to every candidate's with its squared weight: the flops of one
    Gram matrix whatever the number of candidates, ``n_candidates + 1`` matrices of
    ``n_samples**2`` held. ``single``, ``centered``: see :func:`centered_gram`.
    """
    if weights is None:
        return [centered_gram(X, x_mean, root, xp, None, None, single, centered)]
    grams = uncentered_grams(X, weights, xp, single)
    return [
        centered_gram(X, x_mean, root, xp, w, gram, single, centered)
        for w, gram in zip(weights, grams, strict=True)
    ]


def products(X, xp: ModuleType, single: bool = False, w2=None):
    """``X diag(w2) X^T`` (``w2`` ``None``: ``X X^T``), float64; with ``single`` the products
    of the columns (times ``sqrt(w2)`` in float64) rounded to float32, summed in float64
    over blocks of ``_SINGLE_BLOCK_COLUMNS`` columns (one symmetric rank-k update each),
    where every block's values are within ``_SINGLE_RANGE`` (else float64's products)."""
    if not single:
        return X @ X.T if w2 is None else (X * w2) @ X.T
    low, high = _SINGLE_RANGE
    gram = xp.zeros((X.shape[0], X.shape[0]))
    for start in range(0, X.shape[1], _SINGLE_BLOCK_COLUMNS):
        columns = slice(start, start + _SINGLE_BLOCK_COLUMNS)
        block = X[:, columns]
        if w2 is not None:
            block = block * xp.sqrt(w2[columns])
        largest = max(float(block.max()), -float(block.min())) if block.size else low
        if not low <= largest <= high:  # (NaN too: float64's products carry it)
            return products(X, xp, False, w2)
        block = block.astype(xp.float32)
        gram += block @ block.T
    return gram


def without_intercept_direction(G, root, xp: ModuleType):
    """``P G P`` with ``P`` the projection off the intercept's direction (``root``, the
    square roots of the weights as a column, or the ones vector where ``None``), in place:
    a null direction of the centered Gram matrix, which single precision's rounding
    leaves an eigenvalue well above float64's floor (see ``_SINGLE_RANGE``)."""
    r = xp.ones(G.shape[0]) if root is None else root[:, 0]
    r = r / xp.sqrt(r @ r)
    c = G @ r
    G -= c[:, None] * r[None, :]
    G -= r[:, None] * c[None, :]
    G += float(r @ c) * (r[:, None] * r[None, :])
    return G


def uncentered_grams(X, weights, xp: ModuleType, single: bool = False) -> list:
    """``X diag(w^2) X^T`` for every row ``w`` of ``weights`` (``None``: ``[X X^T]``),
    over the runs of columns weighted alike (:func:`weight_runs`) where they are few;
    with ``single`` in float32's products (:func:`products`)."""
    if weights is None:
        return [products(X, xp, single)]
    runs = weight_runs(weights)
    if runs is None:
        return [products(X, xp, single, xp.asarray(w) ** 2) for w in weights]
    grams = [xp.zeros((X.shape[0], X.shape[0])) for _ in weights]
    for run in runs:
        piece = products(X[:, run], xp, single)
        for gram, w in zip(grams, weights, strict=True):
            gram += float(w[run.start]) ** 2 * piece
    return grams


def centered_blocks(X, x_mean, root, xp: ModuleType):
    """``(rows, root * (X[rows] - x_mean))`` in blocks of rows of about
    ``BLOCK_BYTES``: the centered features are never formed whole."""
    n_samples, n_features = X.shape
    step = max(1, BLOCK_BYTES // (8 * max(n_features, 1)))
    for start in range(0, n_samples, step):
        rows = slice(start, min(start + step, n_samples))
        block = X[rows] - x_mean
        if root is not None:
            block *= root[rows]
        yield rows, block


def centered_product(X, x_mean, B, xp: ModuleType, x_spread=None):
    """``(X - x_mean)^T B``. Where ``x_spread`` (the columns' ``max - min``) is given, by
    ``X^T B - x_mean sum(B)``, one product and no copy of the features, for the columns
    whose mean is within ``SHORTCUT_MEAN_RATIO`` times their spread; the others (a huge
    mean, or a constant column's, whose centered column is exactly zero: ``X^T B -
    x_mean sum(B)`` would cancel a constant 1e30 against itself into a coefficient of
    1e13) from their centered columns. Without ``x_spread``, every column from the
    centered features, by blocks of rows."""
    if x_spread is None or X.dtype != xp.float64:  # (X^T B would copy X to float64 whole)
        product = xp.zeros((X.shape[1], B.shape[1]))
        for rows, block in centered_blocks(X, x_mean, None, xp):
            product += block.T @ B[rows]
        return product
    product = X.T @ B
    product -= x_mean[:, None] * B.sum(axis=0)[None, :]
    exact = xp.abs(x_mean) > SHORTCUT_MEAN_RATIO * x_spread
    if bool(xp.any(exact)):
        columns = xp.flatnonzero(exact)
        product[columns] = (X[:, columns] - x_mean[columns]).T @ B
    return product


def feature_gram(X, x_mean, root, xp: ModuleType, Yc=None):
    """``Xc^T Xc`` (and ``Xc^T Yc`` where ``Yc`` is given, else ``None``), summed over
    blocks of rows of the centered features."""
    n_features = X.shape[1]
    G = xp.zeros((n_features, n_features))
    XtY = None if Yc is None else xp.zeros((n_features, Yc.shape[1]))
    for rows, block in centered_blocks(X, x_mean, root, xp):
        refuse_overflow(block, root, xp)
        G += block.T @ block
        if XtY is not None:
            XtY += block.T @ Yc[rows]
    refuse_overflow(G, root, xp)
    return G, XtY


def column_statistics(X, w, xp: ModuleType):
    """``(means, spreads)``: the columns' (weighted, ``w`` not ``None``) means, a constant
    column's its value exactly, and their ``max - min``, both over the rows of positive
    weight (a row of zero weight counts for nothing, its values neither; they are taken
    by blocks of rows, no copy of the counted rows made whole). Rounded (``n * 1e30 /
    n``), a huge constant would leave its centered column a constant of its last bit,
    whose energy swamps the other columns' (every direction of theirs then falls below
    the decomposition's rounding floor)."""
    mean = X.mean(axis=0) if w is None else (w @ X) / w.sum()
    if w is None or bool(xp.all(w > 0)):
        if X.shape[0] == 0:
            return mean, xp.zeros_like(mean)
        largest, smallest, first = X.max(axis=0), X.min(axis=0), X[0]
    else:
        counted = xp.flatnonzero(w > 0)
        if counted.size == 0:
            return mean, xp.zeros_like(mean)
        step = max(1, BLOCK_BYTES // (8 * max(X.shape[1], 1)))
        largest = smallest = None
        for start in range(0, int(counted.size), step):
            part = X[counted[start : start + step]]
            high, low = part.max(axis=0), part.min(axis=0)
            largest = high if largest is None else xp.maximum(largest, high)
            smallest = low if smallest is None else xp.minimum(smallest, low)
        first = X[int(counted[0])]
    return xp.where(largest == smallest, first, mean), largest - smallest


def column_means(X, w, xp: ModuleType):
    """The means of :func:`column_statistics`."""
    return column_statistics(X, w, xp)[0]


def centered_gram(
    X,
    x_mean,
    root,
    xp: ModuleType,
    column_weight=None,
    gram=None,
    single: bool = False,
    centered: bool = True,
):
    """``Xc Xc^T`` with ``Xc = root * (X - x_mean) * column_weight`` (``root`` a column,
    ``column_weight`` a row of the features' weights; either may be ``None``), formed from
    the uncentered ``X diag(w^2) X^T`` (``gram`` where it is already made) where the means
    carry little of the features' energy (see ``GRAM_MEAN_ENERGY``), else from the
    centered copy. ``single``: the products in float32 (:func:`products`; ``gram`` made
    so), the intercept's direction then projected out where ``x_mean`` centers the
    features (``centered``: the model has an intercept), which centers the uncentered
    matrix exactly (``P X X^T P = Xc Xc^T``, ``P`` off ``root``): no correction by the
    means first."""
    w2 = None if column_weight is None else xp.asarray(column_weight, dtype=xp.float64) ** 2
    if gram is not None:
        G = gram
    else:
        G = products(X, xp, single, w2)
    weighted_mean = x_mean if w2 is None else x_mean * w2
    mean_square = float(x_mean @ weighted_mean)
    projected = single and centered
    if X.shape[0] * mean_square <= GRAM_MEAN_ENERGY * float(xp.trace(G)):
        if not projected:
            a = X @ weighted_mean
            G -= a[:, None]
            G -= a[None, :]
            G += mean_square
        if root is not None:
            G *= root
            G *= root.T
    else:
        Xc = X - x_mean
        if w2 is not None:
            Xc *= xp.sqrt(w2)
        if root is not None:
            Xc *= root
        refuse_overflow(Xc, root, xp)
        G = products(Xc, xp, single)
    refuse_overflow(G, root, xp)
    if projected:
        G = without_intercept_direction(G, root, xp)
    return G
