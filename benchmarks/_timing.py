"""Small timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy  # noqa: F401  (loads NumPy's BLAS, which threadpoolctl then reports)
from threadpoolctl import threadpool_info


def best_time(function: Callable[[], object], repeats: int = 3, warmup: int = 1) -> float:
    """Best wall-clock seconds of ``repeats`` calls after ``warmup`` untimed calls."""
    for _ in range(warmup):
        function()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def report(name: str, samples: int, seconds: float, baseline: float | None = None) -> float:
    """Print samples/s of one route and its speed ratio against ``baseline`` samples/s."""
    rate = samples / seconds
    ratio = "" if baseline is None else f"   {rate / baseline:6.2f}x baseline"
    print(f"  {name:<44s} {rate:12,.0f} samples/s{ratio}")
    return rate


def blas_in_use() -> str:
    """The BLAS library, version, kernel (OpenBLAS's core type) and threads NumPy and SciPy
    use, as threadpoolctl reports them: BLAS speeds, and so the ratios against BLAS
    baselines, depend on the kernel (``OPENBLAS_CORETYPE`` chooses OpenBLAS's)."""
    found = [
        f"{info.get('internal_api')} {info.get('version')} "
        f"(kernel {info.get('architecture', 'n/a')}, {info.get('num_threads')} threads, "
        f"{info.get('prefix')})"
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    chosen = os.environ.get("OPENBLAS_CORETYPE")
    asked = f" [OPENBLAS_CORETYPE={chosen}]" if chosen else " [OPENBLAS_CORETYPE unset]"
    return "BLAS: " + ("; ".join(dict.fromkeys(found)) if found else "none loaded") + asked
