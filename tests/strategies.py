"""Hypothesis strategies shared by the tests of several layers."""

from __future__ import annotations

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st


@st.composite
def dn_problems(
    draw,
    max_order: int = 64,
    max_steps: int = 300,
    max_channels: int = 4,
    max_samples: int = 4,
    thetas: st.SearchStrategy[float] | None = None,
    max_work: float | None = None,
):
    """A Delay Network and random inputs: ``(X, order, theta)``.

    ``X`` has shape ``(n_samples, n_steps, n_channels)`` in a drawn dtype (float32 or
    float64); short sequences (up to 40 steps) are drawn as often as any length. ``thetas``
    draws the window (default: uniform in ``[1, 2 * max_steps]``); ``max_work`` bounds
    ``n_samples * n_channels * n_steps * order`` (the reference recurrence's cost).
    """
    order = draw(st.integers(1, max_order))
    theta = draw(st.floats(1.0, 2.0 * max_steps) if thetas is None else thetas)
    n_steps = draw(st.one_of(st.integers(1, min(40, max_steps)), st.integers(1, max_steps)))
    n_channels = draw(st.integers(1, max_channels))
    n_samples = draw(st.integers(1, max_samples))
    if max_work is not None:
        assume(n_samples * n_channels * n_steps * order <= max_work)
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.standard_normal((n_samples, n_steps, n_channels)).astype(dtype)
    return X, order, theta
