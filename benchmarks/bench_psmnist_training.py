"""Training time of psMNIST with precomputed DN features: the ff-LMU paper's Table 7 row.

The feedforward LMU manuscript (Chilkuri and Eliasmith, Table 7) trains its psMNIST model
of 102k parameters on precomputed DN features with batches of 100 on a GTX 1080: 15 s to
precompute the new data set, 5 s of training until the *training* accuracy crosses 95 %.
This script measures the same two figures on this machine's CPU:

* precompute: the DN final states of all 70 000 sequences (training, validation and test)
  with :class:`~lmu_sk.LMUFeatures`, float32, best of ``--repeats``; baseline in the same
  run: a bare float32 GEMM of the same shape (the sequences times the reversed impulse
  response), which is the least this computation can cost;
* training to 95 %: a :class:`~lmu_sk.DenseHeadClassifier` of the paper's 102k parameters
  (order 468, one hidden layer of 212 ReLU units, softmax; Adam's defaults, batches of 100)
  trained by ``partial_fit`` on slices of ``--check-every`` rows of each epoch's shuffle;
  after each slice the accuracy on all 50 000 training sequences is measured, outside the
  timer, and the clock stops at the first slice after which it reaches ``--target``.
  Baseline in the same run: scikit-learn's ``MLPClassifier`` of the same architecture, the
  same slices and the same stopping rule (it computes in float32 on float32 features too).

The sequences come from MNIST: pass the folder with the four MNIST ``.gz`` files as
``--data`` (or set ``LMU_SK_DATA``). The machine's load average is printed before and after,
since other work on the machine slows every figure here. Run::

    python benchmarks/bench_psmnist_training.py --data DIR
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from _timing import best_time, blas_in_use
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from lmu_sk import DenseHeadClassifier, LMUFeatures
from lmu_sk.datasets import load_psmnist
from lmu_sk.dn import discrete_system, impulse_response

# ff-LMU manuscript, Table 7 (GTX 1080): seconds to precompute, seconds of training to 95 %
PAPER_PRECOMPUTE_S = 15.0
PAPER_TRAINING_S = 5.0


def parameter_count(n_features: int, hidden: tuple[int, ...], n_classes: int = 10) -> int:
    """Weights and biases of a dense network with these layer sizes."""
    sizes = [n_features, *hidden, n_classes]
    return sum(sizes[k] * sizes[k + 1] + sizes[k + 1] for k in range(len(sizes) - 1))


def relative(paper_s: float, ours_s: float) -> str:
    """How our time compares with the paper's, as 'N.Nx faster' or 'N.Nx slower'."""
    if ours_s <= paper_s:
        return f"{paper_s / ours_s:.1f}x faster"
    return f"{ours_s / paper_s:.1f}x slower"


