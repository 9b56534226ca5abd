"""Tests of the GPU kernels against the reference recurrence.

* ``xp_kernels`` run here with ``xp=numpy``: the same code runs with CuPy on a GPU.
* The Numba-CUDA kernels run in Numba's CUDA simulator, which must be switched on before
  ``numba.cuda`` is first imported: ``test_numba_kernels_in_simulator_subprocess`` runs the
  ``test_cudasim_*`` tests of this file in a fresh interpreter with
  ``NUMBA_ENABLE_CUDASIM=1``. Run alone without the simulator they skip, unless a real CUDA
  GPU is present, where they run on it.
* The CuPy driver's chunking, streaming and out-of-memory retry run with a NumPy stand-in
  for CuPy; against real CuPy they run only on a machine with a GPU.

Tolerances are relative to the largest state magnitude of the oracle. Inputs are rounded
to the compute dtype before the oracle sees them, so only the kernels' own error counts:

* float64, ``1e-10``: every route sums at most ``n <= 300`` products of float64 numbers
  (rounding ~``n eps`` = ``7e-14``), the impulse response comes from ``log2 n`` doublings,
  the FFT adds ``O(eps log n)``, and cancellation in a sum can make a state smaller than
  its terms by about ``sqrt(n)``; ``1e-10`` leaves a wide margin over all of that.
* float32, ``1e-4``: the impulse response and block matrices are rounded to float32
  (``6e-8`` relative) and accumulated over up to 300 steps (``n eps`` ~ ``2e-5`` in the
  worst case, ``sqrt(n) eps`` typically); block products carry the state through
  ``n / T`` products with ``Abar^T``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from fake_cupy import FakeDeviceArray, FakeOutOfMemory, clear_caches, install
from hypothesis import given, settings
from hypothesis import strategies as st

from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.kernels import gpu_cupy
from lmu_sk.kernels import xp_kernels as K
from lmu_sk.reference import recurrence

TOLERANCE = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-4}
IN_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
ROOT = Path(__file__).resolve().parents[1]


def assert_states_close(got, expected, dtype, magnitude=0.0):
    """Error within TOLERANCE of the largest state, or of ``magnitude``: the size of the
    terms summed (rounding scales with them, also where they cancel to tiny states)."""
    got = np.asarray(got)
    assert got.shape == expected.shape
    assert got.dtype == np.dtype(dtype)
    scale = max(float(np.max(np.abs(expected), initial=0.0)), magnitude, 1e-30)
    error = float(np.max(np.abs(got.astype(np.float64) - expected), initial=0.0))
    assert error <= TOLERANCE[np.dtype(dtype)] * scale, (error, scale)


@st.composite
def problems(draw, max_order=64, max_steps=300, max_channels=4, max_samples=4):
    """A random Delay Network and inputs, rounded to the drawn dtype."""
    order = draw(st.integers(1, max_order))
    n_steps = draw(st.integers(1, max_steps))
    n_channels = draw(st.integers(1, max_channels))
    n_samples = draw(st.integers(1, max_samples))
    theta = draw(st.floats(1.0, 2.0 * max_steps))
    dtype = np.dtype(draw(st.sampled_from([np.float32, np.float64])))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.standard_normal((n_samples, n_steps, n_channels)).astype(dtype)
    lengths = rng.integers(1, n_steps + 1, n_samples)
    for s, length in enumerate(lengths):
        X[s, length:] = 0
    Abar, Bbar = discrete_system(order, theta, "zoh")
    H = impulse_response(Abar, Bbar, n_steps)
    return SimpleNamespace(X=X, lengths=lengths, Abar=Abar, Bbar=Bbar, H=H, dtype=dtype)


def own_states(p):
    """Every sample's states over its own steps, by the oracle."""
    return [
        recurrence(p.X[s : s + 1, :length], p.Abar, p.Bbar, "sequence")[0]
        for s, length in enumerate(p.lengths)
    ]


