"""Calibration of ``LMUClassifier()``'s probabilities: log loss and expected calibration error.

On every set in ``DATA_DIR`` (the layout of ``bench_tsc.py``), three sets of test-set
probabilities are compared:

- ``LMU``: ``LMUClassifier()`` defaults, whose ridge head turns its decision values into
  probabilities with a temperature fitted on the exact leave-one-out decision values of the
  training set (no data held out);
- ``LogisticRegression``: scikit-learn's ``LogisticRegression(max_iter=1000)`` (L2,
  ``C=1``) trained on the same standardized features (``features_``, ``feature_mean_``,
  ``feature_scale_`` of the fitted ``LMUClassifier``);
- ``MiniRocket``: aeon's ``MiniRocketClassifier``, whose ridge classifier gives one-hot
  probabilities (left out when aeon is not installed).

Log loss: the mean negative log probability of the true class, probabilities clipped to
``[1e-15, 1 - 1e-15]`` and renormalised (``bench_tsc.log_loss_clipped``). Expected
calibration error (ECE): the top-label one, over 15 equal-width bins of the largest
probability, ``sum_b |B_b| / n * |accuracy(B_b) - mean confidence(B_b)|``. Nothing is
timed.

    pip install ".[bench]"
    python benchmarks/bench_calibration.py DATA_DIR
    python benchmarks/bench_calibration.py DATA_DIR --sets Car ERing --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import bench_tsc  # the sets' loaders and the clipped log loss, from this folder
import numpy as np

N_BINS = 15
MODELS = ("LMU", "LogisticRegression", "MiniRocket")


def expected_calibration_error(y_true, proba: np.ndarray, classes, n_bins: int = N_BINS) -> float:
    """Top-label ECE: bins of equal width over the largest probability of each row.

    Parameters
    ----------
    y_true : sequence of labels
    proba : ndarray of shape (n_samples, n_classes)
    classes : sequence of the labels of ``proba``'s columns
    n_bins : int
        Bins ``[0, 1/n_bins], (1/n_bins, 2/n_bins], ...``.

    Returns
    -------
    float
        ``sum_b |B_b| / n * |accuracy(B_b) - mean confidence(B_b)|``.
    """
    proba = np.asarray(proba, dtype=np.float64)
    confidence = proba.max(axis=1)
    predicted = np.asarray(classes)[proba.argmax(axis=1)]
    correct = predicted == np.asarray(y_true)
    bins = np.clip(np.ceil(confidence * n_bins).astype(int) - 1, 0, n_bins - 1)
    error = 0.0
    for b in np.unique(bins):
        members = bins == b
        error += members.sum() * abs(correct[members].mean() - confidence[members].mean())
    return float(error / len(confidence))


def scores(y_true, proba: np.ndarray, classes) -> dict:
    """Accuracy, log loss and ECE of one model's test probabilities."""
    predicted = np.asarray(classes)[np.asarray(proba).argmax(axis=1)]
    return {
        "accuracy": float(np.mean(predicted == np.asarray(y_true))),
        "log_loss": bench_tsc.log_loss_clipped(y_true, proba, classes),
        "ece": expected_calibration_error(y_true, proba, classes),
    }


