"""Early classification: ``LMUEarlyClassifier()`` against aeon's TEASER and probability threshold.

On every development set in ``DATA_DIR`` (the layout of ``bench_tsc.py``, whose loaders
this script reuses), in one run, interleaved set by set (the models take turns, starting
with a different one each set, so a change in the machine's load falls on all of them):

- ``LMU``: ``LMUEarlyClassifier()`` (``LMUClassifier(random_state=seed)`` inside);
- ``TEASER``: aeon's ``TEASER(random_state=seed, n_jobs=1)`` (WEASEL, or MUSE for several
  channels, at 20 classification points, one-class SVMs deciding);
- ``ProbThreshold``: aeon's ``ProbabilityThresholdEarlyClassifier(random_state=seed,
  n_jobs=1)`` (DrCIF at 20 classification points, probability 0.85).

Each model is fitted on the training split and decides every test series read from its
beginning: accuracy of the decisions, earliness (the steps seen when deciding over the
series' own length, averaged) and their harmonic mean ``2 a (1 - e) / (a + 1 - e)``, the
measure aeon's early classifiers score with; fit and predict seconds (process CPU time by
default, ``--clock wall``). At full length the early classifier is its ``estimator_``:
its accuracy on the whole test series is printed beside that of a separately fitted
``LMUClassifier(random_state=seed)`` (untimed).

Unequal-length sets go to lmu_sk as lists (a case undecided at its end is decided there);
aeon's early classifiers do not take unequal lengths, so they get the series zero-padded
at the end to the set's longest (training and test split together, as in ``bench_tsc.py``),
and their earliness is counted the same way, ``min(decision point, length) / length``.

Every model runs on one thread (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
``MKL_NUM_THREADS``, ``NUMBA_NUM_THREADS`` set to 1 before NumPy and Numba load; aeon's
``n_jobs=1``; the process pinned to one CPU), after an untimed warm-up of each model on
small synthetic sets (Numba compilation is not counted).

``--quick N`` runs the ``N`` sets of the smallest training size, ``n_train x longest
length x channels`` of the training split (ties by name), smallest first: the selection
depends on the sets' shapes alone, never on results. ``--budget-minutes M`` starts no set
after ``M`` minutes of wall time (the sets finished are summarised; with ``--quick`` they are
the smallest ones). TEASER and DrCIF at 20 classification points are slow on two shared
cores: the figures of the guide come from ``--quick 14 --budget-minutes 45``.

``--part speed`` measures the decision step of the stream instead: ``n_streams`` (1 000)
streams of a model fitted on the first set given (or a synthetic one) fed one step at a
time over the whole training length, ``EarlyClassifierStream.update`` (deciding at every
checkpoint it passes) against the plain ``ClassifierStream.update`` of its classifier
(features only), interleaved, best of ``--repeats``; and the steps that cross a checkpoint
alone against an ordinary step. Decided cases are no longer read, so the stream with
decisions gets cheaper as they are decided; the cost of the decision itself is measured on
the same model deciding nothing before the end (``threshold_`` infinite): its steps that
cross a checkpoint (features, the checkpoint's head on every case, the rule) against the
plain stream's same steps, its ``update`` alone and its ``update`` and ``predict_proba``
(which computes the features from the stream's state, as a decision does).

    pip install ".[bench]"
    python benchmarks/bench_early.py DATA_DIR
    python benchmarks/bench_early.py DATA_DIR --sets GunPointAgeSpan ECG200 --json out.json
    python benchmarks/bench_early.py DATA_DIR --quick 14 --budget-minutes 45
    python benchmarks/bench_early.py DATA_DIR --peers TEASER --sets Car
    python benchmarks/bench_early.py DATA_DIR --part speed --sets GunPointAgeSpan
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # one thread per model: the thread pools read these when NumPy and Numba load
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_variable] = "1"
    os.environ["NUMBA_NUM_THREADS"] = "1"
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse
import copy
import gc
import json
import time
import warnings
from collections.abc import Callable, Sequence

import bench_tsc
import numpy as np

REFERENCE = "LMU"
PEERS = {
    "TEASER": ("aeon.classification.early_classification", "TEASER"),
    "ProbThreshold": (
        "aeon.classification.early_classification",
        "ProbabilityThresholdEarlyClassifier",
    ),
}
TIE = 1e-12  # harmonic means closer than this are equal
SHARE_BETTER = 2 / 3  # the target's share of sets better than each peer
FIT_RATIO = 0.2  # the target's fit time against TEASER's
STEP_RATIO = 2.0  # the target's stream update with decisions against without
FULL_GAP = 0.005  # the target's full-length accuracy gap to LMUClassifier()


# --------------------------------------------------------------------------------- scores


def harmonic_mean(accuracy: float, earliness: float) -> float:
    """``2 a (1 - e) / (a + 1 - e)``, 0 where both are 0 (aeon's TEASER's measure)."""
    kept = 1.0 - earliness
    return 0.0 if accuracy + kept <= 0 else 2.0 * accuracy * kept / (accuracy + kept)


def scores(labels, y_true, steps, lengths) -> dict:
    """Accuracy, earliness (``min(step, length) / length``, averaged) and harmonic mean."""
    lengths = np.asarray(lengths, dtype=np.float64)
    steps = np.minimum(np.asarray(steps, dtype=np.float64), lengths)
    accuracy = float(np.mean(np.asarray(labels) == np.asarray(y_true)))
    earliness = float(np.mean(steps / lengths))
    return {
        "accuracy": accuracy,
        "earliness": earliness,
        "harmonic_mean": harmonic_mean(accuracy, earliness),
    }


# --------------------------------------------------------------------------------- models


class LMUModel:
    """``LMUEarlyClassifier()`` with the benchmark's seed, in lmu_sk's layout."""

    layout = "lmu"

    def __init__(self, seed: int):
        from lmu_sk import LMUClassifier, LMUEarlyClassifier

        self.model = LMUEarlyClassifier(LMUClassifier(random_state=seed))

    def fit(self, X, y):
        self.model.fit(X, y)

    def decide(self, X) -> tuple[np.ndarray, np.ndarray]:
        decisions = self.model.decide(X)
        return decisions.labels, decisions.steps


class AeonModel:
    """An aeon early classifier with ``random_state=seed`` and ``n_jobs=1``, on padded
    arrays; its decision points read from ``state_info`` (column 0: the index of the
    classification point of the decision), as aeon's ``score`` reads them."""

    layout = "aeon"

    def __init__(self, module: str, name: str, seed: int):
        self.model = bench_tsc.aeon_factory(module, name, seed)()

    def fit(self, X, y):
        self.model.fit(X, y)

    def decide(self, X) -> tuple[np.ndarray, np.ndarray]:
        labels, decided = self.model.predict(X)
        if not np.all(decided):  # at full length every case is decided
            raise RuntimeError(f"{int(np.sum(~decided))} case(s) undecided at full length")
        # the classification point of each decision, as aeon's own score reads it (column
        # 0 indexes the points; column 3, the point itself, stays 0 where TEASER's search
        # chose no consecutive predictions and every case counts as decided at once)
        state = np.asarray(self.model.get_state_info())
        return np.asarray(labels), np.asarray(self.model._classification_points)[state[:, 0]]


