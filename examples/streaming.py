"""Online classification: digits read pixel by pixel by a model trained offline.

    python examples/streaming.py [--out figures/] [--no-plot]

An ``LMUClassifier`` is trained in precomputation mode on scikit-learn's 8x8 digits read
as 64-step sequences of pixels in a fixed random order (a small permuted-sequential MNIST).
To answer early as well, it also sees prefixes of random lengths of every training image,
left-padded with zeros to 64 steps: zeros leave the Delay Network state at zero, so the
final state of a padded prefix is the state a stream has after those pixels.

The trained model is then run as a recurrent network: one stream per held-out image, fed
one pixel at a time, with the class probabilities read after every pixel. After any
number of pixels the streams give the batch model's probabilities of that prefix.

For comparison the default ``LMUClassifier()`` (pooled multi-scale features and a ridge
head), trained on whole images only, is streamed the same way: any fitted model streams,
and its answer after ``t`` pixels is what it gives the first ``t`` pixels.

Writes ``streaming_digits.png``: the probabilities of a few images against the pixels seen,
and the accuracy of all held-out images against the pixels seen.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from lmu_sk import LMUClassifier
from lmu_sk.demo import load_permuted_digits


def plot(
    probabilities, accuracy, default_accuracy, y_test, classes, path: Path, n_examples: int = 3
) -> None:
    """Probabilities of the first ``n_examples`` images and the accuracy, against pixels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_pixels = len(accuracy)
    pixels = np.arange(1, n_pixels + 1)
    fig, axes = plt.subplots(
        1, n_examples + 1, figsize=(4 * (n_examples + 1), 3.9), layout="constrained"
    )
    for ax, i in zip(axes[:n_examples], range(n_examples), strict=True):
        for k, label in enumerate(classes):
            is_true = label == y_test[i]
            ax.plot(
                pixels,
                probabilities[:, i, k],
                lw=2.2 if is_true else 0.8,
                color="C3" if is_true else "0.6",
                zorder=3 if is_true else 2,
                label="probability of the true class" if is_true and i == 0 else None,
            )
        ax.set(title=f"held-out image {i} (class {y_test[i]})", xlabel="pixels seen", ylim=(0, 1))
    axes[0].plot([], [], lw=0.8, color="0.6", label="other classes")
    axes[0].set_ylabel("class probability")
    last = axes[-1]
    last.plot(pixels, accuracy, color="C0", label="test accuracy, trained on prefixes")
    last.plot(
        pixels,
        default_accuracy,
        color="C1",
        label="test accuracy, LMUClassifier() on whole images",
    )
    last.axhline(1 / len(classes), color="0.6", ls=":", label="chance")
    last.set(
        title=f"all {len(y_test)} held-out images",
        xlabel="pixels seen",
        ylabel="test accuracy",
        ylim=(0, 1),
    )
    # one legend for all panels, below them, where it covers no curve
    handles, labels = axes[0].get_legend_handles_labels()
    more_handles, more_labels = last.get_legend_handles_labels()
    fig.legend(
        handles + more_handles,
        labels + more_labels,
        loc="outside lower center",
        ncol=5,
        fontsize=9,
    )
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("figures"))
    parser.add_argument("--no-plot", action="store_true", help="skip the figure")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument(
        "--prefixes", type=int, default=8, help="random prefixes per training image"
    )
    args = parser.parse_args(argv)

    X, y = load_permuted_digits()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=0, stratify=y
    )
    rng = np.random.default_rng(0)
    padded = [X_train]
    for _ in range(args.prefixes):
        prefix = np.zeros_like(X_train)
        for row, seen in enumerate(rng.integers(1, 64, len(X_train))):
            prefix[row, -seen:] = X_train[row, :seen]
        padded.append(prefix)
    model = LMUClassifier(
        head="dense",
        order=64,
        theta=64,
        hidden_layer_sizes=(128,),
        max_iter=args.epochs,
        random_state=0,
    )
    start = time.perf_counter()
    with warnings.catch_warnings():  # a fixed number of epochs is the point here
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(np.concatenate(padded), np.tile(y_train, len(padded)))
    took = time.perf_counter() - start
    print(
        f"trained on {len(X_train)} images and {args.prefixes} prefixes of each: "
        f"{model.n_iter_} epochs in {took:.1f} s"
    )

    # online: one stream per held-out image, one pixel per update
    stream = model.stream(n_streams=len(X_test))
    n_pixels = X_test.shape[1]
    probabilities = np.empty((n_pixels, len(X_test), len(model.classes_)))
    start = time.perf_counter()
    for t in range(n_pixels):
        stream.update(X_test[:, t])
        probabilities[t] = stream.predict_proba()
    took = time.perf_counter() - start
    accuracy = (model.classes_[probabilities.argmax(axis=2)] == y_test).mean(axis=1)
    difference = max(
        np.abs(probabilities[seen - 1] - model.predict_proba(X_test[:, :seen])).max()
        for seen in (1, 16, 40, 64)
    )
    print(
        f"streamed {len(X_test)} images pixel by pixel: {took / n_pixels * 1e3:.2f} ms per "
        f"step for all of them"
    )
    for seen in (16, 32, 48, 64):
        print(f"  accuracy after {seen:2d} pixels: {accuracy[seen - 1]:.3f}")
    print(f"largest difference to the batch predict_proba of the prefixes: {difference:.1e}")

    # the default model, trained on whole images, streamed the same way
    default = LMUClassifier().fit(X_train, y_train)
    stream = default.stream(n_streams=len(X_test))
    default_accuracy = np.empty(n_pixels)
    default_agreement = 1.0
    for t in range(n_pixels):
        stream.update(X_test[:, t])
        labels = stream.predict()
        default_accuracy[t] = np.mean(labels == y_test)
        if t + 1 in (1, 16, 40, 64):
            batch = default.predict(X_test[:, : t + 1])
            default_agreement = min(default_agreement, np.mean(labels == batch))
    print(
        f"default LMUClassifier() ({default.head_kind_} head on pooled features), streamed: "
        + ", ".join(f"{default_accuracy[seen - 1]:.3f} after {seen}" for seen in (16, 32, 48, 64))
    )
    # pixels are integers, so states repeat exactly and some fall on a fitted threshold:
    # there a proportion pool counts by rounding, which streams and batch do differently
    print(f"labels equal to its batch predict of the prefixes: {default_agreement:.1%} or more")

    if not args.no_plot:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / "streaming_digits.png"
        plot(probabilities, accuracy, default_accuracy, y_test, model.classes_, path)
        print(f"wrote {path}")
    return {
        "accuracy": accuracy,
        "difference": difference,
        "default_accuracy": default_accuracy,
        "default_agreement": default_agreement,
    }


if __name__ == "__main__":
    main()
