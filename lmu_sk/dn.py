"""The Delay Network: continuous system, discretization, impulse response and decoders.

Everything here is float64 NumPy/SciPy. The continuous system of order ``d`` and window
``theta`` (in time steps) is ``dm/dt = A m + B u`` with ``theta`` folded into ``A`` and ``B``::

    A[i, j] = (2i + 1) / theta * (-1 if i < j else (-1) ** (i - j + 1))
    B[i]    = (2i + 1) * (-1) ** i / theta

Discretized with a step of one time step, the recurrence is
``m_t = Abar m_{t-1} + Bbar u_t`` with ``m_0 = 0``, so the state at ``t`` includes ``u_t``.
Its impulse response is ``H[k] = Abar^k Bbar`` and every state is the causal convolution
``m_t = sum_{j <= t} H[t - j] u_j``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.linalg
import scipy.special

from ._memory import check_fits

__all__ = [
    "DISCRETIZERS",
    "EulerInstabilityWarning",
    "check_system_fits",
    "continuous_system",
    "discrete_system",
    "discretize",
    "euler_instability",
    "euler_is_stable",
    "impulse_response",
    "legendre_decoder",
    "validate_order_theta",
]

DISCRETIZERS = ("zoh", "euler")

# Dense float64 work arrays (A, the expm workspace and its Pade factors) per order**2.
_EXPM_BYTES_PER_ENTRY = 8 * 12
# matrices this small are not charged against a max_memory budget (check_system_fits)
_SMALL_SYSTEM_BYTES = 1 << 20


class EulerInstabilityWarning(RuntimeWarning):
    """The Euler-discretized Delay Network grows instead of forgetting."""


def check_count(value: object, name: str, minimum: int) -> int:
    """``value`` as an int of at least ``minimum``: an integer, or a whole-number real (a
    grid of ``np.linspace``), not a bool (a flag, not a count: True read as 1); a
    TypeError or ValueError naming ``name`` otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    if not isinstance(value, numbers.Integral):
        if not (isinstance(value, numbers.Real) and float(value).is_integer()):
            raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}.")
        value = int(float(value))
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def validate_order_theta(order: object, theta: object) -> tuple[int, float]:
    """Check ``order`` and ``theta`` and return them as ``int`` and ``float``.

    Raises
    ------
    TypeError
        If ``order`` is not an integer or ``theta`` not a real number.
    ValueError
        If ``order < 1`` or ``theta`` is not positive and finite.
    """
    order = check_count(order, "order", 1)
    if isinstance(theta, bool) or not isinstance(theta, numbers.Real):
        raise TypeError(f"theta must be a positive number of time steps; got {theta!r}.")
    theta = float(theta)
    if not (np.isfinite(theta) and theta > 0):
        raise ValueError(f"theta must be a positive, finite number of time steps; got {theta}.")
    return int(order), theta


def check_system_fits(order: int, budget: int | None = None) -> None:
    """Raise a ``ValueError`` naming the order where the matrices of a Delay Network of
    ``order`` states (and their discretization's temporaries) would not fit in memory
    (``budget`` bytes where given, else the memory available now). Against a budget only
    matrices of more than :data:`_SMALL_SYSTEM_BYTES` count (orders above about 100), as
    the engine's other constants of a model do not: a budget sizes the work on the data."""
    advice = "Choose a smaller order (a few hundred to a few thousand is the practical range)"
    if budget is not None and order * order * _EXPM_BYTES_PER_ENTRY <= _SMALL_SYSTEM_BYTES:
        return
    check_fits(
        order * order * _EXPM_BYTES_PER_ENTRY,
        f"The Delay Network matrices of order {order}",
        advice + ("." if budget is None else ", or raise max_memory."),
        budget,
    )


