"""Figures of the Delay Network and of training (needs matplotlib: ``pip install ".[plot]"``).

Every function returns a :class:`matplotlib.figure.Figure` built without ``pyplot`` (so no
global figure state is touched and any backend, or none, works) and saves it when given
``path`` (in the format its suffix names, else PNG). In a notebook the returned figure
displays itself.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ._extras import install_hint
from ._memory import check_fits
from .datasets import nrmse
from .dn import (
    DISCRETIZERS,
    continuous_system,
    discrete_system,
    impulse_response,
    legendre_decoder,
    validate_order_theta,
    warn_if_euler_unstable,
)
from .reference import dn_states

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_delay_decoding", "plot_learning_curve", "plot_legendre_basis"]

_BASIS_KINDS = ("both", "polynomials", "impulse_response")

# plot_legendre_basis draws one line per state: beyond this, no line can be told apart
_MAX_BASIS_LINES = 100

# steps or points a figure computes: beyond this, far more than any figure can show
_MAX_POINTS = 10**8

# matplotlib's largest image side, in pixels
_MAX_PIXELS = 2**23

# plot_delay_decoding's default size, in inches (one wide axes)
_DECODING_FIGSIZE = (12.0, 4.0)


def _check_count(value: object, name: str, minimum: int, maximum: int = _MAX_POINTS) -> int:
    """``value`` as an ``int`` in ``[minimum, maximum]``, or an error naming ``name``.

    Integer-valued floats are accepted, as ``order`` is by the estimators.
    """
    if isinstance(value, (bool, np.bool_)):  # a flag, not a count (True was read as 1)
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}]; got {value}.")
    return int(value)


def _check_discretizer(discretizer: object) -> str:
    if discretizer not in DISCRETIZERS:
        raise ValueError(f"discretizer must be one of {DISCRETIZERS}; got {discretizer!r}.")
    return str(discretizer)


def _is_positive_real(value: object) -> bool:
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, (bool, np.bool_))
        and math.isfinite(value)
        and value > 0
    )


def _check_figure_options(
    figsize: object, dpi: object, default: tuple[float, float] | None = None, path: object = None
) -> None:
    """Check the size, the resolution and the ``path`` before any work is done
    (``figsize=None``: the ``default`` size, that of one axes where not given)."""
    _check_path(path)
    if figsize is not None:
        if isinstance(figsize, np.ndarray) and figsize.shape == (2,):
            figsize = figsize.tolist()  # (NumPy numbers are numbers too)
        if (
            isinstance(figsize, str)
            or not isinstance(figsize, Sequence)
            or len(figsize) != 2
            or not all(_is_positive_real(v) for v in figsize)
        ):
            raise ValueError(
                f"figsize must be (width, height) in inches, two positive finite numbers; "
                f"got {figsize!r}."
            )
    if not _is_positive_real(dpi):
        raise ValueError(f"dpi must be a positive, finite number of dots per inch; got {dpi!r}.")
    largest = max(figsize if figsize is not None else default or _default_figsize(1))
    if largest * dpi >= _MAX_PIXELS:
        size = f"figsize={figsize!r}" if figsize is not None else "the default figsize"
        raise ValueError(
            f"{size} at dpi={dpi!r} makes an image of {largest * dpi:.3g} pixels a side; "
            f"matplotlib draws fewer than {_MAX_PIXELS} (2**23). Lower dpi or figsize."
        )


def _is_fitted(estimator: object) -> bool:
    """Whether scikit-learn's ``check_is_fitted`` passes ``estimator``."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except (NotFittedError, TypeError):
        return False
    return True


def _image_format(path: str | bytes | os.PathLike) -> str:
    """The image format of ``path``'s suffix where matplotlib writes it (``.pdf``,
    ``.svg``, ...), else PNG (no suffix, or a dot in a name such as ``run.v2``)."""
    suffix = os.path.splitext(os.fsdecode(path))[1][1:].lower()
    from matplotlib.backend_bases import FigureCanvasBase

    return suffix if suffix in FigureCanvasBase.get_supported_filetypes() else "png"


