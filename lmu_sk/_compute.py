"""Former CPU driver of the features, now :mod:`lmu_sk.engine`; kept only for old imports."""

from __future__ import annotations

from .engine.constants import system as _system
from .engine.plan import block_steps

__all__ = ["_system", "block_length"]


def block_length(order: int) -> int:
    """Steps per block of the blocked GEMMs on the CPU (:func:`lmu_sk.engine.plan.block_steps`)."""
    return block_steps(order, None, "cpu")
