"""Dask arrays fit and transform as NumPy arrays do: the ridge head's float64 features and
the float32 rounding check of constant columns, the input's checks, no progress shown, the
channel layout warned of once, and held-out rows of any layout.

All on dask's synchronous scheduler. Tolerances: the same features, gathered, give the same
standardization to float64 rounding (1e-12 relative allowed); float32 features summed in
other blocks differ by their rounding, so the dense head's scale agrees to 1e-6.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor  # noqa: E402
from lmu_sk._dask import GATHER_LIMIT_KEY  # noqa: E402


def with_a_constant_channel(n=80, seed=0):
    """float32 sequences of 20 steps whose second channel is the constant 0.7."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 20, 2)).astype(np.float32)
    X[:, :, 1] = 0.7
    return X, (X[:, -5:, 0].sum(axis=1) > 0).astype(int)


@pytest.mark.parametrize("Model", [LMUClassifier, LMURegressor])
def test_the_ridge_heads_dask_fit_equals_the_in_memory_fit(sync, Model):
    """float32 input: the ridge head's features are computed in float64, as in memory
    (they were the transformer's float32, and a constant channel's rounding became its
    scale: accuracy 0.95 -> 0.75, regression off by 0.34)."""
    X, y = with_a_constant_channel()
    params = dict(channels_first=False, head="ridge", feature_output="final", order=8)
    in_memory = Model(**params).fit(X, y)
    on_dask = Model(**params).fit(da.from_array(X, chunks=20), y)
    np.testing.assert_allclose(on_dask.feature_scale_, in_memory.feature_scale_, rtol=1e-12)
    np.testing.assert_allclose(
        on_dask.predict(da.from_array(X, chunks=20)).compute(),
        in_memory.predict(X),
        rtol=1e-9,
        atol=1e-9,
    )


