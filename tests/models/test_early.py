"""LMUEarlyClassifier and its stream: decisions online as in batch, the rule, bad input."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_classifiers_train, parametrize_with_checks

from lmu_sk import LMUClassifier, LMUEarlyClassifier
from lmu_sk._decisions import (
    CONSECUTIVE,
    _candidate_thresholds,
    harmonic_mean,
    rule_score,
    simulate,
)
from lmu_sk.early import checkpoint_steps
from lmu_sk.ridge import RidgeHeadClassifier
from lmu_sk.streaming import EarlyClassifierStream

CHECKS = {
    "check_n_features_in_after_fitting": "series of any length can be decided",
    "check_classifiers_train": (
        "deciding early trades accuracy for earliness on the check's blobs; the variant "
        "that cares for accuracy alone (cost=0) runs it below"
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        "the heads' leave-one-out penalties and probabilities, and the pooled thresholds, "
        "are not invariant to repeating series (as LMUClassifier's)"
    ),
}
# Stream and batch compute the same features through the stream's and the batch
# transform's kernels: float32 features agree to their rounding (6e-8 of their scale), so
# probabilities agree to ~1e-6 (softmax of ridge decisions of ~1e4 standardized features).
PROBA = {"rtol": 0, "atol": 1e-6}


def bumps(n_cases=60, n_steps=40, n_channels=1, seed=0, lengths=None):
    """Three classes told apart by where a bump is: early (class 0), middle, late; noise
    besides. ``lengths``: a list of sequences of these lengths (cut from longer ones)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_cases) % 3
    t = np.arange(n_steps)
    centre = np.array([0.15, 0.45, 0.75])[y] * n_steps
    bump = np.exp(-(((t[None, :] - centre[:, None]) / (0.06 * n_steps)) ** 2))
    X = 0.4 * rng.standard_normal((n_cases, n_steps, n_channels)) + 1.5 * bump[:, :, None]
    if n_channels == 1:
        X = X[:, :, 0]
    if lengths is not None:
        return [X[i, : lengths[i]] for i in range(n_cases)], y
    return X, y


def small(**params):
    return LMUEarlyClassifier(LMUClassifier(device="cpu"), **params)


@pytest.fixture(scope="module")
def fitted():
    X, y = bumps()
    return small(checkpoints=8).fit(X, y)


