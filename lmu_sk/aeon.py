"""aeon estimators: LMU classification, regression and features as aeon collection estimators.

:class:`LMUAeonClassifier`, :class:`LMUAeonRegressor` and :class:`LMUAeonTransformer` are
:class:`aeon.classification.BaseClassifier`, :class:`aeon.regression.BaseRegressor` and
:class:`aeon.transformations.collection.BaseCollectionTransformer` subclasses;
:class:`LMUAeonEarlyClassifier` is an
:class:`aeon.classification.early_classification.BaseEarlyClassifier`. They take aeon
collections as they come (``(n_cases, n_channels, n_timepoints)`` arrays and lists of
``(n_channels, n_timepoints_i)`` arrays), keep every channel and every series' own length,
and hold the fitted lmu_sk estimator they wrap as ``estimator_``, so they work in aeon's
pipelines, benchmarking and estimator checks.

This module needs aeon (``pip install ".[aeon]"`` in a checkout of lmu_sk, or ``pip install
aeon``); ``import lmu_sk`` does not import it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import ClassVar

import numpy as np

from ._extras import install_hint
from ._input import nan_padded

try:
    from aeon.classification import BaseClassifier
    from aeon.classification.early_classification import BaseEarlyClassifier
    from aeon.regression import BaseRegressor
    from aeon.transformations.collection import BaseCollectionTransformer
    from aeon.utils.validation import check_n_jobs
except ImportError as error:  # pragma: no cover - exercised without aeon installed
    raise ImportError(
        f"lmu_sk.aeon needs aeon; install it: {install_hint('aeon')} (importing aeon "
        f"failed: {error})"
    ) from error

from ._decisions import harmonic_mean
from ._device import to_numpy
from ._threads import thread_limit
from .early import DEFAULT_CHECKPOINTS, LMUEarlyClassifier
from .estimators import LMUClassifier, LMURegressor
from .features import LMUFeatures
from .pooled import LMUPooledFeatures

__all__ = [
    "LMUAeonClassifier",
    "LMUAeonEarlyClassifier",
    "LMUAeonRegressor",
    "LMUAeonTransformer",
]

# What the three classes tell aeon: multivariate and unequal-length collections reach lmu_sk
# as they are (equal lengths as one 3-D array, unequal ones as a list of 2-D arrays).
_COMMON_TAGS = {
    "capability:multivariate": True,
    "capability:unequal_length": True,
    "capability:multithreading": True,
    "X_inner_type": ["np-list", "numpy3D"],
    # the Delay Network is a causal convolution with the Legendre impulse responses
    "algorithm_type": "convolution",
    "python_dependencies": "aeon",
}

_FEATURE_OUTPUTS = ("pooled", "final", "mean", "max")


@contextlib.contextmanager
def _errors_named(wrapper, wrapped: type) -> Iterator[None]:
    """The wrapped estimator's errors in the wrapper's name: its parameters are the
    wrapper's to the user ("The 'device' parameter of LMUAeonRegressor...", not of the
    ``LMURegressor`` inside)."""
    try:
        yield
    except (TypeError, ValueError) as error:
        message, name = str(error), wrapped.__name__
        wrapper_name = type(wrapper).__name__
        # a parameter given in lmu_params is named there (whichever class inside took it)
        named = message
        for given in getattr(wrapper, "lmu_params", None) or {}:
            named = re.sub(
                rf"'{re.escape(str(given))}' parameter of \w+",
                f"'{given}' parameter in lmu_params of {wrapper_name}",
                named,
            )
        if named == message and name not in message:
            raise
        message = named.replace(name, wrapper_name)
        try:
            renamed = type(error)(message)
        except Exception:  # an error type that takes other arguments: as it is
            raise error from None
        raise renamed from error


def _merged_params(owner, own: dict, lmu_class: type, aliases: dict | None = None) -> dict:
    """``own`` and ``owner.lmu_params`` as the parameters of ``lmu_class``, checked.

    ``aliases``: the owner's name of a parameter of ``own`` named otherwise in
    ``lmu_class`` (the transformer's ``theta`` is ``LMUPooledFeatures``' ``thetas``)."""
    extra = owner.lmu_params
    if extra is None:
        extra = {}
    if not isinstance(extra, dict):
        raise TypeError(
            f"lmu_params must be None or a dict of {lmu_class.__name__} parameters; got "
            f"{type(extra).__name__}."
        )
    name = type(owner).__name__
    # set through the owner's own parameters, even those left at None and not passed on
    reserved = set(own) | set(owner.get_params(deep=False)) - {"lmu_params"}
    valid = set(lmu_class().get_params(deep=False)) - reserved - {"channels_first"}
    for key in extra:
        if key == "channels_first":
            raise ValueError(
                f"lmu_params cannot set channels_first: {name} always passes aeon's "
                "(n_cases, n_channels, n_timepoints) layout, channels_first=True."
            )
        if key in reserved:
            own_name = (aliases or {}).get(key, key)
            raise ValueError(
                f"lmu_params sets {key!r}, which {name} sets through its own parameter "
                f"{own_name!r}; pass {name}({own_name}=...) instead."
            )
        if key not in valid:
            raise ValueError(
                f"lmu_params has {key!r}, which is not a parameter of "
                f"{lmu_class.__name__}; valid ones are {sorted(valid)}."
            )
    return {**own, **extra, "channels_first": True}


def _check_collection(X, name: str, unequal: bool = True) -> None:
    """Refuse a collection without series, or with a series of no time points, before
    aeon's checks (which fail on them with an IndexError or a NumPy reduction's error)."""
    if isinstance(X, np.ndarray):
        if X.ndim >= 1 and X.shape[0] == 0:
            raise ValueError(
                f"{name} got a collection of no series (shape {X.shape}); pass at least one."
            )
        if X.ndim >= 2 and X.shape[-1] == 0:
            raise ValueError(
                f"{name} got series of no time points (shape {X.shape}); every series "
                "needs at least one."
            )
        # NaN padding of unequal lengths, which aeon refuses as missing values, naming no
        # way through (the early classifier takes one length: aeon's message stands)
        padded = 0
        if unequal and X.ndim in (2, 3):  # (n_cases, [n_channels,] n_timepoints)
            padded = nan_padded(np.swapaxes(X, 1, 2) if X.ndim == 3 else X[:, :, None])
        if padded:
            way = (
                "[x[:, ~np.isnan(x).any(axis=0)] for x in X]"
                if X.ndim == 3
                else "[x[None, ~np.isnan(x)] for x in X]"
            )
            raise ValueError(
                f"{name} got a collection whose series end in NaN ({padded} of them) and "
                "hold none elsewhere: unequal lengths padded with NaN; pass the series at "
                f"their own lengths, a list of (n_channels, n_timepoints_i) arrays: {way}. "
                "Impute the values instead if they are missing data rather than padding."
            )
    elif isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError(f"{name} got an empty list of series; pass at least one.")
        for i, series in enumerate(X):
            shape = np.shape(series)
            if len(shape) == 0 or shape[-1] == 0:
                raise ValueError(
                    f"{name} got series {i} of shape {shape}, with no time points: every "
                    "series needs at least one; drop the empty ones."
                )


class _CheckedCollection:
    """Checks lmu_sk makes of a collection before aeon's own (``fit``, ``predict``,
    ``transform``: aeon preprocesses the collection first in each)."""

    def _preprocess_collection(self, X, *args, **kwargs):
        _check_collection(X, type(self).__name__, self.get_tag("capability:unequal_length"))
        return super()._preprocess_collection(X, *args, **kwargs)  # type: ignore[misc]


class _LMUAeonPredictor(_CheckedCollection):
    """The fitting and prediction shared by the classifier and the regressor."""

    _lmu_class: type

    def _own_params(self) -> dict:
        return {
            "order": self.order,
            "theta": self.theta,
            "feature_output": self.feature_output,
            "head": self.head,
            "alphas": self.alphas,
            "hidden_layer_sizes": self.hidden_layer_sizes,
            "max_iter": self.max_iter,
            "dtype": self.dtype,
            "device": self.device,
            "random_state": self.random_state,
        }

    def _fit(self, X, y):
        if self.feature_output == "sequence":  # LMURegressor's: one target per time point
            raise ValueError(
                f"{type(self).__name__} takes one target per series, so "
                "feature_output='sequence' (a target per time point) is not one of its "
                "choices: use 'auto', 'final', 'mean', 'max' or 'pooled', or "
                "lmu_sk.LMURegressor(feature_output='sequence') outside aeon."
            )
        self._n_jobs = check_n_jobs(self.n_jobs)
        params = _merged_params(self, self._own_params(), self._lmu_class)
        estimator = self._lmu_class(**params)
        with thread_limit(self._n_jobs), _errors_named(self, self._lmu_class):
            estimator.fit(X, y)
        self.estimator_ = estimator
        return self

    def _predict(self, X) -> np.ndarray:
        with thread_limit(self._n_jobs):
            return np.asarray(self.estimator_.predict(X))


class LMUAeonClassifier(_LMUAeonPredictor, BaseClassifier):
    """Legendre Memory Unit classifier for aeon collections.

    An :class:`aeon.classification.BaseClassifier` around :class:`lmu_sk.LMUClassifier`:
    Delay Network features of every channel, at each series' own length, and a closed-form
    ridge or dense head. Multivariate and unequal-length collections are taken as aeon
    holds them.

    Parameters
    ----------
    order : int, default=None
        Delay Network states per channel (per window and input for pooled features);
        ``None`` chooses from the training data, as :class:`lmu_sk.LMUClassifier` does.
    theta : float or sequence of float, default=None
        Delay Network window(s) in time points; ``None`` uses the training length.
    feature_output : {'auto', 'final', 'mean', 'max', 'pooled'}, default='auto'
        The features the head sees; 'auto' is 'pooled' for the ridge head and 'final'
        for the dense head.
    head : {'auto', 'dense', 'ridge'}, default='auto'
        A ridge classifier solved in closed form or a dense network; 'auto' is ridge up to
        100 000 training series.
    alphas : sequence of float, default=None
        Penalties the ridge head chooses from by leave-one-out cross-validation.
    hidden_layer_sizes : tuple of int, default=(100,)
        Hidden layers of the dense head.
    max_iter : int, default=200
        Epochs of the dense head.
    dtype : {'float32', 'float64'}, default='float32'
        Floating type of the features and the dense head.
    device : {'auto', 'cpu', 'gpu'}, default='auto'
        Where features and head are computed; 'auto' uses a GPU when CuPy finds one.
    random_state : int, RandomState instance or None, default=None
        Seed of the dense head's initialisation, shuffling and dropout.
    n_jobs : int, default=1
        CPU threads for the features and the linear algebra; ``-1`` uses all cores.
    lmu_params : dict, default=None
        Further :class:`lmu_sk.LMUClassifier` parameters, e.g. ``{"dropout": 0.1}``.

    Attributes
    ----------
    estimator_ : lmu_sk.LMUClassifier
        The fitted classifier (with ``channels_first=True``).
    classes_ : ndarray
        The class labels.
    n_classes_ : int
        The number of classes.

    See Also
    --------
    lmu_sk.LMUClassifier : the scikit-learn classifier this class wraps.
    LMUAeonTransformer : the features alone, for aeon pipelines.

    Examples
    --------
    >>> from aeon.datasets import load_basic_motions
    >>> from lmu_sk.aeon import LMUAeonClassifier
    >>> X_train, y_train = load_basic_motions(split="train")
    >>> X_test, y_test = load_basic_motions(split="test")
    >>> clf = LMUAeonClassifier().fit(X_train, y_train)
    >>> clf.score(X_test, y_test) > 0.8
    True
    """

    _tags: ClassVar[dict] = {**_COMMON_TAGS}
    _lmu_class = LMUClassifier

    def __init__(
        self,
        order: int | None = None,
        theta=None,
        feature_output: str = "auto",
        head: str = "auto",
        alphas=None,
        hidden_layer_sizes: tuple = (100,),
        max_iter: int = 200,
        dtype: str = "float32",
        device: str = "auto",
        random_state=None,
        n_jobs: int = 1,
        lmu_params: dict | None = None,
    ) -> None:
        self.order = order
        self.theta = theta
        self.feature_output = feature_output
        self.head = head
        self.alphas = alphas
        self.hidden_layer_sizes = hidden_layer_sizes
        self.max_iter = max_iter
        self.dtype = dtype
        self.device = device
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.lmu_params = lmu_params
        super().__init__()

    def _predict_proba(self, X) -> np.ndarray:
        if not hasattr(self.estimator_, "predict_proba"):
            return super()._predict_proba(X)  # aeon's one-hot rows of the predicted class
        with thread_limit(self._n_jobs):
            proba = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
        # the columns follow the wrapped classifier's classes_: put them in aeon's order
        out = np.zeros((proba.shape[0], self.n_classes_))
        out[:, np.searchsorted(self.classes_, self.estimator_.classes_)] = proba
        return out

    @classmethod
    def _get_test_params(cls, parameter_set: str = "default") -> dict | list[dict]:
        """Small settings for aeon's estimator checks: the ridge and the dense head.

        Parameters
        ----------
        parameter_set : str, default="default"
            Name of the parameter set; only "default" is defined.

        Returns
        -------
        list of dict
        """
        return [
            {"order": 4, "theta": [4.0, 12.0], "head": "ridge", "device": "cpu"},
            {
                "order": 4,
                "head": "dense",
                "hidden_layer_sizes": (8,),
                "device": "cpu",
                "random_state": 0,
                # stops after two epochs, as converged, without a ConvergenceWarning
                "lmu_params": {"tol": 1e9, "n_iter_no_change": 1},
            },
        ]


class LMUAeonRegressor(_LMUAeonPredictor, BaseRegressor):
    """Legendre Memory Unit regressor for aeon collections.

    An :class:`aeon.regression.BaseRegressor` around :class:`lmu_sk.LMURegressor`, one
    target per series. Multivariate and unequal-length collections are taken as aeon holds
    them.

    Parameters
    ----------
    order, theta, alphas, hidden_layer_sizes, max_iter, dtype, device, random_state, \
