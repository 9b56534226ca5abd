"""Throughput of Delay Network features on the CPU against named baselines, in one run.

Run ``python benchmarks/bench_features.py`` (``--quick`` for smaller shapes). Prints
samples/s of the reference recurrence, each route, a NumPy recurrence vectorized over
samples and a bare float32 GEMM of the same shape, the speed ratios, and the targets:

* final states (``LMUFeatures.transform``) >= 0.9x a bare float32 GEMM of the same shape;
* all states ('sequence', order 64, 1000 x 784, float32) >= 1.5x (aim 2x) a float32 NumPy
  recurrence vectorized over samples.

``--calibrate`` measures instead the rates of the planner's CPU cost table
(:data:`lmu_sk.engine.plan.COSTS`) on this machine, and times the blocked and FFT routes
of all states across orders against the route the planner picks.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from _timing import best_time, blas_in_use, report

from lmu_sk import LMUFeatures
from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.reference import recurrence


def numpy_recurrence(X: np.ndarray, Abar: np.ndarray, Bbar: np.ndarray) -> np.ndarray:
    """All states by the recurrence vectorized over samples, in the dtype of ``X``."""
    n_samples, n_steps = X.shape
    A_T = np.ascontiguousarray(Abar.T, dtype=X.dtype)
    B = Bbar.astype(X.dtype)
    out = np.empty((n_samples, n_steps, B.shape[0]), dtype=X.dtype)
    state = np.zeros((n_samples, B.shape[0]), dtype=X.dtype)
    for t in range(n_steps):
        state = state @ A_T + X[:, t : t + 1] * B
        out[:, t] = state
    return out


def target(name: str, ratio: float, goal: float) -> None:
    print(f"  target {name}: {ratio:.2f}x >= {goal}x -> {'met' if ratio >= goal else 'NOT met'}")


def final_state_case(n_samples: int, n_steps: int, order: int) -> None:
    print(f"\nFinal state, psMNIST shape: N={n_samples}, n={n_steps}, order={order}, float32")
    rng = np.random.default_rng(0)
    X = rng.random((n_samples, n_steps), dtype=np.float32)
    theta = float(n_steps)
    H_rev = np.ascontiguousarray(
        impulse_response(*discrete_system(order, theta), n_steps)[::-1], dtype=np.float32
    )
    gemm = report("bare float32 GEMM X @ H (baseline)", n_samples, best_time(lambda: X @ H_rev))
    est = LMUFeatures(order=order, theta=theta, device="cpu").fit(X[:10])
    rate = report(
        "LMUFeatures.transform (GEMM path)", n_samples, best_time(lambda: est.transform(X)), gemm
    )
    fresh = LMUFeatures(order=order, theta=theta, device="cpu")
    report(
        "LMUFeatures.fit_transform incl. building H",
        n_samples,
        best_time(lambda: fresh.fit_transform(X), repeats=1, warmup=0),
        gemm,
    )
    Abar, Bbar = discrete_system(order, theta)
    subset = X[:200, :, None]
    report(
        "reference recurrence (float64, 200 samples)",
        200,
        best_time(lambda: recurrence(subset, Abar, Bbar), repeats=1, warmup=0),
        gemm,
    )
    target("final states vs bare GEMM", rate / gemm, 0.9)


def all_states_case(n_samples: int, n_steps: int, order: int, dtype, goal=None) -> None:
    name = np.dtype(dtype).name
    print(f"\nAll states: N={n_samples}, n={n_steps}, order={order}, {name}")
    X = np.random.default_rng(1).random((n_samples, n_steps)).astype(dtype)
    theta = float(n_steps)
    Abar, Bbar = discrete_system(order, theta)
    base = report(
        "NumPy recurrence vectorized over samples (baseline)",
        n_samples,
        best_time(lambda: numpy_recurrence(X, Abar, Bbar), repeats=2),
    )
    rates = {}
    for method in ("auto", "gemm", "fft", "recurrence"):
        est = LMUFeatures(order=order, output="sequence", method=method, device="cpu").fit(X)
        rates[method] = report(
            f"LMUFeatures method={method!r}",
            n_samples,
            best_time(lambda e=est: e.transform(X)),
            base,
        )
    if goal is not None:
        target("all states ('auto') vs NumPy recurrence", rates["auto"] / base, goal)


def calibrate() -> None:
    """The CPU cost table's rates measured here, and the all-states crossover."""
    import scipy.fft

    from lmu_sk.engine import PooledSpec, WindowSpec, constants, plan, run
    from lmu_sk.kernels import cpu

    print("\nCost table rates on this machine (lmu_sk.engine.plan.COSTS['cpu'])")
    rng = np.random.default_rng(2)
    a = rng.random((2048, 2048), dtype=np.float32)
    seconds = best_time(lambda: a @ a)
    print(f"  gemm_flops        {2 * 2048**3 / seconds:10.3g} flop/s (float32 2048^3)")
    rows, n = 2000, 784
    L = plan.fft_length(n)
    U = rng.random((rows, n), dtype=np.float32)
    seconds = best_time(
        lambda: scipy.fft.irfft(
            scipy.fft.rfft(U, n=L, axis=1, workers=os.cpu_count()), n=L, axis=1
        )
    )
    print(f"  fft_flops         {2 * 2.5 * rows * L * np.log2(L) / seconds:10.3g} flop/s")
    big = np.empty(64 * 1024**2 // 4, dtype=np.float32)
    seconds = best_time(lambda: np.copyto(big, 1.0))
    print(f"  bandwidth         {big.nbytes / seconds:10.3g} B/s (writes)")
    d = 64
    X = rng.standard_normal((200, n, 1)).astype(np.float32)
    D_T = constants.get("D_T", d, float(n), "zoh", dtype=np.float32)
    B = constants.system(d, float(n), "zoh")[1].astype(np.float32)
    lengths = np.full(200, n)
    seconds = best_time(lambda: cpu.recurrence(X, lengths, D_T, B, "final"))
    print(f"  recurrence_flops  {200 * n * 2 * d * d / seconds:10.3g} flop/s (order {d})")
    # two windows of order 8 over a series and its difference, at stride 1; the 7 pools
    # the table's rates are per (ppv at 4 thresholds, mean, max, min)
    windows = tuple(WindowSpec(8, theta, 1, (0, 1)) for theta in (16.0, 256.0))
    spec = PooledSpec(windows, ("series", "difference"), ("ppv", "mean", "max", "min"), 4)
    biases = [np.sort(rng.standard_normal((2, 8, 4)), axis=-1).astype(np.float32)] * 2
    scales = [np.ones((2, 8))] * 2
    for route in ("pooled_recurrence", "pooled_blocked"):
        real = plan.plan_pooled

        def forced(*args, route=route, real=real, **kwargs):
            import dataclasses

            return dataclasses.replace(real(*args, **kwargs), route=route)

        run.plan_pooled = forced
        try:
            seconds = best_time(
                lambda: run.pooled_features(X[:100, :256], spec, biases, scales, dtype=np.float64)
            )
        finally:
            run.plan_pooled = real
        updates = 100 * 2 * 2 * 257 * 8  # samples x windows x inputs x steps x states
        print(f"  {route:<17s} {seconds / updates:10.3g} s per state and step (order 8)")
    print("\nAll states, float32, 200 x 784: blocked vs FFT route, and the planner's pick")
    X = rng.random((200, 784)).astype(np.float32)
    for order in (64, 128, 256, 512, 1024):
        times = {}
        for method in ("gemm", "fft"):
            est = LMUFeatures(order=order, output="sequence", method=method, device="cpu")
            est.fit(X[:2])
            times[method] = best_time(lambda e=est: e.transform(X), repeats=2)
        picked = plan.choose_route("sequence", "auto", order, 784, 4, "cpu")
        faster = "blocked" if times["gemm"] < times["fft"] else "fft"
        print(
            f"  order {order:5d}: blocked {times['gemm']:.3f} s, fft {times['fft']:.3f} s; "
            f"faster {faster}, planner picks {picked}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes")
    parser.add_argument("--calibrate", action="store_true", help="measure the cost table")
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"numpy {np.__version__}, load average {os.getloadavg()[0]:.1f}"
    )
    print(blas_in_use())
    if args.calibrate:
        calibrate()
        return
    scale = 10 if args.quick else 1
    final_state_case(10_000 // scale, 784, 468)
    all_states_case(1000 // scale, 784, 64, np.float32, goal=1.5)
    all_states_case(1000 // scale, 784, 64, np.float64)
    all_states_case(100 // scale, 784, 468, np.float32)


if __name__ == "__main__":
    main()
