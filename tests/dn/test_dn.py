"""The Delay Network math against SciPy and against its defining properties."""

import math
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
from hypothesis import given
from hypothesis import strategies as st

from lmu_sk import dn
from lmu_sk._memory import MemoryBudgetError
from lmu_sk.reference import dn_states

orders = st.integers(1, 96)
thetas = st.floats(1.0, 1e5)


@given(orders, thetas)
def test_zoh_matches_scipy_cont2discrete(order, theta):
    A, B = dn.continuous_system(order, theta)
    Abar, Bbar = dn.discretize(A, B, "zoh")
    system = (A, B[:, None], np.eye(order), np.zeros((order, 1)))
    Ad, Bd, *_ = scipy.signal.cont2discrete(system, 1.0, method="zoh")
    # Both are expm of the same augmented matrix: agreement to a few float64 ulps of the
    # largest entry (1e-12 leaves room for SciPy's different Pade scaling choice).
    np.testing.assert_allclose(Abar, Ad, rtol=0, atol=1e-12 * max(1, np.abs(Ad).max()))
    np.testing.assert_allclose(Bbar, Bd[:, 0], rtol=0, atol=1e-12 * max(1, np.abs(Bd).max()))


@given(orders, thetas)
def test_euler_is_forward_euler(order, theta):
    A, B = dn.continuous_system(order, theta)
    Abar, Bbar = dn.discretize(A, B, "euler")
    Ad, Bd, *_ = scipy.signal.cont2discrete(
        (A, B[:, None], np.eye(order), np.zeros((order, 1))), 1.0, method="euler"
    )
    np.testing.assert_allclose(Abar, Ad, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(Bbar, Bd[:, 0], rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("order", [1, 7, 64, 512])
# 1e-305: entries finite, the 1-norm beyond float64 at orders 64 and 512 (a raw
# OverflowError in counting the squarings before)
@pytest.mark.parametrize("theta", [1e-305, 1e-300, 1e-40, 1e-20, 1e-10, 1e-6])
def test_tiny_theta_reaches_the_limit_system(order, theta):
    # theta -> 0: Abar = exp(A / theta) -> 0 and Bbar = A^-1 (Abar - I) B -> -A1^-1 B1
    # (A1, B1 the matrices at theta = 1). SciPy's expm alone gives NaN or 1e196 here.
    Abar, Bbar = dn.discrete_system(order, theta)
    A1, B1 = dn.continuous_system(order, 1.0)
    limit = -np.linalg.solve(A1, B1)
    assert np.all(Abar == 0.0)
    # float64 solve and squarings of an order-512 matrix: 1e-8 of the largest entry
    np.testing.assert_allclose(Bbar, limit, rtol=0, atol=1e-8 * np.abs(limit).max())


def test_matrices_follow_the_papers_definition():
    theta = 3.5
    A, B = dn.continuous_system(4, theta)
    for i in range(4):
        assert B[i] == pytest.approx((2 * i + 1) * (-1) ** i / theta)
        for j in range(4):
            sign = -1.0 if i < j else (-1.0) ** (i - j + 1)
            assert A[i, j] == pytest.approx((2 * i + 1) / theta * sign)


@given(st.integers(1, 64), thetas, st.integers(0, 700))
def test_impulse_response_is_powers_of_abar(order, theta, n_steps):
    Abar, Bbar = dn.discrete_system(order, theta)
    H = dn.impulse_response(Abar, Bbar, n_steps)
    expected = np.empty((n_steps, order))
    h = Bbar.copy()
    for k in range(n_steps):
        expected[k] = h
        h = Abar @ h
    # Products of m rows with Abar^m reassociate the sums: float64 rounding, relative to the
    # largest entry.
    np.testing.assert_allclose(H, expected, rtol=0, atol=1e-12 * max(np.abs(Bbar).max(), 1e-300))


def test_legendre_decoder_is_shifted_legendre():
    r = np.linspace(0, 1, 7)
    D = dn.legendre_decoder(6, r * 10.0, 10.0)
    for i in range(6):
        coeffs = [
            (-1) ** i * scipy.special.comb(i, k) * scipy.special.comb(i + k, k) * (-1) ** k
            for k in range(i + 1)
        ]
        expected = sum(c * r**k for k, c in enumerate(coeffs))
        np.testing.assert_allclose(D[:, i], expected, atol=1e-12)


@pytest.mark.parametrize(
    ("delay_fraction", "tolerance"),
    # Inside the window the Legendre truncation error of order 64 at these frequencies is
    # ~1e-4 of the amplitude of 1.5; the window's two ends converge slowest (~2e-2).
    [(0.0, 0.03), (0.1, 1e-3), (0.25, 1e-3), (0.5, 1e-3), (0.75, 1e-3), (1.0, 0.03)],
)
def test_state_decodes_the_delayed_input(delay_fraction, tolerance):
    # A band-limited input well inside what order 64 resolves over a window of 400 steps.
    theta, order, n = 400.0, 64, 1200
    t = np.arange(1, n + 1)
    u = np.sin(2 * np.pi * t / 300) + 0.5 * np.cos(2 * np.pi * t / 170 + 1.0)
    states = dn_states(u[None], order, theta, output="sequence")[0]
    delay = delay_fraction * theta
    decoder = dn.legendre_decoder(order, [delay], theta)[0]
    steps = np.arange(int(theta) + 10, n)  # past the start-up transient
    decoded = states[steps - 1] @ decoder
    # ZOH holds u_t over (t - 1, t], so the held input over that step is closest to the
    # smooth signal half a step later: u_t ~ u(t - 1/2) held, read back at t - delay + 1/2.
    truth = np.interp(steps - delay + 0.5, t, u)
    assert np.max(np.abs(decoded - truth)) < tolerance


def test_euler_instability_is_detected_and_warned():
    assert not dn.euler_is_stable(64, 300.0)
    assert dn.euler_is_stable(64, 12 * 64.0)
    with pytest.warns(dn.EulerInstabilityWarning, match="discretizer='zoh'"):
        dn.warn_if_euler_unstable(64, 300.0, "euler")


@pytest.mark.parametrize(
    ("order", "theta", "error", "match"),
    [
        (0, 10.0, ValueError, "order must be an integer >= 1"),
        (2.5, 10.0, TypeError, "order must be an integer"),
        ("8", 10.0, TypeError, "order must be an integer"),
        (8, 0.0, ValueError, "theta must be a positive"),
        (8, -3.0, ValueError, "theta must be a positive"),
        (8, float("inf"), ValueError, "theta must be a positive"),
        (8, "10", TypeError, "theta must be a positive number"),
    ],
)
def test_bad_order_and_theta(order, theta, error, match):
    with pytest.raises(error, match=match):
        dn.continuous_system(order, theta)


def test_huge_order_is_refused_before_allocating():
    with pytest.raises(MemoryBudgetError, match="smaller order"):
        dn.continuous_system(100_000, 784.0)


def test_unknown_discretizer():
    with pytest.raises(ValueError, match="Unknown discretizer 'bilinear'"):
        dn.discrete_system(4, 10.0, "bilinear")


def test_zoh_block_exponential_identity():
    A, B = dn.continuous_system(5, 7.0)
    Abar, Bbar = dn.discretize(A, B)
    np.testing.assert_allclose(Abar, scipy.linalg.expm(A), atol=1e-14)
    np.testing.assert_allclose(
        Bbar, np.linalg.solve(A, (scipy.linalg.expm(A) - np.eye(5)) @ B), atol=1e-12
    )


@pytest.mark.parametrize(("order", "theta"), [(1, 1e-310), (2, 1e-308), (4, 1e-310), (64, 1e-307)])
def test_a_theta_whose_system_overflows_is_refused_clearly(order, theta):
    """``theta`` small enough that ``order / theta`` overflows float64: a ValueError
    naming it (order 2 and up met Python's bare OverflowError in the scaling and squaring
    of the matrix exponential), and no NumPy warning on the way."""
    from lmu_sk import LMUFeatures, LMUPooledFeatures

    X = np.random.default_rng(0).standard_normal((3, 20))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=f"theta={theta!r} is too small for order {order}"):
            dn.discrete_system(order, theta)
        with pytest.raises(ValueError, match="is too small for order"):
            LMUFeatures(order=order, theta=theta).fit(X)
        # (Euler's stability check met NumPy's LinAlgError on the infinite matrix)
        with pytest.raises(ValueError, match="is too small for order"):
            LMUFeatures(order=order, theta=theta, discretizer="euler").fit(X)
        with pytest.raises(ValueError, match="is too small for order"):
            LMUPooledFeatures(thetas=[1e-310]).fit(X)  # of its own orders
    # the smallest theta that fits still discretizes, to the limit Abar = 0
    Abar, Bbar = dn.discrete_system(order, 1e-300)
    assert np.isfinite(Abar).all() and np.isfinite(Bbar).all()


@pytest.mark.parametrize(
    ("X", "kwargs", "match"),
    [
        (np.ones((2, 10)), {"output": "mean"}, "output must be 'final' or 'sequence'"),
        (np.ones((2, 10)), {"output": "bogus"}, "output must be 'final' or 'sequence'"),
        (np.ones(10), {}, r"X must have the shape .* got shape \(10,\)"),
        ([np.ones(3), np.ones(0)], {}, r"X\[1\] has no steps"),
        (np.ones((2, 10)) + 1j, {}, "complex"),
        (np.r_[np.ones(9), np.nan][None], {}, "NaN or infinite"),
    ],
)
def test_the_reference_refuses_what_it_does_not_compute(X, kwargs, match):
    """The oracle of every fast path returned final states for output='mean' (or any
    other word), silently; a 1-D X, an empty sequence of a list, complex or NaN input gave
    raw errors, a cast with a warning or NaN states."""
    with pytest.raises(ValueError, match=match):
        dn_states(X, 3, 10.0, **kwargs)


def test_the_reference_takes_no_samples_and_names_bad_lists():
    """No samples: no states (a reshape error before); an empty list, or sequences of
    different channel counts: a ValueError naming X (NumPy's stacking errors before)."""
    assert dn_states(np.zeros((0, 30)), 4, 10.0).shape == (0, 4)
    assert dn_states(np.zeros((0, 30, 2)), 4, 10.0, output="sequence").shape == (0, 30, 8)
    with pytest.raises(ValueError, match="X is an empty list"):
        dn_states([], 4, 10.0)
    with pytest.raises(ValueError, match=r"X\[1\] has 2 channel\(s\) but X\[0\] has 1"):
        dn_states([np.zeros(5), np.zeros((6, 2))], 4, 10.0)


def _expm_long_double(M: np.ndarray) -> np.ndarray:
    """``exp(M)`` in long double: Taylor's 40 terms of ``M / 2**s``, squared ``s`` times
    (an independent reference, two to three bits beyond float64 where long double is
    x87's 80 bits)."""
    M = M.astype(np.longdouble)
    norm = float(np.abs(M).sum(axis=0).max())
    s = max(0, math.ceil(math.log2(norm)) + 4)
    scaled = M / np.longdouble(2) ** s
    total = np.eye(M.shape[0], dtype=np.longdouble)
    term = total.copy()
    for k in range(1, 41):
        term = term @ scaled / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total.astype(np.float64)


@pytest.mark.parametrize(("order", "theta"), [(64, 1e-5), (48, 1e-2)])
def test_squarings_of_a_small_theta_keep_float64_accuracy(order, theta):
    """The squarings of a norm above 1e6 are counted from the norm itself, not from its
    bound (order + 1) x the largest entry, two or three more squarings whose rounding
    cost Bbar up to 25x its accuracy (3e-11 instead of 1.3e-12 at order 128, theta 1e-2).
    Long double's reference; tolerance 2e-12 of Bbar's largest entry (measured: 1.5e-13
    at order 64 and theta 1e-5, against 5.5e-12 with the bound's count: tens of
    squarings, each adding float64's rounding)."""
    A, B = dn.continuous_system(order, theta)
    block = np.zeros((order + 1, order + 1))
    block[:order, :order], block[:order, order] = A, B
    expected = _expm_long_double(block)[:order, order]
    _, Bbar = dn.discrete_system(order, theta)
    assert np.abs(Bbar - expected).max() <= 2e-12 * np.abs(expected).max()
