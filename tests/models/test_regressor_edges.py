"""``LMURegressor`` at its edges: parameters set after fit, the ridge head's clipping,
targets of very different scales, per-step targets of several outputs, and diverging
training that names the targets.

Tolerances: the same float64 model computed twice gives the same predictions exactly;
scaled targets are scaled back by exact powers of two, so a target fitted beside another
of 1e400 times its size predicts as alone to float64 rounding (1e-12 relative).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import r2_score

from lmu_sk import LMURegressor
from lmu_sk.neural.training import TrainingDivergedError


def data(n=40, n_steps=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_steps))
    return X, X[:, -5:].sum(axis=1)


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_parameters_set_after_fit_apply_at_the_next_fit(head):
    """``scale_features`` and ``feature_output`` set after fitting do not change what
    ``predict`` does (they changed the predictions by 4.8, or raised raw errors): the
    fitted model's values apply until the next fit."""
    X, y = data()
    params = dict(head=head, feature_output="final", max_iter=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        model = LMURegressor(**params).fit(X, y)
    before = model.predict(X)
    model.set_params(scale_features=False)
    np.testing.assert_array_equal(model.predict(X), before)
    model.set_params(scale_features=True, feature_output="sequence")
    np.testing.assert_array_equal(model.predict(X), before)


def test_a_per_step_model_predicts_per_step_after_feature_output_changes():
    X, _ = data()
    target = np.cumsum(X, axis=1) * 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        model = LMURegressor(feature_output="sequence", max_iter=5, random_state=0)
        model.fit(X, target)
    before = model.predict(X)
    assert before.shape == target.shape
    np.testing.assert_array_equal(model.set_params(feature_output="final").predict(X), before)


def test_clip_margin_is_the_ridge_heads_and_none_never_clips():
    """The ridge head clips its predictions to the training targets' range widened by
    ``clip_margin``; ``clip_margin=None`` predicts as the linear model does beyond it
    (it could not be turned off: new sequences of 3 times the training scale were cut)."""
    X, y = data()
    rng = np.random.default_rng(1)
    X_far = 3.0 * rng.standard_normal((20, 30))
    y_far = X_far[:, -5:].sum(axis=1)
    clipped = LMURegressor(feature_output="final").fit(X, y)
    assert clipped.head_.clip_margin_ == 0.1
    low, high = y.min(), y.max()
    room = 0.1 * (high - low)
    assert clipped.predict(X_far).max() <= high + room
    assert clipped.predict(X_far).min() >= low - room
    free = LMURegressor(feature_output="final", clip_margin=None).fit(X, y)
    assert free.head_.clip_margin_ is None
    assert free.score(X_far, y_far) > clipped.score(X_far, y_far)
    assert free.predict(X_far).max() > high + room
    with pytest.raises(ValueError, match="clip_margin"):
        LMURegressor(clip_margin=-1.0).fit(X, y)


def test_a_small_target_beside_a_huge_one_is_not_lost():
    """Each target is scaled by its own power of two: one of 1e-200 beside one of 1e200
    predicted exactly 0 (one scale for both underflowed it)."""
    X, y = data()
    alone = LMURegressor(feature_output="final").fit(X, y).predict(X)
    both = LMURegressor(feature_output="final").fit(X, np.c_[y * 1e200, y * 1e-200]).predict(X)
    np.testing.assert_allclose(both[:, 0] / 1e200, alone, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(both[:, 1] / 1e-200, alone, rtol=1e-12, atol=1e-12)


def test_per_step_targets_of_several_outputs_are_scored():
    """``score`` of per-step targets of several outputs (a raw "Found array with dim 3"):
    R^2 over every step of every sequence, averaged over the outputs."""
    X, _ = data()
    target = np.cumsum(X, axis=1) * 0.1
    both = np.stack([target, -target], axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        model = LMURegressor(feature_output="sequence", max_iter=5, random_state=0)
        model.fit(X, both)
    prediction = model.predict(X)
    assert prediction.shape == both.shape
    expected = r2_score(both.reshape(-1, 2), prediction.reshape(-1, 2))
    assert model.score(X, both) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="targets of every step"):
        model.score(X, both[:, :5])


def test_diverging_training_names_the_targets():
    X, y = data()
    with pytest.raises(TrainingDivergedError, match="TransformedTargetRegressor"):
        LMURegressor(head="dense", max_iter=20, random_state=0).fit(X, y * 1e20)


def test_held_out_input_errors_name_x_val_and_y_val():
    """Errors of the held-out sequences named X (and the inner LMUFeatures), and X_val and
    y_val of different lengths met scikit-learn's raw "inconsistent numbers of samples"."""
    X, y = data()
    params = dict(head="dense", early_stopping=True, max_iter=3, random_state=0)
    with pytest.raises(ValueError, match="X_val holds 5 sequences but y_val 4 targets"):
        LMURegressor(**params).fit(X, y, X_val=X[:5], y_val=y[:4])
    with pytest.raises(ValueError, match=r"In X_val .*NaN"):
        LMURegressor(**params).fit(X, y, X_val=np.where(X[:5] > 2, np.nan, X[:5]), y_val=y[:5])
    other = np.random.default_rng(1).standard_normal((5, 30, 2))
    with pytest.raises(ValueError, match=r"In X_val .*2 channel\(s\)"):
        LMURegressor(**params).fit(X, y, X_val=other, y_val=y[:5])


def test_per_step_targets_without_sequence_features_are_named():
    X, _ = data()
    target = np.cumsum(X, axis=1)[:, :, None]
    with pytest.raises(ValueError, match="feature_output='sequence'"):
        LMURegressor().fit(X, target)


def test_one_training_sequence_for_the_ridge_head_gets_the_fix():
    X, y = data()
    with pytest.raises(ValueError, match="head='dense'"):
        LMURegressor(head="ridge").fit(X[:1], y[:1])


def test_a_model_whose_scale_features_changed_after_fit_loads():
    """The saved standardization is the fitted one: a model fitted without it, then given
    scale_features=True, was refused at load for lacking feature_mean_."""
    import pickle

    X, y = data()
    model = LMURegressor(feature_output="final", scale_features=False).fit(X, y)
    model.set_params(scale_features=True)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_y_val_errors_name_y_val():
    X, y = data()
    params = dict(head="dense", early_stopping=True, max_iter=3, random_state=0)
    per_step = np.zeros((5, 30, 2))
    with pytest.raises(ValueError, match=r"In y_val .*feature_output='sequence'"):
        LMURegressor(**params).fit(X, y, X_val=X[:5], y_val=per_step)


def test_per_step_scores_of_one_output_with_its_axis_and_of_dask_input():
    """``score`` of per-step targets of shape (n, steps, 1), as the model was trained on,
    and of a dask X (both raised)."""
    da = pytest.importorskip("dask.array")
    X, _ = data()
    target = (np.cumsum(X, axis=1) * 0.1)[:, :, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached; y's trailing axis
        model = LMURegressor(feature_output="sequence", max_iter=5, random_state=0)
        model.fit(X, target)
    expected = r2_score(target[:, :, 0].ravel(), model.predict(X).ravel())
    assert model.score(X, target) == pytest.approx(expected, rel=1e-12)
    assert model.score(da.from_array(X, chunks=20), target) == pytest.approx(expected, rel=1e-9)


def test_clip_margin_true_is_refused_before_the_features():
    X, y = data()
    with pytest.raises(ValueError, match=r"clip_margin.*LMURegressor"):
        LMURegressor(clip_margin=True).fit(X, y)


def test_a_saved_state_without_its_standardization_is_refused():
    """The fitted standardization is recorded whatever it is (None without one): a state
    lacking it is damaged, refused at load (it loaded and predicted unstandardized)."""
    import pickle

    X, y = data()
    model = LMURegressor(feature_output="final").fit(5 * X + 3, y)
    state = {
        key: value
        for key, value in model.__getstate__().items()
        if key not in ("feature_mean_", "feature_scale_")
    }
    damaged = LMURegressor.__new__(LMURegressor)
    with pytest.raises(pickle.UnpicklingError, match="feature_mean_"):
        damaged.__setstate__(state)
    plain = LMURegressor(feature_output="final", scale_features=False).fit(X, y)
    assert plain.feature_mean_ is None and plain.feature_scale_ is None


def test_a_state_saved_before_the_standardization_was_recorded_loads():
    """A model fitted without standardization by a build that did not record it (no
    feature_mean_ at all, the same version number) loads as unstandardized."""
    X, y = data()
    model = LMURegressor(feature_output="final", scale_features=False).fit(X, y)
    state = {
        key: value
        for key, value in model.__getstate__().items()
        if key not in ("feature_mean_", "feature_scale_")
    }
    loaded = LMURegressor.__new__(LMURegressor)
    loaded.__setstate__(state)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("y_val", [3, [[1.0], [1.0, 2.0]]])
def test_a_y_val_without_one_row_per_sequence_is_named(y_val):
    X, y = data()
    params = dict(head="dense", early_stopping=True, max_iter=3, random_state=0)
    with pytest.raises(ValueError, match="y_val must hold one target"):
        LMURegressor(**params).fit(X, y, X_val=X[:2], y_val=y_val)


def test_early_stopping_of_per_step_targets_holds_out_whole_sequences(monkeypatch):
    """With feature_output='sequence' the head's rows are every step of every sequence,
    and early stopping held out random steps: their neighbours in the same sequences were
    trained on, so the score measured the fit to those sequences, not to new ones."""
    from lmu_sk.head import DenseHeadRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 15))
    Y = np.cumsum(X, axis=1) * 0.3
    held_out = []
    split = DenseHeadRegressor._validation_split

    def recording(self, X, *args, **kwargs):
        assert self._rows_per_group == 15  # the composite's rows: every step of a sequence
        parts = split(self, X, *args, **kwargs)
        held_out.append(parts[2].shape[0])
        return parts

    monkeypatch.setattr(DenseHeadRegressor, "_validation_split", recording)
    model = LMURegressor(
        order=4, feature_output="sequence", head="dense", early_stopping=True,
        validation_fraction=0.2, max_iter=3, random_state=0,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, Y)
    assert held_out == [4 * 15]  # 4 of the 20 sequences, every step of each
    # the rows drawn are whole sequences: the held-out rows' sequence indices
    head = DenseHeadRegressor(validation_fraction=0.2)
    head._rows_per_group = 15
    rows = np.arange(300, dtype=float)[:, None]
    _, _, X_val, _, _, _ = head._validation_split(rows, rows, None, np.random.default_rng(1))
    sequences = X_val[:, 0].astype(int) // 15
    assert len(np.unique(sequences)) == 4
    assert all((sequences == s).sum() == 15 for s in np.unique(sequences))


def test_per_step_score_of_one_sequence_and_early_stopping_agree():
    """score() of per-step targets is R^2 over every step (one sequence scores; the
    early stopping's validation score is the same number)."""
    X, _ = data()
    target = np.cumsum(X, axis=1) * 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        model = LMURegressor(
            feature_output="sequence",
            max_iter=3,
            random_state=0,
            early_stopping=True,
            n_iter_no_change=100,
        ).fit(X[:30], target[:30], X_val=X[30:], y_val=target[30:])
    one = model.score(X[:1], target[:1])
    assert np.isfinite(one)
    assert one == pytest.approx(r2_score(target[0], model.predict(X[:1])[0]), rel=1e-12)
    assert model.validation_scores_[-1] == pytest.approx(
        model.score(X[30:], target[30:]), abs=1e-5
    )
    weights = np.arange(1.0, 41.0)
    expected = r2_score(
        target.ravel(), model.predict(X).ravel(), sample_weight=np.repeat(weights, X.shape[1])
    )
    assert model.score(X, target, sample_weight=weights) == pytest.approx(expected, rel=1e-12)


def test_per_step_targets_of_different_lengths_are_refused_before_the_features():
    X, _ = data()
    ragged = [np.zeros(k) for k in range(5, 5 + len(X))]
    with pytest.raises(ValueError, match="targets of different lengths"):
        LMURegressor(feature_output="sequence").fit(X, ragged)
    with pytest.raises(ValueError, match="one target per step"):
        LMURegressor(feature_output="sequence").fit(X, np.zeros((len(X), X.shape[1], 1, 1)))


def padded_steps(n=48, longest=30, n_outputs=None, seed=0):
    """Sequences of 12 to ``longest`` steps padded with zeros to ``longest``, their
    per-step targets (a moving mean) NaN at the padding."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(12, longest + 1, n)
    X = np.zeros((n, longest))
    y = np.full((n, longest) if n_outputs is None else (n, longest, n_outputs), np.nan)
    for i, length in enumerate(lengths):
        X[i, :length] = rng.standard_normal(length)
        target = np.convolve(X[i, :length], np.ones(4) / 4)[:length]
        y[i, :length] = target if n_outputs is None else target[:, None] * [1.0, -2.0]
    return X, y, lengths


@pytest.mark.parametrize("head", ["ridge", "dense"])
@pytest.mark.parametrize("n_outputs", [None, 2])
def test_nan_targets_of_padded_steps_are_left_out_of_training(head, n_outputs):
    """Per-step targets NaN at the padding of sequences of different lengths: those
    steps weigh nothing (NaN was refused, and the padding could not be left out, the
    weights being per sequence), so the model does not depend on what the padding holds
    (zeros or noise: the same predictions exactly, as every padded row's weight is 0)."""
    X, y, lengths = padded_steps(n_outputs=n_outputs)
    noisy = X.copy()
    rng = np.random.default_rng(1)
    for i, length in enumerate(lengths):
        noisy[i, length:] = 5 * rng.standard_normal(X.shape[1] - length)
    params = dict(feature_output="sequence", head=head, order=8, max_iter=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        model = LMURegressor(**params).fit(X, y)
        other = LMURegressor(**params).fit(noisy, y)
    X_test = np.random.default_rng(2).standard_normal((5, X.shape[1]))
    np.testing.assert_array_equal(model.predict(X_test), other.predict(X_test))
    # scored over the steps with targets only (r2_score refused the NaN before)
    prediction = model.predict(X).reshape(X.size, -1)
    kept = ~np.isnan(y.reshape(X.size, -1)[:, 0])
    expected = r2_score(y.reshape(X.size, -1)[kept], prediction[kept])
    assert model.score(X, y) == pytest.approx(expected, rel=1e-12)
    assert model.score(X, y) > 0.5
    # scored per step as fitted, whatever feature_output was set to since
    model.set_params(feature_output="mean")
    assert model.score(X, y) == pytest.approx(expected, rel=1e-12)


def test_nan_targets_of_held_out_padded_steps_are_left_out_of_early_stopping():
    """The held-out steps of padding are not scored: the best validation score is the
    restored model's R^2 over the held-out steps with targets (to float32's rounding of
    the head's own scoring: 1e-6)."""
    X, y, _ = padded_steps(n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LMURegressor(
            feature_output="sequence", head="dense", order=8, max_iter=10,
            early_stopping=True, random_state=0,
        ).fit(X[:40], y[:40], X_val=X[40:], y_val=y[40:])  # fmt: skip
    best = model.head_.best_validation_score_
    assert model.score(X[40:], y[40:]) == pytest.approx(best, abs=1e-6)


def test_nan_in_some_outputs_of_a_step_or_in_every_step_is_refused():
    X, y, _ = padded_steps(n_outputs=2)
    partly = y.copy()
    partly[0, 0, 1] = np.nan
    model = LMURegressor(feature_output="sequence", head="ridge", order=8)
    with pytest.raises(ValueError, match="NaN in some outputs of a step"):
        model.fit(X, partly)
    with pytest.raises(ValueError, match="nothing to train on"):
        model.fit(X, np.full_like(y, np.nan))
    # per sequence, NaN stays an error of the head
    with pytest.raises(ValueError, match="NaN"):
        LMURegressor(order=8).fit(X, np.where(np.arange(len(X)) == 3, np.nan, 1.0))


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_per_step_targets_of_one_output_on_an_axis_keep_it(head):
    """Targets of shape (n_samples, n_steps, 1) were warned of as a column vector and
    predicted as (n_samples, n_steps): the model is the one of (n_samples, n_steps)
    targets, its predictions of the shape of y, silently."""
    from sklearn.exceptions import DataConversionWarning

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 20))
    y = np.cumsum(X, axis=1)
    params = dict(feature_output="sequence", head=head, order=8, max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flat = LMURegressor(**params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", DataConversionWarning)
        axis = LMURegressor(**params).fit(X, y[:, :, None])
    assert axis.predict(X).shape == (30, 20, 1)
    np.testing.assert_array_equal(axis.predict(X)[:, :, 0], flat.predict(X))
    assert axis.score(X, y[:, :, None]) == flat.score(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert axis.fit(X, y).predict(X).shape == (30, 20)  # refitted without the axis


def test_every_step_missing_in_a_scored_or_held_out_set_is_refused_by_name():
    X, y, _ = padded_steps(n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LMURegressor(feature_output="sequence", head="ridge", order=8).fit(X, y)
    with pytest.raises(ValueError, match="no step to score"):
        model.score(X[:5], np.full_like(y[:5], np.nan))
    dense = LMURegressor(
        feature_output="sequence", head="dense", order=8, max_iter=3, early_stopping=True
    )
    with pytest.raises(ValueError, match="no step to score early stopping on"):
        dense.fit(X[:40], y[:40], X_val=X[40:], y_val=np.full_like(y[40:], np.nan))


def test_nan_padding_of_x_and_pandas_missing_targets_in_per_step_regression():
    """NaN-padded X got the features' advice, a list of arrays, which per-step targets
    refuse (a circle): it gets the per-step advice, in fit and predict. Targets missing
    as pandas' ``pd.NA`` (nullable columns) are NaN's missing steps (an unclear TypeError
    from scikit-learn's checks before)."""
    pd = pytest.importorskip("pandas")
    X, y, lengths = padded_steps(n=30)
    nan_padded = X.copy()
    for i, length in enumerate(lengths):
        nan_padded[i, length:] = np.nan
    model = LMURegressor(feature_output="sequence", head="ridge", order=8)
    with pytest.raises(ValueError, match=r"pad them with a finite value instead \(np.nan_to_num"):
        model.fit(nan_padded, y)
    model.fit(X, y)
    with pytest.raises(ValueError, match=r"np.nan_to_num\(X\)"):
        model.predict(nan_padded)
    nullable = pd.DataFrame(y).astype("Float64")
    assert nullable.isna().to_numpy().sum() == np.isnan(y).sum() > 0
    from_pandas = LMURegressor(feature_output="sequence", head="ridge", order=8)
    from_pandas.fit(X, nullable)
    np.testing.assert_array_equal(from_pandas.predict(X), model.predict(X))
    assert from_pandas.score(X, nullable) == model.score(X, y)


def test_text_targets_from_pandas_and_padding_of_2d_channels_first_x():
    """Per-step targets of text in a DataFrame were parsed as numbers (refused from
    NumPy); a 2-D X with channels_first=True (read as (n_samples, n_steps)) had its NaN
    padding looked for as one step of many channels, and got the list-of-arrays advice."""
    pd = pytest.importorskip("pandas")
    X, y, lengths = padded_steps(n=20)
    model = LMURegressor(feature_output="sequence", head="ridge", order=8)
    text = pd.DataFrame(np.nan_to_num(y).astype(str))
    with pytest.raises(ValueError, match="got text"):
        model.fit(X, text)
    nan_padded = X.copy()
    for i, length in enumerate(lengths):
        nan_padded[i, length:] = np.nan
    first = LMURegressor(feature_output="sequence", head="ridge", order=8, channels_first=True)
    with pytest.raises(ValueError, match=r"np.nan_to_num\(X\)"):
        first.fit(nan_padded, y)


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_a_stream_of_a_model_fitted_on_one_output_on_an_axis_keeps_it(head):
    """A stream answers what the regressor answers at the latest step: (n_streams, 1) for
    per-step targets of shape (n_samples, n_steps, 1) (it gave (n_streams,)), the
    values those of the batch's last step."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 20))
    y = np.cumsum(X, axis=1)[:, :, None]
    params = dict(feature_output="sequence", head=head, order=8, max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LMURegressor(**params).fit(X, y)
    stream = model.stream(n_streams=4)
    for t in range(3):
        stream.update(X[:4, t])
    prediction = stream.predict()
    assert prediction.shape == (4, 1)
    # float32 DN states: the stream's step by step, the batch's by the engine's blocked
    # products (another order of float32 sums, ~1e-7 relative over 3 steps)
    np.testing.assert_allclose(prediction, model.predict(X[:4, :3])[:, -1], rtol=1e-5, atol=1e-6)
    # refitted on one target per sequence: the axis is the previous fit's no more
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.set_params(feature_output="final").fit(X, y[:, -1, 0])
    stream = model.stream(n_streams=4)
    for t in range(3):
        stream.update(X[:4, t])
    assert stream.predict().shape == model.predict(X[:4, :3]).shape == (4,)