# ---------------------------------------------------------------------------- scikit-learn
@parametrize_with_checks(
    [small(checkpoints=4), small(checkpoints=4, cost=0.5)],
    expected_failed_checks=lambda est: CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


class _FixedLength(LMUEarlyClassifier):
    """Refuses series of another length than at fit time, as fixed-width models do."""

    def decide(self, X):
        if np.shape(X)[1] != self.n_features_in_:
            raise ValueError(f"X has {np.shape(X)[1]} steps, expected {self.n_features_in_}")
        return super().decide(X)


@pytest.mark.parametrize("X_dtype", ["float64", "float32"])
def test_sklearn_train_check_when_accuracy_alone_counts(X_dtype):
    check_classifiers_train(
        "FixedLengthEarly",
        _FixedLength(LMUClassifier(order=4, device="cpu"), checkpoints=4, cost=0.0),
        X_dtype=X_dtype,
    )


# ---------------------------------------------------------------------------- decisions
def test_a_dataframe_s_step_names_are_recorded_and_checked():
    """A DataFrame's columns are time steps: fitted on one, the early classifier took its
    columns reversed (the series run backwards) silently, where LMUClassifier refuses
    them as scikit-learn does."""
    pd = pytest.importorskip("pandas")
    X, y = bumps()
    frame = pd.DataFrame(X, columns=[f"t{i}" for i in range(X.shape[1])])
    model = small(checkpoints=4).fit(frame, y)
    assert model.feature_names_in_.tolist() == list(frame.columns)
    model.predict(frame)
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(frame[frame.columns[::-1]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(X)
    assert not hasattr(small(checkpoints=4).fit(X, y), "feature_names_in_")
    with pytest.raises(ValueError, match="8 columns are time steps; X has 3"):
        small(checkpoints=4).fit(frame.iloc[:, :8], y).predict(frame.iloc[:, :3])


def test_decides_early_where_the_beginning_tells_the_classes(fitted):
    X, y = bumps(seed=1)
    decisions = fitted.decide(X)
    # class 0's bump is over by a quarter of the series: decided right, and early
    assert (decisions.labels == y)[y == 0].mean() >= 0.9
    assert decisions.earliness[y == 0].mean() < 0.3
    # the rule maximises the harmonic mean: it guesses some of the rest early too
    assert (decisions.labels == y).mean() >= 0.75 and decisions.earliness.mean() < 0.6
    score = fitted.score_early(X, y)
    assert score.accuracy == pytest.approx((decisions.labels == y).mean())
    assert score.earliness == pytest.approx(decisions.earliness.mean())
    assert score.harmonic_mean == pytest.approx(harmonic_mean(score.accuracy, score.earliness))
    np.testing.assert_array_equal(fitted.predict(X), decisions.labels)
    np.testing.assert_array_equal(fitted.predict_proba(X), decisions.proba)
    # the probabilities decided name the label decided, and sum to one
    np.testing.assert_array_equal(
        fitted.classes_[decisions.proba.argmax(axis=1)], decisions.labels
    )
    np.testing.assert_allclose(decisions.proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # decisions happen at the checkpoints only
    assert set(decisions.steps) <= set(fitted.checkpoints_)


def test_full_length_is_the_classifier_of_whole_series():
    X, y = bumps()
    X_test, _ = bumps(seed=1)
    never_early = small(checkpoints=1).fit(X, y)
    assert list(never_early.checkpoints_) == [X.shape[1]] and never_early.heads_ == []
    decisions = never_early.decide(X_test)
    assert (decisions.steps == X.shape[1]).all() and (decisions.earliness == 1).all()
    reference = LMUClassifier(device="cpu").fit(X, y)
    np.testing.assert_array_equal(decisions.labels, reference.predict(X_test))
    np.testing.assert_allclose(decisions.proba, reference.predict_proba(X_test), **PROBA)
    # and every model decides there what its classifier says of the whole series
    model = small(checkpoints=8).fit(X, y)
    np.testing.assert_array_equal(model.estimator_.predict(X_test), reference.predict(X_test))


def test_parameters_of_the_default_estimator_name_the_fix():
    """set_params(estimator__order=3) on the default (estimator=None) raised
    AttributeError: 'NoneType' object has no attribute 'set_params'."""
    with pytest.raises(ValueError, match=r"estimator__order: estimator is None.*estimator="):
        LMUEarlyClassifier().set_params(estimator__order=3)
    model = LMUEarlyClassifier().set_params(estimator=LMUClassifier(), estimator__order=3)
    assert model.estimator.order == 3
    assert LMUEarlyClassifier(LMUClassifier()).set_params(estimator__theta=7).estimator.theta == 7


def test_checkpoints_are_steps_of_the_training_length():
    np.testing.assert_array_equal(checkpoint_steps(4, 40), [10, 20, 30, 40])
    np.testing.assert_array_equal(checkpoint_steps([0.5, 0.26, 0.25], 40), [10, 20, 40])
    np.testing.assert_array_equal(checkpoint_steps(100, 10), np.arange(1, 11))
    for bad in (0, -2, [], [0.0, 0.5], [1.5], "many", [[0.5]]):
        with pytest.raises(ValueError, match="checkpoints must be"):
            checkpoint_steps(bad, 40)


def test_bad_checkpoints_are_refused_before_the_classifier_is_fitted(monkeypatch):
    """A bad ``checkpoints`` was refused only after the whole classifier's fit."""

    def no_fit(*args, **kwargs):
        raise AssertionError("the classifier was fitted before checkpoints were checked")

    monkeypatch.setattr(LMUClassifier, "fit", no_fit)
    X, y = np.zeros((6, 10)), np.arange(6) % 2
    for bad in (0, [1.5], "many"):
        with pytest.raises(ValueError, match="checkpoints must be"):
            LMUEarlyClassifier(checkpoints=bad).fit(X, y)


def test_rule_is_the_best_on_the_leave_one_out_probabilities(fitted):
    """The rule chosen scores best among every threshold and count of the search, on the
    leave-one-out probabilities the heads give."""
    X, y = bumps()
    indices = np.searchsorted(fitted.classes_, y)
    probas = []
    for head in fitted.heads_:
        proba = np.zeros((len(y), len(fitted.classes_)))
        proba[:, np.searchsorted(fitted.classes_, head.classes_)] = head._loo_proba()
        probas.append(proba)
    end = fitted.estimator_.head_._loo_proba()
    lengths = np.full(len(y), X.shape[1])
    thresholds = _candidate_thresholds(probas)
    # every probability a case's best class reaches is a candidate (few cases here)
    tops = np.unique(np.concatenate([p.max(axis=1) for p in probas]))
    np.testing.assert_array_equal(thresholds, np.append(tops, np.inf))
    best = -np.inf
    for consecutive in CONSECUTIVE:
        d = simulate(probas, end, fitted.checkpoints_[:-1], lengths, thresholds, consecutive)
        accuracy = (d.label == indices).mean(axis=1)
        earliness = (d.step / lengths).mean(axis=1)
        best = max(best, float(np.max(rule_score(accuracy, earliness, None))))
    assert fitted.loo_score_ == pytest.approx(best, abs=1e-12)
    assert fitted.loo_score_ == pytest.approx(
        harmonic_mean(fitted.loo_accuracy_, fitted.loo_earliness_), abs=1e-12
    )
    assert fitted.consecutive_ in CONSECUTIVE and 0 < fitted.threshold_ <= 1


def test_a_higher_cost_of_waiting_never_waits_longer():
    X, y = bumps()
    models = [small(checkpoints=8, cost=cost).fit(X, y) for cost in (0.0, 0.05, 0.3, 3.0)]
    earliness = [m.loo_earliness_ for m in models]
    accuracy = [m.loo_accuracy_ for m in models]
    assert earliness == sorted(earliness, reverse=True)
    assert accuracy == sorted(accuracy, reverse=True)
    assert models[0].loo_accuracy_ >= 0.95 and models[-1].loo_earliness_ < 0.5
    for m, cost in zip(models, (0.0, 0.05, 0.3, 3.0), strict=True):
        assert m.loo_score_ == pytest.approx(-(1 - m.loo_accuracy_) - cost * m.loo_earliness_)


def test_accuracy_alone_decides_early_only_where_that_is_more_accurate():
    """cost=0: of equally accurate rules the latest (here: never before the end); a rule
    that decides early wins only where the whole series is wrong more often."""
    from lmu_sk._decisions import choose_rule

    y = np.array([0, 1, 0, 1])
    end = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6]])  # all right
    early = np.array([[0.95, 0.05], [0.1, 0.9], [0.9, 0.1], [0.2, 0.8]])  # all right too
    steps, lengths = np.array([5]), np.full(4, 10)
    waits = choose_rule([early], end, steps, lengths, y, cost=0.0)
    assert waits["threshold"] == np.inf and waits["earliness"] == 1.0
    end[3] = [0.6, 0.4]  # the whole series now misleads one case
    hurries = choose_rule([early], end, steps, lengths, y, cost=0.0)
    assert hurries["accuracy"] == 1.0 and hurries["earliness"] < 1.0


def test_checkpoint_heads_are_calibrated_ridge_heads_on_prefixes(fitted):
    X, y = bumps()
    steps = int(fitted.checkpoints_[2])
    head = fitted.heads_[2]
    assert isinstance(head, RidgeHeadClassifier)
    features = fitted.estimator_.features_
    F = features.transform(X[:, :steps]).astype(np.float64)[:, features.streamed_columns()]
    scaled = (F - fitted.head_means_[2]) / fitted.head_scales_[2]
    # the head of that checkpoint is the ridge head fitted on the features of the prefixes
    # that a stream carries step by step
    refit = RidgeHeadClassifier().fit(scaled, y)
    np.testing.assert_allclose(refit.coef_, head.coef_, rtol=1e-6, atol=1e-9)
    assert refit.temperature_ == pytest.approx(head.temperature_, rel=1e-6)


def test_the_rule_weighs_cases_as_repeating_them():
    """An integer weight counts a case in the rule's accuracy and earliness as that many
    copies of it."""
    from lmu_sk._decisions import choose_rule

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 12)
    probas = [rng.dirichlet(np.ones(3), 12) for _ in range(3)]
    end = rng.dirichlet(np.ones(3), 12)
    steps, lengths = np.array([3, 6, 9]), np.full(12, 12)
    weights = rng.integers(1, 4, 12)
    copies = np.repeat(np.arange(12), weights)
    for cost in (None, 0.0, 0.3):
        weighed = choose_rule(probas, end, steps, lengths, y, cost, weights.astype(float))
        repeated = choose_rule(
            [p[copies] for p in probas], end[copies], steps, lengths[copies], y[copies], cost
        )
        assert weighed.keys() == repeated.keys()
        for key, value in weighed.items():
            assert value == pytest.approx(repeated[key], rel=1e-12), key


