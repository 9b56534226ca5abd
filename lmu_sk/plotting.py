"""Figures of the Delay Network and of training (optional: ``pip install lmu_sk[plot]``).

Every function returns a :class:`matplotlib.figure.Figure` built without ``pyplot`` (so no
global figure state is touched and any backend, or none, works) and saves it as a PNG when
given ``path``. In a notebook the returned figure displays itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .dn import continuous_system, discretize, impulse_response, legendre_decoder

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_delay_decoding", "plot_learning_curve", "plot_legendre_basis"]

_BASIS_KINDS = ("both", "polynomials", "impulse_response")


def _new_figure(n_axes: int, figsize: tuple[float, float] | None):
    """A pyplot-free figure with ``n_axes`` axes side by side, and the list of axes."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            "lmu_sk.plotting needs matplotlib; install it with: pip install 'lmu_sk[plot]'"
        ) from exc
    if figsize is None:
        figsize = (5.0 * n_axes + 1.0, 4.0)
    figure = Figure(figsize=figsize, layout="constrained")
    axes = figure.subplots(1, n_axes, squeeze=False)[0]
    return figure, list(axes)


def _finish(figure: Figure, path: str | os.PathLike | None, dpi: int) -> Figure:
    if path is not None:
        figure.savefig(path, format="png", dpi=dpi)
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
        Save the figure there as a PNG.
    figsize : (float, float), optional
        Figure size in inches.
    dpi : int, default=100
        Resolution of the saved PNG.

    Returns
    -------
    figure : matplotlib.figure.Figure
        One axes per panel, one line per polynomial or state.
    """
    if kind not in _BASIS_KINDS:
        raise ValueError(f"kind must be one of {_BASIS_KINDS}; got {kind!r}.")
    panels = ["polynomials", "impulse_response"] if kind == "both" else [kind]
    figure, axes = _new_figure(len(panels), figsize)
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "polynomials":
            delays = np.linspace(0.0, theta, n_points)
            basis = legendre_decoder(order, delays, theta)
            for i in range(order):
                ax.plot(delays, basis[:, i], label=f"$P_{{{i}}}$")
            ax.set_xlabel("steps into the past, $\\theta'$")
            ax.set_ylabel("$P_i(\\theta' / \\theta)$")
            ax.set_title(f"Shifted Legendre polynomials over a window of {theta:g} steps")
        else:
            steps = int(np.ceil(1.5 * theta)) if n_steps is None else int(n_steps)
            Abar, Bbar = discretize(*continuous_system(order, theta), method=discretizer)
            response = impulse_response(Abar, Bbar, steps)
            scale = theta / (2 * np.arange(order) + 1)
            lags = np.arange(steps)
            for i in range(order):
                ax.plot(lags, response[:, i] * scale[i], label=f"$m_{{{i}}}$")
            ax.axvspan(0, theta, color="0.9", zorder=0)
            ax.set_xlabel("steps after a unit impulse")
            ax.set_ylabel("state $\\times\\ \\theta / (2i + 1)$")
            ax.set_title(f"Delay Network impulse response ({discretizer})")
        ax.axhline(0.0, color="0.6", linewidth=0.6, zorder=0)
        ax.legend(fontsize="small", ncol=2)
    return _finish(figure, path, dpi)


def _band_limited_signal(n_steps: int, cutoff: float, seed: int | None) -> np.ndarray:
    """A random sum of sines with frequencies up to ``cutoff`` cycles per step, unit RMS."""
    rng = np.random.default_rng(seed)
    n_components = 12
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
    the shifted Legendre polynomials (:func:`lmu_sk.dn.legendre_decoder`). The legend gives
    the NRMSE of each decoded copy after the first ``theta`` steps (before them the window
    reaches back before the signal's start).

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
        Save the figure there as a PNG.
    figsize : (float, float), optional
    dpi : int, default=100

    Returns
    -------
    figure : matplotlib.figure.Figure
        One axes with the input and, for every delay, the true and the decoded copy.
    """
    from .reference import dn_states

    if signal is None:
        signal = _band_limited_signal(n_steps, order / (4.0 * theta), seed)
    u = np.asarray(signal, dtype=np.float64)
    if u.ndim != 1 or u.size == 0:
        raise ValueError(f"signal must be a non-empty 1-D array; got shape {u.shape}.")
    delays = (theta,) if delays is None else tuple(float(d) for d in delays)
    decoder = legendre_decoder(order, delays, theta)
    states = np.asarray(dn_states(u[None, :], order, theta, discretizer, output="sequence"))
    decoded = states.reshape(u.size, order) @ decoder.T
    t = np.arange(u.size)
    settled = t >= theta

    figure, (ax,) = _new_figure(1, figsize if figsize is not None else (10.0, 4.0))
    ax.plot(t, u, color="0.75", linewidth=1.0, label="input $u(t)$")
    for k, delay in enumerate(delays):
        truth = np.interp(t - delay, t, u, left=0.0)
        (line,) = ax.plot(t, truth, linewidth=1.5, label=f"$u(t - {delay:g})$")
        error = decoded[settled, k] - truth[settled]
        power = np.mean(truth[settled] ** 2) if settled.any() else 0.0
        score = f", NRMSE {np.sqrt(np.mean(error**2) / power):.3f}" if power > 0 else ""
        ax.plot(
            t,
            decoded[:, k],
            linestyle="--",
            color=line.get_color(),
            label=f"decoded from $m_t${score}",
        )
    ax.axvspan(0, min(theta, u.size - 1), color="0.93", zorder=0)
    ax.set_xlabel("time step $t$")
    ax.set_title(f"Delay decoding, order {order}, $\\theta$ = {theta:g} ({discretizer})")
    ax.legend(fontsize="small")
    return _finish(figure, path, dpi)


