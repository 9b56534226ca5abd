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
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._device import array_module_of, to_numpy
from ._input import check_device_matrix, is_device_array
from ._memory import check_fits
from ._persistence import VersionedPickleMixin
from .neural.training import check_sample_weight

__all__ = ["DEFAULT_ALPHAS", "RidgeHeadClassifier", "RidgeHeadRegressor", "ridge_loo"]

DEFAULT_ALPHAS = tuple(float(a) for a in np.logspace(-3, 5, 17))


def _decompose(Xc, xp: ModuleType):
    """``U`` and ``s^2`` with ``Xc Xc^T = U diag(s^2) U^T``, from the cheaper factorization."""
    n_samples, n_features = Xc.shape
    if n_samples > n_features:
        U, s, _ = xp.linalg.svd(Xc, full_matrices=False)
        return U, s * s
    s2, U = xp.linalg.eigh(Xc @ Xc.T)
    return U, xp.maximum(s2, 0.0)


def ridge_loo(X, Y, alphas, fit_intercept: bool = True, sample_weight=None):
    """Ridge coefficients for the ``alpha`` of least leave-one-out squared error.

    Parameters
    ----------
    X : array of shape (n_samples, n_features), NumPy or CuPy
    Y : array of shape (n_samples, n_targets), same module as ``X``
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
    xp = array_module_of(X)
    n_samples, n_features = X.shape
    check_fits(
        8.0 * (n_samples * min(n_samples, n_features) * 3 + n_samples * n_features),
        f"The ridge decomposition of {n_samples} x {n_features} features",
        "Use fewer samples or features, or the dense head (head='dense').",
    )
    X = X.astype(xp.float64)
    Y = Y.astype(xp.float64)
    w = None if sample_weight is None else xp.asarray(sample_weight, dtype=xp.float64)
    if fit_intercept:
        if w is None:
            x_mean, y_mean = X.mean(axis=0), Y.mean(axis=0)
        else:
            x_mean, y_mean = (w @ X) / w.sum(), (w @ Y) / w.sum()
        Xc, Yc = X - x_mean, Y - y_mean
    else:
        x_mean = xp.zeros(n_features)
        y_mean = xp.zeros(Y.shape[1])
        Xc, Yc = X, Y
    if w is not None:
        root = xp.sqrt(w)[:, None]
        Xc, Yc = Xc * root, Yc * root
    U, s2 = _decompose(Xc, xp)
    UtY = U.T @ Yc
    U2 = U * U
    if not fit_intercept:
        base = 0.0
    elif w is None:
        base = 1.0 / n_samples
    else:
        base = w / w.sum()  # the leverage of the intercept's direction sqrt(w)
    errors = []
    for alpha in alphas:
        f = s2 / (s2 + alpha)
        residual = Yc - U @ (f[:, None] * UtY)
        leverage = base + U2 @ f
        errors.append(float(((residual / (1.0 - leverage)[:, None]) ** 2).mean()))
    errors = np.asarray(errors)
    best = int(np.argmin(errors))
    dual = U @ (UtY / (s2 + alphas[best])[:, None])  # (Xc Xc^T + alpha I)^-1 Yc
    coef = (Xc.T @ dual).T
    intercept = y_mean - coef @ x_mean
    return coef, intercept, best, errors


def _check_alphas(alphas) -> np.ndarray:
    values = np.asarray(DEFAULT_ALPHAS if alphas is None else alphas, dtype=np.float64)
    values = np.atleast_1d(values)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(
            f"alphas must be a non-empty sequence of positive, finite penalties; got {alphas!r}."
        )
    return values


class _RidgeHead(BaseEstimator):
    """Shared fitting of the ridge heads; not meant to be used directly."""

    def __init__(self, alphas=None, fit_intercept=True):
        self.alphas = alphas
        self.fit_intercept = fit_intercept

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

    def _solve(self, X, Y, sample_weight=None):
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(f"fit_intercept must be True or False; got {self.fit_intercept!r}.")
        alphas = _check_alphas(self.alphas)
        xp = array_module_of(X)
        coef, intercept, best, errors = ridge_loo(
            X, xp.asarray(Y, dtype=xp.float64), alphas, bool(self.fit_intercept), sample_weight
        )
        self.alpha_ = float(alphas[best])
        self.best_score_ = -float(errors[best])
        self.cv_errors_ = errors
        return coef, intercept

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = self._validate_X(X)
        xp = array_module_of(X)
        # in float64: scores of a row do not depend on the rows beside it
        X = X.astype(xp.float64)
        return X @ xp.asarray(self.coef_).T + xp.asarray(self.intercept_)


class RidgeHeadClassifier(VersionedPickleMixin, ClassifierMixin, _RidgeHead):
    """Ridge classifier with the penalty chosen by exact leave-one-out cross-validation.

    One-vs-rest regression on ``+-1`` targets (one target for two classes), solved in
    closed form: one SVD or Gram eigendecomposition serves every penalty. Gives the results
    of :class:`sklearn.linear_model.RidgeClassifierCV` with the same ``alphas``; runs on
    CuPy arrays on a GPU as well.

    Parameters
    ----------
    alphas : sequence of float, default=None
        Penalties to choose from; ``None`` uses 17 values from 1e-3 to 1e5 (half decades).
        Standardized features are assumed (as ``LMUClassifier`` provides).
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) for two classes, else (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    alpha_ : float
        The chosen penalty.
    best_score_ : float
        Minus its mean squared leave-one-out residual.
    cv_errors_ : ndarray of shape (n_alphas,)
        Mean squared leave-one-out residual of every penalty.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from lmu_sk.ridge import RidgeHeadClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> round(RidgeHeadClassifier().fit(X, y).score(X, y), 2)
    0.85
    """

    def fit(self, X, y, sample_weight=None):
        """Fit the one-vs-rest ridge models and choose the penalty.

        Parameters
        ----------
        X : array-like or CuPy array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative sample weights, not all zero; as in
            :class:`sklearn.linear_model.RidgeClassifierCV` (rows scaled by ``sqrt(w)``,
            see :mod:`lmu_sk.ridge`).

        Returns
        -------
        self
        """
        X, y = self._validate_X_y(X, y, y_numeric=False)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        check_classification_targets(y)
        y = column_or_1d(y, warn=True)
        self.classes_, indices, counts = np.unique(y, return_inverse=True, return_counts=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"The training set has only one class ({self.classes_[0]!r}); a classifier "
                "needs samples of at least two classes."
            )
        if counts.max() < 2:
            raise ValueError(
                "Every class has a single training sample: leave-one-out cross-validation "
                "cannot choose the penalty. Provide at least two samples of some class, or fit "
                "a fixed-penalty model such as sklearn.linear_model.RidgeClassifier."
            )
        n_targets = 1 if len(self.classes_) == 2 else len(self.classes_)
        Y = -np.ones((len(y), len(self.classes_)))
        Y[np.arange(len(y)), indices] = 1.0
        coef, intercept = self._solve(X, Y[:, -n_targets:], sample_weight)
        self.coef_ = to_numpy(coef)
        self.intercept_ = to_numpy(intercept)
        return self

    def decision_function(self, X):
        """Scores, shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        scores = to_numpy(self._decision(X))
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class of the highest score."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[scores.argmax(axis=1)]


class RidgeHeadRegressor(VersionedPickleMixin, RegressorMixin, _RidgeHead):
    """Ridge regression with the penalty chosen by exact leave-one-out cross-validation.

    Gives the results of :class:`sklearn.linear_model.RidgeCV` with the same ``alphas``
    (one penalty for all targets); runs on CuPy arrays on a GPU as well.

    Parameters
    ----------
    alphas : sequence of float, default=None
        See :class:`RidgeHeadClassifier`.
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
    intercept_ : float or ndarray of shape (n_targets,)
    alpha_, best_score_, cv_errors_, n_features_in_
        As in :class:`RidgeHeadClassifier`.
    """

    def fit(self, X, y, sample_weight=None):
        """Fit the ridge model and choose the penalty.

        Parameters
        ----------
        X : array-like or CuPy array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative sample weights, not all zero; as in
            :class:`sklearn.linear_model.RidgeCV` (see :mod:`lmu_sk.ridge`).

        Returns
        -------
        self
        """
        X, y = self._validate_X_y(X, y, y_numeric=True)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        if len(y) < 2:
            raise ValueError(
                "Leave-one-out cross-validation needs at least two training samples; got one "
                "sample."
            )
        coef, intercept = self._solve(X, y.reshape(len(y), -1), sample_weight)
        coef, intercept = to_numpy(coef), to_numpy(intercept)
        if y.ndim == 1:
            self.coef_, self.intercept_ = coef[0], float(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X):
        """Predicted targets, shape (n_samples,) or (n_samples, n_targets)."""
        out = to_numpy(self._decision(X))
        return out if np.ndim(self.coef_) == 2 else out.reshape(-1)
