"""Tests of lmu_sk.plotting (skipped without matplotlib)."""

from __future__ import annotations

import builtins
import os
import types
import warnings

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
    # a classifier's default score is its accuracy, and the labels say so
    assert [line.get_label() for line in lines] == [
        "training accuracy",
        "cross-validation accuracy",
    ]
    assert ax.get_ylabel() == "accuracy"
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
    with pytest.raises(ImportError, match=r'pip install "\.\[plot\]" .* pip install matplotlib'):
        plotting.plot_legendre_basis(3)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("function", "kwargs", "error", "match"),
    [
        ("plot_delay_decoding", {"theta": -1}, ValueError, "theta must be a positive"),
        ("plot_delay_decoding", {"theta": np.inf}, ValueError, "theta must be a positive"),
        ("plot_delay_decoding", {"order": np.nan}, TypeError, "order must be an integer"),
        ("plot_delay_decoding", {"order": 0}, ValueError, "order must be an integer >= 1"),
        ("plot_delay_decoding", {"delays": [np.nan]}, ValueError, r"delays must lie in \[0"),
        ("plot_delay_decoding", {"delays": [150.0]}, ValueError, r"delays must lie in \[0"),
        ("plot_delay_decoding", {"delays": []}, ValueError, "at least one delay"),
        ("plot_delay_decoding", {"delays": 50.0}, TypeError, "delays must be a sequence"),
        ("plot_delay_decoding", {"delays": ["a"]}, TypeError, "delays must be numbers"),
        ("plot_delay_decoding", {"n_steps": 2.5}, TypeError, "n_steps must be an integer"),
        ("plot_delay_decoding", {"n_steps": 0}, ValueError, "n_steps must be an integer in"),
        ("plot_delay_decoding", {"n_steps": 10**12}, ValueError, "n_steps"),
        ("plot_delay_decoding", {"signal": [1.0, np.nan]}, ValueError, "signal must be finite"),
        ("plot_delay_decoding", {"signal": ["a", "b"]}, TypeError, "real numbers"),
        ("plot_delay_decoding", {"discretizer": "rk4"}, ValueError, "discretizer must be"),
        ("plot_delay_decoding", {"figsize": (0, 4)}, ValueError, "figsize"),
        ("plot_delay_decoding", {"dpi": np.nan}, ValueError, "dpi must be a positive"),
        # the Delay Network's own memory check, before minutes of work
        ("plot_delay_decoding", {"order": 10**6}, ValueError, "would need"),
        ("plot_legendre_basis", {"order": np.nan}, TypeError, "order must be an integer"),
        ("plot_legendre_basis", {"theta": 0.0}, ValueError, "theta must be a positive"),
        ("plot_legendre_basis", {"order": 10**6}, ValueError, "one line per state"),
        ("plot_legendre_basis", {"n_steps": np.nan}, TypeError, "n_steps must be an integer"),
        ("plot_legendre_basis", {"n_steps": -5}, ValueError, "n_steps must be an integer in"),
        ("plot_legendre_basis", {"n_points": 1}, ValueError, "n_points must be an integer in"),
        ("plot_legendre_basis", {"n_points": 10**12}, ValueError, "n_points"),
        ("plot_legendre_basis", {"theta": 1e300}, ValueError, "default n_steps"),
        # a theta that overflows the continuous system: named (a raw OverflowError before)
        ("plot_legendre_basis", {"theta": 1e-310, "n_steps": 8}, ValueError, "too small"),
        ("plot_legendre_basis", {"discretizer": "rk4"}, ValueError, "discretizer must be"),
        ("plot_legendre_basis", {"dpi": -1}, ValueError, "dpi must be a positive"),
    ],
)
def test_plot_parameters_are_validated(function, kwargs, error, match):
    with pytest.raises(error, match=match):
        getattr(plotting, function)(**kwargs)


@pytest.mark.parametrize(
    ("curves", "error", "match"),
    [
        ({}, ValueError, "empty"),
        ({"loss": [[1.0, 2.0], [3.0, 4.0]]}, ValueError, "'loss' must be a non-empty 1-D"),
        ({"loss": []}, ValueError, "'loss' must be a non-empty 1-D"),
        ({"loss": ["x"]}, TypeError, "'loss' must hold numbers"),
        (types.SimpleNamespace(loss_curve_=[]), ValueError, "'training loss'"),
        ((np.arange(3), np.ones((2, 3)), np.ones((3, 3))), ValueError, "one row per"),
    ],
)
def test_learning_curve_rejects_malformed_curves(curves, error, match):
    with pytest.raises(error, match=match):
        plotting.plot_learning_curve(curves)


# ---------------------------------------------------------------------------- layout
def _learning_history():
    return types.SimpleNamespace(
        loss_curve_=list(1 / np.arange(1, 60) + 0.05),
        validation_scores_=list(0.97 - 0.5 / np.arange(1, 60)),
    )


