"""Mackey-Glass: predict the series 15 steps ahead at every step (the LMU papers' task).

    python examples/mackey_glass.py                 # the papers' setting: order 40, theta 50
    python examples/mackey_glass.py --order 64 --theta 100 --hidden 128
    python examples/mackey_glass.py --out figures/  # also draws mackey_glass.png

Trains ``LMURegressor(feature_output='sequence')``: the all-states DN features of every
training sequence are computed once and a dense head maps the state at each step to the
value 15 steps later. Prints the test NRMSE (ICML paper, Table 3: 0.044); with ``--out``
draws the prediction of a test sequence against its target (needs matplotlib).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from lmu_sk import LMURegressor
from lmu_sk.datasets import mackey_glass_forecasting, nrmse


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--order", type=int, default=40)
    parser.add_argument("--theta", type=float, default=50.0)
    parser.add_argument("--hidden", type=int, nargs="*", default=[80])
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--sequences", type=int, default=128)
    parser.add_argument("--length", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for mackey_glass.png (none: no figure)"
    )
    args = parser.parse_args(argv)

    data = mackey_glass_forecasting(args.sequences, args.length, seed=args.seed)
    print(
        f"Mackey-Glass: {data.X_train.shape[0]} training and {data.X_test.shape[0]} test "
        f"sequences of {data.X_train.shape[1]} steps; target 15 steps ahead"
    )
    model = LMURegressor(
        order=args.order,
        theta=args.theta,
        feature_output="sequence",
        hidden_layer_sizes=tuple(args.hidden),
        batch_size=args.batch_size,
        learning_rate_init=args.lr,
        learning_rate="plateau",
        max_iter=args.epochs,
        early_stopping=True,
        n_iter_no_change=10,
        random_state=args.seed,
        verbose=False,
    )
    start = time.perf_counter()
    model.fit(data.X_train, data.y_train)
    took = time.perf_counter() - start
    n_params = sum(w.size for w in model.coefs_) + sum(b.size for b in model.intercepts_)
    prediction = model.predict(data.X_test)
    score = nrmse(data.y_test, prediction)
    print(
        f"LMURegressor(order={args.order}, theta={args.theta:g}, hidden={tuple(args.hidden)}): "
        f"{n_params} head parameters, {model.n_iter_} epochs in {took:.1f} s"
    )
    print(f"test NRMSE: {score:.4f}   (ICML paper, Table 3: 0.044)")
    if args.out is not None:
        path = plot_forecast(data.y_test[0], prediction[0], args.out)
        print(f"figure: {path}")
    return score


def plot_forecast(target: np.ndarray, prediction: np.ndarray, out: Path) -> Path:
    """The last 500 steps of one test sequence: the value 15 steps ahead and its forecast."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = np.arange(len(target))[-500:]
    fig, ax = plt.subplots(figsize=(8, 3), layout="constrained")
    ax.plot(steps, np.ravel(target)[-500:], label="value 15 steps ahead", linewidth=2)
    ax.plot(steps, np.ravel(prediction)[-500:], label="forecast", linewidth=1)
    ax.set_xlabel("step")
    ax.legend(loc="upper right", fontsize=9)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "mackey_glass.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


if __name__ == "__main__":
    main()
