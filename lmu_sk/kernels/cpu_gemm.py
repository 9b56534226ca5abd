"""Former home of the block GEMM weights, now :func:`lmu_sk.engine.constants.block_matrix`."""

from __future__ import annotations

from ..engine.constants import block_matrix as block_weights

__all__ = ["block_weights"]