def make_models(peers: Sequence[str], seed: int) -> dict[str, Callable[[], object]]:
    """``{label: factory}`` for lmu_sk's early classifier and the available peers."""
    models: dict[str, Callable[[], object]] = {REFERENCE: lambda: LMUModel(seed)}
    for peer in peers:
        module, name = PEERS[peer]
        try:
            AeonModel(module, name, seed)
        except ImportError as error:
            print(f"{peer}: not available, left out ({error})", flush=True)
            continue
        models[peer] = lambda module=module, name=name: AeonModel(module, name, seed)
    return models


def fit_decide(make, X, y, X_test, y_test, lengths, clock: str) -> dict:
    """Fit and decide one model, timed; a failure is recorded, never fatal."""
    gc.collect()
    timer = time.process_time if clock == "cpu" else time.perf_counter
    result: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = make()
            start = timer()
            model.fit(X, y)
            fitted = timer()
            labels, steps = model.decide(X_test)
            result["fit_s"] = fitted - start
            result["predict_s"] = timer() - fitted
            result.update(scores(labels, y_test, steps, lengths))
            if isinstance(model, LMUModel):
                inner = model.model.estimator_
                result["full_accuracy"] = float(np.mean(inner.predict(X_test) == y_test))
                result["rule"] = {
                    "threshold": model.model.threshold_,
                    "consecutive": model.model.consecutive_,
                    "loo_harmonic_mean": model.model.loo_score_,
                }
        except Exception as error:  # a failure is a result of the benchmark
            result = {"error": f"{type(error).__name__}: {error}".splitlines()[0][:300]}
    result["warnings"] = sorted({str(w.message).splitlines()[0][:200] for w in caught})
    return result


