"""Grid search over Delay Network and head parameters, with the features cached on disk.

    python examples/grid_search.py

Searches order, theta and the hidden layer of an ``LMUClassifier`` on the bundled digits
read as permuted 64-step pixel sequences, with 3-fold cross-validation on two processes.
``memory`` caches the training features keyed on the data and the DN parameters, so the
candidates that differ only in head parameters reuse them instead of recomputing them.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from sklearn.model_selection import GridSearchCV, train_test_split

from lmu_sk import LMUClassifier
from lmu_sk.demo import load_permuted_digits


def main(argv: list[str] | None = None) -> float:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    X, y = load_permuted_digits()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, random_state=0, stratify=y
    )
    grid = {
        "order": [32, 64],
        "theta": [32.0, 64.0],
        "hidden_layer_sizes": [(64,), (128,)],
    }
    with tempfile.TemporaryDirectory() as cache:
        search = GridSearchCV(
            LMUClassifier(head="dense", memory=cache, tol=1e-3, random_state=0),
            grid,
            cv=3,
            n_jobs=2,
        )
        start = time.perf_counter()
        search.fit(X_train, y_train)
        took = time.perf_counter() - start
    print(f"{len(search.cv_results_['params'])} candidates x 3 folds in {took:.1f} s")
    for params, score in zip(
        search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=True
    ):
        print(f"  {score:.4f}  {params}")
    accuracy = search.score(X_test, y_test)
    print(f"best: {search.best_params_}, test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
