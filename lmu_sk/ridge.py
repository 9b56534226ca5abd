"""Closed-form ridge heads whose penalty is chosen by exact leave-one-out cross-validation.

One decomposition of the centered feature matrix ``Xc`` serves every penalty ``alpha``:
with ``Xc = U S V^T`` (a thin SVD, or the eigendecomposition ``Xc Xc^T = U S^2 U^T`` of the
Gram matrix when there are fewer samples than features) the ridge fit with an unpenalized
intercept is the linear smoother

    Y_hat = 1 ybar^T + U diag(f) U^T Yc,    f = s^2 / (s^2 + alpha),

and the residual of sample ``i`` left out of the fit is exactly
``(y_i - y_hat_i) / (1 - h_ii)`` with ``h_ii = 1/n + sum_j U_ij^2 f_j``. The penalty with
the smallest mean squared leave-one-out residual (over samples and targets) wins, the
criterion of :class:`sklearn.linear_model.RidgeCV` and
:class:`sklearn.linear_model.RidgeClassifierCV`. Classification regresses one-vs-rest
``+-1`` targets. All of it is written against the features' array module, NumPy or CuPy.

Sample weights ``w`` follow scikit-learn's RidgeCV: the data are centered with the
weighted means and every row is scaled by ``sqrt(w_i)``, which turns the weighted problem
into an unweighted one on the scaled rows (the intercept's direction is ``sqrt(w)`` instead
of the ones vector, so its leverage is ``w_i / sum(w)`` instead of ``1/n``). The
leave-one-out residuals are those of the scaled rows, so a zero-weight row contributes
zero error, and the mean runs over all ``n`` rows, as in scikit-learn.

The same residuals give every training sample's decision values by the model fitted
without it. The classifier's probabilities are a softmax of its decision values divided by
the temperature of least log loss on those leave-one-out values: calibrated without holding
data out. When every class has a single sample, leaving one out removes its class, so the
penalty is set relative to the spectrum instead (see :class:`RidgeHeadClassifier`).
"""

from __future__ import annotations

import copy
import logging
import math
import numbers
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import scipy.linalg
import scipy.special
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from . import _gaussian_kernel as gaussian
from . import _gram
from ._device import HostScoreMixin, array_module_of, is_numpy, to_numpy
from ._gram import (
    centered_blocks,
    centered_gram,
    centered_product,
    column_means,
    column_statistics,
    feature_gram,
    uncentered_grams,
    weighted_grams,
)
from ._input import (
    check_device_matrix,
    check_regression_targets,
    is_device_array,
    refuse_text_targets,
)
from ._logging import get_logger
from ._memory import check_fits, check_predictions_fit
from ._persistence import VersionedPickleMixin
from ._progress import StepLog, verbosity
from ._sample_weight import check_sample_weight
from ._state import state_kept_on_error

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["DEFAULT_ALPHAS", "RidgeHeadClassifier", "RidgeHeadRegressor", "ridge_loo"]

DEFAULT_ALPHAS = tuple(float(a) for a in np.logspace(-3, 5, 17))
# the heads' models: linear, or kernel ridge with a Gaussian kernel
KERNELS = ("linear", "rbf")
# kernel='auto' of the classifiers: the Gaussian kernel where the training samples
# average at least this many per class (and number at most AUTO_KERNEL_MAX_SAMPLES), else
# linear. Over the 42 development sets of benchmarks/bench_tsc.py (pooled DN features) the
# Gaussian kernel gains where each class has neighbours of its own (0.8654 linear, 0.8691
# Gaussian everywhere) and loses where it has few (PigAirwayPressure, 2 per class: 0.938
# -> 0.870; GestureMidAirD3, 8: 0.500 -> 0.439); the rule gives 0.8707 / 0.8721 / 0.8718
# / 0.8714 / 0.8713 with 5 / 10 / 15 / 20 / 30 per class (up to 3 000 samples).
AUTO_KERNEL_MIN_PER_CLASS = 10
# ... and at most this many training samples: the kernel's prediction costs
# O(n_samples * n_features) per row against the linear model's O(n_classes * n_features).
# Up to 3 000 (KERNEL_MAX_SAMPLES), LMUClassifier's fit + predict over the 42 development
# sets took 1.43x the linear model's time for 0.8714 / 0.8781 (42 / 33 UCR sets); up to
# 400, with the composite's 12 thresholds on those sets, 1.13x for 0.8706 / 0.8772
# (2026-12-01, the median of three interleaved runs of bench_tsc.py).
AUTO_KERNEL_MAX_SAMPLES = 400
# When every class has one training sample: the penalty relative to the mean squared
# singular value of the centered features. On 27 development sets reduced to one training
# series per class (pooled DN features, 3 draws), test accuracy is flat from 1e-4 to 0.03
# (0.520), then falls (0.516 at 0.1, 0.497 at 1, 0.430 at 1e4); the leave-one-out choice
# RidgeClassifierCV makes there (the largest penalties) reaches 0.467.
SINGLE_SAMPLE_RELATIVE_ALPHA = 0.01
# Folding a standardization into the coefficients computes ``F @ (c / s) - c @ (m / s)``
# instead of ``((F - m) / s) @ c``: rounding grows by ``|m| / s`` at most, so only up to
# this ratio (a relative 1e4 * eps ~ 2e-12 of the decision's scale).
FOLD_MAX_RATIO = 1e4

logger = get_logger(__name__)
# the log of a quiet fit
_QUIET = StepLog("", 0)


# leave-one-out is exact (one eigendecomposition of this size at most); beyond, the
# penalty is chosen on this many evenly spaced samples (see _ridge_path), whose Gram
# matrix is a block of the one the solve at that penalty forms anyway. 3 000 until 0.3.0's
# last changes: on the one development set beyond 1 000 (PhalangesOutlinesCorrect, 1 800
# series of 14 700 features) the same penalty and accuracy, log loss 0.4040 -> 0.4032, fit
# + predict 3.9 s -> 2.6 s (an eigendecomposition of 1 000, not 1 800: ~1/6 of its cost).
EXACT_LOO_MAX = 1000
# the Gaussian kernel's model is exact only (one system of the samples' size, every
# training row kept): at most this many training samples
KERNEL_MAX_SAMPLES = 3000
# The Gaussian kernel's distances from a Gram matrix of float32's products (gram_dtype=
# float32) move by ~1e-7 of the rows' squared norms, its values by that over the median
# distance (gamma is 1 / (width * median)): where the median is below this fraction of
# the rows' mean squared norm (most rows in a tight cluster), float64's products are
# taken instead. Over the 42 development sets the ratio is 1.2 to 2.0 (a set of 80
# rows, 3/4 in a cluster of noise 0.1 of the spread: 0.027, its predictions 1.5e-5 off
# in float32's products).
KERNEL_SINGLE_MIN_MEDIAN = 0.1
# feature weights are squared (the Gram matrices of ``X * w``): at most float64's largest
# square root
_LARGEST_FEATURE_WEIGHT = float(np.sqrt(np.finfo(np.float64).max))


def _power_of_two_near(value: float) -> float:
    """A power of two within a factor 2 of ``value`` (1 for 0, NaN or infinity): dividing
    by it is exact, barring underflow."""
    if not (0.0 < value < np.inf):
        return 1.0
    return 2.0 ** min(1000, max(-1000, math.floor(math.log2(value))))


def _decompositions(
    X,
    x_mean,
    root,
    weights,
    xp: ModuleType,
    log: StepLog = _QUIET,
    width: float | None = None,
    share=None,
    grams: list | None = None,
    single: bool = False,
    centered: bool = True,
):
    """``U``, ``s^2``, the kernel's values and ``V`` with ``Xw Xw^T = U diag(s^2) U^T``,
    ``Xw = root * (X - x_mean) * w``, for each row ``w`` of ``weights`` in turn (``None``:
    one, ``w = 1``), from the cheaper factorization; ``root`` (a column) may be ``None``.
    The kernel's values are ``None`` for the linear model. ``V`` is ``None`` but for the
    factorization of more samples than features (see :func:`_decompositions_primal`).

    With a ``width`` the matrix decomposed is instead the Gaussian kernel's of the rows of
    ``X * w`` (see ``lmu_sk._gaussian_kernel``), centered with the samples' weight
    shares ``share`` (where the model has an intercept; else ``None``) and scaled by
    ``root``; the kernel's values are then ``(gamma, c)``, its ``gamma`` and the weighted
    row means ``c`` of the uncentered kernel matrix. ``log`` reports the steps.
    ``grams``: the linear model's uncentered ``X diag(w^2) X^T`` of every candidate where
    they are already made (overwritten). ``single``: the Gram matrices (the linear model's,
    or the one the Gaussian kernel's distances come from) of float32's products (see
    :func:`centered_gram`; ``grams`` made so). ``centered``: the features are centered
    (the model has an intercept).
    """
    n_samples, n_features = X.shape
    if grams is not None:
        ws = [None] if weights is None else list(weights)
        grams = [
            centered_gram(X, x_mean, root, xp, w, g, single, centered)
            for w, g in zip(ws, grams, strict=True)
        ]
    elif n_samples > n_features and width is None:
        yield from _decompositions_primal(X, x_mean, root, weights, xp, log)
        return
    # the Gaussian kernel's distances come from the Gram matrix without the rows' weights,
    # of the columns centered whatever the model's intercept: the distances do not depend
    # on an offset of the features, and a.a + b.b - 2 a.b then loses no precision to one
    # (the model's x_mean where it is those means already: no rows' weights, an intercept)
    gram_root, gram_mean = root, x_mean
    if width is not None:
        gram_root = None
        if root is not None or not centered:
            gram_mean = column_means(X, None, xp)
    if grams is None:
        with log.step(f"Gram matrix of {n_samples} x {n_features} features"):
            grams = weighted_grams(X, gram_mean, gram_root, weights, xp, single, centered)
    for k in range(len(grams)):
        G, grams[k] = grams[k], None
        kernel = None
        if width is not None:
            with log.step(f"Gaussian kernel of the {n_samples} samples"):
                w = None if weights is None else xp.asarray(weights[k])
                energy = float(xp.trace(G)) / max(n_samples, 1)  # the rows' mean |x|^2
                D = gaussian.squared_distances(G, xp)
                if n_samples > 1 and not float(xp.max(D)) > 0:
                    gaussian.refuse_underflow(X, w, xp)
                gamma = gaussian.gamma_of(D, width, xp)
                if single and 1.0 / (width * gamma) < KERNEL_SINGLE_MIN_MEDIAN * energy:
                    # float32's rounding of the distances is too coarse for the median
                    row = None if weights is None else weights[k][None, :]
                    (G,) = weighted_grams(X, gram_mean, None, row, xp, False, centered)
                    D = gaussian.squared_distances(G, xp)
                    gamma = gaussian.gamma_of(D, width, xp)
                G = gaussian.gaussian_of_distances(D, gamma, xp)
                c = None
                if share is not None:
                    G, c = gaussian.centered(G, share, xp)
                if root is not None:
                    G *= root
                    G *= root.T
            kernel = (gamma, c)
        matrix = "Gram" if width is None else "kernel"
        with log.step(f"eigendecomposition of the {n_samples} x {n_samples} {matrix} matrix"):
            s2, U = xp.linalg.eigh(G)
        del G
        # Rounding leaves the null directions (the intercept's among them) eigenvalues of
        # about eps * max(s^2) instead of 0. Near interpolation (small alpha, more features
        # than samples) 1 - leverage is itself tiny, and that noise would decide the chosen
        # penalty (it differed between LAPACK builds): exact zeros below the rounding level.
        size = n_samples if width is not None else min(n_samples, n_features)
        floor = float(xp.max(s2)) * size * float(xp.finfo(s2.dtype).eps)
        yield U, xp.where(s2 > floor, s2, 0.0), kernel, None