def warm_up(models: dict, clock: str) -> dict[str, float]:
    """Untimed first fits on small synthetic sets (compilation); seconds per model. Two
    classes of sines of different periods, 200 steps (aeon's models fail on noise, or at
    classification points of a few steps), one channel and three for all, unequal lengths
    for lmu_sk too; aeon's models at two classification points. A model whose warm-up
    fails is kept (the sets record its failures)."""
    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    t = np.arange(200)

    def case(i: int, n_channels: int, n_steps: int = 200) -> np.ndarray:
        wave = np.sin(t[:n_steps] / (4.0 + 3.0 * y[i]) + rng.uniform(0.0, 6.0))
        return wave + 0.3 * rng.standard_normal((n_channels, n_steps))

    sets = [[case(i, 1) for i in range(24)], [case(i, 3) for i in range(24)]]
    ragged = [[case(i, 1, 150 + 2 * i) for i in range(24)]]
    seconds = {}
    for label in list(models):
        start = time.perf_counter()

        def light(make=models[label]):
            # aeon's models at two classification points: the same code compiled, a tenth
            # of the work of twenty
            model = make()
            if isinstance(model, AeonModel):
                model.model.set_params(classification_points=[100, 200])
            return model

        for X in sets + (ragged if label == REFERENCE else []):
            lengths = [x.shape[-1] for x in X]
            data = bench_tsc.for_lmu(X) if label == REFERENCE else bench_tsc.for_aeon(X, 200)
            result = fit_decide(light, data, y, data, y, lengths, clock)
            if "error" in result:
                print(f"{label}: its warm-up failed ({result['error']})", flush=True)
        seconds[label] = time.perf_counter() - start
    return seconds


def run_set(index: int, data: tuple, models: dict, clock: str, seed: int) -> tuple[dict, dict]:
    """``(info, results)`` of one set, the models in turn (the first rotated by ``index``)."""
    from lmu_sk import LMUClassifier

    X, y, X_test, y_test = data
    info = bench_tsc.describe(X, X_test)
    lengths = [x.shape[-1] for x in X_test]
    lmu = bench_tsc.for_lmu(X), bench_tsc.for_lmu(X_test)
    aeon = (
        bench_tsc.for_aeon(X, info["max_length"]),
        bench_tsc.for_aeon(X_test, info["max_length"]),
    )
    results = {}
    labels = list(models)
    shift = index % len(labels)
    for label in labels[shift:] + labels[:shift]:
        X_fit, X_pred = lmu if label == REFERENCE else aeon
        results[label] = fit_decide(models[label], X_fit, y, X_pred, y_test, lengths, clock)
    if REFERENCE in results and "error" not in results[REFERENCE]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = LMUClassifier(random_state=seed).fit(*lmu[:1], y)
        info["lmu_classifier_accuracy"] = float(np.mean(reference.predict(lmu[1]) == y_test))
    return info, {m: results[m] for m in labels}


# -------------------------------------------------------------------------------- summary