n_jobs
        As in :class:`LMUAeonClassifier`.
    feature_output : {'auto', 'final', 'mean', 'max', 'pooled'}, default='auto'
        The features the head sees; 'auto' is 'pooled' for the ridge head and 'final'
        for the dense head.
    head : {'auto', 'dense', 'ridge'}, default='auto'
        Ridge regression solved in closed form or a dense network with a linear output;
        'auto' is ridge up to 100 000 training series and the dense head beyond, as in
        :class:`lmu_sk.LMURegressor`.
    lmu_params : dict, default=None
        Further :class:`lmu_sk.LMURegressor` parameters, e.g. ``{"learning_rate_init":
        1e-2}``.

    Attributes
    ----------
    estimator_ : lmu_sk.LMURegressor
        The fitted regressor (with ``channels_first=True``).

    See Also
    --------
    lmu_sk.LMURegressor : the scikit-learn regressor this class wraps.

    Examples
    --------
    >>> from aeon.datasets import load_covid_3month
    >>> from lmu_sk.aeon import LMUAeonRegressor
    >>> X_train, y_train = load_covid_3month(split="train")
    >>> reg = LMUAeonRegressor(head="ridge").fit(X_train, y_train)
    >>> reg.predict(X_train[:3]).shape
    (3,)
    """

    _tags: ClassVar[dict] = {**_COMMON_TAGS}
    _lmu_class = LMURegressor

    def __init__(
        self,
        order: int | None = None,
        theta=None,
        feature_output: str = "auto",
        head: str = "auto",
        alphas=None,
        hidden_layer_sizes: tuple = (100,),
        max_iter: int = 200,
        dtype: str = "float32",
        device: str = "auto",
        random_state=None,
        n_jobs: int = 1,
        lmu_params: dict | None = None,
    ) -> None:
        self.order = order
        self.theta = theta
        self.feature_output = feature_output
        self.head = head
        self.alphas = alphas
        self.hidden_layer_sizes = hidden_layer_sizes
        self.max_iter = max_iter
        self.dtype = dtype
        self.device = device
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.lmu_params = lmu_params
        super().__init__()

    def _predict(self, X) -> np.ndarray:
        return super()._predict(X).reshape(-1)

    @classmethod
    def _get_test_params(cls, parameter_set: str = "default") -> dict | list[dict]:
        """Small settings for aeon's estimator checks: the ridge and the dense head.

        Parameters
        ----------
        parameter_set : str, default="default"
            Name of the parameter set; only "default" is defined.

        Returns
        -------
        list of dict
        """
        return [
            {"order": 4, "theta": [4.0, 12.0], "head": "ridge", "device": "cpu"},
            {
                "order": 4,
                "head": "dense",
                "hidden_layer_sizes": (8,),
                "device": "cpu",
                "random_state": 0,
                # stops after two epochs, as converged, without a ConvergenceWarning
                "lmu_params": {"tol": 1e9, "n_iter_no_change": 1},
            },
        ]


class LMUAeonTransformer(_CheckedCollection, BaseCollectionTransformer):
    """Legendre Memory Unit features of aeon collections, one row per series.

    An :class:`aeon.transformations.collection.BaseCollectionTransformer` around
    :class:`lmu_sk.LMUPooledFeatures` (``output='pooled'``) or :class:`lmu_sk.LMUFeatures`
    (the Delay Network state at each series' end, or averaged or maximised over time).
    Every channel keeps its own Delay Network and every series its own length; the output
    is a table of shape ``(n_cases, n_features)`` for any scikit-learn estimator.

    Parameters
    ----------
    output : {'pooled', 'final', 'mean', 'max'}, default='pooled'
        Multi-scale pooled features (:class:`lmu_sk.LMUPooledFeatures`) or the states of
        one Delay Network per channel (:class:`lmu_sk.LMUFeatures`).
    order : int, default=None
        Delay Network states per channel (per window and input when pooled); ``None``
        keeps the wrapped transformer's default.
    theta : float or sequence of float, default=None
        The window (``LMUFeatures.theta``) or windows (``LMUPooledFeatures.thetas``) in time
        points; ``None`` uses the training length.
    dtype : {None, 'float32', 'float64'}, default=None
        Floating type of the features; ``None`` keeps the input's.
    device : {'auto', 'cpu', 'gpu'}, default='auto'
        Where the features are computed; they are returned as NumPy arrays.
    n_jobs : int, default=1
        CPU threads; ``-1`` uses all cores.
    lmu_params : dict, default=None
        Further parameters of the wrapped transformer, e.g. ``{"n_biases": 8}``.

    Attributes
    ----------
    estimator_ : lmu_sk.LMUPooledFeatures or lmu_sk.LMUFeatures
        The fitted transformer (with ``channels_first=True``).

    See Also
    --------
    LMUAeonClassifier : these features with a ridge or dense head.

    Examples
    --------
    >>> from aeon.datasets import load_basic_motions
    >>> from lmu_sk.aeon import LMUAeonTransformer
    >>> X, y = load_basic_motions(split="train")
    >>> LMUAeonTransformer(order=8).fit_transform(X).shape[0]
    40
    """

    _tags: ClassVar[dict] = {
        **_COMMON_TAGS,
        "output_data_type": "Tabular",
        "fit_is_empty": False,
    }

    def __init__(
        self,
        output: str = "pooled",
        order: int | None = None,
        theta=None,
        dtype: str | None = None,
        device: str = "auto",
        n_jobs: int = 1,
        lmu_params: dict | None = None,
    ) -> None:
        self.output = output
        self.order = order
        self.theta = theta
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.lmu_params = lmu_params
        super().__init__()

    def _wrapped(self):
        if self.output not in _FEATURE_OUTPUTS:
            raise ValueError(f"Unknown output {self.output!r}; use one of {_FEATURE_OUTPUTS}.")
        pooled = self.output == "pooled"
        if not pooled and np.ndim(self.theta) > 0 and not isinstance(self.theta, str):
            what = "several windows" if np.size(self.theta) > 1 else "a window in a list"
            raise ValueError(
                f"theta={self.theta!r} ({what}) is for pooled features, output='pooled' "
                f"(the default); with output={self.output!r} the features are those of one "
                "window: pass one theta, a number."
            )
        lmu_class = LMUPooledFeatures if pooled else LMUFeatures
        own = {"dtype": self.dtype, "device": self.device}
        if not pooled:
            own["output"] = self.output
        own["thetas" if pooled else "theta"] = self.theta
        if self.order is not None:
            own["order"] = self.order
        params = _merged_params(self, own, lmu_class, aliases={"thetas": "theta"})
        return lmu_class(**params)

    def _fit(self, X, y=None):
        self._fit_transform(X, y, transform=False)
        return self

    def _transform(self, X, y=None) -> np.ndarray:
        with thread_limit(self._n_jobs):
            # (aeon takes NumPy: features asked to stay on a GPU, return_gpu_arrays in
            # lmu_params, come to the host)
            return to_numpy(self.estimator_.transform(X))

    def _fit_transform(self, X, y=None, transform: bool = True) -> np.ndarray | None:
        self._n_jobs = check_n_jobs(self.n_jobs)
        estimator = self._wrapped()
        with thread_limit(self._n_jobs), _errors_named(self, type(estimator)):
            Xt = estimator.fit_transform(X) if transform else estimator.fit(X)
        self.estimator_ = estimator
        return to_numpy(Xt) if transform else None

    @classmethod
    def _get_test_params(cls, parameter_set: str = "default") -> dict | list[dict]:
        """Small settings for aeon's estimator checks: pooled and final-state features.

        Parameters
        ----------
        parameter_set : str, default="default"
            Name of the parameter set; only "default" is defined.

        Returns
        -------
        list of dict
        """
        return [
            {"order": 4, "theta": [4.0, 12.0], "device": "cpu"},
            {"output": "final", "order": 4, "device": "cpu"},
        ]


#: The columns of :attr:`LMUAeonEarlyClassifier.state_info`.
STATE_INFO_COLUMNS = ("checkpoint", "consecutive", "class", "length")


class LMUAeonEarlyClassifier(_CheckedCollection, BaseEarlyClassifier):
    """Legendre Memory Unit early classifier for aeon collections.

    An :class:`aeon.classification.early_classification.BaseEarlyClassifier` around
    :class:`lmu_sk.LMUEarlyClassifier`: one classifier of pooled Delay Network features whose
    checkpoints (every twentieth of the training length by default) each have a ridge head
    calibrated for that length; a case is decided at the first checkpoint where its most
    probable class reaches the learned threshold at the learned number of checkpoints in a
    row. Multivariate collections are taken as aeon holds them.

    aeon's conventions: ``predict(X)`` returns ``(labels, decisions)`` for the series of
    ``X`` as seen so far (``X.shape[-1]`` time points), with label -1 (probabilities -1)
    for cases not decided yet; at the training length every case is decided (later time
    points are not read). ``update_predict`` and ``update_predict_proba`` continue from
    :attr:`state_info` with longer series of the cases still undecided (the decided ones
    removed, the order kept): they raise a ValueError for a number of cases other than the
    undecided ones or series that are not longer than before. ``score`` returns the
    harmonic mean of accuracy and ``1 - earliness``, the accuracy and the earliness
    (decision time points over the training length) of ``predict``.

    Series of unequal lengths are not taken here (as by aeon's TEASER): aeon's early
    classifiers read a collection as series seen up to a common time point. For unequal
    lengths, where each series' end decides what is left, use :class:`lmu_sk.LMUEarlyClassifier`.

    Parameters
    ----------
    checkpoints : int or sequence of float, default=20
        Where cases can be decided, as in :class:`lmu_sk.LMUEarlyClassifier`.
    cost : float or None, default=None
        ``None`` maximises the harmonic mean on the training series, a number ``>= 0``
        minimises ``(1 - accuracy) + cost * earliness``.
    order, theta, alphas, dtype, device, n_jobs
        As in :class:`LMUAeonClassifier` (the head is the ridge head).
    lmu_params : dict, default=None
        Further :class:`lmu_sk.LMUClassifier` parameters, e.g. ``{"class_weight":
        "balanced"}``.

    Attributes
    ----------
    estimator_ : lmu_sk.LMUEarlyClassifier
        The fitted early classifier (its classifier with ``channels_first=True``).
    classes_ : ndarray
    n_classes_ : int
    n_timepoints_ : int
        The training length.
    state_info : ndarray of shape (n_cases, 4), int
        After ``predict`` or an update, per case: the index of the latest checkpoint passed
        (-1 before the first), the consecutive checkpoints that agreed (at least
        ``estimator_.consecutive_`` once decided), the index of the class decided or of
        the latest estimate (before the first checkpoint: the most frequent training
        class, whose prior the probabilities are then), and the time points seen when
        decided or so far.

    See Also
    --------
    lmu_sk.LMUEarlyClassifier : the scikit-learn early classifier this class wraps.

    Examples
    --------
    >>> from aeon.datasets import load_gunpoint
    >>> from lmu_sk.aeon import LMUAeonEarlyClassifier
    >>> X_train, y_train = load_gunpoint(split="train")
    >>> X_test, y_test = load_gunpoint(split="test")
    >>> clf = LMUAeonEarlyClassifier().fit(X_train, y_train)
    >>> labels, decided = clf.predict(X_test[:, :, :50])  # the first third of every series
    >>> harmonic_mean, accuracy, earliness = clf.score(X_test, y_test)
    >>> bool(harmonic_mean > 0.7)
    True
    """

    _tags: ClassVar[dict] = {
        **_COMMON_TAGS,
        "capability:unequal_length": False,
        "X_inner_type": "numpy3D",
    }

    def __init__(
        self,
        checkpoints=DEFAULT_CHECKPOINTS,
        cost: float | None = None,
        order: int | None = None,
        theta=None,
        alphas=None,
        dtype: str = "float32",
        device: str = "auto",
        n_jobs: int = 1,
        lmu_params: dict | None = None,
    ) -> None:
        self.checkpoints = checkpoints
        self.cost = cost
        self.order = order
        self.theta = theta
        self.alphas = alphas
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.lmu_params = lmu_params
        super().__init__()

    def _fit(self, X, y):
        self._n_jobs = check_n_jobs(self.n_jobs)
        own = {
            "order": self.order,
            "theta": self.theta,
            "alphas": self.alphas,
            "dtype": self.dtype,
            "device": self.device,
            "n_jobs": self._n_jobs,
        }
        params = _merged_params(self, own, LMUClassifier)
        if params.get("head", "auto") not in ("auto", "ridge"):
            raise ValueError(
                f"{type(self).__name__} needs the ridge head, whose leave-one-out values "
                f"calibrate the checkpoints and choose the rule; lmu_params has "
                f"head={params['head']!r}. Drop 'head' from lmu_params (or set it to 'ridge')."
            )
        early = LMUEarlyClassifier(LMUClassifier(**params), self.checkpoints, self.cost)
        with _errors_named(self, LMUClassifier), _errors_named(self, LMUEarlyClassifier):
            self.estimator_ = early.fit(X, y)
        self.n_timepoints_ = int(early.n_features_in_)
        return self

    def _run(self, X, resume=None) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities (-1 rows for undecided cases) and decisions of ``X`` seen up to
        its length, continuing ``resume``; sets :attr:`state_info`."""
        early = self.estimator_
        U = early._checked(X)
        with thread_limit(self._n_jobs):
            decisions, _ = early._decisions(U, finish=False, resume=resume)
        seen = min(X.shape[-1], self.n_timepoints_)
        passed = int(np.searchsorted(early.checkpoints_, seen, side="right")) - 1
        decided = decisions.decided.copy()
        state = np.empty((len(decided), len(STATE_INFO_COLUMNS)), dtype=np.int64)
        state[:, 0] = passed
        state[:, 1] = np.where(
            decided, np.maximum(decisions.run, early.consecutive_), decisions.run
        )
        state[:, 2] = decisions.label
        state[:, 3] = np.where(decided, decisions.step, seen)
        self.state_info = state
        # aeon's column order: the sorted labels, as lmu_sk's
        proba = np.where(decided[:, None], decisions.proba, -1.0)
        return proba, decided

    def _predict_proba(self, X) -> tuple[np.ndarray, np.ndarray]:
        return self._run(X)

    def _update_predict_proba(self, X) -> tuple[np.ndarray, np.ndarray]:
        previous = self.state_info
        undecided = previous[previous[:, 1] < self.estimator_.consecutive_]
        if len(X) != len(undecided):
            raise ValueError(
                f"update_predict got {len(X)} case(s), but {len(undecided)} of the "
                f"{len(previous)} in state_info are undecided: pass the undecided cases "
                "only (the decided ones removed, the order kept), or reset_state_info() and "
                "predict for new cases."
            )
        seen = int(undecided[0, 3]) if len(undecided) else 0
        if X.shape[-1] <= seen:
            raise ValueError(
                f"update_predict needs longer series than before: {seen} time point(s) were "
                f"seen, X has {X.shape[-1]}. Pass the cases as they continue, or "
                "reset_state_info() and predict."
            )
        resume = (int(undecided[0, 0]) + 1, undecided[:, 1], undecided[:, 2])
        return self._run(X, resume)

    def _predict(self, X) -> tuple[np.ndarray, np.ndarray]:
        return self._labels(*self._predict_proba(X))

    def _update_predict(self, X) -> tuple[np.ndarray, np.ndarray]:
        return self._labels(*self._update_predict_proba(X))

    def _labels(self, proba: np.ndarray, decided: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """aeon's labels: the class decided, -1 where undecided (as TEASER's)."""
        labels = np.asarray(self.classes_)[proba.argmax(axis=1)]
        out = [label if d else -1 for label, d in zip(labels, decided, strict=True)]
        return np.array(out), decided

    def _score(self, X, y) -> tuple[float, float, float]:
        labels, decided = self._predict(X)
        right = decided & (labels == np.asarray(y))
        accuracy = float(np.mean(right))
        earliness = float(np.mean(self.state_info[:, 3] / self.n_timepoints_))
        return harmonic_mean(accuracy, earliness), accuracy, earliness

    @classmethod
    def _get_test_params(cls, parameter_set: str = "default") -> dict | list[dict]:
        """Small settings for aeon's estimator checks: four checkpoints, and a cost.

        Parameters
        ----------
        parameter_set : str, default="default"
            Name of the parameter set; only "default" is defined.

        Returns
        -------
        list of dict
        """
        return [
            {"order": 4, "theta": [4.0, 12.0], "device": "cpu", "checkpoints": 4},
            {"order": 4, "theta": [4.0, 12.0], "device": "cpu", "checkpoints": 4, "cost": 0.5},
        ]
