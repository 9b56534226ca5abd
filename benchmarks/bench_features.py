"""Throughput of Delay Network features on the CPU against named baselines, in one run.

Run ``python benchmarks/bench_features.py`` (``--quick`` for smaller shapes). Prints
samples/s of the reference recurrence, each fast path, a NumPy recurrence vectorized over
samples and a bare float32 GEMM of the same shape, with the speed ratios.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from _timing import best_time, report

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
    report(
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


def all_states_case(n_samples: int, n_steps: int, order: int, dtype) -> None:
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
    for method in ("auto", "gemm", "fft", "recurrence"):
        est = LMUFeatures(order=order, output="sequence", method=method, device="cpu").fit(X)
        report(
            f"LMUFeatures method={method!r}",
            n_samples,
            best_time(lambda e=est: e.transform(X)),
            base,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes")
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"numpy {np.__version__}"
    )
    scale = 10 if args.quick else 1
    final_state_case(10_000 // scale, 784, 468)
    for dtype in (np.float32, np.float64):
        all_states_case(1000 // scale, 784, 64, dtype)
    all_states_case(100 // scale, 784, 468, np.float32)


if __name__ == "__main__":
    main()