def summarise(rows: list[dict], models: Sequence[str]) -> dict:
    """Means over the sets every model completed, wins against each peer, time ratios."""
    ours, peers = models[0], list(models[1:])
    complete = [r for r in rows if all("harmonic_mean" in r["models"].get(m, {}) for m in models)]

    def column(model: str, key: str) -> np.ndarray:
        return np.array([r["models"][model][key] for r in complete], dtype=np.float64)

    summary: dict = {
        "n_sets": len(rows),
        "n_complete": len(complete),
        "failed": {
            m: [r["set"] for r in rows if "error" in r["models"].get(m, {})] for m in models
        },
        "mean": {
            m: {
                key: float(np.mean(column(m, key))) if complete else None
                for key in ("harmonic_mean", "accuracy", "earliness")
            }
            for m in models
        },
        "total_seconds": {
            m: {key: float(np.sum(column(m, key))) for key in ("fit_s", "predict_s")}
            for m in models
        },
        "win_tie_loss": {},
        "fit_ratio": {},
        "predict_ratio": {},
    }
    for peer in peers:
        diff = column(ours, "harmonic_mean") - column(peer, "harmonic_mean")
        summary["win_tie_loss"][peer] = (
            int(np.sum(diff > TIE)),
            int(np.sum(np.abs(diff) <= TIE)),
            int(np.sum(diff < -TIE)),
        )
        for key, name in (("fit_s", "fit_ratio"), ("predict_s", "predict_ratio")):
            theirs = summary["total_seconds"][peer][key]
            summary[name][peer] = summary["total_seconds"][ours][key] / theirs if theirs else None
    # each peer against lmu_sk on the sets both completed (aeon's early classifiers fail
    # on some small sets, each on others)
    summary["pairwise"] = {}
    for peer in peers:
        both = [
            r for r in rows if all("harmonic_mean" in r["models"].get(m, {}) for m in (ours, peer))
        ]
        mine = np.array([r["models"][ours]["harmonic_mean"] for r in both])
        theirs = np.array([r["models"][peer]["harmonic_mean"] for r in both])
        fit = [sum(r["models"][m]["fit_s"] for r in both) for m in (ours, peer)]
        summary["pairwise"][peer] = {
            "n_sets": len(both),
            "mean_harmonic_mean": (
                (float(mine.mean()), float(theirs.mean())) if both else (None, None)
            ),
            "win_tie_loss": (
                int(np.sum(mine - theirs > TIE)),
                int(np.sum(np.abs(mine - theirs) <= TIE)),
                int(np.sum(mine - theirs < -TIE)),
            ),
            "fit_ratio": fit[0] / fit[1] if fit[1] else None,
        }
    full = [
        (r["models"][ours]["full_accuracy"], r["lmu_classifier_accuracy"])
        for r in rows
        if "lmu_classifier_accuracy" in r and "full_accuracy" in r["models"][ours]
    ]
    summary["full_accuracy"] = {
        "early_classifier": float(np.mean([f[0] for f in full])) if full else None,
        "LMUClassifier": float(np.mean([f[1] for f in full])) if full else None,
        "largest_gap": float(max(abs(a - b) for a, b in full)) if full else None,
    }
    return summary


def targets(summary: dict, ours: str = REFERENCE) -> list[tuple[str, bool | None]]:
    """The issue's targets of the accuracy part: ``(text, met)``, None if not evaluated.
    Each peer is compared on the sets both it and lmu_sk completed."""
    out = []
    for peer, pair in summary["pairwise"].items():
        mine, theirs = pair["mean_harmonic_mean"]
        win, tie, loss = pair["win_tie_loss"]
        where = f"(the {pair['n_sets']} sets both completed)"
        out.append(
            (
                f"mean harmonic mean above {peer}'s {where}",
                None if theirs is None or mine is None else mine > theirs,
            )
        )
        total = win + tie + loss
        out.append(
            (
                f"better than {peer} on >= 2/3 of the sets {where}",
                None if not total else win >= SHARE_BETTER * total,
            )
        )
    ratio = summary["pairwise"].get("TEASER", {}).get("fit_ratio")
    out.append(
        (
            f"fit time <= {FIT_RATIO}x TEASER's (the sets both completed)",
            None if ratio is None else ratio <= FIT_RATIO,
        )
    )
    gap = summary["full_accuracy"]["largest_gap"]
    out.append(
        (
            f"full-length accuracy within {100 * FULL_GAP:.1f} point of LMUClassifier()'s",
            None if gap is None else gap <= FULL_GAP,
        )
    )
    out.append(("no set failing", not summary["failed"][ours]))
    return out


def _cell(value, width: int, fmt: str) -> str:
    return ("-" if value is None else format(value, fmt)).rjust(width)


def training_size(paths: dict) -> int:
    """``n_train x longest length x channels`` of a set's training split (``--quick``)."""
    X, _ = bench_tsc.read_split(paths["TRAIN"])
    return len(X) * max(x.shape[-1] for x in X) * X[0].shape[0]


def quick_selection(sets: dict, n_sets: int) -> dict:
    """The ``n_sets`` sets of the smallest :func:`training_size`, smallest first."""
    ranked = sorted(sets, key=lambda name: (training_size(sets[name]), name))
    return {name: sets[name] for name in ranked[:n_sets]}