def _check_path(path: object) -> None:
    """A file name (str, bytes or os.PathLike) whose folder exists, or a file object
    (``None``: nothing saved)."""
    if path is None or hasattr(path, "write"):
        return
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(
            "path must be a file name (str, bytes or os.PathLike) or a binary file object; "
            f"got {type(path).__name__} {path!r}."
        )
    folder = os.path.dirname(os.fsdecode(path)) or "."
    if not os.path.isdir(folder):
        raise ValueError(f"path {os.fsdecode(path)!r}: its folder {folder!r} does not exist.")


def _default_figsize(n_axes: int) -> tuple[float, float]:
    """The size of a figure of ``n_axes`` axes side by side, in inches."""
    return (5.0 * n_axes + 1.0, 4.0)


def _new_figure(n_axes: int, figsize: tuple[float, float] | None):
    """A pyplot-free figure with ``n_axes`` axes side by side, and the list of axes."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            f"lmu_sk.plotting needs matplotlib; install it: {install_hint('plot')}"
        ) from exc
    if figsize is None:
        figsize = _default_figsize(n_axes)
    figure = Figure(figsize=figsize, layout="constrained")
    axes = figure.subplots(1, n_axes, squeeze=False)[0]
    return figure, list(axes)


def _finish(figure: Figure, path: str | os.PathLike | None, dpi: int) -> Figure:
    if path is not None:
        kind = "png" if hasattr(path, "write") else _image_format(path)
        figure.savefig(path, format=kind, dpi=dpi)
    return figure


def plot_legendre_basis(
    order: int = 6,
    *,
    theta: float = 100.0,
    kind: str = "both",
    n_steps: int | None = None,
    discretizer: str = "zoh",
    n_points: int = 200,
    path: str | os.PathLike | None = None,
    figsize: tuple[float, float] | None = None,
    dpi: int = 100,
) -> Figure:
    """The shifted Legendre polynomials of the window and the Delay Network's impulse response.

    The state ``m_t[i]`` of a Delay Network of window ``theta`` holds the coefficient of the
    shifted Legendre polynomial ``P_i(theta' / theta)`` in the input's last ``theta`` steps
    (``theta'`` steps ago). Its impulse response shows the same shapes: state ``i`` ``k``
    steps after a unit impulse is about ``(2i + 1) / theta * P_i(k / theta)`` for ``k <=
    theta``, which the right panel plots scaled by ``theta / (2i + 1)`` so that the two panels
    can be compared; the match degrades for ``i`` close to ``order``, and past ``theta`` the
    response dies away.

    Parameters
    ----------
    order : int, default=6
        Number of polynomials / states shown.
    theta : float, default=100.0
        Window length in time steps.
    kind : {'both', 'polynomials', 'impulse_response'}, default='both'
        Which panels to draw.
    n_steps : int, optional
        Steps of impulse response shown; defaults to ``1.5 * theta``.
    discretizer : {'zoh', 'euler'}, default='zoh'
        Discretization of the Delay Network whose impulse response is shown.
    n_points : int, default=200
        Points at which the polynomials are evaluated.
    path : str or path-like, optional
        Save the figure there, in the format its suffix names where matplotlib writes
        it (``.pdf``, ``.svg``, ...), else (and to a file object) as a PNG.
    figsize : (float, float), optional
        Figure size in inches.
    dpi : int, default=100
        Resolution of the saved image.

    Returns
    -------
    figure : matplotlib.figure.Figure
        One axes per panel, one line per polynomial or state, each legend beside its
        panel; the shaded band of the impulse response marks the window ``[0, theta]``.

    Raises
    ------
    TypeError
        If ``order``, ``n_steps`` or ``n_points`` is not an integer, or ``theta`` not a
        number.
    ValueError
        If ``order`` is below 1 or above 100 (one line per state), ``theta`` is not
        positive and finite, ``kind`` or ``discretizer`` is unknown, ``n_steps < 1``,
        ``n_points < 2``, ``figsize`` or ``dpi`` is not positive, or they make an image
        beyond matplotlib's 2**23 pixels a side.
    lmu_sk._memory.MemoryBudgetError (a ValueError)
        If the polynomials' values and the impulse response would not fit in the memory
        available.

    Warns
    -----
    lmu_sk.dn.EulerInstabilityWarning
        With ``discretizer='euler'`` where the impulse response grows without bound.
    """
    order, theta = validate_order_theta(order, theta)
    if order > _MAX_BASIS_LINES:
        raise ValueError(
            f"plot_legendre_basis draws one line per state; order={order} is more than the "
            f"{_MAX_BASIS_LINES} a figure can show apart. Choose a smaller order."
        )
    if kind not in _BASIS_KINDS:
        raise ValueError(f"kind must be one of {_BASIS_KINDS}; got {kind!r}.")
    discretizer = _check_discretizer(discretizer)
    n_points = _check_count(n_points, "n_points", 2)
    panels = ["polynomials", "impulse_response"] if kind == "both" else [kind]
    if "impulse_response" in panels:
        if n_steps is None:
            steps = math.ceil(1.5 * theta)
            if steps > _MAX_POINTS:
                raise ValueError(
                    f"The default n_steps, 1.5 * theta = {1.5 * theta:.3g}, is over the "
                    f"{_MAX_POINTS:.0e} steps a figure can show; pass a smaller n_steps or theta."
                )
        else:
            steps = _check_count(n_steps, "n_steps", 1)
    _check_figure_options(figsize, dpi, _default_figsize(len(panels)), path)
    # the polynomials' values and the impulse response (and matplotlib's copies of each
    # line), before anything of that size exists
    points = n_points if "polynomials" in panels else 0
    points += steps if "impulse_response" in panels else 0
    check_fits(
        8.0 * order * points * 4,
        f"A Legendre basis figure of {points} points at order {order}",
        "Use fewer n_points or n_steps, or a smaller order.",
    )
    figure, axes = _new_figure(len(panels), figsize)
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "polynomials":
            delays = np.linspace(0.0, theta, n_points)
            basis = legendre_decoder(order, delays, theta)
            for i in range(order):
                ax.plot(delays, basis[:, i], label=f"$P_{{{i}}}$")
            ax.set_xlabel("steps into the past, $\\theta'$")
            ax.set_ylabel("$P_i(\\theta' / \\theta)$")
            ax.set_title(f"Shifted Legendre polynomials, window of {theta:g} steps")
        else:
            # (refused by name where theta overflows the continuous system)
            Abar, Bbar = discrete_system(order, theta, discretizer)
            warn_if_euler_unstable(order, theta, discretizer)  # the cause, not NumPy's overflow
            with np.errstate(over="ignore", invalid="ignore"):
                response = impulse_response(Abar, Bbar, steps)
            scale = theta / (2 * np.arange(order) + 1)
            lags = np.arange(steps)
            for i in range(order):
                ax.plot(lags, response[:, i] * scale[i], label=f"$m_{{{i}}}$")
            ax.axvspan(0, theta, color="0.9", zorder=0, label="window $[0, \\theta]$")
            ax.set_xlabel("steps after a unit impulse")
            ax.set_ylabel("state $\\times\\ \\theta / (2i + 1)$")
            ax.set_title(f"Delay Network impulse response ({discretizer})")
        ax.axhline(0.0, color="0.6", linewidth=0.6, zorder=0)
        _legend_beside(ax, ncol=1 if order <= 12 else 2)
    return _finish(figure, path, dpi)


def _scored(truth: np.ndarray, decoded: np.ndarray) -> str:
    """The label's NRMSE of ``decoded`` against ``truth`` (at any scale: see
    :func:`lmu_sk.datasets.nrmse`), or nothing where there is none (no settled step, a
    zero truth, or values an unstable discretization made infinite)."""
    if not truth.size or not np.any(truth) or not np.all(np.isfinite(decoded)):
        return ""
    return f", NRMSE {nrmse(truth, decoded):.3f}"


def _legend_beside(ax, **kwargs: Any) -> None:
    """The legend of ``ax`` to its right, outside the axes (constrained layout makes room)."""
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
        fontsize="small",
        **kwargs,
    )


_N_SINES = 12


def _band_limited_signal(n_steps: int, cutoff: float, seed: int | None) -> np.ndarray:
    """A random sum of sines with frequencies up to ``cutoff`` cycles per step, unit RMS."""
    rng = np.random.default_rng(seed)
    n_components = _N_SINES
    frequencies = rng.uniform(0.0, cutoff, n_components)
    phases = rng.uniform(0.0, 2.0 * np.pi, n_components)
    amplitudes = rng.standard_normal(n_components)
    t = np.arange(n_steps)[:, None]
    signal = np.sin(2.0 * np.pi * frequencies * t + phases) @ amplitudes
    return signal / np.sqrt(np.mean(signal**2))


def plot_delay_decoding(
    signal: ArrayLike | None = None,
    *,
    order: int = 12,
    theta: float = 100.0,
    delays: Sequence[float] | None = None,
    n_steps: int = 500,
    discretizer: str = "zoh",
    seed: int | None = 0,
    path: str | os.PathLike | None = None,
    figsize: tuple[float, float] | None = None,
    dpi: int = 100,
) -> Figure:
    """Delayed copies of a signal read out of the Delay Network state, next to the true ones.

    Runs the Delay Network over ``signal`` and decodes ``u(t - delay)`` from every state with
    the shifted Legendre polynomials (:func:`lmu_sk.dn.legendre_decoder`). The legend, beside
    the axes, gives the NRMSE of each decoded copy after the first ``theta`` steps; those
    steps, shaded as the warm-up, are not scored (the window reaches back before the
    signal's start).

    Parameters
    ----------
    signal : array-like of shape (n_steps,), optional
        The input. Defaults to a random band-limited signal of ``n_steps`` steps whose
        highest frequency, ``order / (4 theta)`` cycles per step, the DN can represent.
    order : int, default=12
        Delay Network order.
    theta : float, default=100.0
        Window length in time steps.
    delays : sequence of float, optional
        Delays to decode, each in ``[0, theta]``; defaults to ``(theta,)``.
    n_steps : int, default=500
        Length of the default signal.
    discretizer : {'zoh', 'euler'}, default='zoh'
    seed : int or None, default=0
        Seed of the default signal.
    path : str or path-like, optional
        Save the figure there, in the format its suffix names where matplotlib writes
        it (``.pdf``, ``.svg``, ...), else (and to a file object) as a PNG.
    figsize : (float, float), optional
    dpi : int, default=100

    Returns
    -------
    figure : matplotlib.figure.Figure
        One axes with the input and, for every delay, the true and the decoded copy.

    Raises
    ------
    TypeError
        If ``order``, ``n_steps`` or ``seed`` is not an integer, ``theta`` or a delay not a
        number, or ``signal`` does not hold real numbers.
    ValueError
        If ``order < 1``, ``seed < 0``, ``theta`` is not positive and finite, a delay lies outside
        ``[0, theta]``, ``delays`` is empty, ``signal`` is not a non-empty finite 1-D
        array, ``n_steps < 1``, ``discretizer`` is unknown, or ``figsize`` or ``dpi`` is
        not positive.
    lmu_sk._memory.MemoryBudgetError (a ValueError)
        If the states of every step would not fit in the memory available.
    """
    order, theta = validate_order_theta(order, theta)
    discretizer = _check_discretizer(discretizer)
    delays = _check_delays(delays, theta)
    _check_figure_options(figsize, dpi, _DECODING_FIGSIZE, path)
    if seed is not None and (
        isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or seed < 0
    ):
        raise (ValueError if isinstance(seed, numbers.Integral) else TypeError)(
            f"seed must be None or a non-negative integer; got {seed!r}."
        )
    if signal is None:
        n_steps = _check_count(n_steps, "n_steps", 1)
    else:
        signal = np.asarray(signal)
        if signal.dtype.kind not in "biuf":
            raise TypeError(f"signal must hold real numbers; got dtype {signal.dtype}.")
        if signal.ndim != 1 or signal.size == 0:
            raise ValueError(f"signal must be a non-empty 1-D array; got shape {signal.shape}.")
        n_steps = signal.size
    # the Delay Network itself (checks its own size), then the states of every step and
    # the default signal's sines, before anything of that size exists
    continuous_system(order, theta)
    check_fits(
        8.0 * n_steps * (3 * order + 2 * _N_SINES + 4 * len(delays) + 4),
        f"A delay-decoding figure of {n_steps} steps at order {order}",
        "Use a shorter signal or a smaller order.",
    )
    if signal is None:
        signal = _band_limited_signal(n_steps, order / (4.0 * theta), seed)
    u = np.asarray(signal, dtype=np.float64)
    if not np.all(np.isfinite(u)):
        raise ValueError("signal must be finite (no NaN or infinity).")
    decoder = legendre_decoder(order, delays, theta)
    warn_if_euler_unstable(order, theta, discretizer)  # the cause, not NumPy's overflow
    with np.errstate(over="ignore", invalid="ignore"):
        states = np.asarray(dn_states(u[None, :], order, theta, discretizer, output="sequence"))
        decoded = states.reshape(u.size, order) @ decoder.T
    t = np.arange(u.size)
    settled = t >= theta

    figure, (ax,) = _new_figure(1, figsize if figsize is not None else _DECODING_FIGSIZE)
    ax.plot(t, u, color="0.75", linewidth=1.0, label="input $u(t)$")
    for k, delay in enumerate(delays):
        truth = np.interp(t - delay, t, u, left=0.0)
        (line,) = ax.plot(t, truth, linewidth=1.5, label=f"$u(t - {delay:g})$")
        score = _scored(truth[settled], decoded[settled, k])
        ax.plot(
            t,
            decoded[:, k],
            linestyle="--",
            color=line.get_color(),
            label=f"decoded from $m_t${score}",
        )
    ax.axvspan(
        0,
        min(theta, u.size - 1),
        color="0.9",
        zorder=0,
        label="warm-up, $t < \\theta$ (not scored)",
    )
    ax.set_xlabel("time step $t$")
    ax.set_ylabel("signal")
    ax.set_title(f"Delay decoding, order {order}, $\\theta$ = {theta:g} ({discretizer})")
    _legend_beside(ax)
    return _finish(figure, path, dpi)


def _check_delays(delays: object, theta: float) -> tuple[float, ...]:
    """The delays to decode as floats, each in ``[0, theta]``; ``(theta,)`` for None."""
    if delays is None:
        return (theta,)
    if isinstance(delays, (str, bytes)) or not isinstance(delays, (Sequence, np.ndarray)):
        raise TypeError(f"delays must be a sequence of numbers of steps; got {delays!r}.")
    checked = []
    for delay in np.ravel(np.asarray(delays, dtype=object)):
        if isinstance(delay, (bool, np.bool_)) or not isinstance(delay, numbers.Real):
            raise TypeError(f"delays must be numbers of steps; got {delay!r}.")
        if not 0 <= delay <= theta:  # False for NaN too
            raise ValueError(f"delays must lie in [0, theta={theta:g}]; got {delay!r}.")
        checked.append(float(delay))
    if not checked:
        raise ValueError("delays must hold at least one delay (or be None for theta).")
    return tuple(checked)


def _real_curve(values: Any, name: str) -> np.ndarray:
    """One curve as a non-empty 1-D float array, or an error naming ``name``."""
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"The curve {name!r} must hold numbers; got dtype {array.dtype}.")
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"The curve {name!r} must be a non-empty 1-D sequence (one value per epoch); "
            f"got shape {array.shape}."
        )
    return array.astype(float)


def _default_score_name(estimator: Any, scoring: Any = None) -> str:
    """What a score of ``estimator`` measures, for axis labels."""
    if isinstance(scoring, str):
        return scoring
    if scoring is not None:
        return "score"
    from sklearn.base import BaseEstimator, is_classifier, is_regressor

    if isinstance(estimator, BaseEstimator):
        if is_classifier(estimator):
            return "accuracy"
        if is_regressor(estimator):
            return "$R^2$"
    return "score"


def _epoch_curves(
    source: Any, score_name: str
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    """(curves on the left axis, curves on a right axis) of per-epoch values, or None."""
    if isinstance(source, Mapping):
        if not source:
            raise ValueError("The mapping of curves is empty; pass at least one curve.")
        return {str(k): _real_curve(v, str(k)) for k, v in source.items()}, {}
    loss = getattr(source, "loss_curve_", getattr(source, "loss_curve", None))
    if loss is None:
        return None
    scores = getattr(source, "validation_scores_", getattr(source, "validation_scores", None))
    has_scores = scores is not None and len(scores) > 0
    name = f"validation {score_name}"
    right = {name: _real_curve(scores, name)} if has_scores else {}
    return {"training loss": _real_curve(loss, "training loss")}, right


def _size_curves(source: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(train_sizes, train_scores, test_scores) as returned by scikit-learn, or None."""
    if isinstance(source, (tuple, list)) and len(source) >= 3:
        try:
            sizes, train, test = (np.asarray(a, dtype=float) for a in source[:3])
        except (TypeError, ValueError):
            return None
        if sizes.ndim == 1 and train.ndim == 2 and test.ndim == 2:
            if not (train.shape[1] > 0 and test.shape[1] > 0):
                raise ValueError(
                    "train_scores and test_scores need at least one fold (column); got "
                    f"shapes {train.shape} and {test.shape}."
                )
            if not (sizes.size > 0 and train.shape[0] == test.shape[0] == sizes.size):
                raise ValueError(
                    "train_scores and test_scores need one row per training size; got "
                    f"{sizes.size} sizes and score arrays of shapes {train.shape} and "
                    f"{test.shape}."
                )
            return sizes, train, test
    return None


def plot_learning_curve(
    estimator_or_curves: Any,
    X: ArrayLike | None = None,
    y: ArrayLike | None = None,
    *,
    train_sizes: ArrayLike = (0.1, 0.325, 0.55, 0.775, 1.0),
    cv: Any = 5,
    scoring: Any = None,
    n_jobs: int | None = None,
    score_name: str | None = None,
    title: str | None = None,
    path: str | os.PathLike | None = None,
    figsize: tuple[float, float] | None = None,
    dpi: int = 100,
) -> Figure:
    """Training progress, per epoch or per training-set size.

    ``estimator_or_curves`` may be:

    - a fitted estimator with ``loss_curve_`` (and optionally ``validation_scores_``), or a
      training history with ``loss_curve`` / ``validation_scores``: loss per epoch, and the
      validation score per epoch on a second y axis;
    - a mapping ``name -> per-epoch values``: one line each;
    - the tuple ``(train_sizes, train_scores, test_scores)`` returned by
      :func:`sklearn.model_selection.learning_curve`: mean scores against the number of
      training samples, with a band of one standard deviation over the folds;
    - an estimator together with ``X`` and ``y``: that learning curve is computed first
      (``train_sizes``, ``cv``, ``scoring`` and ``n_jobs`` are passed on).

    The legend sits below the axes, clear of the curves.

    Parameters
    ----------
    estimator_or_curves : estimator, training history, mapping or tuple
        What to plot, as listed above.
    X, y : array-like, optional
        Data for computing a learning curve of an estimator.
    train_sizes, cv, scoring, n_jobs
        Passed to :func:`sklearn.model_selection.learning_curve`.
    score_name : str, optional
        What the scores measure, for the axis labels and legend. Defaults to the
        ``scoring`` string when one is given, else ``'accuracy'`` for a classifier and
        ``'$R^2$'`` for a regressor (their default scores), else ``'score'``.
    title : str, optional
        Title of the axes.
    path : str or path-like, optional
        Save the figure there, in the format its suffix names where matplotlib writes
        it (``.pdf``, ``.svg``, ...), else (and to a file object) as a PNG.
    figsize : (float, float), optional
        Figure size in inches.
    dpi : int, default=100
        Resolution of the saved image.

    Returns
    -------
    figure : matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``estimator_or_curves`` is none of the above, or a curve holds no numbers.
    ValueError
        If only one of ``X`` and ``y`` is given, a curve is empty or not 1-D, the score
        arrays do not match the training sizes, or ``figsize`` or ``dpi`` is not positive.
    """
    _check_figure_options(figsize, dpi, path=path)
    if score_name is None:
        score_name = _default_score_name(estimator_or_curves, scoring)
    if X is not None or y is not None:
        if X is None or y is None:
            raise ValueError("Pass both X and y to compute a learning curve, or neither.")
        from sklearn.model_selection import learning_curve

        sizes, train, test = learning_curve(
            estimator_or_curves,
            X,
            y,
            train_sizes=np.asarray(train_sizes),
            cv=cv,
            scoring=scoring,
            n_jobs=n_jobs,
        )
        size_curves = (np.asarray(sizes, dtype=float), train, test)
    else:
        size_curves = _size_curves(estimator_or_curves)

    if size_curves is not None:
        sizes, train, test = size_curves
        figure, (ax,) = _new_figure(1, figsize)
        from matplotlib.patches import Patch

        for scores, label in ((train, "training"), (test, "cross-validation")):
            mean, std = scores.mean(axis=1), scores.std(axis=1)
            (line,) = ax.plot(sizes, mean, marker="o", label=f"{label} {score_name}")
            ax.fill_between(sizes, mean - std, mean + std, color=line.get_color(), alpha=0.2)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Patch(facecolor="0.5", alpha=0.3))
        labels.append("shaded: $\\pm$1 std over the folds")
        ax.set_xlabel("training samples")
        ax.set_ylabel(score_name)
        ax.set_title(title or "Learning curve")
        _legend_below(figure, handles, labels)
        return _finish(figure, path, dpi)

    curves = _epoch_curves(estimator_or_curves, score_name)
    if curves is None:
        why = "."
        if hasattr(estimator_or_curves, "fit"):
            why = (
                " fitted without per-epoch losses (a closed-form head): pass X and y to plot "
                "its learning curve over training sizes."
            )
            if not _is_fitted(estimator_or_curves):
                why = (
                    " that is not fitted: fit it first (a dense head records per-epoch "
                    "losses), or pass X and y to plot its learning curve over training sizes."
                )
        raise TypeError(
            "plot_learning_curve needs a fitted estimator with loss_curve_, a mapping of "
            "per-epoch curves, the (train_sizes, train_scores, test_scores) of "
            "sklearn.model_selection.learning_curve, or an estimator with X and y; got "
            f"{type(estimator_or_curves).__name__}{why}"
        )
    left, right = curves
    figure, (ax,) = _new_figure(1, figsize)
    for label, values in left.items():
        ax.plot(np.arange(1, values.size + 1), values, label=label)
    handles, labels = ax.get_legend_handles_labels()
    if right:
        twin = ax.twinx()
        for label, values in right.items():
            twin.plot(np.arange(1, values.size + 1), values, color="C1", label=label)
        twin.set_ylabel(f"validation {score_name}")
        more_handles, more_labels = twin.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
        ax.set_ylabel("training loss")
    ax.set_xlabel("epoch")
    ax.set_title(title or "Training history")
    _legend_below(figure, handles, labels)
    return _finish(figure, path, dpi)


def _legend_below(figure: Figure, handles: list, labels: list) -> None:
    """One legend for the figure, below its axes (constrained layout makes room).

    As many columns (up to three) as fit in the width of the figure.
    """
    for ncol in range(min(len(labels), 3), 0, -1):
        legend = figure.legend(
            handles, labels, loc="outside lower center", ncol=ncol, fontsize="small"
        )
        if ncol == 1 or legend.get_window_extent().width <= 0.98 * figure.bbox.width:
            return
        legend.remove()