@pytest.mark.parametrize("gather_limit", [None, 1000])
def test_a_constant_channel_is_constant_for_the_dense_heads_dask_fit(sync, gather_limit):
    """The float32 rounding of a constant channel's features is measured as in memory,
    whether the features are gathered or streamed block by block: its columns get scale 1,
    as the in-memory fit gives them (they were scaled by their rounding)."""
    X, y = with_a_constant_channel()
    params = dict(channels_first=False, head="dense", feature_output="final", order=8)
    params.update(max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        in_memory = LMUClassifier(**params).fit(X, y)
        with dask.config.set({GATHER_LIMIT_KEY: gather_limit}):
            on_dask = LMUClassifier(**params).fit(da.from_array(X, chunks=20), y)
    constant = in_memory.feature_scale_ == 1.0
    assert constant.any()
    np.testing.assert_array_equal(on_dask.feature_scale_ == 1.0, constant)
    np.testing.assert_allclose(on_dask.feature_scale_, in_memory.feature_scale_, rtol=1e-6)


@pytest.mark.parametrize("chunks", [20, 30])
def test_rows_of_tiny_values_are_read_whatever_the_chunks(sync, chunks):
    """Rows of values below float32's normal range beside ordinary ones are read as in
    memory (which refuses only an input whose every value is that small), whatever the
    chunks: a check per block refused a block of them alone."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 30))
    X[:20] *= 1e-41
    model = LMUFeatures(order=4, theta=10, dtype="float32").fit(X)
    np.testing.assert_array_equal(
        model.transform(da.from_array(X, chunks=(chunks, 30))).compute(), model.transform(X)
    )


@pytest.mark.parametrize("Transformer", [LMUFeatures, LMUPooledFeatures])
def test_dask_transforms_show_no_progress(sync, Transformer):
    """``verbose`` shows no progress for dask arrays, as documented (the probe and every
    task printed a bar)."""
    X = np.random.default_rng(2).standard_normal((40, 30))
    model = Transformer(order=4, verbose=True).fit(X)
    shown = io.StringIO()
    with contextlib.redirect_stderr(shown):
        model.transform(da.from_array(X, chunks=10)).compute()
    assert shown.getvalue() == ""


def test_the_channel_layout_is_warned_of_once_per_call(sync):
    """``channels_first=None`` with fewer steps than channels: one warning for ``fit`` and
    one for ``transform``, not one more per block and for the probe."""
    X = da.from_array(np.random.default_rng(3).standard_normal((6, 2, 5)), chunks=(1, -1, -1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LMUFeatures(order=2).fit(X).transform(X).compute()
    layout = [w for w in caught if "reads X of shape (6, 2, 5)" in str(w.message)]
    assert len(layout) == 2 and len(caught) == 2


def test_held_out_sequences_as_a_list_beside_a_dask_x(sync):
    """A list of held-out sequences with a dask ``X``, as with a NumPy ``X`` (it raised
    AttributeError: 'list' object has no attribute 'shape')."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 12))
    y = (X[:, -3:].sum(axis=1) > 0).astype(int)
    params = dict(head="dense", max_iter=2, early_stopping=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        on_dask = LMUClassifier(**params).fit(
            da.from_array(X, chunks=9), y, X_val=list(X[:5]), y_val=y[:5]
        )
        in_memory = LMUClassifier(**params).fit(X, y, X_val=list(X[:5]), y_val=y[:5])
    assert len(on_dask.validation_scores_) == on_dask.n_iter_
    np.testing.assert_allclose(on_dask.validation_scores_, in_memory.validation_scores_, rtol=1e-6)


@pytest.mark.parametrize("shape", [(6,), (2, 3, 4, 5)])
def test_a_dask_array_of_other_dimensions_is_refused_naming_them(shape):
    """The message names the dimensions (it advised a transpose of three axes)."""
    X = da.zeros(shape, chunks=2)
    with pytest.raises(ValueError, match=rf"{len(shape)} dimension\(s\)") as error:
        LMUFeatures(order=2).fit(X)
    assert "transpose" not in str(error.value)


def test_held_out_errors_name_x_val_and_y_val_beside_a_dask_x(sync):
    """As in memory (the dask fit gave "X has 10 sequences but y has 8 targets")."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 12, 2))
    y = (X[:, -3:, 0].sum(axis=1) > 0).astype(int)
    params = dict(head="dense", early_stopping=True, max_iter=2, channels_first=False)
    Xd = da.from_array(X, chunks=20)
    with pytest.raises(ValueError, match="X_val holds 10 sequences but y_val 8 targets"):
        LMUClassifier(**params).fit(Xd, y, X_val=X[:10], y_val=y[:8])
    with pytest.raises(ValueError, match=r"In X_val .*1 channel\(s\)"):
        LMUClassifier(**params).fit(Xd, y, X_val=X[:10, :, :1], y_val=y[:10])


def test_held_out_input_of_unknown_or_wrong_layout_gets_its_own_message(sync):
    """A dask y_val of unknown length is aligned as before (it was refused as "nan
    targets"); a dask X_val of unknown chunk sizes and a 1-D X_val get their own messages,
    named X_val (not a length error counting steps as sequences, nor dask's raw one); a
    TypeError of X_val is named too."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 20)).astype(np.float32)
    y = (X[:, :5].sum(axis=1) > 0).astype(int)
    X_val = rng.standard_normal((20, 20)).astype(np.float32)
    y_val = (X_val[:, :5].sum(axis=1) > 0).astype(int)
    params = dict(head="dense", hidden_layer_sizes=(8,), max_iter=3, early_stopping=True)
    Xd = da.from_array(X, chunks=20)
    lazy = da.from_array(y_val, chunks=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter reached
        LMUClassifier(**params).fit(Xd, y, X_val=X_val, y_val=lazy[lazy > -1])
    unknown = da.from_array(X_val, chunks=10)
    with pytest.raises(ValueError, match=r"In X_val .*compute_chunk_sizes"):
        LMUClassifier(**params).fit(Xd, y, X_val=unknown[unknown[:, 0] > -100], y_val=y_val)
    with pytest.raises(ValueError, match=r"In X_val .*single sequence"):
        LMUClassifier(**params).fit(X, y, X_val=X_val[0], y_val=y_val[:1])
    with pytest.raises(TypeError, match=r"In X_val .*real numbers"):
        LMUClassifier(**params).fit(
            Xd, y, X_val=da.from_array(np.full((20, 20), "a")), y_val=y_val
        )
