"""The decision rule of early classification: when a case's prediction becomes final.

A case is seen step by step. At each *checkpoint* (a number of steps seen) a case not yet
decided gets the calibrated class probabilities of the model of that checkpoint; the rule
decides it at the first checkpoint where its most probable class has a probability of at
least ``threshold`` at ``consecutive`` checkpoints in a row, the same class each time. A
decided case keeps its label, probabilities and step; a case still undecided when its
series ends (or at the training length) is decided there by the model of whole series.

:class:`Decisions` holds the decisions of a group of cases; its :meth:`Decisions.advance`
is the one step of the rule, used online by the streams, in batch by the estimators and,
with a leading axis of candidate thresholds, by :func:`choose_rule`, which learns the rule
from leave-one-out probabilities of the training series.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CONSECUTIVE", "Decisions", "choose_rule", "harmonic_mean", "rule_score"]

#: The numbers of consecutive agreeing checkpoints :func:`choose_rule` tries.
CONSECUTIVE = (1, 2, 3, 4)
#: At most this many candidate thresholds: quantiles of the training probabilities.
MAX_THRESHOLDS = 1024


def harmonic_mean(accuracy, earliness):
    """The harmonic mean of accuracy and ``1 - earliness``, the measure of early
    classification (TEASER, aeon): ``2 a (1 - e) / (a + 1 - e)``, 0 where both are 0.

    Parameters
    ----------
    accuracy, earliness : float or array-like
        Accuracy, and the mean fraction of the series seen when deciding.

    Returns
    -------
    float or ndarray
    """
    a = np.asarray(accuracy, dtype=np.float64)
    kept = 1.0 - np.asarray(earliness, dtype=np.float64)
    total = a + kept
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, 2.0 * a * kept / np.where(total > 0, total, 1.0), 0.0)
    return float(out) if out.ndim == 0 else out


def rule_score(accuracy, earliness, cost: float | None):
    """What :func:`choose_rule` maximises: the harmonic mean for ``cost=None``, else minus
    ``(1 - accuracy) + cost * earliness``."""
    if cost is None:
        return harmonic_mean(accuracy, earliness)
    return -(1.0 - np.asarray(accuracy)) - cost * np.asarray(earliness)


class Decisions:
    """The decisions of ``n_cases`` cases over ``n_classes`` classes, with any leading axes
    (``shape``) of variants decided side by side (the candidate thresholds of
    :func:`choose_rule`).

    Attributes
    ----------
    decided : bool ndarray of shape ``shape + (n_cases,)``
    label : int ndarray
        Index of the class decided, or of the latest estimate while undecided (-1 before
        any).
    proba : float ndarray of shape ``shape + (n_cases, n_classes)`` or None
        The probabilities decided, or the latest ones while undecided (None unless
        ``keep_proba``).
    step : int ndarray
        The steps seen when decided, -1 while undecided.
    run : int ndarray
        Consecutive checkpoints so far at which the case's most probable class reached the
        threshold, the same class each time.
    """

    def __init__(
        self,
        n_cases: int,
        n_classes: int,
        shape: tuple[int, ...] = (),
        prior=None,
        keep_proba: bool = True,
    ):
        full = (*shape, n_cases)
        self.decided = np.zeros(full, dtype=bool)
        self.label = np.full(full, -1, dtype=np.int64)
        self.proba = None
        if keep_proba:  # (the rule's search needs the labels only)
            self.proba = np.empty((*full, n_classes))
            self.proba[...] = np.nan if prior is None else np.asarray(prior, dtype=np.float64)
        if prior is not None:
            self.label[...] = int(np.argmax(prior))
        self.step = np.full(full, -1, dtype=np.int64)
        self.run = np.zeros(full, dtype=np.int64)

    def advance(self, proba, active, step: int, threshold, consecutive: int) -> np.ndarray:
        """One checkpoint of the rule: the cases ``active`` (reached and undecided, bool
        broadcastable to the cases) get ``proba`` ``(n_cases, n_classes)``; returns those
        decided now.

        ``threshold`` is a float or an array broadcastable to the leading shape followed by
        one axis of cases (``thresholds[:, None]``). Rows of ``proba`` of inactive cases are
        not read (they may be NaN).
        """
        active = np.asarray(active, dtype=bool) & ~self.decided
        clean = np.where(np.isfinite(proba), proba, -np.inf)
        label = clean.argmax(axis=-1)
        confident = active & (clean.max(axis=-1) >= threshold)
        agrees = confident & (label == self.label)
        self.run = np.where(
            active, np.where(agrees, self.run + 1, confident.astype(np.int64)), self.run
        )
        now = active & (self.run >= consecutive)
        self.label = np.where(active, label, self.label)
        if self.proba is not None:
            self.proba = np.where(active[..., None], proba, self.proba)
        self.decided |= now
        self.step = np.where(now, step, self.step)
        return now

    def force(self, proba, rows, step) -> None:
        """Decide the undecided cases of ``rows`` (bool) with ``proba``, at ``step`` (an int
        or an array of steps per case)."""
        rows = np.asarray(rows, dtype=bool) & ~self.decided
        if self.proba is not None:
            self.proba = np.where(rows[..., None], proba, self.proba)
        self.label = np.where(rows, np.asarray(proba).argmax(axis=-1), self.label)
        self.step = np.where(rows, step, self.step)
        self.decided |= rows

    def to_plain(self) -> dict:
        """The arrays, as a dict (what a pickle of a stream holds)."""
        return dict(self.__dict__)

    @classmethod
    def from_plain(cls, arrays: dict) -> Decisions:
        """The decisions of ``arrays`` (:meth:`to_plain`'s), each a writable copy: a
        stream loaded with ``joblib.load(..., mmap_mode='r')`` holds read-only ones."""
        decisions = cls.__new__(cls)
        for key, value in arrays.items():
            setattr(decisions, key, np.array(value) if isinstance(value, np.ndarray) else value)
        return decisions


def _candidate_thresholds(probas: list[np.ndarray]) -> np.ndarray:
    """The thresholds where the rule can change: the largest probabilities seen at the
    checkpoints (at most ``MAX_THRESHOLDS`` of their quantiles), and one above all."""
    tops = np.concatenate([p.max(axis=1)[np.isfinite(p).all(axis=1)] for p in probas] or [[]])
    values = np.unique(tops)
    if len(values) > MAX_THRESHOLDS - 1:
        values = np.unique(np.quantile(values, np.linspace(0.0, 1.0, MAX_THRESHOLDS - 1)))
    return np.concatenate([values, [np.inf]])


def simulate(
    probas: list[np.ndarray],
    end_proba: np.ndarray,
    checkpoints: np.ndarray,
    lengths: np.ndarray,
    thresholds: np.ndarray,
    consecutive: int,
) -> Decisions:
    """The decisions of the rule for every threshold of ``thresholds`` (one leading axis).

    ``probas[k]`` are the probabilities ``(n_cases, n_classes)`` at ``checkpoints[k]``
    steps (rows of NaN where a case has none: it cannot be decided there), ``end_proba``
    those of whole series, forced where a case is still undecided at its end
    (``lengths``). A case takes part in the checkpoints its series reaches
    (``lengths >= checkpoints[k]``).
    """
    n_cases, n_classes = end_proba.shape
    decisions = Decisions(n_cases, n_classes, (len(thresholds),), keep_proba=False)
    column = np.asarray(thresholds, dtype=np.float64)[:, None]
    for proba, steps in zip(probas, checkpoints, strict=True):
        reached = (lengths >= steps) & np.isfinite(proba).all(axis=1)
        decisions.advance(proba, reached, int(steps), column, consecutive)
    decisions.force(end_proba, np.ones(n_cases, dtype=bool), lengths)
    return decisions


def choose_rule(
    probas: list[np.ndarray],
    end_proba: np.ndarray,
    checkpoints: np.ndarray,
    lengths: np.ndarray,
    y: np.ndarray,
    cost: float | None = None,
    weights: np.ndarray | None = None,
) -> dict:
    """The rule of the best score on the training cases.

    Parameters
    ----------
    probas : list of ndarray of shape (n_cases, n_classes)
        Leave-one-out probabilities at every checkpoint (NaN rows where a case has none).
    end_proba : ndarray of shape (n_cases, n_classes)
        Leave-one-out probabilities of the whole series.
    checkpoints : int ndarray
        Steps of the checkpoints, ascending, before the ends of the series.
    lengths : int ndarray of shape (n_cases,)
        Each case's steps.
    y : int ndarray of shape (n_cases,)
        Index of each case's class.
    cost : float or None
        ``None`` maximises the harmonic mean of accuracy and earliness, a number minimises
        ``(1 - accuracy) + cost * earliness``.
    weights : ndarray of shape (n_cases,) or None
        The cases' weights in the accuracy and earliness (``None``: equal).

    Returns
    -------
    dict
        ``threshold``, ``consecutive``, and the ``accuracy``, ``earliness`` and ``score``
        of the rule on the training cases. Among rules of equal score the highest
        threshold wins (the fewest early decisions), then the fewest consecutive
        checkpoints.
    """
    thresholds = _candidate_thresholds(probas)
    lengths = np.asarray(lengths, dtype=np.float64)
    best = None
    for consecutive in CONSECUTIVE:
        decisions = simulate(probas, end_proba, checkpoints, lengths, thresholds, consecutive)
        accuracy = np.average(decisions.label == y, axis=1, weights=weights)
        earliness = np.average(decisions.step / lengths, axis=1, weights=weights)
        score = rule_score(accuracy, earliness, cost)
        # the last of the best: the highest threshold of those that score best
        i = len(score) - 1 - int(np.argmax(score[::-1]))
        if best is None or score[i] > best["score"] + 1e-12:
            best = {
                "threshold": float(thresholds[i]),
                "consecutive": consecutive,
                "accuracy": float(accuracy[i]),
                "earliness": float(earliness[i]),
                "score": float(score[i]),
            }
    assert best is not None
    return best
