"""Channel screening of the pooled features: the statistics, the choice, and the features
of the kept channels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
from channel_bumps import bumps, short_bursts

from lmu_sk import LMUClassifier, LMUPooledFeatures, LMURegressor, pooled
from lmu_sk._screening import choose_channels, f_statistics
from lmu_sk.pooled import MAX_CHANNELS


def test_f_statistics_equal_scipy_for_classes_and_for_a_continuous_target():
    rng = np.random.default_rng(1)
    F = rng.standard_normal((40, 5))
    y = np.repeat(["a", "b", "c", "d"], 10)
    F[:, 0] += (y == "b") * 1.5
    stat, df_between, df_within = f_statistics(F, y)
    expected = [scipy.stats.f_oneway(*(F[y == c, j] for c in "abcd"))[0] for j in range(5)]
    np.testing.assert_allclose(stat, expected, rtol=1e-10)  # float64 sums of 40 rows
    assert (df_between, df_within) == (3, 36)
    target = F[:, 1] + rng.standard_normal(40)
    stat, df_between, df_within = f_statistics(F, target)
    r = np.array([scipy.stats.pearsonr(F[:, j], target)[0] for j in range(5)])
    np.testing.assert_allclose(stat, r**2 * 38 / (1 - r**2), rtol=1e-10)
    assert (df_between, df_within) == (1, 38)


def test_f_statistics_of_constant_and_perfectly_separating_columns():
    y = np.array([0, 0, 1, 1])
    F = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 5.0], [1.0, 5.0]])
    stat, _, _ = f_statistics(F, y)
    assert stat[0] == 0.0 and stat[1] == np.inf


def test_choose_channels_keeps_the_significant_highest_first_at_most_the_cap():
    scores = np.array([1.0, 50.0, 2.0, 40.0, 30.0])
    assert choose_channels(scores, 20.0, 16).tolist() == [1, 3, 4]
    assert choose_channels(scores, 20.0, 2).tolist() == [1, 3]
    # none significant: the highest ones up to the cap
    assert choose_channels(scores, 100.0, 2).tolist() == [1, 3]


def test_screening_windows_keep_16_steps_beyond_256_steps():
    """1/16, 1/4 and all of the length, as they were, up to 256 steps; beyond, 16 steps
    exactly, the length exactly, and their geometric mean."""
    for n_steps in range(1, 257):
        expected = [max(1.0, fraction * n_steps) for fraction in (1 / 16, 1 / 4, 1.0)]
        assert pooled._screening_thetas(n_steps) == expected
    for n_steps in (257, 600, 20_000, 10**7):
        finest, middle, whole = pooled._screening_thetas(n_steps)
        assert finest == 16.0 and whole == float(n_steps)
        assert middle == pytest.approx((16.0 * n_steps) ** 0.5, rel=1e-12)  # (rounding)


def test_screening_of_long_series_sees_events_of_a_few_steps(monkeypatch):
    """A channel whose class is the kind of a burst 6 to 12 steps wide in 600 steps is
    significant and kept alone; with the shortest screening window at 1/16 of the length
    (37.5 steps, as before) no channel was, and the 16 best were kept."""
    X, y = short_bursts(600, 20, 600, informative=5)
    assert LMUPooledFeatures().fit(X, y).channels_.tolist() == [5]
    monkeypatch.setattr(pooled, "_screening_thetas", lambda n: [n / 16, n / 4, float(n)])
    assert len(LMUPooledFeatures().fit(X, y).channels_) == MAX_CHANNELS


def test_screening_keeps_the_informative_channels_of_many():
    X, y = bumps(120, 40, informative=(7, 31))
    f = LMUPooledFeatures(n_biases=4).fit(X, y)
    assert f.channels_.tolist() == [7, 31]
    assert f.channel_scores_.shape == (40,)
    assert np.argsort(f.channel_scores_)[-2:].tolist() in ([7, 31], [31, 7])
    # the features are those of the kept channels alone
    alone = LMUPooledFeatures(n_biases=4, channel_sums=False).fit(X[:, :, [7, 31]])
    np.testing.assert_array_equal(f.transform(X[:5]), alone.transform(X[:5, :, [7, 31]]))
    names = f.get_feature_names_out()
    # the two kept channels alone: 'auto' adds no pairs to the channels a screening kept
    assert {n.split("_")[1][1:] for n in names} == {"7", "31"}
    assert f.mixing_ is None
    # True adds them: the kept channels and their sum
    summed = LMUPooledFeatures(n_biases=4, channel_sums=True).fit(X, y)
    assert {n.split("_")[1][1:] for n in summed.get_feature_names_out()} == {"7", "31", "7+31"}
    assert summed.mixing_.shape == (40, 3)


def test_few_channels_and_no_target_keep_every_channel():
    X, y = bumps(40, MAX_CHANNELS, informative=(3,))
    assert LMUPooledFeatures(n_biases=2).fit(X, y).channel_scores_ is None
    X, y = bumps(40, MAX_CHANNELS + 4, informative=(3,))
    unsupervised = LMUPooledFeatures(n_biases=2).fit(X)
    assert unsupervised.channels_.tolist() == list(range(MAX_CHANNELS + 4))
    everything = LMUPooledFeatures(n_biases=2, channels="all").fit(X, y)
    assert everything.channel_scores_ is None and len(everything.channels_) == MAX_CHANNELS + 4


def test_an_integer_at_least_the_channel_count_still_screens():
    """``channels=k`` is "at most k, screened": from k equal to the channel count on, every
    channel was kept unscreened (one more than the count: 8x the features). Without a
    target, as many as k or fewer are all kept (nothing to screen on)."""
    X, y = bumps(80, 6, informative=(1, 2, 4))
    below = LMUPooledFeatures(n_biases=2, channels=5).fit(X, y)
    for k in (6, 7, 100):
        f = LMUPooledFeatures(n_biases=2, channels=k).fit(X, y)
        assert f.channel_scores_ is not None
        assert set(f.channels_.tolist()) <= {1, 2, 4}
        np.testing.assert_array_equal(f.channels_, below.channels_)
    assert LMUPooledFeatures(n_biases=2, channels=6).fit(X).channels_.tolist() == list(range(6))


def test_an_integer_caps_the_channels_and_needs_the_target():
    X, y = bumps(80, 6, informative=(1, 2, 4))
    f = LMUPooledFeatures(n_biases=2, channels=2).fit(X, y)
    assert len(f.channels_) == 2 and set(f.channels_.tolist()) <= {1, 2, 4}
    with pytest.raises(ValueError, match="pass y to fit, or use channels='all'"):
        LMUPooledFeatures(channels=2).fit(X)
    with pytest.raises(ValueError, match=r"one target .*per sequence"):
        LMUPooledFeatures(channels=2).fit(X, y[:-1])
    with pytest.raises(ValueError, match=r"one target .*per sequence"):
        LMUPooledFeatures(channels=2).fit(X, y[:, None, None])
    for bad in (0, -1):
        with pytest.raises(ValueError, match="channels"):
            LMUPooledFeatures(channels=bad).fit(X, y)
    for bad in (1.5, "some", True):
        with pytest.raises((TypeError, ValueError), match="channels"):
            LMUPooledFeatures(channels=bad).fit(X, y)


def test_the_features_are_bounded_whatever_the_channel_count():
    sizes = []
    for n_channels in (20, 80):
        X, y = bumps(60, n_channels, informative=(0,))
        sizes.append(LMUPooledFeatures(n_biases=2).fit(X, y).n_features_out_)
    few = LMUPooledFeatures(n_biases=2).fit(*bumps(60, 1, informative=(0,)))
    assert max(sizes) <= few.n_features_out_


def test_the_default_models_screen_and_stream_the_kept_channels():
    X, y = bumps(160, 24, informative=(5,))
    X_test, y_test = bumps(60, 24, informative=(5,), seed=1)
    clf = LMUClassifier().fit(X, y)
    assert clf.features_.channels_.tolist() == [5]
    assert clf.score(X_test, y_test) > 0.9
    stream = clf.stream(len(X_test))
    stream.update(X_test[:, :25])
    stream.update(X_test[:, 25:])
    assert (stream.predict() == clf.predict(X_test)).all()
    target = np.where(y == 1, 1.0, -1.0) + 0.1 * np.random.default_rng(2).standard_normal(160)
    reg = LMURegressor().fit(X, target)
    assert reg.features_.channels_.tolist() == [5]


def test_several_targets_screen_on_each_ones_best_channels():
    """Two outputs, each in a channel of its own: both channels are kept, a channel's
    score its best over the outputs; the correction counts every pair of feature and
    output (their degrees of freedom differ here: classes and a continuous target)."""
    from lmu_sk._screening import channel_scores

    X, y = bumps(120, 30, informative=(4,))
    other = X[:, :, 21].mean(axis=1)  # a continuous target in channel 21
    Y = np.column_stack([y, other])
    f = LMUPooledFeatures(n_biases=2).fit(X, Y)
    assert f.channels_.tolist() == [4, 21]
    rng = np.random.default_rng(0)
    F = rng.standard_normal((50, 6))
    labels = np.repeat([0, 1], 25)
    F[:, 0] += labels
    both, threshold = channel_scores(F, np.arange(6) // 2, 3, np.column_stack([labels, labels]))
    one, threshold_one = channel_scores(F, np.arange(6) // 2, 3, labels)
    np.testing.assert_allclose(both, one, rtol=1e-12)  # the same output twice: the same best
    assert threshold > threshold_one  # twice the comparisons: a stricter bar


@pytest.mark.parametrize("Model", [LMUClassifier, LMURegressor])
def test_a_column_of_targets_screens_as_its_vector(Model):
    """y of shape (n, 1) (a one-column DataFrame) screens as y.ravel(): the same channels
    and features, not every channel."""
    X, y = bumps(80, 24, informative=(9,))
    target = y if Model is LMUClassifier else np.where(y == 1, 1.0, -1.0)
    flat = Model(n_jobs=1).fit(X, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the classifier's DataConversionWarning
        column = Model(n_jobs=1).fit(X, target[:, None])
    assert column.features_.channels_.tolist() == flat.features_.channels_.tolist() == [9]
    np.testing.assert_allclose(column.predict(X[:10]).ravel(), flat.predict(X[:10]), atol=1e-12)


def test_the_composites_pass_channels_to_the_pooled_features():
    X, y = bumps(80, 20, informative=(3,))
    everything = LMUClassifier(channels="all").fit(X, y)
    assert everything.features_.channels_.tolist() == list(range(20))
    two = LMUClassifier(channels=2).fit(X, y)
    assert len(two.features_.channels_) <= 2 and 3 in two.features_.channels_


def test_channel_sums_read_every_pair_of_the_kept_channels():
    """'auto': an input of 2 to 4 channels reads their pairwise sums too; the features
    equal those of the channels and sums given as channels of their own, and the
    stream's."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 40, 3))
    f = LMUPooledFeatures(n_biases=3).fit(X)
    assert f.mixing_.shape == (3, 6)
    summed = np.concatenate([X, X[:, :, [0, 0, 1]] + X[:, :, [1, 2, 2]]], axis=2)
    alone = LMUPooledFeatures(n_biases=3, channel_sums=False, thetas=f.thetas_).fit(summed)
    np.testing.assert_array_equal(f.transform(X[:4]), alone.transform(summed[:4]))
    read = {name.split("_")[1] for name in f.get_feature_names_out()}
    assert {"x0", "x1", "x2", "x0+1", "x0+2", "x1+2", "d1+2", "s1+2"} <= read
    stream = f.stream(4)
    stream.update(X[:4, :17])
    stream.update(X[:4, 17:])
    # float32 rounding of the 'mpv' sums in the kernel's chunks (see test_streaming)
    np.testing.assert_allclose(stream.transform(), f.transform(X[:4]), atol=1e-5, rtol=0)
    assert LMUPooledFeatures(channel_sums=False).fit(X).mixing_ is None
    assert LMUPooledFeatures(channel_sums="auto").fit(X[:, :, :1]).mixing_ is None
    assert LMUPooledFeatures(channel_sums=True).fit(
        rng.standard_normal((8, 30, 6))
    ).mixing_.shape == (6, 21)
    with pytest.raises(ValueError, match="channel_sums must be 'auto', True or False"):
        LMUPooledFeatures(channel_sums="pairs").fit(X)