def test_sample_weight_reaches_every_part_of_the_fit():
    """fit took no sample_weight (Python's "unexpected keyword" error), where
    LMUClassifier takes it: weights of one change nothing but rounding; other weights move
    the class prior, the whole series' classifier and the checkpoints' heads; a series of
    weight 0 counts in no head's classes; a wrong length is refused naming it."""
    X, y = bumps()
    plain = small(checkpoints=4).fit(X, y)
    ones = small(checkpoints=4).fit(X, y, sample_weight=np.ones(len(y)))
    # the same arithmetic through the weighted paths: float64 rounding of the heads'
    # ~1e4-feature products
    np.testing.assert_allclose(ones.predict_proba(X), plain.predict_proba(X), atol=1e-9)
    assert ones.threshold_ == pytest.approx(plain.threshold_, rel=1e-9)
    weights = np.where(y == 0, 3.0, 1.0)
    weighed = small(checkpoints=4).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(weighed.class_prior_, [3 / 5, 1 / 5, 1 / 5])
    direct = LMUClassifier(device="cpu").fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(
        weighed.estimator_.predict_proba(X), direct.predict_proba(X), rtol=0, atol=1e-12
    )
    head, plain_head = weighed.heads_[1], plain.heads_[1]
    assert not np.allclose(head.coef_, plain_head.coef_, rtol=1e-3)
    assert not np.allclose(weighed.head_means_[1], plain.head_means_[1], rtol=1e-6)
    with pytest.raises(ValueError, match="sample_weight has 3 weights but X has 60"):
        small(checkpoints=4).fit(X, y, sample_weight=np.ones(3))


# ---------------------------------------------------------------------------- the stream
def test_score_early_refuses_labels_of_another_length(fitted):
    """One label was compared with every decision (a score), other lengths met NumPy's
    broadcast error: scikit-learn's length check, as ``score`` makes it."""
    X, y = bumps(n_cases=12, seed=3)
    assert 0 <= fitted.score_early(X, y).accuracy <= 1
    for wrong in (y[:1], y[:7]):
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            fitted.score_early(X, wrong)


