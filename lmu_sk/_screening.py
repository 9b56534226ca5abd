"""Which channels of a multichannel series say something of the target: F statistics per
feature, pooled per channel, and the choice of channels they support.

A feature's F statistic is the one-way analysis of variance's (between-class over
within-class variance) for class labels, and ``r^2 (n - 2) / (1 - r^2)`` (the regression
on it) for a continuous target (integer-valued or not: the caller says which). A
channel's score is the largest statistic among its features. The channels kept are
those whose score is significant at ``FAMILY_LEVEL`` after a Bonferroni correction over
every feature screened, the highest first and at most ``max_channels`` of them; when none
is, the ``max_channels`` highest.
"""

from __future__ import annotations

import numpy as np
import scipy.stats
from sklearn.utils.multiclass import type_of_target

__all__ = ["FAMILY_LEVEL", "channel_scores", "choose_channels", "f_statistics", "unscreenable"]

# the chance that some pure-noise channel is kept, over all the features screened
FAMILY_LEVEL = 0.01
# values within this many units of float64 rounding of their magnitude are one value
_CONSTANT_ULPS = 64


def _constant_columns(F: np.ndarray) -> np.ndarray:
    """The columns of ``F`` whose values are one value to rounding (their centred values
    are rounding, not spread)."""
    if not F.shape[0]:
        return np.ones(F.shape[1], dtype=bool)
    spread = F.max(axis=0) - F.min(axis=0)
    return spread <= _CONSTANT_ULPS * np.finfo(np.float64).eps * np.abs(F).max(axis=0)


def _unique_numbers(y) -> bool:
    """Whether ``y`` holds numbers of which no two are equal: read as labels, every
    sequence would be a class of its own, which no analysis of variance can screen."""
    y = np.asarray(y)
    return y.dtype.kind in "biuf" and y.size > 1 and len(np.unique(y)) == y.size


def _reads_continuous(y, continuous: bool | None) -> bool:
    """Whether the target ``y`` is read as continuous: ``continuous`` where given, else
    where scikit-learn's ``type_of_target`` says so or its numbers are all different."""
    if continuous is not None:
        return continuous
    return type_of_target(y) == "continuous" or _unique_numbers(y)


def f_statistics(
    F: np.ndarray, y: np.ndarray, continuous: bool | None = None
) -> tuple[np.ndarray, int, int]:
    """F statistic of every column of ``F`` against the target ``y``, and its degrees of
    freedom ``(df_between, df_within)``.

    Class labels get the one-way analysis of variance; a continuous target the squared
    correlation's statistic with ``(1, n - 2)`` degrees of freedom, whatever its scale.
    ``continuous``: which ``y`` is; ``None`` reads it from ``y`` (continuous where
    :func:`~sklearn.utils.multiclass.type_of_target` says 'continuous', or where its
    numbers are all different; other integers are labels). A constant column scores 0.
    """
    F = np.asarray(F, dtype=np.float64)
    n = F.shape[0]
    constant = _constant_columns(F)
    centred = F - F.mean(axis=0)
    centred[:, constant] = 0.0  # (their rounding is no spread)
    if _reads_continuous(y, continuous):
        t = np.asarray(y, dtype=np.float64)
        t = t - t.mean()
        # r^2 does not depend on the scales: divided by the largest values, no product
        # under- or overflows (a target of 1e-200 scored every channel 0, one of 1e200 NaN)
        t /= max(float(np.max(np.abs(t))), np.finfo(np.float64).tiny) if t.size else 1.0
        largest = np.abs(centred).max(axis=0) if n else np.zeros(F.shape[1])
        centred /= np.where(largest > 0, largest, 1.0)
        sxx = np.einsum("ij,ij->j", centred, centred)
        sxy = t @ centred
        denominator = sxx * float(t @ t)
        r2 = np.divide(sxy**2, denominator, out=np.zeros_like(sxx), where=denominator > 0)
        r2 = np.minimum(r2, 1.0)
        df_within = max(n - 2, 1)
        with np.errstate(divide="ignore"):
            stat = np.where(r2 < 1.0, r2 * df_within / (1.0 - r2), np.inf)
        return stat, 1, df_within
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    k = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    # each class's rows summed as one product with the classes' indicators (np.add.at,
    # row by row, took seven times as long on 200 rows of 60 000 columns)
    indicators = np.zeros((k, n))
    indicators[codes, np.arange(n)] = 1.0
    means = indicators @ centred
    means /= counts[:, None]
    between = counts @ (means * means)
    total = np.einsum("ij,ij->j", centred, centred)
    within = total - between
    df_between, df_within = max(k - 1, 1), max(n - k, 1)
    # a spread within the classes of the total's rounding is none
    exact = within <= _CONSTANT_ULPS * np.finfo(np.float64).eps * total
    scale = np.where(exact, 0.0, within) / df_within
    stat = np.divide(between / df_between, scale, out=np.zeros_like(between), where=scale > 0)
    # a column that separates the classes exactly (no spread within them) scores inf
    stat[exact & (between > 0)] = np.inf
    return stat, df_between, df_within


