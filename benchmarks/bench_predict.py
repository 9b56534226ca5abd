"""Cost of batch-invariant prediction: float64 prediction of a float32 model.

    python benchmarks/bench_predict.py [--n-samples 4000]

``LMUClassifier.predict_proba`` computes features and head in float64 whatever the training
dtype, so that a row's output does not depend on the rows predicted with it. The baseline
is the same model predicted in its float32 training dtype (features, scaling and forward
pass), measured in the same run; psMNIST's shape (784 steps, order 468, 346 ReLU units).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import best_time, report

from lmu_sk import LMUClassifier
from lmu_sk.neural.network import forward_pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=4000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    X = rng.random((args.n_samples, 784), dtype=np.float32)
    y = np.arange(args.n_samples) % 10
    model = LMUClassifier(
        order=468, theta=784, head="dense", hidden_layer_sizes=(346,), max_iter=1, device="cpu"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    coefs = [c.astype(np.float32) for c in model.coefs_]
    intercepts = [b.astype(np.float32) for b in model.intercepts_]

    def float32_prediction():
        F = model._scale(model.features_._transform(X, False, dtype=np.float32))
        return forward_pass(F, coefs, intercepts, model.activation, model.out_activation_)

    print(f"predict_proba of {args.n_samples} x 784 steps, order 468, head (346,):")
    baseline = report(
        "float32 features and head (baseline)", len(X), best_time(float32_prediction)
    )
    report(
        "LMUClassifier.predict_proba (float64)",
        len(X),
        best_time(lambda: model.predict_proba(X)),
        baseline,
    )


if __name__ == "__main__":
    main()