def time_to_accuracy(
    model,
    X: np.ndarray,
    y: np.ndarray,
    target: float,
    check_every: int,
    max_epochs: int,
    seed: int,
) -> tuple[float, float, float]:
    """Train ``model`` by ``partial_fit`` on slices until its accuracy on ``(X, y)`` reaches
    ``target``; return (training seconds, epochs trained, accuracy reached).

    Only the ``partial_fit`` calls are timed: the accuracy checks between them are not.
    """
    rng = np.random.default_rng(seed)
    classes = np.unique(y)
    seconds, rows, accuracy = 0.0, 0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(max_epochs):
            order = rng.permutation(len(X))
            for start in range(0, len(X), check_every):
                index = order[start : start + check_every]
                X_slice, y_slice = X[index], y[index]
                tic = time.perf_counter()
                model.partial_fit(X_slice, y_slice, classes=classes)
                seconds += time.perf_counter() - tic
                rows += len(index)
                accuracy = float(model.score(X, y))
                if accuracy >= target:
                    return seconds, rows / len(X), accuracy
    return seconds, rows / len(X), accuracy


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="folder with the four MNIST .gz files")
    parser.add_argument("--permutation-seed", type=int, default=50, help="50: the papers'")
    parser.add_argument("--order", type=int, default=468)
    parser.add_argument("--hidden", type=int, nargs="*", default=[212])
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--target", type=float, default=0.95, help="training accuracy")
    parser.add_argument("--check-every", type=int, default=2500, help="rows between checks")
    parser.add_argument("--max-epochs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="precompute: best of this many")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    print(blas_in_use())
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    data = load_psmnist(args.data, permutation_seed=args.permutation_seed)
    sequences = np.concatenate([data.X_train, data.X_val, data.X_test])
    n_sequences, n_steps = sequences.shape
    theta = float(n_steps)

    H_reversed = np.ascontiguousarray(
        impulse_response(*discrete_system(args.order, theta), n_steps)[::-1], dtype=np.float32
    )
    gemm = best_time(lambda: sequences @ H_reversed, repeats=args.repeats)
    features = LMUFeatures(order=args.order, theta=theta, dtype="float32")
    # fit builds the impulse response once (cached for the process), as a first call would
    fit_s = best_time(lambda: features.fit(sequences[:1]), repeats=1, warmup=0)
    precompute = best_time(lambda: features.transform(sequences), repeats=args.repeats)
    X_train = features.transform(data.X_train)
    print(
        f"\nPrecompute: DN final states of all {n_sequences} sequences of {n_steps} steps "
        f"(order {args.order}, theta {theta:g}, float32)"
    )
    print(f"  LMUFeatures.transform      {precompute:7.3f} s (fit, building H: {fit_s:.3f} s)")
    print(f"  bare float32 GEMM baseline {gemm:7.3f} s   ours: {gemm / precompute:.2f}x its speed")
    print(
        f"  paper (GTX 1080)           {PAPER_PRECOMPUTE_S:7.3f} s   ours: "
        f"{relative(PAPER_PRECOMPUTE_S, precompute)}"
    )

    hidden = tuple(args.hidden)
    n_params = parameter_count(args.order, hidden)
    common = {
        "hidden_layer_sizes": hidden,
        "activation": "relu",
        "solver": "adam",
        "batch_size": args.batch_size,
        "random_state": args.seed,
    }
    models = {
        "DenseHeadClassifier": DenseHeadClassifier(**common, dtype="float32", device="cpu"),
        "MLPClassifier (baseline)": MLPClassifier(**common),
    }
    print(
        f"\nTraining until the accuracy on all {len(X_train)} training sequences reaches "
        f"{args.target:.0%}: hidden {hidden}, {n_params:,} parameters, Adam, batch "
        f"{args.batch_size}, checked every {args.check_every} rows (checks not timed)"
    )
    times = {}
    for name, model in models.items():
        seconds, epochs, accuracy = time_to_accuracy(
            model,
            X_train,
            data.y_train,
            args.target,
            args.check_every,
            args.max_epochs,
            args.seed,
        )
        reached = "" if accuracy >= args.target else f"  (NOT reached in {args.max_epochs} epochs)"
        print(
            f"  {name:<26s} {seconds:7.2f} s, {epochs:.2f} epochs, training accuracy "
            f"{accuracy:.4f}{reached}"
        )
        times[name] = seconds
    ours = times["DenseHeadClassifier"]
    print(f"  ours: {times['MLPClassifier (baseline)'] / ours:.2f}x the speed of MLPClassifier")
    print(
        f"  paper (GTX 1080)           {PAPER_TRAINING_S:7.2f} s   ours: "
        f"{relative(PAPER_TRAINING_S, ours)}"
    )
    total = precompute + ours
    paper_total = PAPER_PRECOMPUTE_S + PAPER_TRAINING_S
    print(
        f"\nTable 7 row, ff-LMU (pre-computed): precompute {precompute:.2f} s + training "
        f"{ours:.2f} s = {total:.2f} s (paper, GTX 1080: {PAPER_PRECOMPUTE_S:g} + "
        f"{PAPER_TRAINING_S:g} = {paper_total:g} s; ours {relative(paper_total, total)})"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