def test_a_copied_stream_is_independent(fitted):
    """copy.copy of an early stream shared its features' stream but not its decisions:
    the original then decided on features ahead of its own steps."""
    import copy

    X, _ = bumps(n_cases=6, seed=4)
    stream = fitted.stream(len(X)).update(X[:, :10])
    other = copy.copy(stream)
    other.update(X[:, 10:20])
    assert stream.steps_seen == 10 and other.steps_seen == 20
    stream.update(X[:, 10:])
    np.testing.assert_array_equal(stream.predict(), fitted.decide(X).labels)


def test_stream_step_by_step_decides_as_the_batch(fitted):
    X, _ = bumps(n_cases=30, seed=2)
    batch = fitted.decide(X)
    stream = fitted.stream(len(X))
    assert isinstance(stream, EarlyClassifierStream)
    before = stream.decided.copy()
    labels, proba, steps = stream.predict(), stream.predict_proba(), stream.decision_steps
    assert not before.any() and (steps == -1).all()
    # before the first checkpoint: the training classes' frequencies
    np.testing.assert_allclose(proba, np.tile(fitted.class_prior_, (len(X), 1)))
    for t in range(X.shape[1]):
        stream.update(X[:, t])
        decided = stream.decided
        # decided stays decided, with its label, probabilities and step
        assert (decided >= before).all()
        np.testing.assert_array_equal(stream.predict()[before], labels[before])
        np.testing.assert_array_equal(stream.predict_proba()[before], proba[before])
        np.testing.assert_array_equal(stream.decision_steps[before], steps[before])
        newly = decided & ~before
        assert (stream.decision_steps[newly] == t + 1).all()
        assert (t + 1 in set(fitted.checkpoints_)) or not newly.any()
        before, labels = decided, stream.predict()
        proba, steps = stream.predict_proba(), stream.decision_steps
    assert stream.decided.all()
    np.testing.assert_array_equal(stream.predict(), batch.labels)
    np.testing.assert_array_equal(stream.decision_steps, batch.steps)
    np.testing.assert_allclose(stream.predict_proba(), batch.proba, **PROBA)


def test_stream_in_chunks_across_checkpoints_equals_steps(fitted):
    X, _ = bumps(n_cases=12, seed=3)
    steps = fitted.stream(len(X))
    for t in range(X.shape[1]):
        steps.update(X[:, t])
    chunks = fitted.stream(len(X))
    for start, stop in ((0, 3), (3, 17), (17, 18), (18, 40)):
        chunks.update(X[:, start:stop])
    np.testing.assert_array_equal(chunks.decision_steps, steps.decision_steps)
    np.testing.assert_array_equal(chunks.predict(), steps.predict())
    np.testing.assert_allclose(chunks.predict_proba(), steps.predict_proba(), **PROBA)


def test_a_chunk_refused_for_its_states_range_leaves_the_stream_as_it_was(fitted):
    """A chunk whose values could take the states beyond float32 over its steps was refused
    at a later piece, after its first piece and the checkpoint there were taken (5 steps
    advanced, a checkpoint decided) while the error said the stream was left unchanged.
    The whole chunk is checked first; the stream then decides as one never given it."""
    X, _ = bumps(n_cases=3, seed=5)
    stream = fitted.stream(3)
    bad = X[:, :10].copy()
    bad[:, 8] = 1e37  # finite, within float32: refused for the states' range only
    with pytest.raises(ValueError, match="the stream was left unchanged"):
        stream.update(bad)
    assert stream.steps_seen == 0 and stream._features.steps_seen == 0
    stream.update(X)
    clean = fitted.stream(3).update(X)
    np.testing.assert_array_equal(stream.decision_steps, clean.decision_steps)
    np.testing.assert_array_equal(stream.predict(), clean.predict())


def test_decided_cases_take_any_value_and_nothing_changes_after_the_training_length(fitted):
    X, _ = bumps(n_cases=12, seed=4)
    stream = fitted.stream(len(X))
    seen = 0
    while not stream.decided.any():
        stream.update(X[:, seen])
        seen += 1
    decided = stream.decided
    assert not decided.all()
    later = X[:, seen:].copy()
    later[decided] = np.nan  # the decided cases' steps are not needed
    reference = fitted.stream(len(X)).update(X)
    stream.update(later)
    np.testing.assert_array_equal(stream.predict(), reference.predict())
    np.testing.assert_array_equal(stream.decision_steps, reference.decision_steps)
    # after the training length every case is decided; more steps change nothing
    assert stream.steps_seen == 40 and stream.decided.all()
    stream.update(np.full((len(X), 25), np.nan))
    assert stream.steps_seen == 65
    np.testing.assert_array_equal(stream.predict(), reference.predict())
    # batch: steps after the training length are not read, the earliness counts them
    longer = np.concatenate([X, np.zeros((len(X), 40))], axis=1)
    decisions = fitted.decide(longer)
    np.testing.assert_array_equal(decisions.labels, fitted.decide(X).labels)
    np.testing.assert_allclose(decisions.earliness, fitted.decide(X).steps / 80)


