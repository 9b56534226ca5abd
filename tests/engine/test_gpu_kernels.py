"""Tests of the engine's maps and of its GPU machinery against the reference recurrence.

* The maps of ``lmu_sk.engine.algebra`` run here with ``xp=numpy``: the same code runs with
  CuPy on a GPU (and on the CPU in production).
* The Numba-CUDA kernels run in Numba's CUDA simulator, which must be switched on before
  ``numba.cuda`` is first imported: ``test_numba_kernels_in_simulator_subprocess`` runs the
  ``test_cudasim_*`` tests of this file in a fresh interpreter with
  ``NUMBA_ENABLE_CUDASIM=1``. Run alone without the simulator they skip, unless a real CUDA
  GPU is present, where they run on it.
* The GPU feeding of the chunk loop (pinned buffers, streams, out-of-memory retry) runs with
  a NumPy stand-in for CuPy; against real CuPy it runs only on a machine with a GPU.

Tolerances are relative to the largest state magnitude of the oracle. Inputs are rounded
to the compute dtype before the oracle sees them, so only the kernels' own error counts:

* float64, ``1e-10``: every route sums at most ``n <= 300`` products of float64 numbers
  (rounding ~``n eps`` = ``7e-14``), the impulse response comes from ``n / 8`` products
  with ``Abar^8``, the FFT adds ``O(eps log n)``, and cancellation in a sum can make a
  state smaller than its terms by about ``sqrt(n)``; ``1e-10`` leaves a wide margin over
  all of that.
* float32, ``1e-4``: the impulse response and block matrices are rounded to float32
  (``6e-8`` relative) and accumulated over up to 300 steps (``n eps`` ~ ``2e-5`` in the
  worst case, ``sqrt(n) eps`` typically); block products carry the state through
  ``n / T`` products with ``Abar^T``.
"""

from __future__ import annotations

import importlib.util
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
from strategies import dn_problems

from lmu_sk._device import gpu_available, to_numpy
from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.engine import algebra as K
from lmu_sk.engine import constants, plan, run
from lmu_sk.engine import features as engine_features
from lmu_sk.reference import recurrence

TOLERANCE = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-4}
pytestmark = pytest.mark.gpu

IN_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
ROOT = Path(__file__).resolve().parents[2]


def assert_states_close(got, expected, dtype, magnitude=0.0):
    """Error within TOLERANCE of the largest state, or of ``magnitude``: the size of the
    terms summed (rounding scales with them, also where they cancel to tiny states)."""
    got = to_numpy(got)
    assert got.shape == expected.shape
    assert got.dtype == np.dtype(dtype)
    scale = max(float(np.max(np.abs(expected), initial=0.0)), magnitude, 1e-30)
    error = float(np.max(np.abs(got.astype(np.float64) - expected), initial=0.0))
    assert error <= TOLERANCE[np.dtype(dtype)] * scale, (error, scale)


@st.composite
def problems(draw, max_order=64, max_steps=300, max_channels=4, max_samples=4):
    """A random Delay Network and inputs, each sample zero after a drawn length."""
    X, order, theta = draw(dn_problems(max_order, max_steps, max_channels, max_samples))
    n_samples, n_steps, dtype = X.shape[0], X.shape[1], X.dtype
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lengths = rng.integers(1, n_steps + 1, n_samples)
    for s, length in enumerate(lengths):
        X[s, length:] = 0
    Abar, Bbar = discrete_system(order, theta, "zoh")
    H = impulse_response(Abar, Bbar, n_steps)
    return SimpleNamespace(
        X=X, lengths=lengths, Abar=Abar, Bbar=Bbar, H=H, dtype=dtype, order=order, theta=theta
    )


def own_states(p):
    """Every sample's states over its own steps, by the oracle."""
    return [
        recurrence(p.X[s : s + 1, :length], p.Abar, p.Bbar, "sequence")[0]
        for s, length in enumerate(p.lengths)
    ]


def row_states(p):
    """The oracle's states of every row ``(n_samples * n_channels, n_steps, order)``."""
    states = recurrence(p.X, p.Abar, p.Bbar, "sequence")  # (N, n, c * d)
    N, n, _ = states.shape
    return states.reshape(N, n, -1, p.order).transpose(0, 2, 1, 3).reshape(-1, n, p.order)


