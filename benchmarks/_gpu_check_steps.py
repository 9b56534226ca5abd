"""The steps of ``gpu_check.py``, each run in its own process (``gpu_check.py --step NAME``).

Each step prints what it finds as it goes and returns its exit status: 0 when it passed.
They are kept apart from ``gpu_check.py`` so that the parent process, which runs them under
their time limits, imports neither lmu_sk nor CuPy nor Numba, and reports every step even
where one of them fails to import.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _gpu import array_module, synthetic_series
from sklearn.exceptions import ConvergenceWarning

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, __version__
from lmu_sk._device import _import_cupy_with_gpu, resolve_device, to_numpy

# the tests step, on a dry run: a few of the tests marked gpu, in the simulator (the contract's
# Numba-CUDA cases) and on the stand-in (the DLPack hand-off)
DRY_TESTS = (
    "tests/engine/test_contract.py",
    "tests/transformers/test_dlpack.py",
    "-k",
    "(cudasim and final and equal and float32) or (contiguous and final and equal)",
)
# a GPU case skipped on a GPU machine: CuPy or Numba-CUDA not reached
FAILURE_TAIL = 1500  # characters of each failure's traceback printed as it happens
GPU_SKIP = re.compile(r"cupy|simulator|sees no|numba\.cuda", re.IGNORECASE)


def gpu_or_fail(dry_run: bool):
    cp = array_module(dry_run)
    if cp is None:
        print(f"FAIL: no GPU: {_import_cupy_with_gpu()[1]}")
    return cp


def step_environment(dry_run: bool, out: Path, scale: float) -> int:
    print(f"python {sys.version.split()[0]} on {platform.platform()}, {os.cpu_count()} CPU cores")
    print(f"lmu_sk {__version__} from {Path(sys.modules['lmu_sk'].__file__).parent}")
    packages = ("numpy", "scipy", "scikit-learn", "numba", "numba-cuda", "cupy-cuda13x")
    packages += ("cupy-cuda12x", "cupy", "torch", "jax", "jaxlib", "dask", "pytest", "hypothesis")
    for name in packages:
        try:
            print(f"  {name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            print(f"  {name}: not installed")
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=20)
        print(smi.stdout.strip() or smi.stderr.strip())
    else:
        print("nvidia-smi: not found")
    ok = True
    cp = gpu_or_fail(dry_run)
    if cp is None:
        ok = False
    else:
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        free, total = cp.cuda.runtime.memGetInfo()
        print(f"CuPy {cp.__version__}: {name}, {total / 2**30:.1f} GiB ({free / 2**30:.1f} free)")
        print(f"  compute capability {cp.cuda.Device().compute_capability}")
        print(f"  multiprocessors {props.get('multiProcessorCount', '?')}")
        print(f"  CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}")
        print(f"  driver's CUDA {cp.cuda.runtime.driverGetVersion()}")
    from numba import cuda

    if cuda.is_available():
        device = cuda.get_current_device()
        kind = "the CUDA simulator" if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else "GPU"
        capability = device.compute_capability
        name = getattr(device, "name", "?")
        print(f"Numba-CUDA sees {kind}: {name}, compute capability {capability}")
    else:
        print("FAIL: numba.cuda sees no GPU")
        ok = False
    print(f"lmu_sk device='auto' resolves to: {resolve_device('auto')}")
    return 0 if ok else 1


class SkipRecorder:
    """A pytest plugin that keeps the reason of every test skipped, and prints the end of
    each failure's traceback as it happens (a step stopped at its limit prints no
    summary)."""

    def __init__(self):
        self.reasons: list[str] = []

    def pytest_runtest_logreport(self, report):
        if report.failed:
            print(f"\n--- {report.nodeid} ({report.when}):", flush=True)
            print(report.longreprtext[-FAILURE_TAIL:], flush=True)
        if report.skipped:
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            self.reasons.append(f"{report.nodeid}: {reason}")


def step_tests(dry_run: bool, out: Path, scale: float) -> int:
    """The tests marked ``gpu``, in this process (its output goes to the log as it comes);
    on a GPU with ``LMU_SK_TEST_GPU=cupy``, where a GPU case skipped fails the step."""
    import pytest

    if dry_run:
        arguments = list(DRY_TESTS)  # the simulator is on in this process
    else:
        if gpu_or_fail(dry_run) is None:
            return 1
        os.environ["LMU_SK_TEST_GPU"] = "cupy"
        arguments = ["tests", "-k", "not simulator"]
    arguments = ["-m", "gpu", "-v", "-rfEs", "-p", "no:cacheprovider", *arguments]
    prefix = "" if dry_run else "LMU_SK_TEST_GPU=cupy "
    print(f"$ {prefix}python -m pytest {' '.join(arguments)}", flush=True)
    recorder = SkipRecorder()
    code = pytest.main(arguments, plugins=[recorder])
    gpu_skips = [reason for reason in recorder.reasons if GPU_SKIP.search(reason)]
    if gpu_skips and not dry_run:
        print(f"FAIL: {len(gpu_skips)} GPU case(s) skipped on a GPU machine:")
        print("\n".join(gpu_skips[:20]))
        return 1
    return int(code)


def step_benchmarks(dry_run: bool, out: Path, scale: float) -> int:
    if gpu_or_fail(dry_run) is None:
        return 1
    import bench_gpu

    arguments = ["--scale", str(scale), "--json", str(out / "figures.json")]
    return bench_gpu.main(arguments + (["--dry-run"] if dry_run else []))


def step_classifier(dry_run: bool, out: Path, scale: float) -> int:
    cp = gpu_or_fail(dry_run)
    if cp is None:
        return 1
    print(f"device='auto' (the default) resolves to: {resolve_device('auto')}")
    # (name, training series, steps, parameters besides random_state)
    cases = [("up to 10 000 series", 1500, 300, {}), ("over 10 000 series", 10500, 150, {})]
    if dry_run:
        cases = [("tiny", 30, 16, {}), ("tiny, dense head", 60, 16, {"max_iter": 3})]
        cases[1][3]["head"] = "dense"
    n_test = 40 if dry_run else 1000
    ok = True
    for name, n, n_steps, params in cases:
        X, y = synthetic_series(n + n_test, n_steps, seed=7)
        runs = {}
        for device in ("auto", "cpu"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                model = LMUClassifier(**params, random_state=0, device=device).fit(X[:n], y[:n])
                predicted = model.predict(X[n:])
                seconds = time.perf_counter() - start
            accuracy = float(np.mean(predicted == y[n:]))
            runs[device] = (predicted, accuracy)
            where = "GPU" if device == "auto" else "CPU"
            print(
                f"{name} ({n} x {n_steps}), {where}, random_state=0: head {model.head_kind_}, "
                f"order {model.order_}: fit + predict {seconds:.3g} s (first call in the "
                f"process included), test accuracy {accuracy:.4f}",
                flush=True,
            )
        (gpu, gpu_accuracy), (cpu, cpu_accuracy) = runs.values()
        agree = float(np.mean(gpu == cpu))
        passed = agree >= 0.98 and abs(gpu_accuracy - cpu_accuracy) <= 0.02
        ok &= passed
        print(
            f"{name}: same prediction on {agree:.2%} of {n_test} test series; accuracies "
            f"{gpu_accuracy:.4f} (GPU), {cpu_accuracy:.4f} (CPU): {'ok' if passed else 'FAIL'}"
        )
    return 0 if ok else 1


def feed(stream, X, cuts, cp):
    """Feed ``X`` chunk by chunk (single steps in their one-step form, every third chunk
    as a device array); yield each prefix's end."""
    start = 0
    for i, stop in enumerate(cuts):
        chunk = X[:, start] if stop - start == 1 else X[:, start:stop]
        stream.update(cp.asarray(chunk) if i % 3 == 2 else chunk)
        start = stop
        yield stop


