"""Delay Network features and training beyond one worker's memory, on dask.distributed.

Two parts, each on ``LocalCluster`` workers (one thread each) with a memory limit of
``--worker-memory``:

1. Features, Zarr store to Zarr store, with ``lmu-sk features --scheduler``: the input
   store holds ``--factor`` times the worker memory limit. The same run is timed on a
   1-worker and a 2-worker cluster; the peak resident memory of every worker process is
   printed next to the limit.
2. Training an ``LMUClassifier`` from a dask array whose features exceed the limit (the
   head trains by streamed epochs, never gathering them), against in-memory training on
   the same data; both scored on the same held-out set.

Run with ``PYTHONPATH=. python benchmarks/bench_dask.py`` (``--quick`` for a small run).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from _timing import best_time
from distributed import Client, LocalCluster
from sklearn.exceptions import ConvergenceWarning

from lmu_sk import LMUClassifier, cli
from lmu_sk._dask import GATHER_LIMIT_KEY
from lmu_sk._memory import format_bytes, resolve_budget

N_STEPS, N_CHANNELS, N_CLASSES, NOISE = 128, 4, 10, 3.0
FREQUENCIES = np.random.default_rng(1).uniform(1.0, 6.0, size=(N_CLASSES, N_CHANNELS))


def peak_rss() -> int:
    """Peak resident memory of this process image in bytes (``VmHWM``, Linux).

    Not ``getrusage``: its ``ru_maxrss`` survives ``exec`` and so also counts the memory
    of the process that spawned a worker.
    """
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def cluster(n_workers: int, memory_limit: int) -> tuple[LocalCluster, Client]:
    c = LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=memory_limit,
        dashboard_address=None,
    )
    client = Client(c)
    client.run(lambda: __import__("lmu_sk.estimators"))
    return c, client


def check(status: int) -> None:
    if status != 0:
        raise RuntimeError(f"lmu-sk features failed with status {status}")


def worker_peaks(client: Client) -> list[int]:
    return sorted(client.run(peak_rss).values())


# ----------------------------------------------------------------------------------------------
# 1. Features, Zarr to Zarr
# ----------------------------------------------------------------------------------------------


def features_part(args, folder: Path, budget: int) -> None:
    n_steps = 500
    row_bytes = n_steps * 4
    n_rows = int(args.factor * budget) // row_bytes
    rows = max(1, budget // 25 // row_bytes)  # blocks of 1/25 of the limit
    source = folder / "in.zarr"
    print(
        f"features: {n_rows} sequences x {n_steps} steps float32 = "
        f"{format_bytes(n_rows * row_bytes)} in Zarr ({args.factor}x the worker limit of "
        f"{format_bytes(budget)}), order {args.order}, blocks of {rows} rows"
    )
    c, client = cluster(2, budget)
    with c, client:
        rng = da.random.default_rng(0)
        X = rng.standard_normal((n_rows, n_steps), chunks=(rows, n_steps), dtype=np.float32)
        X.to_zarr(str(source))
    timings = {}
    for n_workers in (1, 2):
        target = folder / f"out-{n_workers}.zarr"
        c, client = cluster(n_workers, budget)
        with c, client:
            idle = worker_peaks(client)
            argv = ["features", "--order", str(args.order), "--batch-size", str(rows)]
            argv += ["--quiet", "--scheduler", c.scheduler_address, str(source), str(target)]
            timings[n_workers] = best_time(
                lambda argv=argv: check(cli.main(argv)), args.repeats, 0
            )
            peaks = worker_peaks(client)
        print(
            f"  {n_workers} worker(s): {timings[n_workers]:6.1f} s, "
            f"{n_rows / timings[n_workers]:10,.0f} sequences/s; peak worker memory "
            + ", ".join(format_bytes(p) for p in peaks)
            + f" (limit {format_bytes(budget)}; {format_bytes(max(idle))} idle after imports)"
        )
    print(f"  speed-up 2 workers vs 1: {timings[1] / timings[2]:.2f}x")


# ----------------------------------------------------------------------------------------------
# 2. Training from a dask array whose features exceed the limit
# ----------------------------------------------------------------------------------------------


def labels(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(N_CLASSES, size=n)


def sequences(seed: int, n: int) -> np.ndarray:
    """Noisy sines, one class-dependent frequency per channel; labels from :func:`labels`."""
    rng = np.random.default_rng(seed)
    y = rng.integers(N_CLASSES, size=n)  # the draw labels() repeats
    t = np.arange(N_STEPS) / N_STEPS
    phase = rng.uniform(0, 2 * np.pi, size=(n, 1, N_CHANNELS))
    signal = np.sin(2 * np.pi * FREQUENCIES[y][:, None, :] * t[None, :, None] + phase)
    noise = NOISE * rng.standard_normal((n, N_STEPS, N_CHANNELS))
    return (signal + noise).astype(np.float32)


def lazy_dataset(n_blocks: int, rows: int):
    """A dask array generated block by block on the workers, and its labels."""
    blocks = [
        da.from_delayed(
            dask.delayed(sequences)(seed, rows), (rows, N_STEPS, N_CHANNELS), np.float32
        )
        for seed in range(n_blocks)
    ]
    y = np.concatenate([labels(seed, rows) for seed in range(n_blocks)])
    return da.concatenate(blocks), y


def training_part(args, budget: int) -> None:
    order = 128
    n_features = order * N_CHANNELS
    rows = 5000
    X, y = lazy_dataset(max(2, args.train_rows // rows), rows)
    feature_bytes = X.shape[0] * n_features * 4
    X_test, y_test = sequences(1000, args.test_rows), labels(1000, args.test_rows)
    params = dict(
        order=order, hidden_layer_sizes=(64,), max_iter=args.epochs, random_state=0,
        device="cpu",
    )  # fmt: skip
    print(
        f"training: {X.shape[0]} sequences {X.shape[1:]}, {n_features} features = "
        f"{format_bytes(feature_bytes)} ({feature_bytes / budget:.1f}x the worker limit of "
        f"{format_bytes(budget)}), {args.epochs} epochs, {len(X.chunks[0])} blocks of {rows} rows"
    )
    # the features are streamed when they exceed the gather limit: at most the worker limit
    gather_limit = min(budget, feature_bytes // 2)
    c, client = cluster(2, budget)
    with c, client, dask.config.set({GATHER_LIMIT_KEY: gather_limit}), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tic = time.perf_counter()
        streamed = LMUClassifier(**params).fit(X, y)
        streamed_time = time.perf_counter() - tic
        peaks = worker_peaks(client)
    # the in-memory baseline: the same sequences generated in this process
    X_memory = X.compute(scheduler="threads")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tic = time.perf_counter()
        in_memory = LMUClassifier(**params).fit(X_memory, y)
        memory_time = time.perf_counter() - tic
    streamed_acc = streamed.score(X_test, y_test)
    memory_acc = in_memory.score(X_test, y_test)
    print(
        f"  streamed from dask (2 workers): test accuracy {100 * streamed_acc:.2f} %, "
        f"{streamed_time:.1f} s; peak worker memory " + ", ".join(format_bytes(p) for p in peaks)
    )
    print(
        f"  in memory (NumPy):              test accuracy {100 * memory_acc:.2f} %, "
        f"{memory_time:.1f} s"
    )
    print(f"  difference: {100 * (streamed_acc - memory_acc):+.2f} points")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker-memory", default="500MB", help="memory limit per worker")
    parser.add_argument("--factor", type=float, default=4.0, help="input size / worker limit")
    parser.add_argument("--order", type=int, default=64)
    parser.add_argument("--train-rows", type=int, default=300_000)
    parser.add_argument("--test-rows", type=int, default=20_000)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2, help="best of this many timings")
    parser.add_argument("--skip-features", action="store_true")
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--quick", action="store_true", help="a small, fast run")
    args = parser.parse_args(argv)
    if args.quick:
        args.worker_memory, args.train_rows, args.test_rows, args.epochs = "300MB", 30_000, 4000, 3
    budget = resolve_budget(args.worker_memory)
    print(f"python {sys.version.split()[0]}, dask {dask.__version__}")
    folder = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    try:
        if not args.skip_features:
            features_part(args, folder, budget)
        if not args.skip_training:
            training_part(args, budget)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