def continuous_system(order: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """The continuous-time Delay Network matrices with ``theta`` folded in.

    Parameters
    ----------
    order : int
        State dimension ``d >= 1`` (number of Legendre coefficients).
    theta : float
        Window length in time steps, ``> 0``.

    Returns
    -------
    A : ndarray of shape (order, order)
    B : ndarray of shape (order,)
    """
    order, theta = validate_order_theta(order, theta)
    check_system_fits(order)
    scale = (2 * np.arange(order) + 1)[:, None] / theta
    i = np.arange(order)[:, None]
    j = np.arange(order)[None, :]
    sign = np.where(i < j, -1.0, np.where((i - j) % 2 == 0, -1.0, 1.0))
    A = scale * sign
    B = scale[:, 0] * np.where(np.arange(order) % 2 == 0, 1.0, -1.0)
    return A, B


# Above this 1-norm the augmented matrix is scaled and squared by hand (_zoh_by_squaring).
_EXPM_SCALING_NORM = 1e6


def discretize(A: np.ndarray, B: np.ndarray, method: str = "zoh") -> tuple[np.ndarray, np.ndarray]:
    """Discretize ``dm/dt = A m + B u`` with a step of one.

    Parameters
    ----------
    A : ndarray of shape (d, d)
    B : ndarray of shape (d,)
    method : {'zoh', 'euler'}
        Zero-order hold (exact for inputs constant over each step; the papers' choice)
        or forward Euler (``Abar = I + A``, ``Bbar = B``).

    Returns
    -------
    Abar : ndarray of shape (d, d)
    Bbar : ndarray of shape (d,)
    """
    if method not in DISCRETIZERS:
        raise ValueError(f"Unknown discretizer {method!r}; use one of {DISCRETIZERS}.")
    d = A.shape[0]
    if method == "euler":
        return np.eye(d) + A, B.copy()
    if d == 1:
        # exp(a) and b (exp(a) - 1) / a in closed form (SciPy's own 2 x 2 formula
        # overflows in cosh for |a| > 1420 in some versions)
        a = A[0, 0]
        return np.array([[math.exp(a)]]), B * (math.expm1(a) / a)
    # expm([[A, B], [0, 0]]) = [[Abar, Bbar], [0, 1]] gives both at once.
    block = np.zeros((d + 1, d + 1))
    block[:d, :d] = A
    block[:d, d] = B
    with np.errstate(over="ignore"):  # (an infinite norm: scaled by hand, below)
        large = not np.linalg.norm(block, 1) <= _EXPM_SCALING_NORM
    if large:
        return _zoh_by_squaring(A, B)
    exp = scipy.linalg.expm(block)
    return np.ascontiguousarray(exp[:d, :d]), exp[:d, d].copy()


def _zoh_by_squaring(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Abar, Bbar)`` of ``exp([[A, B], [0, 0]])`` by explicit scaling and squaring.

    For a tiny ``theta`` the block's norm reaches ``1e15`` and beyond, where SciPy's
    ``expm`` returns NaN or finite garbage (``1e196`` for order 512, ``theta=1e-20``).
    ``exp(M) = exp(M / 2**s) ** (2**s)`` with ``||M / 2**s||_1 <= 1/2``, squared in the
    block's structure (``Abar <- Abar**2``, ``Bbar <- Abar Bbar + Bbar``) so that the
    corner ``exp(0) = 1`` is never rounded and raised to the power ``2**s``. For the stable
    Delay Network it converges to the limit ``Abar = 0``, ``Bbar = -A^-1 B``.
    """
    d = A.shape[0]
    block = np.zeros((d + 1, d + 1))
    block[:d, :d] = A
    block[:d, d] = B
    # ||block||_1 <= (d + 1) max|entry| < (d + 1) 2**e: from the largest entry's exponent,
    # as the norm itself overflows float64 for a theta near its smallest (1e-305 at order
    # 100), and 2.0**squarings past 1023 squarings
    exponent = math.frexp(float(np.abs(block).max()))[1]
    # the norm of the block scaled by 2**-exponent (at most d + 1: finite), so that
    # ||block / 2**squarings||_1 <= 1/2 as tightly as from the norm itself
    scaled_norm = np.linalg.norm(np.ldexp(block, -exponent), 1)
    squarings = max(exponent + math.ceil(math.log2(scaled_norm)) + 1, 0)
    exp = scipy.linalg.expm(np.ldexp(block, -squarings))
    Abar, Bbar = exp[:d, :d], exp[:d, d]
    for _ in range(squarings):
        if not Abar.any():
            break  # Abar underflowed to 0: the squarings left change neither Abar nor Bbar
        Abar, Bbar = Abar @ Abar, Abar @ Bbar + Bbar
    return np.ascontiguousarray(Abar), Bbar.copy()


def discrete_system(
    order: int, theta: float, method: str = "zoh"
) -> tuple[np.ndarray, np.ndarray]:
    """``(Abar, Bbar)`` of the Delay Network of ``order`` and ``theta``, by ``method``.

    A ``ValueError`` where ``theta`` is so small that the continuous system, whose entries
    grow as ``order / theta``, overflows float64 (``theta`` below about ``1e-306``)."""
    A, B = _finite_continuous_system(order, theta)
    return discretize(A, B, method=method)


def _finite_continuous_system(order: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`continuous_system`, or a ``ValueError`` naming the fix where ``theta`` is so
    small that it overflows float64."""
    with np.errstate(over="ignore"):  # refused below, with the fix
        A, B = continuous_system(order, theta)
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        raise ValueError(
            f"theta={theta!r} is too small for order {order}: the Delay Network's continuous "
            "system (entries up to (2 order - 1) / theta) overflows float64. Use a window of "
            "at least one time step."
        )
    return A, B


def euler_is_stable(order: int, theta: float) -> bool:
    """Whether forward Euler keeps the Delay Network of ``order`` and ``theta`` from growing.

    Euler is stable when every eigenvalue of ``I + A`` lies inside the unit circle; it fails
    for small ``theta / order`` (order 64 needs ``theta`` of about ``12 * order``).
    """
    A, _ = _finite_continuous_system(order, theta)
    radius = np.max(np.abs(np.linalg.eigvals(np.eye(A.shape[0]) + A)))
    return bool(radius <= 1.0 + 1e-12)


def euler_instability(order: int, theta: float, method: str) -> str | None:
    """Why the states of the Delay Network of ``order`` and ``theta`` grow without bound,
    and the fix, where ``method='euler'`` makes it unstable; ``None`` where it is stable."""
    if method != "euler" or euler_is_stable(order, theta):
        return None
    return (
        f"the Euler-discretized Delay Network of order {order} and theta {theta:g} is "
        "unstable: its impulse response grows without bound. Use discretizer='zoh' (exact "
        "and always stable), a larger theta, or a smaller order."
    )


def warn_if_euler_unstable(order: int, theta: float, method: str) -> None:
    """Warn with the fix when ``method='euler'`` makes the impulse response grow."""
    if method == "euler" and not euler_is_stable(order, theta):
        warnings.warn(
            f"The Euler-discretized Delay Network of order {order} and theta {theta:g} is "
            "unstable: its impulse response grows without bound, so the features are "
            "dominated by rounding (each route's differently) and overflow on long "
            "sequences. Use discretizer='zoh' (exact and always stable), a "
            "larger theta, or a smaller order.",
            EulerInstabilityWarning,
            stacklevel=3,
        )


# Rows of the impulse response advanced together by one product with ``Abar^m``: 3
# squarings of ``Abar`` and ``n_steps / m`` thin products. Order 468 over 784 steps: 30 ms
# against 56 ms for doubling (H[m:2m] = H[:m] Abar^m.T, 9 squarings) and 70 ms for m = 2,
# 37 ms for m = 32 (one core, float64).
IMPULSE_ROWS = 8


def impulse_response(Abar: np.ndarray, Bbar: np.ndarray, n_steps: int) -> np.ndarray:
    """``H[k] = Abar^k Bbar`` for ``k = 0 .. n_steps - 1``.

    The first ``m = IMPULSE_ROWS`` rows by matrix-vector products, then ``m`` rows at a
    time, ``H[k + m] = Abar^m H[k]``: ``log2(m)`` squarings of ``Abar`` and ``n_steps /
    m`` products of ``m`` rows, instead of ``n_steps`` matrix-vector products.

    Returns
    -------
    H : ndarray of shape (n_steps, d), float64
    """
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0; got {n_steps}.")
    d = Bbar.shape[0]
    check_fits(
        8.0 * n_steps * d * 2,
        f"The impulse response for {n_steps} steps of order {d}",
        "Use shorter sequences or a smaller order, or (for LMUFeatures) "
        "method='recurrence', which needs no impulse response.",
    )
    H = np.empty((n_steps, d))
    if n_steps == 0:
        return H
    H[0] = Bbar
    m = min(IMPULSE_ROWS, n_steps)
    for k in range(1, m):
        np.matmul(Abar, H[k - 1], out=H[k])
    power, steps = Abar, 1  # Abar ** steps
    while steps < m:
        power, steps = power @ power, 2 * steps
    advance = np.ascontiguousarray(power.T)
    for start in range(m, n_steps, m):
        stop = min(start + m, n_steps)
        np.matmul(H[start - m : stop - m], advance, out=H[start:stop])
    return H


def legendre_decoder(order: int, delays: Sequence[float] | np.ndarray, theta: float) -> np.ndarray:
    """Rows that read ``u(t - delay)`` out of a Delay Network state.

    ``u(t - delay) ~= decoder @ m_t`` with ``decoder[k, i] = P_i(delay_k / theta)``, the
    shifted Legendre polynomial ``P_i(r) = (-1)^i sum_l C(i,l) C(i+l,l) (-r)^l``, evaluated
    stably as the ordinary Legendre polynomial at ``2 r - 1``.

    Parameters
    ----------
    order : int
        State dimension.
    delays : array-like of float
        Delays in time steps, each in ``[0, theta]``.
    theta : float
        Window length of the Delay Network.

    Returns
    -------
    decoder : ndarray of shape (len(delays), order)
    """
    order, theta = validate_order_theta(order, theta)
    r = np.asarray(delays, dtype=np.float64).reshape(-1) / theta
    if np.any(~np.isfinite(r)) or np.any(r < 0) or np.any(r > 1):
        raise ValueError(f"delays must lie in [0, theta={theta:g}].")
    return scipy.special.eval_legendre(np.arange(order)[None, :], 2.0 * r[:, None] - 1.0)
