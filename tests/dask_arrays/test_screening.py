"""Channel screening of the pooled features on dask arrays: a bounded, evenly spaced sample
of rows and their targets, screened by the in-memory fit.

Everything runs on the synchronous scheduler. The comparisons with the in-memory fit are
exact: both fits run the same code on the same rows.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from channel_bumps import bumps  # noqa: E402

from lmu_sk import LMUClassifier, LMUPooledFeatures, pooled  # noqa: E402
from lmu_sk._dask import evenly_spaced_sample  # noqa: E402
from lmu_sk._memory import MemoryBudgetError  # noqa: E402


def assert_same_fit(got: LMUPooledFeatures, expected: LMUPooledFeatures) -> None:
    np.testing.assert_array_equal(got.channels_, expected.channels_)
    np.testing.assert_array_equal(got.channel_scores_, expected.channel_scores_)
    assert got.spec_ == expected.spec_
    for a, b in zip(got.biases_, expected.biases_, strict=True):
        np.testing.assert_array_equal(a, b)


class SampleSpy:
    """Records the rows :func:`evenly_spaced_sample` gathers."""

    def __init__(self, monkeypatch):
        self.rows = []
        monkeypatch.setattr(pooled._dask, "evenly_spaced_sample", self)

    def __call__(self, X, y, n_rows):
        rows, targets = evenly_spaced_sample(X, y, n_rows)
        self.rows.append(len(rows))
        return rows, targets


@pytest.mark.parametrize("dask_targets", [False, True], ids=["numpy-y", "dask-y"])
def test_many_channels_keep_the_informative_ones_from_a_bounded_sample(
    sync, monkeypatch, dask_targets
):
    """More rows than the sample: the fit is the in-memory fit of the evenly spaced sample
    (and its targets), which keeps the two channels that carry the class."""
    monkeypatch.setattr(pooled, "SCREEN_SAMPLES", 100)
    spy = SampleSpy(monkeypatch)
    X, y = bumps(160, 40, informative=(7, 31))
    Xd = da.from_array(X, chunks=(50, 60, 40))
    yd = da.from_array(y, chunks=50) if dask_targets else y
    f = LMUPooledFeatures(n_biases=4).fit(Xd, yd)
    assert spy.rows == [100]
    assert f.channels_.tolist() == [7, 31]
    take = np.unique(np.linspace(0, 159, 100).round().astype(int))
    assert_same_fit(f, LMUPooledFeatures(n_biases=4).fit(X[take], y[take]))
    # bounded: the features of the two kept channels, not of the forty given
    alone = LMUPooledFeatures(n_biases=4, channel_sums=False).fit(X[:, :, [7, 31]])
    assert f.n_features_out_ == alone.n_features_out_
    everything = LMUPooledFeatures(n_biases=4, channels="all").fit(Xd)
    assert everything.channel_scores_ is None and len(everything.channels_) == 40
    assert f.n_features_out_ * 5 < everything.n_features_out_
    np.testing.assert_array_equal(f.transform(Xd[:8]).compute(), f.transform(X[:8]))


@pytest.mark.parametrize("channels_first", [False, True])
@pytest.mark.parametrize("dask_targets", [False, True], ids=["numpy-y", "dask-y"])
def test_a_sample_that_holds_every_row_gives_the_in_memory_fit(sync, channels_first, dask_targets):
    X, y = bumps(120, 24, informative=(3, 20))
    if channels_first:
        X = np.ascontiguousarray(X.transpose(0, 2, 1))
    Xd = da.from_array(X, chunks=(40, *X.shape[1:]))
    yd = da.from_array(y, chunks=40) if dask_targets else y
    params = dict(n_biases=4, channels_first=channels_first)
    on_dask = LMUPooledFeatures(**params).fit(Xd, yd)
    in_memory = LMUPooledFeatures(**params).fit(X, y)
    assert in_memory.channel_scores_ is not None  # a screening ran
    assert_same_fit(on_dask, in_memory)
    # channels=k too, and fit_transform passes y on
    F = LMUPooledFeatures(**params, channels=1).fit_transform(Xd, yd).compute()
    np.testing.assert_array_equal(F, LMUPooledFeatures(**params, channels=1).fit_transform(X, y))


def test_channels_k_without_a_target_is_the_in_memory_error(no_compute):
    X, _ = bumps(30, 6, informative=(1,))
    Xd = da.from_array(X, chunks=10)
    message = r"pass y to fit, or use channels='all'"
    with pytest.raises(ValueError, match=message):
        LMUPooledFeatures(channels=2).fit(X)
    with pytest.raises(ValueError, match=message):
        LMUPooledFeatures(channels=2).fit(Xd)


def test_targets_of_the_wrong_length_are_an_error_before_anything_is_computed(no_compute):
    X, y = bumps(30, 20, informative=(1,))
    Xd = da.from_array(X, chunks=10)
    message = (
        r"y must hold one target \(or one row of targets\) per sequence to screen the "
        r"channels: 30 sequences"
    )
    for targets in (y[:-1], da.from_array(y[:-1], chunks=10), y.reshape(15, 2)):
        with pytest.raises(ValueError, match=message):
            LMUPooledFeatures().fit(Xd, targets)
        with pytest.raises(ValueError, match=message):
            LMUPooledFeatures(channels=3).fit(Xd, targets)
    # in memory, checked whether or not it screens (before the screening's own check)
    with pytest.raises(ValueError, match=r"one row of targets\) per sequence: 30 sequences"):
        LMUPooledFeatures().fit(X, y[:-1])


def test_the_sample_shrinks_to_half_of_max_memory(sync, monkeypatch, caplog):
    """A row of the sample costs its values (as given and as a float64 copy) and its
    screening features; half of ``max_memory`` holds 50 of them here."""
    X, y = bumps(120, 20, informative=(4,))
    n_steps, n_channels = X.shape[1:]
    # the count the estimate uses is that of the screening's features
    screen = LMUPooledFeatures(
        thetas=[60 * w for w in pooled._SCREEN_WINDOWS],
        **pooled._SCREEN_PARAMS,
        channels="all",
        channel_sums=False,
    ).fit(X[:4, :, :2])
    assert pooled._screen_features_per_channel() * 2 == screen.n_features_out_
    per_row = n_steps * n_channels * 16 + 8 * n_channels * pooled._screen_features_per_channel()
    spy = SampleSpy(monkeypatch)
    Xd = da.from_array(X, chunks=40)
    with caplog.at_level(logging.WARNING, logger="lmu_sk"):
        f = LMUPooledFeatures(n_biases=4, max_memory=2 * 50 * per_row).fit(Xd, y)
    assert spy.rows == [50]
    assert f.channels_.tolist() == [4]
    assert any("screened on 50 of 120" in r.getMessage() for r in caplog.records)
    with pytest.raises(MemoryBudgetError, match="screening of 20 channels"):
        LMUPooledFeatures(max_memory=per_row).fit(Xd, y)


def test_the_default_classifier_screens_dask_input(sync):
    X, y = bumps(160, 24, informative=(5,))
    X_test, y_test = bumps(60, 24, informative=(5,), seed=1)
    Xd = da.from_array(X, chunks=(80, 60, 24))
    clf = LMUClassifier().fit(Xd, da.from_array(y, chunks=80))
    assert clf.features_.channels_.tolist() == [5]
    assert clf.score(X_test, y_test) > 0.9
    np.testing.assert_array_equal(
        clf.predict(da.from_array(X_test, chunks=30)).compute(), clf.predict(X_test)
    )


def test_an_integer_dask_array_is_screened_on_the_rows_in_memory_takes(sync):
    """Under max_memory the dask path sized its sample by the raw dtype (2 bytes for
    int16) where the fit reads the rows as float64: it gathered 71 rows, the in-memory fit
    it ran on them took 65 of those, and the memory fit 65 of the whole: other channels."""
    rng = np.random.default_rng(0)
    y = np.arange(1000) % 2
    X = (rng.standard_normal((1000, 12, 20)) * 100).astype(np.int16)
    X[:, :, 9] += (30 * y[:, None]).astype(np.int16)
    params = dict(channels=3, max_memory="2MB", n_biases=2, thetas=[3, 12])
    memory = LMUPooledFeatures(**params).fit(X, y)
    lazy = LMUPooledFeatures(**params).fit(da.from_array(X, chunks=(300, 12, 20)), y)
    assert lazy.channels_.tolist() == memory.channels_.tolist()
    np.testing.assert_array_equal(lazy.channel_scores_, memory.channel_scores_)