# --------------------------------------------------------------------- xp kernels on NumPy


@given(problems())
def test_final_states_match_recurrence(p):
    got = K.final_states(p.X, p.H[::-1].astype(p.dtype), np)
    terms = float(np.abs(p.X).sum(axis=1).max() * np.abs(p.H).max())
    assert_states_close(got, recurrence(p.X, p.Abar, p.Bbar, "final"), p.dtype, terms)


def test_final_states_one_channel_reads_inputs_in_place():
    X = np.ones((3, 5, 1))
    assert np.shares_memory(K.rows(X, np), X)


@given(problems())
def test_all_states_fft_match_recurrence(p):
    got = K.all_states_fft(p.X, p.H, np)
    assert_states_close(got, recurrence(p.X, p.Abar, p.Bbar, "sequence"), p.dtype)


@given(problems(max_steps=60), st.integers(0, 40))
def test_all_states_fft_with_precomputed_longer_spectrum(p, extra):
    n_fft = K.fft_length(p.X.shape[1]) + 2 * extra
    H_hat = K.impulse_spectrum(p.H, n_fft, p.dtype, np)
    got = K.all_states_fft(p.X, None, np, H_hat=H_hat, n_fft=n_fft)
    assert_states_close(got, recurrence(p.X, p.Abar, p.Bbar, "sequence"), p.dtype)


@given(problems(), st.integers(1, 80))
def test_all_states_blocked_match_recurrence(p, block):
    got = K.all_states_blocked(p.X, p.Abar, p.H, block, np)
    assert_states_close(got, recurrence(p.X, p.Abar, p.Bbar, "sequence"), p.dtype)


@given(problems(max_steps=100), st.integers(1, 40))
def test_blocked_with_precomputed_matrix(p, block):
    T = min(block, p.X.shape[1])
    W = K.block_matrix(p.Abar, p.H, T).astype(p.dtype)
    got = K.all_states_blocked(p.X, None, p.H, block, np, W=W)
    assert_states_close(got, recurrence(p.X, p.Abar, p.Bbar, "sequence"), p.dtype)


@given(problems())
def test_ragged_final_states_end_at_own_length(p):
    got = K.ragged_final_states(p.X, p.lengths, p.H[::-1].astype(p.dtype), np)
    expected = np.stack([states[-1] for states in own_states(p)])
    assert_states_close(got, expected, p.dtype)


@given(problems())
def test_mean_states_match_recurrence(p):
    C_rev = np.cumsum(p.H, axis=0)[::-1].astype(p.dtype)
    expected = recurrence(p.X, p.Abar, p.Bbar, "sequence").mean(axis=1)
    assert_states_close(K.mean_states(p.X, C_rev, np), expected, p.dtype)
    ragged = np.stack([states.mean(axis=0) for states in own_states(p)])
    assert_states_close(K.mean_states(p.X, C_rev, np, lengths=p.lengths), ragged, p.dtype)


@given(problems(), st.sampled_from(["mean", "max"]), st.integers(1, 80), st.booleans())
def test_pooled_states_blocked(p, reduce, block, ragged):
    if ragged:
        expected = np.stack([getattr(s, reduce)(axis=0) for s in own_states(p)])
        got = K.pooled_states_blocked(p.X, p.Abar, p.H, reduce, block, np, lengths=p.lengths)
    else:
        states = recurrence(p.X, p.Abar, p.Bbar, "sequence")
        expected = getattr(states, reduce)(axis=1)
        got = K.pooled_states_blocked(p.X, p.Abar, p.H, reduce, block, np)
    assert_states_close(got, expected, p.dtype)


@given(st.integers(1, 5000))
def test_fft_length_is_short_even_and_smooth(n):
    m = K.fft_length(n)
    assert m >= 2 * n - 1 and m % 2 == 0
    rest = m
    for prime in (2, 3, 5, 7):
        while rest % prime == 0:
            rest //= prime
    assert rest == 1
    assert all(k % 2 or not K._is_smooth(k) for k in range(max(2 * n - 1, 2), m))


