"""Dense-network heads: scikit-learn estimators trained on a 2-D feature matrix.

:class:`DenseHeadClassifier` and :class:`DenseHeadRegressor` follow the parameters and
fitted attributes of :class:`sklearn.neural_network.MLPClassifier` and
:class:`~sklearn.neural_network.MLPRegressor` (stochastic solvers only), and add dropout
(of hidden units and of input features), a compute dtype (float32 by default) and a
device. Training is the hand-written network of :mod:`lmu_sk.neural`.

Conventions
-----------
* Fitted weights ``coefs_`` and ``intercepts_`` are NumPy arrays in the compute dtype, so
  fitted models pickle and load on machines without a GPU.
* Predictions are NumPy arrays; ``predict_proba`` and regression outputs are float64.
* CuPy feature matrices are validated on the device and, when the head trains or predicts
  on the GPU, never leave it: only the weights and the predictions come back.
* There is no ``decision_function``: like ``MLPClassifier`` the classifier exposes
  ``predict_proba`` and ``predict_log_proba`` only.
* Divergence (a non-finite loss or weights) raises
  :class:`~lmu_sk.neural.training.TrainingDivergedError`, a ``ValueError`` that asks for a
  lower ``learning_rate_init``; the estimator then keeps the state it had before the call
  (unfitted after a first ``fit``), so it never predicts NaN. A loss that stays finite but
  explodes (over 100 times the loss of the initial weights) gives a ``UserWarning`` that
  asks for the same.
* ``sample_weight`` weights the loss as in scikit-learn's MLP (weighted mean over each
  minibatch, L2 penalty divided by the batch's total weight): integer weights train as
  repeated rows, zero weights as dropped ones (exactly so with one full batch).
* ``warm_start`` and ``partial_fit`` follow ``MLPClassifier``: ``n_iter_`` counts the epochs
  of the last call (1 after ``partial_fit``), while ``t_``, ``loss_curve_``, ``best_loss_``
  and the no-improvement counter carry over; ``fit`` starts a fresh optimizer (learning
  rate back to ``learning_rate_init``), ``partial_fit`` continues it.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import replace
from numbers import Integral, Real
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
    type_of_target,
    unique_labels,
)
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._device import (
    HostScoreMixin,
    array_module_of,
    for_module,
    free_device_memory,
    get_array_module,
    portable_device,
    to_numpy,
)
from ._input import (
    cast_checked,
    check_device_matrix,
    check_float_dtype,
    check_regression_targets,
    is_device_array,
    refuse_text_targets,
    refuse_underflow,
)
from ._memory import check_fits, check_predictions_fit
from ._persistence import VersionedPickleMixin
from ._state import state_kept_on_error
from .neural.activations import HIDDEN_ACTIVATIONS, log_probabilities, logistic_probabilities
from .neural.network import DenseNetwork, forward_pass
from .neural.optimizers import SGD, Adam, BaseOptimizer, make_schedule, optimizer_from_plain
from .neural.training import (
    BlockBatches,
    RowBatches,
    RowBlocks,
    TrainingDivergedError,
    TrainingHistory,
    check_sample_weight,
    resolve_batch_size,
    train_epochs,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["DenseHeadClassifier", "DenseHeadRegressor", "TrainingDivergedError"]

_DTYPES = ("float32", "float64")
# arrays of the parameters' size that training holds at most: the parameters, their
# gradients, the optimizer's state (Adam's two moments) and early stopping's best ones
_PARAMETER_ARRAYS = 5
# arrays of a batch's activations' size that training holds at most (activations,
# deltas, work, and dropout's masks and kept values)
_ACTIVATION_ARRAYS = 5


def _batch_rows(batch_size: int | str) -> int:
    """Rows of a training batch at most (``'auto'``: 200)."""
    return 200 if isinstance(batch_size, str) else max(int(batch_size), 1)


def _check_training_fits(layer_sizes: list[int], dtype, batch_rows: int, xp: ModuleType) -> None:
    """A ``MemoryBudgetError`` (a ``ValueError``) naming ``batch_size`` or
    ``hidden_layer_sizes``, whichever takes most of it, where training a network of
    ``layer_sizes`` on batches of ``batch_rows`` would need more memory than the device
    has free (the host's available memory on the CPU), before any of it is allocated."""
    n_params = sum(a * b for a, b in itertools.pairwise(layer_sizes)) + sum(layer_sizes[1:])
    parameters = _PARAMETER_ARRAYS * n_params
    activations = _ACTIVATION_ARRAYS * batch_rows * sum(layer_sizes)
    # the advice names what takes most of it: the batch's activations, or the parameters
    fix = (
        f"Use a smaller batch_size (now {batch_rows} rows: its activations are most of it), "
        "or smaller hidden_layer_sizes."
        if activations > parameters
        else "Use smaller hidden_layer_sizes (or fewer features: a smaller order or fewer "
        "thresholds)."
    )
    check_fits(
        (parameters + activations) * np.dtype(dtype).itemsize,
        f"Training a dense network of layer sizes {list(layer_sizes)} ({n_params:,} parameters)"
        f" on batches of {batch_rows} rows",
        fix,
        free_device_memory(xp),
    )


def check_hidden_layer_sizes(sizes, owner: str) -> list[int]:
    """``hidden_layer_sizes`` as a list of positive ints (one int: one layer; an empty
    sequence: none); an InvalidParameterError naming ``owner`` otherwise (an unordered
    set or mapping included: the layers have an order)."""
    if isinstance(sizes, (set, frozenset, Mapping)):
        raise InvalidParameterError(
            f"The 'hidden_layer_sizes' parameter of {owner} must be a positive int or a "
            f"sequence of them, in the layers' order (a tuple or list); got {sizes!r}."
        )
    listed = list(sizes) if hasattr(sizes, "__iter__") else [sizes]
    for size in listed:
        if not isinstance(size, Integral) or isinstance(size, (bool, np.bool_)) or size <= 0:
            raise InvalidParameterError(
                f"The 'hidden_layer_sizes' parameter of {owner} must be a positive int or a "
                f"sequence of positive ints; got {sizes!r}."
            )
    return [int(size) for size in listed]


@contextlib.contextmanager
def _state_kept(head) -> Iterator[None]:
    """:func:`~lmu_sk._state.state_kept_on_error` of a dense head, whose optimizer is
    dropped after a divergence as well: its moments, updated in place, may hold NaN, and
    the next ``partial_fit`` starts a fresh one."""
    try:
        with state_kept_on_error(head):
            yield
    except TrainingDivergedError:
        if "_optimizer" in head.__dict__:
            head._optimizer = None
        raise


def _num_rows(X) -> int | None:
    """The number of rows of ``X`` where it tells them without a copy, else ``None``."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape):
        return int(shape[0])
    return len(X) if isinstance(X, (list, tuple)) else None


def _refuse_weights_as_x_val(X_val, y_val, n_rows: int | None) -> None:
    """Refuse, naming the cause, one value per training row given as ``X_val`` alone:
    scikit-learn's ``fit(X, y, sample_weight)`` order, where ``fit``'s third argument is
    ``X_val`` (a 1-D ``X_val`` is never held-out rows of features)."""
    if X_val is None or y_val is not None or n_rows is None:
        return
    shape = getattr(X_val, "shape", None)
    if shape is None and isinstance(X_val, (list, tuple)):
        shape = np.shape(X_val) if all(np.ndim(v) == 0 for v in X_val) else None
    if shape is not None and len(shape) == 1 and shape[0] == n_rows:
        raise TypeError(
            "fit's third argument is X_val (held-out rows for early stopping); it got one "
            f"value per training row ({n_rows}), as scikit-learn's fit(X, y, sample_weight) "
            "passes weights. Pass them by keyword: fit(X, y, sample_weight=w)."
        )


def _refuse_weights_as_classes(classes, n_rows: int | None, y=None) -> None:
    """Refuse one number per training row, repeated, given as ``classes``:
    ``MLPClassifier.partial_fit(X, y, sample_weight)``'s order, where ``partial_fit``'s
    third argument is ``classes`` (weights whose distinct values are the classes, 0 and 1,
    were taken as them, and the batch trained unweighted). ``classes=y`` itself (float
    labels: scikit-learn takes the distinct values of ``classes``) is no weights."""
    if classes is None or n_rows is None:
        return
    try:
        values = np.asarray(to_numpy(classes))
    except (TypeError, ValueError):
        return  # (partial_fit's own checks name what is wrong)
    if (
        values.ndim == 1
        and values.shape[0] == n_rows
        and values.dtype.kind == "f"
        and np.unique(values).shape[0] < n_rows
    ):
        try:
            labels = np.asarray(to_numpy(y)) if y is not None else None
        except (TypeError, ValueError):
            labels = None
        if labels is not None and labels.shape == values.shape and np.array_equal(labels, values):
            return
        raise TypeError(
            "partial_fit's third argument is classes (every class label, each once); it got "
            f"{n_rows} numbers with repeats, one per training row, as scikit-learn's "
            "MLPClassifier.partial_fit(X, y, sample_weight) passes weights. Pass them by "
            "keyword: partial_fit(X, y, sample_weight=w), and classes=np.unique(y_all)."
        )


def refuse_multiclass_multioutput(y, name: str) -> None:
    """Refuse several labels per sample that are not an indicator matrix of 0 and 1 (the
    dense head's label binarizer cannot take them), in estimator ``name``'s name."""
    y = np.asarray(y)
    if y.ndim == 2 and type_of_target(y) == "multiclass-multioutput":
        raise ValueError(
            f"{name} takes one label per sample or several labels of 0 and 1 per sample "
            f"(an indicator matrix); y of shape {y.shape} holds several labels per sample "
            "that are not an indicator matrix of 0 and 1. Fit one model per column: "
            "sklearn.multioutput.MultiOutputClassifier does."
        )


class _BaseDenseHead(BaseEstimator):
    """Shared training logic of the dense heads; not meant to be used directly."""

    # check_array's dtype for y and y_val: labels of any type, or numbers
    _y_dtype: ClassVar[str | None] = None

    # saved as plain data: a pickle names no class of lmu_sk.neural
    _plain_attributes: ClassVar[dict] = {
        "_optimizer": (BaseOptimizer.to_plain, optimizer_from_plain),
        "_history": (TrainingHistory.to_plain, TrainingHistory.from_plain),
    }

    _parameter_constraints: ClassVar[dict] = {
        "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions(set(HIDDEN_ACTIVATIONS))],
        "solver": [StrOptions({"adam", "sgd"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "learning_rate": [StrOptions({"constant", "plateau", "adaptive", "invscaling", "cosine"})],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "momentum": [Interval(Real, 0, 1, closed="both")],
        "nesterovs_momentum": ["boolean"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "beta_1": [Interval(Real, 0, 1, closed="left")],
        "beta_2": [Interval(Real, 0, 1, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "input_dropout": [Interval(Real, 0, 1, closed="left")],
        # 'float32' or 'float64', or the NumPy type or dtype of either (checked at fit)
        "dtype": [StrOptions(set(_DTYPES)), type, np.dtype],
        "device": [StrOptions({"cpu", "gpu", "auto"})],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=1e-3,
        power_t=0.5,
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
        device="cpu",
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
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

    # ------------------------------------------------------------------ helpers
    def _array_module(self, training: bool = True) -> ModuleType:
        """Array module for training (``training=True``) or prediction.

        Training: 'cpu' runs on NumPy, 'auto' on CuPy when it finds a GPU and NumPy
        otherwise, 'gpu' on CuPy or a ValueError explaining how to install it. Prediction
        falls back to NumPy wherever no GPU is present, so that a model trained on a GPU
        (its weights are NumPy arrays) predicts on any machine.
        """
        return get_array_module(self.device if training else portable_device(self.device))

    def _hidden_sizes(self) -> list[int]:
        return check_hidden_layer_sizes(self.hidden_layer_sizes, type(self).__name__)

    def _make_optimizer(self, network: DenseNetwork, xp: ModuleType):
        if self.solver == "sgd":
            return SGD(
                [network.params],
                self.learning_rate_init,
                momentum=self.momentum,
                nesterov=self.nesterovs_momentum,
                xp=xp,
            )
        return Adam(
            [network.params],
            self.learning_rate_init,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            epsilon=self.epsilon,
            xp=xp,
        )

    def _forward(self, X: Any, raw: bool = False) -> np.ndarray:
        """Output of the fitted network for validated ``X``, as a NumPy array."""
        xp = self._array_module(training=False)
        if xp is np:
            X = to_numpy(X)
        # Prediction runs in float64 whatever the training dtype: BLAS sums each row of a
        # product in an order that depends on its place in the block, so in float32 a
        # row's output would change in the 7th digit with the rows predicted beside it.
        coefs = [xp.asarray(c, dtype=np.float64) for c in self.coefs_]
        intercepts = [xp.asarray(b, dtype=np.float64) for b in self.intercepts_]
        # NumPy input is cast block by block inside forward_pass; other modules get the
        # matrix moved once (if not already there)
        n_outputs = int(self.coefs_[-1].shape[1])
        check_predictions_fit(
            X.shape[0] * n_outputs, f"The outputs of {X.shape[0]} samples for {n_outputs} outputs"
        )
        Xd = X if xp is np else xp.asarray(X, dtype=np.float64)
        out = forward_pass(
            Xd, coefs, intercepts, self.activation_, self.out_activation_, xp, raw=raw
        )
        return to_numpy(out)

    def _validate_X(self, X, reset: bool = False):
        """``validate_data`` for ``X`` alone; CuPy arrays are checked on the device."""
        if is_device_array(X):
            return check_device_matrix(X, estimator=self, reset=reset)
        return validate_data(self, X, dtype=(np.float64, np.float32), reset=reset)

    def _validate_X_y(self, X, y, reset: bool, y_numeric: bool = False):
        """``validate_data`` for ``(X, y)``; a CuPy ``X`` is checked on the device.

        Targets are small next to the features: a CuPy ``y`` is brought to the host.
        """
        if not is_device_array(X):
            return validate_data(
                self,
                X,
                y,
                multi_output=True,
                y_numeric=y_numeric,
                dtype=(np.float64, np.float32),
                reset=reset,
            )
        X = check_device_matrix(X, estimator=self, reset=reset)
        y = check_array(
            to_numpy(y), ensure_2d=False, dtype="numeric" if y_numeric else None, input_name="y"
        )
        check_consistent_length(X, y)
        return X, y

    @staticmethod
    def _compute_array(X, dtype: np.dtype, xp: ModuleType):
        """``X`` as a C-contiguous array of ``dtype`` where training runs.

        A CuPy ``X`` stays on the device when training runs there, and comes to the host
        once when it runs on the CPU; host arrays are moved by the training loop. Values
        beyond ``dtype``'s range, or all below its normal range, are refused by name (cast,
        they became infinity and a diverged loss, or zeros and a model of nothing).
        """
        if is_device_array(X) and xp is not np:
            module = xp
        else:  # CuPy's ascontiguousarray refuses a host array: it stays a NumPy array
            X, module = to_numpy(X), np
        refuse_underflow([X], np.dtype(dtype))
        return module.ascontiguousarray(cast_checked(X, dtype))

    def _validate_input(self, X, y, incremental: bool, reset: bool):
        """Return validated ``X``, the 2-D target matrix ``Y`` and the labels to stratify
        the validation split by (None for no stratification).

        ``X`` may be :class:`~lmu_sk.neural.training.RowBlocks` (feature rows computed
        block by block): then the targets alone are validated here, the blocks' shapes
        as they arrive.
        """
        numeric = self._y_dtype == "numeric"
        if numeric:
            refuse_text_targets(y)  # (before validation parses an object array's)
        if not isinstance(X, RowBlocks):
            X, y = self._validate_X_y(X, y, reset=reset, y_numeric=numeric)
        else:
            y = check_array(to_numpy(y), ensure_2d=False, dtype=self._y_dtype, input_name="y")
            if y.shape[0] != X.bounds[-1]:
                raise ValueError(f"The blocks hold {X.bounds[-1]} rows but y has {y.shape[0]}.")
            if reset:
                self.__dict__.pop("feature_names_in_", None)
                self.n_features_in_ = X.n_features
            elif X.n_features != self.n_features_in_:
                raise ValueError(
                    f"X has {X.n_features} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
        if numeric:
            y = check_regression_targets(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        Y, split_labels = self._encode_targets(y, incremental)
        return X, Y, split_labels

    # ------------------------------------------------------------------ subclass hooks
    def _encode_targets(self, y, incremental: bool):
        """The 2-D target matrix of validated ``y`` and the labels to stratify the
        validation split by (None for no stratification)."""
        raise NotImplementedError

    def _loss_name(self, Y: np.ndarray) -> str:
        raise NotImplementedError

    def _score_validation(
        self,
        network: DenseNetwork,
        X_val: Any,
        Y_val: np.ndarray,
        sample_weight: np.ndarray | None = None,
    ) -> float:
        raise NotImplementedError

    # ------------------------------------------------------------------ training
    def _fit(self, X, y, incremental: bool = False, validation_data=None, sample_weight=None):
        """Fit the head on a feature matrix; the hook behind ``fit`` and ``partial_fit``.

        Composite estimators that already hold a feature matrix call this directly. The
        hyper-parameters are validated here too, so it can be called without ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or RowBlocks
            Features; or :class:`~lmu_sk.neural.training.RowBlocks`, feature rows that
            arrive block by block (the composites' dask features), trained on by the
            same epoch loop one block at a time. Blocks take no ``sample_weight`` and,
            for early stopping, need ``validation_data``.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets (class labels for the classifier), in memory for blocks too.
        incremental : bool, default=False
            False: as ``fit`` (fresh weights unless ``warm_start``; up to ``max_iter``
            epochs; early stopping if requested). True: as ``partial_fit`` (one epoch,
            continuing weights and optimizer state; refused with early_stopping=True). For the
            classifier the classes must already be known (``classes_``) when
            ``incremental=True``.
        validation_data : tuple (X_val, y_val), optional
            Held-out data for early stopping instead of a split of ``X``.
        sample_weight : array-like of shape (n_samples,), optional
            Sample weights (see ``fit``).

        Returns
        -------
        self
        """
        with _state_kept(self):
            return self._fit_unguarded(X, y, incremental, validation_data, sample_weight)

    def _fit_unguarded(self, X, y, incremental, validation_data, sample_weight):
        """:meth:`_fit` without keeping the state on errors."""
        self._validate_params()
        if incremental and self.early_stopping:
            raise ValueError(
                "partial_fit does not support early_stopping=True (as scikit-learn's MLP): "
                "it trains one epoch on the rows given, none held out to stop on. Use fit "
                "to stop early, or set_params(early_stopping=False) to train by partial_fit."
            )
        xp = self._array_module()
        dtype = check_float_dtype(self.dtype, type(self).__name__)
        hidden = self._hidden_sizes()
        first_pass = not hasattr(self, "coefs_") or (not self.warm_start and not incremental)

        X, Y, split_labels = self._validate_input(X, y, incremental, reset=first_pass)
        blocks = X if isinstance(X, RowBlocks) else None
        if blocks is not None:
            if sample_weight is not None:
                raise ValueError("sample_weight is not supported for rows that arrive in blocks.")
            n_features = blocks.n_features
        else:
            sample_weight = check_sample_weight(sample_weight, X.shape[0])
            X = self._compute_array(X, dtype, xp)
            n_features = X.shape[1]
        Y = np.ascontiguousarray(Y, dtype=dtype)
        layer_sizes = [n_features, *hidden, Y.shape[1]]

        if first_pass:
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            rng = np.random.default_rng(seed)
            history = TrainingHistory()
        else:
            fitted_sizes = [self.coefs_[0].shape[0]] + [b.shape[0] for b in self.intercepts_]
            if fitted_sizes != layer_sizes:
                fix = (
                    "partial_fit continues the fitted network: fit (with warm_start=False) "
                    "or a new estimator fits a new one"
                    if incremental
                    else "Use warm_start=False (or a new estimator) to fit a new network"
                )
                raise ValueError(
                    f"The fitted layer sizes {fitted_sizes} do not match the current "
                    f"ones {layer_sizes}; hidden_layer_sizes or the outputs changed. {fix}."
                )
            # work on copies so that a failed call leaves the estimator unchanged; as in
            # scikit-learn's MLP, n_iter_ counts the epochs of this call alone
            rng = copy.deepcopy(self._rng)
            history = replace(
                self._history,
                n_iter=0,
                loss_curve=list(self._history.loss_curve),
                validation_scores=(
                    None
                    if self._history.validation_scores is None
                    else list(self._history.validation_scores)
                ),
            )

        n_rows = blocks.n_rows if blocks is not None else X.shape[0]
        _check_training_fits(layer_sizes, dtype, min(n_rows, _batch_rows(self.batch_size)), xp)
        network = DenseNetwork(
            layer_sizes,
            self.activation,
            self._loss_name(Y),
            self.alpha,
            self.dropout,
            dtype,
            xp,
            input_dropout=self.input_dropout,
        )
        if first_pass:
            network.initialize(rng)
        else:
            network.set_weights(self.coefs_, self.intercepts_)

        # partial_fit continues the optimizer state; fit (warm or not) starts afresh
        optimizer = getattr(self, "_optimizer", None) if incremental else None
        if not isinstance(optimizer, SGD if self.solver == "sgd" else Adam):
            optimizer = self._make_optimizer(network, xp)
        else:
            optimizer.to_module(xp, dtype)

        early_stopping = self.early_stopping and not incremental
        validation_score = None
        sw_val = None
        if validation_data is not None and not early_stopping:
            raise ValueError(
                "X_val and y_val are used for early stopping only; set "
                "early_stopping=True or leave them out."
            )
        if early_stopping and validation_data is not None:
            X_val, Y_val = self._validate_validation_data(*validation_data, n_features, dtype)
            if Y_val.shape[1] != Y.shape[1]:  # else r2_score's message, after an epoch
                raise ValueError(
                    f"y_val has {Y_val.shape[1]} output(s) but y has {Y.shape[1]}; give "
                    "y_val the outputs of y."
                )
            if X_val.shape[0] < 2:  # else every validation score is NaN (R^2 of one row)
                raise ValueError(
                    f"X_val has {X_val.shape[0]} row(s); the validation score needs at least 2."
                )
            self._check_validation_targets(Y_val, None, "Pass held-out data whose targets vary.")
            X_val = self._compute_array(X_val, dtype, xp)
        elif early_stopping and blocks is not None:
            raise ValueError(
                "Early stopping on rows that arrive in blocks needs held-out validation "
                "data (validation_data)."
            )
        elif early_stopping:
            X, Y, X_val, Y_val, sample_weight, sw_val = self._validation_split(
                X, Y, split_labels, rng, sample_weight
            )
        if early_stopping:
            X_val_dev = xp.asarray(X_val)

            def validation_score() -> float:
                return self._score_validation(network, X_val_dev, Y_val, sw_val)

            # the best weights are those of this call (its validation split is new), so
            # unlike scikit-learn's MLP, the no-improvement count restarts with them
            history.best_validation_score = -math.inf
            history.no_improvement_count = 0

        if blocks is not None:
            batch_size = resolve_batch_size(self.batch_size, blocks.n_rows)
            batches = BlockBatches(blocks, Y, batch_size, dtype, xp)
        else:
            batch_size = resolve_batch_size(self.batch_size, X.shape[0])
            batches = RowBatches(
                xp.asarray(X), xp.asarray(Y), batch_size, sample_weight=sample_weight, xp=xp
            )
        train_epochs(
            network,
            optimizer,
            make_schedule(
                self.learning_rate, self.power_t, None if incremental else self.max_iter
            ),
            batches,
            history,
            rng=rng,
            max_iter=1 if incremental else self.max_iter,
            shuffle=self.shuffle,
            tol=self.tol,
            n_iter_no_change=self.n_iter_no_change,
            validation_score=validation_score,
            verbose=self.verbose,
            incremental=incremental,
        )

        self.coefs_, self.intercepts_ = network.get_weights()
        self._optimizer = optimizer
        self._rng = rng
        self._history = history
        self.n_outputs_ = Y.shape[1]
        self.n_layers_ = len(layer_sizes)
        self.activation_ = network.activation
        self.out_activation_ = network.out_activation
        self.n_iter_ = history.n_iter
        self.t_ = history.t
        self.loss_ = history.loss
        self.loss_curve_ = list(history.loss_curve)
        if early_stopping:
            self.validation_scores_ = list(history.validation_scores)
            self.best_validation_score_ = history.best_validation_score
            self.best_loss_ = None
        else:
            self.validation_scores_ = None
            self.best_validation_score_ = None
            self.best_loss_ = history.best_loss
        return self

    def _validate_validation_data(self, X_val, y_val, n_features, dtype):
        if X_val is None or y_val is None:
            raise ValueError("Pass both X_val and y_val, or neither.")
        if is_device_array(X_val):
            X_val = check_device_matrix(X_val, input_name="X_val")
        else:
            X_val = check_array(X_val, dtype=dtype, input_name="X_val")
        if X_val.shape[1] != n_features:
            raise ValueError(f"X_val has {X_val.shape[1]} features but X has {n_features}.")
        # NaN or infinity in y_val: sklearn's message names y_val ("Input y_val contains NaN")
        y_val = check_array(
            to_numpy(y_val),
            ensure_2d=False,
            dtype=self._y_dtype,
            input_name="y_val",
        )
        check_consistent_length(X_val, y_val)
        return X_val, np.ascontiguousarray(self._target_matrix(y_val), dtype=dtype)

    def _validation_split(self, X, Y, split_labels, rng, sample_weight=None):
        """Hold out ``validation_fraction`` of the rows (stratified for classes).

        The split is drawn on row indices, so a CuPy ``X`` is split on the device. Sample
        weights are split with the rows: the training part weights the loss, the held-out
        part the validation score (as scikit-learn's MLP does). Where a composite's rows
        are every step of its sequences (``_rows_per_group`` consecutive rows each, which
        it sets), whole sequences are held out: a step held out beside its sequence's
        trained neighbours scored the fit to that sequence, not to new ones.
        """
        seed = int(rng.integers(np.iinfo(np.int32).max))
        group = int(self.__dict__.get("_rows_per_group", 1))
        units = np.arange(X.shape[0] // group)
        what = "rows" if group == 1 else f"sequences (of {group} rows each)"
        if group > 1:
            split_labels = None
        try:
            train, val = train_test_split(
                units, test_size=self.validation_fraction, random_state=seed, stratify=split_labels
            )
        except ValueError:
            # too few members in a class to stratify: a random split; none possible (no
            # training row left): named as the head's parameter, not train_test_split's
            try:
                train, val = train_test_split(
                    units, test_size=self.validation_fraction, random_state=seed
                )
            except ValueError as error:
                raise ValueError(
                    f"validation_fraction={self.validation_fraction} of {len(units)} {what} "
                    f"leaves no {'row' if group == 1 else 'sequence'} to train on; lower "
                    "validation_fraction, or pass X_val and y_val."
                ) from error
        if group > 1:  # the rows of the sequences drawn
            steps = np.arange(group)
            train = (train[:, None] * group + steps).ravel()
            val = (val[:, None] * group + steps).ravel()
        if val.shape[0] < 2:
            raise ValueError(
                "The validation set is too small. Increase 'validation_fraction' or the "
                "size of your dataset."
            )
        xp = array_module_of(X)
        X_train, X_val = X[xp.asarray(train)], X[xp.asarray(val)]
        sw_train = sw_val = None
        if sample_weight is not None:
            sw_train, sw_val = sample_weight[train], sample_weight[val]
            for part, weights in (("training", sw_train), ("validation", sw_val)):
                if not weights.any():
                    raise ValueError(
                        f"Every sample of the early-stopping {part} split has weight zero. "
                        "Change random_state or validation_fraction, or pass X_val and y_val."
                    )
        self._check_validation_targets(
            Y[val],
            sw_val,
            "Change random_state or validation_fraction, or pass X_val and y_val.",
        )
        return X_train, np.ascontiguousarray(Y[train]), X_val, Y[val], sw_train, sw_val

    def _check_validation_targets(self, Y_val, sample_weight, advice: str) -> None:
        """Raise where the early-stopping score of the held-out targets ``Y_val`` (rows
        weighted by ``sample_weight``) is undefined; the classifier's always is."""

    def __sklearn_is_fitted__(self) -> bool:
        # classes_ is set before training starts; the weights only after it succeeded
        return hasattr(self, "coefs_")


class DenseHeadClassifier(VersionedPickleMixin, HostScoreMixin, ClassifierMixin, _BaseDenseHead):
    """Dense-network classifier trained on a feature matrix.

    A multilayer perceptron with softmax output and cross-entropy loss for several
    classes, one logistic output unit for two classes, and independent logistic outputs
    for multilabel targets. Parameters are those of
    :class:`sklearn.neural_network.MLPClassifier` (stochastic solvers) plus ``dropout``,
    ``input_dropout``, ``dtype`` and ``device``.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(100,)
        Width of every hidden layer; ``()`` gives a linear (logistic regression) model.
    activation : {'relu', 'tanh', 'logistic', 'identity'}, default='relu'
        Hidden-layer activation.
    solver : {'adam', 'sgd'}, default='adam'
        Optimizer.
    alpha : float, default=1e-4
        L2 penalty on the weights (not the biases), scaled as in scikit-learn.
    batch_size : int or 'auto', default='auto'
        Minibatch size; 'auto' is ``min(200, n_samples)``.
    learning_rate : {'constant', 'plateau', 'adaptive', 'invscaling', 'cosine'}, \
default='constant'
        Learning-rate schedule; unlike scikit-learn's MLP, where schedules apply to 'sgd'
        only, every schedule applies to both solvers (Adam's step size is scaled alike).

        - 'constant': ``learning_rate_init`` throughout; training stops when the
          monitored quantity stalls for more than ``n_iter_no_change`` epochs.
        - 'plateau': divides the learning rate by 10 at each such stall instead of
          stopping, and stops once it would fall below 1e-6.
        - 'adaptive' (as ``MLPClassifier``): divides it by 5 at each stall, and stops at
          a stall where it is already at most 1e-6.
        - 'invscaling' (as ``MLPClassifier``): after every epoch sets it to
          ``learning_rate_init / (t_ + 1) ** power_t``, ``t_`` the samples seen so far;
          a stall stops training.
        - 'cosine': decays it over the ``max_iter`` epochs of a ``fit``, epoch ``k`` at
          ``learning_rate_init * (1 + cos(pi * (k - 1) / max_iter)) / 2``; a stall
          neither stops training nor changes the rate, and reaching ``max_iter`` gives no
          ``ConvergenceWarning`` (with early stopping the best epoch's weights are kept).
          ``partial_fit`` keeps the current rate: after a ``fit``, its last epoch's.
    learning_rate_init : float, default=1e-3
        Initial step size.
    power_t : float, default=0.5
        Exponent of the 'invscaling' schedule.
    max_iter : int, default=200
        Maximum number of epochs per ``fit``.
    shuffle : bool, default=True
        Shuffle the samples every epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, shuffling, dropout and the validation split.
    tol : float, default=1e-4
        Minimal improvement of the loss (or validation score) counted as progress.
    verbose : bool, default=False
        Print one line per epoch.
    warm_start : bool, default=False
        Start ``fit`` from the previous weights. As in ``MLPClassifier``, a warm ``fit``
        appends to ``loss_curve_``, keeps counting ``t_``, keeps ``best_loss_`` and the
        no-improvement count (so a model that stopped on a plateau stops again after one
        epoch unless the loss improves), and starts a fresh optimizer; ``n_iter_`` counts
        its own epochs. With early stopping a warm ``fit`` draws a new validation split and
        restarts the best validation score and the no-improvement count.
    momentum : float, default=0.9
        Momentum of 'sgd'.
    nesterovs_momentum : bool, default=True
        Nesterov momentum for 'sgd'.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data (stratified), stop when the
        validation accuracy stalls and restore the weights of the best epoch. With
        ``sample_weight`` the held-out rows keep their weights and the validation
        accuracy is weighted by them, as in ``MLPClassifier``.
    validation_fraction : float, default=0.1
        Held-out fraction for early stopping.
    n_iter_no_change : int, default=10
        Epochs without improvement by ``tol`` tolerated before stopping (or reducing the
        learning rate); training stops when the count exceeds it, as in scikit-learn.
    beta_1, beta_2, epsilon : float, default=0.9, 0.999, 1e-8
        Adam parameters.
    dropout : float, default=0.0
        Inverted-dropout rate of the hidden units during training.
    input_dropout : float, default=0.0
        Inverted-dropout rate of the input features during training: each feature of
        each sample is zeroed with this probability (and the rest scaled up), which
        keeps the network from relying on a few features.
    dtype : {'float32', 'float64'} or NumPy float type, default='float32'
        Compute dtype of weights and activations (``np.float32`` and ``np.float64`` are
        taken too).
    device : {'cpu', 'auto', 'gpu'}, default='cpu'
        Where training runs: 'cpu' on NumPy, 'auto' on a CUDA GPU when CuPy finds one,
        'gpu' on CuPy (the ``gpu-cuda12`` or ``gpu-cuda13`` extra) or a ValueError without
        it. Weights are kept as NumPy arrays and prediction falls back to the CPU without a
        GPU.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coefs_, intercepts_ : list of ndarray
        Weights and biases of every layer (NumPy, compute dtype).
    loss_ : float
        Loss of the last epoch.
    loss_curve_ : list of float
        Loss of every epoch.
    validation_scores_ : list of float or None
        Validation accuracy per epoch with early stopping, else None.
    best_loss_ : float or None
        Lowest epoch loss (None with early stopping).
    best_validation_score_ : float or None
        Best validation accuracy (None without early stopping).
    n_iter_ : int
        Epochs run by the last call of ``fit`` (1 after ``partial_fit``), as in
        ``MLPClassifier``.
    t_ : int
        Training samples seen, over all calls since the weights were initialised
        (zero-weight samples count).
    n_features_in_ : int
        Number of features.
    feature_names_in_ : ndarray of str
        Feature names, when ``X`` has them.
    n_outputs_ : int
        Output units.
    n_layers_ : int
        Layers including input and output.
    activation_ : str
        Activation of the hidden layers the weights were trained with, which prediction
        uses (``activation`` at the last fit; changing it afterwards changes nothing
        until the next fit).
    out_activation_ : str
        'softmax' or 'logistic'.
    """

    # what every fitted head holds (checked when a saved one is loaded)
    _fitted_attributes = (
        "coefs_",
        "intercepts_",
        "n_outputs_",
        "n_layers_",
        "activation_",
        "out_activation_",
        "classes_",
        "_label_binarizer",
    )

    def _encode_targets(self, y, incremental):
        check_classification_targets(y)
        refuse_multiclass_multioutput(y, type(self).__name__)
        if not hasattr(self, "classes_") or (not self.warm_start and not incremental):
            self._label_binarizer = LabelBinarizer().fit(y)
            self.classes_ = self._label_binarizer.classes_
        else:
            fitted = self._label_binarizer.y_type_.startswith("multilabel")
            if type_of_target(y).startswith("multilabel") != fitted:
                call = "partial_fit" if incremental else "warm_start=True"
                kinds = ("one label per sample", "several labels per sample (an indicator matrix)")
                raise ValueError(
                    f"{call} continues a network trained on {kinds[fitted]}; y holds "
                    f"{kinds[not fitted]}. Fit a new network (fit with warm_start=False, or "
                    "a new estimator) to change the kind of target."
                )
            classes = unique_labels(y)
            if self.warm_start and not incremental:
                if set(classes) != set(self.classes_):
                    raise ValueError(
                        "warm_start can only be used where `y` has the same classes as in "
                        f"the previous call to fit. Previously got {self.classes_}, `y` "
                        f"has {classes}."
                    )
            elif len(np.setdiff1d(classes, self.classes_)):
                raise ValueError(
                    f"`y` has classes not in `self.classes_`. `self.classes_` has "
                    f"{self.classes_}. 'y' has {classes}."
                )
        if len(self.classes_) < 2 and self._label_binarizer.y_type_ != "multilabel-indicator":
            raise ValueError(
                f"The training set has only one class ({self.classes_[0]!r}); a classifier "
                "needs samples of at least two classes."
            )
        n_columns = 1 if len(self.classes_) == 2 else len(self.classes_)
        # the one-hot targets (int64 from the binarizer), then their float copy
        check_fits(
            16.0 * len(y) * n_columns,
            f"The one-hot targets of {len(y)} samples and {len(self.classes_)} classes",
            "Use fewer classes (merge rare ones) or fewer samples; a label per sample that "
            "is unique is a regression target (DenseHeadRegressor).",
        )
        Y = self._label_binarizer.transform(y)
        multilabel = self._label_binarizer.y_type_.startswith("multilabel")
        return Y, (None if multilabel else y)

    def _loss_name(self, Y):
        if Y.shape[1] == 1 or self._label_binarizer.y_type_.startswith("multilabel"):
            return "binary_log_loss"
        return "log_loss"

    def _score_validation(self, network, X_val, Y_val, sample_weight=None):
        out = to_numpy(network.forward(X_val))
        if network.out_activation == "softmax":
            correct = out.argmax(axis=1) == Y_val.argmax(axis=1)
        else:
            correct = np.all((out > 0.5) == (Y_val > 0.5), axis=1)
        return float(np.average(correct, weights=sample_weight))

    def _target_matrix(self, y_val):
        unknown = np.setdiff1d(unique_labels(y_val), self.classes_)
        if len(unknown):
            raise ValueError(f"y_val has classes not seen in y: {unknown}.")
        return self._label_binarizer.transform(y_val)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None, sample_weight=None) -> Self:
        """Fit the classifier on features ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            Class labels (any hashable type), or a multilabel indicator matrix.
        X_val, y_val : array-like, optional
            Held-out data for early stopping (``early_stopping=True``) in place of a
            ``validation_fraction`` split of ``X``; its accuracy is unweighted.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples (not all zero), as in ``MLPClassifier``:
            each minibatch's loss is the weighted mean of the sample losses and its L2
            penalty is divided by the batch's total weight instead of its size. Pass it
            by keyword (it follows ``X_val`` and ``y_val`` here).

        Returns
        -------
        self
        """
        _refuse_weights_as_x_val(X_val, y_val, _num_rows(X))
        validation = None if X_val is None and y_val is None else (X_val, y_val)
        return self._fit(
            X, y, incremental=False, validation_data=validation, sample_weight=sample_weight
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None) -> Self:
        """Run one epoch over ``(X, y)``, continuing from the current state.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Labels.
        classes : array-like of shape (n_classes,), default=None
            All classes that will ever appear; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, as in :meth:`fit`. Pass it by keyword (``MLPClassifier`` has
            it before ``classes``).

        Returns
        -------
        self
        """
        # labels and classes are read on the host (scikit-learn's checks convert them)
        y, classes = for_module(y, np), for_module(classes, np)
        _refuse_weights_as_classes(classes, _num_rows(X), y)
        # a refused first call leaves no classes_ behind (the corrected call was refused
        # as naming other classes than the refused one)
        with _state_kept(self):
            if _check_partial_fit_first_call(self, classes):
                self._label_binarizer = LabelBinarizer()
                if type_of_target(y).startswith("multilabel"):
                    self._label_binarizer.fit(y)
                else:
                    self._label_binarizer.fit(classes)
            return self._fit(X, y, incremental=True, sample_weight=sample_weight)

    def predict(self, X) -> np.ndarray:
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_labels)
        """
        check_is_fitted(self)
        X = self._validate_X(X)
        y = self._forward(X)
        if self.n_outputs_ == 1:
            y = y.ravel()
        return self._label_binarizer.inverse_transform(y)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (float64).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self)
        X = self._validate_X(X)
        if self.out_activation_ == "softmax":
            return self._forward(X).astype(np.float64)
        return logistic_probabilities(to_numpy(self._forward(X, raw=True)))

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            From the logits (``log_softmax``, ``-log(1 + exp(-z))``): finite wherever they
            are, where the logarithm of a rounded probability would be ``-inf``.
        """
        check_is_fitted(self)
        X = self._validate_X(X)
        return log_probabilities(to_numpy(self._forward(X, raw=True)), self.out_activation_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


class DenseHeadRegressor(VersionedPickleMixin, HostScoreMixin, RegressorMixin, _BaseDenseHead):
    """Dense-network regressor trained on a feature matrix.

    A multilayer perceptron with identity output and squared-error loss (summed over
    outputs for multi-output targets). Parameters are those of
    :class:`sklearn.neural_network.MLPRegressor` (stochastic solvers) plus ``dropout``,
    ``input_dropout``, ``dtype`` and ``device``.

    Parameters
    ----------
    hidden_layer_sizes, activation, solver, alpha, batch_size, learning_rate, \
learning_rate_init, power_t, max_iter, shuffle, random_state, tol, verbose, warm_start, \
momentum, nesterovs_momentum, early_stopping, validation_fraction, n_iter_no_change, \
beta_1, beta_2, epsilon, dropout, input_dropout, dtype, device
        As for :class:`DenseHeadClassifier`, except that the early-stopping split is not
        stratified and its score is the R^2 (weighted by ``sample_weight`` on the split).

    Attributes
    ----------
    coefs_, intercepts_ : list of ndarray
        Weights and biases of every layer (NumPy, compute dtype).
    loss_, loss_curve_, validation_scores_, best_loss_, best_validation_score_
        As for :class:`DenseHeadClassifier` (validation score: R^2).
    n_iter_, t_, n_features_in_, feature_names_in_, n_outputs_, n_layers_, activation_
        As for :class:`DenseHeadClassifier`.
    out_activation_ : str
        'identity'.
    """

    # what every fitted head holds (checked when a saved one is loaded)
    _fitted_attributes = (
        "coefs_",
        "intercepts_",
        "n_outputs_",
        "n_layers_",
        "activation_",
        "out_activation_",
    )

    _y_dtype = "numeric"

    def _encode_targets(self, y, incremental):
        return (y.reshape(-1, 1) if y.ndim == 1 else y), None

    def _loss_name(self, Y):
        return "squared_error"

    def _score_validation(self, network, X_val, Y_val, sample_weight=None):
        prediction = to_numpy(network.forward(X_val))
        return float(r2_score(Y_val, prediction, sample_weight=sample_weight))

    def _check_validation_targets(self, Y_val, sample_weight, advice: str) -> None:
        """R^2 needs two held-out rows of positive weight and targets that vary over them
        (else scikit-learn's r2_score gives 0.0 whatever the fit, and training stopped
        after ``n_iter_no_change`` epochs without a word)."""
        Y_val = np.asarray(Y_val, dtype=np.float64)
        counted = Y_val if sample_weight is None else Y_val[np.asarray(sample_weight) > 0]
        if counted.shape[0] < 2 or not np.any(np.ptp(counted, axis=0) > 0):
            raise ValueError(
                f"The early-stopping score (R^2) of the held-out targets is undefined: "
                f"{counted.shape[0]} held-out row(s) of positive weight"
                + (", their targets all equal. " if counted.shape[0] >= 2 else ". ")
                + advice
            )

    def _target_matrix(self, y_val):
        y_val = np.asarray(y_val, dtype=np.float64)
        return y_val.reshape(-1, 1) if y_val.ndim == 1 else y_val

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None, sample_weight=None) -> Self:
        """Fit the regressor on features ``X`` and targets ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        X_val, y_val : array-like, optional
            Held-out data for early stopping (``early_stopping=True``) in place of a
            ``validation_fraction`` split of ``X``; its R^2 is unweighted.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative sample weights, as for :meth:`DenseHeadClassifier.fit`.

        Returns
        -------
        self
        """
        _refuse_weights_as_x_val(X_val, y_val, _num_rows(X))
        validation = None if X_val is None and y_val is None else (X_val, y_val)
        return self._fit(
            X, y, incremental=False, validation_data=validation, sample_weight=sample_weight
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None) -> Self:
        """Run one epoch over ``(X, y)``, continuing from the current state.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, as in :meth:`fit`.

        Returns
        -------
        self
        """
        return self._fit(X, y, incremental=True, sample_weight=sample_weight)

    def predict(self, X) -> np.ndarray:
        """Predict targets (float64).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        check_is_fitted(self)
        X = self._validate_X(X)
        y = self._forward(X).astype(np.float64)
        if y.shape[1] == 1:
            return y.ravel()
        return y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
