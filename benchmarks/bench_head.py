"""Time per epoch of ``DenseHeadClassifier`` against scikit-learn's ``MLPClassifier``.

Both train the same architecture (one hidden ReLU layer of 346 units, Adam, batch 200)
for the same number of epochs on the same float32 features of the psMNIST shape (default
60 000 x 468, 10 classes). The labels come from a random linear map of the features plus
noise, so both models can learn them and their training accuracies are comparable.
``MLPClassifier`` is given the float32 matrix too, so it also computes in float32.

Both estimators are warmed up on a small slice first, so that one-time costs of the
process (imports, loading compiled kernels) are not counted as epoch time, and each is then
fitted ``--repeats`` times, alternating, keeping its fastest fit: on a shared machine this
filters out slowdowns caused by other processes.

Run::

    python benchmarks/bench_head.py [--n-samples 60000] [--epochs 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

try:
    from lmu_sk.head import DenseHeadClassifier
except ImportError:  # run from a source checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from lmu_sk.head import DenseHeadClassifier

N_FEATURES = 468
N_CLASSES = 10
HIDDEN = (346,)
BATCH = 200


def make_data(n_samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal float32 features and labels from a noisy random linear map."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, N_FEATURES), dtype=np.float32)
    W = rng.standard_normal((N_FEATURES, N_CLASSES), dtype=np.float32) / np.sqrt(N_FEATURES)
    noise = rng.standard_normal((n_samples, N_CLASSES), dtype=np.float32)
    y = np.argmax(X @ W + 0.5 * noise, axis=1)
    return X, y


def time_fit(model, X: np.ndarray, y: np.ndarray, epochs: int) -> tuple[float, float]:
    """Return (seconds per epoch, training accuracy) of ``model.fit``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tic = time.perf_counter()
        model.fit(X, y)
        elapsed = time.perf_counter() - tic
    assert model.n_iter_ == epochs, (model.n_iter_, epochs)
    return elapsed / epochs, float(model.score(X, y))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=60_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="fits per estimator, alternating between them; the fastest one is reported",
    )
    args = parser.parse_args(argv)

    X, y = make_data(args.n_samples)
    common = dict(
        hidden_layer_sizes=HIDDEN,
        activation="relu",
        solver="adam",
        batch_size=BATCH,
        max_iter=args.epochs,
        tol=0.0,
        n_iter_no_change=args.epochs + 1,
        random_state=0,
    )
    models = {"DenseHeadClassifier": DenseHeadClassifier, "MLPClassifier": MLPClassifier}
    # one-time process costs (imports, loading compiled kernels) are not per-epoch costs:
    # warm both estimators up on a small slice first
    for cls in models.values():
        time_fit(cls(**{**common, "max_iter": 1}), X[:1000], y[:1000], 1)

    print(
        f"data: {X.shape[0]} x {X.shape[1]} float32, {N_CLASSES} classes, "
        f"{args.epochs} epochs, best of {args.repeats} fits"
    )
    best = {name: np.inf for name in models}
    accuracy = {}
    fitted = {}
    for _ in range(args.repeats):
        for name, cls in models.items():
            model = cls(**common)
            seconds, accuracy[name] = time_fit(model, X, y, args.epochs)
            best[name] = min(best[name], seconds)
            fitted[name] = model
    dtype = fitted["MLPClassifier"].coefs_[0].dtype
    for name in models:
        extra = f" (computes in {dtype})" if name == "MLPClassifier" else ""
        print(f"{name:20s}: {best[name]:.3f} s/epoch, train accuracy {accuracy[name]:.4f}{extra}")
    print(f"ratio ours/sklearn  : {best['DenseHeadClassifier'] / best['MLPClassifier']:.3f}")


if __name__ == "__main__":
    main()
