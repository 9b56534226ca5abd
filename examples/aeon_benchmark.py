"""LMU against MiniRocket on aeon's bundled classification problems, with aeon's own tools.

    python examples/aeon_benchmark.py [--resamples 3] [--datasets UnitTest BasicMotions]
        [--classifiers LMUAeonClassifier]

Needs aeon (``pip install ".[aeon]"`` in the checkout, or ``pip install aeon``); reads only
the data sets that ship with aeon, so it runs without a network in a few seconds. Three problems:

- UnitTest: univariate, 24 points (a slice of Chinatown);
- BasicMotions: 6 channels of 100 points (accelerometer and gyroscope);
- JapaneseVowels: 12 channels, series of 7 to 29 points (unequal lengths).

:class:`lmu_sk.aeon.LMUAeonClassifier` takes JapaneseVowels as aeon holds it, a list of
``(n_channels, n_timepoints_i)`` arrays. aeon's ``MiniRocketClassifier`` needs equal
lengths, so it gets those series padded with zeros to the longest. Resample 0 is the
published train/test split; further resamples are drawn by aeon's
``stratified_resample_data``. Both classifiers use their defaults and one thread
(``n_jobs=1``); times include prediction, after one untimed fit that compiles the Numba
kernels of both.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

DATASETS = ("UnitTest", "BasicMotions", "JapaneseVowels")


def load(name: str):
    """Train and test split of one of aeon's bundled problems."""
    from aeon.datasets import load_basic_motions, load_japanese_vowels, load_unit_test

    loader = {
        "UnitTest": load_unit_test,
        "BasicMotions": load_basic_motions,
        "JapaneseVowels": load_japanese_vowels,
    }[name]
    X_train, y_train = loader(split="train")
    X_test, y_test = loader(split="test")
    return X_train, y_train, X_test, y_test


def pad(X, length: int) -> np.ndarray:
    """A list of ``(n_channels, n_i)`` series as one array, zeros after each series' end."""
    if isinstance(X, np.ndarray):
        return X
    out = np.zeros((len(X), X[0].shape[0], length))
    for i, series in enumerate(X):
        out[i, :, : series.shape[1]] = series
    return out


CLASSIFIERS = ("LMUAeonClassifier", "MiniRocketClassifier")


def classifiers(seed: int, names=CLASSIFIERS) -> dict:
    from aeon.classification.convolution_based import MiniRocketClassifier

    from lmu_sk.aeon import LMUAeonClassifier

    made = {
        "LMUAeonClassifier": LMUAeonClassifier(random_state=seed),
        "MiniRocketClassifier": MiniRocketClassifier(random_state=seed),
    }
    return {name: clf for name, clf in made.items() if name in names}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=3, help="train/test splits")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--classifiers", nargs="+", default=list(CLASSIFIERS), choices=CLASSIFIERS)
    args = parser.parse_args(argv)
    if args.resamples < 1:
        parser.error("--resamples must be at least 1")

    from aeon.benchmarking.resampling import stratified_resample_data

    # one untimed fit each: the first call compiles Numba kernels
    X, y, _, _ = load("UnitTest")
    for clf in classifiers(0, args.classifiers).values():
        clf.fit(X, y)

    results = {}  # (dataset, classifier) -> list of (accuracy, seconds)
    for name in args.datasets:
        data = load(name)
        for resample in range(args.resamples):
            X_train, y_train, X_test, y_test = (
                data if resample == 0 else stratified_resample_data(*data, random_state=resample)
            )
            for clf_name, clf in classifiers(resample, args.classifiers).items():
                train, test = X_train, X_test
                if clf_name == "MiniRocketClassifier" and isinstance(X_train, list):
                    length = max(x.shape[1] for x in [*X_train, *X_test])
                    train, test = pad(X_train, length), pad(X_test, length)
                start = time.perf_counter()
                clf.fit(train, y_train)
                accuracy = float(np.mean(clf.predict(test) == y_test))
                seconds = time.perf_counter() - start
                results.setdefault((name, clf_name), []).append((accuracy, seconds))

    print(f"accuracy over {args.resamples} resample(s), mean (min), and fit + predict time")
    print(f"{'data set':<16}{'classifier':<22}{'accuracy':>16}{'seconds':>10}")
    for (name, clf_name), runs in results.items():
        accuracy = np.array([a for a, _ in runs])
        seconds = np.mean([s for _, s in runs])
        print(
            f"{name:<16}{clf_name:<22}{accuracy.mean():>9.3f} ({accuracy.min():.3f})"
            f"{seconds:>10.2f}"
        )
    return results


if __name__ == "__main__":
    main()
