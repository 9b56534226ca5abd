"""Early classification of GunPoint: decide as soon as the beginning of a series is conclusive.

    python examples/early_classification.py [--out figures/] [--no-plot] [--no-teaser]
        [--teaser-run FILE]

``LMUEarlyClassifier()`` is trained on aeon's GunPoint (50 training series of 150 points,
two classes: drawing a gun or pointing a finger; shipped with aeon, no download) and run as
a stream over the 150 test series, one point at a time: at each of its checkpoints the
cases not yet decided get that checkpoint's calibrated probabilities, and those whose most
probable class is sure enough are decided. aeon's ``TEASER`` (its defaults: WEASEL at 20
classification points, one-class SVMs deciding) is trained and scored beside it.

Writes ``early_classification.png``: against the fraction of the series seen, the share
of the test cases decided by then, and the accuracy of the labels given by then (decided
or not: the stream's latest estimate), for lmu_sk beside TEASER (whose undecided cases
have no label: its accuracy counts the decided ones); and prints the harmonic mean,
accuracy and earliness of both, and their fit times.

TEASER's defaults take minutes on GunPoint and do not depend on lmu_sk, so the
documentation's gallery reads them from a stored run: ``--teaser-run FILE`` takes TEASER's
test decisions and fit time from ``FILE`` (a JSON file written by this script, which
names the aeon version that made it) and, where ``FILE`` does not exist yet, runs TEASER
and writes it there. Without it TEASER runs every time.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np


def lmu_curves(model, X: np.ndarray, y: np.ndarray) -> dict:
    """The stream over ``X`` point by point: share decided and accuracy after each."""
    stream = model.stream(n_streams=len(X))
    n_steps = X.shape[1]
    decided, accuracy = np.empty(n_steps), np.empty(n_steps)
    for t in range(n_steps):
        stream.update(X[:, t])
        decided[t] = stream.decided.mean()
        accuracy[t] = np.mean(stream.predict() == y)
    return {"decided": decided, "accuracy": accuracy, "steps": stream.decision_steps}


def teaser_run(X_train, y_train, X_test) -> dict:
    """TEASER (aeon's defaults, one thread) trained on the training series: its labels and
    classification point (in steps) for every test series, and its fit time."""
    import aeon
    from aeon.classification.early_classification import TEASER

    teaser = TEASER(random_state=0, n_jobs=1)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        teaser.fit(X_train[:, None, :], y_train)
    took = time.process_time() - start
    labels, _ = teaser.predict(X_test[:, None, :])
    # the classification point of each decision (state_info's column 0 indexes them), as
    # aeon's own score reads it
    steps = np.asarray(teaser._classification_points)[teaser.get_state_info()[:, 0]]
    return {
        "aeon": aeon.__version__,
        "fit_cpu_seconds": round(took, 1),
        "labels": labels.tolist(),
        "steps": steps.tolist(),
    }


def stored_teaser_run(path: Path | None, X_train, y_train, X_test) -> tuple[dict, bool]:
    """TEASER's run read from ``path`` where it exists (and True); else run, written to
    ``path`` where one is given (and False)."""
    if path is not None and path.exists():
        run = json.loads(path.read_text())
        if len(run["labels"]) != len(X_test):
            raise SystemExit(f"{path} holds a TEASER run of another test set: delete it")
        return run, True
    run = teaser_run(X_train, y_train, X_test)
    if path is not None:  # one line per field
        fields = ",\n".join(
            f" {json.dumps(key)}: {json.dumps(value)}" for key, value in run.items()
        )
        path.write_text("{\n" + fields + "\n}\n")
    return run, False


def teaser_curves(labels: np.ndarray, steps: np.ndarray, y: np.ndarray, n_steps: int) -> dict:
    """TEASER's decisions (``labels`` given at ``steps``) over the test series: the share
    decided and the accuracy of the decided cases after each point."""
    seen = np.arange(1, n_steps + 1)[:, None]
    by_then = steps[None, :] <= seen
    right = (labels == y)[None, :] & by_then
    with np.errstate(invalid="ignore"):
        accuracy = right.sum(axis=1) / by_then.sum(axis=1)
    return {"decided": by_then.mean(axis=1), "accuracy": accuracy, "steps": steps}


def plot(curves: dict, n_steps: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fraction = np.arange(1, n_steps + 1) / n_steps
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.9), layout="constrained")
    styles = {"lmu_sk": {"color": "C0"}, "TEASER": {"color": "C1", "ls": "--"}}
    for name, curve in curves.items():
        axes[0].plot(fraction, curve["decided"], label=name, **styles[name])
        axes[1].plot(fraction, curve["accuracy"], label=name, **styles[name])
    axes[0].set(
        title="cases decided", xlabel="fraction of the series seen", ylabel="share", ylim=(0, 1.02)
    )
    axes[1].set(
        title="accuracy of the labels given by then",
        xlabel="fraction of the series seen",
        ylabel="test accuracy",
        ylim=(0.4, 1.02),
    )
    axes[1].axhline(0.5, color="0.6", ls=":", label="chance")
    axes[0].legend(loc="lower right")
    axes[1].legend(loc="lower right")
    fig.savefig(path, dpi=120)
    plt.close(fig)


def summary(curve: dict, y_pred: np.ndarray, y: np.ndarray, n_steps: int) -> tuple:
    accuracy = float(np.mean(y_pred == y))
    earliness = float(np.mean(curve["steps"] / n_steps))
    kept = 1.0 - earliness
    return 2 * accuracy * kept / (accuracy + kept), accuracy, earliness


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("figures"))
    parser.add_argument("--no-plot", action="store_true", help="skip the figure")
    parser.add_argument("--no-teaser", action="store_true", help="lmu_sk alone (quicker)")
    parser.add_argument(
        "--teaser-run",
        type=Path,
        help="TEASER's run stored in this JSON file (written there where it does not exist)",
    )
    args = parser.parse_args(argv)

    from aeon.datasets import load_gunpoint

    from lmu_sk import LMUEarlyClassifier

    X_train, y_train = load_gunpoint(split="train")
    X_test, y_test = load_gunpoint(split="test")
    X_train, X_test = X_train[:, 0], X_test[:, 0]  # one channel: (n_cases, 150)
    n_steps = X_train.shape[1]

    start = time.process_time()
    model = LMUEarlyClassifier().fit(X_train, y_train)
    took = time.process_time() - start
    print(
        f"lmu_sk: fitted in {took:.1f} s (CPU): {len(model.checkpoints_)} checkpoints, "
        f"decides at probability {model.threshold_:.3f} reached at {model.consecutive_} "
        "checkpoint(s) in a row"
    )
    curves = {"lmu_sk": lmu_curves(model, X_test, y_test)}
    decisions = model.decide(X_test)  # the same decisions, in batch
    assert (decisions.steps == curves["lmu_sk"]["steps"]).all()
    results = {"lmu_sk": summary(curves["lmu_sk"], decisions.labels, y_test, n_steps)}

    if not args.no_teaser:
        run, read = stored_teaser_run(args.teaser_run, X_train, y_train, X_test)
        stored = f", aeon {run['aeon']}" + (
            f", the run stored in {args.teaser_run.name}" if read else ""
        )
        print(f"TEASER: fitted in {run['fit_cpu_seconds']:.1f} s (CPU{stored})")
        labels = np.asarray(run["labels"]).astype(y_test.dtype)
        curves["TEASER"] = teaser_curves(labels, np.asarray(run["steps"]), y_test, n_steps)
        results["TEASER"] = summary(curves["TEASER"], labels, y_test, n_steps)

    print(f"\n{'':8s} {'harmonic mean':>14s} {'accuracy':>9s} {'earliness':>10s}")
    for name, (harmonic, accuracy, earliness) in results.items():
        print(f"{name:8s} {harmonic:14.3f} {accuracy:9.3f} {earliness:10.3f}")
    for fraction in (0.1, 0.2, 0.5):
        t = round(fraction * n_steps) - 1
        print(
            f"after {fraction:.0%} of the series: "
            + ", ".join(
                f"{name} {curve['decided'][t]:.0%} decided" for name, curve in curves.items()
            )
        )
    if not args.no_plot:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / "early_classification.png"
        plot(curves, n_steps, path)
        print(f"wrote {path}")
    return {"results": results, "curves": curves}


if __name__ == "__main__":
    main()
