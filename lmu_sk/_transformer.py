"""The template of the package's transformers of sequences (``LMUFeatures``,
``LMUPooledFeatures``): parameters, input checks, the dask and device routes.

A transformer implements :meth:`SequenceTransformer._fit` (fit on validated sequences),
:meth:`SequenceTransformer._features` (the features of validated sequences) and its own
checks of the parameters the template does not know; the template validates ``X`` once
on every path (``fit``, ``fit_transform``, ``transform``, and the composites' fit, which
asks for both at once through :meth:`SequenceTransformer._fit_transform`).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sklearn import get_config
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _dask
from ._device import DEVICES, array_module_of, get_array_module, resolve_device
from ._input import (
    WIDER_DTYPE,
    as_sequences,
    channels_last,
    check_channel_names,
    check_dtype_param,
    check_step_names,
    from_nested,
)
from ._memory import resolve_budget
from ._persistence import VersionedPickleMixin
from ._progress import StepLog, check_verbose, verbosity
from ._sample_weight import check_sample_weight
from ._threads import limits_threads
from ._typing import Result
from .dn import DISCRETIZERS
from .kernels._jit import compile_notices

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["SequenceTransformer"]


def _refuse_dask_weights(sample_weight) -> None:
    if sample_weight is not None:
        raise ValueError(
            "sample_weight is not supported for dask arrays: compute X into memory "
            "(X.compute()), or leave the sequences of weight 0 out of it."
        )


class SequenceTransformer(VersionedPickleMixin, TransformerMixin, BaseEstimator):
    """Fit and transform sequences: the shell both transformers share.

    Parameters named in :attr:`_parameter_constraints` are checked by scikit-learn's
    parameter validation at ``fit``, ``fit_transform`` and ``transform`` (parameters set
    after ``fit`` are checked too); ``dtype`` and ``max_memory`` by their own checks, and
    each transformer checks the rest in :meth:`_check_params`.
    """

    _parameter_constraints: ClassVar[dict] = {
        "discretizer": [StrOptions(set(DISCRETIZERS))],
        "device": [StrOptions(set(DEVICES))],
        "return_gpu_arrays": ["boolean"],
        "channels_first": ["boolean", None],
        "verbose": ["verbose"],
    }
    #: Whether ``transform`` refuses NaN and infinity in ``X`` before computing (otherwise
    #: the features are checked, which checks ``X`` too); ``fit`` always refuses them.
    _finite_input_first: ClassVar[bool] = True
    #: How the advice for input beyond the dtype's range ends (``_input.WIDER_DTYPE``).
    _wider_dtype: ClassVar[str] = WIDER_DTYPE

    # ------------------------------------------------------------------ to implement
    def _fit(self, U, y=None) -> Self:  # pragma: no cover - abstract
        """Fit on the validated sequences ``U`` (and the target ``y``, where the
        transformer uses one); return ``self``."""
        raise NotImplementedError

    def _features(self, U, return_gpu_arrays: bool, dtype, progress: bool):  # pragma: no cover
        """The features of the validated sequences ``U``, checked to be finite."""
        raise NotImplementedError

    def _check_params(self, fitting: bool) -> None:
        """The transformer's own checks of its parameters (at transform, of those the
        fitted transformer still reads)."""

    def _check_container(self) -> None:
        """Refuse an output container (``set_output``) the features cannot fill, clearly."""

    def _check_device_container(self) -> None:
        """Refuse ``set_output`` to a DataFrame for features kept on a GPU
        (``return_gpu_arrays=True`` where the device resolves to a GPU), clearly: pandas and
        polars hold host memory, and would fail converting the CuPy array."""
        if not self.return_gpu_arrays:
            return
        config = getattr(self, "_sklearn_output_config", {}).get("transform")
        if config is None:
            config = get_config().get("transform_output", "default")
        if config in ("default", None) or resolve_device(self.device) != "gpu":
            return
        raise ValueError(
            f"{type(self).__name__}(return_gpu_arrays=True) keeps the features on the GPU "
            f"as CuPy arrays, which a {config} DataFrame cannot hold, but set_output asks "
            f"for {config!r} output. Use return_gpu_arrays=False for a DataFrame, or "
            "set_output(transform='default') for CuPy arrays."
        )

    def _input_dtype(self, dtype):
        """The dtype ``X`` is validated into, given the dtype asked for (or None)."""
        return check_dtype_param(self.dtype if dtype is None else dtype)

    # ------------------------------------------------------------------ the template
    def _checked_params(self, fitting: bool) -> None:
        self._validate_params()  # type: ignore[attr-defined]
        check_dtype_param(self.dtype)
        resolve_budget(self.max_memory)
        self._check_params(fitting)

    def _channels_last(self, X, reset: bool = True):
        return channels_last(
            X, self.channels_first, type(self).__name__, None if reset else self._layout_settled()
        )

    def _layout_settled(self) -> int | None:
        """The fitted channel count where the fit settles the layout (its sequences had
        at least as many steps as channels: no sign of aeon's layout read channels last),
        else ``None`` (prediction warns again of a layout the fit was warned of)."""
        channels = self.__dict__.get("n_channels_")
        steps = self.__dict__.get("n_features_in_")
        if channels is None or steps is None or steps < channels:
            return None
        return int(channels)

    def _validate_input(self, X, reset: bool, check_finite: bool, dtype=None):
        """``X`` validated once: sktime's nested DataFrames read, feature names, layout,
        dtype and, with ``check_finite``, NaN and infinity."""
        check_channel_names(self, X, reset)
        X = from_nested(X, self.channels_first)
        check_step_names(self, X, reset)
        X = self._channels_last(X, reset)
        return as_sequences(
            X, self._input_dtype(dtype), type(self).__name__, check_finite, self._wider_dtype
        )

    def _check_input_features(self, input_features) -> None:
        """scikit-learn's rule for ``get_feature_names_out(input_features)``: where given,
        they are the names seen by ``fit`` (``feature_names_in_``; the channels'
        ``channel_names_in_`` of an sktime nested DataFrame, as ``ColumnTransformer``
        passes the columns it selected), or as many as ``n_features_in_`` where it saw
        none. The names out do not depend on them (they
        name channels, windows and states, not steps)."""
        if input_features is None:
            return
        names = np.asarray(input_features, dtype=object)
        channels = getattr(self, "channel_names_in_", None)
        if channels is not None:  # an sktime nested DataFrame's columns: its channels
            if not np.array_equal(names, channels):
                raise ValueError(
                    f"input_features is not equal to channel_names_in_ of "
                    f"{type(self).__name__} (the {len(channels)} columns of the nested "
                    "DataFrame seen by fit, one channel each)."
                )
            return
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is not None and not np.array_equal(names, fitted):
            raise ValueError(
                f"input_features is not equal to feature_names_in_ of {type(self).__name__} "
                f"(the {len(fitted)} column names seen by fit)."
            )
        # (or one per channel: a ColumnTransformer's generated names of a nested DataFrame's
        # columns that are not strings, whose names were not kept)
        channels = self.__dict__.get("n_channels_")
        if fitted is None and len(names) not in (self.n_features_in_, channels):
            raise ValueError(
                f"input_features should have length equal to the number of features seen by "
                f"fit ({self.n_features_in_}), or of channels ({channels}), got {len(names)}."
            )

    def _check_channels(self, U) -> None:
        n_channels = U[0].shape[1] if isinstance(U, list) else U.shape[2]
        if n_channels != self.n_channels_:
            where = (
                "axis 1 (channels_first=True: (n_samples, n_channels, n_steps))"
                if self.channels_first
                else "the last axis"
            )
            raise ValueError(
                f"X has {n_channels} channel(s) but {type(self).__name__} was fitted with "
                f"{self.n_channels_}; pass sequences with {self.n_channels_} channel(s) on "
                f"{where}, or fit again."
            )

    def _fit_validated(self, X, check_finite: bool = True, dtype=None, y=None, sample_weight=None):
        """Fit on ``X`` (not a dask array), validated once, leaving out the sequences of
        weight 0; return all of it validated."""
        U = self._validate_input(X, reset=True, check_finite=check_finite, dtype=dtype)
        get_array_module(self.device)  # 'gpu' without one fails here
        weights = check_sample_weight(sample_weight, len(U))
        if weights is None or weights.all():
            rows, targets = U, y
        else:
            targets = self._fit_targets(y, len(U))
            kept = np.flatnonzero(weights)
            if isinstance(U, (list, np.ndarray)):
                rows = [U[i] for i in kept]  # (views: no copy of X)
            else:  # (a GPU's array: its rows gathered there)
                rows = U[array_module_of(U).asarray(kept)]
            targets = None if targets is None else _safe_indexing(targets, kept)
        with self._compile_notices():
            self._fit(rows, targets)
        return U

    def _compile_notices(self):
        """With ``verbose``, a line on standard error for each compiled loop compiled
        meanwhile (its first call with new argument types: seconds, once), so that a first
        call does not wait without a word."""
        level = verbosity(self.verbose)
        if level < 1:
            return nullcontext()
        return compile_notices(StepLog(f"{type(self).__name__}: ", level).step)

    def _fit_targets(self, y, n_samples: int):
        """``y`` checked against the ``n_samples`` sequences, for a fit that reads it, or
        ``None`` (the base transformer reads no targets)."""
        return None

    @limits_threads
    def fit(self, X, y=None, sample_weight=None) -> Self:
        """Check the parameters and ``X`` and fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps[, n_channels]) or list of sequences
        y : array-like of shape (n_samples,), optional
            Used only by :class:`~lmu_sk.LMUPooledFeatures` to screen many channels
            (its ``channels``), a dask array too; ignored otherwise.
        sample_weight : array-like of shape (n_samples,), optional
            A sequence of weight 0 takes no part in the fit, as if left out (the window
            where ``theta`` is fitted, the thresholds and the screening of the pooled
            features); the fit reads no other weight. Not for dask arrays.

        Returns
        -------
        self
        """
        self._checked_params(fitting=True)
        if _dask.is_dask_array(X):
            _refuse_dask_weights(sample_weight)
            return self._fit_dask(X, y)
        self._fit_validated(X, y=y, sample_weight=sample_weight)
        return self

    def _fit_dask(self, X, y=None) -> Self:  # pragma: no cover - abstract
        """Fit on the dask array ``X`` (laid out as given); ``y`` as for :meth:`fit`, a
        NumPy or a dask array."""
        raise NotImplementedError

    @limits_threads
    def fit_transform(self, X, y=None, sample_weight=None) -> Result:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Fit (``y`` and ``sample_weight`` as for :meth:`fit`) and return the features of
        every sequence of ``X``, validating ``X`` once.

        Returns
        -------
        See :meth:`transform`.
        """
        self._check_container()
        self._check_device_container()
        return self._fit_transform(X, self.return_gpu_arrays, y=y, sample_weight=sample_weight)

    def _fit_transform(self, X, return_gpu_arrays: bool, dtype=None, y=None, sample_weight=None):
        """:meth:`fit_transform` for the composites: in ``dtype`` where given, CuPy arrays
        when computed on a GPU and asked to; ``X`` validated once."""
        if _dask.is_dask_array(X):
            _refuse_dask_weights(sample_weight)
            return self.fit(X, y)._transform(X, return_gpu_arrays, dtype)
        self._checked_params(fitting=True)
        U = self._fit_validated(X, self._finite_input_first, dtype, y, sample_weight)
        with self._compile_notices():
            return self._features(U, return_gpu_arrays, dtype, check_verbose(self.verbose))

    @limits_threads
    def transform(self, X) -> Result:
        """The features of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps[, n_channels]) or list of sequences
            Any number of steps; the channels must match those seen in ``fit``.
        """
        self._check_container()
        self._check_device_container()
        return self._transform(X, self.return_gpu_arrays)

    def _transform(self, X, return_gpu_arrays: bool, dtype=None, reduce=None):
        """:meth:`transform`, returning CuPy arrays when computed on a GPU and asked to;
        ``dtype`` overrides the dtype (the estimators predict in float64). ``reduce``, a
        map of feature rows to rows (a model's predictions), returns its rows instead of
        the features (see :meth:`_reduced_features`; not for dask arrays)."""
        check_is_fitted(self)
        self._checked_params(fitting=False)
        if _dask.is_dask_array(X):
            X = self._channels_last(X, reset=False)
            return _dask.transform_features(self, X, return_gpu_arrays, dtype)
        U = self._validate_input(X, False, self._finite_input_first, dtype)
        self._check_channels(U)
        progress = check_verbose(self.verbose)
        with self._compile_notices():
            if reduce is not None:
                return self._reduced_features(U, return_gpu_arrays, dtype, progress, reduce)
            return self._features(U, return_gpu_arrays, dtype, progress)

    def _reduced_features(self, U, return_gpu_arrays: bool, dtype, progress: bool, reduce):
        """``reduce`` of the features of ``U``: here of all of them at once; a transformer
        whose features come in chunks reduces chunk by chunk."""
        return reduce(self._features(U, return_gpu_arrays, dtype, progress))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        # float input keeps its dtype, unless a dtype is asked for: then that one only
        try:
            asked = check_dtype_param(self.dtype)
        except ValueError:  # (an invalid dtype: refused by fit, not here)
            asked = None
        tags.transformer_tags.preserves_dtype = (
            ["float64", "float32"] if asked is None else [asked.name]
        )
        tags.requires_fit = True
        return tags
