"""Permuted sequential MNIST with LMUClassifier (the LMU papers' psMNIST).

    python examples/psmnist.py --data path/to/mnist            # the papers' model
    python examples/psmnist.py --data path/to/mnist --permutation-seed 201 --seed 1 \
        RECIPE                                   # the README's recipes on another permutation

The papers' model (ICML paper, Table 2: 98.49 % test accuracy) is the feed-forward LMU in
precomputation mode: DN of order 468 and theta 784 on the 784 permuted pixels, the final
state into one hidden layer of 346 ReLU units and a softmax, trained with Adam's defaults.
The DN features of all 70 000 images are computed once; the head trains on them, keeping the
weights of the epoch with the best accuracy on the 10 000 validation images. The pixel order
and the training/validation split come from ``--permutation-seed`` (50: the papers').

Every choice of a recipe is made on the validation accuracy, which the script prints; the
test accuracy is computed once, at the end, with the weights early stopping kept. With
``--n-heads`` or ``--extra-thetas`` the features are computed once and several heads (seeds
``seed``, ``seed + 1``, ...) train on them; their probabilities are averaged.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lmu_sk import DenseHeadClassifier, LMUClassifier, LMUFeatures
from lmu_sk.datasets import load_psmnist


def head_params(args: argparse.Namespace) -> dict:
    """The dense head's parameters from the command line."""
    return {
        "hidden_layer_sizes": tuple(args.hidden),
        "activation": "relu",
        "alpha": args.alpha,
        "batch_size": args.batch_size,
        "learning_rate": args.schedule,
        "learning_rate_init": args.lr,
        "max_iter": args.epochs,
        "early_stopping": True,
        "n_iter_no_change": args.patience,
        "dropout": args.dropout,
        "input_dropout": args.input_dropout,
        "random_state": args.seed,
        "verbose": not args.quiet,
        "device": args.device,
    }


def parameter_count(n_features: int, hidden: tuple[int, ...], n_classes: int = 10) -> int:
    """Weights and biases of a dense head with these layer sizes."""
    sizes = [n_features, *hidden, n_classes]
    return sum(sizes[k] * sizes[k + 1] + sizes[k + 1] for k in range(len(sizes) - 1))


def describe(args: argparse.Namespace, thetas: list[float]) -> str:
    """One line naming the model and its size."""
    n_features = args.order * len(thetas)
    params = parameter_count(n_features, tuple(args.hidden))
    windows = ", ".join(f"{theta:g}" for theta in thetas)
    return (
        f"DN order {args.order}, theta {windows} ({n_features} internal "
        f"variables); head {tuple(args.hidden)} ReLU, dropout {args.dropout}, input dropout "
        f"{args.input_dropout}, schedule {args.schedule}, {args.n_heads} head(s) of "
        f"{params:,} parameters ({args.n_heads * params:,} in all)"
    )


def fit_ensemble(args: argparse.Namespace, data) -> tuple[float, float]:
    """DN features of one or more windows, precomputed once; one or more heads on them."""
    thetas = [args.theta, *args.extra_thetas]
    start = time.perf_counter()
    transformers = [
        LMUFeatures(order=args.order, theta=theta, dtype="float32") for theta in thetas
    ]
    features = [
        np.hstack([t.fit(X).transform(X) for t in transformers])
        for X in (data.X_train, data.X_val, data.X_test)
    ]
    if args.scale:
        mean, std = features[0].mean(axis=0), features[0].std(axis=0)
        features = [(X - mean) / std for X in features]
    precompute = time.perf_counter() - start
    heads, seconds = [], []
    for k in range(args.n_heads):
        start = time.perf_counter()
        head = DenseHeadClassifier(**{**head_params(args), "random_state": args.seed + k})
        heads.append(head.fit(features[0], data.y_train, X_val=features[1], y_val=data.y_val))
        seconds.append(time.perf_counter() - start)

    def accuracy(probabilities: list[np.ndarray], y: np.ndarray) -> float:
        predicted = heads[0].classes_[np.mean(probabilities, axis=0).argmax(axis=1)]
        return float(np.mean(predicted == y))

    val = [head.predict_proba(features[1]) for head in heads]
    test = [head.predict_proba(features[2]) for head in heads]  # read once, at the end
    print(describe(args, thetas))
    print(f"DN features of all 70 000 sequences: {precompute:.2f} s")
    for k, head in enumerate(heads):
        print(
            f"head {k} (seed {args.seed + k}): {head.n_iter_} epochs, {seconds[k]:.1f} s; "
            f"validation accuracy {accuracy([val[k]], data.y_val):.4f}, test accuracy "
            f"{accuracy([test[k]], data.y_test):.4f}"
        )
    for k in range(2, args.n_heads):  # the smaller ensembles of the same run, for comparison
        print(
            f"heads 0-{k - 1} averaged: validation accuracy {accuracy(val[:k], data.y_val):.4f}, "
            f"test accuracy {accuracy(test[:k], data.y_test):.4f}"
        )
    val_accuracy, test_accuracy = accuracy(val, data.y_val), accuracy(test, data.y_test)
    print(f"head training: {sum(seconds):.1f} s")
    print(f"validation accuracy: {val_accuracy:.4f}")
    print(f"test accuracy: {test_accuracy:.4f}   (ICML paper, Table 2: 0.9849)")
    return val_accuracy, test_accuracy


