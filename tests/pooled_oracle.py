"""Comparing pooled features with :func:`lmu_sk.reference.pooled`, the step-by-step oracle.

A count (a proportion, a run, a competition) compares a state with a threshold: where a
state lies within the rounding of a threshold the two may count it differently, so tests
first check with :func:`decided` that their thresholds leave every comparison clear by
``gap``, then compare with :func:`tolerances`: counts exact, 'mpv' within ``MPV_TOL`` of
the state scale (float32 sums of at most 1024 states: 1024 * 6e-8 = 6e-5) and the moments
within ``moment_tol`` of it.
"""

import dataclasses

import numpy as np

from lmu_sk import reference
from lmu_sk.engine.pooling import MOMENT_POOLS, THRESHOLD_POOLS

MPV_TOL = 1e-4
MOMENT_TOL = 1e-9


def state_scale(sequences, spec, biases, scales) -> float:
    """The largest state of any window (at least 1)."""
    extremes = dataclasses.replace(spec, pools=("max", "min"))
    values = reference.pooled(sequences, extremes, biases, scales)
    return max(float(np.abs(values).max()), 1.0)


def decided(sequences, spec, biases, scales, gap: float) -> bool:
    """No state within ``gap`` (of the scale) of a threshold: the oracle's counts do not
    change when every threshold moves by that much up or down."""
    exact = [b.astype(np.float64) for b in biases]
    counting = dataclasses.replace(spec, pools=("ppv", "lspv"))
    base = reference.pooled(sequences, counting, exact, scales)
    step = gap * state_scale(sequences, spec, exact, scales)
    for sign in (-1, 1):
        moved = [b + sign * step for b in exact]
        if not np.array_equal(reference.pooled(sequences, counting, moved, scales), base):
            return False
    return True


def tolerances(spec, scale: float, moment_tol: float = MOMENT_TOL) -> np.ndarray:
    """Per feature: counts exact, 'mpv' within MPV_TOL and moments within MOMENT_TOL of
    the state scale."""
    exact = 1e-12
    of = {"ppv": exact, "lspv": exact, "mpv": MPV_TOL * scale}
    of.update({name: moment_tol * scale for name in MOMENT_POOLS})
    per_state = [of[p] for p in THRESHOLD_POOLS if p in spec.pools for _ in range(spec.n_biases)]
    per_state += [of[p] for p in MOMENT_POOLS if p in spec.pools]
    parts = []
    for window in spec.windows:
        n = len(window.inputs) * window.order
        parts.append(np.tile(per_state, n))
        if "compete" in spec.pools:
            parts.append(np.full(2 * n, exact))
    return np.concatenate(parts)
