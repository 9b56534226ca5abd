"""Small timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable


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