def _epoch_curves(source: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    """(curves on the left axis, curves on a right axis) of per-epoch values, or None."""
    if isinstance(source, Mapping):
        return {str(k): np.asarray(v, dtype=float) for k, v in source.items()}, {}
    loss = getattr(source, "loss_curve_", getattr(source, "loss_curve", None))
    if loss is None:
        return None
    scores = getattr(source, "validation_scores_", getattr(source, "validation_scores", None))
    has_scores = scores is not None and len(scores) > 0
    right = {"validation score": np.asarray(scores, dtype=float)} if has_scores else {}
    return {"training loss": np.asarray(loss, dtype=float)}, right


def _size_curves(source: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(train_sizes, train_scores, test_scores) as returned by scikit-learn, or None."""
    if isinstance(source, (tuple, list)) and len(source) >= 3:
        sizes, train, test = (np.asarray(a, dtype=float) for a in source[:3])
        if sizes.ndim == 1 and train.ndim == 2 and test.ndim == 2:
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

    Returns
    -------
    figure : matplotlib.figure.Figure
    """
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
        for scores, label in ((train, "training score"), (test, "cross-validation score")):
            mean, std = scores.mean(axis=1), scores.std(axis=1)
            (line,) = ax.plot(sizes, mean, marker="o", label=label)
            ax.fill_between(sizes, mean - std, mean + std, color=line.get_color(), alpha=0.2)
        ax.set_xlabel("training samples")
        ax.set_ylabel("score")
        ax.set_title(title or "Learning curve")
        ax.legend()
        return _finish(figure, path, dpi)

    curves = _epoch_curves(estimator_or_curves)
    if curves is None:
        raise TypeError(
            "plot_learning_curve needs a fitted estimator with loss_curve_, a mapping of "
            "per-epoch curves, the (train_sizes, train_scores, test_scores) of "
            "sklearn.model_selection.learning_curve, or an estimator with X and y; got "
            f"{type(estimator_or_curves).__name__}."
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
        twin.set_ylabel("validation score")
        more_handles, more_labels = twin.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
        ax.set_ylabel("training loss")
    ax.set_xlabel("epoch")
    ax.set_title(title or "Training history")
    ax.legend(handles, labels)
    return _finish(figure, path, dpi)
