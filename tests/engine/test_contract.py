"""The engine's contract: every back-end x output x equal/ragged x dtype against the reference.

Back-ends:

* ``numpy``: the engine on the CPU, every route of every output (NumPy, SciPy's FFT and the
  compiled Numba CPU kernels).
* ``fake_cupy``: the engine with a NumPy stand-in for CuPy as its array module: the GPU's
  routes, planner, chunk loop, pinned staging and sinks, run on the CPU.
* ``cudasim``: the Numba-CUDA kernels (the GPU's 'recurrence' route) in Numba's CUDA
  simulator, which must be switched on before ``numba.cuda`` is imported: the ``cudasim``
  cases run in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``, on small shapes. Where a
  real GPU is present they run on it too, in this process.
* ``cupy``: the engine on a real GPU, when CuPy sees one (skipped otherwise).

The step mode's contract: the same sequences fed in chunks and single steps, each continued
from the state carried out of the one before (:mod:`lmu_sk.engine.stream`; the Numba-CUDA
kernels' ``initial_state``), give the features of the whole sequences, for every output on
every back-end.

Outputs are ``final``, ``sequence``, ``mean``, ``max`` (:func:`lmu_sk.engine.features`)
and ``pooled`` (:func:`lmu_sk.engine.pooled_features`: the proportion of steps above each
threshold, mean, max and min of every state of several windows over the inputs and their
differences), each for equal lengths and for sequences of different lengths, in float32
and float64, against the reference recurrence :func:`lmu_sk.dn_states`.

Tolerances, relative to ``scale = max|u| * sum_k max_i |H[k, i]|``, the largest value a
state can take for inputs bounded by ``max|u|`` (the error of a sum of products is bounded
by the unit roundoff times the sum of the products' magnitudes, which this scale bounds):

* float64, ``1e-10``: at most 60 steps of float64 sums (``60 eps ~ 1e-14``), the impulse
  response from ``n / 8`` products with ``Abar^8``, the FFT's ``O(eps log n)``: ``1e-10``
  is a wide margin.
* float32, ``2e-5``: the inputs are rounded to float32 before the oracle sees them, so only
  the routes' own rounding counts: constants rounded once (``6e-8``), at most 60 steps
  accumulated (``60 eps = 3.6e-6`` worst case), and the uncompensated CUDA recurrence,
  whose rounded ``Abar`` moves the decay by ``eps * theta`` relative (``theta <= 60``:
  ``4e-6``). Measured worst case of the CPU routes over these cases: ``3e-8`` (float32),
  ``1e-16`` (float64): the scale is a bound, the states mostly well below it.

A proportion counts comparisons with a threshold: a state within the tolerance of its
threshold may fall either way, so it is bracketed by counting against the threshold moved
by the tolerance down and up.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from fake_cupy import clear_caches, install
from pooled_oracle import decided, state_scale, tolerances

from lmu_sk import dn_states
from lmu_sk._device import gpu_available
from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.engine import PooledSpec, WindowSpec, algebra, features, plan, pooled_features
from lmu_sk.engine.pooling import POOLS, TRANSFORMS
from lmu_sk.engine.stream import CarriedDN, CarriedPools
from lmu_sk.reference import pooled as pooled_reference

pytestmark = pytest.mark.gpu

IN_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
TOLERANCE = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 2e-5}
OUTPUTS = ("final", "sequence", "mean", "max", "pooled")
BACKENDS = ("numpy", "fake_cupy", "cudasim", "cupy")
# routes run per back-end: every method the engine offers there
METHODS = {
    "numpy": ("auto", "gemm", "fft", "recurrence"),
    "fake_cupy": ("auto", "gemm", "fft"),  # 'recurrence' is Numba-CUDA: the cudasim back-end
    "cupy": ("auto", "gemm", "fft", "recurrence"),
}
ORDER, THETA = 5, 17.0
POOLED = PooledSpec(
    windows=(WindowSpec(4, 3.0, 1, (0, 1, 2, 3)), WindowSpec(3, 6.0, 3, (0, 1, 2, 3, 4, 5))),
    transforms=TRANSFORMS,
    pools=POOLS,
    n_biases=2,
)


def scale(U, order, theta):
    u = np.concatenate([np.ravel(u) for u in U]) if isinstance(U, list) else U
    n = max(len(u) for u in U)
    H = impulse_response(*discrete_system(order, theta), n)
    return max(float(np.abs(u).max()), 1e-300) * float(np.abs(H).max(axis=1).sum())


def reference(U, output):
    """The reference recurrence's features, per sample (a list for ragged 'sequence')."""
    states = dn_states(U, ORDER, THETA, output="sequence")
    if output == "sequence":
        return states if isinstance(U, list) else np.asarray(states)
    pool = {"final": lambda s: s[-1], "mean": lambda s: s.mean(0), "max": lambda s: s.max(0)}
    return np.stack([pool[output](s) for s in states])


