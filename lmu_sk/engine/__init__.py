"""The Delay Network engine: every output of every transformer, on the CPU and the GPU.

Layers, each using only those before it:

* :mod:`.constants`: the one cache of derived constants (impulse responses, block
  matrices, spectra, step matrices) per system, length, dtype and device;
* :mod:`.algebra`: the maps, written once against an array module ``xp`` (NumPy or CuPy);
* :mod:`.pooling`: what pooled features are (windows, input transforms, pools);
* :mod:`.plan`: the one planner (route, steps per block, FFT length, rows per chunk) with
  one cost table per device;
* :mod:`.run`: the one chunk loop, with one ragged convention (left-aligned, zero-padded
  sequences and their lengths).

The compiled loops it calls live below it, in :mod:`lmu_sk.kernels`. The engine imports
no estimator: the transformers call :func:`features`,
:func:`pooled_features` and :func:`sampled_states`.
"""

from __future__ import annotations

from .plan import METHODS, OUTPUTS
from .pooling import PooledSpec, WindowSpec
from .run import features, pooled_features, sampled_states

__all__ = [
    "METHODS",
    "OUTPUTS",
    "PooledSpec",
    "WindowSpec",
    "features",
    "pooled_features",
    "sampled_states",
]