def main(argv: list[str] | None = None) -> tuple[float, float]:
    """Train as the command line says; return the validation and test accuracies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="folder with the four MNIST .gz files")
    parser.add_argument(
        "--permutation-seed",
        type=int,
        default=50,
        help="seed of the pixel order and of the training/validation split (50: the papers')",
    )
    parser.add_argument("--order", type=int, default=468)
    parser.add_argument("--theta", type=float, default=784.0)
    parser.add_argument(
        "--extra-thetas",
        type=float,
        nargs="*",
        default=[],
        help="also DN features with these windows, concatenated (a frozen first layer)",
    )
    parser.add_argument("--hidden", type=int, nargs="*", default=[346])
    parser.add_argument(
        "--n-heads",
        type=int,
        default=1,
        help="train this many heads (seeds seed, seed+1, ...) on the same precomputed "
        "features and average their probabilities",
    )
    parser.add_argument("--epochs", type=int, default=100, help="at most this many")
    parser.add_argument("--patience", type=int, default=20)
    parser.add_argument("--dropout", type=float, default=0.0, help="on the hidden units")
    parser.add_argument(
        "--input-dropout", type=float, default=0.0, help="on the DN features, in training"
    )
    parser.add_argument("--alpha", type=float, default=0.0)
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's initial step size")
    parser.add_argument(
        "--schedule",
        choices=["constant", "plateau", "cosine"],
        default="constant",
        help="constant: stop at a plateau; plateau: lr / 10 there; cosine: decay over --epochs",
    )
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument(
        "--scale", action="store_true", help="standardize the DN features (the papers do not)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the (first) head")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    data = load_psmnist(args.data, permutation_seed=args.permutation_seed)
    print(
        f"psMNIST, permutation seed {args.permutation_seed}: {len(data.X_train)} train / "
        f"{len(data.X_val)} validation / {len(data.X_test)} test sequences of "
        f"{data.X_train.shape[1]} pixels"
    )
    if args.extra_thetas or args.n_heads > 1:
        return fit_ensemble(args, data)
    model = LMUClassifier(
        head="dense",
        order=args.order,
        theta=args.theta,
        scale_features=args.scale,
        **head_params(args),
    )
    start = time.perf_counter()
    model.fit(data.X_train, data.y_train, X_val=data.X_val, y_val=data.y_val)
    fit_time = time.perf_counter() - start

    start = time.perf_counter()
    model.features_.transform(data.X_train)
    precompute = time.perf_counter() - start
    val_accuracy = model.score(data.X_val, data.y_val)
    test_accuracy = model.score(data.X_test, data.y_test)  # read once, at the end
    print(f"{describe(args, [args.theta])}: {model.n_iter_} epochs")
    print(f"DN features of the 50 000 training sequences: {precompute:.2f} s")
    print(f"fit (features + head training): {fit_time:.1f} s")
    print(f"validation accuracy: {val_accuracy:.4f}")
    print(f"test accuracy: {test_accuracy:.4f}   (ICML paper, Table 2: 0.9849)")
    return val_accuracy, test_accuracy


if __name__ == "__main__":
    main()