def step_streams(dry_run: bool, out: Path, scale: float) -> int:
    """GPU streams against the GPU batch of every prefix fed.

    Tolerances, relative to the largest magnitude of the batch's features (as in
    ``tests/models/test_streaming.py``): 1e-5 in float32 and 1e-10 in float64, since stream
    and batch compute the same sums in different orders. Pooled features: their threshold
    counts flip for states within rounding of a threshold, so at most 1 % of the entries
    may differ by more than 1e-4. Probabilities of a float64 classifier: 1e-8.
    """
    cp = gpu_or_fail(dry_run)
    if cp is None:
        return 1
    n_streams, n_steps, order = (5, 12, 4) if dry_run else (64, 300, 32)
    rng = np.random.default_rng(8)
    X = rng.standard_normal((n_streams, n_steps, 2))
    cuts = sorted({1, 2, 3, n_steps // 3, n_steps // 3 + 1, n_steps - 1, n_steps})
    results = []

    def relative_errors(got, expected) -> np.ndarray:
        got, expected = to_numpy(got).astype(np.float64), to_numpy(expected)
        if got.shape != expected.shape:
            return np.array([np.inf])
        return np.abs(got - expected) / max(float(np.max(np.abs(expected))), 1e-300)

    def check(what, errors, tolerance, share=0.0):
        worst = max(float(e.max()) for e in errors)
        beyond = max(float(np.mean(e > tolerance)) for e in errors)
        passed = beyond <= share
        results.append(passed)
        allowed = f", {share:.0%} of the entries beyond it" if share else ""
        print(f"{what}: worst {worst:.2g} over {len(errors)} prefixes (tolerance "
              f"{tolerance:g}{allowed}): {'ok' if passed else 'FAIL'}", flush=True)  # fmt: skip

    tolerance = {"float32": 1e-5, "float64": 1e-10}
    for dtype in ("float32", "float64"):
        U = X.astype(dtype)
        for output in ("final", "sequence", "mean", "max"):
            features = LMUFeatures(
                order=order, theta=n_steps / 3, output=output, dtype=dtype, device="gpu"
            ).fit(U)
            stream = features.stream(n_streams)
            errors = []
            for t in feed(stream, U, cuts, cp):
                batch = features.transform(U[:, :t])
                batch = batch[:, -1] if output == "sequence" else batch
                errors.append(relative_errors(stream.transform(), batch))
            check(f"LMUFeatures output={output!r} {dtype}", errors, tolerance[dtype])
    pooled = LMUPooledFeatures(thetas=[8, n_steps // 3], device="gpu").fit(X)
    stream = pooled.stream(n_streams)
    errors = [relative_errors(stream.transform(), pooled.transform(X[:, :t]))
              for t in feed(stream, X, cuts, cp)]  # fmt: skip
    check("LMUPooledFeatures", errors, 1e-4, share=0.01)
    y = (X[:, :, 0].sum(axis=1) > 0).astype(int) + (X[:, -5:, 1].sum(axis=1) > 0)
    params = dict(head="dense", feature_output="final", order=order, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LMUClassifier(**params, dtype="float64", random_state=0, device="gpu").fit(X, y)
    stream = model.stream(n_streams)
    errors = [np.abs(stream.predict_proba() - model.predict_proba(X[:, :t]))
              for t in feed(stream, X, cuts, cp)]  # fmt: skip
    check("LMUClassifier stream probabilities (absolute)", errors, 1e-8)
    ok = all(results)
    print("every prefix compared: " + ("ok" if ok else "FAIL"))
    return 0 if ok else 1


def address(a) -> int:
    interface = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return interface["data"][0]


def step_dlpack(dry_run: bool, out: Path, scale: float) -> int:
    cp = gpu_or_fail(dry_run)
    if cp is None:
        return 1
    X, y = synthetic_series(512, 100, seed=9)
    F = LMUFeatures(order=32, device="gpu", return_gpu_arrays=True).fit(X).transform(X)
    ok = type(F) is cp.ndarray and F.flags.c_contiguous and hasattr(F, "__dlpack__")
    print(f"features {type(F).__module__}.{type(F).__name__} {F.shape} {F.dtype}, "
          f"C-contiguous {F.flags.c_contiguous}: {'ok' if ok else 'FAIL'}")  # fmt: skip
    try:
        import torch
    except ImportError:
        print("PyTorch: not installed, skipped")
    else:
        tensor = torch.from_dlpack(F)
        same = tensor.data_ptr() == address(F)
        ok &= same
        verdict = "ok" if same else "FAIL"
        print(f"torch.from_dlpack: {tensor.device}, same memory {same}: {verdict}")
        # the frozen first layer: a linear classifier trained on the features in PyTorch
        torch.manual_seed(0)
        scaled = (tensor - tensor.mean(0)) / (tensor.std(0) + 1e-6)
        labels = torch.as_tensor(y, device=tensor.device)
        layer = torch.nn.Linear(F.shape[1], 4).to(tensor.device)
        losses = []
        for _ in range(5 if dry_run else 50):  # gradient descent (torch.optim is slow to import)
            loss = torch.nn.functional.cross_entropy(layer(scaled), labels)
            layer.zero_grad()
            loss.backward()
            with torch.no_grad():
                for weights in layer.parameters():
                    weights -= 0.5 * weights.grad
            losses.append(loss.item())
        learned = losses[-1] < losses[0]
        ok &= learned
        print(f"PyTorch linear layer on the features: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    try:
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax.numpy as jnp
    except ImportError:
        print("JAX: not installed, skipped")
    else:
        array = jnp.from_dlpack(F)
        same = array.unsafe_buffer_pointer() == address(F)
        ok &= same
        print(f"jax from_dlpack: {list(array.devices())}, same memory {same}: "
              f"{'ok' if same else 'FAIL'}")  # fmt: skip
    return 0 if ok else 1


STEPS = {
    "environment": step_environment,
    "tests": step_tests,
    "benchmarks": step_benchmarks,
    "classifier": step_classifier,
    "streams": step_streams,
    "dlpack": step_dlpack,
}