def _decompositions_primal(X, x_mean, root, weights, xp: ModuleType, log: StepLog = _QUIET):
    """:func:`_decompositions` for more samples than features, from the
    ``n_features``-square Gram matrix ``Xc^T Xc`` (formed once; a candidate ``w`` scales its
    rows and columns), ``diag(w) Xc^T Xc diag(w) = V diag(s^2) V^T``: ``U = Xc diag(w) V / s``
    over the directions of nonzero ``s`` (the others carry no fit),
    ``O(n_samples * n_features^2)`` time and ``U`` the only sample-sized array made.

    Also yields ``diag(w) V``, from which the coefficients come (``diag(w) V diag(s / (s^2
    + alpha)) U^T Yc``): ``Xc^T U``, the dual formula's, divides by ``s`` the rounding of
    the eigenvectors of the small directions, which features of very different scales
    leave inaccurate (``eps * max(s^2) / s^2``), into coefficients wrong by orders of
    magnitude; the leverages and the fit need only ``U * s``, as accurate as ``Xc V``."""
    n_samples, n_features = X.shape
    with log.step(f"Gram matrix of {n_samples} x {n_features} features (by blocks of rows)"):
        G, _ = feature_gram(X, x_mean, root, xp)
    for w in [None] if weights is None else weights:
        w = None if w is None else xp.asarray(w)
        with log.step(f"eigendecomposition of the {n_features} x {n_features} Gram matrix"):
            s2, V = xp.linalg.eigh(G if w is None else G * w[:, None] * w[None, :])
        floor = float(xp.max(s2)) * n_features * float(xp.finfo(s2.dtype).eps)
        keep = s2 > floor
        V, s2 = V[:, keep], s2[keep]
        if w is not None:
            V = V * w[:, None]
        inverse_s = 1.0 / xp.sqrt(s2)
        U = xp.empty((n_samples, int(s2.shape[0])))
        with log.step(f"projection of the {n_samples} samples on {U.shape[1]} directions"):
            for rows, block in centered_blocks(X, x_mean, root, xp):
                U[rows] = (block @ V) * inverse_s
        yield U, s2, None, V
        del V


class _RidgePath(NamedTuple):
    """What one decomposition gives: the fit at the chosen penalty and its leverages."""

    coef: object  # (n_targets, n_features), the module of X
    intercept: object  # (n_targets,)
    best: int
    errors: np.ndarray  # (n_alphas,) on the host
    alphas: np.ndarray  # the penalties tried, on the host
    leverage: object  # (n_rows,) diagonal of the hat matrix at the chosen penalty
    residual: object  # (n_rows, n_targets) Yc minus the fit, rows scaled by sqrt(w)
    rows: object = None  # the rows leverage and residual belong to; None: every row
    candidate: int = 0  # the row of the feature weights chosen (0 without them)
    dual: object = None  # (n_rows, n_targets): the Gaussian kernel's coefficients (coef None)
    gamma: float | None = None  # the Gaussian kernel's, where there is one


class _Candidate(NamedTuple):
    """One candidate's decomposition and its leave-one-out errors over the penalties."""

    index: int  # its row of the feature weights (0 without them)
    U: object
    s2: object
    UtY: object
    errors: np.ndarray  # (n_alphas,) on the host, in the scaled targets' units
    leverages: object  # (n_rows, n_alphas)
    alphas: np.ndarray  # the penalties tried
    kernel: tuple | None  # the Gaussian kernel's (gamma, row means), None: linear
    V: object  # diag(w) V of more samples than features (the coefficients'), else None


