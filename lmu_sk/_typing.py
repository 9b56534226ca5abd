"""Types of the public API's arguments and results, for annotations only."""

from __future__ import annotations

from typing import Any, Union

import numpy as np

__all__ = ["Result"]

#: What ``transform``, ``predict``, ``predict_proba`` and ``decision_function`` return: a
#: NumPy array for NumPy input. ``| Any`` admits what they return for other input or
#: parameters (a dask array for a dask array, a CuPy array with ``return_gpu_arrays=True``,
#: a list of arrays for sequences of different lengths with ``output='sequence'``), so that
#: the result can be assigned to an ``np.ndarray`` as typeshed does for results whose type
#: depends on argument values.
Result = Union[np.ndarray, Any]  # noqa: UP007 (evaluated at run time, where 3.10 has no |)
