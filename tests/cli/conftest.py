"""Fixtures of the command-line tests."""

import numpy as np
import pytest


@pytest.fixture
def sequences(tmp_path):
    """30 random sequences of 24 steps, and the ``.npy`` file that holds them."""
    X = np.random.default_rng(0).standard_normal((30, 24))
    path = tmp_path / "in.npy"
    np.save(path, X)
    return X, path