def test_decided_cases_still_carried_take_any_value(fitted):
    # one case of 40 decided at the first checkpoint: too few for the stream to drop
    # what they carry, so it still advances their rows, from values it must not read
    X, _ = bumps(n_cases=40, seed=7)
    X = 0.4 * np.random.default_rng(8).standard_normal(X.shape)
    stream = fitted.stream(len(X))
    first = int(fitted.checkpoints_[0])
    stream.update(X[:, :first])
    decided = stream.decided
    assert 0 < decided.sum() < len(X) / 8 and len(stream._rows) == len(X)
    later = X[:, first:].copy()
    later[decided] = np.nan
    stream.update(later)
    reference = fitted.stream(len(X)).update(X)
    np.testing.assert_array_equal(stream.predict(), reference.predict())
    np.testing.assert_array_equal(stream.decision_steps, reference.decision_steps)
    np.testing.assert_array_equal(stream.predict_proba(), reference.predict_proba())


@pytest.mark.parametrize("route", ["scores", "features"])
def test_a_checkpoint_on_features_that_are_not_finite_raises(fitted, monkeypatch, route):
    # the streamed features are not checked one by one: the probabilities made of them
    # are, whether the ridge heads' scores are computed with them ('scores') or from them
    from lmu_sk.engine.stream import CarriedPooledFeatures

    if route == "scores":  # a window's share of the scores
        made = CarriedPooledFeatures._add_scores

        def one_nan(self, w, scores, *args):
            made(self, w, scores, *args)
            scores[1, -1] = np.nan

        monkeypatch.setattr(CarriedPooledFeatures, "_add_scores", one_nan)
    else:
        made = CarriedPooledFeatures.features

        def one_nan(self, *args, **kwargs):
            F = made(self, *args, **kwargs)
            F[1, -1] = np.nan
            return F

        monkeypatch.setattr(CarriedPooledFeatures, "features", one_nan)
    X, _ = bumps(n_cases=4, seed=6)
    stream = fitted.stream(4)
    if route == "features":
        for model in stream._models:
            if model is not None:
                model.weights = None
    first = int(fitted.checkpoints_[0])
    stream.update(X[:, : first - 1])
    with pytest.raises(ValueError, match="not finite"):
        stream.update(X[:, first - 1])


@pytest.mark.parametrize("chunk", [1, 7])
@pytest.mark.parametrize("moderate", [True, False])
def test_the_checkpoints_ridge_scores_are_those_of_the_streamed_features(
    fitted, monkeypatch, chunk, moderate
):
    # a checkpoint's ridge head gets its scores with the features (never written out), as
    # the pools advance (moderate inputs) or after (the checked path): the same
    # probabilities, to rounding, as the head on the streamed features
    from lmu_sk import streaming

    if not moderate:
        monkeypatch.setattr(streaming, "MODERATE", -1.0)
    X, _ = bumps(n_cases=6, seed=7)
    with_scores, with_features = fitted.stream(6), fitted.stream(6)
    for model in with_features._models:
        if model is not None:
            model.weights = None
    assert any(m is not None and m.weights is not None for m in with_scores._models)
    assert type(with_scores._features).__name__ == "PooledStream"  # the scores' route
    for t in range(0, X.shape[1], chunk):  # chunks that end at, or cross, checkpoints
        with_scores.update(X[:, t : t + chunk])
        with_features.update(X[:, t : t + chunk])
        # float64 products summed in another order: within a few ulps of 1
        np.testing.assert_allclose(
            with_scores.predict_proba(), with_features.predict_proba(), rtol=0, atol=1e-12
        )
    np.testing.assert_array_equal(with_scores.decision_steps, with_features.decision_steps)


