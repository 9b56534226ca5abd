"""Every CPU fast path of LMUFeatures against the reference recurrence.

Tolerances are relative to ``scale = max|u| * sum_k max_i |H[k, i]|``, the largest value a
state can take for inputs bounded by ``max|u|``: the error of a sum of products is
bounded by the unit roundoff times the sum of the products' magnitudes, which this scale
bounds. float64 paths stay below 1e-10 of it; float32 ones below 1e-5 (the unit roundoff
is 6e-8, and blocked GEMMs carry the state through at most n / T roundings).
"""

import functools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import dn_problems

from lmu_sk import LMUFeatures
from lmu_sk.dn import discrete_system, euler_is_stable, impulse_response
from lmu_sk.reference import dn_states, recurrence

TOLERANCE = {np.float64: 1e-10, np.float32: 1e-5}


@functools.lru_cache(maxsize=4)
def _system(order, theta, discretizer):
    """The reference's discrete system, computed once per example (an order-512 expm takes
    a quarter of a second) for both the scale and the reference states."""
    return discrete_system(order, theta, discretizer)


def _scale(U, order, theta, discretizer, n_steps):
    H = impulse_response(*_system(order, theta, discretizer), n_steps)
    return max(float(np.max(np.abs(U))), 1e-300) * float(np.abs(H).max(axis=1).sum())


def _reference_states(X, order, theta, discretizer):
    """``dn_states(X, order, theta, discretizer, output='sequence')`` on the cached system."""
    Abar, Bbar = _system(order, theta, discretizer)
    if isinstance(X, list):
        return [recurrence(np.reshape(x, (1, len(x), -1)), Abar, Bbar, "sequence")[0] for x in X]
    X = np.asarray(X, dtype=np.float64)
    return recurrence(X.reshape(X.shape[0], X.shape[1], -1), Abar, Bbar, "sequence")


def _expected(X, order, theta, output, discretizer="zoh"):
    states = _reference_states(X, order, theta, discretizer)
    if output == "sequence":
        return states
    if isinstance(states, list):
        reduce = {"final": lambda s: s[-1], "mean": lambda s: s.mean(0), "max": lambda s: s.max(0)}
        return np.stack([reduce[output](s) for s in states])
    return {"final": states[:, -1], "mean": states.mean(1), "max": states.max(1)}[output]


def problems(max_work=3e6):
    """Orders up to 512, windows from 1 to 1e5 steps, up to 5000 steps of 8 channels."""
    windows = st.floats(0.0, 5.0).map(lambda e: 10.0**e)
    return dn_problems(512, 5000, 8, 4, thetas=windows, max_work=max_work)


# 40 examples, not 100: every route x output x dtype is checked against the reference,
# deterministically, by tests/engine/test_contract.py; these explore orders, windows and
# lengths, and each example costs up to a second in the reference recurrence.
EXPLORE = settings(max_examples=40)


@EXPLORE
@given(
    problems(),
    st.sampled_from(["final", "sequence", "mean", "max"]),
    st.sampled_from(["auto", "gemm", "fft"]),
)
def test_matrix_paths_match_the_recurrence(problem, output, method):
    X, order, theta = problem
    F = LMUFeatures(order=order, theta=theta, output=output, method=method).fit_transform(X)
    assert F.dtype == X.dtype
    expected = _expected(X, order, theta, output)
    assert F.shape == expected.shape
    scale = _scale(X, order, theta, "zoh", X.shape[1])
    np.testing.assert_allclose(F, expected, rtol=0, atol=TOLERANCE[X.dtype.type] * scale)


@EXPLORE
@given(problems(max_work=2e5), st.sampled_from(["final", "sequence", "mean", "max"]))
def test_compiled_recurrence_matches_the_reference(problem, output):
    X, order, theta = problem
    assume(X.shape[1] * order * order * X.shape[0] * X.shape[2] <= 5e7)
    F = LMUFeatures(order=order, theta=theta, output=output, method="recurrence").fit_transform(X)
    scale = _scale(X, order, theta, "zoh", X.shape[1])
    np.testing.assert_allclose(
        F, _expected(X, order, theta, output), rtol=0, atol=TOLERANCE[X.dtype.type] * scale
    )


