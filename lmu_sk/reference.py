"""The reference recurrence: readable, slow by design, and the oracle for every fast path.

Use it to check results: ``dn_states(X, order, theta)`` runs
``m_t = Abar m_{t-1} + Bbar u_t`` step by step in float64, vectorized over samples and
channels only.
"""

from __future__ import annotations

import numpy as np

from .dn import discrete_system

__all__ = ["dn_states", "pooled", "recurrence"]


def recurrence(U: np.ndarray, Abar: np.ndarray, Bbar: np.ndarray, output: str = "final"):
    """Run the Delay Network recurrence over the time axis of ``U``.

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_channels)
        Inputs; every channel drives its own copy of the Delay Network.
    Abar : ndarray of shape (order, order)
    Bbar : ndarray of shape (order,)
    output : {'final', 'sequence'}
        Return only the state after the last step, or the state after every step.

    Returns
    -------
    states : ndarray
        ``(n_samples, n_channels * order)`` for 'final' and
        ``(n_samples, n_steps, n_channels * order)`` for 'sequence'; feature
        ``k * order + i`` is state ``i`` of channel ``k``. Always float64.
    """
    _check_output(output)
    U = np.asarray(U, dtype=np.float64)
    if U.ndim != 3:
        raise ValueError(f"U must be 3-D (n_samples, n_steps, n_channels); got shape {U.shape}.")
    n_samples, n_steps, n_channels = U.shape
    order = Bbar.shape[0]
    m = np.zeros((n_samples, n_channels, order))
    # every state for 'sequence'; none (an empty array) for 'final'
    states = np.zeros((n_samples, n_steps if output == "sequence" else 0, n_channels * order))
    for t in range(n_steps):
        m = m @ Abar.T + U[:, t, :, None] * Bbar
        if output == "sequence":
            states[:, t] = m.reshape(n_samples, n_channels * order)
    # (the width spelled out: -1 cannot be inferred for no samples)
    return states if output == "sequence" else m.reshape(n_samples, n_channels * order)


def dn_states(
    X,
    order: int,
    theta: float,
    discretizer: str = "zoh",
    output: str = "final",
):
    """Delay Network states of ``X`` by the plain recurrence.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_steps) or (n_samples, n_steps, n_channels), or a
        list of such sequences of different lengths (each ``(n_steps_i,)`` or
        ``(n_steps_i, n_channels)``)
    order : int
    theta : float
    discretizer : {'zoh', 'euler'}
    output : {'final', 'sequence'}

    Returns
    -------
    states : ndarray, or a list of arrays for a list of sequences with ``output='sequence'``
        See :func:`recurrence`.
    """
    _check_output(output)
    Abar, Bbar = discrete_system(order, theta, discretizer)
    if isinstance(X, (list, tuple)):
        if not X:
            raise ValueError(
                "X is an empty list: give at least one sequence, (n_steps,) or (n_steps, "
                "n_channels)."
            )
        results = []
        channels = None
        for index, seq in enumerate(X):
            seq = _real(seq, f"X[{index}]", (1, 2), "(n_steps,) or (n_steps, n_channels)")
            seq = seq.reshape(1, seq.shape[0], -1)
            channels = seq.shape[2] if channels is None else channels
            if seq.shape[2] != channels:
                raise ValueError(
                    f"X[{index}] has {seq.shape[2]} channel(s) but X[0] has {channels}: "
                    "every sequence needs the same channels."
                )
            results.append(recurrence(seq, Abar, Bbar, output)[0])
        return results if output == "sequence" else np.stack(results)
    X = _real(X, "X", (2, 3), "(n_samples, n_steps) or (n_samples, n_steps, n_channels)")
    if X.ndim == 2:
        X = X[:, :, None]
    return recurrence(X, Abar, Bbar, output)


def _check_output(output) -> None:
    if not (isinstance(output, str) and output in ("final", "sequence")):
        raise ValueError(
            f"output must be 'final' or 'sequence'; got {output!r} (LMUFeatures' 'mean' "
            "and 'max' are the mean and the maximum over time of the 'sequence' states)."
        )


def _real(X, name: str, ndims: tuple[int, int], shapes: str) -> np.ndarray:
    """``X`` as a float64 array of one of the ``ndims``, with at least one step, real and
    finite; a ValueError naming ``name`` otherwise."""
    array = np.asarray(X)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise ValueError(f"{name} must hold numbers; got {type(X).__name__} of {array.dtype}.")
    if np.iscomplexobj(array):
        raise ValueError(
            f"{name} is complex: the Delay Network takes real inputs (pass the real and "
            "imaginary parts as two channels)."
        )
    if array.ndim not in ndims:
        raise ValueError(f"{name} must have the shape {shapes}; got shape {array.shape}.")
    if array.shape[ndims[0] - 1] == 0:
        raise ValueError(f"{name} has no steps (shape {array.shape}).")
    array = array.astype(np.float64)
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds NaN or infinite values.")
    return array


