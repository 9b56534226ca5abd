"""Tests of lmu_sk.plotting (skipped without matplotlib)."""

from __future__ import annotations

import builtins
import types

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from lmu_sk import plotting  # noqa: E402


def labelled_lines(ax):
    return [line for line in ax.lines if not line.get_label().startswith("_")]


def assert_png(path):
    assert path.is_file() and path.stat().st_size > 1000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("kind", "n_axes"), [("both", 2), ("polynomials", 1), ("impulse_response", 1)]
)
def test_legendre_basis(tmp_path, kind, n_axes):
    path = tmp_path / "basis.png"
    figure = plotting.plot_legendre_basis(5, theta=40.0, kind=kind, path=path)
    assert isinstance(figure, Figure)
    assert len(figure.axes) == n_axes
    for ax in figure.axes:
        assert len(labelled_lines(ax)) == 5
    assert_png(path)


def test_legendre_basis_curves():
    figure = plotting.plot_legendre_basis(4, theta=50.0, n_steps=80)
    polynomials, response = figure.axes
    x, p3 = labelled_lines(polynomials)[3].get_data()
    r = x / 50.0
    np.testing.assert_allclose(p3, 20 * r**3 - 30 * r**2 + 12 * r - 1, atol=1e-12)
    lags, m0 = labelled_lines(response)[0].get_data()
    assert len(lags) == 80
    # The scaled first state is about 1 inside the window (it holds the window's mean).
    assert np.all(np.abs(m0[:40] - 1.0) < 0.2)


def test_legendre_basis_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        plotting.plot_legendre_basis(3, kind="spectrum")


def test_delay_decoding(tmp_path):
    path = tmp_path / "decoding.png"
    figure = plotting.plot_delay_decoding(
        order=12, theta=60.0, delays=[30, 60], n_steps=300, path=path
    )
    (ax,) = figure.axes
    lines = labelled_lines(ax)
    assert len(lines) == 1 + 2 * 2  # the input, then (true, decoded) for each delay
    t, truth = lines[3].get_data()
    _, decoded = lines[4].get_data()
    settled = t >= 60
    error = np.sqrt(
        np.mean((decoded[settled] - truth[settled]) ** 2) / np.mean(truth[settled] ** 2)
    )
    assert error < 0.2
    assert "NRMSE" in lines[4].get_label()
    assert_png(path)


def test_delay_decoding_of_a_given_signal():
    signal = np.sin(np.arange(200) / 10.0)
    figure = plotting.plot_delay_decoding(signal, order=8, theta=40.0)
    lines = labelled_lines(figure.axes[0])
    assert len(lines) == 3
    np.testing.assert_array_equal(lines[0].get_data()[1], signal)
    with pytest.raises(ValueError, match="1-D"):
        plotting.plot_delay_decoding(np.zeros((2, 5)))


def test_learning_curve_from_a_mapping(tmp_path):
    path = tmp_path / "curves.png"
    figure = plotting.plot_learning_curve({"loss": [3, 2, 1.5], "val": [2.5, 2, 1.8]}, path=path)
    (ax,) = figure.axes
    assert [line.get_label() for line in labelled_lines(ax)] == ["loss", "val"]
    np.testing.assert_array_equal(labelled_lines(ax)[0].get_data()[0], [1, 2, 3])
    assert_png(path)


def test_learning_curve_from_a_fitted_estimator():
    fitted = types.SimpleNamespace(loss_curve_=[1.0, 0.5, 0.4, 0.35], validation_scores_=[0.5] * 4)
    figure = plotting.plot_learning_curve(fitted)
    assert len(figure.axes) == 2  # loss on the left, validation score on a twin axis
    assert len(labelled_lines(figure.axes[0])) == 1 and len(labelled_lines(figure.axes[1])) == 1

    no_validation = types.SimpleNamespace(loss_curve_=[1.0, 0.5], validation_scores_=None)
    assert len(plotting.plot_learning_curve(no_validation).axes) == 1


def test_learning_curve_from_scikit_learn(tmp_path):
    from sklearn.datasets import load_digits
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import learning_curve

    X, y = load_digits(return_X_y=True)
    X, y = X[:200], y[:200]
    path = tmp_path / "sizes.png"
    figure = plotting.plot_learning_curve(
        RidgeClassifier(), X, y, cv=3, train_sizes=[0.3, 1.0], path=path
    )
    (ax,) = figure.axes
    lines = labelled_lines(ax)
    assert [line.get_label() for line in lines] == ["training score", "cross-validation score"]
    assert len(ax.collections) == 2  # one standard-deviation band per curve
    assert_png(path)

    precomputed = learning_curve(RidgeClassifier(), X, y, cv=3, train_sizes=[0.5, 1.0])
    figure = plotting.plot_learning_curve(precomputed)
    np.testing.assert_array_equal(labelled_lines(figure.axes[0])[0].get_data()[0], precomputed[0])


def test_learning_curve_rejects_what_it_cannot_plot():
    with pytest.raises(TypeError, match="loss_curve_"):
        plotting.plot_learning_curve(object())
    with pytest.raises(ValueError, match="both X and y"):
        plotting.plot_learning_curve(object(), X=np.zeros((3, 2)))


def test_missing_matplotlib_message(monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r"pip install 'lmu_sk\[plot\]'"):
        plotting.plot_legendre_basis(3)