def test_bad_updates_raise_and_leave_the_stream_unchanged(fitted):
    X, _ = bumps(n_cases=4, seed=5)
    stream = fitted.stream(4).update(X[:, :3])
    for bad, error, match in (
        (np.full((4, 5), np.nan), ValueError, "NaN or infinity"),
        (np.ones((3, 5)), ValueError, "does not fit this stream"),
        (np.array([["a"] * 4]).T, TypeError, "real numbers"),
        (np.full((4, 2), 1e300), ValueError, "float32"),
    ):
        with pytest.raises(error, match=match):
            stream.update(bad)
        assert stream.steps_seen == 3
    # a NaN late in a chunk is refused before its first steps are taken
    chunk = X[:, 3:30].copy()
    chunk[1, -1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        stream.update(chunk)
    assert stream.steps_seen == 3 and stream._features.steps_seen == 3


def test_finish_decides_with_the_classifier_of_whole_series(fitted):
    X, _ = bumps(n_cases=9, seed=6)
    stream = fitted.stream(len(X)).update(X[:, :3])
    assert not stream.decided.any()
    stream.finish([])  # no case ends at this step (a list of none reads as floats)
    assert not stream.decided.any()
    stream.finish([0, 2])
    assert list(np.flatnonzero(stream.decided)) == [0, 2]
    assert (stream.decision_steps[[0, 2]] == 3).all()
    whole = fitted.estimator_.predict_proba(X[[0, 2], :3])
    np.testing.assert_allclose(stream.predict_proba()[[0, 2]], whole, **PROBA)
    kept = stream.predict_proba()[[0, 2]]
    stream.update(X[:, 3:]).finish()  # every case: those decided stay as they are
    np.testing.assert_array_equal(stream.predict_proba()[[0, 2]], kept)
    assert stream.decided.all()
    with pytest.raises(ValueError, match="booleans"):
        stream.finish(np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="outside"):
        stream.finish([9])
    with pytest.raises(ValueError, match="no step"):
        fitted.stream(2).finish()


def test_stream_pickles_resets_and_is_a_snapshot(fitted):
    X, _ = bumps(n_cases=6, seed=7)
    stream = fitted.stream(len(X)).update(X[:, :13])
    copy = pickle.loads(pickle.dumps(stream))
    assert "lmu_sk._decisions" not in str(pickle.dumps(stream))
    stream.update(X[:, 13:])
    copy.update(X[:, 13:])
    np.testing.assert_array_equal(copy.predict_proba(), stream.predict_proba())
    np.testing.assert_array_equal(copy.decision_steps, stream.decision_steps)
    stream.reset()
    assert stream.steps_seen == 0 and not stream.decided.any()
    stream.update(X)
    np.testing.assert_array_equal(stream.decision_steps, copy.decision_steps)
    assert "decided=6" in repr(stream)


def test_a_stream_pickled_while_another_thread_updates_it_is_of_one_moment(fitted, monkeypatch):
    """A pickle or copy taken by another thread in the middle of an update (its feature
    stream advanced, its own steps and decisions not yet) mixed two moments: silently
    wrong probabilities, or a state that would not load. It now waits for the update."""
    import copy as copying
    import threading

    X, _ = bumps(n_cases=4, seed=3)
    armed, taken, threads = [], [], []

    def midway(original):
        def advance(self, *args, **kwargs):
            out = original(self, *args, **kwargs)
            if armed:
                take, stream = armed.pop()
                thread = threading.Thread(target=lambda: taken.append(take(stream)))
                thread.start()
                thread.join(timeout=0.3)  # (the update holds the stream: the copy waits)
                threads.append(thread)
            return out

        return advance

    inner = type(fitted.stream(1)._features)
    monkeypatch.setattr(inner, "update", midway(inner.update))
    monkeypatch.setattr(inner, "_update_scored", midway(inner._update_scored))
    for take in (lambda s: pickle.loads(pickle.dumps(s)), copying.copy):
        stream = fitted.stream(len(X)).update(X[:, :5])
        armed.append((take, stream))
        stream.update(X[:, 5:9])
        for thread in threads:
            thread.join()
    assert len(taken) == 2
    for snapshot in taken:
        assert snapshot.steps_seen == 9
        reference = fitted.stream(len(X)).update(X[:, :9])
        np.testing.assert_array_equal(snapshot.predict_proba(), reference.predict_proba())
        snapshot.update(X[:, 9:])
        reference.update(X[:, 9:])
        np.testing.assert_array_equal(snapshot.decision_steps, reference.decision_steps)


def test_nan_after_the_training_length_in_a_chunk_is_only_counted(fitted):
    """Steps after the training length are only counted, and step by step they may be NaN;
    a chunk crossing the training length was refused for NaN there."""
    X, _ = bumps(n_cases=6, seed=7)  # 40 steps, the training length
    longer = np.concatenate([X, np.full((6, 10), np.nan)], axis=1)
    chunked = fitted.stream(6).update(longer[:, :1]).update(longer[:, 1:])
    stepped = fitted.stream(6)
    for t in range(longer.shape[1]):
        stepped.update(longer[:, t : t + 1])
    assert chunked.steps_seen == stepped.steps_seen == 50
    np.testing.assert_array_equal(chunked.decision_steps, stepped.decision_steps)
    # (a chunk's features sum its states in another order than single steps: float64
    # rounding, ~1e-9 in the probabilities)
    np.testing.assert_allclose(chunked.predict_proba(), stepped.predict_proba(), atol=1e-8)
    # NaN before the training length in an undecided case is still refused, unchanged
    early_nan = X.copy()
    early_nan[:, 35] = np.nan
    stream = fitted.stream(6).update(X[:, :1])
    undecided = ~stream.decided
    if undecided.any():
        with pytest.raises(ValueError, match="NaN"):
            stream.update(early_nan[:, 1:])
        assert stream.steps_seen == 1


def test_a_stream_loaded_read_only_continues(fitted, tmp_path):
    """A stream loaded with joblib's mmap_mode='r' held read-only decisions: its next
    update failed with NumPy's 'output array is read-only' after the features had moved
    on (steps_seen counted a step no decision saw)."""
    joblib = pytest.importorskip("joblib")
    X, _ = bumps(n_cases=6, seed=7)
    stream = fitted.stream(len(X)).update(X[:, :3])
    joblib.dump(stream, tmp_path / "stream.joblib")
    loaded = joblib.load(tmp_path / "stream.joblib", mmap_mode="r")
    loaded.update(X[:, 3:])
    stream.update(X[:, 3:])
    assert loaded.steps_seen == stream.steps_seen
    np.testing.assert_array_equal(loaded.decision_steps, stream.decision_steps)
    np.testing.assert_array_equal(loaded.predict_proba(), stream.predict_proba())


# ---------------------------------------------------------------------------- layouts
def test_unequal_lengths_and_channels_decide_each_series_as_it_ends():
    rng = np.random.default_rng(8)
    lengths = rng.integers(20, 41, 60)
    X, y = bumps(n_channels=2, lengths=lengths)
    model = small(checkpoints=8).fit(X, y)
    assert model.n_features_in_ == lengths.max()
    test_lengths = rng.integers(8, 50, 15)
    X_test, _ = bumps(n_cases=15, n_steps=50, n_channels=2, seed=9, lengths=test_lengths)
    decisions = model.decide(X_test)
    for i, x in enumerate(X_test):
        stream = model.stream(1)
        for t in range(len(x)):
            stream.update(x[t][None])  # one step of one stream: (1, n_channels)
            if stream.decided[0]:
                break
        stream.finish()
        assert stream.decision_steps[0] == decisions.steps[i], i
        assert stream.predict()[0] == decisions.labels[i]
        np.testing.assert_allclose(stream.predict_proba()[0], decisions.proba[i], **PROBA)
    np.testing.assert_allclose(decisions.earliness, decisions.steps / test_lengths)
    assert (decisions.steps <= np.minimum(test_lengths, model.n_features_in_)).all()


def test_channels_first_layout():
    X, y = bumps(n_channels=2)
    first = np.ascontiguousarray(X.transpose(0, 2, 1))
    last = small(checkpoints=4).fit(X, y)
    model = LMUEarlyClassifier(LMUClassifier(device="cpu", channels_first=True), 4).fit(first, y)
    np.testing.assert_array_equal(model.decide(first).steps, last.decide(X).steps)
    stream = model.stream(len(X)).update(first[:, :, :10])  # chunks as (n, channels, steps)
    stream.update(first[:, :, 10])  # one step as (n, channels)
    reference = last.stream(len(X)).update(X[:, :11])
    np.testing.assert_array_equal(stream.decision_steps, reference.decision_steps)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"cost": -0.1}, ValueError, "cost must be >= 0"),
        ({"cost": "high"}, TypeError, "cost must be None"),
        ({"cost": np.nan}, ValueError, "cost must be None"),
        ({"cost": np.inf}, ValueError, "cost must be None"),
        ({"checkpoints": 0}, ValueError, "checkpoints must be"),
        ({"checkpoints": [0.5, 2.0]}, ValueError, "checkpoints must be"),
        ({"estimator": LMUClassifier(head="dense")}, ValueError, "needs the ridge head"),
        ({"estimator": RidgeHeadClassifier()}, TypeError, "must be an LMUClassifier"),
    ],
)
def test_bad_parameters_raise_at_fit(params, error, match):
    X, y = bumps(n_cases=12)
    params = {"estimator": LMUClassifier(device="cpu"), **params}
    with pytest.raises(error, match=match):
        LMUEarlyClassifier(**params).fit(X, y)


