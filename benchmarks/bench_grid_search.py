"""Grid search over head parameters with and without the feature cache, in one run.

    python benchmarks/bench_grid_search.py [--n-samples 20000] [--n-steps 784] [--order 256]

Searches ``hidden_layer_sizes`` x ``alpha`` (4 candidates, 3-fold CV, n_jobs=2) of an
``LMUClassifier`` whose DN parameters stay fixed. Without ``memory`` every one of the
4 x 3 + 1 fits recomputes the DN features; with ``memory`` they are computed once per fold
(3 + 1 times) and loaded from disk otherwise. Prints both wall times, the ratio, and how
long one feature computation takes. The cache pays when features cost more than hashing
the data and reading them back from disk: all-state reductions ('max', 'mean' over long
sequences) rather than final states, which are one GEMM about as fast as the hashing.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
from sklearn.model_selection import GridSearchCV

from lmu_sk import LMUClassifier, LMUFeatures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=20000)
    parser.add_argument("--n-steps", type=int, default=784)
    parser.add_argument("--order", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--feature-output", default="final", choices=["final", "mean", "max"])
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.n_samples, args.n_steps)).astype(np.float32)
    y = (X[:, -50:].mean(axis=1) > 0).astype(int) + 2 * (X[:, :100].mean(axis=1) > 0)
    grid = {"hidden_layer_sizes": [(64,), (128,)], "alpha": [1e-4, 1e-3]}
    base = {
        "order": args.order,
        "feature_output": args.feature_output,
        "max_iter": args.epochs,
        "random_state": 0,
        "device": "cpu",
    }

    start = time.perf_counter()
    LMUFeatures(order=args.order, output=args.feature_output, device="cpu").fit_transform(X)
    one_features = time.perf_counter() - start
    print(
        f"{args.n_samples} x {args.n_steps} sequences, order {args.order}; "
        f"one feature computation: {one_features:.2f} s"
    )

    def search(**extra) -> float:
        start = time.perf_counter()
        GridSearchCV(LMUClassifier(**base, **extra), grid, cv=3, n_jobs=2).fit(X, y)
        return time.perf_counter() - start

    search()  # warm-up: starts the worker processes, compiles, fills caches
    plain = search()
    with tempfile.TemporaryDirectory() as cache:
        cached = search(memory=cache)
    print(f"  GridSearchCV without memory (baseline): {plain:7.2f} s  (13 feature computations)")
    print(
        f"  GridSearchCV with memory=<dir>:         {cached:7.2f} s  (4 feature computations)"
        f"   {plain / cached:5.2f}x faster"
    )


if __name__ == "__main__":
    main()
