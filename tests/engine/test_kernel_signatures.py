"""Each compiled CPU kernel compiles once per dtype, whether its inputs are writable or not.

Numba types a read-only array apart from a writable one, so the same kernel called with
the engine's read-only cached constants, a user's read-only memory map or writable copies
compiled anew for every mix: the pooled kernel four times (15 s each) in one test suite.
"""

import numpy as np

from lmu_sk import LMUPooledFeatures
from lmu_sk.dn import discrete_system
from lmu_sk.kernels import cpu


def _read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def test_the_recurrence_compiles_once_per_dtype_whatever_the_writability():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3, 7, 2))
    Abar, Bbar = discrete_system(3, 5.0, "zoh")
    D_T = np.ascontiguousarray((Abar - np.eye(3)).T)
    lengths = np.full(3, 7)
    expected, _ = cpu.recurrence(X, lengths, D_T, Bbar)
    compiled = len(cpu._recurrence.signatures)
    for x, d_t, bbar in [(X, D_T, Bbar), tuple(map(_read_only, (X, D_T, Bbar)))]:
        for m0 in (None, _read_only(np.zeros((3, 6)))):
            result, _ = cpu.recurrence(x, _read_only(lengths), d_t, bbar, initial_state=m0)
            np.testing.assert_array_equal(result, expected)  # a zero initial state: the same
    assert len(cpu._recurrence.signatures) == compiled


def test_the_pooled_kernel_compiles_once_whatever_the_writability():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((4, 20, 2))
    features = LMUPooledFeatures(thetas=[4.0, 12.0], order=2, n_biases=2).fit(X)
    expected = features.transform(X)
    compiled = len(cpu._pooled_window.signatures)
    # a user's read-only data, and the fitted thresholds and scales made read-only too
    features.biases_ = [_read_only(b) for b in features.biases_]
    features.scales_ = [_read_only(s) for s in features.scales_]
    np.testing.assert_array_equal(features.transform(_read_only(X)), expected)
    stream = features.stream(n_streams=4)
    for t in range(X.shape[1]):
        stream.update(_read_only(X[:, t]))
    np.testing.assert_allclose(stream.transform(), expected, rtol=1e-6, atol=1e-6)
    assert len(cpu._pooled_window.signatures) == compiled
    # the stream finished the carried pools of its stride-1 window without the Delay
    # Network, from the fitted read-only thresholds: one compilation
    assert len(cpu._pools_finished.signatures) == 1