def test_block_matrix_layout():
    Abar, Bbar = discrete_system(3, 5.0)
    H = impulse_response(Abar, Bbar, 4)
    W = K.block_matrix(Abar, H, 4)
    assert W.shape == (3 + 4, 4 * 3)
    np.testing.assert_allclose(W[:3, 6:9], np.linalg.matrix_power(Abar, 3).T, atol=1e-14)
    np.testing.assert_allclose(W[3 + 1, 6:9], H[1], atol=1e-14)
    assert not W[3 + 3, 6:9].any()
    with pytest.raises(ValueError, match="block"):
        K.block_matrix(Abar, H, 5)


def test_default_block_stays_in_range():
    assert K.default_block(64, 784) == 64
    assert K.default_block(468, 784) == 16
    assert K.default_block(2, 5) == 5
    assert 1 <= K.default_block(10_000, 3) <= 3


def test_pooled_rejects_unknown_reduction():
    with pytest.raises(ValueError, match="reduction"):
        K.pooled_states_blocked(np.zeros((1, 2, 1)), np.eye(1), np.ones((2, 1)), "sum", 2, np)


# ------------------------------------------------------------- CuPy driver, cost model


def test_cost_model_prefers_gemm_for_small_and_fft_for_large_orders():
    assert gpu_cupy.all_states_method(784, 16) == "gemm"
    assert gpu_cupy.all_states_method(784, 64) == "gemm"
    assert gpu_cupy.all_states_method(784, 1024) == "fft"


def test_gpu_available_never_raises():
    assert isinstance(gpu_cupy.gpu_available(), bool)


# ------------------------------------------- CuPy driver with a NumPy stand-in for CuPy


@pytest.fixture
def fake_cupy(monkeypatch):
    yield install(monkeypatch)
    clear_caches()


def driver_case(n_samples=7, n_steps=23, n_channels=2, order=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_steps, n_channels))
    lengths = rng.integers(1, n_steps + 1, n_samples)
    lengths[0] = n_steps
    Abar, Bbar = discrete_system(order, 11.0, "zoh")
    return X, lengths, Abar, Bbar


def expected_output(X, lengths, Abar, Bbar, output):
    if lengths is None:
        lengths = np.full(X.shape[0], X.shape[1])
    per_sample = [
        recurrence(X[s : s + 1, :length], Abar, Bbar, "sequence")[0]
        for s, length in enumerate(lengths)
    ]
    if output == "final":
        return np.stack([states[-1] for states in per_sample])
    if output in ("mean", "max"):
        return np.stack([getattr(states, output)(axis=0) for states in per_sample])
    return recurrence(X, Abar, Bbar, "sequence")


OUTPUT_METHODS = [
    ("final", "auto"),
    ("mean", "auto"),
    ("max", "auto"),
    ("sequence", "auto"),
    ("sequence", "gemm"),
    ("sequence", "fft"),
]


