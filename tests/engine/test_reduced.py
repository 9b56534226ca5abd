"""Pooled features reduced as they are computed (``pooled_features(..., reduce=f)``).

On the CPU the chunks' features go through one reused buffer of at most
``REDUCED_CHUNK_BYTES`` to ``f``, and ``f``'s rows, back in the samples' order, are the
output: they must be ``f`` of the features of all the samples at once. A sample's
features do not depend on the chunk it is computed in, so with ``f`` a copy the rows are
equal bit for bit; with a matrix product, to float64 rounding (BLAS sums a row of a
product in an order set by the block it is in: ``1e-12`` relative is a wide margin for
sums of about 200 products).
"""

from __future__ import annotations

import numpy as np
import pytest
from fake_cupy import clear_caches, install

from lmu_sk.engine import PooledSpec, WindowSpec, pooled_features
from lmu_sk.engine import run as engine_run
from lmu_sk.engine.pooling import POOLS, TRANSFORMS

SPEC = PooledSpec(
    windows=(WindowSpec(4, 3.0, 1, (0, 1, 2, 3)), WindowSpec(3, 6.0, 3, (0, 1, 2, 3, 4, 5))),
    transforms=TRANSFORMS,
    pools=POOLS,
    n_biases=2,
)


def _arrays(n_samples: int, ragged: bool):
    rng = np.random.default_rng(1)
    U = rng.standard_normal((n_samples, 40, 2))
    if ragged:  # lengths out of order: the chunks take them shortest first
        U = [u[: 10 + (7 * i) % 31] for i, u in enumerate(U)]
    biases = [
        np.sort(0.3 * rng.standard_normal((len(w.inputs), w.order, SPEC.n_biases)), -1).astype(
            np.float32
        )
        for w in SPEC.windows
    ]
    scales = [rng.uniform(0.5, 2, (len(w.inputs), w.order)) for w in SPEC.windows]
    return U, biases, scales


def _features(U, biases, scales, xp=np, reduce=None):
    return pooled_features(U, SPEC, biases, scales, dtype=np.float64, xp=xp, reduce=reduce)


@pytest.mark.parametrize("ragged", [False, True], ids=["equal", "ragged"])
def test_reduced_chunks_equal_the_reduction_of_all_the_features(ragged, monkeypatch):
    U, biases, scales = _arrays(23, ragged)
    whole = _features(U, biases, scales)
    W = np.random.default_rng(2).standard_normal((whole.shape[1], 3))
    # a buffer of three samples' features: eight chunks, the last of two samples
    monkeypatch.setattr(engine_run, "REDUCED_CHUNK_BYTES", 3 * whole.shape[1] * 8)
    seen = []

    def copy(F):
        seen.append(F.shape[0])
        return F.copy()

    np.testing.assert_array_equal(_features(U, biases, scales, reduce=copy), whole)
    assert seen == [3] * 7 + [2]
    product = _features(U, biases, scales, reduce=lambda F: F @ W)
    np.testing.assert_allclose(product, whole @ W, rtol=1e-12, atol=1e-12 * np.abs(whole).max())
    # one value per sample (a classifier's labels) comes back in the samples' order too
    labels = _features(U, biases, scales, reduce=lambda F: np.argmax(F @ W, axis=1))
    np.testing.assert_array_equal(labels, np.argmax(whole @ W, axis=1))


def test_reduced_buffer_holds_at_least_one_sample(monkeypatch):
    U, biases, scales = _arrays(5, False)
    monkeypatch.setattr(engine_run, "REDUCED_CHUNK_BYTES", 1)
    whole = _features(U, biases, scales)
    np.testing.assert_array_equal(_features(U, biases, scales, reduce=np.copy), whole)


def test_off_the_cpu_all_the_features_are_reduced_at_once(monkeypatch):
    """The GPU's chunks are sized for the device: the reduction takes all its features
    (here the NumPy stand-in for CuPy runs the GPU's route)."""
    U, biases, scales = _arrays(9, False)
    xp = install(monkeypatch)
    try:
        monkeypatch.setattr(engine_run, "REDUCED_CHUNK_BYTES", 1)
        seen = []

        def copy(F):
            seen.append(F.shape[0])
            return F.copy()

        whole = _features(xp.asarray(U), biases, scales, xp=xp)
        reduced = _features(xp.asarray(U), biases, scales, xp=xp, reduce=copy)
    finally:
        clear_caches()
    assert seen == [9]
    np.testing.assert_array_equal(np.asarray(reduced), np.asarray(whole))


def test_no_samples_reduce_to_no_rows():
    _, biases, scales = _arrays(1, False)
    empty = np.empty((0, 40, 2))
    reduced = _features(empty, biases, scales, reduce=lambda F: F.sum(axis=1))
    assert reduced.shape == (0,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ragged_chunks_go_through_one_reused_buffer(dtype, monkeypatch):
    """Unequal lengths are computed shortest first into one reused buffer and scattered
    back: every row equals the sample's features computed alone, bit for bit (a sample's
    features do not depend on its chunk), over several chunks of one buffer."""
    U, biases, scales = _arrays(23, True)
    alone = np.vstack([pooled_features([u], SPEC, biases, scales, dtype=dtype) for u in U])
    targets = []
    chunk = engine_run._pooled_chunk

    def recording(x, lengths, target, *args):
        targets.append(target)
        return chunk(x, lengths, target, *args)

    monkeypatch.setattr(engine_run, "_pooled_chunk", recording)
    budget = 16 * 1024  # chunks of two samples
    F = pooled_features(U, SPEC, biases, scales, dtype=dtype, budget=budget)
    assert F.dtype == dtype
    np.testing.assert_array_equal(F, alone)
    assert len(targets) > 1
    assert all(t is not None and np.shares_memory(t, targets[0]) for t in targets)
