"""Shapes of data: lmu_sk's default classifier against aeon's MiniRocket on synthetic probes.

Every probe is a synthetic classification problem of one shape that real data comes in
(many channels, many series, long series, very short series), made here from a seed, with
its own test set of the same kind. Each model runs in a fresh process, on one thread
(``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``, ``NUMBA_NUM_THREADS``
set to 1 before imports, aeon's ``n_jobs=1``), after an untimed warm-up fit on a small
slice of the same data (compilation excluded), and reports:

* accuracy on the test set, and the log loss of ``predict_proba`` (clipped at 1e-15);
* fit + predict seconds of process CPU time (``--clock wall`` for wall-clock seconds);
* peak memory: the process's peak resident set during fit + predict above its size before
  ``fit`` (the data and the imports excluded; the peak is reset after the warm-up through
  ``/proc/self/clear_refs``, Linux);
* for lmu_sk, ``n_features_out_`` of its features.

The probes (``--scale`` multiplies the numbers of series and steps, for a quick run):

1. ``channels64``: 600 training series x 64 channels x 200 steps, 4 classes; every
   channel carries a burst of one of two kinds (width and cycles) in every series, of
   the same amplitude; in 2 of the channels the kind shows one binary digit of the
   class each, in the other 62 it is random;
2. ``channels1000``: 200 x 1 000 channels x 100 steps, 3 classes shown in one channel
   by its burst's kind (of three), random in the others;
3. ``many``: 20 000 x 500 steps, one channel, 10 classes (a burst's width and number of
   cycles), with ``LMUClassifier(verbose=1)``'s progress printed;
4. ``long``: 200 x 20 000 steps, 2 classes (one burst of one or two cycles somewhere);
5. ``short``: 500 x 8 steps, 3 classes (MiniRocket refuses series shorter than 9 steps;
   lmu_sk must work);
6. ``first_fit``: the first ``LMUClassifier().fit`` on one input layout (3 channels,
   float64) in a new process whose cache was filled by a fit on another (1 channel,
   float32): wall seconds, target <= 1 s. The compiled kernels take every layout (in
   float64), so this first fit loads them from the cache and compiles none: what is
   measured is that nothing is compiled again for a new layout.
7. ``long_channels``: 600 x 24 channels x 600 steps, 3 classes shown in one channel by
   its burst's kind (of three, 6 to 12 steps wide), random in the others: the screening
   of more than 16 channels must see events of a few steps in series longer than 256.

    python benchmarks/bench_shapes.py                 # every probe, full size
    python benchmarks/bench_shapes.py --probes channels64 short --scale 0.25
"""

from __future__ import annotations

import os

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)

if __name__ == "__main__":
    for _variable in THREAD_VARIABLES:
        os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

EPS = 1e-15
MODELS = ("LMU", "MiniRocket")


# ----------------------------------------------------------------------------- the probes


def burst(n_steps: int, center: np.ndarray, width: np.ndarray, cycles: np.ndarray):
    """Gaussian-windowed sine bursts, one per row: ``(len(center), n_steps)``."""
    t = np.arange(n_steps)[None, :]
    z = (t - center[:, None]) / width[:, None]
    return np.exp(-(z**2)) * np.sin(np.pi * cycles[:, None] * z)


def _noise(rng: np.random.Generator, shape: tuple, level: float) -> np.ndarray:
    """White noise plus a slow random walk, ``level`` the white noise's deviation."""
    walk = np.cumsum(rng.standard_normal(shape), axis=-1) * (0.05 * level)
    return level * rng.standard_normal(shape) + walk


def _bursts(rng, n: int, n_steps: int, widths, cycles, kind: np.ndarray) -> np.ndarray:
    """One burst per row of the kind ``(widths[kind], cycles[kind])`` at a random place."""
    w = np.asarray(widths, dtype=float)[kind]
    margin = np.minimum(2 * w, n_steps / 2 - 1)
    center = rng.uniform(margin, n_steps - margin)
    return burst(n_steps, center, w, np.asarray(cycles, dtype=float)[kind])


# the channel probes' bursts over noise of deviation 0.6 (and its slow walk)
BURST_AMPLITUDE = 2.5


def _channel_probe(rng, n: int, n_channels: int, n_steps: int, informative: int, n_classes):
    """``(n, n_steps, n_channels)`` and labels. Every channel carries one burst per series,
    of one of the same kinds (width and cycles), at a random place, at the same amplitude
    over the same noise: no channel stands out by its power or its shapes, only by what its
    bursts say of the class. In a random choice of ``informative`` channels the burst's
    kind shows the class (with up to ``2**informative`` classes one binary digit of the
    label each, two kinds; with more, the whole label, as many kinds as classes up to 3);
    in the others it is random."""
    y = rng.integers(0, n_classes, n)
    X = _noise(rng, (n, n_channels, n_steps), 0.6)
    widths, cycles = (6.0, 12.0, 9.0), (1.5, 3.0, 2.0)
    digits = n_classes <= 2**informative
    n_kinds = 2 if digits else min(n_classes, len(widths))
    chosen = {int(c): j for j, c in enumerate(rng.permutation(n_channels)[:informative])}
    for c in range(n_channels):
        if c in chosen:
            kind = (y >> chosen[c]) & 1 if digits else y % n_kinds
        else:
            kind = rng.integers(0, n_kinds, n)
        X[:, c] += BURST_AMPLITUDE * _bursts(rng, n, n_steps, widths, cycles, kind)
    return X.transpose(0, 2, 1).copy(), y