def assert_features_close(got, expected, tol):
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        pairs = zip(got, expected, strict=True)
    else:
        pairs = [(got, expected)]
    for g, e in pairs:
        g = np.asarray(g)
        assert g.shape == e.shape
        error = float(np.abs(g.astype(np.float64) - e).max(initial=0.0))
        assert error <= tol, (error, tol)


def thresholds(U, spec, gap):
    """Ascending thresholds per window, input and state near the states' own values, and
    the competition's scales, with every comparison clear of the thresholds by ``gap``."""
    for seed in range(50):
        rng = np.random.default_rng(seed)
        biases = [
            np.sort(0.3 * rng.standard_normal((len(w.inputs), w.order, spec.n_biases)), -1)
            for w in spec.windows
        ]
        biases = [b.astype(np.float32) for b in biases]
        scales = [rng.uniform(0.5, 2, (len(w.inputs), w.order)) for w in spec.windows]
        if decided(U, spec, biases, scales, gap):
            return biases, scales
    raise AssertionError("no thresholds clear of the states")


# ----------------------------------------------------------------------------- back-ends
def _features_cudasim(U, output):
    """The Numba-CUDA kernels on NumPy arrays (copied to the simulated device and back)."""
    from lmu_sk.kernels import cuda

    Abar, Bbar = discrete_system(ORDER, THETA)
    if isinstance(U, list):
        lengths = np.array([len(u) for u in U])
        X = np.zeros((len(U), lengths.max(), U[0].shape[1]), dtype=U[0].dtype)
        for row, u in zip(X, U, strict=True):
            row[: len(u)] = u
    else:
        X, lengths = U, None
    if output == "sequence":
        states = cuda.recurrence_states(X, Abar, Bbar, "sequence")
        return states if lengths is None else [s[:n] for s, n in zip(states, lengths, strict=True)]
    if output == "final" and lengths is None:
        return cuda.recurrence_states(X, Abar, Bbar, "final")
    reduce = "last" if output == "final" else output
    return cuda.pooled_states(X, Abar, Bbar, reduce, lengths)


def _gpu_module(monkeypatch):
    """The array module of the GPU's engine beside the Numba-CUDA kernels: CuPy on a real
    GPU, else (the simulator) the stand-in for it."""
    if IN_SIMULATOR:
        return install(monkeypatch)
    import cupy

    return cupy


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """``(name, xp)``: the back-end and the array module the engine gets (None: kernels)."""
    name = request.param
    if name == "cudasim":
        if not IN_SIMULATOR:
            if not gpu_available():
                pytest.skip("runs in the CUDA simulator subprocess (test_cuda_simulator)")
            from numba import cuda  # a real GPU: no simulator in this process

            if not cuda.is_available():
                pytest.skip("CuPy sees a GPU but numba.cuda does not")
        yield name, None
    elif IN_SIMULATOR:
        pytest.skip("only the Numba-CUDA kernels run in the simulator subprocess")
    elif name == "numpy":
        yield name, np
    elif name == "fake_cupy":
        yield name, install(monkeypatch)
        clear_caches()
    else:
        cupy = pytest.importorskip("cupy")
        if not gpu_available():
            pytest.skip("CuPy sees no CUDA GPU")
        yield name, cupy


def one_and_many():
    """Run the body with every sample in one chunk, then with one sample per chunk."""
    yield "one chunk"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plan, "CHUNK_SECONDS", 0.0)
        patch.setattr(plan, "MIN_CHUNK_SAMPLES", 1)
        yield "a chunk per sample"


def to_host(result):
    if isinstance(result, list):
        return [to_host(r) for r in result]
    return result.get() if hasattr(result, "get") else np.asarray(result)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ragged", [False, True], ids=["equal", "ragged"])