def run_accuracy(
    sets: dict, models: dict, clock: str, seed: int, budget_s: float | None = None
) -> list[dict]:
    started = time.perf_counter()
    labels = list(models)
    names = [m[:8] for m in labels]
    print(
        f"{'set':<30s}"
        + f" {'harmonic mean':^{9 * len(labels)}s} {'accuracy':^{9 * len(labels)}s}"
        + f" {'earliness':^{9 * len(labels)}s} {'fit s':^{9 * len(labels)}s}"
        + f" {'predict s':^{9 * len(labels)}s} {'full':>6s} {'LMUC':>6s}"
    )
    print(f"{'':<30s}" + "".join(f" {n:>8s}" for n in names) * 5, flush=True)
    rows = []
    for index, (name, paths) in enumerate(sets.items()):
        if budget_s is not None and time.perf_counter() - started > budget_s:
            left = list(sets)[index:]
            print(f"time budget spent: {len(left)} set(s) not run ({', '.join(left)})")
            break
        data = bench_tsc.load_set(paths)
        X, y, X_test, _ = data
        info, results = run_set(index, data, models, clock, seed)
        rows.append(
            {
                "set": name,
                "n_train": len(X),
                "n_test": len(X_test),
                "n_classes": len(np.unique(y)),
                **info,
                "models": results,
            }
        )
        line = f"{name[:30]:<30s}"
        for key, fmt in (
            ("harmonic_mean", ".4f"),
            ("accuracy", ".4f"),
            ("earliness", ".4f"),
            ("fit_s", ".2f"),
            ("predict_s", ".2f"),
        ):
            line += "".join(f" {_cell(results[m].get(key), 8, fmt)}" for m in labels)
        line += f" {_cell(results[REFERENCE].get('full_accuracy'), 6, '.4f')}"
        line += f" {_cell(info.get('lmu_classifier_accuracy'), 6, '.4f')}"
        print(line, flush=True)
        for m, result in results.items():
            if "error" in result:
                print(f"    {m} failed: {result['error']}", flush=True)
    return rows


def print_summary(summary: dict, labels: list[str], clock: str) -> None:
    ours = labels[0]
    print(
        f"\nsummary over the {summary['n_complete']} of {summary['n_sets']} sets every model "
        f"completed ({clock} seconds):"
    )
    for m in labels:
        mean, total = summary["mean"][m], summary["total_seconds"][m]
        print(
            f"  {m:<14s} mean harmonic mean {_cell(mean['harmonic_mean'], 6, '.4f')}  "
            f"accuracy {_cell(mean['accuracy'], 6, '.4f')}  earliness "
            f"{_cell(mean['earliness'], 6, '.4f')}  fit {total['fit_s']:9.1f} s  predict "
            f"{total['predict_s']:8.1f} s"
            + (f"  failed on {', '.join(summary['failed'][m])}" if summary["failed"][m] else "")
        )
    for peer in labels[1:]:
        win, tie, loss = summary["win_tie_loss"][peer]
        print(
            f"  {ours} vs {peer}: {win} wins / {tie} ties / {loss} losses (harmonic mean); "
            f"fit time ratio {_cell(summary['fit_ratio'][peer], 6, '.3f')}, predict "
            f"{_cell(summary['predict_ratio'][peer], 6, '.3f')}"
        )
    for peer, pair in summary["pairwise"].items():
        mine, theirs = pair["mean_harmonic_mean"]
        win, tie, loss = pair["win_tie_loss"]
        print(
            f"  {ours} vs {peer} on the {pair['n_sets']} sets both completed: mean harmonic "
            f"mean {_cell(mine, 6, '.4f')} vs {_cell(theirs, 6, '.4f')}, {win} wins / {tie} "
            f"ties / {loss} losses, fit time ratio {_cell(pair['fit_ratio'], 6, '.3f')}"
        )
    full = summary["full_accuracy"]
    gap = None if full["largest_gap"] is None else 100 * full["largest_gap"]
    print(
        "  at full length: the early classifier's estimator_ "
        f"{_cell(full['early_classifier'], 6, '.4f')}, LMUClassifier() "
        f"{_cell(full['LMUClassifier'], 6, '.4f')} (largest gap on a set "
        f"{_cell(gap, 4, '.2f')} pt)"
    )
    for text, met in targets(summary, ours):
        verdict = "not evaluated" if met is None else ("met" if met else "NOT met")
        print(f"  target: {text}: {verdict}")


