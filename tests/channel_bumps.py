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


def short_bursts(n: int, n_channels: int, n_steps: int, informative: int, seed: int = 0):
    """``(n, n_steps, n_channels)`` noise of deviation 0.6 with one burst of a few steps at
    a random place in every channel, a sine under a Gaussian envelope (amplitude 2.5) of
    one of three kinds (1.5, 3 or 2 half-cycles per width of 6, 12 or 9 steps): of the
    same power everywhere, its kind is the class (0, 1 or 2) in channel ``informative``
    and random in the others."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = 0.6 * rng.standard_normal((n, n_steps, n_channels))
    t = np.arange(n_steps)[None, :]
    for c in range(n_channels):
        kind = y if c == informative else rng.integers(0, 3, n)
        width, cycles = np.array([6.0, 12.0, 9.0])[kind], np.array([1.5, 3.0, 2.0])[kind]
        z = (t - rng.uniform(2 * width, n_steps - 2 * width)[:, None]) / width[:, None]
        X[:, :, c] += 2.5 * np.exp(-(z**2)) * np.sin(np.pi * cycles[:, None] * z)
    return X, y
