"""``LMUEarlyClassifier``: classify a series as soon as its beginning is conclusive.

One :class:`~lmu_sk.LMUClassifier` (pooled Delay Network features and a ridge head) reads
the series; the Delay Network runs causally, so its features after ``t`` steps are those of
the first ``t`` steps whatever comes after, and one stream of them serves every moment. At
each *checkpoint* (by default every twentieth of the training length) a ridge head of its
own, trained on the features of the training series' prefixes of that length, gives
class probabilities calibrated for that length (the temperature of least log loss on its
exact leave-one-out decision values). Those heads read the features the stream carries
step by step (:meth:`~lmu_sk.LMUPooledFeatures.streamed_columns`: all but those of the
'cumsum' input, which the stream would run again from the first step at every
checkpoint), so a checkpoint costs less than a step. A case is decided at the first
checkpoint where its most probable class reaches a probability ``threshold_`` at
``consecutive_`` checkpoints in a row, the same class each time; a case still undecided
at the training length, or where its series ends, is decided there by the classifier of
whole series.

The rule is learned without holding data out: the leave-one-out probabilities of every
training series at every checkpoint (the ridge heads give them exactly, from the one
decomposition that fits them) are run through every candidate rule, and the rule of the
best harmonic mean of accuracy and earliness wins, or, with a ``cost`` of waiting, the
least ``(1 - accuracy) + cost * earliness``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from ._decisions import Decisions, choose_rule, harmonic_mean
from ._device import HostScoreMixin, is_device_array, to_numpy
from ._input import (
    as_sequences,
    channels_last,
    check_channel_names,
    check_step_names,
    from_nested,
)
from ._memory import check_fits
from ._persistence import VersionedPickleMixin
from ._sample_weight import check_sample_weight
from ._threads import thread_limit
from .estimators import LMUClassifier, standardization
from .ridge import RidgeHeadClassifier
from .streaming import EarlyClassifierStream

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["EarlyDecisions", "EarlyScore", "LMUEarlyClassifier", "harmonic_mean"]

#: Checkpoints by default: every twentieth of the training length, as aeon's TEASER.
DEFAULT_CHECKPOINTS = 20


class EarlyDecisions(NamedTuple):
    """What :meth:`LMUEarlyClassifier.decide` returns, one entry per case."""

    #: the label decided
    labels: np.ndarray
    #: the probabilities it was decided with, ``(n_cases, n_classes)``
    proba: np.ndarray
    #: the steps seen when deciding
    steps: np.ndarray
    #: ``steps`` over the case's own length
    earliness: np.ndarray


class EarlyScore(NamedTuple):
    """What :meth:`LMUEarlyClassifier.score_early` returns."""

    harmonic_mean: float
    accuracy: float
    earliness: float


def _check_cost(cost) -> float | None:
    if cost is None:
        return None
    number = isinstance(cost, numbers.Real) and not isinstance(cost, bool)
    if not (number and np.isfinite(cost)):
        # (a number out of range, inf or NaN, is a ValueError; anything else a TypeError)
        raise (ValueError if number else TypeError)(
            f"cost must be None (maximise the harmonic mean of accuracy and earliness) or "
            f"a finite number >= 0, the price of waiting for the whole series in accuracy; "
            f"got {cost!r}."
        )
    if cost < 0:
        raise ValueError(
            f"cost must be >= 0: it is what a case decided at the end of its series costs "
            f"besides its errors, (1 - accuracy) + cost * earliness; got {cost}. Use 0 to "
            "care only for accuracy, None for the harmonic mean."
        )
    return float(cost)


def checkpoint_steps(checkpoints, n_steps: int) -> np.ndarray:
    """The steps of the checkpoints of a model trained on series of ``n_steps`` steps
    (the longest), ascending, the last ``n_steps``.

    Parameters
    ----------
    checkpoints : int or sequence of float
        A number ``K`` of checkpoints at ``k / K`` of ``n_steps``, ``k = 1 .. K``, or the
        fractions of ``n_steps`` themselves (in ``(0, 1]``; 1 is added). Steps are rounded
        and repeated ones dropped.
    n_steps : int

    Returns
    -------
    int ndarray
    """
    if isinstance(checkpoints, numbers.Integral) and not isinstance(checkpoints, bool):
        if checkpoints < 1:
            raise ValueError(
                f"checkpoints must be a positive number of checkpoints or a sequence of "
                f"fractions of the series; got {checkpoints}."
            )
        fractions = np.arange(1, int(checkpoints) + 1) / int(checkpoints)
    else:
        try:
            fractions = np.asarray(checkpoints, dtype=np.float64)
        except (TypeError, ValueError):
            fractions = None
        if (
            fractions is None
            or fractions.ndim != 1
            or fractions.size == 0
            or not np.all((fractions > 0) & (fractions <= 1))
        ):
            raise ValueError(
                "checkpoints must be a positive integer (that many evenly spaced "
                "checkpoints) or a non-empty sequence of fractions of the training length "
                f"in (0, 1]; got {checkpoints!r}."
            )
    steps = np.clip(np.round(fractions * n_steps), 1, n_steps).astype(np.int64)
    return np.unique(np.append(steps, n_steps))


# how this estimator takes channels_first (its classifier's), in the layout messages
_CHANNELS_FIRST = "estimator=LMUClassifier(channels_first={})"
# the classifier's layout warning, which this estimator gives in its own terms
_LAYOUT_WARNING = r"LMUClassifier reads (X of shape|each sequence of X)"


class LMUEarlyClassifier(VersionedPickleMixin, HostScoreMixin, ClassifierMixin, BaseEstimator):
    """Early classification of time series: decide each case as soon as its beginning is
    conclusive.

    An :class:`~lmu_sk.LMUClassifier` (pooled Delay Network features and the ridge head)
    reads the series, and at each checkpoint a ridge head of its own, trained on the
    training series' prefixes of that length, gives probabilities calibrated for it; a case
    is decided at the first checkpoint where its most probable class has a probability of
    at least ``threshold_`` at ``consecutive_`` checkpoints in a row, the same class each
    time. A case still undecided at the training length (the longest training series), or
    where its series ends, is decided there by the classifier of whole series: at full
    length the model *is* ``estimator_``. The rule is chosen on the exact leave-one-out
    probabilities of the training series (see :mod:`lmu_sk.early`).

    ``predict`` and ``predict_proba`` give the decisions of every series of ``X`` read
    step by step, each taken as complete (undecided at its end, a case is decided there);
    :meth:`decide` adds the steps and earliness; :meth:`stream` runs the model online.

    Parameters
    ----------
    estimator : LMUClassifier, default=None
        The classifier of whole series and of the features (cloned); ``None`` is
        ``LMUClassifier()``. Its ``head`` must be 'auto' or 'ridge' (the ridge head's
        leave-one-out values calibrate the checkpoints and choose the rule): 'auto' is
        fitted as 'ridge'. Its ``channels_first``, ``class_weight``, ``alphas`` and
        ``n_jobs`` apply to the checkpoints' heads too; its ``kernel`` does not: the
        checkpoints' heads are linear (a Gaussian kernel's model would score every stream's
        step against every training series), the whole series' is the estimator's own.
        To search its parameters (``estimator__order`` in ``GridSearchCV``), pass one:
        ``estimator=LMUClassifier()`` (``None`` has no parameters to set).
    checkpoints : int or sequence of float, default=20
        Where cases can be decided: ``K`` checkpoints at ``k / K`` of the training length
        (``k = 1 .. K``; ``1`` never decides early), or their fractions of the training
        length, in ``(0, 1]``.
    cost : float or None, default=None
        What the rule optimises on the training series: ``None`` the harmonic mean of
        accuracy and ``1 - earliness`` (the measure of TEASER and aeon), a number ``>= 0``
        the least ``(1 - accuracy) + cost * earliness`` (0: accuracy alone; a case is then
        decided early only by a rule more accurate on the training series' leave-one-out
        probabilities than the whole series, and of equally accurate rules the latest
        wins).

    Attributes
    ----------
    estimator_ : LMUClassifier
        The fitted classifier of whole series (and the features of every checkpoint).
    classes_ : ndarray of shape (n_classes,)
    class_prior_ : ndarray of shape (n_classes,)
        The training classes' frequencies (what a stream reports before its first
        checkpoint).
    checkpoints_ : int ndarray of shape (n_checkpoints,)
        The steps at which cases can be decided, ascending; the last is the training length.
    heads_ : list of RidgeHeadClassifier or None
        The head of every checkpoint but the last (``estimator_.head_`` decides there),
        on the streamed columns of ``estimator_.features_`` (see
        :meth:`~lmu_sk.LMUPooledFeatures.streamed_columns`);
        ``None`` where fewer than two training series of two classes reach it (unequal
        lengths): no case is decided there.
    head_means_, head_scales_ : list of ndarray or None
        The standardization of every head's features (``None`` without
        ``scale_features``).
    threshold_ : float
        The probability the most probable class must reach (``inf``: never before the end).
    consecutive_ : int
        At that many checkpoints in a row, the same class each time.
    loo_accuracy_, loo_earliness_ : float
        Accuracy and earliness of the rule on the training series' leave-one-out
        probabilities.
    loo_score_ : float
        What the rule maximised there: the harmonic mean, or minus ``(1 - accuracy) +
        cost * earliness``.
    n_features_in_ : int
        Steps of the training series (the longest one).
    feature_names_in_ : ndarray of str
        The column names of a DataFrame ``X`` (its time steps), where they are all
        strings; a DataFrame given to predict must have them in the same order.

    Notes
    -----
    Bad input: a series longer than the training length is read up to it (a case still
    undecided there is decided there; its earliness counts its whole length); in a stream
    a decided case's later steps are not read (they may be NaN) and its decision never
    changes; ``cost < 0`` raises a ValueError at :meth:`fit`.

    scikit-learn's ``check_estimator`` passes but for three checks, by design:
    ``check_n_features_in_after_fitting`` (series of any length can be decided, so a
    different number of steps at predict time is no error),
    ``check_classifiers_train`` (on the check's blobs, read as series, deciding early
    trades accuracy for earliness below the check's accuracy bar; with ``cost=0``, which
    cares for accuracy alone, the check passes) and
    ``check_sample_weight_equivalence_on_dense_data`` (as for
    :class:`~lmu_sk.LMUClassifier`: the ridge heads' leave-one-out penalties and
    probabilities, and the pooled features' thresholds, are not invariant to repeating
    series).

    Examples
    --------
    >>> import numpy as np
    >>> from lmu_sk import LMUEarlyClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = np.arange(60) % 2
    >>> X = rng.standard_normal((60, 100)) + 2.0 * y[:, None] * (np.arange(100) < 50)
    >>> clf = LMUEarlyClassifier().fit(X, y)
    >>> decisions = clf.decide(X)
    >>> bool(decisions.earliness.mean() < 0.5), bool((decisions.labels == y).mean() > 0.9)
    (True, True)
    """

    _fitted_attributes = (
        "estimator_",
        "classes_",
        "class_prior_",
        "checkpoints_",
        "heads_",
        "head_means_",
        "head_scales_",
        "threshold_",
        "consecutive_",
        "n_features_in_",
    )

    @classmethod
    def _inconsistent_state(cls, state: dict) -> str | None:
        """What makes a complete saved state unusable (checked at load, where predict
        would fail later with a raw error), or None."""
        estimator = state["estimator_"]
        if not isinstance(estimator, LMUClassifier) or "head_" not in vars(estimator):
            return f"an estimator_ that is no fitted LMUClassifier ({type(estimator).__name__})"
        checkpoints = np.asarray(state["checkpoints_"])
        if checkpoints.ndim != 1 or len(checkpoints) < 1:
            return f"checkpoints_ of shape {checkpoints.shape}"
        lengths = [len(state[name]) for name in ("heads_", "head_means_", "head_scales_")]
        if set(lengths) != {len(checkpoints) - 1}:
            return (
                f"{len(checkpoints)} checkpoints_ with heads_, head_means_ and head_scales_ "
                f"of {', '.join(map(str, lengths))} (one fewer than the checkpoints each)"
            )
        if int(checkpoints[-1]) != state["n_features_in_"]:
            return (
                f"a last checkpoint of {int(checkpoints[-1])} steps for n_features_in_ "
                f"{state['n_features_in_']}"
            )
        return None

    def __init__(self, estimator=None, checkpoints=DEFAULT_CHECKPOINTS, cost=None):
        self.estimator = estimator
        self.checkpoints = checkpoints
        self.cost = cost

    def set_params(self, **params) -> Self:
        """scikit-learn's ``set_params``; the parameters of ``estimator`` (``estimator__order``)
        need an ``estimator`` to set them on: with its default, ``None``, a ValueError names
        the fix instead of an AttributeError."""
        nested = sorted(key for key in params if key.startswith("estimator__"))
        if nested and params.get("estimator", self.estimator) is None:
            raise ValueError(
                f"Cannot set {', '.join(nested)}: estimator is None (an LMUClassifier is "
                "made at fit). Pass one to set its parameters on, e.g. "
                "LMUEarlyClassifier(estimator=LMUClassifier()), or "
                "set_params(estimator=LMUClassifier(), estimator__order=...)."
            )
        return super().set_params(**params)

    # ------------------------------------------------------------------ fit
    def _classifier(self) -> LMUClassifier:
        """An unfitted clone of ``estimator`` with the ridge head."""
        if self.estimator is None:
            return LMUClassifier(head="ridge")
        if not isinstance(self.estimator, LMUClassifier):
            raise TypeError(
                f"estimator must be an LMUClassifier (or None for LMUClassifier()); got "
                f"{type(self.estimator).__name__}."
            )
        estimator = clone(self.estimator)
        if estimator.head not in ("auto", "ridge"):
            raise ValueError(
                f"LMUEarlyClassifier needs the ridge head, whose leave-one-out values "
                f"calibrate the checkpoints and choose the rule; estimator has "
                f"head={estimator.head!r}. Use head='ridge' (or 'auto')."
            )
        return estimator.set_params(head="ridge")

    def _sequences(self, X, estimator: LMUClassifier, reset: bool = False):
        """``X`` as validated float64 sequences: ``(n, n_steps, n_channels)`` or a list of
        ``(n_steps_i, n_channels)`` arrays (a nested DataFrame's channel names, or a
        DataFrame's column names, the steps', recorded where ``reset``, else checked)."""
        channels_first = estimator.channels_first
        check_channel_names(self, X, reset)
        X = from_nested(X, channels_first)
        check_step_names(self, X, reset)
        if hasattr(X, "columns") and hasattr(X, "to_numpy"):
            X = X.to_numpy()
        X = channels_last(
            X, channels_first, type(self).__name__, param=_CHANNELS_FIRST, refuse_one_step=reset
        )
        return as_sequences(X, np.dtype(np.float64), type(self).__name__)

    def fit(self, X, y, sample_weight=None) -> Self:
        """Fit the classifier of whole series, the heads of the checkpoints and the rule.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_steps) or (n_samples, n_steps, n_channels), \
