"""The Gaussian kernel of the ridge heads (``kernel='rbf'``), from Gram matrices.

The heads' Gaussian kernel is ``k(a, b) = exp(-gamma * |a - b|^2)`` with ``gamma`` set
from the training rows: ``1 / (width * m)``, ``m`` the median squared distance between
two training rows. Distances come from the Gram matrix the linear head forms anyway
(``|a - b|^2 = a.a + b.b - 2 a.b``, unchanged by centering the features), so the kernel
costs ``O(n_samples^2)`` on top of it; prediction costs one product with the training rows.

The kernel ridge model with an unpenalized intercept is the linear ridge model in the
kernel's feature space, centered there: the kernel matrix centered with the (weighted)
means of its rows, ``Kc = K - 1 c^T - c 1^T + c.p`` with ``c = K p`` and ``p`` the samples'
shares of the total weight. Everything is written against the arrays' module (NumPy or
CuPy).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._gram import column_means

# rows weighted, centered and scored at a time: about this many bytes of float64
_BLOCK_BYTES = 32 * 1024**2
# rows made at a time where each is read once (training_rows): about this many bytes of
# float64, which a core's cache holds between the operations on them
_CACHED_BYTES = 1024**2
# the training rows' offset: the column means of at most this many evenly spaced rows
_OFFSET_ROWS = 256


def squared_distances(G, xp: ModuleType):
    """``|x_i - x_j|^2`` of the rows whose Gram matrix is ``G`` (rounding's small negative
    values clipped to zero, the diagonal exactly zero); ``G`` is overwritten."""
    d = xp.diag(G).copy()
    G *= -2.0
    G += d[:, None]
    G += d[None, :]
    xp.maximum(G, 0.0, out=G)
    G[xp.diag_indices(G.shape[0])] = 0.0
    return G


def gamma_of(D, width: float, xp: ModuleType) -> float:
    """``1 / (width * m)``, ``m`` the median of the off-diagonal squared distances ``D``;
    where more than half of the pairs of rows are equal (``m`` zero), the median of the
    nonzero distances, and ``1 / width`` where every distance is zero (or there is one
    row: any ``gamma`` gives the same model). A ValueError where ``gamma`` is not a finite
    positive number (the product beyond float64's range)."""
    n = D.shape[0]
    median = 1.0
    if n > 1:
        upper = D[xp.triu_indices(n, 1)]
        median = float(xp.median(upper))
        if median == 0:
            nonzero = upper[upper > 0]
            median = float(xp.median(nonzero)) if nonzero.size else 1.0
    with np.errstate(over="ignore", divide="ignore"):
        product = np.float64(width) * np.float64(median)
        gamma = 1.0 / product
    if not (np.isfinite(gamma) and gamma > 0):
        fix = "a larger width" if np.isfinite(product) else "a smaller width"
        raise ValueError(
            f"The Gaussian kernel's width times the median squared distance between "
            f"training rows, {width:.3g} x {median:.3g}, is outside float64's range: its "
            "inverse, the kernel's gamma, is not a finite positive number. Scale the "
            f"features (e.g. sklearn.preprocessing.StandardScaler) or use {fix}."
        )
    return float(gamma)


def refuse_underflow(X, weights, xp: ModuleType) -> None:
    """A ValueError where the rows of ``X * weights`` (``weights`` may be ``None``) differ
    although every squared distance between them is zero: they underflow float64, and the
    kernel would be constant. Rows that are equal where weighted pass."""
    counted = X if weights is None else X[:, weights > 0]
    if counted.size and bool(xp.any(counted != counted[:1])):
        raise ValueError(
            "The training rows differ, but every squared distance between them underflows "
            f"float64 (weighted features of magnitude {float(xp.max(xp.abs(counted))):.3g}): "
            "the Gaussian kernel would be constant. Scale the features (e.g. "
            "sklearn.preprocessing.StandardScaler)."
        )


def gaussian_of_distances(D, gamma: float, xp: ModuleType):
    """``exp(-gamma * D)``, in place."""
    D *= -gamma
    return xp.exp(D, out=D)


def centered(K, share, xp: ModuleType):
    """``K`` centered in the kernel's feature space with the rows' weights ``share``
    (summing to one), in place, and the weighted row means ``c = K share`` it subtracted
    (what a new row's kernel values are centered with)."""
    c = K @ share
    grand = float(share @ c)
    K -= c[:, None]
    K -= c[None, :]
    K += grand
    return K, c


def uncentered(dual, row_means, share, y_mean):
    """The coefficients ``dual`` of the centered kernel's values, and the targets' means
    ``y_mean``, as coefficients and intercept of the uncentered kernel's values:
    ``kc(x) . dual + y_mean = k(x) . dual' + intercept`` (``row_means`` ``None``: nothing
    was centered)."""
    if row_means is None:
        return dual, y_mean
    total = dual.sum(axis=0)
    intercept = y_mean - row_means @ dual + float(share @ row_means) * total
    return dual - share[:, None] * total[None, :], intercept


def training_rows(X, weights, xp: ModuleType):
    """``(rows, offset)``: the rows of ``X * w`` (``w`` the features' ``weights``, or
    ``None``) in float64, less ``offset``, the column means of at most ``_OFFSET_ROWS``
    evenly spaced rows (times ``w``): the rows the kernel model keeps. Any offset gives the
    same distances; one near the mean keeps ``a.a + b.b - 2 a.b`` from losing precision to
    a common offset of the features, and a constant column is centered to zero exactly
    (``column_means``). One pass over ``X``, by blocks of rows small enough to stay in
    cache (the whole weighted copy, then its centered copy, cost several passes over
    memory: a fifth of the kernel's fit)."""
    n_samples, n_features = X.shape
    sampled = np.unique(np.linspace(0, n_samples - 1, min(n_samples, _OFFSET_ROWS)).round())
    # (in float64: float32 rows near its largest value would sum to infinity)
    sample = X[xp.asarray(sampled.astype(np.int64))].astype(xp.float64, copy=False)
    offset = column_means(sample, None, xp)
    if weights is not None:
        weights = xp.asarray(weights, dtype=xp.float64)
        offset = offset * weights
    out = xp.empty((n_samples, n_features))
    step = max(1, _CACHED_BYTES // (8 * max(n_features, 1)))
    for start in range(0, n_samples, step):
        rows = slice(start, min(start + step, n_samples))
        if weights is None:
            xp.subtract(X[rows], offset, out=out[rows])
        else:
            xp.multiply(X[rows], weights, out=out[rows])
            out[rows] -= offset
    return out, offset


def cross_kernel_blocks(A, B, gamma: float, xp: ModuleType, weights=None, offset=None):
    """``(rows, exp(-gamma * |a_i * w - c - b_j|^2))`` for blocks of the rows of ``A``
    (times the features' ``weights`` ``w``, where given, less the ``offset`` ``c`` the
    rows of ``B`` were centered by, where given) against all rows of ``B``: about
    ``_BLOCK_BYTES`` of rows at a time; only a block of ``A`` is weighted and centered at
    a time, into one buffer made once (a fresh block each time cost as much as the
    product: the allocator maps blocks this large anew, page by page), and nothing of
    ``B``'s size is made but its norms."""
    b_norms = xp.einsum("ij,ij->i", B, B)
    step = max(1, _BLOCK_BYTES // (8 * max(B.shape[0], A.shape[1], 1)))
    buffer = None
    if weights is not None or offset is not None:
        buffer = xp.empty((min(step, A.shape[0]), A.shape[1]), dtype=xp.float64)
    for start in range(0, A.shape[0], step):
        rows = slice(start, min(start + step, A.shape[0]))
        # a distance beyond float64's range (a row of huge values: inf, or inf - inf) is
        # infinite, its kernel value 0; the rows are finite, so a NaN is such a distance
        with np.errstate(over="ignore", invalid="ignore"):
            if buffer is None:
                block = A[rows]
            else:
                block = buffer[: rows.stop - rows.start]
                if weights is not None:
                    xp.multiply(A[rows], weights, out=block)
                    if offset is not None:
                        block -= offset
                else:
                    xp.subtract(A[rows], offset, out=block)
            values = block @ B.T
            values *= -2.0
            values += xp.einsum("ij,ij->i", block, block)[:, None]
            values += b_norms[None, :]
        values[xp.isnan(values)] = xp.inf
        xp.maximum(values, 0.0, out=values)
        yield rows, gaussian_of_distances(values, gamma, xp)