def block_matrix(p, block):
    T = min(block, p.X.shape[1])
    return constants.block_matrix(p.Abar, impulse_response(p.Abar, p.Bbar, T), T).astype(p.dtype)


# --------------------------------------------------------------------- the maps on NumPy


@given(problems())
def test_final_states_match_recurrence(p):
    got = K.final_states(K.rows(p.X, np), p.H[::-1].astype(p.dtype), np)
    got = got.reshape(p.X.shape[0], -1)
    terms = float(np.abs(p.X).sum(axis=1).max() * np.abs(p.H).max())
    assert_states_close(got, recurrence(p.X, p.Abar, p.Bbar, "final"), p.dtype, terms)


def test_rows_of_one_channel_read_inputs_in_place():
    X = np.ones((3, 5, 1))
    assert np.shares_memory(K.rows(X, np), X)


@given(problems(max_steps=60), st.integers(0, 40))
def test_fft_states_match_recurrence_for_any_long_enough_transform(p, extra):
    n_fft = plan.fft_length(p.X.shape[1]) + 2 * extra
    H_hat = np.fft.rfft(p.H, n=n_fft, axis=0).astype(np.result_type(p.dtype, np.complex64))
    got = K.fft_states(K.rows(p.X, np), H_hat, n_fft, np)
    assert got.dtype == p.dtype
    assert_states_close(got, row_states(p), p.dtype)


@given(problems(), st.integers(1, 80), st.booleans())
def test_blocks_carry_the_state(p, block, in_place):
    W = block_matrix(p, block)
    U = K.rows(p.X, np)
    got = np.empty((*U.shape, p.order), dtype=p.dtype)
    out = got if in_place else None
    for t0, G in K.iter_blocks(U, W, p.order, np, out=out):
        if out is None:
            got[:, t0 : t0 + G.shape[1]] = G
        else:
            assert np.shares_memory(G, out)
    assert_states_close(got, row_states(p), p.dtype)


@given(problems(max_steps=100), st.integers(1, 40), st.integers(1, 99))
def test_blocks_from_an_initial_state_continue_the_sequence(p, block, cut):
    n = p.X.shape[1]
    cut = min(cut, n)
    W = block_matrix(p, block)
    U = K.rows(p.X, np)
    expected = row_states(p)
    state = expected[:, cut - 1].astype(p.dtype)
    got = [G.copy() for _, G in K.iter_blocks(U[:, cut:], W, p.order, np, state=state)]
    if got:
        assert_states_close(np.concatenate(got, axis=1), expected[:, cut:], p.dtype)


@given(problems(), st.sampled_from(["mean", "max"]), st.integers(1, 80), st.booleans())
def test_reduced_blocks(p, reduce, block, ragged):
    W = block_matrix(p, block)
    U = K.rows(p.X, np)
    n_channels = p.X.shape[2]
    if ragged:
        expected = np.stack([getattr(s, reduce)(axis=0) for s in own_states(p)])
        lengths = K.row_lengths(p.lengths, n_channels, np)
    else:
        expected = getattr(recurrence(p.X, p.Abar, p.Bbar, "sequence"), reduce)(axis=1)
        lengths = None
    got = K.reduce_blocks(U, W, p.order, reduce, np, lengths=lengths)
    assert_states_close(got.reshape(expected.shape), expected, p.dtype)


@given(problems())
def test_right_aligned_final_states_end_at_own_length(p):
    X = K.right_align(p.X, p.lengths, np)
    got = K.final_states(K.rows(X, np), p.H[::-1].astype(p.dtype), np)
    expected = np.stack([states[-1] for states in own_states(p)])
    assert_states_close(got.reshape(expected.shape), expected, p.dtype)


@given(st.integers(1, 5000))
def test_fft_length_is_short_even_and_smooth(n):
    m = plan.fft_length(n)
    assert m >= 2 * n - 1 and m % 2 == 0
    rest = m
    for prime in (2, 3, 5, 7):
        while rest % prime == 0:
            rest //= prime
    assert rest == 1
    assert all(k % 2 or not plan._is_smooth(k) for k in range(max(2 * n - 1, 2), m))


