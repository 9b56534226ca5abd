"""GPU benchmarks of the Delay Network kernels, for a machine with an NVIDIA GPU.

    python benchmarks/bench_gpu.py            # full sizes (H100/H200: well under a minute)
    python benchmarks/bench_gpu.py --scale 0.1

Every line reads ``name: value unit (ratio vs baseline)``. GPU-resident work is timed with
``cupy.cuda.Event`` pairs after warm-up runs, taking the median of repeats; calls that start
and end on the host (NumPy in, NumPy out) are timed by the wall clock around a synchronised
call. Inputs are synthetic (timing only).

Sections
--------
1. psMNIST-shape final states: 60 000 x 784 steps, order 468, theta 784, float32, NumPy in
   and out, impulse response build included; first call in the process (CUDA context,
   cuBLAS handle, kernels) and warm calls; against a bare cuBLAS GEMM of the same shape.
2. All states (N=1000, n=784, order 64): the FFT route against bare ``cupy.fft`` rfft/irfft
   of the same sizes, and the blocked-GEMM route against the FFT route.
3. Numba-CUDA kernels (ragged final, recurrence, pooled) against the engine's CuPy routes.
4. Estimators: head time per epoch and end-to-end ``LMUClassifier`` fit (skipped with a
   message when the estimators are not available).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lmu_sk._device import gpu_available
from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.engine import algebra, constants, features, plan


def report(name: str, value: float, unit: str, baseline: float | None = None, what: str = ""):
    ratio = f" ({value / baseline:.2f}x vs {what})" if baseline else ""
    print(f"{name}: {value:.4g} {unit}{ratio}", flush=True)


def gpu_seconds(cp, fn, repeat: int = 10, warmup: int = 2) -> float:
    """Median seconds of ``fn()`` between two events on the current stream."""
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(times))


def wall_seconds(cp, fn, repeat: int = 5) -> float:
    """Median wall-clock seconds of a synchronised host-to-host call."""
    times = []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def device_header(cp) -> None:
    device = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(device.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    free, total = cp.cuda.runtime.memGetInfo()
    print(f"device: {name} (id {device.id}, compute capability {device.compute_capability})")
    print(f"device memory: {total / 1e9:.1f} GB total, {free / 1e9:.1f} GB free")
    print(f"cupy: {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}")


def bench_psmnist(cp, n_samples: int) -> None:
    order, theta, n_steps = 468, 784.0, 784
    print(f"\n== psMNIST final states: {n_samples} x {n_steps} steps, order {order}, float32 ==")
    rng = np.random.default_rng(0)
    X = rng.random((n_samples, n_steps, 1), dtype=np.float32)
    options = dict(order=order, theta=theta, discretizer="zoh", output="final", xp=cp)

    t0 = time.perf_counter()
    Abar, Bbar = discrete_system(order, theta, "zoh")
    H = impulse_response(Abar, Bbar, n_steps)
    host_build = time.perf_counter() - t0
    report("impulse response build (host, float64)", host_build, "s")

    constants.clear()
    t0 = time.perf_counter()
    features(X, **options)
    cp.cuda.Device().synchronize()
    cold = time.perf_counter() - t0
    report("precompute, first call in process (host in/out, with warm-up)", cold, "s")

    def fresh():
        constants.clear()
        features(X, **options)

    warm_fresh = wall_seconds(cp, fresh)
    report("precompute, warm, impulse response rebuilt (host in/out)", warm_fresh, "s")
    warm = wall_seconds(cp, lambda: features(X, **options))
    report("precompute, warm, impulse response cached (host in/out)", warm, "s")
    print(f"target: < 0.2 s on an H100 -> {'met' if warm_fresh < 0.2 else 'NOT met'}")

    X_dev = cp.asarray(X)
    H_rev = cp.asarray(np.ascontiguousarray(H[::-1], dtype=np.float32))
    gemm = gpu_seconds(cp, lambda: X_dev.reshape(n_samples, n_steps) @ H_rev)
    flops = 2.0 * n_samples * n_steps * order
    report("baseline cuBLAS GEMM (60000x784 @ 784x468)", gemm * 1e3, "ms")
    report("baseline GEMM throughput", flops / gemm / 1e12, "TFLOP/s")
    device_call = gpu_seconds(cp, lambda: features(X_dev, return_device=True, **options))
    report("engine.features, device in/out", device_call * 1e3, "ms", gemm * 1e3, "GEMM")
    copy_in = gpu_seconds(cp, lambda: cp.asarray(X))
    report("host->device copy of X alone (pageable)", copy_in * 1e3, "ms")
    report("engine.features, host in/out", warm * 1e3, "ms", gemm * 1e3, "GEMM")


def bench_all_states(cp, n_samples: int, order: int = 64, n_steps: int = 784) -> None:
    print(f"\n== all states: N={n_samples}, n={n_steps}, order {order}, float32 ==")
    rng = np.random.default_rng(1)
    X = cp.asarray(rng.standard_normal((n_samples, n_steps, 1), dtype=np.float32))
    key = (order, float(n_steps), "zoh")
    n_fft = plan.fft_length(n_steps)
    H_hat = constants.get("H_hat", *key, n_steps, np.float32, cp, param=n_fft)
    out_bytes = n_samples * n_steps * order * 4
    rows = algebra.rows(X, cp)

    def fft_route():
        return cp.ascontiguousarray(algebra.fft_states(rows, H_hat, n_fft, cp))

    fft = gpu_seconds(cp, fft_route)
    spectra = cp.zeros((n_samples, n_fft // 2 + 1, order), dtype=cp.complex64)

    def bare_fft():
        cp.fft.rfft(rows, n=n_fft, axis=1)
        cp.fft.irfft(spectra, n=n_fft, axis=1)

    bare = gpu_seconds(cp, bare_fft)
    report("bare cupy.fft rfft + irfft of the same sizes", bare * 1e3, "ms")
    report("all states, FFT route", fft * 1e3, "ms", bare * 1e3, "bare FFT")
    report("all states, FFT route throughput", out_bytes / fft / 1e9, "GB/s of states")

    block = plan.block_steps(order, n_steps, "gpu")
    W = constants.get("W", *key, dtype=np.float32, xp=cp, param=block)
    out = cp.empty((n_samples, n_steps, order), dtype=cp.float32)

    def all_blocks():
        for _ in algebra.iter_blocks(rows, W, order, cp, out=out):
            pass

    blocked = gpu_seconds(cp, all_blocks)
    report(f"all states, blocked GEMM route (T={block})", blocked * 1e3, "ms", fft * 1e3, "FFT")
    picked = plan.choose_route("sequence", "auto", order, n_steps, 4, "gpu")
    faster = "blocked" if blocked < fft else "fft"
    print(f"cost model picks: {picked}; measured faster: {faster}")


def bench_numba(cp, n_samples: int, order: int = 64, n_steps: int = 784) -> None:
    try:
        from numba import cuda
        from ragged_kernel import ragged_final_states

        from lmu_sk.kernels import cuda as cuda_numba
    except ImportError as exc:
        print(f"\n== Numba-CUDA kernels: skipped ({exc}) ==")
        return
    if not cuda.is_available():
        print("\n== Numba-CUDA kernels: skipped (numba.cuda sees no device) ==")
        return
    print(f"\n== Numba-CUDA kernels vs CuPy routes: N={n_samples}, n={n_steps}, order {order} ==")
    rng = np.random.default_rng(2)
    X = cp.asarray(rng.standard_normal((n_samples, n_steps, 1), dtype=np.float32))
    lengths = cp.asarray(rng.integers(n_steps // 2, n_steps + 1, n_samples))
    key = (order, float(n_steps), "zoh")
    Abar, Bbar = discrete_system(*key)
    H_dev = constants.get("H", *key, n_steps, np.float32, cp)
    H_rev = constants.get("H_rev", *key, n_steps, np.float32, cp)
    C_rev = constants.get("C_rev", *key, n_steps, np.float32, cp)
    block = plan.block_steps(order, n_steps, "gpu")
    W = constants.get("W", *key, dtype=np.float32, xp=cp, param=block)
    rows = algebra.rows(X, cp)
    out = cp.empty((n_samples, n_steps, order), dtype=cp.float32)

    pairs = [
        (
            "ragged final (benchmarks/ragged_kernel.py)",
            lambda: ragged_final_states(X, lengths, H_dev),
            lambda: algebra.final_states(
                algebra.rows(algebra.right_align(X, lengths, cp), cp), H_rev, cp
            ),
            "CuPy right-align + GEMM",
        ),
        (
            "recurrence final",
            lambda: cuda_numba.recurrence_states(X, Abar, Bbar, "final"),
            lambda: algebra.final_states(rows, H_rev, cp),
            "CuPy GEMM",
        ),
        (
            "recurrence sequence",
            lambda: cuda_numba.recurrence_states(X, Abar, Bbar, "sequence"),
            lambda: [G for _, G in algebra.iter_blocks(rows, W, order, cp, out=out)],
            "CuPy blocked GEMM",
        ),
        (
            "pooled mean",
            lambda: cuda_numba.pooled_states(X, Abar, Bbar, "mean"),
            lambda: algebra.final_states(rows, C_rev, cp) / n_steps,
            "CuPy cumulative-response GEMM",
        ),
        (
            "pooled max",
            lambda: cuda_numba.pooled_states(X, Abar, Bbar, "max"),
            lambda: algebra.reduce_blocks(rows, W, order, "max", cp),
            "CuPy blocked GEMM + max",
        ),
    ]
    for name, numba_fn, cupy_fn, what in pairs:
        reference = gpu_seconds(cp, cupy_fn, repeat=5)
        kernel = gpu_seconds(cp, numba_fn, repeat=3, warmup=1)
        report(f"numba {name}", kernel * 1e3, "ms", reference * 1e3, what)
        report(f"numba {name} throughput", n_samples * n_steps / kernel / 1e6, "Msteps/s")


def bench_estimators(cp, n_samples: int) -> None:
    # ---- Hook: head time per epoch and end-to-end LMUClassifier fit ----------------------
    print("\n== estimators (synthetic psMNIST-shape data) ==")
    try:
        from lmu_sk import LMUClassifier
    except ImportError as exc:
        print(f"LMUClassifier fit: skipped (not available: {exc})")
        return
    rng = np.random.default_rng(3)
    X = rng.random((n_samples, 784), dtype=np.float32)
    y = rng.integers(0, 10, n_samples)
    clf = LMUClassifier(order=468, theta=784, hidden_layer_sizes=(346,), device="gpu")
    t0 = time.perf_counter()
    clf.fit(X, y)
    cp.cuda.Device().synchronize()
    fit = time.perf_counter() - t0
    report("LMUClassifier fit, end to end", fit, "s")
    features = wall_seconds(
        cp,
        lambda: features(X[:, :, None], order=468, theta=784.0, output="final", xp=cp),
        repeat=3,
    )
    epochs = getattr(clf, "n_iter_", None)
    if epochs:
        report("head time per epoch", (fit - features) / epochs, "s")
    else:
        print("head time per epoch: skipped (the fitted classifier reports no n_iter_)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="scale the sample counts")
    args = parser.parse_args(argv)
    if not gpu_available():
        print("skipped: CuPy is missing or sees no CUDA device; nothing to benchmark.")
        return 0
    import cupy as cp

    def scaled(n: int) -> int:
        return max(1, int(n * args.scale))

    device_header(cp)
    bench_psmnist(cp, scaled(60_000))
    bench_all_states(cp, scaled(1_000))
    bench_all_states(cp, scaled(100), order=468)
    bench_numba(cp, scaled(1_000))
    bench_estimators(cp, scaled(60_000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
