"""GPU benchmarks of lmu_sk, for a machine with an NVIDIA GPU: the figures of the GPU check.

    python benchmarks/bench_gpu.py                  # full sizes (H100: about two minutes)
    python benchmarks/bench_gpu.py --scale 0.1      # a tenth of the samples
    python benchmarks/bench_gpu.py --dry-run        # CPU, NumPy stand-in, CUDA simulator

Every line reads ``name: value unit (ratio vs baseline)``; the figures below are printed
again as a table at the end and, with ``--json PATH``, written there. Each figure is set
against a limit of the same machine measured in the same run: the memory bandwidth (a
device-to-device copy, bytes read plus bytes written), the FP32 rate (a square cuBLAS
SGEMM), cuBLAS on the same shape, the copies over PCIe, or the machine's CPU cores.
GPU-resident work is timed with ``cupy.cuda.Event`` pairs after warm-up runs, taking the
median of repeats; calls that start and end on the host are timed by the wall clock around
a synchronised call. Inputs are random or synthetic (timing only), never zeros.

Figures
-------
1. psMNIST final states: 60 000 x 784 steps, order 468, theta 784, float32: host array in
   and out, warm (goal: under 20 ms; the copies over PCIe alone are measured too), and
   device-resident in and out against cuBLAS SGEMM of the same shape (goal: >= 0.8x).
2. All states, 1 000 x 784 steps, order 64: the states written per second against the
   memory bandwidth (goal: >= 50 %); the FFT and blocked-GEMM routes against bare cuFFT;
   the engine's call by function (a profile with every kernel launch synchronous).
3. Numba-CUDA kernels against the engine's CuPy routes.
4. Dense head, psMNIST shape: one epoch of 60 000 x 468 -> 346 -> 10, batch 200, on the GPU
   against the CPU and against the FP32 rate.
5. The default ``LMUClassifier()`` fit + predict on 20 000 synthetic series of 1 000 steps:
   GPU against the machine's CPU cores (goal: >= 10x), with the accuracy of both, and the
   GPU fit's time by function (a profile with every kernel launch synchronous).
6. 10 000 streams of order 468: microseconds per step, GPU and CPU.

With ``--dry-run`` every section runs on the CPU at tiny sizes, with the tests' NumPy
stand-in for CuPy and Numba's CUDA simulator (``benchmarks/_gpu.py``): a check that the
script runs, whose numbers mean nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import dataclasses
import io
import json
import os
import re
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np
from _gpu import (
    array_module,
    gpu_seconds,
    restart_in_simulator,
    synchronize,
    synthetic_series,
    wall_seconds,
)
from sklearn.exceptions import ConvergenceWarning

from lmu_sk import DenseHeadClassifier, LMUClassifier, LMUFeatures, LMUPooledFeatures
from lmu_sk._device import pinned_empty
from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.engine import algebra, constants, features, plan, pooled_features

#: the figures of this run, by name: value, unit and what it is set against
FIGURES: dict[str, dict] = {}


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Shapes of the benchmarks; ``--scale`` multiplies the counts of samples."""

    psmnist_samples: int = 60_000
    psmnist_steps: int = 784
    psmnist_order: int = 468
    all_states_samples: int = 1_000
    all_states_steps: int = 784
    all_states_order: int = 64
    #: the FFT's ground: all states of order 468, fewer samples
    all_states_wide_samples: int = 100
    numba_samples: int = 1_000
    numba_steps: int = 784
    numba_order: int = 64
    head_samples: int = 60_000
    head_features: int = 468
    head_hidden: int = 346
    classifier_series: int = 20_000
    classifier_test: int = 5_000
    classifier_steps: int = 1_000
    streams: int = 10_000
    stream_order: int = 468
    stream_steps: int = 200
    sgemm_size: int = 8192
    copy_bytes: int = 512 * 1024**2
    #: LMUClassifier parameters besides the defaults (the dry run's tiny set would get
    #: the ridge head that 'auto' gives up to 10 000 series, not the dense head of 20 000)
    classifier_params: tuple = ()

    def scaled(self, scale: float) -> Sizes:
        counts = ("psmnist_samples", "all_states_samples", "all_states_wide_samples")
        counts += ("numba_samples", "head_samples")
        counts += ("classifier_series", "classifier_test", "streams")
        return dataclasses.replace(
            self, **{name: max(2, round(getattr(self, name) * scale)) for name in counts}
        )