@given(
    st.lists(st.integers(1, 300), min_size=1, max_size=6),
    st.integers(1, 3),
    st.integers(1, 64),
    st.sampled_from(["final", "sequence", "mean", "max"]),
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from(["auto", "recurrence"]),
)
def test_sequences_of_different_lengths_end_at_their_own_end(
    lengths, n_channels, order, output, dtype, method
):
    rng = np.random.default_rng(sum(lengths))
    X = [rng.standard_normal((n, n_channels)).astype(dtype) for n in lengths]
    if len(set(lengths)) == 1:
        lengths.append(lengths[0] + 1)
        X.append(rng.standard_normal((lengths[-1], n_channels)).astype(dtype))
    est = LMUFeatures(order=order, output=output, method=method).fit(X)
    assert est.theta_ == max(lengths)
    F = est.transform(X)
    expected = _expected(X, order, est.theta_, output)
    scale = _scale(np.concatenate(X), order, est.theta_, "zoh", max(lengths))
    tol = TOLERANCE[dtype] * scale
    if output == "sequence":
        assert [f.shape for f in F] == [e.shape for e in expected]
        for f, e in zip(F, expected, strict=True):
            np.testing.assert_allclose(f, e, rtol=0, atol=tol)
    else:
        np.testing.assert_allclose(F, expected, rtol=0, atol=tol)


@given(st.integers(1, 48), st.floats(1.0, 1000.0), st.sampled_from(["gemm", "fft"]))
def test_euler_paths_match_the_euler_recurrence(order, theta, method):
    # Unstable Euler systems (warned about at fit) grow exponentially; there the FFT's
    # error is relative to the largest state, so only stable systems are compared.
    assume(euler_is_stable(order, theta))
    X = np.random.default_rng(order).standard_normal((3, 60, 2))
    est = LMUFeatures(
        order=order, theta=theta, discretizer="euler", output="sequence", method=method
    )
    F = est.fit_transform(X)
    expected = dn_states(X, order, theta, "euler", output="sequence")
    scale = _scale(X, order, theta, "euler", 60)
    np.testing.assert_allclose(F, expected, rtol=0, atol=1e-10 * scale)


def test_long_sequence_stays_finite_and_bounded():
    # order 256, theta = n = 100 000: the final state of a long noisy sequence, one GEMM,
    # against the reference recurrence run over all 100 000 steps.
    n = 100_000
    u = np.random.default_rng(0).uniform(-1, 1, (1, n))
    fast = LMUFeatures(order=256).fit_transform(u)
    assert np.all(np.isfinite(fast))
    scale = _scale(u, 256, float(n), "zoh", n)
    assert np.abs(fast).max() <= scale
    np.testing.assert_allclose(fast, dn_states(u, 256, float(n)), rtol=0, atol=1e-10 * scale)
    # the last 2 000 states by blocked GEMMs continue the same trajectory
    seq = LMUFeatures(order=256, theta=float(n), output="sequence").fit_transform(u[:, -2000:])
    assert np.all(np.isfinite(seq)) and np.abs(seq).max() <= scale


@pytest.fixture(scope="module")
def long_window_means():
    # float32 inputs with a window longer than the sequence (theta = 5.5e4, 20 000 steps):
    # Abar's eigenvalues lie within ~1e-4 of 1, where rounding Abar to float32 changes the
    # decay of the states by ~eps * theta relative.
    X = np.random.default_rng(0).standard_normal((3, 20_000)).astype(np.float32)
    expected = dn_states(X, 64, 5.5e4, output="sequence").mean(axis=1)  # float64
    return X, expected


@pytest.mark.parametrize("method", ["gemm", "fft", "recurrence"])
def test_float32_means_of_long_windows_match_the_float64_oracle(long_window_means, method):
    # Relative to the largest mean feature, the impulse-response routes (each weight and
    # input rounded once) stay within 8e-7 (gemm) and 2e-7 (fft); 2e-5 leaves them a wide
    # margin. The recurrence, run on Abar - I with a compensated state update, is within
    # 2e-6; with Abar rounded to float32 and a float32 running sum it was 1.5e-4 off.
    X, expected = long_window_means
    est = LMUFeatures(order=64, theta=5.5e4, output="mean", method=method, device="cpu")
    F = est.fit_transform(X)
    assert F.dtype == np.float32
    error = np.abs(F - expected).max() / np.abs(expected).max()
    assert error < 2e-5, f"relative error {error:.2g}"