# ---------------------------------------------------------------------------------- speed


def speed(sets: dict, n_streams: int, repeats: int, seed: int) -> dict:
    """Per-step seconds of 1 000 streams with and without the decisions (interleaved)."""
    from lmu_sk import LMUClassifier, LMUEarlyClassifier

    warnings.filterwarnings("ignore")
    if sets:
        name, paths = next(iter(sets.items()))
        X, y, _, _ = bench_tsc.load_set(paths)
        X = bench_tsc.for_lmu(X)
        if isinstance(X, list):
            raise SystemExit(f"--part speed needs a set of equal lengths; {name} is not")
    else:
        name = "synthetic"
        rng = np.random.default_rng(seed)
        y = np.arange(100) % 2
        X = rng.standard_normal((100, 150)) + y[:, None] * (np.arange(150) < 40)
    model = LMUEarlyClassifier(LMUClassifier(random_state=seed)).fit(X, y)
    n_steps = int(model.checkpoints_[-1])
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(X), n_streams)
    U = np.asarray(X[rows], dtype=np.float64)
    U = U + 0.01 * rng.standard_normal(U.shape)
    checkpoints = set(int(c) for c in model.checkpoints_)
    # the same model deciding nothing before the end: every case is read and judged at
    # every checkpoint, so its checkpoint steps carry the whole cost of a decision
    undecided = copy.copy(model)
    undecided.threshold_ = np.inf
    makers = {
        "update": model.estimator_.stream,
        "predict": model.estimator_.stream,
        "early": model.stream,
        "undecided": undecided.stream,
    }
    best: dict[str, float] = {}
    for _ in range(repeats):
        for kind, make in makers.items():
            gc.collect()
            stream = make(n_streams)
            per_step = np.empty(n_steps)
            for t in range(n_steps):
                step = U[:, t]
                start = time.perf_counter()
                stream.update(step)
                if kind == "predict" and t + 1 in checkpoints:
                    stream.predict_proba()  # what the plain stream says at the checkpoints
                per_step[t] = time.perf_counter() - start
            crossing = np.array([t + 1 in checkpoints for t in range(n_steps)])
            for key, value in (
                (f"{kind}_mean", per_step.mean()),
                (f"{kind}_plain_step", np.median(per_step[~crossing])),
                (f"{kind}_checkpoint_step", np.median(per_step[crossing])),
            ):
                best[key] = min(best.get(key, np.inf), float(value))
    ratio = best["early_mean"] / best["update_mean"]
    checkpoint_ratio = best["early_checkpoint_step"] / best["update_plain_step"]
    print(
        f"{n_streams} streams of a model fitted on {name} ({len(model.checkpoints_)} checkpoints "
        f"over {n_steps} steps), one step per update, best of {repeats}:"
    )
    print(
        f"  ClassifierStream.update (features only): {1e3 * best['update_mean']:.2f} ms per step"
    )
    print(
        f"  EarlyClassifierStream.update (deciding at the checkpoints): "
        f"{1e3 * best['early_mean']:.2f} ms per step, {ratio:.2f}x; an ordinary step "
        f"{1e3 * best['early_plain_step']:.2f} ms, a step that crosses a checkpoint "
        f"{1e3 * best['early_checkpoint_step']:.2f} ms ({checkpoint_ratio:.1f}x an update)"
    )
    decision_ratio = best["undecided_checkpoint_step"] / best["update_checkpoint_step"]
    print(
        f"  every case undecided until the end (threshold inf): a step that crosses a "
        f"checkpoint {1e3 * best['undecided_checkpoint_step']:.2f} ms (the plain stream's "
        f"same step {1e3 * best['update_checkpoint_step']:.2f} ms: {decision_ratio:.2f}x), "
        f"{1e3 * best['undecided_mean']:.2f} ms per step on average "
        f"({best['undecided_mean'] / best['update_mean']:.2f}x)"
    )
    predict_ratio = best["undecided_checkpoint_step"] / best["predict_checkpoint_step"]
    print(
        f"  the plain stream's update and predict_proba at a checkpoint: "
        f"{1e3 * best['predict_checkpoint_step']:.2f} ms (the decision step {predict_ratio:.2f}x)"
    )
    for text, value in (
        ("the stream with decisions", ratio),
        ("a decision step, every case undecided,", decision_ratio),
    ):
        met = "met" if value <= STEP_RATIO else "NOT met"
        print(f"  target: {text} <= {STEP_RATIO}x the update per step: {met}")
    return {
        "set": name,
        "n_streams": n_streams,
        "n_steps": n_steps,
        **best,
        "ratio": ratio,
        "decision_ratio": decision_ratio,
        "decision_to_predict_ratio": predict_ratio,
    }


