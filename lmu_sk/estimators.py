"""``LMUClassifier`` and ``LMURegressor``: Delay Network features plus a dense head.

Both precompute the Delay Network (DN) features of the whole training set once (the
feed-forward LMU's precomputation mode) and train a hand-written dense network on them.
They are thin: :class:`~lmu_sk.features.LMUFeatures` computes the features and
:class:`~lmu_sk.head.DenseHeadClassifier` / :class:`~lmu_sk.head.DenseHeadRegressor`
train on them.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, check_memory

from ._device import array_module_of, resolve_device, to_numpy
from .features import LMUFeatures
from .head import DenseHeadClassifier, DenseHeadRegressor

__all__ = ["LMUClassifier", "LMURegressor"]

_HEAD_PARAMS = (
    "hidden_layer_sizes",
    "activation",
    "solver",
    "alpha",
    "batch_size",
    "learning_rate",
    "learning_rate_init",
    "max_iter",
    "shuffle",
    "random_state",
    "tol",
    "verbose",
    "warm_start",
    "momentum",
    "nesterovs_momentum",
    "early_stopping",
    "validation_fraction",
    "n_iter_no_change",
    "beta_1",
    "beta_2",
    "epsilon",
    "dropout",
    "input_dropout",
    "dtype",
)
_HEAD_ATTRIBUTES = (
    "classes_",
    "coefs_",
    "intercepts_",
    "loss_",
    "loss_curve_",
    "validation_scores_",
    "best_loss_",
    "best_validation_score_",
    "n_iter_",
    "t_",
    "n_outputs_",
    "n_layers_",
    "out_activation_",
)
# Default order: rich enough for a first result, and at most this many features in all.
_DEFAULT_MAX_ORDER = 128
_DEFAULT_MAX_FEATURES = 2048


def default_order(n_steps: int, n_channels: int) -> int:
    """The order used when ``order=None``: ``min(n_steps, 128, 2048 // n_channels)``."""
    return max(1, min(n_steps, _DEFAULT_MAX_ORDER, _DEFAULT_MAX_FEATURES // n_channels))


def _features_of(transformer_params: dict, X, on_device: bool = False):
    """Fit an ``LMUFeatures`` with ``transformer_params`` on ``X`` and transform ``X``.

    With ``on_device`` the features of a GPU computation are returned as CuPy arrays.
    """
    transformer = LMUFeatures(**transformer_params).fit(X)
    return transformer, transformer._transform(X, return_gpu_arrays=on_device)


class _LMUBase(BaseEstimator):
    """Shared logic of the LMU estimators; not meant to be used directly."""

    _head_class: type
    _feature_outputs: tuple[str, ...] = ("final", "mean", "max")

    def __init__(
        self,
        order=None,
        theta=None,
        discretizer="zoh",
        feature_output="final",
        scale_features=True,
        memory=None,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=1e-3,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        warm_start=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        dropout=0.0,
        input_dropout=0.0,
        dtype="float32",
        device="auto",
    ):
        self.order = order
        self.theta = theta
        self.discretizer = discretizer
        self.feature_output = feature_output
        self.scale_features = scale_features
        self.memory = memory
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.dropout = dropout
        self.input_dropout = input_dropout
        self.dtype = dtype
        self.device = device

    # ------------------------------------------------------------------ features
    def _transformer_params(self, X) -> dict:
        if self.feature_output not in self._feature_outputs:
            raise ValueError(
                f"Unknown feature_output {self.feature_output!r} for "
                f"{type(self).__name__}; use one of {self._feature_outputs}."
            )
        if not isinstance(self.scale_features, (bool, np.bool_)):
            raise TypeError(f"scale_features must be True or False; got {self.scale_features!r}.")
        order = self.order
        if order is None:
            probe = LMUFeatures(order=1, theta=self.theta, device="cpu").fit(X)
            order = default_order(probe.n_steps_, probe.n_channels_)
        return {
            "order": order,
            "theta": self.theta,
            "discretizer": self.discretizer,
            "output": self.feature_output,
            "dtype": self.dtype if self.dtype in ("float32", "float64") else None,
            # checked here (device='gpu' needs one now) but stored as 'auto' so that the
            # fitted model also transforms on machines without a GPU
            "device": "cpu" if resolve_device(self.device) == "cpu" else "auto",
        }

    def _fit_features(self, X):
        """Fit the transformer, compute training features and the scaling; cached by memory.

        On a GPU the features stay on the device (a CuPy array) for the head, except when
        ``memory`` caches them: the cache lives on the host.
        """
        params = self._transformer_params(X)
        on_device = params["device"] != "cpu" and self.memory is None
        compute = check_memory(self.memory).cache(_features_of)
        self.features_, F = compute(params, X, on_device)
        self.order_ = int(params["order"])
        self.n_features_in_ = self.features_.n_features_in_
        F = self._as_rows(F)
        if self.scale_features:
            self.feature_mean_ = to_numpy(F.mean(axis=0, dtype=np.float64))
            std = to_numpy(F.std(axis=0, dtype=np.float64))
            self.feature_scale_ = np.where(std > 0, std, 1.0)
        return self._scale(F)

    def _features(self, X):
        check_is_fitted(self, "head_")
        return self._transform(X)

    def _transform(self, X):
        """Scaled feature rows of ``X``; on a GPU they stay on the device for the head."""
        # features_ runs on the GPU only where one is present ('auto'), so a model fitted on
        # a GPU predicts anywhere; asking for device arrays is a no-op on the CPU
        on_device = self.device != "cpu"
        return self._scale(self._as_rows(self.features_._transform(X, on_device)))

    def _scale(self, F):
        if self.scale_features:
            xp = array_module_of(F)
            mean = xp.asarray(self.feature_mean_, dtype=F.dtype)
            F = (F - mean) / xp.asarray(self.feature_scale_, dtype=F.dtype)
        return F

    def _as_rows(self, F):
        return F

    # ------------------------------------------------------------------ head
    def _make_head(self):
        params = {name: getattr(self, name) for name in _HEAD_PARAMS}
        return self._head_class(**params, device=self.device)

    def _copy_head_attributes(self) -> None:
        for name in _HEAD_ATTRIBUTES:
            if hasattr(self.head_, name):
                setattr(self, name, getattr(self.head_, name))

    def _fit_head(self, F, y, partial: bool, **kwargs):
        kwargs = {key: value for key, value in kwargs.items() if value is not None}
        head = getattr(self, "head_", None)
        if head is None or not (partial or self.warm_start):
            head = self._make_head()
        else:
            head.set_params(**{name: getattr(self, name) for name in _HEAD_PARAMS})
        if partial:
            head.partial_fit(F, y, **kwargs)
        else:
            head.fit(F, y, **kwargs)
        self.head_ = head
        self._copy_head_attributes()
        return self

    def fit(self, X, y, X_val=None, y_val=None):
        """Compute the DN features of ``X`` once and train the head on them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps) or (n_samples, n_steps, n_channels),
            or a list of sequences of different lengths
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        X_val, y_val : optional
            Held-out sequences and targets for early stopping (``early_stopping=True``) in
            place of a ``validation_fraction`` split of ``X``.

        Returns
        -------
        self
        """
        if not self.warm_start or not hasattr(self, "head_"):
            self.__dict__.pop("head_", None)
        F = self._fit_features(X)
        if X_val is not None:
            X_val, y_val = self._transform(X_val), self._targets(y_val, X_val)
        return self._fit_head(F, self._targets(y, X), partial=False, X_val=X_val, y_val=y_val)

    def _targets(self, y, X):
        """The head's targets for ``y`` (per-step targets are flattened to rows)."""
        return y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags


class LMUClassifier(ClassifierMixin, _LMUBase):
    """Legendre Memory Unit classifier: Delay Network features and a dense softmax head.

    The DN features of the training set are computed once (one matrix product for final
    states), standardized, and a dense network with hand-written forward and backward
    passes is trained on them with Adam or SGD.

    Parameters
    ----------
    order : int, default=None
        DN states per channel. ``None`` uses ``min(n_steps, 128, 2048 // n_channels)``.
    theta : float, default=None
        DN window in time steps; ``None`` uses the training sequences' length.
    discretizer : {'zoh', 'euler'}, default='zoh'
        See :class:`~lmu_sk.features.LMUFeatures`.
    feature_output : {'final', 'mean', 'max'}, default='final'
        The DN state at each sequence's end, or the states averaged or maximised over time.
    scale_features : bool, default=True
        Standardize the features with the training set's mean and standard deviation.
    memory : str or joblib.Memory, default=None
        Cache the training features on disk, keyed on ``X`` and the DN parameters, so that
        refits that change only head parameters (a grid search) reuse them.
    hidden_layer_sizes, activation, solver, alpha, batch_size, learning_rate, \
learning_rate_init, max_iter, shuffle, random_state, tol, verbose, warm_start, momentum, \
nesterovs_momentum, early_stopping, validation_fraction, n_iter_no_change, beta_1, beta_2, \
epsilon, dropout, input_dropout, dtype
        The head's parameters, as in :class:`~lmu_sk.head.DenseHeadClassifier` and
        :class:`sklearn.neural_network.MLPClassifier`. ``dtype`` is also the features'.
    device : {'auto', 'cpu', 'gpu'}, default='auto'
        Where features and head are computed; 'auto' uses a GPU when CuPy finds one.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    features_ : LMUFeatures
        The fitted feature transformer.
    head_ : DenseHeadClassifier
        The fitted head.
    order_ : int
        The order used.
    feature_mean_, feature_scale_ : ndarray of shape (n_features,)
        The standardization (when ``scale_features``).
    n_features_in_ : int
        Steps of the training sequences.
    loss_, loss_curve_, validation_scores_, best_loss_, best_validation_score_, n_iter_, \
t_, coefs_, intercepts_, n_outputs_, n_layers_, out_activation_
        As in :class:`sklearn.neural_network.MLPClassifier`, from the head.
    """

    _head_class = DenseHeadClassifier

    def partial_fit(self, X, y, classes=None):
        """Train the head for one epoch on ``(X, y)``; the first call fits the features.

        Parameters
        ----------
        X : array-like of sequences
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            All classes; required on the first call.

        Returns
        -------
        self
        """
        if not hasattr(self, "head_"):
            F = self._fit_features(X)
        else:
            F = self._features(X)
        return self._fit_head(F, y, partial=True, classes=classes)

    def predict(self, X):
        """Predicted class labels of the sequences ``X``."""
        features = self._features(X)
        return self.head_.predict(features)

    def predict_proba(self, X):
        """Class probabilities of the sequences ``X``, shape (n_samples, n_classes)."""
        features = self._features(X)
        return self.head_.predict_proba(features)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        features = self._features(X)
        return self.head_.predict_log_proba(features)


class LMURegressor(RegressorMixin, _LMUBase):
    """Legendre Memory Unit regressor: Delay Network features and a dense linear-output head.

    Parameters are those of :class:`LMUClassifier`, with
    ``feature_output`` in ``{'final', 'mean', 'max', 'sequence'}``. With 'sequence' the
    head is applied at every time step (time-distributed): ``y`` holds one target per
    step, shape ``(n_samples, n_steps)`` or ``(n_samples, n_steps, n_outputs)``, and
    ``predict`` returns the same shape — the setting of forecasting tasks such as
    Mackey-Glass.

    Attributes
    ----------
    features_, head_, order_, feature_mean_, feature_scale_, n_features_in_
        As in :class:`LMUClassifier`.
    loss_, loss_curve_, validation_scores_, best_loss_, best_validation_score_, n_iter_, \
t_, coefs_, intercepts_, n_outputs_, n_layers_, out_activation_
        As in :class:`sklearn.neural_network.MLPRegressor`, from the head.
    """

    _head_class = DenseHeadRegressor
    _feature_outputs = ("final", "mean", "max", "sequence")

    def _as_rows(self, F):
        if self.feature_output != "sequence":
            return F
        if isinstance(F, list):
            raise ValueError(
                "feature_output='sequence' needs sequences of equal length; pad them or "
                "fit one model per length."
            )
        return F.reshape(-1, F.shape[-1])

    def _sequence_shape(self, X) -> tuple[int, int]:
        """``(n_samples, n_steps)`` of an equal-length batch of sequences."""
        shape = np.shape(X)
        if len(shape) < 2:
            raise ValueError("feature_output='sequence' needs X of shape (n_samples, n_steps).")
        return shape[0], shape[1]

    def _targets(self, y, X):
        if self.feature_output != "sequence":
            return y
        y = np.asarray(y)
        n_samples, n_steps = self._sequence_shape(X)
        if y.shape[:2] != (n_samples, n_steps):
            raise ValueError(
                f"With feature_output='sequence' y needs one target per step, shape "
                f"({n_samples}, {n_steps}) or ({n_samples}, {n_steps}, n_outputs); got "
                f"{y.shape}."
            )
        return y.reshape(n_samples * n_steps, *y.shape[2:])

    def partial_fit(self, X, y):
        """Train the head for one epoch on ``(X, y)``; the first call fits the features."""
        F = self._fit_features(X) if not hasattr(self, "head_") else self._features(X)
        return self._fit_head(F, self._targets(y, X), partial=True)

    def predict(self, X):
        """Predicted targets of the sequences ``X`` (per step for 'sequence')."""
        features = self._features(X)
        prediction = self.head_.predict(features)
        if self.feature_output == "sequence":
            return prediction.reshape(*self._sequence_shape(X), *prediction.shape[1:])
        return prediction