@pytest.mark.parametrize(("output", "method"), OUTPUT_METHODS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("max_device_memory", [None, 1])
def test_driver_streams_chunks_through_fake_device(
    fake_cupy, output, method, dtype, ragged, max_device_memory
):
    X, lengths, Abar, Bbar = driver_case()
    X = X.astype(dtype)
    if ragged:
        for s, length in enumerate(lengths):
            X[s, length:] = 0
    got = gpu_cupy.transform_gpu(
        X,
        order=6,
        theta=11.0,
        discretizer="zoh",
        output=output,
        dtype=dtype,
        lengths=lengths if ragged else None,
        max_device_memory=max_device_memory,
        method=method,
    )
    assert type(got) is np.ndarray
    if output == "sequence" and ragged:
        expected = recurrence(X, Abar, Bbar, "sequence")  # states of the padded arrays
    else:
        expected = expected_output(X, lengths if ragged else None, Abar, Bbar, output)
    assert_states_close(got, expected, dtype)


@pytest.mark.parametrize("output", ["final", "sequence", "max"])
def test_driver_device_input_gives_device_output(fake_cupy, output):
    X, _, Abar, Bbar = driver_case()
    X_dev = fake_cupy.asarray(X)
    got = gpu_cupy.transform_gpu(
        X_dev,
        order=6,
        theta=11.0,
        discretizer="zoh",
        output=output,
        dtype=np.float32,
        return_cupy=True,
        max_device_memory=1,
    )
    assert isinstance(got, FakeDeviceArray) and got.dtype == np.float32
    expected = expected_output(X.astype(np.float32), None, Abar, Bbar, output)
    assert_states_close(got, expected, np.float32)


def test_driver_halves_chunk_on_out_of_memory(fake_cupy, monkeypatch):
    X, _, Abar, Bbar = driver_case(n_samples=9)
    compute = gpu_cupy._compute_chunk
    sizes = []

    def flaky(x, *args):
        sizes.append(x.shape[0])
        if x.shape[0] > 2:
            raise FakeOutOfMemory
        return compute(x, *args)

    monkeypatch.setattr(gpu_cupy, "_compute_chunk", flaky)
    got = gpu_cupy.transform_gpu(
        X, order=6, theta=11.0, discretizer="zoh", output="final", dtype=np.float64
    )
    assert sizes[:3] == [9, 4, 2] and max(sizes[3:]) <= 2
    assert_states_close(got, recurrence(X, Abar, Bbar, "final"), np.float64)

    def always(x, *args):
        raise FakeOutOfMemory

    monkeypatch.setattr(gpu_cupy, "_compute_chunk", always)
    with pytest.raises(FakeOutOfMemory):
        gpu_cupy.transform_gpu(
            X, order=6, theta=11.0, discretizer="zoh", output="final", dtype=np.float64
        )


def test_driver_list_of_sequences(fake_cupy):
    X, lengths, Abar, Bbar = driver_case()
    U = [X[s, :length] for s, length in enumerate(lengths)]
    final = gpu_cupy.transform_gpu_features(U, 6, 11.0, "zoh", "final")
    assert_states_close(final, expected_output(X, lengths, Abar, Bbar, "final"), np.float64)
    sequences = gpu_cupy.transform_gpu_features(U, 6, 11.0, "zoh", "sequence")
    for u, states in zip(U, sequences, strict=True):
        expected = recurrence(u[None], Abar, Bbar, "sequence")[0]
        assert_states_close(states, expected, np.float64)


def test_driver_rejects_bad_arguments(fake_cupy):
    X = np.zeros((2, 3, 1))
    options = dict(order=2, theta=3.0, discretizer="zoh", dtype=np.float64)
    with pytest.raises(ValueError, match="output"):
        gpu_cupy.transform_gpu(X, output="median", **options)
    with pytest.raises(ValueError, match="lengths"):
        gpu_cupy.transform_gpu(X, output="final", lengths=[1, 4], **options)
    empty = gpu_cupy.transform_gpu(np.zeros((0, 3, 1)), output="final", **options)
    assert empty.shape == (0, 2)


# ------------------------------------------------------------- CuPy on a real GPU


@pytest.fixture
def cupy_gpu():
    cupy = pytest.importorskip("cupy")
    if not gpu_cupy.gpu_available():
        pytest.skip("CuPy is installed but sees no CUDA GPU.")
    gpu_cupy.clear_device_cache()
    return cupy


@pytest.mark.parametrize(("output", "method"), [*OUTPUT_METHODS, ("final", "recurrence")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ragged", [False, True])
def test_cupy_transform_matches_recurrence(cupy_gpu, output, method, dtype, ragged):
    if method == "recurrence":
        pytest.importorskip("numba.cuda")
    X, lengths, Abar, Bbar = driver_case(n_samples=11, n_steps=57, n_channels=3, order=12)
    X = X.astype(dtype)
    if ragged:
        for s, length in enumerate(lengths):
            X[s, length:] = 0
    options = dict(order=12, theta=11.0, discretizer="zoh", output=output, dtype=dtype)
    if ragged:
        options["lengths"] = lengths
    if output == "sequence" and ragged:
        expected = recurrence(X, Abar, Bbar, "sequence")
    else:
        expected = expected_output(X, lengths if ragged else None, Abar, Bbar, output)
    for memory in (None, 1):  # everything at once; one sample per chunk
        got = gpu_cupy.transform_gpu(X, max_device_memory=memory, method=method, **options)
        assert_states_close(got, expected, dtype)
    got = gpu_cupy.transform_gpu(cupy_gpu.asarray(X), return_cupy=True, **options)
    assert isinstance(got, cupy_gpu.ndarray)
    assert_states_close(got.get(), expected, dtype)


def test_cupy_device_impulse_response_is_cached(cupy_gpu):
    first = gpu_cupy.device_impulse_response(8, 20.0, "zoh", 30, np.float32)
    assert first is gpu_cupy.device_impulse_response(8, 20.0, "zoh", 30, "float32")
    Abar, Bbar = discrete_system(8, 20.0)
    np.testing.assert_allclose(first.get(), impulse_response(Abar, Bbar, 30), rtol=1e-6)


# ------------------------------------------------- Numba-CUDA kernels (CUDA simulator)


def test_numba_kernels_in_simulator_subprocess():
    if IN_SIMULATOR:
        pytest.skip("The simulator is on in this process: the test_cudasim_* tests run here.")
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", __file__, "-q", "-k", "cudasim"]
    command += ["-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"]
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    report = result.stdout[-4000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    assert " passed" in result.stdout and " skipped" not in result.stdout, report


@pytest.fixture(scope="module")
def numba_cuda():
    # numba.cuda is imported in this process only when a real GPU is there: other test
    # modules may switch the simulator on in-process, which needs it not imported yet.
    if not IN_SIMULATOR and not gpu_cupy.gpu_available():
        pytest.skip("Runs in the CUDA simulator subprocess, or on a real GPU.")
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("numba.cuda sees no device.")
    from lmu_sk.kernels import cuda_numba

    return cuda_numba


SIM = settings(max_examples=4)


def small_problems():
    return problems(max_order=8, max_steps=20, max_channels=2, max_samples=3)


@SIM
@given(small_problems())
def test_cudasim_ragged_final_states(numba_cuda, p):
    got = numba_cuda.ragged_final_states(p.X, p.lengths, p.H)
    expected = np.stack([states[-1] for states in own_states(p)])
    assert_states_close(got, expected, p.dtype)


@SIM
@given(small_problems())
def test_cudasim_recurrence_final_sequence_and_streaming(numba_cuda, p):
    sequence = recurrence(p.X, p.Abar, p.Bbar, "sequence")
    got = numba_cuda.recurrence_states(p.X, p.Abar, p.Bbar, "sequence")
    assert_states_close(got, sequence, p.dtype)
    half = p.X.shape[1] // 2
    if half:  # a stream fed in two chunks, carrying the state across
        first = numba_cuda.recurrence_states(p.X[:, :half], p.Abar, p.Bbar, "final")
        got = numba_cuda.recurrence_states(
            p.X[:, half:], p.Abar, p.Bbar, "final", initial_state=first
        )
    else:
        got = numba_cuda.recurrence_states(p.X, p.Abar, p.Bbar, "final")
    assert_states_close(got, sequence[:, -1], p.dtype)


@SIM
@given(small_problems(), st.sampled_from(["mean", "max", "last"]), st.booleans())
def test_cudasim_pooled_states(numba_cuda, p, reduce, ragged):
    def pool(states):
        return states[-1] if reduce == "last" else getattr(states, reduce)(axis=0)

    if ragged:
        got = numba_cuda.pooled_states(p.X, p.Abar, p.Bbar, reduce, p.lengths)
        expected = np.stack([pool(states) for states in own_states(p)])
    else:
        got = numba_cuda.pooled_states(p.X, p.Abar, p.Bbar, reduce)
        states = recurrence(p.X, p.Abar, p.Bbar, "sequence")
        expected = np.stack([pool(s) for s in states])
    assert_states_close(got, expected, p.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cudasim_small_device_limits(numba_cuda, monkeypatch, dtype):
    # Fewer threads than states (threads loop over them), Abar in global memory, groups of
    # two rows per block.
    limits = {"threads": 4, "shared": 48 * np.dtype(dtype).itemsize, "warp": 4, "sms": 1}
    monkeypatch.setattr(numba_cuda, "_device_limits", lambda: limits)
    X, lengths, Abar, Bbar = driver_case(n_samples=3, n_steps=9, n_channels=2, order=7)
    X = X.astype(dtype)
    assert numba_cuda._group_and_shared(7, 6, np.dtype(dtype).itemsize, True, limits) == (2, False)
    for s, length in enumerate(lengths):
        X[s, length:] = 0
    sequence = recurrence(X, Abar, Bbar, "sequence")
    got = numba_cuda.recurrence_states(X, Abar, Bbar, "sequence")
    assert_states_close(got, sequence, dtype)
    expected = expected_output(X, lengths, Abar, Bbar, "max")
    assert_states_close(numba_cuda.pooled_states(X, Abar, Bbar, "max", lengths), expected, dtype)
    H = impulse_response(Abar, Bbar, 9)
    expected = expected_output(X, lengths, Abar, Bbar, "final")
    assert_states_close(numba_cuda.ragged_final_states(X, lengths, H), expected, dtype)


def test_cudasim_device_arrays_stay_on_device(numba_cuda):
    from numba import cuda

    X, _, Abar, Bbar = driver_case(n_samples=2, n_steps=6, n_channels=1, order=3)
    got = numba_cuda.recurrence_states(cuda.to_device(X), Abar, Bbar, "final")
    assert not isinstance(got, np.ndarray)
    assert_states_close(got.copy_to_host(), recurrence(X, Abar, Bbar, "final"), np.float64)
    with pytest.raises(ValueError, match="initial_state"):
        numba_cuda.recurrence_states(X, Abar, Bbar, initial_state=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="reduce"):
        numba_cuda.pooled_states(X, Abar, Bbar, "median")


def test_cuda_numba_imports_without_touching_numba_cuda():
    code = "import sys, lmu_sk.kernels.cuda_numba, lmu_sk.kernels.gpu_cupy; "
    code += "assert 'numba.cuda' not in sys.modules and 'cupy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_launch_configuration_follows_device_limits():
    from lmu_sk.kernels import cuda_numba

    limits = {"threads": 1024, "shared": 48 * 1024, "warp": 32, "sms": 132}
    assert cuda_numba._threads_per_block(5, limits) == 32
    assert cuda_numba._threads_per_block(468, limits) == 480
    assert cuda_numba._threads_per_block(5000, limits) == 1024
    group, a_shared = cuda_numba._group_and_shared(64, 60000, 4, False, limits)
    assert a_shared and group == 8
    group, a_shared = cuda_numba._group_and_shared(468, 60000, 4, False, limits)
    assert not a_shared and 1 <= group <= 8 and 2 * group * 468 * 4 <= limits["shared"]
    assert cuda_numba._group_and_shared(64, 10, 4, False, limits)[0] == 1
    with pytest.raises(ValueError, match="shared memory"):
        cuda_numba._group_and_shared(10_000, 10, 8, False, limits)