def unscreenable(y: np.ndarray, continuous: bool | None = None) -> str | None:
    """Why the target ``y`` (one column, or several) cannot tell channels apart, or
    ``None`` where it can: a constant target, one class, or as many classes as samples
    (no spread within a class to compare with). ``continuous`` as for
    :func:`f_statistics`."""
    y = np.asarray(y)
    outputs = [y] if y.ndim == 1 else [y[:, j] for j in range(y.shape[1])]
    reasons = []
    for target in outputs:
        if _reads_continuous(target, continuous):
            t = np.asarray(target, dtype=np.float64)
            reasons.append("is constant" if t.size and np.ptp(t) == 0 else None)
            continue
        k = len(np.unique(target))
        if k < 2:
            reasons.append("has one class")
        elif k == len(target):
            reasons.append("gives every sequence a class of its own")
        else:
            reasons.append(None)
    if any(reason is None for reason in reasons):
        return None
    return reasons[0]


def channel_scores(
    F: np.ndarray,
    channel_of: np.ndarray,
    n_channels: int,
    y: np.ndarray,
    continuous: bool | None = None,
) -> tuple[np.ndarray, float]:
    """Every channel's score (the largest F statistic of its features, columns of ``F``
    whose channel is ``channel_of``) and the score a channel must exceed to count as
    significant.

    ``y`` of shape ``(n_samples, n_outputs)`` (several targets): a feature's statistic is
    its largest over the outputs, and the correction counts every pair of feature and
    output (the outputs' degrees of freedom may differ: each statistic is compared on the
    scale of the first output's, through its p-value). ``continuous`` as for
    :func:`f_statistics`.
    """
    y = np.asarray(y)
    outputs = [y] if y.ndim == 1 else [y[:, j] for j in range(y.shape[1])]
    stat, df_between, df_within = f_statistics(F, outputs[0], continuous)
    for target in outputs[1:]:
        other, df_b, df_w = f_statistics(F, target, continuous)
        if (df_b, df_w) != (df_between, df_within):  # the same p-value on the first's scale
            other = scipy.stats.f.isf(scipy.stats.f.sf(other, df_b, df_w), df_between, df_within)
        stat = np.maximum(stat, other)
    scores = np.zeros(n_channels)
    np.maximum.at(scores, np.asarray(channel_of, dtype=np.intp), stat)
    level = FAMILY_LEVEL / max(F.shape[1] * len(outputs), 1)
    return scores, float(scipy.stats.f.isf(level, df_between, df_within))


def choose_channels(scores: np.ndarray, threshold: float, max_channels: int) -> np.ndarray:
    """The channels kept, ascending: the significant ones (``scores > threshold``), the
    highest ``max_channels`` of them, or the ``max_channels`` highest when none is."""
    ranked = np.argsort(-scores, kind="stable")
    n_significant = int(np.sum(scores > threshold))
    n_kept = min(max_channels, n_significant) if n_significant else max_channels
    return np.sort(ranked[:n_kept])
