"""The type-checked user script (``tests/typing/user_script.py``) runs as written.

``.ci/run`` checks it with pyright in basic mode (``[tool.pyright]`` in pyproject.toml);
this test keeps what it checks true to the API: every call in it must run and give the
shapes the script asserts.
"""

import runpy
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

SCRIPT = Path(__file__).resolve().parent / "typing" / "user_script.py"


def test_user_script_runs():
    namespace = runpy.run_path(str(SCRIPT))  # not as __main__: main() is called below
    with warnings.catch_warnings():
        # the dense heads stop after 5 epochs on purpose (a type check needs no convergence)
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = namespace["main"]()
    assert set(scores) == {"accuracy", "r2", "ridge", "dense"}
    assert all(np.isfinite(value) for value in scores.values())
    # the labels follow the sign of the first channel's mean: the ridge models learn it
    assert scores["accuracy"] > 0.9 and scores["ridge"] > 0.9


def test_fitted_attributes_are_declared_with_their_types():
    """Editors and type checkers read the fitted attributes' types from the class: pyright
    in basic mode reported errors on ``clf.classes_[0]`` and ``clf.alpha_ + 1.0``, which
    are read through the head (descriptors typed by what they return)."""
    import typing

    from lmu_sk import LMUClassifier, LMURegressor
    from lmu_sk.estimators import _FromHead

    for composite in (LMUClassifier, LMURegressor):
        hints = typing.get_type_hints(composite)
        for name in ("alpha_", "n_iter_", "loss_curve_", "coefs_"):
            assert typing.get_origin(hints[name]) is _FromHead, name
        for name in ("features_", "head_", "head_kind_", "order_", "n_features_in_"):
            assert name in hints, name
        assert hints["order_"] is int and hints["feature_scale_"] is np.ndarray
    hints = typing.get_type_hints(LMUClassifier)
    assert typing.get_args(hints["classes_"]) == (np.ndarray,)
    assert typing.get_args(hints["alpha_"]) == (float,)


def test_the_user_script_type_checks():
    """pyright (basic mode, the version ``.ci/run`` pins) finds no error in the script;
    skipped where pyright is not installed (``pip install ".[types]"``)."""
    import shutil
    import subprocess
    import sys

    import pytest

    pyright = shutil.which("pyright")
    if pyright is None:
        pytest.skip("pyright is not installed")
    result = subprocess.run(
        [pyright, "--pythonpath", sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=SCRIPT.parents[2],
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 errors" in result.stdout
