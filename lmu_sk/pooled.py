"""``LMUPooledFeatures``: multi-scale Delay Network states pooled over time.

A time-series classifier needs to know *what happened* in a series, not only where it
ended. These features run Delay Networks of several windows over each series (and its first
difference) and summarise every state over time: the proportion of steps on which it
exceeds each of a few thresholds fitted on the training states, and its mean, maximum and
minimum. The pools are accumulated as the states are computed (:mod:`lmu_sk.engine`), so
memory is ``O(n_samples * n_features)``; the states of a dataset are never all held.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import _check_feature_names, check_is_fitted

from . import _dask, engine
from ._device import for_module, get_array_module, to_numpy
from ._input import as_sequences, channels_last, check_dtype_param, check_finite_result
from ._logging import get_logger
from ._memory import check_fits, format_bytes, resolve_budget
from ._persistence import VersionedPickleMixin
from ._progress import ProgressBar, check_verbose
from .dn import DISCRETIZERS, validate_order_theta, warn_if_euler_unstable

__all__ = ["LMUPooledFeatures", "default_thetas"]

logger = get_logger(__name__)

_POOL_NAMES = ("mean", "max", "min")
N_MOMENTS = len(_POOL_NAMES)
# Training states used to fit the biases: at most this many samples, and at most this many
# bytes of states per window.
_BIAS_STATE_BYTES = 32 * 1024**2
# ... and at most this many of their steps, evenly spaced, per state
_BIAS_MAX_STEPS = 8192
# fitting holds about this many arrays of the thresholds' size at once (np.quantile's
# results and their ascending copy; measured with tracemalloc: 2.1)
_THRESHOLD_COPIES = 2.5


def default_thetas(n_steps: int, n_windows: int = 6, finest: float = 1 / 32) -> np.ndarray:
    """``n_windows`` windows in geometric progression from ``finest * n_steps`` to ``n_steps``."""
    return float(n_steps) * np.geomspace(finest, 1.0, n_windows)


def _check_thetas(thetas) -> np.ndarray:
    values = np.atleast_1d(np.asarray(thetas, dtype=object))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"thetas must be a non-empty sequence of windows; got {thetas!r}.")
    return np.asarray([validate_order_theta(1, theta)[1] for theta in values])


def _check_count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


class LMUPooledFeatures(VersionedPickleMixin, TransformerMixin, BaseEstimator):
    """Delay Network states of several windows, pooled over time.

    Every channel (and, with ``difference``, its first difference) drives one Delay
    Network (DN) of ``order`` states per window in ``thetas``. Each state is summarised
    over the steps of its sequence by ``n_biases`` proportions of steps on which it exceeds
    a threshold (quantiles of the training states, fitted in ``fit``) and by its mean,
    maximum and minimum. This gives ``n_windows * n_inputs * order * (n_biases + 3)``
    features with ``n_inputs = n_channels * (2 if difference else 1)``.

    Parameters
    ----------
    order : int, default=8
        DN states per window and input.
    thetas : float or sequence of float, default=None
        Windows in time steps. ``None`` uses six windows from 1/32 of the training length
        to the whole of it, in powers of two.
    difference : bool, default=True
        Add the first difference of every channel (zero at the first step) as an input.
    stride : int, default=1
        Feed the Delay Networks the means of consecutive blocks of ``stride`` steps: about
        ``stride`` times faster on long series, at the cost of detail finer than ``stride``
        steps. Windows stay in steps of the original series.
    n_biases : int, default=4
        Thresholds per state for the proportion pools: the quantiles ``k / (n_biases + 1)``,
        ``k = 1 .. n_biases``, of the state over training steps.
    bias_samples : int, default=64
        At most this many training sequences (evenly spaced in the training set) provide
        the states the thresholds are fitted on, at most 8192 of their steps (evenly
        spaced) per state.
    discretizer : {'zoh', 'euler'}, default='zoh'
    dtype : {None, 'float32', 'float64'}, default=None
        Output dtype; ``None`` keeps float32 input as float32 and makes the rest float64.
        The states are accumulated in float64 on the CPU and in the input's dtype on a GPU.
    max_memory : int, float or str, default=None
        Working memory allowed besides the result (bytes or a string like ``'2GB'``);
        samples are processed in chunks that fit, in ``fit`` too, where the states the
        thresholds are fitted on are computed in windows of steps that fit (what is kept
        of them, at most 8192 per state and window, counts as the result). ``None``
        allows half of what is free.
    device : {'auto', 'cpu', 'gpu'}, default='auto'
        Where to compute: 'auto' uses a CUDA GPU when CuPy finds one.
    return_gpu_arrays : bool, default=False
        On the GPU, return CuPy arrays.
    channels_first : bool or None, default=None
        Layout of 3-D input. ``True``: ``(n_samples, n_channels, n_steps)`` as aeon and
        sktime hold it (``aeon.datasets.load_classification``), or a list of
        ``(n_channels, n_steps_i)`` arrays. ``None``: ``(n_samples, n_steps, n_channels)``,
        warning when a 3-D array has fewer steps than channels. ``False``: the same, silent.
    verbose : bool or int, default=False
        Show the progress of ``transform`` and ``fit_transform`` over the samples on
        standard error: a bar redrawn in place on a terminal, at most a line per tenth of
        the samples (or per 10 s) elsewhere. Results do not change.

    Attributes
    ----------
    thetas_ : ndarray of shape (n_windows,)
    biases_ : ndarray of shape (n_windows, n_inputs, order, n_biases)
        The thresholds; input ``k`` is channel ``k`` for ``k < n_channels_`` and the
        difference of channel ``k - n_channels_`` after them.
    n_features_in_ : int
        Steps of the training sequences (the longest one when lengths differ); any length
        can be transformed.
    n_channels_ : int
    n_features_out_ : int

    Notes
    -----
    Feature order: window, input, state, pool (the ``n_biases`` proportions, then mean, max,
    min); :meth:`get_feature_names_out` names them. Input layout as for
    :class:`~lmu_sk.features.LMUFeatures`.

    Examples
    --------
    >>> import numpy as np
    >>> from lmu_sk import LMUPooledFeatures
    >>> X = np.random.default_rng(0).standard_normal((5, 100))
    >>> LMUPooledFeatures(order=4, thetas=[10, 100]).fit_transform(X).shape
    (5, 112)
    """

    def __init__(
        self,
        order=8,
        thetas=None,
        difference=True,
        stride=1,
        n_biases=4,
        bias_samples=64,
        discretizer="zoh",
        dtype=None,
        max_memory=None,
        device="auto",
        return_gpu_arrays=False,
        channels_first=None,
        verbose=False,
    ):
        self.order = order
        self.thetas = thetas
        self.difference = difference
        self.stride = stride
        self.n_biases = n_biases
        self.bias_samples = bias_samples
        self.discretizer = discretizer
        self.dtype = dtype
        self.max_memory = max_memory
        self.device = device
        self.return_gpu_arrays = return_gpu_arrays
        self.channels_first = channels_first
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Choose the windows, build the Delay Networks and fit the thresholds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps[, n_channels]) or list of sequences
        y : ignored

        Returns
        -------
        self
        """
        if _dask.is_dask_array(X):
            # the thresholds come from a few evenly spaced sequences: gather just those
            _check_count(self.bias_samples, "bias_samples", 1)
            X = _dask.evenly_spaced_rows(X, self.bias_samples)
        U = self._validate_input(X, reset=True)
        n_steps = max(len(u) for u in U) if isinstance(U, list) else U.shape[1]
        n_channels = U[0].shape[1] if isinstance(U, list) else U.shape[2]
        order = _check_count(self.order, "order", 1)
        _check_count(self.n_biases, "n_biases (the number of quantile thresholds)", 1)
        _check_count(self.bias_samples, "bias_samples", 1)
        stride = _check_count(self.stride, "stride", 1)
        if self.discretizer not in DISCRETIZERS:
            raise ValueError(
                f"Unknown discretizer {self.discretizer!r}; use one of {DISCRETIZERS}."
            )
        if not isinstance(self.difference, (bool, np.bool_)):
            raise TypeError(f"difference must be True or False; got {self.difference!r}.")
        budget = resolve_budget(self.max_memory)
        get_array_module(self.device)
        check_verbose(self.verbose)
        thetas = self.thetas
        thetas = default_thetas(n_steps) if thetas is None else _check_thetas(thetas)
        self._check_memory(len(thetas), n_channels, order, budget)
        self.thetas_ = thetas
        self.stride_ = stride
        self.difference_ = bool(self.difference)
        for theta in self.thetas_:
            warn_if_euler_unstable(order, theta / stride, self.discretizer)
        systems = [
            engine.constants.system(order, theta / stride, self.discretizer)
            for theta in self.thetas_
        ]
        self.state_matrices_ = np.stack([A for A, _ in systems])
        self.input_matrices_ = np.stack([B for _, B in systems])
        self.n_features_in_ = n_steps
        self.n_channels_ = n_channels
        self.biases_ = self._fit_biases(U, budget)
        self.n_features_out_ = int(np.prod(self.biases_.shape[:3])) * (
            self.biases_.shape[3] + N_MOMENTS
        )
        return self

    def _channels_last(self, X):
        return channels_last(X, self.channels_first, type(self).__name__)

    def _validate_input(self, X, reset: bool):
        _check_feature_names(self, X, reset=reset)
        X = self._channels_last(X)
        return as_sequences(X, check_dtype_param(self.dtype), type(self).__name__, True)

    def _check_memory(self, n_windows: int, n_channels: int, order: int, budget: int) -> None:
        """Refuse, before allocating, thresholds and features that exceed ``max_memory``."""
        n_biases = int(self.n_biases)
        n_inputs = n_channels * (2 if self.difference else 1)
        thresholds = n_windows * n_inputs * order * n_biases * 8
        features = n_windows * n_inputs * order * (n_biases + N_MOMENTS) * 8
        # the thresholds while they are fitted, and one sample's float64 pools and features
        need = thresholds * _THRESHOLD_COPIES + 2 * features
        check_fits(
            need,
            f"{type(self).__name__} with n_biases={n_biases} ({n_windows} window(s) x "
            f"{n_inputs} input(s) x order {order} x {n_biases} thresholds, and "
            f"{format_bytes(features)} of features per sequence)",
            "Use fewer thresholds (n_biases of 4 to 16 is usual), fewer windows or a "
            "smaller order, or raise max_memory.",
            budget,
        )

    def _spec(self) -> engine.PooledSpec:
        """The fitted maps of the engine: windows in steps of the block means."""
        return engine.PooledSpec(
            order=int(self.state_matrices_.shape[1]),
            thetas=tuple(float(theta) / self.stride_ for theta in self.thetas_),
            discretizer=self.discretizer,
            stride=int(self.stride_),
            difference=bool(self.difference_),
        )

    def _fit_biases(self, U, budget: int) -> np.ndarray:
        """Quantiles over time of the states of a few evenly spaced training sequences.

        The states come window of steps by window of steps from the engine, which keeps
        only the evenly spaced ones the quantiles use: the working memory stays within
        ``max_memory`` however long the sequences.
        """
        U = to_numpy(U) if not isinstance(U, list) else U
        n_samples = len(U)
        order = int(self.order)
        n_windows = len(self.thetas_)
        n_inputs = self.n_channels_ * (2 if self.difference_ else 1)
        per_sample = 8 * (self.n_features_in_ // self.stride_ + 1) * n_inputs * order
        n_take = max(1, min(n_samples, int(self.bias_samples), _BIAS_STATE_BYTES // per_sample))
        take = np.unique(np.linspace(0, n_samples - 1, n_take).round().astype(int))
        # views of the taken sequences, not a copy
        taken = [U[i] for i in take]
        states = engine.sampled_states(taken, self._spec(), _BIAS_MAX_STEPS, budget=budget)
        levels = np.arange(1, self.n_biases + 1) / (self.n_biases + 1)
        biases = np.empty((n_windows, n_inputs, order, int(self.n_biases)))
        for w, steps in enumerate(states):  # steps: (n_kept, n_inputs * order)
            by_state = np.ascontiguousarray(steps.T)  # partitioned along contiguous rows
            quantiles = np.quantile(by_state, levels, axis=1).T.reshape(n_inputs, order, -1)
            biases[w] = np.maximum.accumulate(quantiles, axis=-1)  # ascending, as the kernel needs
        return biases

    # ------------------------------------------------------------------ transform
    def transform(self, X):
        """Pooled multi-scale Delay Network features of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps[, n_channels]) or list of sequences
            Any lengths; the channels must match those seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, ``n_features_out_``)
        """
        return self._transform(X, self.return_gpu_arrays)

    def _transform(self, X, return_gpu_arrays: bool, dtype=None):
        """:meth:`transform`; ``dtype`` is accepted for the estimators and not needed: the
        pools of every sequence are accumulated in float64 on their own."""
        check_is_fitted(self)
        if _dask.is_dask_array(X):
            return _dask.transform_features(self, self._channels_last(X), return_gpu_arrays, dtype)
        verbose = check_verbose(self.verbose)
        U = self._validate_input(X, reset=False)
        n_channels = U[0].shape[1] if isinstance(U, list) else U.shape[2]
        if n_channels != self.n_channels_:
            raise ValueError(
                f"X has {n_channels} channel(s) but {type(self).__name__} was fitted with "
                f"{self.n_channels_}; pass sequences with {self.n_channels_} channel(s) on "
                "the last axis, or fit again."
            )
        dtype = check_dtype_param(self.dtype) or (U[0].dtype if isinstance(U, list) else U.dtype)
        xp = get_array_module(self.device)
        U = for_module(U, xp)
        bar = ProgressBar(
            len(U), enabled=verbose, unit="sequences", label=f"{type(self).__name__}: "
        )
        with bar:
            out = engine.pooled_features(
                U,
                self._spec(),
                self.biases_,
                dtype=dtype,
                xp=xp,
                budget=resolve_budget(self.max_memory),
                progress=bar.advance,
                return_device=return_gpu_arrays,
            )
        check_finite_result(out, U)
        return out

    def stream(self, n_streams: int = 1):
        """A :class:`~lmu_sk.streaming.PooledStream` of ``n_streams`` sequences, advanced one
        step or one chunk at a time; after ``t`` steps its ``transform()`` equals
        :meth:`transform` of the first ``t`` steps."""
        from .streaming import PooledStream

        return PooledStream(self, n_streams)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names ``'w{w}_{input}_m{i}_{pool}'``: window, input (``c{k}`` a channel,
        ``d{k}`` its difference), state and pool (``p{k}`` a proportion, mean, max, min)."""
        check_is_fitted(self)
        n_windows, _, order, n_biases = self.biases_.shape
        inputs = [f"c{k}" for k in range(self.n_channels_)]
        if self.difference_:
            inputs += [f"d{k}" for k in range(self.n_channels_)]
        pools = [f"p{k}" for k in range(n_biases)] + list(_POOL_NAMES)
        return np.asarray(
            [
                f"w{w}_{name}_m{i}_{pool}"
                for w in range(n_windows)
                for name in inputs
                for i in range(order)
                for pool in pools
            ],
            dtype=object,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