def _sizes_curves():
    rng = np.random.default_rng(0)
    sizes = np.array([30.0, 100.0, 200.0, 300.0])
    test = np.linspace(0.6, 0.9, 4)[:, None] + rng.uniform(-0.05, 0.05, (4, 3))
    return sizes, 1.0 - rng.uniform(0, 0.02, (4, 3)), test


FIGURES = {
    "legendre_basis": lambda: plotting.plot_legendre_basis(6, theta=100.0),
    "legendre_basis_order_20": lambda: plotting.plot_legendre_basis(20, theta=100.0),
    "delay_decoding": lambda: plotting.plot_delay_decoding(
        order=24, theta=100.0, delays=[25.0, 50.0, 100.0]
    ),
    "history": lambda: plotting.plot_learning_curve(_learning_history()),
    "mapping": lambda: plotting.plot_learning_curve(
        {"training loss": [3, 2, 1.5, 1.2], "validation loss": [2.5, 2, 1.8, 1.7]}
    ),
    "sizes": lambda: plotting.plot_learning_curve(_sizes_curves()),
}


@pytest.mark.parametrize("name", list(FIGURES))
def test_legends_stay_clear_of_the_curves(name):
    figure = FIGURES[name]()
    figure.draw_without_rendering()
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    legends += list(figure.legends)
    assert legends
    figure_box = figure.bbox
    for legend in legends:
        box = legend.get_window_extent()
        # whole on the canvas (nothing cut off) ...
        assert box.x0 >= figure_box.x0 - 1 and box.x1 <= figure_box.x1 + 1
        assert box.y0 >= figure_box.y0 - 1 and box.y1 <= figure_box.y1 + 1
        for ax in figure.axes:
            # ... and outside every axes, so that no curve, band or tick label can lie under it
            assert not box.overlaps(ax.get_window_extent()), (name, ax.get_title())
            for line in ax.get_lines():
                points = ax.transData.transform(np.column_stack(line.get_data()))
                inside = (
                    (points[:, 0] > box.x0)
                    & (points[:, 0] < box.x1)
                    & (points[:, 1] > box.y0)
                    & (points[:, 1] < box.y1)
                )
                assert not inside.any(), (name, line.get_label())


def test_shaded_regions_are_labelled():
    decoding = plotting.plot_delay_decoding(order=12, theta=50.0, n_steps=200)
    basis = plotting.plot_legendre_basis(4, theta=50.0, kind="impulse_response")
    for figure, expected in ((decoding, "warm-up"), (basis, "window")):
        (ax,) = figure.axes
        (shade,) = ax.patches  # the axvspan
        assert expected in shade.get_label()
        legend_texts = [text.get_text() for text in ax.get_legend().get_texts()]
        assert shade.get_label() in legend_texts


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_validation_axis_says_what_the_score_is():
    from sklearn.linear_model import Ridge

    from lmu_sk import DenseHeadClassifier, DenseHeadRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = (X[:, 0] > 0).astype(int)
    kwargs = {"max_iter": 5, "early_stopping": True, "n_iter_no_change": 5, "random_state": 0}
    classifier = DenseHeadClassifier(**kwargs).fit(X, y)
    regressor = DenseHeadRegressor(**kwargs).fit(X, X[:, 0])
    for model, expected in ((classifier, "validation accuracy"), (regressor, "validation $R^2$")):
        figure = plotting.plot_learning_curve(model)
        assert figure.axes[1].get_ylabel() == expected
        assert expected in [text.get_text() for text in figure.legends[0].get_texts()]
    # a training history does not say what its score is; the caller can
    history = _learning_history()
    assert plotting.plot_learning_curve(history).axes[1].get_ylabel() == "validation score"
    figure = plotting.plot_learning_curve(history, score_name="accuracy")
    assert figure.axes[1].get_ylabel() == "validation accuracy"
    # learning curves per training size: the scoring string, or the default score
    Xr, yr = X[:60], X[:60, 0]
    figure = plotting.plot_learning_curve(Ridge(), Xr, yr, cv=3, train_sizes=[0.5, 1.0])
    assert figure.axes[0].get_ylabel() == "$R^2$"
    figure = plotting.plot_learning_curve(
        Ridge(), Xr, yr, cv=3, train_sizes=[0.5, 1.0], scoring="neg_mean_absolute_error"
    )
    assert figure.axes[0].get_ylabel() == "neg_mean_absolute_error"


@pytest.mark.parametrize(("seed", "error"), [("x", TypeError), (-1, ValueError), (1.5, TypeError)])
def test_delay_decoding_names_a_bad_seed(seed, error):
    """A bad ``seed`` met NumPy's SeedSequence errors, which do not name the parameter."""
    with pytest.raises(error, match="seed must be None or a non-negative integer"):
        plotting.plot_delay_decoding(order=4, theta=10.0, n_steps=50, seed=seed)