def test_block_matrix_layout():
    Abar, Bbar = discrete_system(3, 5.0)
    H = impulse_response(Abar, Bbar, 4)
    W = constants.block_matrix(Abar, H, 4)
    assert W.shape == (3 + 4, 4 * 3)
    np.testing.assert_allclose(W[:3, 6:9], np.linalg.matrix_power(Abar, 3).T, atol=1e-14)
    np.testing.assert_allclose(W[3 + 1, 6:9], H[1], atol=1e-14)
    assert not W[3 + 3, 6:9].any()
    with pytest.raises(ValueError, match="block"):
        constants.block_matrix(Abar, H, 5)


def test_steps_per_block_follow_the_device_range():
    assert plan.block_steps(64, 784, "cpu") == 16
    assert plan.block_steps(468, 784, "cpu") == 8
    assert plan.block_steps(64, 784, "gpu") == 64
    assert plan.block_steps(468, 784, "gpu") == 16
    assert plan.block_steps(2, 5, "gpu") == 5
    assert 1 <= plan.block_steps(10_000, 3, "cpu") <= 3


def test_cost_tables_prefer_blocks_for_small_and_fft_for_large_orders():
    for device in ("cpu", "gpu"):
        assert plan.choose_route("sequence", "auto", 16, 784, 4, device) == "blocked"
        assert plan.choose_route("sequence", "auto", 2048, 784, 4, device) == "fft"
    # measured on an H200 (all states, float32, 784 steps): blocked faster at order 64,
    # the FFT 2-3.6x faster at order 468 (the table's note in lmu_sk/engine/plan.py)
    assert plan.choose_route("sequence", "auto", 64, 784, 4, "gpu") == "blocked"
    assert plan.choose_route("sequence", "auto", 468, 784, 4, "gpu") == "fft"
    assert plan.choose_route("final", "fft", 16, 784, 4, "cpu") == "gemm"
    assert plan.choose_route("mean", "fft", 16, 784, 4, "cpu") == "fft"
    assert plan.choose_route("max", "recurrence", 16, 784, 4, "cpu") == "recurrence"


def test_constants_are_cached_per_dtype_and_device(monkeypatch):
    first = constants.get("H", 8, 20.0, "zoh", 30, np.float32)
    assert first is constants.get("H", 8, 20.0, "zoh", 30, "float32")
    assert not first.flags.writeable and first.dtype == np.float32
    np.testing.assert_allclose(first, impulse_response(*discrete_system(8, 20.0), 30), rtol=1e-6)
    fake = install(monkeypatch)
    try:
        on_device = constants.get("H", 8, 20.0, "zoh", 30, np.float32, fake)
        assert isinstance(on_device, FakeDeviceArray) and on_device is not first
        np.testing.assert_array_equal(on_device.get(), first)
    finally:
        clear_caches()


def test_gpu_available_never_raises():
    assert isinstance(gpu_available(), bool)


# ------------------------------------------- the chunk loop on a NumPy stand-in for CuPy


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
    return per_sample


OUTPUT_METHODS = [
    ("final", "auto"),
    ("mean", "auto"),
    ("max", "auto"),
    ("sequence", "auto"),
    ("sequence", "gemm"),
    ("sequence", "fft"),
]


