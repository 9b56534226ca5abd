"""Validation of per-sample weights: one finite, non-negative weight per sample."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._device import to_numpy

__all__ = ["check_sample_weight"]


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray | None:
    """Validate ``sample_weight`` for ``n_samples`` samples; return float64 weights or None.

    A number gives every sample that weight. Arrays (NumPy, CuPy, lists, pandas Series)
    must be 1-D with one finite, non-negative weight per sample, not all zero.

    Raises
    ------
    ValueError
        With a message naming ``sample_weight`` and what is wrong with it.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight)
    try:
        raw = to_numpy(sample_weight)
        # complex values cast to float64 would lose their imaginary parts with a warning
        is_complex = np.iscomplexobj(raw)
        weights = None if is_complex else np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight must hold numbers; got {sample_weight!r}.") from exc
    if is_complex:
        raise ValueError(
            "sample_weight must hold real numbers; got complex values. Pass their real "
            "parts (np.real(sample_weight)) or their magnitudes (np.abs(sample_weight))."
        )
    if weights.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-D, one weight per sample; got shape {weights.shape}."
        )
    if weights.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {weights.shape[0]} weights but X has {n_samples} samples."
        )
    if not np.isfinite(weights).all():
        raise ValueError("sample_weight contains NaN or infinity; weights must be finite.")
    if (weights < 0).any():
        raise ValueError(f"sample_weight must be non-negative; got a weight of {weights.min():g}.")
    if not weights.any():
        raise ValueError(
            "sample_weight must contain at least one non-zero weight; all weights are zero."
        )
    with np.errstate(over="ignore"):
        total = weights.sum()
    if not np.isfinite(total):
        raise ValueError(
            f"sample_weight sums beyond the largest float64 (weights up to {weights.max():.3g});"
            " divide the weights by a constant, e.g. their mean."
        )
    return weights