def _leverages(U, s2, alphas, base, xp: ModuleType):
    """``base + sum_j U_ij^2 s2_j / (s2_j + alpha)`` for every sample and penalty:
    ``(n_samples, n_alphas)``, by blocks of rows (no copy of ``U``'s size)."""
    shrink = s2[:, None] / (s2[:, None] + alphas[None, :])
    out = xp.empty((U.shape[0], alphas.shape[0]))
    step = max(1, _gram.BLOCK_BYTES // (8 * max(U.shape[1], 1)))
    for start in range(0, U.shape[0], step):
        rows = slice(start, start + step)
        out[rows] = (U[rows] * U[rows]) @ shrink
    base = xp.asarray(base, dtype=xp.float64)
    return out + (base[:, None] if base.ndim else base)


def _ridge_path(
    X,
    Y,
    alphas,
    fit_intercept: bool,
    sample_weight,
    relative: float | None = None,
    log: StepLog = _QUIET,
    weights: np.ndarray | None = None,
    width: float | None = None,
    single: bool = False,
):
    """:func:`ridge_loo`'s computation, keeping the leverages of the chosen penalty.

    Exact where ``min(n_samples, n_features) <= EXACT_LOO_MAX``. Beyond, the
    eigendecomposition that serves every penalty would cost ``O(min(n, p)^3)``: the
    penalty (and the candidate of ``weights``) is chosen (and the leverages and residuals
    kept) by the exact path on ``EXACT_LOO_MAX`` evenly spaced rows of positive weight
    (``path.rows``), and the model is then solved at that penalty on every row by one
    linear system, ``O(n p min(n, p))`` in all.

    With a ``width`` the model is the Gaussian kernel's (see :func:`_exact_ridge_path`),
    which is exact only: at most ``KERNEL_MAX_SAMPLES`` samples (the heads check it).
    ``single``: the Gram matrices of float32's products (see :func:`centered_gram`).
    """
    n_samples, n_features = X.shape
    if width is not None or min(n_samples, n_features) <= EXACT_LOO_MAX:
        return _exact_ridge_path(
            X, Y, alphas, fit_intercept, sample_weight, relative, log, weights, width,
            single=single,
        )  # fmt: skip
    xp = array_module_of(X)
    # evenly spaced among the rows that count: a row of zero weight has no error to leave
    # out (and rows of zero weight only would leave the path nothing to weigh)
    counted = np.arange(n_samples)
    if sample_weight is not None:
        counted = np.flatnonzero(np.asarray(to_numpy(sample_weight)) > 0)
    picked = np.unique(np.linspace(0, len(counted) - 1, EXACT_LOO_MAX).round().astype(np.int64))
    rows = xp.asarray(counted[picked])
    row_weights = None if sample_weight is None else xp.asarray(sample_weight)[rows]
    log.note(
        f"the penalty is chosen by leave-one-out on {len(picked)} of the {n_samples} "
        "samples, evenly spaced"
    )
    X = X.astype(xp.float64, copy=False)  # once, for the rows and the solve alike
    full = None  # the uncentered Gram matrices of every row, where the solve is dual
    if n_samples <= n_features:
        n_candidates = 1 if weights is None else len(weights)
        check_fits(
            8.0 * n_samples**2 * (n_candidates + 1),
            f"The Gram matrices of {n_samples} x {n_features} features",
            "Use fewer samples or features, or the dense head (head='dense').",
        )
        with log.step(f"Gram matrix of {n_samples} x {n_features} features"):
            full = uncentered_grams(X, weights, xp, single)
    chosen = _exact_ridge_path(
        X[rows], Y[rows], alphas, fit_intercept, row_weights, relative, log, weights,
        grams=None if full is None else [g[rows][:, rows] for g in full], single=single,
    )  # fmt: skip
    residual = chosen.residual
    if row_weights is not None:  # the path's residuals are scaled by sqrt(w): unscaled here
        fit = X[rows] @ chosen.coef.T + chosen.intercept
        residual = xp.asarray(Y[rows], dtype=xp.float64) - fit
    alpha = float(chosen.alphas[chosen.best])
    column_weight = None if weights is None else weights[chosen.candidate]
    gram = None if full is None else full[chosen.candidate]
    del full
    coef, intercept = _solve_at(
        X, Y, alpha, fit_intercept, sample_weight, log, column_weight, gram, single
    )
    return chosen._replace(coef=coef, intercept=intercept, residual=residual, rows=rows)


class _Centered(NamedTuple):
    """The problem as both solvers see it: float64 features, the targets divided by a
    power of two near their largest magnitude, each column by its own (exact, and errors
    of huge or tiny targets neither overflow nor underflow, nor does a small target beside
    a huge one vanish), the (weighted) means, the square roots of the
    weights as a column (or ``None``) and the centered targets scaled by them."""

    X: object
    x_mean: object
    y_mean: object
    root: object
    Yc: object
    y_scale: object  # (n_targets,)
    w: object
    x_spread: object  # the columns' max - min (zeros without an intercept: nothing centered)


def _centered(X, Y, fit_intercept: bool, sample_weight, xp: ModuleType) -> _Centered:
    """:class:`_Centered` of ``X``, ``Y`` (the centered features are never formed)."""
    X = X.astype(xp.float64, copy=False)
    largest = to_numpy(xp.max(xp.abs(Y), axis=0)) if Y.size else np.zeros(Y.shape[1])
    y_scale = xp.asarray([_power_of_two_near(float(m)) for m in largest], dtype=xp.float64)
    Y = Y.astype(xp.float64, copy=False) / y_scale
    w = None if sample_weight is None else xp.asarray(sample_weight, dtype=xp.float64)
    # huge weights or features overflow here: the solvers refuse them with their cause
    with np.errstate(over="ignore", invalid="ignore"):
        if not fit_intercept:
            x_mean, y_mean = xp.zeros(X.shape[1]), xp.zeros(Y.shape[1])
            x_spread = xp.zeros(X.shape[1])
        elif w is None:
            (x_mean, x_spread), y_mean = column_statistics(X, None, xp), Y.mean(axis=0)
        else:
            (x_mean, x_spread), y_mean = column_statistics(X, w, xp), (w @ Y) / w.sum()
        root = None if w is None else xp.sqrt(w)[:, None]
        Yc = Y - y_mean
        if root is not None:
            Yc = Yc * root
    return _Centered(X, x_mean, y_mean, root, Yc, y_scale, w, x_spread)


def _solve_at(
    X,
    Y,
    alpha: float,
    fit_intercept: bool,
    sample_weight,
    log: StepLog = _QUIET,
    column_weight: np.ndarray | None = None,
    gram=None,
    single: bool = False,
):
    """Ridge coefficients and intercept at one penalty, by one linear system in the
    smaller of the samples' and the features' spaces (as :func:`_exact_ridge_path`
    scales the targets, so the two agree); fitted on the columns times ``column_weight``
    where it is given, the coefficients returned those of ``X`` itself. ``gram``: the
    uncentered ``X diag(column_weight^2) X^T`` where it is already made (overwritten);
    ``single``: see :func:`centered_gram` (the features' space's system is float64's)."""
    xp = array_module_of(X)
    n_samples, n_features = X.shape
    check_fits(
        8.0 * (min(n_samples, n_features) ** 2 * 2 + n_samples * n_features),
        f"The ridge fit of {n_samples} x {n_features} features",
        "Use fewer samples or features, or the dense head (head='dense').",
    )
    X, x_mean, y_mean, root, Yc, y_scale, _, x_spread = _centered(
        X, Y, fit_intercept, sample_weight, xp
    )
    w = None if column_weight is None else xp.asarray(column_weight)
    with np.errstate(over="ignore", invalid="ignore"):
        if n_samples <= n_features:
            if gram is not None:
                K = centered_gram(X, x_mean, root, xp, column_weight, gram, single, fit_intercept)
            else:
                with log.step(f"Gram matrix of {n_samples} x {n_features} features"):
                    row = None if column_weight is None else column_weight[None, :]
                    (K,) = weighted_grams(X, x_mean, root, row, xp, single, fit_intercept)
            with log.step(f"the {n_samples} x {n_samples} system at alpha={alpha:.4g}"):
                K[xp.diag_indices(n_samples)] += alpha
                dual = _solve_positive(K, Yc, xp)
            del K
            if root is not None:
                dual = dual * root
            coef = centered_product(X, x_mean, dual, xp, x_spread).T
            if w is not None:  # Xw^T dual, times w again: X's coefficients
                coef = coef * w**2
        else:
            with log.step(f"Gram matrix of {n_samples} x {n_features} features (by blocks)"):
                G, XtY = feature_gram(X, x_mean, root, xp, Yc)
            if w is not None:  # diag(w) G diag(w) and diag(w) Xc^T Yc
                G *= w[:, None]
                G *= w[None, :]
                XtY *= w[:, None]
            with log.step(f"the {n_features} x {n_features} system at alpha={alpha:.4g}"):
                G[xp.diag_indices(n_features)] += alpha
                coef = _solve_positive(G, XtY, xp).T
            del G
            if w is not None:
                coef = coef * w
    intercept = (y_mean - coef @ x_mean) * y_scale
    return coef * y_scale[:, None], intercept


def _solve_positive(A, B, xp: ModuleType):
    """``A^-1 B`` for a penalized Gram matrix ``A`` (symmetric, positive definite): by
    Cholesky on the host (half LU's flops; no warning of its conditioning, as LU gave
    none), by LU where rounding left it indefinite (a tiny penalty) and on a GPU.

    The factor and solve are SciPy's ``cho_factor`` and ``cho_solve``: ``solve(...,
    assume_a='pos')`` gave the same bits in 1.25x-1.8x their time (one thread, systems of
    1 800 and 4 480)."""
    if is_numpy(xp):
        try:
            factor = scipy.linalg.cho_factor(A, check_finite=False)
            return scipy.linalg.cho_solve(factor, B, check_finite=False)
        except np.linalg.LinAlgError:
            pass
        return xp.linalg.solve(A, B)
    # CuPy's solve returns NaN for a singular matrix where NumPy's raises: as NumPy's
    solution = xp.linalg.solve(A, B)
    if not bool(xp.isfinite(solution).all()):
        raise np.linalg.LinAlgError("Singular matrix, or a solution beyond float64's range")
    return solution


def _exact_ridge_path(
    X,
    Y,
    alphas,
    fit_intercept: bool,
    sample_weight,
    relative: float | None = None,
    log: StepLog = _QUIET,
    weights: np.ndarray | None = None,
    width: float | None = None,
    grams: list | None = None,
    single: bool = False,
):
    """:func:`_ridge_path` by one decomposition that serves every penalty.

    With ``relative`` the one penalty tried is ``relative`` times the mean nonzero squared
    singular value of the centered (weighted) features, and ``alphas`` is ignored. With
    ``weights`` (``(n_candidates, n_features)``, see :func:`_check_feature_weights`) one
    decomposition per candidate, and the pair of candidate and penalty of least error wins
    (the first of equal errors). ``log`` reports the steps (at level 2 also every
    penalty's leave-one-out error).

    With a ``width`` the model is kernel ridge with the Gaussian kernel of that width on
    the rows of ``X * w`` (``lmu_sk._gaussian_kernel``): the same leave-one-out
    machinery on the centered kernel matrix instead of ``Xw Xw^T``, and the path's
    ``dual`` and ``gamma`` in place of ``coef``. ``grams``, ``single``: see
    :func:`_decompositions`.
    """
    xp = array_module_of(X)
    n_samples, n_features = X.shape
    n_candidates = 1 if weights is None else len(weights)
    # a Gram matrix per candidate, a run's, the best decomposition so far and the current;
    # the Gaussian kernel's are n_samples x n_samples whatever the features
    rank = n_samples if width is not None else min(n_samples, n_features)
    # and with more samples than features the eigenvectors of the best and the current
    primal = 2 * n_features * rank if width is None and n_samples > n_features else 0
    check_fits(
        8.0 * (n_samples * rank * (1 + 2 * n_candidates) + n_samples * n_features + primal),
        f"The ridge decomposition of {n_samples} x {n_features} features",
        "Use fewer samples or features, or the dense head (head='dense').",
    )
    # the targets are divided by a power of two near their largest magnitude and the results
    # scaled back: the penalty chosen does not depend on the targets' scale (_centered)
    X, x_mean, y_mean, root, Yc, y_scale, w, x_spread = _centered(
        X, Y, fit_intercept, sample_weight, xp
    )
    # the errors of every target in the units of the largest's (the targets' own units up
    # to that one factor): the penalty chosen is the one of the unscaled targets
    unit = float(xp.max(y_scale))
    target_weights = (y_scale / unit) ** 2
    if not fit_intercept:
        base = 0.0
    elif w is None:
        base = 1.0 / n_samples
    else:
        base = w / w.sum()  # the leverage of the intercept's direction sqrt(w)
    share = None  # the samples' shares of the weight, which center the kernel
    if width is not None and fit_intercept:
        share = xp.full(n_samples, 1.0 / n_samples) if w is None else w / w.sum()
    chosen = None
    decompositions = _decompositions(
        X, x_mean, root, weights, xp, log, width, share, grams, single, fit_intercept
    )
    with np.errstate(over="ignore", invalid="ignore"):
        # Xc = root * (X - x_mean) is never formed where _decompositions need not
        for candidate, (U, s2, kernel, V) in enumerate(decompositions):
            tried = alphas
            if relative is not None:
                s2_host = to_numpy(s2)
                # (none: one row of weight, whose centered features are zero)
                nonzero = s2_host > (s2_host.max() * 1e-12 if s2_host.size else 0.0)
                scale = float(s2_host[nonzero].mean()) if nonzero.any() else 1.0
                tried = np.asarray([relative * scale])
            UtY = U.T @ Yc
            leverages, errors = _loo_errors(U, s2, UtY, Yc, tried, base, xp, log, target_weights)
            if n_candidates > 1:
                log.note(
                    f"feature weights {candidate}: least mean squared leave-one-out error "
                    f"{errors.min() * unit**2:.6g}",
                    level=2,
                )
            if chosen is None or errors.min() < chosen.errors.min():
                chosen = _Candidate(candidate, U, s2, UtY, errors, leverages, tried, kernel, V)
            del U, s2, UtY, leverages, V
    candidate, U, s2, UtY, errors, leverages, alphas, kernel, V = chosen
    best = int(np.argmin(errors))
    if not np.isfinite(errors[best]):
        logger.info(
            "Every penalty tried interpolates the training data (leave-one-out errors "
            "infinite); alpha=%.4g, the first, is used. Try larger alphas.",
            alphas[best],
        )
    with np.errstate(over="ignore", under="ignore"):
        errors = errors * np.float64(unit) * np.float64(unit)  # in the targets' units
    for alpha, error in zip(alphas, errors, strict=True):
        mark = " (chosen)" if alpha == alphas[best] else ""
        log.note(f"alpha={alpha:.4g}: mean squared leave-one-out error {error:.6g}{mark}", level=2)
    with log.step(f"coefficients at alpha={alphas[best]:.4g}"):
        f = s2 / (s2 + alphas[best])
        leverage = leverages[:, best]
        residual = Yc - U @ (f[:, None] * UtY)
        # (Xw Xw^T + alpha I)^-1 Yc without the null directions of Xw Xw^T: Xw^T maps them
        # to zero, but a tiny alpha would magnify their rounding into the coefficients
        inverse = xp.where(s2 > 0, 1.0 / (s2 + alphas[best]), 0.0)
        if V is not None:  # more samples than features: diag(w) V diag(s / (s^2 + a)) U^T Yc
            coef = (V @ (UtY * (xp.sqrt(s2) * inverse)[:, None])).T
            del V
            return _linear_path(coef, y_mean, x_mean, y_scale, best, errors, alphas, leverage,
                                residual, candidate)  # fmt: skip
        dual = U @ (UtY * inverse[:, None])
        if root is not None:
            dual = dual * root
        if kernel is not None:  # the coefficients of the uncentered kernel's values
            gamma, row_means = kernel
            dual, intercept = gaussian.uncentered(dual, row_means, share, y_mean)
            alphas = np.asarray(alphas, dtype=float)
            return _RidgePath(
                None,
                intercept * y_scale,
                best,
                errors,
                alphas,
                leverage,
                residual * y_scale,
                None,
                candidate,
                dual * y_scale,
                gamma,
            )
        coef = centered_product(X, x_mean, dual, xp, x_spread).T  # Xc^T dual
        if weights is not None:  # Xw^T dual, times w again: the coefficients of X itself
            coef = coef * xp.asarray(weights[candidate] ** 2)
    return _linear_path(
        coef, y_mean, x_mean, y_scale, best, errors, alphas, leverage, residual, candidate
    )


def _linear_path(
    coef, y_mean, x_mean, y_scale, best, errors, alphas, leverage, residual, candidate
) -> _RidgePath:
    """The linear model's :class:`_RidgePath` from its coefficients of the scaled targets
    (``coef``, ``(n_targets, n_features)``): the intercept, and everything in the
    targets' units."""
    intercept = (y_mean - coef @ x_mean) * y_scale
    coef = coef * y_scale[:, None]
    residual = residual * y_scale
    alphas = np.asarray(alphas, dtype=float)
    return _RidgePath(coef, intercept, best, errors, alphas, leverage, residual, None, candidate)


def _loo_errors(
    U, s2, UtY, Yc, alphas, base, xp: ModuleType, log: StepLog = _QUIET, target_weights=None
):
    """Every sample's leverage at every penalty, ``(n_samples, n_alphas)``, and the mean
    squared leave-one-out residual of every penalty (on the host, NaN made infinite), each
    target's squares times its ``target_weights`` where given."""
    errors = []
    with (
        log.step(
            f"leave-one-out errors of {len(alphas)} penalt{'y' if len(alphas) == 1 else 'ies'}"
        ),
        np.errstate(divide="ignore", invalid="ignore", over="ignore"),
    ):
        leverages = _leverages(U, s2, xp.asarray(alphas, dtype=xp.float64), base, xp)
        for i, alpha in enumerate(alphas):
            f = s2 / (s2 + alpha)
            residual = Yc - U @ (f[:, None] * UtY)
            leverage = leverages[:, i]
            # a leverage of one (interpolation) leaves the error infinite, not NaN
            squares = (residual / (1.0 - leverage)[:, None]) ** 2
            if target_weights is not None:
                squares = squares * target_weights
            errors.append(float(squares.mean()))
    errors = np.asarray(errors)
    errors[np.isnan(errors)] = np.inf
    return leverages, errors


def ridge_loo(X, Y, alphas, fit_intercept: bool = True, sample_weight=None):
    """Ridge coefficients for the ``alpha`` of least leave-one-out squared error.

    Parameters
    ----------
    X : array of shape (n_samples, n_features), NumPy or CuPy
    Y : array of shape (n_samples, n_targets) or (n_samples,), same module as ``X``
        One target is one column.
    alphas : sequence of float
        Penalties to try, all > 0.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept (center ``X`` and ``Y``).
    sample_weight : array of shape (n_samples,), optional
        Non-negative sample weights (NumPy or the module of ``X``), as in
        :class:`sklearn.linear_model.RidgeCV`: minimises
        ``sum_i w_i * |y_i - x_i b - c|**2 + alpha * |b|**2`` (see the module docstring).

    Returns
    -------
    coef : array of shape (n_targets, n_features)
    intercept : array of shape (n_targets,)
    best : int
        Index of the chosen alpha (the first of the smallest errors).
    errors : ndarray of shape (n_alphas,)
        Mean squared leave-one-out residual of every alpha, on the host.
    """
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise TypeError(f"fit_intercept must be True or False; got {fit_intercept!r}.")
    alphas = _check_alphas(alphas)
    if is_device_array(X):
        X = check_device_matrix(X)
    else:
        X = check_array(X, dtype=(np.float64, np.float32), input_name="X")
    xp = array_module_of(X)
    if not is_device_array(Y):
        Y = check_array(Y, ensure_2d=False, dtype=np.float64, input_name="Y")
    Y = xp.asarray(Y, dtype=xp.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise ValueError(
            f"Y must hold one row of targets per sample of X, shape ({X.shape[0]}, "
            f"n_targets) or ({X.shape[0]},); got shape {tuple(Y.shape)}."
        )
    if X.shape[0] < 2:
        raise ValueError(
            f"Leave-one-out cross-validation needs at least two samples; got {X.shape[0]}."
        )
    sample_weight = check_sample_weight(sample_weight, X.shape[0])
    path = _ridge_path(X, Y, alphas, fit_intercept, sample_weight)
    return path.coef, path.intercept, path.best, path.errors


def _check_alphas(alphas) -> np.ndarray:
    message = f"alphas must be a non-empty sequence of positive, finite penalties; got {alphas!r}."
    if isinstance(alphas, (str, bytes)):
        raise ValueError(message)
    try:
        values = np.asarray(DEFAULT_ALPHAS if alphas is None else alphas, dtype=np.float64)
    except (TypeError, ValueError) as error:  # not numbers
        raise ValueError(message) from error
    values = np.atleast_1d(values)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(message)
    return values


def check_class_weight(class_weight) -> None:
    """Refuse a ``class_weight`` that is not None, 'balanced' or a dict of finite,
    non-negative numbers (booleans are not weights), with a message saying so."""
    if class_weight is None:
        return
    if not (
        isinstance(class_weight, dict)
        or (isinstance(class_weight, str) and class_weight == "balanced")
    ):
        raise ValueError(
            "class_weight must be None, 'balanced' or a dict {label: weight}; got "
            f"{class_weight!r}."
        )
    if isinstance(class_weight, dict):
        bad = {k: v for k, v in class_weight.items() if not _is_weight(v)}
        if bad:
            raise ValueError(
                f"class_weight must map labels to finite, non-negative numbers; got {bad!r}."
            )


def with_class_weight(class_weight, y: np.ndarray, sample_weight, classes=None):
    """``sample_weight`` (or ones) times the weights ``class_weight`` gives the labels,
    checked: a clear error for a bad ``class_weight`` or weights that are all zero. A
    dict's keys must be labels: of ``classes`` where given (a model's, for a batch of
    ``partial_fit`` that lacks some), else of ``y``."""
    if class_weight is None:
        return sample_weight
    check_class_weight(class_weight)
    if isinstance(class_weight, dict):
        y = np.asarray(y)
        if y.ndim >= 2 and y.size > len(y):
            raise ValueError(
                f"class_weight as a dict weighs one label per sample; y of shape {y.shape} "
                "holds several labels per sample. Use class_weight='balanced' (the product "
                "of every column's balanced weights) or give the weights as sample_weight."
            )
        y = y.reshape(len(y))  # (a column of labels: one per sample)
        labels = np.unique(y).tolist() if classes is None else np.asarray(classes).tolist()
        known = set(labels)
        unknown = [key for key in class_weight if key not in known]
        # scikit-learn refuses keys of no class where some class is left out (not where
        # the dict covers every class, as for a fold without one), naming those classes
        if unknown and any(label not in class_weight for label in labels):
            raise ValueError(
                f"class_weight names labels that are not classes of y: {unknown!r}; the "
                f"classes are {labels!r} (classes left out of class_weight weigh 1)."
            )
        # classes left out weigh 1, as scikit-learn's
        weights = np.asarray(
            [float(class_weight.get(label, 1.0)) for label in np.asarray(y).tolist()]
        )
    else:
        weights = compute_sample_weight(class_weight, y)
    if sample_weight is not None:
        weights = weights * sample_weight
    if not weights.any():
        raise ValueError(
            "class_weight and sample_weight leave every sample a zero weight; give some "
            "class a positive weight."
        )
    return weights


def _check_feature_weights(feature_weights, n_features: int) -> np.ndarray | None:
    """``feature_weights`` as a float64 ``(n_candidates, n_features)`` array (one
    dimension: one candidate), or ``None``; a ValueError names what is wrong."""
    if feature_weights is None:
        return None
    try:
        weights = np.asarray(to_numpy(feature_weights), dtype=np.float64)
    except (TypeError, ValueError) as error:  # ragged, or not numbers
        raise ValueError(
            "feature_weights must be numbers, one weight per feature for each candidate, "
            f"shape (n_candidates, {n_features}); got {type(feature_weights).__name__} that "
            f"is not such an array ({error})."
        ) from error
    if weights.ndim == 1:
        weights = weights[None, :]
    if weights.ndim != 2 or weights.shape[0] == 0 or weights.shape[1] != n_features:
        raise ValueError(
            "feature_weights must hold one weight per feature for each candidate, shape "
            f"(n_candidates, {n_features}); got shape {np.shape(feature_weights)}."
        )
    if not (np.all(np.isfinite(weights)) and np.all(weights >= 0) and np.all(weights.any(1))):
        raise ValueError(
            "feature_weights must be finite and >= 0, each candidate with a nonzero weight "
            "(a weight w multiplies its feature: the penalty on it becomes alpha / w**2, and "
            "0 leaves it out)."
        )
    largest = float(weights.max())
    if largest > _LARGEST_FEATURE_WEIGHT:
        raise ValueError(
            f"feature_weights must be at most {_LARGEST_FEATURE_WEIGHT:.3g}, whose square is "
            f"float64's largest; got {largest:.3g}. Divide every weight by a constant: the "
            "candidates then compare the same, at penalties divided by its square."
        )
    return weights


def _weighted_rows(sample_weight, X, *arrays):
    """``(kept, sample_weight, X, *arrays)``: the rows of positive weight (``kept``, their
    indices), of ``X``, of the ``arrays`` aligned with its rows and of the weights, the
    Gaussian kernel's rows (its width is the median distance between training rows, and
    it keeps them to predict: rows of no weight changed the model). ``kept`` is ``None``
    and nothing changes where every weight is positive, or there are none."""
    if sample_weight is None:
        return (None, sample_weight, X, *arrays)
    kept = np.flatnonzero(np.asarray(to_numpy(sample_weight)) > 0)
    if len(kept) == X.shape[0]:
        return (None, sample_weight, X, *arrays)

    def taken(a):  # (each on its own array module: NumPy or CuPy)
        return a[array_module_of(a).asarray(kept)]

    return (kept, taken(sample_weight), taken(X), *(taken(a) for a in arrays))


def _single_gram(gram_dtype) -> bool:
    """Whether ``gram_dtype`` (``None``, float64 or float32) asks for float32's products."""
    try:
        dtype = np.dtype(np.float64 if gram_dtype is None else gram_dtype).name
    except TypeError:
        dtype = "not a dtype"
    if dtype not in ("float64", "float32"):
        raise ValueError(
            f"gram_dtype must be None or float64 (the default) or float32; got {gram_dtype!r}."
        )
    return dtype == "float32"


def _is_weight(value) -> bool:
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and bool(np.isfinite(value))
        and value >= 0
    )


def _logits(decision: np.ndarray) -> np.ndarray:
    """Per-class logits at temperature 1: the scores, or ``[0, d]`` for a binary ``d``."""
    if decision.ndim == 1:
        return np.stack([np.zeros_like(decision), decision], axis=1)
    return decision


def _tempered_logits(decision: np.ndarray, temperature: float) -> np.ndarray:
    """:func:`_logits` divided by ``temperature``, within half float64's range: a decision
    value so large that the division overflows is a finite one (its class's probability
    1), not infinity (a softmax of infinities is NaN), and the softmax's differences of
    two logits stay finite."""
    largest = np.finfo(np.float64).max / 2
    with np.errstate(over="ignore"):
        logits = _logits(decision) / temperature
    return np.clip(logits, -largest, largest, out=logits)


def _log_loss(logits: np.ndarray, indices: np.ndarray, sample_weight) -> float:
    """(Sample-weighted) mean of minus the log softmax probability of the true class."""
    log_p = scipy.special.log_softmax(logits, axis=1)[np.arange(len(indices)), indices]
    return -float(np.average(log_p, weights=sample_weight))


def _fit_inverse_temperature(
    logits: np.ndarray, indices: np.ndarray, sample_weight
) -> tuple[float, float]:
    """The scale ``a > 0`` of least log loss of ``softmax(a * logits)``, and that loss.

    The fit uses smoothed targets as Platt's, ``(n + 1) / (n + 2)`` on the true class (``n``
    the samples of positive weight), the rest spread evenly over the other classes, so the
    scale is finite even when the logits separate the classes. (Platt's per-class
    ``(n_c + 1) / (n_c + 2)`` caps the confidence too low with few samples per class: on 42
    development sets the mean test log loss is 0.424 with ``n``, 0.453 with ``n_c``, 0.473
    unsmoothed, where a few separable sets blow up.) The loss is convex in ``a``: its
    derivative, the expected minus the target logit, increases with ``a``, and bisection
    finds its root. ``a`` is at least ``1e-3 / std(logits)``, so that the most probable
    class stays the one of the largest logit.
    """
    n_samples, n_classes = logits.shape
    weights = np.ones(n_samples) if sample_weight is None else np.asarray(sample_weight, float)
    # a leverage within rounding of one gives a non-finite leave-one-out value: leave it out
    finite = np.isfinite(logits).all(axis=1)
    if not finite.all():
        weights = np.where(finite, weights, 0.0)
        logits = np.where(finite[:, None], logits, 0.0)
    if weights.sum() == 0.0:
        return 1.0, float("nan")
    weights = weights / weights.sum()
    n_seen = float(np.count_nonzero(weights))
    on_true = np.full(n_samples, (n_seen + 1.0) / (n_seen + 2.0))
    targets = np.repeat(((1.0 - on_true) / (n_classes - 1))[:, None], n_classes, axis=1)
    targets[np.arange(n_samples), indices] = on_true
    target_logit = (targets * logits).sum(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = float(np.std((logits - logits.mean(axis=1, keepdims=True))[weights > 0]))
    if not np.isfinite(spread):
        # decision values beyond float64's range when squared: no temperature to fit
        return 1.0, _log_loss(logits, indices, weights)
    if spread == 0.0:
        # the decision values do not tell the classes apart: uniform probabilities
        return 1.0, _log_loss(logits, indices, weights)
    lowest = 1e-3 / spread

    def slope(scale: float) -> float:
        p = scipy.special.softmax(scale * logits, axis=1)
        return float(weights @ ((p * logits).sum(axis=1) - target_logit))

    if slope(lowest) >= 0.0:
        scale = lowest
    else:
        low, high = lowest, 1.0 / spread
        while slope(high) < 0.0 and high < 1e12 / spread:
            low, high = high, high * 4.0
        for _ in range(200):
            if high - low <= 1e-10 * high:
                break
            mid = 0.5 * (low + high)
            if slope(mid) < 0.0:
                low = mid
            else:
                high = mid
        scale = 0.5 * (low + high)
    return scale, _log_loss(scale * logits, indices, weights)


def auto_kernel(n_counted: float, n_classes: int, n_samples: int) -> str:
    """``kernel='auto'``'s model for ``n_samples`` training samples of ``n_classes``
    classes, ``n_counted`` of them of nonzero weight: 'rbf' where those average at least
    ``AUTO_KERNEL_MIN_PER_CLASS`` per class and the samples number at most
    ``AUTO_KERNEL_MAX_SAMPLES`` (and ``KERNEL_MAX_SAMPLES``), else 'linear'."""
    enough = n_counted >= AUTO_KERNEL_MIN_PER_CLASS * n_classes
    few = n_samples <= min(AUTO_KERNEL_MAX_SAMPLES, KERNEL_MAX_SAMPLES)
    return "rbf" if enough and few else "linear"


def _check_kernel(kernel, width, allowed: tuple[str, ...] = KERNELS) -> float | None:
    """The Gaussian kernel's width, or ``None`` for the linear model; a clear error for
    anything else (of ``allowed``, which ``kernel`` is resolved from)."""
    if isinstance(kernel, str) and kernel == "linear":
        return None
    if not (isinstance(kernel, str) and kernel == "rbf"):
        raise ValueError(f"kernel must be one of {allowed}; got {kernel!r}.")
    if not (_is_weight(width) and width > 0):
        raise ValueError(
            "width must be a finite number > 0, the Gaussian kernel's squared length scale "
            f"relative to the median squared distance between training rows; got {width!r}."
        )
    return float(width)


class _RidgeHead(BaseEstimator):
    """Shared fitting of the ridge heads; not meant to be used directly."""

    # the fitted model: the linear one's, or the Gaussian kernel's (see _required_fitted)
    _linear_model = ("coef_",)
    _kernel_model = ("dual_coef_", "X_fit_", "gamma_")
    # the kernel model's attributes a head saved before they existed may lack
    _kernel_model_optional = ("X_fit_offset_",)

    def __init__(self, alphas=None, fit_intercept=True, verbose=False, kernel="linear", width=3.0):
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.verbose = verbose
        self.kernel = kernel
        self.width = width

    @classmethod
    def _required_fitted(cls, state: dict) -> tuple[str, ...]:
        """What a saved fitted head must hold: its model's attributes and the others."""
        model = cls._kernel_model if "dual_coef_" in state else cls._linear_model
        return model + cls._fitted_attributes

    def _log(self) -> StepLog:
        """The log of the fit's steps on standard error, as ``verbose`` asks."""
        return StepLog(f"{type(self).__name__}: ", verbosity(self.verbose))

    def _validate_X_y(self, X, y, y_numeric: bool):
        if not is_device_array(X):
            return validate_data(
                self, X, y, multi_output=True, y_numeric=y_numeric, dtype=(np.float64, np.float32)
            )
        X = check_device_matrix(X, estimator=self, reset=True)
        y = check_array(
            to_numpy(y), ensure_2d=False, dtype="numeric" if y_numeric else None, input_name="y"
        )
        check_consistent_length(X, y)
        return X, y

    def _validate_X(self, X):
        if is_device_array(X):
            return check_device_matrix(X, estimator=self, reset=False)
        return validate_data(self, X, dtype=(np.float64, np.float32), reset=False)

    # the values of ``kernel`` the head takes ('auto' is resolved by the caller of _solve)
    _kernels: tuple[str, ...] = KERNELS

    def _solve(
        self,
        X,
        Y,
        sample_weight=None,
        relative=None,
        feature_weights=None,
        kernel=None,
        gram_dtype=None,
    ) -> _RidgePath:
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False; got {self.fit_intercept!r}.")
        alphas = _check_alphas(self.alphas)
        kernel = self.kernel if kernel is None else kernel
        width = _check_kernel(kernel, self.width, self._kernels)
        if width is not None and X.shape[0] > KERNEL_MAX_SAMPLES:
            raise ValueError(
                f"kernel='rbf' solves one system of the samples' size and keeps them all: "
                f"at most {KERNEL_MAX_SAMPLES} training rows; got {X.shape[0]} (with a "
                "sequence output every time step of a sequence is a row). Use "
                "kernel='linear'."
            )
        weights = _check_feature_weights(feature_weights, X.shape[1])
        single = _single_gram(gram_dtype)
        if weights is not None and relative is not None:
            weights = weights[:1]  # leave-one-out cannot choose: the first candidate
        log = self._log()
        xp = array_module_of(X)
        path = _ridge_path(
            X,
            xp.asarray(Y, dtype=xp.float64),
            alphas,
            bool(self.fit_intercept),
            sample_weight,
            relative,
            log,
            weights,
            width,
            single,
        )
        self.kernel_ = kernel
        self.feature_weights_ = None if weights is None else weights[path.candidate]
        self.alpha_ = float(path.alphas[path.best])
        self.best_score_ = -float(path.errors[path.best])
        self.cv_errors_ = path.errors
        for name in self._linear_model + self._kernel_model + self._kernel_model_optional:
            self.__dict__.pop(name, None)  # a previous fit's model
        if path.dual is not None:
            self.dual_coef_ = to_numpy(path.dual).T
            # kept centered, and new rows centered alike: the distances' |a|^2 + |b|^2 -
            # 2 a.b then lose no precision to a common offset of the features
            rows, offset = gaussian.training_rows(X, self.feature_weights_, xp)
            self.X_fit_ = to_numpy(rows)
            self.X_fit_offset_ = to_numpy(offset)
            self.gamma_ = float(path.gamma)
        return path

    def _is_kernel_model(self) -> bool:
        return "dual_coef_" in self.__dict__

    def _standardization_folded(self, mean: np.ndarray, scale: np.ndarray) -> Self | None:
        """This fitted head as it acts on features before their standardization.

        A shallow copy whose coefficients take in ``(F - mean) / scale``: its decisions on
        ``F`` are this head's decisions on the standardized ``F``, without the two passes
        over the features that standardizing them costs. ``None`` where a ratio
        ``|mean| / scale`` exceeds ``FOLD_MAX_RATIO`` (too much rounding: standardize).
        The Gaussian kernel's model acts on the rows ``F * w - c`` (its feature weights
        ``w``, the offset ``c`` its training rows were centered by): standardized first,
        they are ``F * (w / scale) - (c + mean * w / scale)``, the same two operations with
        the copy's ``feature_weights_`` and ``X_fit_offset_`` set so.
        """
        check_is_fitted(self, "intercept_")
        mean = np.asarray(mean, dtype=np.float64)
        scale = np.asarray(scale, dtype=np.float64)
        if not np.all(np.abs(mean) <= FOLD_MAX_RATIO * scale):
            return None
        head = copy.copy(self)
        if self._is_kernel_model():
            weights = self.feature_weights_
            weights = 1.0 / scale if weights is None else np.asarray(weights) / scale
            # (a head saved before the rows were centered has no offset)
            offset = getattr(self, "X_fit_offset_", None)
            offset = mean * weights if offset is None else np.asarray(offset) + mean * weights
            head.feature_weights_, head.X_fit_offset_ = weights, offset
            return head
        head.coef_ = np.asarray(self.coef_) / scale
        head.intercept_ = self.intercept_ - head.coef_ @ mean
        return head

    def _decision(self, X):
        check_is_fitted(self, "intercept_")
        X = self._validate_X(X)
        n_targets = np.size(self.intercept_)
        check_predictions_fit(
            X.shape[0] * n_targets,
            f"The decision values of {X.shape[0]} samples for {n_targets} targets",
        )
        return self._scores(X)

    def _scores(self, X):
        """The decision values of rows already validated (a float array of
        ``n_features_in_`` columns, finite), ``(n_samples, n_targets)``."""
        xp = array_module_of(X)
        # in float64: scores of a row do not depend on the rows beside it
        X = X.astype(xp.float64, copy=False)
        if not self._is_kernel_model():
            return X @ xp.asarray(self.coef_).T + xp.asarray(self.intercept_)
        weights = self.feature_weights_
        weights = None if weights is None else xp.asarray(weights)
        dual = xp.asarray(self.dual_coef_)
        out = xp.empty((X.shape[0], dual.shape[0]))
        # (a head saved before the rows were centered has no offset)
        offset = getattr(self, "X_fit_offset_", None)
        offset = None if offset is None else xp.asarray(offset)
        blocks = gaussian.cross_kernel_blocks(
            X, xp.asarray(self.X_fit_), self.gamma_, xp, weights, offset
        )
        for rows, K in blocks:
            out[rows] = K @ dual.T
        return out + xp.asarray(self.intercept_)


class RidgeHeadClassifier(VersionedPickleMixin, HostScoreMixin, ClassifierMixin, _RidgeHead):
    """Ridge classifier with the penalty chosen by exact leave-one-out cross-validation.

    One-vs-rest regression on ``+-1`` targets (one target for two classes), solved in
    closed form: one SVD or Gram eigendecomposition serves every penalty. Gives the results
    of :class:`sklearn.linear_model.RidgeClassifierCV` with the same ``alphas`` and
    ``class_weight``; runs on CuPy arrays on a GPU as well.

    Probabilities come from the exact leave-one-out decision values that choosing the
    penalty computes anyway: a softmax (a logistic function for two classes) of the
    decision values divided by a temperature, the one that minimises the log loss of the
    leave-one-out decision values (see :attr:`temperature_`). No data are held out, the
    most probable class is always the predicted one, and the cost is negligible.

    Parameters
    ----------
    alphas : sequence of float, default=None
        Penalties to choose from; ``None`` uses 17 values from 1e-3 to 1e5 (half decades).
        Standardized features are assumed (as ``LMUClassifier`` provides): with more
        samples than features the decomposition is the features' Gram matrix's, which
        resolves directions down to about ``eps * n_features`` times the largest squared
        singular value, so columns whose scales differ by a factor beyond about 1e6 lose
        their smallest directions (scikit-learn's SVD of the features keeps them; columns
        within 1e4 of each other give its predictions to 1e-6). Leave-one-out is
        exact up to 1000 samples or features (``EXACT_LOO_MAX``); with more of both, the
        penalty is chosen (and the probabilities calibrated) by leave-one-out on 1000
        evenly spaced training samples, and the model then solved on all of them at that
        penalty: one linear system instead of an eigendecomposition of the larger size
        (with fewer samples than features, the Gram matrix of the 1000 is a block of the
        one that system needs).
        When every class has a single training sample, leave-one-out cannot choose (leaving
        a sample out removes its class, and the squared error then favours the largest
        penalty); the penalty is then ``0.01`` times the mean squared singular value of the
        centered features (with ``kernel='rbf'``: the mean eigenvalue of the centered kernel
        matrix; nearly the minimum-norm interpolant), whatever ``alphas`` holds,
        and the choice is logged at INFO level on the ``lmu_sk`` logger. The leave-one-out
        decision values of such a fit never score a sample's own class, so
        :attr:`temperature_` comes out large: probabilities near uniform, still ranked as
        :meth:`predict`.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, multiplying ``sample_weight``, as in
        :class:`sklearn.linear_model.RidgeClassifierCV`: a dict ``{label: weight}``
        (classes not in it weigh 1), or 'balanced' for ``n_samples / (n_classes *
        count(label))``.
    verbose : bool or int, default=False
        Report the steps of ``fit`` on standard error, one line each with its time (the
        Gram matrix or SVD, the eigendecomposition, the leave-one-out errors of the
        penalties, the coefficients, the calibration); ``2`` also every penalty's
        leave-one-out error and the temperature.
    kernel : {'linear', 'rbf', 'auto'}, default='linear'
        The model: linear in the features, or kernel ridge with the Gaussian kernel
        ``exp(-gamma_ * |a - b|^2)``, ``gamma_ = 1 / (width * m)`` with ``m`` the median
        squared distance between two training rows (of ``X * feature_weights_``). Both
        choose the penalty (and the candidate of ``feature_weights``) and calibrate by
        the same exact leave-one-out, on the centered Gram matrix or the centered kernel
        matrix; the kernel's costs ``O(n_samples^2)`` more than the Gram matrix, keeps the
        training rows and predicts from their distances to the new ones (``O(n_samples *
        n_features)`` per row instead of ``O(n_classes * n_features)``). 'rbf' takes at
        most 3 000 training samples (``KERNEL_MAX_SAMPLES``), and its decisions are not
        linear, so it has no ``coef_``. The sample weights weight the squared errors as
        for the linear model; the kernel's ``gamma_`` does not depend on them.
        'auto' takes 'rbf' where the training samples average at least 10 per class
        (``AUTO_KERNEL_MIN_PER_CLASS``) and number at most 400
        (``AUTO_KERNEL_MAX_SAMPLES``: beyond, the kernel's prediction costs more than it
        gains), else 'linear': on the 42 development sets the Gaussian kernel gains where
        each class has neighbours of its own and loses where it has a few (2 per class:
        0.938 -> 0.870); the model fitted is :attr:`kernel_`.
    width : float, default=3.0
        The Gaussian kernel's squared length scale relative to the median squared
        distance between training rows (``kernel='rbf'`` only). Over the 42 development
        sets of ``benchmarks/bench_tsc.py`` (pooled DN features), 1 / 2 / 3 / 4 / 8 / 64
        gave a mean accuracy of 0.8637 / 0.8660 / 0.8691 / 0.8683 / 0.8671 / 0.8651,
        against 0.8654 for the linear model.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) for two classes, else (n_classes, n_features)
        The linear model's coefficients (``kernel='linear'``).
    dual_coef_ : ndarray of shape (1, n_samples) for two classes, else (n_classes, n_samples)
        The Gaussian kernel's coefficients (``kernel='rbf'``): the decision values are
        ``k(x) @ dual_coef_.T + intercept_``, ``k(x)`` the kernel's values of ``x`` and the
        training rows.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training rows times ``feature_weights_``, less their mean ``X_fit_offset_``
        (``kernel='rbf'``; new rows are centered alike).
    X_fit_offset_ : ndarray of shape (n_features,)
        The mean subtracted from ``X_fit_`` (``kernel='rbf'``).
    gamma_ : float
        The Gaussian kernel's inverse squared length scale (``kernel='rbf'``).
    kernel_ : {'linear', 'rbf'}
        The model fitted (``kernel`` with 'auto' resolved).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    alpha_ : float
        The chosen penalty.
    best_score_ : float
        Minus its mean squared leave-one-out residual.
    cv_errors_ : ndarray of shape (n_alphas,)
        Mean squared leave-one-out residual of every penalty (of the one penalty used when
        every class has a single sample: shape ``(1,)``).
    loo_decision_ : ndarray of shape (n_samples,) or (n_samples, n_classes)
        The decision function of every training sample by the model fitted at ``alpha_``
        without it (exact, not refitted: see :mod:`lmu_sk.ridge`). With more than
        ``EXACT_LOO_MAX`` (1000) samples and features, of the samples ``loo_rows_`` only,
        by the model of those samples (see ``alphas``).
    loo_rows_ : ndarray of int or None
        The training samples leave-one-out ran on, or ``None`` for all of them.
    temperature_ : float
        The divisor of the decision values in :meth:`predict_proba`: the one of least
        (sample-weighted) log loss of ``loo_decision_``, with targets smoothed as Platt's
        (``(n + 1) / (n + 2)`` on the true class) so that it stays finite when the
        leave-one-out decisions separate the classes.
        Positive, so the most probable class is the predicted one.
    loo_log_loss_ : float
        The log loss of the leave-one-out probabilities at ``temperature_``.
    feature_weights_ : ndarray of shape (n_features,) or None
        The candidate of ``feature_weights`` that leave-one-out chose (see :meth:`fit`),
        ``None`` when none was given.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from lmu_sk.ridge import RidgeHeadClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RidgeHeadClassifier().fit(X, y)
    >>> round(clf.score(X, y), 2)
    0.85
    >>> clf.predict_proba(X[:1]).round(2)
    array([[0.99, 0.01, 0.  ]])
    """

    # what every fitted head holds (checked when a saved one is loaded)
    _fitted_attributes = (
        "intercept_",
        "alpha_",
        "classes_",
        "temperature_",
        "n_features_in_",
    )
    _kernels = ("auto", *KERNELS)

    def __init__(
        self,
        alphas=None,
        fit_intercept=True,
        class_weight=None,
        verbose=False,
        kernel="linear",
        width=3.0,
    ):
        super().__init__(
            alphas=alphas,
            fit_intercept=fit_intercept,
            verbose=verbose,
            kernel=kernel,
            width=width,
        )
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None, feature_weights=None, gram_dtype=None) -> Self:
        """Fit the one-vs-rest ridge models, choose the penalty and calibrate.

        Parameters
        ----------
        X : array-like or CuPy array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative sample weights, not all zero; as in
            :class:`sklearn.linear_model.RidgeClassifierCV` (rows scaled by ``sqrt(w)``,
            see :mod:`lmu_sk.ridge`), multiplied by the weights of ``class_weight``.
        feature_weights : array-like of shape (n_candidates, n_features), default=None
            Candidate weights of the features, non-negative and at most ``1.3e154`` (their squares
            finite): with weights ``w`` the model is fitted on ``X * w``, which penalizes feature
            ``j``'s coefficient by ``alpha / w[j]**2`` (0 leaves it out). Leave-one-out chooses the
            candidate together with the penalty (the first of equal errors), one eigendecomposition
            per candidate; the Gram matrices cost one pass over ``X`` where the weights are
            constant over a few runs of adjacent columns (as weights per block of features are).
            ``coef_`` acts on ``X`` itself, so prediction needs no weights. When every class has a
            single sample the first candidate is used.
        gram_dtype : None, float64 or float32, default=None
            The precision of the linear model's Gram matrix ``X X^T`` (fewer samples than
            features): float32 takes the products of the (weighted) features rounded to
            float32, summed in float64 per 4 096 columns (1.7x-1.9x faster on a CPU), the
            intercept's direction projected out exactly; a block of columns whose largest
            value is beyond 2**57 or below 2**-60 takes float64's. For features of
            comparable scale, such as standardized ones (the LMU estimators pass float32
            for theirs: over the 42 development sets the same penalties and decisions
            within 1e-5). With ``kernel='rbf'`` the Gram matrix the kernel's distances come
            from is formed so (over the 42 sets with ``kernel='auto'``: the same penalties
            and accuracies, decisions within 4e-6), unless the median distance is below
            ``KERNEL_SINGLE_MIN_MEDIAN`` of the rows' mean squared norm (a tight cluster:
            float64's products then); predictions take float64's products
            whatever it is (float32's would depend on the rows predicted together), as
            does the Gram matrix of more samples than features.

        Returns
        -------
        self
        """
        with state_kept_on_error(self):  # a refused refit keeps the fitted model
            return self._fit(X, y, sample_weight, feature_weights, gram_dtype)

    def _fit(self, X, y, sample_weight, feature_weights, gram_dtype=None) -> Self:
        X, y = self._validate_X_y(X, y, y_numeric=False)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        check_classification_targets(y)
        if np.ndim(y) == 2 and np.shape(y)[1] > 1:
            raise ValueError(
                f"{type(self).__name__} takes one label per sample; got y of shape "
                f"{np.shape(y)} (several labels per sample). A dense head takes them as an "
                "indicator matrix of 0 and 1 (LMUClassifier(head='dense'), or "
                "lmu_sk.head.DenseHeadClassifier); labels of more than two values take one "
                "model per column (sklearn.multioutput.MultiOutputClassifier)."
            )
        y = column_or_1d(y, warn=True)
        self.classes_, indices, counts = np.unique(y, return_inverse=True, return_counts=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"The training set has only one class ({self.classes_[0]!r}); a classifier "
                "needs samples of at least two classes."
            )
        sample_weight = with_class_weight(self.class_weight, y, sample_weight)
        n_targets = 1 if len(self.classes_) == 2 else len(self.classes_)
        # the one-vs-rest targets and the fit's copies of them (scaled, centered, the
        # residuals and leave-one-out values): n_samples x n_classes each
        check_fits(
            8.0 * len(y) * (len(self.classes_) + 4 * n_targets),
            f"The one-vs-rest targets of {len(y)} samples and {len(self.classes_)} classes",
            "Use fewer classes (merge rare ones) or fewer samples; a label per sample "
            "that is unique is a regression target (RidgeHeadRegressor).",
        )
        Y = -np.ones((len(y), len(self.classes_)))
        Y[np.arange(len(y)), indices] = 1.0
        Y = Y[:, -n_targets:]
        if sample_weight is not None:  # a row of zero weight counts as left out
            weighted = np.asarray(to_numpy(sample_weight)) > 0
            counts = np.bincount(indices, weights=weighted, minlength=len(counts))
        relative = None
        if counts.max() < 2:
            relative = SINGLE_SAMPLE_RELATIVE_ALPHA
        kernel = self.kernel
        if isinstance(kernel, str) and kernel == "auto":
            kernel = auto_kernel(counts.sum(), len(self.classes_), len(y))
        kept = None  # the training rows the Gaussian kernel keeps (None: all)
        if kernel == "rbf":
            kept, sample_weight, X, Y, indices = _weighted_rows(sample_weight, X, Y, indices)
        path = self._solve(X, Y, sample_weight, relative, feature_weights, kernel, gram_dtype)
        if relative is not None:
            logger.info(
                "%s: every class has a single training sample, so leave-one-out cannot "
                "choose the penalty; alpha=%.4g, %g times the mean %s (alphas is not "
                "used).",
                type(self).__name__,
                self.alpha_,
                relative,
                "squared singular value of the centered features"
                if path.coef is not None
                else "eigenvalue of the centered kernel matrix",
            )
        if path.coef is not None:
            self.coef_ = to_numpy(path.coef)
        self.intercept_ = to_numpy(path.intercept)
        self._calibrate(X, Y, path, indices, sample_weight, kept)
        return self

    def _calibrate(self, X, Y, path: _RidgePath, indices, sample_weight, kept=None) -> None:
        """Leave-one-out decision values at ``alpha_`` and the temperature fitted on them."""
        xp = array_module_of(X)
        Y = xp.asarray(Y)
        log = self._log()
        with log.step("calibration on the leave-one-out decision values"):
            if path.rows is not None:  # the rows leave-one-out ran on, residuals unscaled
                rows = to_numpy(path.rows)
                Y, indices = Y[path.rows], indices[rows]
                sample_weight = None if sample_weight is None else sample_weight[rows]
                residual = path.residual
            elif sample_weight is None:
                residual = path.residual  # Y minus the fit: no pass over the features
            else:  # the path's rows are scaled by sqrt(w), zero for zero weights
                residual = Y - self._scores(X)
            # the exact leave-one-out residual is the residual over (1 - leverage); a
            # leverage of one gives a non-finite value, which the calibration leaves out
            with np.errstate(divide="ignore", invalid="ignore"):
                loo = to_numpy(Y - residual / (1.0 - path.leverage)[:, None])
            self.loo_decision_ = loo[:, 0] if loo.shape[1] == 1 else loo
            self.loo_rows_ = None if path.rows is None else to_numpy(path.rows)
            if kept is not None:  # (rows of zero weight left out of the Gaussian kernel's)
                self.loo_rows_ = kept if self.loo_rows_ is None else kept[self.loo_rows_]
            logits = _logits(self.loo_decision_)
            scale, self.loo_log_loss_ = _fit_inverse_temperature(logits, indices, sample_weight)
        self.temperature_ = 1.0 / scale
        if logger.isEnabledFor(logging.DEBUG):
            with np.errstate(invalid="ignore"):  # non-finite rows: NaN
                at_one = _log_loss(logits, indices, sample_weight)
            logger.debug(
                "%s: temperature %.4g, leave-one-out log loss %.4g (%.4g at temperature 1)",
                type(self).__name__,
                self.temperature_,
                self.loo_log_loss_,
                at_one,
            )
        log.note(
            f"temperature {self.temperature_:.4g}, leave-one-out log loss "
            f"{self.loo_log_loss_:.4g}",
            level=2,
        )

    def _loo_proba(self) -> np.ndarray:
        """The probabilities of :attr:`loo_decision_` at :attr:`temperature_`: each training
        sample's (of ``loo_rows_``) by the model fitted without it, ``(n, n_classes)``."""
        check_is_fitted(self, "temperature_")
        with np.errstate(invalid="ignore"):  # a non-finite leave-one-out value: NaN
            return scipy.special.softmax(_logits(self.loo_decision_) / self.temperature_, axis=1)

    def decision_function(self, X) -> np.ndarray:
        """Scores, shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        scores = to_numpy(self._decision(X))
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        """The class of the highest score."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[scores.argmax(axis=1)]

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithms of :meth:`predict_proba`, computed without underflow.

        Parameters
        ----------
        X : array-like or CuPy array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "temperature_")
        return scipy.special.log_softmax(
            _tempered_logits(self.decision_function(X), self.temperature_), axis=1
        )

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities: the softmax of the decision values over ``temperature_``.

        For two classes the probability of ``classes_[1]`` is
        ``1 / (1 + exp(-decision / temperature_))``.

        Parameters
        ----------
        X : array-like or CuPy array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to one; the largest entry of a row is the predicted class.
        """
        check_is_fitted(self, "temperature_")
        return scipy.special.softmax(
            _tempered_logits(self.decision_function(X), self.temperature_), axis=1
        )

    def _predict_proba_checked(self, X) -> np.ndarray:
        """:meth:`predict_proba` of rows the caller has checked (a float array of
        ``n_features_in_`` columns, finite, on any device): no second pass over them."""
        return self._proba_of_scores(to_numpy(self._scores(X)))

    def _proba_of_scores(self, scores: np.ndarray) -> np.ndarray:
        """The probabilities of the decision values ``scores`` ``(n, n_targets)`` (features
        times ``coef_.T`` plus ``intercept_``)."""
        scores = scores[:, 0] if scores.shape[1] == 1 else scores
        return scipy.special.softmax(_tempered_logits(scores, self.temperature_), axis=1)


class RidgeHeadRegressor(VersionedPickleMixin, HostScoreMixin, RegressorMixin, _RidgeHead):
    """Ridge regression with the penalty chosen by exact leave-one-out cross-validation.

    Gives the results of :class:`sklearn.linear_model.RidgeCV` with the same ``alphas``
    (one penalty for all targets) for predictions inside the guard below; runs on CuPy
    arrays on a GPU as well.

    Parameters
    ----------
    alphas : sequence of float, default=None
        See :class:`RidgeHeadClassifier`.
    fit_intercept : bool, default=True
    clip_margin : float or None, default=0.1
        Predictions are clipped to the range of the training targets widened on each side
        by ``clip_margin`` times its width (per target). A linear model on standardized
        pooled features can extrapolate wildly: a pool that is almost constant on the
        training set has a tiny scale, and a new sequence whose pool differs (its input
        still inside the training range) gets a standardized value of millions. ``None``
        never clips, as :class:`sklearn.linear_model.RidgeCV`.
    verbose : bool or int, default=False
        See :class:`RidgeHeadClassifier`.
    kernel : {'linear', 'rbf'}, default='linear'
    width : float, default=3.0
        See :class:`RidgeHeadClassifier`.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        The linear model's coefficients (``kernel='linear'``).
    dual_coef_ : ndarray of shape (n_targets, n_samples)
        The Gaussian kernel's coefficients (``kernel='rbf'``; one row for one target).
    intercept_ : float or ndarray of shape (n_targets,)
    alpha_, best_score_, cv_errors_, feature_weights_, X_fit_, gamma_, kernel_,
    n_features_in_
        As in :class:`RidgeHeadClassifier`.
    target_range_ : ndarray of shape (2, n_targets)
        The smallest and largest training target (of the samples of positive weight);
        predictions stay within it widened by ``clip_margin_`` times its width.
    clip_margin_ : float or None
        The ``clip_margin`` of the fit, which :meth:`predict` applies (a ``clip_margin``
        set after fitting takes effect at the next fit, as every parameter).
    """

    # what every fitted head holds (checked when a saved one is loaded)
    _fitted_attributes = (
        "intercept_",
        "alpha_",
        "target_range_",
        "clip_margin_",
        "n_features_in_",
    )

    def __init__(
        self,
        alphas=None,
        fit_intercept=True,
        clip_margin=0.1,
        verbose=False,
        kernel="linear",
        width=3.0,
    ):
        super().__init__(
            alphas=alphas,
            fit_intercept=fit_intercept,
            verbose=verbose,
            kernel=kernel,
            width=width,
        )
        self.clip_margin = clip_margin

    def fit(self, X, y, sample_weight=None, feature_weights=None, gram_dtype=None) -> Self:
        """Fit the ridge model and choose the penalty.

        Parameters
        ----------
        X : array-like or CuPy array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative sample weights, not all zero; as in
            :class:`sklearn.linear_model.RidgeCV` (see :mod:`lmu_sk.ridge`).
        feature_weights : array-like of shape (n_candidates, n_features), default=None
            Candidate weights of the features, chosen with the penalty by leave-one-out:
            see :meth:`RidgeHeadClassifier.fit`.
        gram_dtype : None, float64 or float32, default=None
            The precision of the Gram matrix: see :meth:`RidgeHeadClassifier.fit`.

        Returns
        -------
        self
        """
        with state_kept_on_error(self):  # a refused refit keeps the fitted model
            return self._fit(X, y, sample_weight, feature_weights, gram_dtype)

    def _fit(self, X, y, sample_weight, feature_weights, gram_dtype=None) -> Self:
        margin = self.clip_margin
        if margin is not None and not _is_weight(margin):
            raise ValueError(
                "clip_margin must be None (no clipping) or a finite number >= 0, the fraction "
                f"of the training targets' range allowed beyond it; got {margin!r}."
            )
        refuse_text_targets(y)  # (before validation parses an object array's)
        X, y = self._validate_X_y(X, y, y_numeric=True)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        y = check_regression_targets(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        if len(y) < 2:
            raise ValueError(
                "Leave-one-out cross-validation needs at least two training samples; got one "
                "sample. Fit on more (or use a dense head, head='dense' in the LMU "
                "estimators, which trains on one)."
            )
        Y = y.reshape(len(y), -1)
        if isinstance(self.kernel, str) and self.kernel == "rbf":
            _, sample_weight, X, Y = _weighted_rows(sample_weight, X, Y)
        path = self._solve(
            X, Y, sample_weight, feature_weights=feature_weights, gram_dtype=gram_dtype
        )
        intercept = to_numpy(path.intercept)
        self.intercept_ = float(intercept[0]) if y.ndim == 1 else intercept
        if path.coef is not None:
            coef = to_numpy(path.coef)
            self.coef_ = coef[0] if y.ndim == 1 else coef
        seen = Y if sample_weight is None else Y[sample_weight > 0]
        self.target_range_ = np.stack([seen.min(axis=0), seen.max(axis=0)])
        self.clip_margin_ = None if margin is None else float(margin)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X) -> np.ndarray:
        """Predicted targets, shape (n_samples,) or (n_samples, n_targets), clipped as
        ``clip_margin`` says."""
        out = to_numpy(self._decision(X))
        # the margin fitted, as every fitted value: a clip_margin set later applies at refit
        margin = self.clip_margin_
        if margin is not None:
            low, high = self.target_range_
            room = margin * (high - low)
            out = np.clip(out, low - room, high + room)
        return out if np.ndim(self.intercept_) == 1 else out.reshape(-1)