def _inputs(x: np.ndarray, transforms) -> np.ndarray:
    """The transforms of one sequence ``x`` of shape (n, n_channels), transform-major."""
    n = len(x)
    made = []
    for name in transforms:
        if name == "series":
            made.append(x)
        elif name == "difference":
            made.append(np.vstack([np.zeros((1, x.shape[1])), np.diff(x, axis=0)]))
        elif name == "cumsum":
            made.append(np.cumsum(x - x.mean(axis=0), axis=0) / np.sqrt(n))
        else:
            raise ValueError(f"Unknown transform {name!r}.")
    return np.concatenate(made, axis=1)


def _block_means(u: np.ndarray, stride: int) -> np.ndarray:
    """Means of consecutive blocks of ``stride`` steps; the last one of its own steps."""
    return np.stack([u[a : a + stride].mean(axis=0) for a in range(0, len(u), stride)])


def _longest_run(above: np.ndarray) -> np.ndarray:
    """Longest run of consecutive ``True`` along axis 0."""
    run = np.zeros(above.shape[1:])
    best = np.zeros(above.shape[1:])
    for hit in above:
        run = (run + 1) * hit
        best = np.maximum(best, run)
    return best


#: The 'compete' pools' tie: the largest of a window's scaled states is the first within this
#: of the largest value, the smallest the first within this of the smallest. States held
#: by a constant stretch of input are equal in exact arithmetic (the higher Legendre
#: coefficients of a constant are 0): without a tie their order would be that of rounding
#: noise, which differs from one route (CPU, GPU, float32, float64) to another.
COMPETE_TIE = 1e-4


def first_within_tie(scaled: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """The first index along ``axis`` within :data:`COMPETE_TIE` of the largest value,
    and the first within it of the smallest (``argmax`` and ``argmin`` with ties)."""
    top = (scaled >= scaled.max(axis=axis, keepdims=True) - COMPETE_TIE).argmax(axis=axis)
    bottom = (scaled <= scaled.min(axis=axis, keepdims=True) + COMPETE_TIE).argmax(axis=axis)
    return top, bottom


def pooled(sequences, spec, biases, scales, mixing=None) -> np.ndarray:
    """Pooled Delay Network features by the plain recurrence, one sequence at a time.

    Parameters
    ----------
    sequences : list of ndarray of shape (n_steps_i, n_channels)
    spec : lmu_sk.engine.pooling.PooledSpec
        Windows, transforms, pools and thresholds per state.
    biases : list of ndarray of shape (n_inputs_w, order_w, n_biases)
        The thresholds of every window's states.
    scales : list of ndarray of shape (n_inputs_w, order_w)
        The scales of the ``'compete'`` pools.
    mixing : ndarray of shape (n_channels, n_read), optional
        The channels the windows read as combinations of the sequences' (a fitted
        ``LMUPooledFeatures``' ``mixing_``); the sequences' own channels by default.

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64
        Per window: for every input and state the threshold pools ('ppv', 'mpv', 'lspv',
        each at every threshold) and the moments ('mean', 'max', 'min') that ``spec.pools``
        names; then, with 'compete', for every input the proportions of steps each state
        is the largest, then the smallest, of its scaled states (the first within
        :data:`COMPETE_TIE` of the largest, of the smallest).
    """
    rows = []
    for x in sequences:
        x = np.asarray(x, dtype=np.float64)
        if mixing is not None:
            x = x @ np.asarray(mixing, dtype=np.float64)
        inputs = _inputs(x, spec.transforms)
        features = []
        for window, b, scale in zip(spec.windows, biases, scales, strict=True):
            u = _block_means(inputs[:, list(window.inputs)], window.stride)
            n = len(u)
            Abar, Bbar = discrete_system(window.order, window.theta, spec.discretizer)
            m = recurrence(u[None], Abar, Bbar, "sequence")[0]
            m = m.reshape(n, len(window.inputs), window.order)  # (t, input, state)
            above = m[..., None] > b[None]  # (t, input, state, K)
            per_state = []
            if "ppv" in spec.pools:
                per_state.append(above.mean(axis=0))
            if "mpv" in spec.pools:
                excess = np.where(above, m[..., None] - b[None], 0.0).sum(axis=0)
                count = above.sum(axis=0)
                per_state.append(np.where(count > 0, excess / np.maximum(count, 1), 0.0))
            if "lspv" in spec.pools:
                per_state.append(_longest_run(above) / n)
            for name, pool in (("mean", np.mean), ("max", np.max), ("min", np.min)):
                if name in spec.pools:
                    per_state.append(pool(m, axis=0)[..., None])
            if per_state:
                features.append(np.concatenate(per_state, axis=-1).ravel())
            if "compete" in spec.pools:
                scaled = m * scale[None]
                d = window.order
                top, bottom = first_within_tie(scaled)
                wins = np.stack([(top == i).mean(axis=0) for i in range(d)])
                loses = np.stack([(bottom == i).mean(axis=0) for i in range(d)])
                features.append(np.concatenate([wins.T, loses.T], axis=1).ravel())
        rows.append(np.concatenate(features))
    return np.stack(rows)
