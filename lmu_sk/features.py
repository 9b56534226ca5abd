"""``LMUFeatures``: Delay Network states of whole datasets as a scikit-learn transformer."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _dask, engine
from ._device import device_key, for_module, get_array_module
from ._input import check_finite_result, check_output_container
from ._logging import get_logger
from ._memory import resolve_budget
from ._progress import ProgressBar
from ._transformer import SequenceTransformer
from ._typing import Result
from .dn import (
    check_system_fits,
    euler_instability,
    validate_order_theta,
    warn_if_euler_unstable,
)
from .engine import constants
from .streaming import DNStream

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["LMUFeatures", "default_order"]

#: ``order=None``: at most this many states per channel ...
_DEFAULT_MAX_ORDER = 128
#: ... and at most this many features over all channels
_DEFAULT_MAX_FEATURES = 2048


def default_order(n_steps: int, n_channels: int) -> int:
    """The order used when ``order=None``: ``min(n_steps, 128, 2048 // n_channels)``, >= 1."""
    return max(1, min(n_steps, _DEFAULT_MAX_ORDER, _DEFAULT_MAX_FEATURES // n_channels))


logger = get_logger(__name__)


class LMUFeatures(SequenceTransformer):
    """Legendre Memory Unit Delay Network features of sequences.

    Every channel of a sequence drives its own Delay Network (DN) of ``order`` states, a
    frozen linear system whose state is a Legendre-polynomial summary of the last ``theta``
    steps. Because it is linear, the states of a whole dataset are computed at once: final
    states as one matrix product with the reversed impulse response, all states by blocked
    matrix products or FFT convolution.

    Parameters
    ----------
    order : int or None, default=64
        Number of DN states per channel (Legendre coefficients). ``None`` chooses
        ``min(n_steps, 128, 2048 // n_channels)`` from the training data at ``fit`` (the
        composites' default; see :func:`default_order`).
    theta : float, default=None
        Window length in time steps. ``None`` uses the length of the training sequences
        (the longest one for sequences of different lengths), the papers' usual choice.
    discretizer : {'zoh', 'euler'}, default='zoh'
        Zero-order hold (exact for piecewise-constant input, always stable) or forward
        Euler (unstable for ``theta`` below about ``11 * order``; fit warns).
    output : {'final', 'sequence', 'mean', 'max'}, default='final'
        The state after each sequence's last step; the state after every step; or the
        states averaged or maximised over time.
    method : {'auto', 'gemm', 'fft', 'recurrence'}, default='auto'
        Route for all-state outputs: blocked GEMMs, FFT convolution or the compiled
        recurrence. 'auto' picks by a cost model. Final states are always one GEMM unless
        'recurrence' is asked for. The FFT's rounding is relative to a series' largest
        value rather than to each state's window, and its transforms sum up to ``n_fft**2``
        times that value: in float32 'auto' takes the blocked GEMMs instead, sample by
        sample, for the sequences whose largest value exceeds 1 000 times their median
        magnitude (a spike, or mostly zeros) or whose sums could overflow;
        ``method='fft'`` keeps it regardless.
    dtype : {None, 'float32', 'float64'}, default=None
        Compute and output dtype. ``None`` keeps float32 input as float32 and turns
        everything else into float64. The DN matrices are always built in float64.
    max_memory : int, float or str, default=None
        Working memory allowed besides the result, in bytes or as a string like ``'2GB'``;
        samples are processed in chunks that fit, within what the result leaves of the
        memory available. ``None`` allows half of the memory available when ``transform``
        runs.
    device : {'auto', 'cpu', 'gpu'}, default='auto'
        Where to compute: 'auto' uses a CUDA GPU when CuPy finds one and the CPU otherwise;
        'gpu' requires one (``pip install ".[gpu-cuda12]"`` or ``".[gpu-cuda13]"`` in the
        checkout).
    return_gpu_arrays : bool, default=False
        On the GPU, return CuPy arrays instead of NumPy arrays.
    channels_first : bool or None, default=None
        Layout of 3-D input. ``True``: ``(n_samples, n_channels, n_steps)`` as aeon and
        sktime hold it (``aeon.datasets.load_classification``), or a list of
        ``(n_channels, n_steps_i)`` arrays. ``None``: ``(n_samples, n_steps, n_channels)``,
        warning when a 3-D array has fewer steps than channels. ``False``: the same, silent.
    verbose : bool or int, default=False
        Show the progress of ``transform`` and ``fit_transform`` over the samples on
        standard error: a bar redrawn in place on a terminal, at most a line per tenth of
        the samples (or per 10 s) elsewhere. Results do not change. Dask arrays are
        computed lazily and show none (use ``dask.diagnostics.ProgressBar``). Route and
        chunk choices are logged at DEBUG level on the ``'lmu_sk'`` logger.

    n_jobs : int or None, default=None
        CPU threads of the compiled kernels (Numba) and of BLAS during ``fit``,
        ``transform`` and ``fit_transform``, restored afterwards. ``None`` keeps the
        libraries' own settings (all cores, unless ``NUMBA_NUM_THREADS`` or
        ``OMP_NUM_THREADS`` say otherwise); ``-1`` is all cores, ``-2`` all but one.
        Results do not depend on it beyond rounding. Dask arrays are computed later, on
        dask's threads or workers, and are not affected.

    Attributes
    ----------
    order_ : int
        The order used: ``order``, or the one chosen for ``order=None``.
    theta_ : float
        The window used.
    discretizer_ : str
        The discretizer of the fitted matrices (``transform`` and ``stream`` use it, not
        a ``discretizer`` set after fit).
    n_features_in_ : int
        Steps of the training sequences (the longest one for sequences of different
        lengths). Sequences of any length can be transformed: the DN is causal.
    n_channels_ : int
        Channels of the training sequences; transform needs the same number.
    n_steps_ : int
        Same as ``n_features_in_``.
    state_matrix_ : ndarray of shape (order, order)
        The discretized ``Abar``.
    input_matrix_ : ndarray of shape (order,)
        The discretized ``Bbar``.

    Notes
    -----
    Input is ``(n_samples, n_steps)`` for one channel or ``(n_samples, n_steps,
    n_channels)``, or a list of ``(n_steps_i,)`` / ``(n_steps_i, n_channels)`` arrays of
    different lengths. Data laid out as ``(n_samples, n_channels, n_steps)`` (aeon, sktime)
    is read with ``channels_first=True``. Feature ``k * order + i`` is state ``i`` of
    channel ``k``. For a list of sequences of different lengths, 'final' gives each
    sequence's state at its own end and 'sequence' returns a list of arrays. A
    ``dask.array.Array`` is fitted from its shape alone and transformed lazily, block by
    block of rows (:mod:`lmu_sk._dask`).

    Examples
    --------
    >>> import numpy as np
    >>> from lmu_sk import LMUFeatures
    >>> X = np.random.default_rng(0).standard_normal((5, 100))
    >>> LMUFeatures(order=8).fit_transform(X).shape
    (5, 8)
    """

    # what every fitted LMUFeatures holds (checked when a saved one is loaded)
    _fitted_attributes = (
        "order_",
        "theta_",
        "n_features_in_",
        "n_steps_",
        "n_channels_",
        "state_matrix_",
        "input_matrix_",
    )

    def __init__(
        self,
        order=64,
        theta=None,
        discretizer="zoh",
        output="final",
        method="auto",
        dtype=None,
        max_memory=None,
        device="auto",
        return_gpu_arrays=False,
        channels_first=None,
        verbose=False,
        n_jobs=None,
    ):
        self.order = order
        self.theta = theta
        self.discretizer = discretizer
        self.output = output
        self.method = method
        self.dtype = dtype
        self.max_memory = max_memory
        self.device = device
        self.return_gpu_arrays = return_gpu_arrays
        self.channels_first = channels_first
        self.verbose = verbose
        self.n_jobs = n_jobs

    _parameter_constraints: ClassVar[dict] = {
        **SequenceTransformer._parameter_constraints,
        "output": [StrOptions(set(engine.OUTPUTS))],
        "method": [StrOptions(set(engine.METHODS))],
    }
    _finite_input_first = False  # the features are checked instead (check_finite_result)

    def _checked_order_theta(self, n_steps: int, n_channels: int) -> tuple[int, float]:
        theta = float(n_steps) if self.theta is None else self.theta
        order = default_order(n_steps, n_channels) if self.order is None else self.order
        return validate_order_theta(order, theta)

    def _check_params(self, fitting: bool) -> None:
        if not fitting:  # the fitted order and theta are used; the parameters still checked
            self._checked_order_theta(self.n_steps_, self.n_channels_)

    def _check_container(self) -> None:
        """Refuse ``set_output`` to pandas for the 3-D 'sequence' features, clearly."""
        check_output_container(self, 3 if self.output == "sequence" else 2)

    def _fit_dask(self, X, y=None) -> Self:
        return _dask.fit_features(self, self._channels_last(X))

    def transform(self, X) -> Result:
        """Delay Network features of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps[, n_channels]) or list of sequences
            Any number of steps; the channels must match those seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_channels * order), or for ``output='sequence'``
        (n_samples, n_steps, n_channels * order) (a list of arrays for sequences of
        different lengths).
        """
        return super().transform(X)

    def _fit(self, U, y=None):
        if isinstance(U, list):
            n_steps, n_channels = max(len(u) for u in U), U[0].shape[1]
        else:
            n_steps, n_channels = U.shape[1], U.shape[2]
        self.order_, self.theta_ = self._checked_order_theta(n_steps, n_channels)
        self.discretizer_ = self.discretizer
        warn_if_euler_unstable(self.order_, self.theta_, self.discretizer_)
        self.n_features_in_ = n_steps
        self.n_steps_ = n_steps
        self.n_channels_ = n_channels
        # the matrices and their discretization's temporaries, within max_memory
        check_system_fits(self.order_, resolve_budget(self.max_memory))
        Abar, Bbar = constants.system(self.order_, self.theta_, self.discretizer_)
        if not (np.isfinite(Abar).all() and np.isfinite(Bbar).all()):
            raise ValueError(
                f"theta={self.theta_!r} is too small for order {self.order_}: the discretized "
                "Delay Network overflows. Use a window of at least one time step."
            )
        self.state_matrix_ = np.array(Abar)
        self.input_matrix_ = np.array(Bbar)
        return self

    @property
    def _fitted_discretizer(self) -> str:
        """The discretizer of the fitted matrices: ``discretizer_`` (a model saved before
        it was recorded: the ``discretizer`` parameter), whatever the parameter says now."""
        return self.__dict__.get("discretizer_", self.discretizer)

    def _features(self, U, return_gpu_arrays: bool, dtype=None, progress: bool = False):
        """Features of validated inputs ``U`` (in the compute dtype), checked to be finite.

        With ``progress`` a :class:`~lmu_sk._progress.ProgressBar` over the samples is
        shown on standard error.
        """
        order = self.order_
        budget = resolve_budget(self.max_memory)
        xp = get_array_module(self.device)
        logger.debug(
            "%s: device=%r runs on the %s", type(self).__name__, self.device, device_key(xp)[0]
        )
        U = for_module(U, xp)
        bar = ProgressBar(
            len(U), enabled=progress, unit="sequences", label=f"{type(self).__name__}: "
        )
        # NaN or infinite inputs, and states beyond the dtype, make non-finite features,
        # which check_finite_result reports clearly: NumPy's own warnings would only precede it
        with bar, np.errstate(over="ignore", invalid="ignore"):
            F = engine.features(
                U,
                order=order,
                theta=self.theta_,
                discretizer=self._fitted_discretizer,
                output=self.output,
                method=self.method,
                xp=xp,
                budget=budget,
                progress=bar.advance,
                return_device=return_gpu_arrays,
            )
        discretizer = self._fitted_discretizer
        check_finite_result(F, U, lambda: euler_instability(order, self.theta_, discretizer))
        return F

    def stream(self, n_streams: int = 1) -> DNStream:
        """A :class:`~lmu_sk.streaming.DNStream` of ``n_streams`` sequences, advanced one
        step or one chunk at a time; after ``t`` steps its ``transform()`` equals
        ``transform`` of the first ``t`` steps (for 'sequence', the last of them)."""
        return DNStream(self, n_streams)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names ``'c{k}_m{i}'``: state ``i`` of channel ``k``, in output order."""
        check_is_fitted(self)
        self._check_input_features(input_features)
        order = self.order_
        return np.asarray(
            [f"c{k}_m{i}" for k in range(self.n_channels_) for i in range(order)], dtype=object
        )