# ----------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "data_dir",
        metavar="DATA_DIR",
        help="folder of classification sets, or 'aeon': the held-out sets aeon ships "
        "(see bench_tsc.py)",
    )
    parser.add_argument("--sets", nargs="+", metavar="NAME", help="run only these sets")
    parser.add_argument(
        "--peers",
        nargs="*",
        choices=list(PEERS),
        default=list(PEERS),
        metavar="NAME",
        help=f"aeon early classifiers to compare with, of {', '.join(PEERS)} (default: both)",
    )
    parser.add_argument("--part", choices=("accuracy", "speed"), default="accuracy")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--seed", type=int, default=0, help="random_state of every model")
    parser.add_argument("--n-streams", type=int, default=1000, help="--part speed: streams")
    parser.add_argument("--repeats", type=int, default=3, help="--part speed: runs, best kept")
    parser.add_argument(
        "--quick",
        type=int,
        metavar="N",
        help="only the N sets of the smallest n_train x length x channels, smallest first",
    )
    parser.add_argument(
        "--budget-minutes",
        type=float,
        metavar="M",
        help="start no set after M minutes of wall time",
    )
    parser.add_argument("--json", metavar="OUT", help="save settings, per-set rows, summary")
    args = parser.parse_args(argv)

    try:
        args.data_dir, sets = bench_tsc.classification_sets(args.data_dir)
    except (ValueError, bench_tsc.SetUnavailable) as error:
        parser.error(str(error))
    if args.sets:
        unknown = sorted(set(args.sets) - set(sets))
        if unknown:
            parser.error(f"unknown sets {unknown}; known: {sorted(sets)}")
        sets = {name: paths for name, paths in sets.items() if name in args.sets}
    if args.quick is not None:
        if args.quick < 1:
            parser.error("--quick needs a positive number of sets")
        sets = quick_selection(sets, args.quick)
        print(f"quick selection (smallest training sets first): {', '.join(sets)}")
    if not sets:
        parser.error(f"no <Name>/<Name>_{{TRAIN,TEST}}.<ext> sets in {args.data_dir!r}")
    pinned = bench_tsc._pin_one_cpu()
    import lmu_sk

    settings = {
        "lmu_sk": lmu_sk.__version__,
        "python": sys.version.split()[0],
        "process": pinned,
        "clock": args.clock,
        "seed": args.seed,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }
    out: dict = {"settings": settings}
    warnings.filterwarnings("ignore")
    if args.part == "speed":
        print(f"lmu_sk {settings['lmu_sk']}, one thread, {pinned}")
        out["speed"] = speed(sets, args.n_streams, args.repeats, args.seed)
    else:
        import aeon

        settings["aeon"] = aeon.__version__
        print(
            f"lmu_sk {settings['lmu_sk']}: LMUEarlyClassifier() with random_state={args.seed}; "
            f"aeon {settings['aeon']}'s defaults with n_jobs=1, random_state={args.seed}; one "
            f"thread each, {pinned}; {args.clock} seconds after an untimed warm-up"
        )
        print(
            "earliness: steps seen when deciding over the series' own length; unequal lengths: "
            "aeon's models get the series zero-padded (their earliness counts min(point, "
            "length))"
        )
        models = make_models(args.peers, args.seed)
        seconds = warm_up(models, args.clock)
        print("warm-up (not counted): " + ", ".join(f"{m} {s:.1f} s" for m, s in seconds.items()))
        print(f"\nsets from {args.data_dir}:", flush=True)
        budget = None if args.budget_minutes is None else 60.0 * args.budget_minutes
        rows = run_accuracy(sets, models, args.clock, args.seed, budget)
        summary = summarise(rows, list(models))
        print_summary(summary, list(models), args.clock)
        out["rows"], out["summary"] = rows, summary
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(out, file, indent=1, default=bench_tsc._json_default)
        print(f"\nsaved to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