@pytest.mark.parametrize("output", OUTPUTS)
def test_engine_matches_the_reference(backend, output, ragged, dtype, make_sequences, monkeypatch):
    name, xp = backend
    U = make_sequences(n_samples=5, n_steps=23, n_channels=2, dtype=dtype, ragged=ragged)
    tol = TOLERANCE[np.dtype(dtype)]
    if output == "pooled":
        # the stand-in's arrays are host memory: its route is the block products (on a
        # machine with a GPU, 'auto' would hand them to the real Numba-CUDA kernel)
        route = "pooled_blocked" if name == "fake_cupy" else "auto"
        if name == "cudasim":
            # the engine's GPU route through the Numba-CUDA pooled kernel (the stand-in
            # for CuPy holds the arrays; in the simulator the kernel copies them)
            xp, route = _gpu_module(monkeypatch), "pooled_recurrence"
        U = [u.astype(np.float64) for u in U]
        # comparisons clear of the states' rounding (relative to the largest state)
        biases, scales = thresholds(U, POOLED, 2 * tol)
        expected = pooled_reference(U, POOLED, [b.astype(np.float64) for b in biases], scales)
        limits = tolerances(POOLED, state_scale(U, POOLED, biases, scales), 8 * tol)
        # and the features' own rounding to their dtype at the end
        limits = limits + 2 * np.finfo(dtype).eps * np.abs(expected)
        for chunks in one_and_many():
            got = pooled_features(U, POOLED, biases, scales, dtype=dtype, xp=xp, route=route)
            got = to_host(got)
            assert got.dtype == dtype
            assert np.all(np.abs(got - expected) <= limits), chunks
        return
    expected = reference(U, output)
    tol *= scale(U, ORDER, THETA)
    if name == "cudasim":
        assert_features_close(_features_cudasim(U, output), expected, tol)
        return
    for method in METHODS[name]:
        for _ in one_and_many():
            got = features(U, order=ORDER, theta=THETA, output=output, method=method, xp=xp)
            host = to_host(got)
            assert (host[0] if isinstance(host, list) else host).dtype == dtype
            assert_features_close(host, expected, tol)


# ----------------------------------------------------------------------------- step mode
# Chunks of 1, 1, 7, 1 and 13 steps (blocks of the pooled windows: 1, 1, 3, then the rest),
# each continued from the state (and running sum, maximum or pools) carried from the one
# before: single steps and chunks, as a stream takes them.
CUTS = (1, 2, 9, 10, 23)


def _carried_cudasim(U, output):
    """The Numba-CUDA kernels chunk by chunk, from the state after the chunk before: every
    state for 'sequence', else the final state, the mean or the maximum."""
    from lmu_sk.kernels import cuda

    Abar, Bbar = discrete_system(ORDER, THETA)
    state = total = maximum = None
    pieces = []
    for a, b in zip((0, *CUTS[:-1]), CUTS, strict=True):
        X = U[:, a:b]
        if output == "sequence":
            states = cuda.recurrence_states(X, Abar, Bbar, "sequence", initial_state=state)
            pieces.append(states)
            state = np.ascontiguousarray(states[:, -1])
            continue
        if output == "mean":
            part = cuda.pooled_states(X, Abar, Bbar, "mean", initial_state=state) * (b - a)
            total = part if total is None else total + part
        elif output == "max":
            part = cuda.pooled_states(X, Abar, Bbar, "max", initial_state=state)
            maximum = part if maximum is None else np.maximum(maximum, part)
        state = cuda.recurrence_states(X, Abar, Bbar, "final", initial_state=state)
    if output == "sequence":
        return np.concatenate(pieces, axis=1)
    if output == "mean":
        return total / U.shape[1]
    return state if output == "final" else maximum