or a list of sequences of different lengths
            Layout as for :class:`~lmu_sk.LMUClassifier` (its ``channels_first``).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the training series: in the classifier of whole series, in every
            checkpoint's head and its standardization (times the estimator's
            ``class_weight``, as :class:`~lmu_sk.LMUClassifier` weighs them), and in the
            accuracy and earliness the rule is chosen by (a series of weight 0 counts in
            none of them).

        Returns
        -------
        self
        """
        cost = _check_cost(self.cost)
        checkpoint_steps(self.checkpoints, 1)  # (refused before the classifier's fit)
        estimator = self._classifier()
        if is_device_array(y):  # (labels are read on the host, as the estimator reads them)
            y = to_numpy(y)
        check_classification_targets(y)
        y = column_or_1d(np.asarray(y), warn=True)
        with thread_limit(estimator.n_jobs):
            # the layout read (and warned of, or refused) in this estimator's terms first:
            # the classifier's own warning would name a parameter this one does not have
            U = self._sequences(X, estimator, reset=True)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", _LAYOUT_WARNING, UserWarning)
                estimator.fit(X, y, sample_weight=sample_weight)
            if sample_weight is not None:
                sample_weight = check_sample_weight(sample_weight, len(y))
            n_steps = int(estimator.n_features_in_)
            checkpoints = checkpoint_steps(self.checkpoints, n_steps)
            self._fit_checkpoints(estimator, U, y, checkpoints, cost, sample_weight)
        return self

    def _fit_checkpoints(
        self, estimator, U, y, checkpoints: np.ndarray, cost, sample_weight=None
    ) -> None:
        """The heads of the checkpoints before the last, and the rule."""
        classes = np.asarray(estimator.classes_)
        indices = np.searchsorted(classes, y)
        lengths = _lengths(U)
        # the composite's weights: the series' times the classes' (for the standardization)
        weights = estimator._weights(sample_weight, U, y)
        counted = np.ones(len(y), dtype=bool) if sample_weight is None else sample_weight > 0
        _check_checkpoints_fit(estimator, len(y), len(classes), len(checkpoints) - 1)
        heads, means, scales, probas = [], [], [], []
        for steps in checkpoints[:-1]:
            rows = np.flatnonzero(lengths >= steps)
            proba = np.full((len(y), len(classes)), np.nan)
            weighed = rows[counted[rows]]
            if len(weighed) < 2 or len(np.unique(indices[weighed])) < 2:
                heads.append(None)
                means.append(None)
                scales.append(None)
                probas.append(proba)
                continue
            F = _checkpoint_features(estimator, _prefixes(U, rows, int(steps)))
            mean = scale = None
            if estimator._standardized:
                mean, scale = standardization(F, None if weights is None else weights[rows])
                F -= mean
                F /= scale
            class_weight = estimator.class_weight
            if isinstance(class_weight, dict):
                # the classes that reach this checkpoint (unequal lengths: maybe not all):
                # a dict's keys of the others name no class of this head's y
                present = set(np.unique(y[rows]).tolist())
                class_weight = {k: v for k, v in class_weight.items() if k in present}
            head = RidgeHeadClassifier(alphas=estimator.alphas, class_weight=class_weight)
            head.fit(F, y[rows], None if sample_weight is None else sample_weight[rows])
            proba[_loo_rows(head, rows)] = _columns(head._loo_proba(), head.classes_, classes)
            heads.append(head)
            means.append(mean)
            scales.append(scale)
            probas.append(proba)
        end = np.full((len(y), len(classes)), np.nan)
        end_head = estimator.head_
        end[_loo_rows(end_head, np.arange(len(y)))] = end_head._loo_proba()
        # the cases with every probability the rule needs at their end (all of them
        # unless leave-one-out ran on a subset of a large training set)
        known = np.isfinite(end).all(axis=1) & counted
        rule = choose_rule(
            [p[known] for p in probas],
            end[known],
            checkpoints[:-1],
            lengths[known],
            indices[known],
            cost,
            None if sample_weight is None else sample_weight[known],
        )
        self.estimator_ = estimator
        self.classes_ = classes
        prior = np.bincount(indices, weights=sample_weight, minlength=len(classes))
        self.class_prior_ = prior / prior.sum()
        self.checkpoints_ = checkpoints
        self.heads_, self.head_means_, self.head_scales_ = heads, means, scales
        self.threshold_ = rule["threshold"]
        self.consecutive_ = rule["consecutive"]
        self.loo_accuracy_ = rule["accuracy"]
        self.loo_earliness_ = rule["earliness"]
        self.loo_score_ = rule["score"]
        self.n_features_in_ = int(checkpoints[-1])

    # ------------------------------------------------------------------ decisions
    def stream(self, n_streams: int = 1) -> EarlyClassifierStream:
        """The model run online: an :class:`~lmu_sk.streaming.EarlyClassifierStream` of
        ``n_streams`` series, deciding at the checkpoints as its updates pass them."""
        check_is_fitted(self, "threshold_")
        return EarlyClassifierStream(self, n_streams)

    def _decisions(
        self, U, finish: bool = True, resume: tuple | None = None
    ) -> tuple[Decisions, np.ndarray]:
        """The decisions of the validated sequences ``U`` read step by step, and their
        lengths. ``finish``: a case undecided at its end is decided there (else only at
        the training length). ``resume``: ``(next checkpoint, run, label)`` of cases seen
        before, continued."""
        lengths = _lengths(U)
        n_steps = int(self.checkpoints_[-1])
        stream = EarlyClassifierStream(self, len(lengths), _snapshot=False)
        if resume is not None:
            stream._resume(*resume)
        if isinstance(U, list):
            stream._lengths = lengths
            width = min(int(lengths.max()), n_steps)
            padded = np.zeros((len(U), width, U[0].shape[1]))
            for row, u in zip(padded, U, strict=True):
                row[: min(len(u), width)] = u[:width]
            U = padded
        U = U[:, :n_steps]
        try:
            stream._advance(U, U.shape[1])
        except ValueError as error:  # the stream's range errors, in terms of X
            message = str(error)
            if not message.startswith("U "):
                raise
            message = message.replace("; the stream was left unchanged", "")
            message = message.replace("the stream would", "the decisions step by step would")
            raise ValueError(f"X{message[1:]}") from None
        decisions = stream._decisions
        if finish:
            ended = ~decisions.decided
            if ended.any():
                if stream._lengths is None:  # equal lengths: the stream is at their end
                    stream.finish(ended)
                else:
                    rows = np.flatnonzero(ended)
                    F = _features(self.estimator_, [U[i][: lengths[i]] for i in rows])
                    proba = np.full(decisions.proba.shape, np.nan)
                    proba[rows] = self.estimator_.head_.predict_proba(_scaled(self.estimator_, F))
                    decisions.force(proba, ended, lengths)
        return decisions, lengths

    def _checked(self, X):
        """``X`` validated for the fitted model (its channels those of the training)."""
        check_is_fitted(self, "threshold_")
        U = self._sequences(X, self.estimator_)
        self.estimator_.features_._check_channels(U)
        return U

    def decide(self, X) -> EarlyDecisions:
        """Run every series of ``X`` step by step and decide it as the stream would.

        Each series is taken as complete: a case still undecided at its end (or at the
        training length, after which no step is read) is decided there by the classifier
        of whole series.

        Parameters
        ----------
        X : array-like or list of sequences
            As for :meth:`fit`; any lengths.

        Returns
        -------
        EarlyDecisions
            ``labels``, ``proba`` ``(n_cases, n_classes)``, ``steps`` (seen when
            deciding) and ``earliness`` (``steps`` over the case's length).
        """
        U = self._checked(X)
        with thread_limit(self.estimator_.n_jobs):
            decisions, lengths = self._decisions(U)
        return EarlyDecisions(
            self.classes_[decisions.label],
            decisions.proba,
            decisions.step,
            decisions.step / lengths,
        )

    def predict(self, X) -> np.ndarray:
        """The labels decided for the series of ``X`` (see :meth:`decide`)."""
        return self.decide(X).labels

    def predict_proba(self, X) -> np.ndarray:
        """The probabilities each case of ``X`` was decided with, ``(n_cases, n_classes)``
        (see :meth:`decide`): calibrated for the number of steps seen."""
        return self.decide(X).proba

    def score_early(self, X, y) -> EarlyScore:
        """The harmonic mean of accuracy and ``1 - earliness``, the accuracy and the mean
        earliness of the decisions on ``X`` (see :meth:`decide`)."""
        decisions = self.decide(X)
        y = column_or_1d(to_numpy(y))
        check_consistent_length(decisions.labels, y)
        accuracy = float(np.mean(decisions.labels == y))
        earliness = float(np.mean(decisions.earliness))
        return EarlyScore(harmonic_mean(accuracy, earliness), accuracy, earliness)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags


# ---------------------------------------------------------------------------- helpers
def _lengths(U) -> np.ndarray:
    if isinstance(U, list):
        return np.asarray([len(u) for u in U], dtype=np.int64)
    return np.full(U.shape[0], U.shape[1], dtype=np.int64)


def _prefixes(U, rows: np.ndarray, steps: int):
    """The first ``steps`` steps of the sequences ``rows`` of ``U``."""
    if isinstance(U, list):
        return [U[i][:steps] for i in rows]
    return U[rows, :steps]


def _features(estimator: LMUClassifier, U) -> np.ndarray:
    """The float64 features of validated sequences, as the classifier predicts on them."""
    with estimator.features_._compile_notices():  # (with the classifier's verbose)
        return np.asarray(estimator.features_._features(U, False, np.float64, False))


def _check_checkpoints_fit(
    estimator: LMUClassifier, n_samples: int, n_classes: int, n_heads: int
) -> None:
    """Refuse, before the first is fitted, checkpoints' heads that the memory available
    cannot hold together (each small, none checked alone: 399 heads of 100 classes took
    4.7 GB against a 3 GB budget, unwarned)."""
    features = estimator.features_
    n_features = (
        len(features.streamed_columns())
        if hasattr(features, "streamed_columns")
        else int(estimator.head_.n_features_in_)
    )
    n_targets = 1 if n_classes == 2 else n_classes
    # per head kept: coefficients, the standardization, the leave-one-out values; per
    # checkpoint: its probabilities of every training series
    per_head = 8.0 * (n_targets * n_features + 2 * n_features + 2 * n_samples * n_targets)
    check_fits(
        n_heads * (per_head + 8.0 * n_samples * n_classes),
        f"LMUEarlyClassifier's {n_heads} checkpoint heads of {n_features} features and "
        f"{n_classes} classes",
        "Use fewer checkpoints (an int K: K evenly spaced), or fewer features (a smaller "
        "order, fewer thresholds of the classifier's features).",
    )


def _checkpoint_features(estimator: LMUClassifier, U) -> np.ndarray:
    """The float64 features the heads of the checkpoints before the last read: of pooled
    features the columns a stream carries step by step
    (:meth:`~lmu_sk.LMUPooledFeatures.streamed_columns`, all but those of the 'cumsum'
    input, which a stream recomputes from the first step whenever it reports them), of
    other features all."""
    features = estimator.features_
    if not hasattr(features, "streamed_columns"):
        return _features(estimator, U)
    with features._compile_notices():
        return np.asarray(features._features(U, False, np.float64, False, streamed=True))


def _scaled(estimator: LMUClassifier, F: np.ndarray) -> np.ndarray:
    if not estimator._standardized:
        return F
    return (F - estimator.feature_mean_) / estimator.feature_scale_


def _loo_rows(head: RidgeHeadClassifier, rows: np.ndarray) -> np.ndarray:
    """The training rows a head's leave-one-out values belong to."""
    return rows if head.loo_rows_ is None else rows[head.loo_rows_]


def _columns(proba: np.ndarray, classes: np.ndarray, all_classes: np.ndarray) -> np.ndarray:
    """``proba`` of ``classes`` as columns of ``all_classes`` (zero for the others)."""
    out = np.zeros((proba.shape[0], len(all_classes)))
    out[:, np.searchsorted(all_classes, classes)] = proba
    return out
