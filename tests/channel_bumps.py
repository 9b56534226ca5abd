"""Many-channel data whose class shows in a few channels, for the screening tests."""

from __future__ import annotations

import numpy as np


def bumps(n: int, n_channels: int, informative: tuple[int, ...], seed: int = 0):
    """``(n, 60, n_channels)`` noise; the class (0 or 1) is the sign of a bump at a random
    place in each informative channel."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, 60, n_channels))
    t = np.arange(60)
    for c in informative:
        centre = rng.uniform(10, 50, n)
        bump = np.exp(-(((t[None, :] - centre[:, None]) / 4.0) ** 2))
        X[:, :, c] += 3.0 * np.where(y == 1, 1.0, -1.0)[:, None] * bump
    return X, y