def test_a_constant_column_scores_zero_whatever_its_rounding():
    """A constant column of 0.1 or 0.3 (whose centred values are rounding, not zero)
    scores 0, for classes and for a continuous target: it scored inf against classes and
    outranked the informative channels."""
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 20)
    F = np.column_stack([np.full(40, 0.1), np.full(40, 0.3), rng.standard_normal(40) + y])
    for target in (y, y + rng.standard_normal(40)):
        stat, _, _ = f_statistics(F, target)
        assert stat[0] == stat[1] == 0.0 and 0 < stat[2] < np.inf


def test_a_constant_channel_is_not_kept_over_an_informative_one():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 40)
    X = rng.standard_normal((40, 32, 20))
    X[:, :, 5] += 1.5 * y[:, None]
    X = np.concatenate([X, np.full((40, 32, 1), 0.3)], axis=2)
    params = dict(n_biases=2, thetas=[4, 16], channels=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the constant channel's offset
        features = LMUPooledFeatures(**params).fit(X, y)
    assert list(features.channels_) == [5] and features.channel_scores_[20] == 0.0


@pytest.mark.parametrize("scale", [1.0, 1e-200, 1e200])
def test_a_continuous_targets_scale_does_not_change_the_statistics(scale):
    """The squared correlation does not depend on the target's scale: at 1e-200 every
    statistic was 0 (the products underflowed), at 1e200 NaN."""
    rng = np.random.default_rng(4)
    F = rng.standard_normal((40, 4))
    target = F[:, 1] + 0.5 * rng.standard_normal(40)
    expected, _, _ = f_statistics(F, target)
    with np.errstate(all="raise"):
        stat, _, _ = f_statistics(F, target * scale, continuous=True)
    np.testing.assert_allclose(stat, expected, rtol=1e-10)


def test_the_regressor_screens_integer_valued_targets_as_continuous():
    """``LMURegressor`` screens against a continuous target whatever its values: rounded
    targets (integers to scikit-learn's type_of_target) were screened as ~40 classes and
    one of the two informative channels dropped (test R^2 0.845 -> 0.138)."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((80, 40, 24))
    y = np.round(30 * X[:, :, 7].mean(axis=1) + 30 * X[:, :, 13].mean(axis=1))
    assert list(LMURegressor().fit(X, y).features_.channels_) == [7, 13]
    assert LMUPooledFeatures(target_type="continuous").fit(X, y).target_type == "continuous"
    assert list(LMUPooledFeatures(target_type="continuous").fit(X, y).channels_) == [7, 13]


def test_all_different_numbers_are_a_continuous_target_for_auto():
    """target_type='auto' reads numbers that never repeat as a continuous target (as labels
    every sequence was a class of its own: every channel scored inf, the first kept)."""
    rng = np.random.default_rng(6)
    y = rng.permutation(40)
    X = rng.standard_normal((40, 32, 20))
    X[:, :, 7] += (y / 40 * 3)[:, None]
    params = dict(n_biases=2, thetas=[4, 16], channels=2)
    assert list(LMUPooledFeatures(**params).fit(X, y).channels_) == [7]
    repeated = np.repeat([0, 1], 20)  # integers that repeat: labels
    _, df_between, df_within = f_statistics(X[:, 0, :3], repeated)
    assert (df_between, df_within) == (1, 38)


@pytest.mark.parametrize(
    ("y", "target_type", "match"),
    [
        (np.where(np.arange(40) == 3, np.nan, 1.0), "auto", "y holds NaN or infinity"),
        (np.array([None] * 20 + [1] * 20, dtype=object), "auto", "y holds NaN"),  # missing
        (np.array(["a"] * 20 + [1] * 20, dtype=object), "auto", "cannot be compared"),
        (np.array(["a", "b"] * 20), "continuous", "must hold numbers"),
        (np.arange(40), "labels", "target_type must be"),
        (np.arange(40) * 1j, "auto", "y holds complex numbers"),  # (scikit-learn's dump)
    ],
)
def test_bad_screening_targets_are_named(y, target_type, match):
    X = np.random.default_rng(7).standard_normal((40, 8, 20))
    with pytest.raises(ValueError, match=match):
        LMUPooledFeatures(channels=2, target_type=target_type).fit(X, y)


def test_target_type_is_checked_whether_or_not_the_channels_are_screened():
    X = np.random.default_rng(8).standard_normal((30, 20, 3))
    with pytest.raises(ValueError, match="target_type must be"):
        LMUPooledFeatures(target_type="bogus").fit(X, np.arange(30) % 2)


def test_numbers_held_as_objects_screen_as_numbers():
    """A target of numbers in an object array was read as one class per sequence: every
    channel scored inf and the first 16 were kept, the informative one dropped (the
    regressor refused it as not numbers)."""
    rng = np.random.default_rng(1)
    y = rng.standard_normal(30)
    X = rng.standard_normal((30, 30, 20))
    X[:, 10:20, 19] += 2 * y[:, None]
    assert list(LMUPooledFeatures().fit(X, y.astype(object)).channels_) == [19]
    assert list(LMURegressor().fit(X, y.astype(object)).features_.channels_) == [19]


@pytest.mark.parametrize(
    ("y", "target_type", "reason"),
    [
        (np.zeros(30), "auto", "has one class"),
        (np.full(30, 3.7), "continuous", "is constant"),
        (np.random.default_rng(2).standard_normal(30), "classes", "gives every sequence a"),
    ],
)
def test_a_target_that_cannot_tell_channels_apart_keeps_the_first(y, target_type, reason):
    """Its statistics are rounding noise or inf for every channel: an arbitrary subset was
    kept silently."""
    X = np.random.default_rng(3).standard_normal((30, 20, 20))
    model = LMUPooledFeatures(target_type=target_type, n_biases=2, thetas=[4, 16])
    with pytest.warns(UserWarning, match=f"y {reason}.*the first 16 are kept"):
        model.fit(X, y)
    assert list(model.channels_) == list(range(16)) and model.channel_scores_ is None


def test_the_channel_sums_memory_is_checked_before_they_are_made():
    """1 000 channels' pairs made a 4 GB matrix before max_memory refused the fit."""
    from lmu_sk._memory import MemoryBudgetError

    X = np.random.default_rng(0).standard_normal((4, 20, 300))
    model = LMUPooledFeatures(channels="all", channel_sums=True, max_memory="10MB")
    with pytest.raises(MemoryBudgetError, match="sums of every pair of 300 channels"):
        model.set_params(channels_first=False).fit(X)


def test_the_channel_sums_of_few_channels_fit_a_small_budget():
    """The pairs' check charged the input's mixed copy against max_memory, which sizes
    the chunks' working memory: a 4-channel fit that worked under '6MB' was refused."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 500, 4)).astype(np.float32)
    model = LMUPooledFeatures(max_memory="6MB", n_biases=2, thetas=[4, 64])
    assert model.fit(X[:, :, :], rng.integers(0, 2, 400)).mixing_.shape == (4, 10)


def test_the_channel_sums_are_made_chunk_by_chunk_within_max_memory():
    """The pair sums of 16 channels (136 channels read) were made for the whole input
    before the engine's chunks: 33 MB for 300 sequences of 3.8 MB under max_memory='16MB'.
    The engine mixes each chunk as it reads it: the working memory within max_memory
    besides the features, which are the same bit for bit."""
    import tracemalloc

    X = np.random.default_rng(5).standard_normal((400, 200, 16)).astype(np.float32)
    params = dict(channels="all", channel_sums=True, thetas=[20, 200], order=2, n_biases=2)
    params["dtype"] = "float32"  # the features of the float32 input and of its float64 sums
    model = LMUPooledFeatures(**params, max_memory="16MB").fit(X[:40])
    model.transform(X[:2])  # compiled (or loaded) first: Numba's allocations are not ours
    tracemalloc.start()
    try:
        F = model.transform(X[:300])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16e6 + F.nbytes, (peak, F.nbytes)
    X64 = X[:40].astype(np.float64)  # the sums are made in float64 (exact for two float32)
    summed = np.concatenate([X64, X64 @ model.mixing_[:, 16:]], axis=2)
    alone = LMUPooledFeatures(**{**params, "channel_sums": False}).fit(summed)
    np.testing.assert_array_equal(model.transform(X[:5]), alone.transform(summed[:5]))
    np.testing.assert_array_equal(model.biases_[1], alone.biases_[1])


def test_in_memory_screening_takes_the_rows_half_of_max_memory_holds(caplog):
    """The screening of an array in memory held all its rows' float64 copy and screening
    features, whatever max_memory (22 MB under '8MB' for 400 x 200 x 20 float32); it takes
    the evenly spaced rows half of max_memory holds, as a dask array's screening does: the
    same rows, the same scores."""
    import logging

    from lmu_sk import pooled
    from lmu_sk._dask import evenly_spaced
    from lmu_sk._memory import MemoryBudgetError

    X, y = bumps(120, 20, informative=(4,))
    n_steps, n_channels = X.shape[1:]
    per_row = n_steps * n_channels * 16 + 8 * n_channels * pooled._screen_features_per_channel()
    with caplog.at_level(logging.WARNING, logger="lmu_sk"):
        f = LMUPooledFeatures(n_biases=4, max_memory=2 * 50 * per_row).fit(X, y)
    assert f.channels_.tolist() == [4]
    assert any("screened on 50 of 120" in r.getMessage() for r in caplog.records)
    rows = evenly_spaced(120, 50)
    sample = LMUPooledFeatures(n_biases=4).fit(X[rows], y[rows])
    np.testing.assert_array_equal(f.channel_scores_, sample.channel_scores_)
    listed = LMUPooledFeatures(n_biases=4, max_memory=2 * 50 * per_row).fit(list(X), y)
    np.testing.assert_array_equal(listed.channel_scores_, sample.channel_scores_)
    everything = LMUPooledFeatures(n_biases=4).fit(X, y)  # all 120 rows where they fit
    assert not np.array_equal(everything.channel_scores_, sample.channel_scores_)
    with pytest.raises(MemoryBudgetError, match="screening of 20 channels"):
        LMUPooledFeatures(max_memory=per_row).fit(X, y)
    # the rows screened must tell the channels apart, as a dask array's sample must: a
    # second class only on rows left out is one class to the screening
    rare = np.zeros(120, dtype=int)
    rare[np.setdiff1d(np.arange(120), rows)[:3]] = 1
    with pytest.warns(UserWarning, match="y has one class on the 50 evenly spaced rows"):
        f = LMUPooledFeatures(n_biases=4, max_memory=2 * 50 * per_row).fit(X, rare)
    assert f.channels_.tolist() == list(range(16)) and f.channel_scores_ is None


def test_integers_beyond_float64_held_as_objects_stay_labels():
    """Object integers above 2^53 became one float64 value: one class, no screening."""
    X = np.random.default_rng(4).standard_normal((30, 20, 20))
    y = np.array([2**60 + i % 2 for i in range(30)], dtype=object)
    X[:, :, 5] += (np.arange(30) % 2)[:, None] * 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LMUPooledFeatures(n_biases=2, thetas=[4, 16]).fit(X, y)
    assert 5 in model.channels_ and model.channel_scores_ is not None


def test_a_target_of_no_columns_is_refused_clearly():
    X = np.random.default_rng(5).standard_normal((30, 20, 20))
    with pytest.raises(ValueError, match=r"one target .* per sequence"):
        LMUPooledFeatures().fit(X, np.empty((30, 0)))