def test_delay_decoding_of_an_unstable_euler_system_warns_its_cause():
    """NumPy's "overflow encountered in square" was all a user saw; the cause is named
    as the transformers name it, and NumPy's warnings are not added to it."""
    import warnings

    from lmu_sk.dn import EulerInstabilityWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plotting.plot_delay_decoding(order=12, theta=5.0, discretizer="euler", n_steps=300)
    kinds = {w.category for w in caught}
    assert kinds == {EulerInstabilityWarning}, kinds  # (a RuntimeWarning of its own)


@pytest.mark.parametrize("scale", [1.0, 1e160, 1e300, 1e-170])
def test_the_decoding_score_does_not_depend_on_the_signals_scale(scale):
    """The NRMSE in the legend is scale-free (it read nan from 1e154 up, with NumPy's
    overflow warning, and vanished from 1e-162 down)."""
    signal = np.sin(np.arange(300) / 7.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        labels = [
            t.get_text()
            for t in plotting.plot_delay_decoding(scale * signal).axes[0].get_legend().get_texts()
        ]
    reference = [
        t.get_text() for t in plotting.plot_delay_decoding(signal).axes[0].get_legend().get_texts()
    ]
    assert "NRMSE" in labels[2] and labels[2] == reference[2]


def test_an_unstable_euler_basis_is_warned_of_by_its_cause():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plotting.plot_legendre_basis(40, theta=5, discretizer="euler", n_steps=2000)
    assert caught and all(type(w.message).__name__ == "EulerInstabilityWarning" for w in caught)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: plotting.plot_legendre_basis(6, n_steps=True),
            TypeError,
            "n_steps must be an integer",
        ),
        (lambda: plotting.plot_legendre_basis(dpi=1e6), ValueError, r"pixels a side.*Lower dpi"),
        (
            lambda: plotting.plot_learning_curve(([10, 20], np.zeros((2, 0)), np.zeros((2, 0)))),
            ValueError,
            "at least one fold",
        ),
        (
            lambda: plotting.plot_legendre_basis(100, kind="polynomials", n_points=10**8),
            ValueError,
            "Legendre basis figure of 100000000 points",
        ),
    ],
)
def test_figures_refuse_what_they_cannot_draw_naming_it(call, error, match):
    """A flag read as a count, an image beyond matplotlib's size (its raw error), score
    arrays of no fold (an empty figure and NumPy's warnings), and a basis too large for
    memory (a raw MemoryError) are refused before any drawing."""
    with pytest.raises(error, match=match):
        call()


def test_figsize_as_an_array_is_read():
    figure = plotting.plot_legendre_basis(figsize=np.array([4.0, 3.0]))
    np.testing.assert_allclose(figure.get_size_inches(), [4.0, 3.0])


def test_a_path_is_saved_in_the_format_its_suffix_names(tmp_path):
    """PNG bytes went into every file, whatever its name (a .pdf or .svg was PNG data)."""
    plotting.plot_legendre_basis(3, path=tmp_path / "basis.pdf")
    assert (tmp_path / "basis.pdf").read_bytes().startswith(b"%PDF")
    plotting.plot_legendre_basis(3, path=tmp_path / "basis.svg")
    assert b"<svg" in (tmp_path / "basis.svg").read_bytes()[:400]
    plotting.plot_legendre_basis(3, path=tmp_path / "basis")  # no suffix: PNG, named as given
    assert (tmp_path / "basis").read_bytes().startswith(b"\x89PNG")
    # a dot in a name, not an image format's suffix: PNG, as before
    plotting.plot_legendre_basis(3, path=os.fsencode(tmp_path / "run.v2"))
    assert (tmp_path / "run.v2").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("path", "error", "match"),
    [
        (5, TypeError, "path must be a file name"),
        ("missing-folder/basis.png", ValueError, "missing-folder' does not exist"),
    ],
)
def test_a_path_that_cannot_be_written_is_refused_before_drawing(path, error, match, tmp_path):
    """An int met a raw AttributeError, a missing folder a raw FileNotFoundError, after the
    figure was drawn."""
    with pytest.raises(error, match=match):
        plotting.plot_legendre_basis(3, path=path if isinstance(path, int) else tmp_path / path)


def test_an_unfitted_estimator_is_named_as_such():
    """An unfitted estimator was said to be "fitted without per-epoch losses (a
    closed-form head)", also with a dense head."""
    from lmu_sk import LMUClassifier

    with pytest.raises(TypeError, match="that is not fitted: fit it first"):
        plotting.plot_learning_curve(LMUClassifier(head="dense"))