def check_output(got, expected, dtype):
    if isinstance(expected, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_states_close(np.asarray(g), e, dtype)
    else:
        assert_states_close(got, expected, dtype)


@pytest.mark.parametrize(("output", "method"), OUTPUT_METHODS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("budget", [1 << 30, 1])
def test_host_data_stream_through_the_fake_device(
    fake_cupy, output, method, dtype, ragged, budget
):
    # budget=1: one sample per chunk, so both pinned buffers and their reuse are exercised
    X, lengths, Abar, Bbar = driver_case()
    X = X.astype(dtype)
    U = [X[s, :length] for s, length in enumerate(lengths)] if ragged else X
    options = dict(order=6, theta=11.0, output=output, method=method, xp=fake_cupy)
    got = engine_features(U, budget=budget, **options)
    assert type(got) is (list if ragged and output == "sequence" else np.ndarray)
    expected = expected_output(X, lengths if ragged else None, Abar, Bbar, output)
    if output == "sequence" and not ragged:
        expected = np.stack(expected)
    check_output(got, expected, dtype)


def test_the_stand_in_offers_a_real_gpu_no_host_memory(fake_cupy, monkeypatch):
    """On a machine with a GPU (``LMU_SK_TEST_GPU=cupy``, outside the simulator) the
    stand-in's arrays have no ``__cuda_array_interface__``: its address is host memory,
    which a real Numba-CUDA kernel read as a device pointer (an illegal address that left
    the CUDA context unusable for every test after it, seen on an H200). And, as CuPy,
    ``ascontiguousarray`` refuses a NumPy array (which hid a dense head's bug)."""
    import fake_cupy as stand_in

    from lmu_sk._device import is_cuda_array

    a = fake_cupy.asarray(np.ones(3))
    assert is_cuda_array(a)  # here (no real GPU): the interface, as CuPy's arrays have
    monkeypatch.setattr(stand_in, "REAL_GPU", True)
    monkeypatch.setattr(stand_in, "_in_cuda_simulator", lambda: False)  # (as on a GPU)
    assert not hasattr(a, "__cuda_array_interface__") and not is_cuda_array(a)
    if stand_in.STRICT:
        with pytest.raises(TypeError, match="incorrect type"):
            fake_cupy.ascontiguousarray(np.ones(3))
    assert fake_cupy.ascontiguousarray(a) is a


@pytest.mark.parametrize("output", ["final", "sequence", "max"])
def test_device_input_gives_device_output(fake_cupy, output):
    X, _, Abar, Bbar = driver_case()
    X_dev = fake_cupy.asarray(X.astype(np.float32))
    got = engine_features(
        X_dev, order=6, theta=11.0, output=output, xp=fake_cupy, budget=1000, return_device=True
    )
    assert isinstance(got, FakeDeviceArray) and got.dtype == np.float32
    expected = expected_output(X.astype(np.float32), None, Abar, Bbar, output)
    if output == "sequence":
        expected = np.stack(expected)
    assert_states_close(got, expected, np.float32)


class CudaAPIError(RuntimeError):
    """Stands in for Numba-CUDA's driver error (``numba.cuda.cudadrv.driver``), matched
    by its name and its ``code`` as the engine matches it."""

    def __init__(self, code, msg):
        super().__init__(code, msg)
        self.code = code


def _numba_cuda_out_of_memory():
    return CudaAPIError(2, "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")


@pytest.mark.parametrize(
    "out_of_memory", [FakeOutOfMemory, _numba_cuda_out_of_memory], ids=["cupy", "numba-cuda"]
)
def test_out_of_memory_halves_the_chunk_and_resumes(fake_cupy, monkeypatch, out_of_memory):
    """CuPy's out-of-memory error, and Numba-CUDA's driver error of code 2
    (CUDA_ERROR_OUT_OF_MEMORY: its kernels allocate outside CuPy's pool), which the retry
    did not catch: the computation failed where half the chunk fitted."""
    X, _, Abar, Bbar = driver_case(n_samples=9)
    compute = run._feature_chunk
    sizes = []

    def flaky(x, *args):
        sizes.append(x.shape[0])
        if x.shape[0] > 2:
            raise out_of_memory()
        return compute(x, *args)

    monkeypatch.setattr(run, "_feature_chunk", flaky)
    got = engine_features(X, order=6, theta=11.0, xp=fake_cupy)
    assert sizes[:3] == [9, 4, 2] and max(sizes[3:]) <= 2
    assert_states_close(got, recurrence(X, Abar, Bbar, "final"), np.float64)

    def always(x, *args):
        raise out_of_memory()

    monkeypatch.setattr(run, "_feature_chunk", always)
    with pytest.raises(type(out_of_memory())):
        engine_features(X, order=6, theta=11.0, xp=fake_cupy)


def test_other_device_errors_are_not_retried(fake_cupy, monkeypatch):
    X, _, _, _ = driver_case(n_samples=9)
    sizes = []

    def launch_failed(x, *args):
        sizes.append(x.shape[0])
        raise CudaAPIError(719, "CUDA_ERROR_LAUNCH_FAILED")

    monkeypatch.setattr(run, "_feature_chunk", launch_failed)
    with pytest.raises(CudaAPIError, match="LAUNCH_FAILED"):
        engine_features(X, order=6, theta=11.0, xp=fake_cupy)
    assert sizes == [9]


def test_padded_arrays_with_lengths(fake_cupy):
    X, lengths, Abar, Bbar = driver_case()
    for s, length in enumerate(lengths):
        X[s, length:] = 0
    for xp in (np, fake_cupy):
        final = engine_features(X, order=6, theta=11.0, xp=xp, lengths=lengths)
        assert_states_close(final, expected_output(X, lengths, Abar, Bbar, "final"), np.float64)
        sequences = engine_features(
            X, order=6, theta=11.0, output="sequence", xp=xp, lengths=lengths
        )
        check_output(sequences, expected_output(X, lengths, Abar, Bbar, "sequence"), np.float64)


def test_no_samples_give_an_empty_result(fake_cupy):
    for xp in (np, fake_cupy):
        empty = engine_features(np.zeros((0, 3, 1)), order=2, theta=3.0, xp=xp)
        assert empty.shape == (0, 2)


# ------------------------------------------------------------- CuPy on a real GPU


@pytest.fixture
def cupy_gpu():
    cupy = pytest.importorskip("cupy")
    if not gpu_available():
        pytest.skip("CuPy is installed but sees no CUDA GPU.")
    constants.clear()
    return cupy


@pytest.mark.parametrize(("output", "method"), [*OUTPUT_METHODS, ("final", "recurrence")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ragged", [False, True])
def test_cupy_features_match_recurrence(cupy_gpu, output, method, dtype, ragged):
    if method == "recurrence":
        pytest.importorskip("numba.cuda")
    X, lengths, Abar, Bbar = driver_case(n_samples=11, n_steps=57, n_channels=3, order=12)
    X = X.astype(dtype)
    U = [X[s, :length] for s, length in enumerate(lengths)] if ragged else X
    expected = expected_output(X, lengths if ragged else None, Abar, Bbar, output)
    if output == "sequence" and not ragged:
        expected = np.stack(expected)
    options = dict(order=12, theta=11.0, output=output, method=method, xp=cupy_gpu)
    for budget in (1 << 30, 4096):  # everything at once; one sample per chunk
        check_output(engine_features(U, budget=budget, **options), expected, dtype)
    if not ragged:
        got = engine_features(cupy_gpu.asarray(X), return_device=True, **options)
        assert isinstance(got, cupy_gpu.ndarray)
        check_output(got.get(), expected, dtype)


# ------------------------------------------------- Numba-CUDA kernels (CUDA simulator)


def test_numba_kernels_in_simulator_subprocess(in_cuda_simulator):
    stdout, report = in_cuda_simulator(__file__)
    assert " passed" in stdout and " skipped" not in stdout, report


@pytest.fixture(scope="module")
def numba_cuda():
    # numba.cuda is imported in this process only when a real GPU is there: other test
    # modules may switch the simulator on in-process, which needs it not imported yet.
    if not IN_SIMULATOR and not gpu_available():
        pytest.skip("Runs in the CUDA simulator subprocess, or on a real GPU.")
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("numba.cuda sees no device.")
    from lmu_sk.kernels import cuda as cuda_kernels

    return cuda_kernels


SIM = settings(max_examples=4)


def small_problems():
    return problems(max_order=8, max_steps=20, max_channels=2, max_samples=3)


@pytest.fixture(scope="module")
def ragged_kernel(numba_cuda):
    """The candidate kernel kept out of the package (``benchmarks/ragged_kernel.py``)."""
    spec = importlib.util.spec_from_file_location(
        "ragged_kernel", ROOT / "benchmarks" / "ragged_kernel.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@SIM
@given(small_problems())
def test_cudasim_ragged_final_states(ragged_kernel, p):
    got = ragged_kernel.ragged_final_states(p.X, p.lengths, p.H)
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
def test_cudasim_small_device_limits(numba_cuda, ragged_kernel, monkeypatch, dtype):
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
    assert_states_close(ragged_kernel.ragged_final_states(X, lengths, H), expected, dtype)


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


def test_engine_imports_without_touching_numba_cuda_or_cupy():
    code = "import sys, lmu_sk, lmu_sk.kernels.cuda, lmu_sk.engine.run; "
    code += "assert 'numba.cuda' not in sys.modules and 'cupy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_launch_configuration_follows_device_limits():
    from lmu_sk.kernels import cuda as cuda_numba

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


@settings(max_examples=6, deadline=None)
@given(
    order=st.integers(1, 5),
    n_biases=st.integers(0, 3),
    compete=st.booleans(),
    kept=st.sampled_from(["all", "thresholds", "moments", "some"]),
    seed=st.integers(0, 2**16),
)
def test_cudasim_pooled_features_equal_the_cpu_kernel(
    numba_cuda, order, n_biases, compete, kept, seed
):
    """The GPU's pooled kernel writes the features of the CPU's, in the same layout: the
    same float64 states (summed in the same order: equal to rounding), the same float32
    comparisons and counts."""
    from lmu_sk.kernels import cpu

    rng = np.random.default_rng(seed)
    X, lengths, Abar, Bbar = driver_case(n_samples=3, n_steps=12, n_channels=3, order=order)
    for s, length in enumerate(lengths):
        X[s, length:] = 0
    inputs = np.array([2, 0])
    K = n_biases
    columns = {
        "all": np.arange(3 * K + 3),
        "thresholds": np.arange(3 * K),
        "moments": 3 * K + np.arange(3),
        "some": np.array([j for j in range(3 * K + 3) if j % 2 == 0]),
    }[kept]
    biases = np.sort(0.3 * rng.standard_normal((2, order, K)), -1).astype(np.float32)
    scale = rng.uniform(0.5, 2, (2, order))
    width = 2 * order * (len(columns) + (2 if compete else 0))
    got = np.full((3, width), np.nan)
    numba_cuda.pooled_features(
        X, lengths, inputs, Abar, Bbar, biases, scale, got, columns, compete=compete
    )
    expected = np.full((3, width), np.nan)
    cpu.pooled_features(
        X, lengths, np.ascontiguousarray(Abar.T), Bbar, biases, scale, expected, columns, 0,
        2 * order * len(columns) if compete else None, inputs=inputs,
    )  # fmt: skip
    assert not np.isnan(got).any()  # every feature written
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_cudasim_pooled_features_flush_their_float32_counts(numba_cuda):
    """Past FLUSH_STEPS steps the float32 counts and sums go into float64 (as on the CPU)."""
    from lmu_sk.kernels import cpu

    n_steps = cpu.FLUSH_STEPS + 37
    X, _, Abar, Bbar = driver_case(n_samples=1, n_steps=n_steps, n_channels=1, order=2)
    lengths = np.array([X.shape[1]])
    biases = np.array([[[-0.1], [0.05]]], dtype=np.float32)
    scale = np.ones((1, 2))
    columns = np.arange(6)
    got = np.full((1, 16), np.nan)
    numba_cuda.pooled_features(
        X, lengths, np.array([0]), Abar, Bbar, biases, scale, got, columns, compete=True
    )
    expected = np.full((1, 16), np.nan)
    cpu.pooled_features(
        X, lengths, np.ascontiguousarray(Abar.T), Bbar, biases, scale, expected, columns, 0, 12
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="out must have shape"):
        numba_cuda.pooled_features(
            X, lengths, np.array([0]), Abar, Bbar, biases, scale, got[:, :4], columns,
            compete=True,
        )  # fmt: skip


@pytest.mark.parametrize("on_device", [False, True])
def test_a_spiky_row_takes_the_blocked_products_alone_on_the_gpu(fake_cupy, on_device):
    """The rows 'auto' keeps off the FFT are computed again apart, into the device's or
    the host's result: the others' features are those they have alone."""
    X = np.random.default_rng(0).standard_normal((3, 1000, 1)).astype(np.float32)
    X[2, 50] = 1e5
    route = plan.plan_features(3, 1000, 1, 512, "max", "auto", 4, "gpu", 1 << 30)
    assert route.route == "fft"
    options = dict(order=512, theta=1000.0, output="max", xp=fake_cupy, return_device=on_device)

    def features(U, **more):
        got = engine_features(fake_cupy.asarray(U), **options, **more)
        return to_numpy(got) if on_device else got

    both = features(X)
    np.testing.assert_array_equal(both[:2], features(X[:2]))
    np.testing.assert_array_equal(both[2:], features(X[2:], method="gemm"))