def test_before_fit_and_wrong_channels(fitted):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LMUEarlyClassifier().decide(np.ones((2, 5)))
    with pytest.raises(NotFittedError):
        LMUEarlyClassifier().stream(2)
    with pytest.raises(ValueError, match="channel"):
        fitted.decide(np.ones((2, 5, 3)))
    with pytest.raises(ValueError, match="NaN"):
        fitted.decide(np.full((2, 5), np.nan))


def test_string_labels_and_two_classes():
    X, y = bumps()
    keep = y < 2
    labels = np.array(["early", "middle"])[y[keep]]
    model = small(checkpoints=5).fit(X[keep], labels)
    assert list(model.classes_) == ["early", "middle"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        decisions = model.decide(X[keep])
    assert set(decisions.labels) <= {"early", "middle"}
    assert model.stream(3).update(X[:3]).predict().dtype == labels.dtype


@pytest.mark.parametrize("kind", ["pooled", "final", "mean"])
def test_a_feature_stream_keeps_the_rows_it_is_told_and_goes_on_exactly(kind):
    """What the early stream does to the cases it has decided: the rows kept carry on as
    they would have."""
    from lmu_sk import LMUFeatures, LMUPooledFeatures

    X, _ = bumps(n_cases=7, n_channels=2)
    if kind == "pooled":
        features = LMUPooledFeatures(thetas=[4, 16], device="cpu").fit(X)
    else:
        features = LMUFeatures(order=4, theta=10, output=kind, device="cpu").fit(X)
    whole = features.stream(7).update(X[:, :13])
    part = features.stream(7).update(X[:, :13])
    rows = np.array([1, 4, 5])
    part._keep_rows(rows)
    assert part.n_streams == 3
    whole.update(X[:, 13:])
    part.update(X[rows, 13:])
    np.testing.assert_array_equal(part.transform(), whole.transform()[rows])


def test_the_stream_stops_reading_the_cases_it_has_decided(fitted):
    X, _ = bumps(n_cases=40, seed=10)
    stream = fitted.stream(len(X))
    for t in range(X.shape[1]):
        stream.update(X[:, t])
        carried = stream._features.n_streams if len(stream._rows) else 0
        # at most an eighth of the carried cases decided are kept (copying costs)
        assert carried - (~stream.decided).sum() <= max(1, carried // 8)
    assert stream.decided.all() and len(stream._rows) == 0


def test_screened_channels_decide_in_the_stream_as_in_batch():
    """With the classifier's channel screening (``channels``), the checkpoints' heads read
    the channels it keeps, online as in batch."""
    X, y = bumps(n_cases=45, n_channels=2)
    rng = np.random.default_rng(11)
    noise = rng.standard_normal((45, 40, 4))
    X = np.concatenate([noise[:, :, :2], X, noise[:, :, 2:]], axis=2)  # signal in 2 and 3
    model = LMUEarlyClassifier(LMUClassifier(device="cpu", channels=2), checkpoints=5)
    model.fit(X, y)
    assert sorted(model.estimator_.features_.channels_) == [2, 3]
    X_test, _ = bumps(n_cases=9, n_channels=2, seed=12)
    X_test = np.concatenate(
        [rng.standard_normal((9, 40, 2)), X_test, rng.standard_normal((9, 40, 2))], axis=2
    )
    decisions = model.decide(X_test)
    stream = model.stream(9)
    for t in range(40):
        stream.update(X_test[:, t])
    np.testing.assert_array_equal(stream.decision_steps, decisions.steps)
    np.testing.assert_array_equal(stream.predict(), decisions.labels)
    np.testing.assert_allclose(stream.predict_proba(), decisions.proba, **PROBA)


def test_decide_equals_the_stream_for_float32_input_with_channel_sums():
    """decide validates its input as float64 and the stream took float32 chunks as given:
    with the pair sums made in each one's precision, their probabilities parted by 5e-9
    (a case near the threshold could be decided at another step). The sums are made in
    float64 on both."""
    rng = np.random.default_rng(4)
    X, y = bumps(n_channels=3, seed=4)
    model = LMUEarlyClassifier(
        LMUClassifier(device="cpu", channel_sums=True, channels_first=False), checkpoints=6
    ).fit(X, y)
    T = (X[:8] + 0.1 * rng.standard_normal(X[:8].shape)).astype(np.float32)
    decided = model.decide(T)
    stream = model.stream(len(T)).update(T)
    np.testing.assert_array_equal(stream.predict_proba(), decided.proba)


def test_a_class_weight_dict_with_classes_that_end_before_a_checkpoint():
    """Checkpoints past the shortest series see only the classes that reach them: a dict
    naming a class that ended (and leaving out one that reaches them) was refused there as
    naming 'no class of y', where LMUClassifier fits the same data."""
    rng = np.random.default_rng(0)
    y = np.arange(60) % 3
    X = [rng.standard_normal(30 if c == 2 else 80) + c for c in y]  # class 2 ends at 30
    weights = {0: 1.0, 2: 5.0}
    model = LMUEarlyClassifier(LMUClassifier(order=4, class_weight=weights)).fit(X, y)
    pairs = zip(model.heads_, model.checkpoints_[:-1], strict=True)
    late = [head for head, steps in pairs if head and steps > 30]
    assert late and all(h.classes_.tolist() == [0, 1] for h in late)
    assert set(model.predict(X)) <= {0, 1, 2}


def test_checkpoint_heads_beyond_memory_are_refused_before_the_first(monkeypatch):
    """Each checkpoint's head is small, and none was checked: 399 heads of 100 classes
    took 4.7 GB against a 3 GB budget. Their total is estimated before the first."""
    import lmu_sk._memory as memory
    import lmu_sk.early as early

    X, y = np.random.default_rng(0).standard_normal((40, 30)), np.arange(40) % 4
    model = LMUEarlyClassifier(LMUClassifier(order=4), checkpoints=20)
    # little memory left once the classifier of whole series is fitted
    small = []
    fit_checkpoints = LMUEarlyClassifier._fit_checkpoints

    def after_the_classifier(self, *args, **kwargs):
        small.append(True)
        return fit_checkpoints(self, *args, **kwargs)

    monkeypatch.setattr(LMUEarlyClassifier, "_fit_checkpoints", after_the_classifier)
    monkeypatch.setattr(
        memory, "available_memory", lambda **kwargs: 2_000_000 if small else 1 << 40
    )
    calls = []
    monkeypatch.setattr(early, "RidgeHeadClassifier", lambda **kw: calls.append(kw))
    with pytest.raises(ValueError, match=r"19 checkpoint heads .* fewer checkpoints"):
        model.fit(X, y)
    assert not calls


def test_values_beyond_float32_in_a_batch_name_x(fitted):
    """``decide`` and ``predict`` read a batch step by step through the stream, whose
    range error named ``U`` and a stream the user never made."""
    model = fitted
    huge = bumps()[0].copy()
    huge[0, 0] = 1e39
    for method in (model.decide, model.predict):
        with pytest.raises(
            ValueError, match=r"^X holds finite values .* beyond the largest"
        ) as error:
            method(huge)
        assert "stream" not in str(error.value)
