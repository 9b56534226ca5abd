"""Sequences of different lengths: the arrays valid as they are pass without
``check_array`` and come out as the general path makes them."""

from __future__ import annotations

import numpy as np
import pytest

from lmu_sk import _input
from lmu_sk._input import as_sequences


@pytest.fixture
def general(monkeypatch):
    """``as_sequences`` with every sequence through ``check_array``."""

    def validate(X, dtype=None):
        with monkeypatch.context() as patch:
            patch.setattr(_input, "_is_plain_float_sequence", lambda seq: False)
            return as_sequences(X, dtype)

    return validate


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("channels", [None, 1, 3])
def test_plain_arrays_come_out_as_the_general_path_makes_them(dtype, channels, general):
    rng = np.random.default_rng(0)
    shape = (lambda n: (n,)) if channels is None else (lambda n: (n, channels))
    X = [rng.standard_normal(shape(n)).astype(dtype) for n in (5, 9, 1)]
    for asked in (None, np.float64):
        fast, slow = as_sequences(X, asked), general(X, asked)
        assert [a.shape for a in fast] == [a.shape for a in slow]
        assert [a.dtype for a in fast] == [a.dtype for a in slow]
        for a, b in zip(fast, slow, strict=True):
            np.testing.assert_array_equal(a, b)  # the same values: no arithmetic


def test_plain_arrays_with_nan_raise_as_the_general_path_does(general):
    X = [np.arange(4.0), np.array([1.0, np.nan, 2.0])]
    with pytest.raises(ValueError) as fast:
        as_sequences(X, None)
    with pytest.raises(ValueError) as slow:
        general(X)
    assert str(fast.value) == str(slow.value)
    # unchecked where the caller checks its results
    assert np.isnan(as_sequences(X, None, check_finite=False)[1]).any()


@pytest.mark.parametrize(
    "bad",
    [np.zeros((0,)), np.zeros((3, 0)), np.array(["1.0", "2.0"]), np.zeros(3, dtype=">f8")],
    ids=["no steps", "no channels", "text", "big-endian"],
)
def test_other_arrays_take_the_general_path(bad):
    X = [np.arange(4.0), bad]
    if bad.dtype.kind == "U" or 0 in bad.shape:
        with pytest.raises(ValueError):
            as_sequences(X, None)
    else:
        np.testing.assert_array_equal(as_sequences(X, None)[1][:, 0], bad)