def _univariate_probe(rng, n: int, n_steps: int, n_classes: int, noise: float, width_scale):
    """``(n, n_steps)`` and labels: class ``k`` is a burst of width and cycles set by k
    (of 10 classes: 5 widths, then 2 numbers of cycles; of 2: one cycle or two)."""
    y = rng.integers(0, n_classes, n)
    if n_classes == 2:
        widths, cycles = np.full(2, width_scale), np.array([1.0, 2.0])
    else:
        widths = width_scale * (1.0 + (np.arange(n_classes) % 5) * 0.35)
        cycles = 1.0 + (np.arange(n_classes) // 5) * 1.0
    X = _noise(rng, (n, n_steps), noise)
    X += _bursts(rng, n, n_steps, widths, cycles, y)
    return X, y


def make_probe(name: str, seed: int = 0, scale: float = 1.0) -> tuple:
    """``(X_train, y_train, X_test, y_test)`` of probe ``name``, in lmu_sk's layout
    ``(n_series, n_steps[, n_channels])``."""
    rng = np.random.default_rng(seed)

    def size(n: int, minimum: int = 20) -> int:
        return max(minimum, round(n * scale))

    if name == "channels64":
        n, n_test = size(600), size(600)
        X, y = _channel_probe(rng, n + n_test, 64, size(200, 50), 2, 4)
    elif name == "channels1000":
        n, n_test = size(200), size(200)
        X, y = _channel_probe(rng, n + n_test, max(10, int(1000 * scale)), 100, 1, 3)
    elif name == "many":
        n, n_test = size(20_000), size(2_000)
        X, y = _univariate_probe(rng, n + n_test, size(500, 50), 10, 0.35, 6.0)
    elif name == "long":
        n, n_test = size(200), size(200)
        X, y = _univariate_probe(rng, n + n_test, size(20_000, 500), 2, 0.3, 12.0)
    elif name == "long_channels":
        n, n_test = size(600), size(200)
        X, y = _channel_probe(rng, n + n_test, 24, size(600, 300), 1, 3)
    elif name == "short":
        n, n_test = size(500), size(500)
        y = rng.integers(0, 3, n + n_test)
        t = np.arange(8)
        shapes = np.stack([np.sin(np.pi * t / 7), np.cos(np.pi * t / 7), (t - 3.5) / 3.5])
        X = shapes[y] + 0.8 * rng.standard_normal((n + n_test, 8))
    else:
        raise ValueError(f"unknown probe {name!r}")
    return X[:n], y[:n], X[n:], y[n:]


# ------------------------------------------------------------------------ one model's run


def _rss_bytes() -> int:
    with open("/proc/self/statm") as file:
        return int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak() -> bool:
    """Reset the process's peak resident set (Linux 4.0+), so that the warm-up's peak
    (compilation takes hundreds of MB) is not counted; False where it cannot be."""
    try:
        with open("/proc/self/clear_refs", "w") as file:
            file.write("5")
        return True
    except OSError:
        return False


def _peak_bytes() -> int:
    """The peak resident set since the last reset (or since the process started)."""
    try:
        with open("/proc/self/status") as file:
            for line in file:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _make(model: str, verbose: int):
    if model == "LMU":
        from lmu_sk import LMUClassifier

        return LMUClassifier(random_state=0, verbose=verbose)
    from aeon.classification.convolution_based import MiniRocketClassifier

    return MiniRocketClassifier(random_state=0, n_jobs=1)


def _for_model(model: str, X: np.ndarray) -> np.ndarray:
    if model == "LMU":
        return X
    # aeon's layout: (n_cases, n_channels, n_timepoints), made contiguous here (not in the
    # timed fit: lmu_sk's data is in its layout already)
    return np.ascontiguousarray(X[:, None, :] if X.ndim == 2 else X.transpose(0, 2, 1))


def run_one(probe: str, model: str, scale: float, clock: str) -> dict:
    """Fit and predict ``model`` on ``probe`` in this process: the figures of one row."""
    X, y, X_test, y_test = make_probe(probe, scale=scale)
    X, X_test = _for_model(model, X), _for_model(model, X_test)
    verbose = 1 if probe == "many" and model == "LMU" else 0
    result: dict = {}
    try:
        # the warm-up: compilation on a slice of the same data, every class in it
        first = np.unique(y, return_index=True)[1]
        warm = np.unique(np.concatenate([first, np.arange(min(len(y), 40))]))
        _make(model, 0).fit(X[warm], y[warm])
        _reset_peak()
        start_rss = _rss_bytes()
        clock_fn = time.process_time if clock == "cpu" else time.perf_counter
        started = clock_fn()
        fitted = _make(model, verbose).fit(X, y)
        predicted = fitted.predict(X_test)
        result["seconds"] = clock_fn() - started
        peak = _peak_bytes()
        result["peak_mb"] = max(0, peak - start_rss) / 2**20
        result["accuracy"] = float(np.mean(predicted == y_test))
        proba = np.clip(np.asarray(fitted.predict_proba(X_test), dtype=np.float64), EPS, 1)
        proba /= proba.sum(axis=1, keepdims=True)
        column = {c: j for j, c in enumerate(np.asarray(fitted.classes_).tolist())}
        rows = np.arange(len(y_test))
        cols = np.asarray([column[c] for c in np.asarray(y_test).tolist()])
        result["log_loss"] = float(-np.mean(np.log(proba[rows, cols])))
        if model == "LMU":
            result["n_features"] = int(fitted.features_.n_features_out_)
    except Exception as error:  # a failure is a result of the benchmark
        result = {"error": f"{type(error).__name__}: {error}".splitlines()[0][:300]}
    return result


_FIRST_FIT = r"""
import json, sys, time
import numpy as np
wall = time.perf_counter()
from lmu_sk import LMUClassifier
rng = np.random.default_rng(0)
channels, dtype = int(sys.argv[1]), sys.argv[2]
X = rng.standard_normal((100, 200, channels)).astype(dtype)
y = (X[:, -20:].sum(axis=(1, 2)) > 0).astype(int)
imported = time.perf_counter() - wall
wall = time.perf_counter()
LMUClassifier().fit(X, y)
print(json.dumps({"import_s": imported, "fit_s": time.perf_counter() - wall}))
"""


def first_fit() -> dict:
    """The first fit of a new layout in a new process, the Numba cache warm from another."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore"}

        def child(channels: int, dtype: str) -> dict:
            out = subprocess.run(
                [sys.executable, "-c", _FIRST_FIT, str(channels), dtype],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            return json.loads(out.stdout.strip().splitlines()[-1])

        filling = child(1, "float32")  # compiles and fills the cache
        new_layout = child(3, "float64")
        again = child(3, "float64")
    return {"filling_fit_s": filling["fit_s"], "fit_s": new_layout["fit_s"], "again": again}


# ---------------------------------------------------------------------------- the report

PROBES = ("channels64", "channels1000", "many", "long", "short", "first_fit", "long_channels")


def _child(probe: str, model: str, scale: float, clock: str) -> dict:
    cmd = [sys.executable, __file__, "--child", probe, model, "--scale", str(scale)]
    cmd += ["--clock", clock]
    env = {**os.environ, **{v: "1" for v in THREAD_VARIABLES}}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if model == "LMU" and probe == "many":
        progress = [line for line in out.stderr.splitlines() if line.strip()]
        for line in progress[-12:]:
            print(f"    | {line[-110:]}", flush=True)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": (out.stderr.strip().splitlines() or ["no output"])[-1][:300]}


def _row(name: str, result: dict) -> str:
    if "error" in result:
        return f"  {name:<11s} failed: {result['error']}"
    features = f"  features {result['n_features']}" if "n_features" in result else ""
    return (
        f"  {name:<11s} accuracy {result['accuracy']:.4f}  log loss {result['log_loss']:7.3f}"
        f"  {result['seconds']:8.2f} s  peak +{result['peak_mb']:7.1f} MB{features}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", nargs="+", choices=PROBES, default=list(PROBES))
    parser.add_argument("--scale", type=float, default=1.0, help="series and steps x this")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--json", metavar="OUT", help="save the rows")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        probe, model = args.child
        print(json.dumps(run_one(probe, model, args.scale, args.clock)))
        return 0
    from _timing import blas_in_use  # (beside this script: run as one, it is on the path)

    print(f"one thread per model; {args.clock} seconds of fit + predict; scale {args.scale}")
    print(blas_in_use())
    rows: dict = {"blas": blas_in_use()}
    for index, probe in enumerate(args.probes):
        if probe == "first_fit":
            result = first_fit()
            rows[probe] = result
            print(
                f"first_fit: a new layout's first LMUClassifier().fit in a new process with a "
                f"warm cache: {result['fit_s']:.2f} s wall (target <= 1 s; the process "
                f"that filled the cache: {result['filling_fit_s']:.2f} s)",
                flush=True,
            )
            continue
        X, y, X_test, _ = make_probe(probe, scale=args.scale)
        print(
            f"{probe}: {X.shape[0]} training series of shape {X.shape[1:]}, "
            f"{len(X_test)} test, {len(np.unique(y))} classes",
            flush=True,
        )
        order = MODELS if index % 2 == 0 else MODELS[::-1]
        results = {model: _child(probe, model, args.scale, args.clock) for model in order}
        for model in MODELS:
            print(_row(model, results[model]), flush=True)
        lmu, mr = results["LMU"], results["MiniRocket"]
        if "error" not in lmu and "error" not in mr:
            print(
                f"  LMU - MiniRocket: {100 * (lmu['accuracy'] - mr['accuracy']):+.1f} points, "
                f"time ratio {lmu['seconds'] / mr['seconds']:.2f}x",
                flush=True,
            )
        rows[probe] = results
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
