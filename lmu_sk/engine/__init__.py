"""The Delay Network engine: every output of every transformer, on the CPU and the GPU.

Layers, each using only those before it:

* :mod:`.constants`: the one cache of derived constants (impulse responses, block
  matrices, spectra, step matrices) per system, length, dtype and device;
* :mod:`.algebra`: the maps, written once against an array module ``xp`` (NumPy or CuPy);
* :mod:`.pooling`: what pooled features are (windows, input transforms, pools);
* :mod:`.plan`: the one planner (route, steps per block, FFT length, rows per chunk) with
  one cost table per device;
* :mod:`.run`: the one chunk loop, with one ragged convention (left-aligned, zero-padded
  sequences and their lengths);
* :mod:`.stream`: the step mode, a carried state (Delay Network states, running sums and
  maxima, the pools) advanced by a step or a chunk of steps with the same maps, constants
  and kernels, for the streams.

The compiled loops it calls live below it, in :mod:`lmu_sk.kernels`. The engine imports
no estimator: the transformers call :func:`features`, :func:`pooled_features` and
:func:`sampled_states`, the streams :class:`CarriedDN` and :class:`CarriedPooledFeatures`.
"""

from __future__ import annotations

from .plan import METHODS, OUTPUTS
from .pooling import PooledSpec, WindowSpec
from .run import features, pooled_features, sampled_states
from .stream import CarriedDN, CarriedPooledFeatures

__all__ = [
    "METHODS",
    "OUTPUTS",
    "CarriedDN",
    "CarriedPooledFeatures",
    "PooledSpec",
    "WindowSpec",
    "features",
    "pooled_features",
    "sampled_states",
]