def run_set(paths: dict[str, Path], with_minirocket: bool, seed: int) -> dict:
    """The three models' scores on one set; a failure is recorded, never fatal."""
    from sklearn.linear_model import LogisticRegression

    from lmu_sk import LMUClassifier

    X, y, X_test, y_test = bench_tsc.load_set(paths)
    row: dict = {"n_classes": len(np.unique(y))}
    try:
        lmu = LMUClassifier(random_state=seed).fit(bench_tsc.for_lmu(X), y)
        test = bench_tsc.for_lmu(X_test)
        row["LMU"] = scores(y_test, lmu.predict_proba(test), lmu.classes_)

        def standardized(cases):
            return (lmu.features_.transform(cases) - lmu.feature_mean_) / lmu.feature_scale_

        logistic = LogisticRegression(max_iter=1000).fit(standardized(bench_tsc.for_lmu(X)), y)
        row["LogisticRegression"] = scores(
            y_test, logistic.predict_proba(standardized(test)), logistic.classes_
        )
    except Exception as error:  # a failure is a result of the benchmark
        row["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    if with_minirocket:
        try:
            from aeon.classification.convolution_based import MiniRocketClassifier

            n_steps = max(x.shape[-1] for x in (*X, *X_test))
            rocket = MiniRocketClassifier(random_state=seed, n_jobs=1)
            rocket.fit(bench_tsc.for_aeon(X, n_steps), y)
            proba = rocket.predict_proba(bench_tsc.for_aeon(X_test, n_steps))
            row["MiniRocket"] = scores(y_test, proba, rocket.classes_)
        except Exception as error:
            row["MiniRocket error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    return row


def summarise(rows: list[dict]) -> dict:
    """Means over the sets every model completed; sets where LMU's log loss is lower."""
    models = [m for m in MODELS if rows and all(m in row for row in rows)]
    done = [row for row in rows if all(m in row for m in models)]
    summary: dict = {"n_sets": len(done), "models": models}
    for m in models:
        for key in ("accuracy", "log_loss", "ece"):
            summary[f"{m} mean {key}"] = float(np.mean([row[m][key] for row in done]))
    if "LMU" in models and "LogisticRegression" in models:
        lower = sum(row["LMU"]["log_loss"] < row["LogisticRegression"]["log_loss"] for row in done)
        summary["LMU log loss below LogisticRegression's"] = int(lower)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "data_dir",
        metavar="DATA_DIR",
        help="folder of classification sets, or 'aeon': the held-out sets aeon ships "
        "(see bench_tsc.py)",
    )
    parser.add_argument("--sets", nargs="+", metavar="NAME", help="run only these sets")
    parser.add_argument("--json", metavar="OUT", help="save per-set rows and the summary")
    parser.add_argument("--seed", type=int, default=0, help="random_state of the models")
    args = parser.parse_args(argv)
    try:
        args.data_dir, sets = bench_tsc.classification_sets(args.data_dir)
    except (ValueError, bench_tsc.SetUnavailable) as error:
        parser.error(str(error))
    if args.sets:
        unknown = sorted(set(args.sets) - set(sets))
        if unknown:
            parser.error(f"unknown sets {unknown}; known: {sorted(sets)}")
        sets = {name: paths for name, paths in sets.items() if name in args.sets}
    try:
        import aeon  # noqa: F401

        with_minirocket = True
    except ImportError:
        with_minirocket = False
        print("MiniRocket: aeon is not installed, left out (pip install '.[bench]')")
    warnings.filterwarnings("ignore")
    print(f"{'set':30s} " + " ".join(f"{m[:12]:>22s}" for m in MODELS))
    print(f"{'':30s} " + " ".join(f"{'log loss':>12s} {'ECE':>9s}" for _ in MODELS))
    rows = []
    for name, paths in sets.items():
        row = {"set": name, **run_set(paths, with_minirocket, args.seed)}
        rows.append(row)
        cells = [
            f"{row[m]['log_loss']:12.4f} {row[m]['ece']:9.4f}" if m in row else f"{'-':>22s}"
            for m in MODELS
        ]
        print(f"{name:30s} " + " ".join(cells), flush=True)
        for key in ("error", "MiniRocket error"):
            if key in row:
                print(f"  {key}: {row[key]}")
    summary = summarise(rows)
    print(f"\nover the {summary['n_sets']} sets every model completed:")
    for m in summary["models"]:
        print(
            f"  {m:20s} mean accuracy {summary[f'{m} mean accuracy']:.4f}  "
            f"mean log loss {summary[f'{m} mean log_loss']:.4f}  "
            f"mean ECE {summary[f'{m} mean ece']:.4f}"
        )
    key = "LMU log loss below LogisticRegression's"
    if key in summary:
        met = summary[key] > summary["n_sets"] / 2
        print(
            f"  target: LMU's log loss below LogisticRegression's on most sets: "
            f"{summary[key]} of {summary['n_sets']}, {'met' if met else 'NOT met'}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
        print(f"rows saved to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
