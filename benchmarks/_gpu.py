"""The GPU of the GPU benchmarks and of ``gpu_check.py``, its timers and synthetic data.

The GPU is CuPy's, or for a dry run the tests' NumPy stand-in for CuPy
(``tests/fake_cupy.py``) installed as the GPU, with the Numba-CUDA kernels in Numba's CUDA
simulator: every line of a benchmark then runs on the CPU at tiny sizes, so that the
scripts are checked on machines without a GPU (their numbers mean nothing there).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SIMULATOR = "NUMBA_ENABLE_CUDASIM"


def simulator_env(dry_run: bool) -> dict[str, str]:
    """The environment of a child process: with ``dry_run``, Numba's CUDA simulator on
    (Numba reads the switch when it is first imported)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if dry_run:
        env[SIMULATOR] = "1"
    else:
        env.pop(SIMULATOR, None)
    return env


def restart_in_simulator() -> None:
    """Run this script again with the CUDA simulator on, unless it already is."""
    if os.environ.get(SIMULATOR) != "1":
        os.execve(sys.executable, [sys.executable, *sys.argv], simulator_env(dry_run=True))


def array_module(dry_run: bool) -> ModuleType | None:
    """CuPy when it sees a GPU (else ``None``); with ``dry_run`` the NumPy stand-in,
    installed as the GPU for the rest of the process (the simulator must be on)."""
    from lmu_sk._device import gpu_available  # here: gpu_check's parent runs without lmu_sk

    if not dry_run:
        if not gpu_available():
            return None
        import cupy

        return cupy
    if os.environ.get(SIMULATOR) != "1":
        raise RuntimeError(f"a dry run needs {SIMULATOR}=1 before Numba is imported")
    sys.path.insert(0, str(ROOT / "tests"))
    import fake_cupy
    import pytest

    return fake_cupy.install(pytest.MonkeyPatch(), as_gpu=True)


def synchronize(cp: ModuleType) -> None:
    cp.cuda.Device().synchronize()


def gpu_seconds(cp: ModuleType, fn: Callable[[], object], repeat: int = 10, warmup: int = 2):
    """Median seconds of ``fn()`` between two events on the current stream."""
    for _ in range(warmup):
        fn()
    synchronize(cp)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(times))


def wall_seconds(cp: ModuleType, fn: Callable[[], object], repeat: int = 5, warmup: int = 0):
    """Median wall-clock seconds of a synchronised call (host in, host out)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        synchronize(cp)
        t0 = time.perf_counter()
        fn()
        synchronize(cp)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def synthetic_series(n_series: int, n_steps: int, seed: int = 0, n_classes: int = 4):
    """``(X, y)``: float32 series of shape ``(n_series, n_steps)``, a sine of one of
    ``n_classes`` frequencies (the class) at a random phase, under Gaussian noise of
    twice its amplitude."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_series)
    frequency = (1.0 + y) * 2.0 * np.pi / max(n_steps / 4.0, 2.0)
    phase = rng.uniform(0.0, 2.0 * np.pi, (n_series, 1))
    t = np.arange(n_steps)
    X = np.sin(frequency[:, None] * t + phase) + 2.0 * rng.standard_normal((n_series, n_steps))
    return X.astype(np.float32), y
