"""Mackey-Glass: predict the series 15 steps ahead at every step (the LMU papers' task).

    python examples/mackey_glass.py                 # the papers' setting: order 40, theta 50
    python examples/mackey_glass.py --order 64 --theta 100 --hidden 128

Trains ``LMURegressor(feature_output='sequence')``: the all-states DN features of every
training sequence are computed once and a dense head maps the state at each step to the
value 15 steps later. Prints the test NRMSE (ICML paper, Table 3: 0.044).
"""

from __future__ import annotations

import argparse
import time

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
    return score


if __name__ == "__main__":
    main()
