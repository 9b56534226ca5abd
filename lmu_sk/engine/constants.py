"""The one cache of derived Delay Network constants, per (system, length, dtype, device).

Every constant is built in float64 on the host from the discretized system ``(Abar, Bbar)``
of :mod:`lmu_sk.dn`, then cast once to the compute dtype and moved once to the device of
the array module ``xp`` that asks for it. Callers must not modify what they get.

Names (``n`` is the number of steps, ``d`` the order, ``p`` the extra parameter):

==============  ===================================  ====================================
name            value                                shape
==============  ===================================  ====================================
``'H'``         impulse response ``Abar^k Bbar``     ``(n, d)``
``'H_rev'``     ``H[::-1]`` (final states, one GEMM)  ``(n, d)``
``'C_rev'``     ``cumsum(H)[::-1]`` (sum of states)   ``(n, d)``
``'W'``         block matrix of ``p`` steps            ``(d + p, p * d)``
``'H_hat'``     ``rfft(H, p)`` along time              ``(p // 2 + 1, d)``, complex
``'A_T'``       ``Abar.T``                             ``(d, d)``
``'D_T'``       ``(Abar - I).T`` (compensated step)    ``(d, d)``
``'step'``      ``[(Abar - I).T; Bbar]`` (one step)    ``(d + 1, d)``
``'powers'``    ``Abar^(2^i)``, transposed, ``i < p``   ``(p, d, d)``
``'power_sums'`` ``sum_{s=1..2^i} Abar^s``, transposed  ``(p, d, d)``
==============  ===================================  ====================================
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from .._device import device_key
from ..dn import discrete_system, impulse_response

__all__ = ["NAMES", "block_matrix", "clear", "get", "system"]

NAMES = ("H", "H_rev", "C_rev", "W", "H_hat", "A_T", "D_T", "step", "powers", "power_sums")

# Constants larger than this are built for the caller and not kept.
_ITEM_LIMIT_BYTES = 256 * 1024**2
# The cache keeps at most this many constants and this many bytes in all.
_MAX_ITEMS = 64
_MAX_BYTES = 1024**3

_cache: OrderedDict[tuple, Any] = OrderedDict()
_cache_bytes = 0
_lock = threading.Lock()


@lru_cache(maxsize=64)
def system(order: int, theta: float, discretizer: str = "zoh") -> tuple[np.ndarray, np.ndarray]:
    """The discretized ``(Abar, Bbar)``, float64, read-only and cached."""
    Abar, Bbar = discrete_system(int(order), float(theta), discretizer)
    Abar.flags.writeable = False
    Bbar.flags.writeable = False
    return Abar, Bbar


def block_matrix(Abar: np.ndarray, H: np.ndarray, block: int) -> np.ndarray:
    """The ``(d + T, T * d)`` matrix of one block of ``T`` steps, float64.

    With the state ``m`` before the block and its inputs ``u_0 .. u_{T-1}``,
    ``[m, u_0 .. u_{T-1}] @ W = [m_1 | .. | m_T]``:

    * ``W[:d, s*d:(s+1)*d] = (Abar^(s+1)).T`` carries the state ``s + 1`` steps;
    * ``W[d + j, s*d:(s+1)*d] = H[s - j]`` for ``j <= s`` (zero above): the block's inputs.

    The first ``d + T'`` rows and ``T' * d`` columns serve a shorter block of ``T'`` steps.

    Parameters
    ----------
    Abar : ndarray of shape (d, d)
    H : ndarray of shape (>= block, d)
        Impulse response.
    block : int
        Steps per block ``T``.
    """
    Abar = np.asarray(Abar, dtype=np.float64)
    H = np.asarray(H, dtype=np.float64)
    if block < 1 or H.shape[0] < block:
        raise ValueError(f"block must be in 1..{H.shape[0]}; got {block}.")
    d = Abar.shape[0]
    W = np.zeros((d + block, block, d))
    power = Abar.copy()
    for s in range(block):
        W[:d, s] = power.T
        power = Abar @ power
    lag = np.arange(block)[None, :] - np.arange(block)[:, None]  # s - j
    band = lag >= 0
    W[d:][band] = H[lag[band]]
    return W.reshape(d + block, block * d)


def with_carried_increment(W: np.ndarray, order: int) -> np.ndarray:
    """The float64 block matrix ``W`` ``(d + T, T * d)`` with ``d`` more columns: its last
    step's columns with the identity taken from the state's rows, ``[m, u] @ extra = m_T
    - m``: the increment of the state a whole block carries to the next.

    In float32 the carried state ``m_T = [m, u] @ W[:, -d:]`` rounds to ``eps |m|`` each
    block, the same rounding each block where the input is steady (and ``Abar``'s powers,
    within ``~T / theta`` of the identity, lose their decay to it): the state drifted with
    the blocks it lived through, 1.7e-5 of the states' scale at ``theta = 1e5`` and 9e-7
    at 784 (the recurrence: 2e-7). Carried as ``m + [m, u] @ extra``, a small increment
    rounded to its own ``eps`` added to ``m``, it does not (as the recurrence carries
    ``Abar - I``). :func:`~lmu_sk.engine.algebra.iter_blocks` takes these columns; the
    block's other states come from ``W`` as before.
    """
    extra = W[:, -order:].copy()
    extra[:order] -= np.eye(order)
    return np.hstack([W, extra])


def _power_tables(Abar: np.ndarray, levels: int, sums: bool) -> np.ndarray:
    """``Abar^(2^i)`` (or ``S_(2^i) = sum_{s=1..2^i} Abar^s``) for ``i < levels``, transposed.

    By squaring: ``Abar^(2n) = (Abar^n)^2`` and ``S_2n = S_n + Abar^n S_n``.
    """
    power, partial = Abar.copy(), Abar.copy()
    powers, partials = [power], [partial]
    for _ in range(1, levels):
        partial = partial + power @ partial
        power = power @ power
        powers.append(power)
        partials.append(partial)
    return np.stack([p.T for p in (partials if sums else powers)])


def _host(name: str, order: int, theta: float, discretizer: str, n_steps: int, param: int):
    """The float64 host value of constant ``name``."""
    Abar, Bbar = system(order, theta, discretizer)
    if name == "A_T":
        return Abar.T
    if name == "D_T":
        return (Abar - np.eye(order)).T
    if name == "step":
        return np.vstack([(Abar - np.eye(order)).T, Bbar[None]])
    if name in ("powers", "power_sums"):
        return _power_tables(Abar, max(1, param), name == "power_sums")
    if name == "W":
        H = get("H", order, theta, discretizer, param)
        return block_matrix(Abar, H, param)
    if name == "H":
        return impulse_response(Abar, Bbar, n_steps)
    H = get("H", order, theta, discretizer, n_steps)
    if name == "H_rev":
        return H[::-1]
    if name == "C_rev":
        return np.cumsum(H, axis=0)[::-1]
    if name == "H_hat":
        if param < n_steps:
            raise ValueError(f"An FFT of length {param} cannot hold {n_steps} steps.")
        import scipy.fft

        return scipy.fft.rfft(H, n=param, axis=0)
    raise ValueError(f"Unknown constant {name!r}; use one of {NAMES}.")


def get(
    name: str,
    order: int,
    theta: float,
    discretizer: str = "zoh",
    n_steps: int = 0,
    dtype: Any = np.float64,
    xp: ModuleType = np,
    param: int = 0,
) -> Any:
    """Constant ``name`` of the Delay Network ``(order, theta, discretizer)``.

    Parameters
    ----------
    name : str
        One of :data:`NAMES` (see the module docstring).
    order, theta, discretizer
        The Delay Network.
    n_steps : int
        Length of the impulse-response constants (``'H'``, ``'H_rev'``, ``'C_rev'``,
        ``'H_hat'``); ignored by the others.
    dtype : float32 or float64
        Compute dtype; ``'H_hat'`` comes as complex64 or complex128 to match.
    xp : module
        ``numpy`` or ``cupy``: the constant lives on that module's current device.
    param : int
        Steps per block (``'W'``), FFT length (``'H_hat'``) or levels (``'powers'``,
        ``'power_sums'``).

    Returns
    -------
    array, read-only on NumPy; do not modify it.
    """
    global _cache_bytes
    dtype = np.dtype(dtype)
    if name == "H_hat":
        dtype = np.result_type(dtype, np.complex64)
    key = (
        name,
        int(order),
        float(theta),
        str(discretizer),
        int(n_steps),
        dtype.name,
        device_key(xp),
        int(param),
    )
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    if xp is np and dtype in (np.float64, np.complex128):
        host = _host(name, int(order), float(theta), discretizer, int(n_steps), int(param))
        value = np.ascontiguousarray(host, dtype=dtype)
    else:
        host = get(name, order, theta, discretizer, n_steps, np.float64, np, param)
        if name == "W" and dtype == np.float32:
            host = with_carried_increment(host, int(order))
        value = xp.asarray(np.ascontiguousarray(host, dtype=dtype))
    if xp is np:
        value.flags.writeable = False
    size = int(value.nbytes)
    if size > _ITEM_LIMIT_BYTES:
        return value
    with _lock:
        if key not in _cache:
            _cache[key] = value
            _cache_bytes += size
        while len(_cache) > _MAX_ITEMS or _cache_bytes > _MAX_BYTES:
            _, old = _cache.popitem(last=False)
            _cache_bytes -= int(old.nbytes)
        return _cache[key]


def clear() -> None:
    """Drop every cached constant (on every device)."""
    global _cache_bytes
    with _lock:
        _cache.clear()
        _cache_bytes = 0
    system.cache_clear()
