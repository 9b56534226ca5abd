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
