"""The package's main job on an embedded default: digits as permuted pixel sequences.

scikit-learn's bundled 8x8 digits (1 797 images) are read as 64-step sequences of pixels in
a fixed random order (a small permuted-sequential MNIST), turned into Delay Network
features in one matrix product and classified by a dense head trained on them.
"""

from __future__ import annotations

import argparse
import numbers
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from .estimators import LMUClassifier
from .features import LMUFeatures


def load_permuted_digits(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Digits as ``(1797, 64)`` pixel sequences in a fixed random order, scaled to [0, 1].

    ``seed`` (an integer in ``[0, 2**32)``) fixes the order; a ValueError or TypeError
    names anything else (``None`` would give another order at every call).
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer in [0, 2**32) fixing the order; got {seed!r}.")
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2**32); got {seed}.")
    pixels, labels = load_digits(return_X_y=True)
    order = np.random.RandomState(seed).permutation(64)
    return (np.asarray(pixels)[:, order] / 16.0).astype(np.float32), np.asarray(labels)


def main(argv: list[str] | None = None) -> int:
    """Run the demo and print what it computed and how long it took."""
    argparse.ArgumentParser(
        prog="python -m lmu_sk",
        description="Train an LMU classifier on scikit-learn's bundled digits read as "
        "permuted 64-step pixel sequences (no download) and print its test accuracy. "
        "The feature tool is 'lmu-sk features --help'.",
    ).parse_args(argv)
    X, y = load_permuted_digits()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=0, stratify=y
    )
    print(f"permuted-pixel digits: {X.shape[0]} sequences of {X.shape[1]} steps, 10 classes")

    start = time.perf_counter()
    features = LMUFeatures(order=64, theta=64).fit_transform(X)
    took = time.perf_counter() - start
    print(f"LMUFeatures(order=64, theta=64): features {features.shape} in {took * 1e3:.1f} ms")

    model = LMUClassifier(
        order=64, theta=64, head="dense", hidden_layer_sizes=(128,), random_state=0
    )
    start = time.perf_counter()
    model.fit(X_train, y_train)
    took = time.perf_counter() - start
    accuracy = model.score(X_test, y_test)
    print(
        f"LMUClassifier(order=64, theta=64, head='dense', hidden_layer_sizes=(128,)): trained "
        f"{model.n_iter_} epochs on {len(X_train)} sequences in {took:.2f} s"
    )
    print(f"test accuracy on {len(X_test)} held-out sequences: {accuracy:.4f}")
    return 0
