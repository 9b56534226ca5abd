"""The recurrence that keeps every few states (fitting the thresholds) against the one that
writes them all: the same arithmetic, so bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import dn_problems

from lmu_sk import LMUPooledFeatures
from lmu_sk.dn import discrete_system
from lmu_sk.engine import run
from lmu_sk.kernels import cpu


def _system(order: int, theta: float, dtype) -> tuple[np.ndarray, np.ndarray]:
    Abar, Bbar = discrete_system(order, theta, "zoh")
    D_T = np.ascontiguousarray((Abar - np.eye(order)).T, dtype=dtype)
    return D_T, Bbar.astype(dtype)


@settings(max_examples=40, deadline=None)
@given(
    problem=dn_problems(max_order=12, max_steps=60, max_work=20_000),
    every=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
    with_state=st.booleans(),
)
def test_kept_states_are_the_sequence_states_at_the_kept_numbers(problem, every, seed, with_state):
    X, order, theta = problem
    n_samples, n_steps, n_channels = X.shape
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, n_steps + 1, n_samples)
    first = rng.integers(0, 30, n_samples)
    D_T, Bbar = _system(order, theta, X.dtype)
    m0 = rng.standard_normal((n_samples, n_channels * order)).astype(X.dtype)
    m0 = m0 if with_state else None
    states, last = cpu.recurrence(X, lengths, D_T, Bbar, "sequence", m0)
    steps = np.arange(n_steps)[None, :]
    take = (steps < lengths[:, None]) & ((first[:, None] + steps) % every == 0)
    expected = states[take]  # sample by sample, step by step
    counts = take.sum(axis=1)
    row = 2 + np.concatenate([[0], np.cumsum(counts)[:-1]])  # two rows left before them
    out = np.full((len(expected) + 3, n_channels * order), -7.0, dtype=X.dtype)
    kept_last = cpu.kept_states(X, lengths, D_T, Bbar, every, first, row, out, m0)
    np.testing.assert_array_equal(out[2 : 2 + len(expected)], expected)
    assert np.all(out[:2] == -7.0) and np.all(out[2 + len(expected) :] == -7.0)
    np.testing.assert_array_equal(kept_last, last)


def test_kept_states_refuse_bad_arguments():
    X = np.zeros((2, 5, 1))
    D_T, Bbar = _system(3, 4.0, np.float64)
    lengths, zeros = np.full(2, 5), np.zeros(2, dtype=np.int64)
    with pytest.raises(ValueError, match="every must be at least 1"):
        cpu.kept_states(X, lengths, D_T, Bbar, 0, zeros, zeros, np.empty((10, 3)))
    for out in (np.empty((10, 3), np.float32), np.empty((10, 6))[:, ::2], np.empty(30)):
        with pytest.raises(ValueError, match="C-contiguous 2-D array in the dtype of X"):
            cpu.kept_states(X, lengths, D_T, Bbar, 1, zeros, zeros, out)
    with pytest.raises(ValueError, match="kept_states"):
        cpu.recurrence(X, lengths, D_T, Bbar, "kept")
    # every 2nd of steps 0-4 of each sample: 3 rows each, rows 0-2 and 3-5
    rows = np.array([0, 3])
    cpu.kept_states(X, lengths, D_T, Bbar, 2, zeros, rows, np.empty((6, 3)))
    for out, at in [(np.empty((5, 3)), rows), (np.empty((10, 3)), np.array([-1, 3]))]:
        with pytest.raises(ValueError, match=r"need rows up to .* of out, which has"):
            cpu.kept_states(X, lengths, D_T, Bbar, 2, zeros, at, out)


@pytest.mark.parametrize("ragged", [False, True])
def test_sampled_states_in_chunks_are_those_of_one_pass(ragged, monkeypatch):
    # a budget that splits the samples and the steps into chunks keeps the same states
    rng = np.random.default_rng(3)
    if ragged:
        U = [rng.standard_normal((int(n), 1)) for n in rng.integers(300, 3000, 7)]
    else:
        U = rng.standard_normal((7, 3000, 1))
    spec = LMUPooledFeatures(order=6, stride=1).fit(U).spec_
    calls = []
    kept_states = cpu.kept_states
    monkeypatch.setattr(cpu, "kept_states", lambda *a: calls.append(1) or kept_states(*a))
    whole = run.sampled_states(U, spec, 500, budget=10**9)
    assert len(calls) == len(spec.windows)  # one chunk
    chunked = run.sampled_states(U, spec, 500, budget=400_000)
    assert len(calls) > 3 * len(spec.windows)
    for a, b in zip(whole, chunked, strict=True):
        assert a.shape == b.shape and len(a) <= 500
        # the compensated rounding restarts at each chunk of steps: float64 rounding apart
        # (states of order 1 here)
        np.testing.assert_allclose(np.unique(a, axis=0), np.unique(b, axis=0), atol=1e-12)