def _carried_states(U, output, xp, dtype):
    """The engine's step mode chunk by chunk (:class:`lmu_sk.engine.stream.CarriedDN`):
    the states after every chunk for 'sequence', else the final state, the mean or the
    maximum."""
    n, n_steps, c = U.shape
    rows = algebra.rows(xp.asarray(U), xp)
    carried = CarriedDN(ORDER, THETA, "zoh", output, dtype, xp)
    state = xp.asarray(np.zeros((n * c, ORDER), dtype))
    running = None
    if output == "mean":
        running = xp.asarray(np.zeros((n * c, ORDER)))
    elif output == "max":
        running = xp.asarray(np.full((n * c, ORDER), -np.inf, dtype))
    ends = []
    for a, b in zip((0, *CUTS[:-1]), CUTS, strict=True):
        state, running, _ = carried.advance(rows[:, a:b], state, running)
        assert state.dtype == dtype and type(state) is type(rows)
        ends.append(to_host(state).reshape(n, c * ORDER))
    if output == "sequence":
        return np.stack(ends, axis=1)
    if output == "final":
        return ends[-1]
    running = to_host(running).reshape(n, c * ORDER)
    return running / n_steps if output == "mean" else running


def _carried_pooled(U, spec, biases, scales, dtype, xp):
    """The pooled features of equal-length sequences with every window's pools carried
    from chunk to chunk of its blocks (:class:`lmu_sk.engine.stream.CarriedPools`)."""
    X = xp.asarray(U)
    lengths = xp.asarray(np.full(len(U), U.shape[1]))
    inputs = algebra.input_transforms(X, lengths, spec.transforms, xp)
    parts = []
    for w, window in enumerate(spec.windows):
        u = algebra.block_means(inputs, lengths, window.stride, xp)[0]
        u = u[:, :, list(window.inputs)]
        carried = CarriedPools(
            window, spec.discretizer, biases[w].astype(np.float64), scales[w], spec.pools,
            dtype, xp,
        )  # fmt: skip
        pools = carried.empty(len(U))
        n_blocks = u.shape[1]
        cuts = sorted({min(c, n_blocks) for c in (1, 2, 5, n_blocks)})
        for a, b in zip((0, *cuts[:-1]), cuts, strict=True):
            pools = carried.advance(pools, u[:, a:b])
        values, compete = carried.features(pools, n_blocks)
        parts += [to_host(values).reshape(len(U), -1), to_host(compete).reshape(len(U), -1)]
    return np.concatenate(parts, axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("output", OUTPUTS)
def test_chunks_with_a_carried_state_equal_the_whole_sequence(
    backend, output, dtype, make_sequences
):
    """The step mode: sequences fed in chunks and single steps, each continued from the
    state carried out of the one before, give the features of the whole sequences (for
    'sequence', the state at the end of every chunk, or every state on the CUDA kernels)."""
    name, xp = backend
    U = make_sequences(n_samples=5, n_steps=CUTS[-1], n_channels=2, dtype=dtype)
    tol = TOLERANCE[np.dtype(dtype)]
    if output == "pooled":
        if name == "cudasim":
            pytest.skip(
                "the Numba-CUDA pooled kernel runs whole sequences (a GPU stream's "
                "pools are carried by block products)"
            )
        U = U.astype(np.float64)
        biases, scales = thresholds(list(U), POOLED, 2 * tol)
        expected = pooled_reference(
            list(U), POOLED, [b.astype(np.float64) for b in biases], scales
        )
        limits = tolerances(POOLED, state_scale(list(U), POOLED, biases, scales), 8 * tol)
        got = _carried_pooled(U, POOLED, biases, scales, dtype, xp)
        assert np.all(np.abs(got - expected) <= limits + 1e-300)
        return
    states = dn_states(U, ORDER, THETA, output="sequence")
    expected = {
        "final": states[:, -1],
        "mean": states.mean(axis=1),
        "max": states.max(axis=1),
        "sequence": states if name == "cudasim" else states[:, [c - 1 for c in CUTS]],
    }[output]
    tol *= scale(U, ORDER, THETA)
    if name == "cudasim":
        got = _carried_cudasim(U, output)
    else:
        got = _carried_states(U, output, xp, np.dtype(dtype))
    assert_features_close(np.asarray(got), expected, tol)


def test_cuda_simulator(in_cuda_simulator):
    """The ``cudasim`` back-end of the contract, in a fresh interpreter with the simulator."""
    stdout, report = in_cuda_simulator(__file__)
    # 5 outputs x equal/ragged x 2 dtypes ran, and 4 outputs x 2 dtypes in chunks (the
    # pooled kernel does not carry its pools: skipped there)
    assert "28 passed" in stdout, report