TINY = Sizes(
    psmnist_samples=64,
    psmnist_steps=24,
    psmnist_order=12,
    all_states_samples=8,
    all_states_steps=24,
    all_states_order=6,
    all_states_wide_samples=4,
    numba_samples=2,
    numba_steps=8,
    numba_order=3,
    head_samples=400,
    head_features=12,
    head_hidden=8,
    classifier_series=120,
    classifier_test=40,
    classifier_steps=30,
    streams=50,
    stream_order=12,
    stream_steps=5,
    sgemm_size=64,
    copy_bytes=1024**2,
    classifier_params=(("head", "dense"), ("max_iter", 3)),
)


def report(name: str, value: float, unit: str, baseline: float | None = None, what: str = ""):
    ratio = f" ({value / baseline:.2f}x vs {what})" if baseline else ""
    print(f"{name}: {value:.4g} {unit}{ratio}", flush=True)


def figure(name: str, value: float, unit: str, against: str = "", goal: str = "") -> None:
    """Record one of the issue's figures (printed again in the table at the end)."""
    FIGURES[name] = {"value": value, "unit": unit, "against": against, "goal": goal}


# ----------------------------------------------------------------------------- the machine
def device_header(cp) -> None:
    device = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(device.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    free, total = cp.cuda.runtime.memGetInfo()
    print(f"device: {name} (id {device.id}, compute capability {device.compute_capability})")
    print(f"device memory: {total / 1e9:.1f} GB total, {free / 1e9:.1f} GB free")
    print(f"cupy: {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}")
    print(f"CPU cores: {os.cpu_count()}; CUPY_TF32={os.environ.get('CUPY_TF32', 'unset')}")


def measure_limits(cp, sizes: Sizes) -> dict[str, float]:
    """The machine's own limits: memory bandwidth, FP32 rate, PCIe both ways."""
    print("\n== limits of this machine ==")
    rng = np.random.default_rng(0)
    n = sizes.copy_bytes // 4
    a = cp.asarray(rng.random(n, dtype=np.float32))
    b = cp.empty_like(a)
    copy = gpu_seconds(cp, lambda: cp.copyto(b, a), repeat=20)
    bandwidth = 2 * a.nbytes / copy
    report("memory bandwidth (device-to-device copy, read + write)", bandwidth / 1e9, "GB/s")
    m = sizes.sgemm_size
    A = cp.asarray(rng.standard_normal((m, m), dtype=np.float32))
    B = cp.asarray(rng.standard_normal((m, m), dtype=np.float32))
    sgemm = gpu_seconds(cp, lambda: A @ B, repeat=5)
    rate = 2.0 * m**3 / sgemm
    report(f"FP32 rate (cuBLAS SGEMM {m}^3)", rate / 1e12, "TFLOP/s")
    host = rng.random(n, dtype=np.float32)
    h2d = wall_seconds(cp, lambda: cp.asarray(host), repeat=5, warmup=1)
    d2h = wall_seconds(cp, lambda: a.get(), repeat=5, warmup=1)
    report("PCIe host-to-device (pageable)", host.nbytes / h2d / 1e9, "GB/s")
    report("PCIe device-to-host (pageable)", host.nbytes / d2h / 1e9, "GB/s")
    pinned = pinned_empty(host.shape, host.dtype)
    pinned[...] = host
    stream = cp.cuda.get_current_stream()
    target = ctypes.c_void_p(pinned.ctypes.data)
    h2d_pinned = wall_seconds(
        cp, lambda: a.data.copy_from_host_async(target, a.nbytes, stream), repeat=5, warmup=1
    )
    d2h_pinned = wall_seconds(
        cp, lambda: a.data.copy_to_host_async(target, a.nbytes, stream), repeat=5, warmup=1
    )
    report("PCIe host-to-device (pinned)", a.nbytes / h2d_pinned / 1e9, "GB/s")
    report("PCIe device-to-host (pinned)", a.nbytes / d2h_pinned / 1e9, "GB/s")
    fresh = wall_seconds(cp, lambda: np.copyto(np.empty_like(host), host), repeat=5)
    report("host memory copy, one thread, into new memory", host.nbytes / fresh / 1e9, "GB/s")
    figure("memory bandwidth", bandwidth / 1e9, "GB/s", "device-to-device copy")
    figure("FP32 rate", rate / 1e12, "TFLOP/s", f"cuBLAS SGEMM {m}^3")
    return {
        "bandwidth": bandwidth,
        "fp32": rate,
        "h2d": host.nbytes / h2d,
        "d2h": host.nbytes / d2h,
    }


# ----------------------------------------------------------------------------- 1. psMNIST
def bench_psmnist(cp, sizes: Sizes) -> None:
    n_samples, n_steps, order = sizes.psmnist_samples, sizes.psmnist_steps, sizes.psmnist_order
    theta = float(n_steps)
    print(f"\n== psMNIST final states: {n_samples} x {n_steps} steps, order {order}, float32 ==")
    rng = np.random.default_rng(0)
    X = rng.random((n_samples, n_steps, 1), dtype=np.float32)
    options = dict(order=order, theta=theta, discretizer="zoh", output="final", xp=cp)

    t0 = time.perf_counter()
    Abar, Bbar = discrete_system(order, theta, "zoh")
    H = impulse_response(Abar, Bbar, n_steps)
    report("impulse response build (host, float64)", time.perf_counter() - t0, "s")

    constants.clear()
    t0 = time.perf_counter()
    features(X, **options)
    synchronize(cp)
    report("precompute, first call in process (host in/out)", time.perf_counter() - t0, "s")

    def fresh():
        constants.clear()
        features(X, **options)

    warm_fresh = wall_seconds(cp, fresh)
    report("precompute, warm, impulse response rebuilt (host in/out)", warm_fresh * 1e3, "ms")
    warm = wall_seconds(cp, lambda: features(X, **options), repeat=10)
    report("precompute, warm, impulse response cached (host in/out)", warm * 1e3, "ms")

    out = np.empty((n_samples, order), dtype=np.float32)
    copy_in = wall_seconds(cp, lambda: cp.asarray(X), warmup=1)
    F_dev = cp.asarray(out)
    copy_out = wall_seconds(cp, lambda: F_dev.get(), warmup=1)
    report("copy of X to the device alone (pageable)", copy_in * 1e3, "ms")
    report("copy of the features to the host alone (pageable)", copy_out * 1e3, "ms")

    X_dev = cp.asarray(X)
    H_rev = cp.asarray(np.ascontiguousarray(H[::-1], dtype=np.float32))
    gemm = gpu_seconds(cp, lambda: X_dev.reshape(n_samples, n_steps) @ H_rev)
    flops = 2.0 * n_samples * n_steps * order
    report(f"baseline cuBLAS SGEMM ({n_samples}x{n_steps} @ {n_steps}x{order})", gemm * 1e3, "ms")
    report("baseline SGEMM throughput", flops / gemm / 1e12, "TFLOP/s")
    device_call = gpu_seconds(cp, lambda: features(X_dev, return_device=True, **options))
    report("engine.features, device in/out", device_call * 1e3, "ms", gemm * 1e3, "SGEMM")
    report("engine.features, host in/out", warm * 1e3, "ms", (copy_in + copy_out) * 1e3, "copies")
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # the staging copies on one thread (lmu_sk 0.3.0's way)
    try:
        one = wall_seconds(cp, lambda: features(X, **options), repeat=10)
    finally:
        numba.set_num_threads(threads)
    report(
        "host in/out, staging copies on 1 thread",
        one * 1e3,
        "ms",
        warm * 1e3,
        f"{threads} threads",
    )
    chunks = plan.OVERLAP_CHUNKS
    plan.OVERLAP_CHUNKS = 2 * chunks  # smaller chunks: more of the transfers overlapped
    try:
        finer = wall_seconds(cp, lambda: features(X, **options), repeat=10)
    finally:
        plan.OVERLAP_CHUNKS = chunks
    report(
        f"host in/out, {2 * chunks} chunks instead of {chunks}",
        finer * 1e3,
        "ms",
        warm * 1e3,
        f"{chunks} chunks",
    )
    figure(
        "psMNIST final states, host in/out, warm",
        warm * 1e3,
        "ms",
        f"copies over PCIe alone {(copy_in + copy_out) * 1e3:.3g} ms",
        "< 20 ms",
    )
    figure(
        "psMNIST final states, device in/out: speed vs SGEMM",
        gemm / device_call,
        "x",
        f"cuBLAS SGEMM of the same shape {gemm * 1e3:.3g} ms; engine {device_call * 1e3:.3g} ms",
        ">= 0.8x",
    )


# ----------------------------------------------------------------------------- 2. all states
def bench_all_states(cp, sizes: Sizes, limits: dict, goal: str = "") -> None:
    n_samples, n_steps = sizes.all_states_samples, sizes.all_states_steps
    order = sizes.all_states_order
    print(f"\n== all states: N={n_samples}, n={n_steps}, order {order}, float32 ==")
    rng = np.random.default_rng(1)
    X = cp.asarray(rng.standard_normal((n_samples, n_steps, 1), dtype=np.float32))
    out_bytes = n_samples * n_steps * order * 4
    options = dict(order=order, theta=float(n_steps), output="sequence", xp=cp)
    engine = gpu_seconds(cp, lambda: features(X, return_device=True, **options))
    written = out_bytes / engine
    report("all states, engine.features device in/out", engine * 1e3, "ms")
    report("all states written", written / 1e9, "GB/s", limits["bandwidth"] / 1e9, "bandwidth")
    figure(
        f"all states ({n_samples} x {n_steps}, order {order}): share of the memory bandwidth",
        100.0 * written / limits["bandwidth"],
        "%",
        f"states written at {written / 1e9:.4g} GB/s; the copy at "
        f"{limits['bandwidth'] / 1e9:.4g} GB/s",
        goal,
    )

    key = (order, float(n_steps), "zoh")
    n_fft = plan.fft_length(n_steps)
    H_hat = constants.get("H_hat", *key, n_steps, np.float32, cp, param=n_fft)
    rows = algebra.rows(X, cp)

    def fft_route():
        return cp.ascontiguousarray(algebra.fft_states(rows, H_hat, n_fft, cp))

    fft = gpu_seconds(cp, fft_route)
    spectra = cp.random.standard_normal((n_samples, n_fft // 2 + 1, order)).astype(np.complex64)

    def bare_fft():
        cp.fft.rfft(rows, n=n_fft, axis=1)
        cp.fft.irfft(spectra, n=n_fft, axis=1)

    bare = gpu_seconds(cp, bare_fft)
    report("bare cupy.fft rfft + irfft of the same sizes", bare * 1e3, "ms")
    report("all states, FFT route", fft * 1e3, "ms", bare * 1e3, "bare FFT")

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
    if goal:  # where engine.features' time goes beside its route's (cProfile)
        print("engine.features by function (cProfile, every kernel launch synchronous)")
        for line in profiled("all_states", dict(n=n_samples, n_steps=n_steps, order=order)):
            print(f"  {line}")


# ----------------------------------------------------------------------------- 3. Numba-CUDA
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


# ----------------------------------------------------------------------------- 4. dense head
def bench_dense_head(cp, sizes: Sizes, limits: dict) -> None:
    n, d, h, c = sizes.head_samples, sizes.head_features, sizes.head_hidden, 10
    print(f"\n== dense head, one epoch: {n} x {d} -> {h} -> {c}, batch 200, float32 ==")
    rng = np.random.default_rng(3)
    F = rng.standard_normal((n, d), dtype=np.float32)
    y = rng.integers(0, c, n)
    F_dev = cp.asarray(F)
    params = dict(hidden_layer_sizes=(h,), batch_size=200, max_iter=1, random_state=0)
    # forward 2 flops per weight and row, backward 2 for the weights' gradients and 2 for
    # the inputs' gradients of every layer but the first
    flops = n * (4.0 * d * h + 6.0 * h * c)

    def epoch(device, features):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            DenseHeadClassifier(**params, device=device).fit(features, y[: len(features)])

    epoch("gpu", F_dev[: min(n, 2000)])  # warm-up: kernels, cuBLAS handle
    gpu = wall_seconds(cp, lambda: epoch("gpu", F_dev), repeat=3)
    epoch("cpu", F[: min(n, 2000)])
    cpu = wall_seconds(cp, lambda: epoch("cpu", F), repeat=1)
    report("one epoch on the GPU (features on the device)", gpu * 1e3, "ms")
    report(f"one epoch on the CPU ({os.cpu_count()} cores)", cpu * 1e3, "ms", gpu * 1e3, "GPU")
    report("GPU epoch rate", flops / gpu / 1e12, "TFLOP/s", limits["fp32"] / 1e12, "FP32 rate")
    figure(
        "dense head epoch, psMNIST shape: GPU speed vs CPU",
        cpu / gpu,
        "x",
        f"GPU {gpu * 1e3:.4g} ms, CPU ({os.cpu_count()} cores) {cpu * 1e3:.4g} ms",
    )
    figure(
        "dense head epoch, psMNIST shape: share of the FP32 rate",
        100.0 * flops / gpu / limits["fp32"],
        "%",
        f"{flops / 1e9:.3g} GFLOP per epoch; floor {flops / limits['fp32'] * 1e3:.3g} ms",
    )


# ----------------------------------------------------------------------------- 5. classifier
def fit_steps(model, X, y) -> list[str]:
    """The lines ``model.fit(X, y)`` writes with its ``verbose`` that time a step (those
    ending in seconds), without the progress lines of the chunks but the last."""
    log = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stderr(log):
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    lines = log.getvalue().replace("\r", "\n").splitlines()
    timed = re.compile(r"(\.\.\. |100% .*, )[\d.]+s$")
    return [line.strip() for line in lines if timed.search(line.strip())]


def bench_classifier(cp, sizes: Sizes) -> None:
    n, n_test, n_steps = sizes.classifier_series, sizes.classifier_test, sizes.classifier_steps
    params = dict(sizes.classifier_params, random_state=0)
    call = f"LMUClassifier({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    print(f"\n== {call} fit + predict: {n} (+{n_test}) x {n_steps} steps ==")
    X, y = synthetic_series(n + n_test, n_steps, seed=4)
    X_test, y_test = X[n:], y[n:]
    X, y = X[:n], y[:n]
    warm = min(n, 500)
    results = {}
    for device in ("gpu", "cpu"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            # warm-up on a few series: the same model's compiled kernels (the pooled
            # kernel is compiled for its windows' order and thresholds), CUDA context,
            # cuBLAS handle
            LMUClassifier(**params, device=device).fit(X[:warm], y[:warm])
            synchronize(cp)
            t0 = time.perf_counter()
            model = LMUClassifier(**params, device=device).fit(X, y)
            synchronize(cp)
            fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        predicted = model.predict(X_test)
        predict = time.perf_counter() - t0
        accuracy = float(np.mean(predicted == y_test))
        results[device] = (fit + predict, accuracy, predicted)
        epochs = getattr(model, "n_iter_", "-")
        print(
            f"{device}: head {model.head_kind_}, features {type(model.features_).__name__}, "
            f"order {model.order_}, epochs {epochs}: fit {fit:.3g} s, "
            f"predict {predict:.3g} s, test accuracy {accuracy:.4f}",
            flush=True,
        )
        if device == "gpu":
            bench_pooled_routes(cp, model.features_, X)
    (gpu, gpu_accuracy, gpu_predicted), (cpu, cpu_accuracy, cpu_predicted) = results.values()
    agree = float(np.mean(gpu_predicted == cpu_predicted))
    for device in ("gpu", "cpu"):
        print(f"{device}: the steps of the fit, again with verbose=2 (wall times, unsynchronised)")
        for line in fit_steps(LMUClassifier(**params, device=device, verbose=2), X, y):
            print(f"  {line}")
    print("gpu: the fit's time by function (cProfile, every kernel launch synchronous)")
    arguments = dict(n=n, n_steps=n_steps, params=dict(sizes.classifier_params))
    for line in profiled("classifier", arguments):
        print(f"  {line}")
    report("fit + predict on the GPU", gpu, "s")
    report(f"fit + predict on the CPU ({os.cpu_count()} cores)", cpu, "s", gpu, "GPU")
    figure(
        f"{call} fit + predict, {n} x {n_steps}: GPU speed vs CPU",
        cpu / gpu,
        "x",
        f"GPU {gpu:.3g} s, CPU ({os.cpu_count()} cores) {cpu:.3g} s; test accuracy GPU "
        f"{gpu_accuracy:.4f}, CPU {cpu_accuracy:.4f}; same prediction on {agree:.2%}",
        ">= 10x, same accuracy",
    )


#: the functions a profile lists, by their own time and by their total
PROFILE_ROWS = 20


def profiled(what: str, arguments: dict, timeout: float = 180.0) -> list[str]:
    """The lines of :func:`run_profile` run in a new process with ``CUDA_LAUNCH_BLOCKING=1``
    (each kernel launch waits for its kernel, so a function's time holds its GPU work,
    which wall times around unsynchronised steps do not); the process's error where it
    fails."""
    import subprocess

    command = [sys.executable, str(Path(__file__).resolve()), "--profile", what]
    command += [json.dumps(arguments)]
    command += ["--dry-run"] if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else []
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [f"not profiled: over {timeout:.0f} s"]
    if done.returncode:
        return [f"not profiled: {(done.stderr.strip().splitlines() or ['no output'])[-1]}"]
    return done.stdout.rstrip().splitlines()


def run_profile(what: str, arguments: dict, dry_run: bool) -> None:
    """Print the profile of one benchmark's call after warm-up calls: 'classifier', the
    GPU fit of ``LMUClassifier(**params)`` on the classifier benchmark's data; 'all_states',
    ten calls of the engine's all-states features, device in and out. The functions of
    the largest own and total times."""
    import cProfile
    import pstats

    cp = array_module(dry_run)
    if what == "classifier":
        X, y = synthetic_series(arguments["n"], arguments["n_steps"], seed=4)
        params = dict(arguments["params"], random_state=0, device="gpu")
        warm = min(len(y), 500)
        calls = 1

        def call(warm_up: bool = False) -> None:
            LMUClassifier(**params).fit(*((X[:warm], y[:warm]) if warm_up else (X, y)))

    else:
        rng = np.random.default_rng(1)
        shape = (arguments["n"], arguments["n_steps"], 1)
        U = cp.asarray(rng.standard_normal(shape, dtype=np.float32))
        options = dict(order=arguments["order"], theta=float(shape[1]), output="sequence")
        calls = 10

        def call(warm_up: bool = False) -> None:
            for _ in range(3 if warm_up else calls):
                features(U, return_device=True, xp=cp, **options)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(warm_up=True)
        synchronize(cp)
        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        call()
        synchronize(cp)
        profile.disable()
    seconds = (time.perf_counter() - started) / calls
    print(f"{seconds:.3g} s a call, {calls} call(s) profiled, launches synchronous")
    for order, label in (("tottime", "own time"), ("cumulative", "total time, lmu_sk's")):
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text).sort_stats(order)
        stats.print_stats(*(["lmu_sk"] if order == "cumulative" else []), PROFILE_ROWS)
        row = re.compile(r"\s*[\d/]+(\s+[\d.]+){4}\s+\S")  # calls, 4 times, function
        rows = [line for line in text.getvalue().splitlines() if row.match(line)]
        print(f"by {label}: calls, own s, total s, function")
        for line in rows:
            n_calls, own, _, total, _, where = line.split(None, 5)
            where = re.sub(r".*/(lmu_sk|site-packages)/", "", where)
            print(f"  {n_calls:>8} {float(own):7.4f} {float(total):7.4f}  {where[:90]}")


def bench_pooled_routes(cp, transformer, X) -> None:
    """The fitted classifier's pooled features of ``X`` (host in and out, float64 as the
    ridge head asks for them) on the GPU's two pooled routes: the Numba-CUDA kernel that
    pools as it goes against block products with array operations."""
    if not isinstance(transformer, LMUPooledFeatures):
        return
    U = np.asarray(X, dtype=np.float64).reshape(len(X), -1, 1)
    args = (U, transformer.spec_, transformer.biases_, transformer.scales_)
    seconds, rows = {}, {}
    for route in ("pooled_blocked", "pooled_recurrence"):

        def transform(route=route):
            rows[route] = pooled_features(*args, dtype=np.float64, xp=cp, route=route)

        seconds[route] = wall_seconds(cp, transform, repeat=2)
    blocked, kernel = seconds["pooled_blocked"], seconds["pooled_recurrence"]
    differ = float(np.mean(np.abs(rows["pooled_blocked"] - rows["pooled_recurrence"]) > 1e-6))
    windows = transformer.spec_.windows
    print(
        f"pooled features of {len(X)} x {U.shape[1]} steps ({len(windows)} windows of order "
        f"{max(w.order for w in windows)}, {transformer.n_features_out_} features), host in/out:"
    )
    report("  block products (pooled_blocked)", blocked, "s")
    report("  Numba-CUDA kernel (pooled_recurrence)", kernel, "s", blocked, "blocks")
    print(f"  features differing by more than 1e-6: {differ:.3%}", flush=True)
    figure(
        "pooled features of the classifier, Numba-CUDA kernel: speed vs block products",
        blocked / kernel,
        "x",
        f"kernel {kernel:.3g} s, blocks {blocked:.3g} s, {len(X)} x {U.shape[1]} steps",
    )


# ----------------------------------------------------------------------------- 6. streams
def bench_streams(cp, sizes: Sizes, limits: dict) -> None:
    n, order, steps = sizes.streams, sizes.stream_order, sizes.stream_steps
    print(f"\n== {n} streams, order {order}, float32: one step ==")
    rng = np.random.default_rng(5)
    fitted = rng.standard_normal((2, 784), dtype=np.float32)
    inputs = rng.standard_normal((steps, n), dtype=np.float32)
    per_step = {}
    for device in ("gpu", "cpu"):
        model = LMUFeatures(order=order, theta=784.0, device=device, return_gpu_arrays=True)
        stream = model.fit(fitted).stream(n)
        U = cp.asarray(inputs) if device == "gpu" else inputs
        stream.update(U[0])  # warm-up: constants on the device, kernels
        count = steps if device == "gpu" else max(2, steps // 4)

        def run_steps(stream=stream, U=U, count=count):
            for t in range(count):
                stream.update(U[t])

        per_step[device] = wall_seconds(cp, run_steps, repeat=3) / count
    gpu, cpu = per_step["gpu"], per_step["cpu"]
    state_bytes = 2 * n * order * 4  # the state read and written once per step
    floor = max(state_bytes / limits["bandwidth"], 2.0 * n * (order + 1) * order / limits["fp32"])
    report("one step on the GPU (input on the device)", gpu * 1e6, "us")
    report(f"one step on the CPU ({os.cpu_count()} cores)", cpu * 1e6, "us", gpu * 1e6, "GPU")
    report(
        "floor of a step (state through memory, or its GEMM at the FP32 rate)", floor * 1e6, "us"
    )
    figure(
        f"{n} streams, order {order}: one step",
        gpu * 1e6,
        "us",
        f"CPU ({os.cpu_count()} cores) {cpu * 1e6:.4g} us; floor {floor * 1e6:.3g} us",
    )


# ----------------------------------------------------------------------------- the run
def print_figures() -> None:
    print("\n== figures ==")
    for name, f in FIGURES.items():
        goal = f"  [goal {f['goal']}]" if f["goal"] else ""
        against = f"  ({f['against']})" if f["against"] else ""
        print(f"{name}: {f['value']:.4g} {f['unit']}{goal}{against}", flush=True)


SECTIONS = ("psmnist", "all_states", "numba", "dense_head", "classifier", "streams")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="scale the sample counts")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="tiny sizes on the CPU: the NumPy stand-in for CuPy and the CUDA simulator",
    )
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated sections after the machine's limits (default: all of {SECTIONS})",
    )
    parser.add_argument("--profile", nargs=2, help=argparse.SUPPRESS)  # what, JSON arguments
    args = parser.parse_args(argv)
    if args.profile:
        if args.dry_run:
            restart_in_simulator()
        run_profile(args.profile[0], json.loads(args.profile[1]), args.dry_run)
        return 0
    sections = {name.strip() for name in args.sections.split(",") if name.strip()}
    if not sections <= set(SECTIONS):
        parser.error(f"unknown sections {sorted(sections - set(SECTIONS))}; from {SECTIONS}")
    if args.scale <= 0:
        parser.error(f"--scale must be positive, got {args.scale}")
    if args.dry_run:
        restart_in_simulator()
    cp = array_module(args.dry_run)
    if cp is None:
        print("skipped: CuPy is missing or sees no CUDA device; nothing to benchmark.")
        return 0
    sizes = (TINY if args.dry_run else Sizes()).scaled(args.scale)
    device_header(cp)
    limits = measure_limits(cp, sizes)
    if "psmnist" in sections:
        bench_psmnist(cp, sizes)
    if "all_states" in sections:
        bench_all_states(cp, sizes, limits, goal=">= 50 %")
        wide = dict(
            all_states_samples=sizes.all_states_wide_samples,
            all_states_order=sizes.psmnist_order,
        )
        bench_all_states(cp, dataclasses.replace(sizes, **wide), limits)
    if "numba" in sections:
        bench_numba(cp, sizes.numba_samples, sizes.numba_order, sizes.numba_steps)
    if "dense_head" in sections:
        bench_dense_head(cp, sizes, limits)
    if "classifier" in sections:
        bench_classifier(cp, sizes)
    if "streams" in sections:
        bench_streams(cp, sizes, limits)
    print_figures()
    if args.json:
        args.json.write_text(json.dumps(FIGURES, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
