"""Time-series classification and regression: lmu_sk's defaults against aeon's convolution models.

``LMUClassifier()`` is compared with aeon's ``MiniRocketClassifier`` and
``MultiRocketHydraClassifier`` on every development set in ``DATA_DIR``, in one run,
interleaved set by set (the models take turns, starting with a different one each set, so
a change in the machine's load falls on all of them). ``LMURegressor()`` is compared with
aeon's ``MiniRocketRegressor`` on the regression sets that aeon ships (Covid3Month,
CardanoSentiment) and on Tecator when sktime, which ships it, is installed. Nothing is
downloaded.

``DATA_DIR`` holds one folder per set, ``<Name>/<Name>_{TRAIN,TEST}.<ext>`` with ``<ext>``
one of ``tsv`` (UCR 2018: the label, then the values, tab-separated; shorter series padded
with trailing ``NaN``), ``ts`` or ``arff`` (UEA, read by aeon), each optionally ``.gz``.
``DATA_DIR`` ``aeon`` (no such folder in the working directory) runs the held-out check:
the classification sets that aeon ships and that no default of lmu_sk was chosen on
(:data:`HELD_OUT_SETS`), read from aeon's own data folder; with ``--sets``, any
classification set aeon ships (``aeon --sets JapaneseVowels --peers MiniRocket``: a
multivariate development set, judged within a point of MiniRocket). Where ``DATA_DIR``
holds ``published_accuracy.csv`` (published official-split accuracies, one column per
method), the development targets are printed after the summary: the mean over every set
run, the mean over the sets with every method's figure against HC2's plus half a point,
and each set with HC2's figure alone against it.

Every model runs on one thread: ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
``MKL_NUM_THREADS`` and ``NUMBA_NUM_THREADS`` are set to 1 before NumPy, Numba or torch
load, aeon's models get ``n_jobs=1``, and the process is pinned to one CPU (Linux). Times
are fit + predict seconds of process CPU time by default (the time of every thread of the
process; ``--clock wall`` for wall-clock seconds), after an untimed warm-up fit of each
model on small synthetic sets, so Numba compilation is not counted. Log losses come from
``predict_proba``, called after the timed predict and not timed; probabilities are clipped
to ``[1e-15, 1 - 1e-15]`` and renormalised, as scikit-learn's ``log_loss`` did with its
``eps``.

Unequal-length sets go to lmu_sk as lists of ``(n_steps_i, n_channels)`` arrays. aeon 1.6's
convolution models do not take unequal lengths, so they get the series zero-padded at the
end to the longest series of the set (training and test split together, so that no test
series is cut).

    pip install ".[bench]"     # aeon, torch (aeon's Hydra), sktime (Tecator)
    # without a GPU, first: pip install torch --index-url https://download.pytorch.org/whl/cpu
    python benchmarks/bench_tsc.py DATA_DIR
    python benchmarks/bench_tsc.py DATA_DIR --sets Car ERing --peers MiniRocket --json out.json
    python benchmarks/bench_tsc.py --regression-only
    python benchmarks/bench_tsc.py aeon --classification-only --peers MiniRocket

``--baseline DIR`` compares this checkout's ``LMUClassifier()`` with another version's
instead (a checkout in ``DIR``, e.g. ``git worktree add /tmp/v020 v0.2.0``): each set is run
in fresh processes, alternating the two versions, ``--repeats`` times; the best seconds of
the features (fit + transform of the training set, transform of the test set, with the
fitted classifier's feature parameters) and of the whole fit + predict are printed with
their ratio. With ``--variant``, both versions run ``LMUClassifier`` with its parameters
(e.g. ``--variant kernel=auto``).

``--repeats R`` (without ``--baseline``) runs the whole interleaved classification comparison
``R`` times in the one process and prints, after the first run's table and summary, each
later run's table, then every run's time ratio against each peer and their median (the
time target judged on the median too): on a shared machine the ratio of one run moves by
several hundredths.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)

if __name__ == "__main__":
    # one thread per model: the thread pools read these when NumPy, Numba and torch load
    for _variable in THREAD_VARIABLES:
        os.environ[_variable] = "1"

import argparse  # noqa: E402
import ast  # noqa: E402
import csv  # noqa: E402
import gc  # noqa: E402
import gzip  # noqa: E402
import importlib  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REFERENCE = "LMU"
CLASSIFIERS = {
    "MiniRocket": ("aeon.classification.convolution_based", "MiniRocketClassifier"),
    "MultiRocket-Hydra": ("aeon.classification.convolution_based", "MultiRocketHydraClassifier"),
    "MultiRocket": ("aeon.classification.convolution_based", "MultiRocketClassifier"),
    "Hydra": ("aeon.classification.convolution_based", "HydraClassifier"),
    "QUANT": ("aeon.classification.interval_based", "QUANTClassifier"),
}
DEFAULT_PEERS = ("MiniRocket", "MultiRocket-Hydra")
REGRESSORS = {"MiniRocket": ("aeon.regression.convolution_based", "MiniRocketRegressor")}
REGRESSION_SETS = ("Covid3Month", "CardanoSentiment", "Tecator")
SPLITS = ("TRAIN", "TEST")
EXTENSIONS = (".tsv", ".ts", ".arff")
# DATA_DIR 'aeon': the classification sets aeon ships that no default of lmu_sk was chosen
# on, a held-out check (JapaneseVowels was a development set of the multivariate targets;
# UnitTest is a slice of Chinatown, not a published split)
AEON_DATA = "aeon"
HELD_OUT_SETS = (
    "ACSF1",
    "ArrowHead",
    "BasicMotions",
    "GunPoint",
    "ItalyPowerDemand",
    "OSULeaf",
    "PickupGestureWiimoteZ",
)
EPS = 1e-15
BEHIND = 0.03  # accuracy gap to MiniRocket that counts a set as "behind"
TIME_TARGET = 0.7  # lmu_sk's fit + predict CPU time over MiniRocket's, at most
TIE = 1e-12  # accuracies closer than this are equal (the same count of correct cases)
# The development targets, judged where DATA_DIR holds PUBLISHED (published official-split
# accuracies: a column per method, HC2's first): the mean over every set run at least
# DEVELOPMENT_MEAN; on the sets with every method's figure (the UCR sets) a mean at least
# HC2's there plus HC2_MARGIN; at least HC2's on each set with HC2's figure alone (UEA
# multivariate sets); JapaneseVowels (aeon's, DATA_DIR 'aeon') within
# JAPANESE_VOWELS_GAP of MiniRocket in the same run.
PUBLISHED = "published_accuracy.csv"
DEVELOPMENT_MEAN = 0.87
HC2_MARGIN = 0.005
JAPANESE_VOWELS_GAP = 0.01


# ---------------------------------------------------------------------------------- data


class SetUnavailable(Exception):
    """A set that cannot be loaded here (a package that ships it is missing)."""


def find_sets(data_dir: str | Path) -> dict[str, dict[str, Path]]:
    """The sets in ``data_dir``: ``{name: {"TRAIN": path, "TEST": path}}``, sorted by name.

    A set is a folder ``<Name>`` holding ``<Name>_TRAIN`` and ``<Name>_TEST`` files in one of
    the formats ``.tsv``, ``.ts`` or ``.arff``, each optionally gzip-compressed (``.gz``).
    Both splits are read in the first of those formats that holds both (the formats of one
    set may spell its labels differently: aeon's BasicMotions has 'Standing' in its
    ``.arff`` training split, 'standing' in its ``.ts`` files), else each in the first
    format it has.
    """
    found = {}
    for folder in sorted(Path(data_dir).iterdir(), key=lambda p: p.name):
        if not folder.is_dir():
            continue
        # per format, each split's file (the plain one where it is also compressed)
        files: dict[str, dict[str, Path]] = {ext: {} for ext in EXTENSIONS}
        for ext in EXTENSIONS:
            for split in SPLITS:
                for suffix in (ext, ext + ".gz"):
                    path = folder / f"{folder.name}_{split}{suffix}"
                    if path.is_file():
                        files[ext][split] = path
                        break
        whole = [paths for paths in files.values() if len(paths) == len(SPLITS)]
        if whole:
            found[folder.name] = whole[0]
            continue
        first = {
            split: next((paths[split] for paths in files.values() if split in paths), None)
            for split in SPLITS
        }
        if all(first.values()):
            found[folder.name] = first
    return found


def aeon_data_dir() -> Path:
    """The folder of the data sets aeon ships (``DATA_DIR`` 'aeon'); a ``SetUnavailable``
    without aeon."""
    try:
        import aeon.datasets
    except ImportError as error:
        raise SetUnavailable(
            "DATA_DIR 'aeon' needs aeon, which ships its sets (pip install aeon)"
        ) from error
    return Path(aeon.datasets.__file__).parent / "data"


def held_out_sets(folder: str | Path) -> dict[str, dict[str, Path]]:
    """The sets of :data:`HELD_OUT_SETS` in aeon's data ``folder``, in that order."""
    found = find_sets(folder)
    return {name: found[name] for name in HELD_OUT_SETS if name in found}


def classification_sets(
    data_dir: str, names: Sequence[str] | None = None
) -> tuple[str, dict[str, dict[str, Path]]]:
    """The folder and the sets ``DATA_DIR`` names: a folder of sets (:func:`find_sets`), or
    ``'aeon'`` where no such folder is in the working directory (the held-out sets of aeon's
    data folder, :func:`held_out_sets`; with ``names``, any set of that folder, e.g.
    JapaneseVowels). A ``ValueError`` where it names no folder, a ``SetUnavailable`` for
    'aeon' without aeon."""
    held_out = data_dir == AEON_DATA and not Path(data_dir).is_dir()
    if held_out:
        data_dir = str(aeon_data_dir())
    if not Path(data_dir).is_dir():
        raise ValueError(f"DATA_DIR {data_dir!r} is not a folder")
    if held_out and not names:
        return data_dir, held_out_sets(data_dir)
    found = find_sets(data_dir)
    if held_out:  # aeon's regression sets are read as such (--regression-only)
        found = {name: paths for name, paths in found.items() if name not in REGRESSION_SETS}
    return data_dir, found


def read_published(data_dir: str | Path) -> dict[str, dict[str, float]]:
    """``{set: {method: accuracy}}`` from ``DATA_DIR``'s :data:`PUBLISHED` (a ``set``
    column, then one column per method, a ``note`` column aside; empty or non-numeric cells
    skipped, as are cells beyond the header's columns); ``{}`` where there is none. A
    ``ValueError`` where the file has no ``set`` column."""
    path = Path(data_dir) / PUBLISHED
    if not path.is_file():
        return {}
    published = {}
    # utf-8-sig: a spreadsheet's byte-order mark is not part of the first column's name
    with open(path, newline="", encoding="utf-8-sig") as file:
        reader = csv.DictReader(file)
        if "set" not in (reader.fieldnames or []):
            raise ValueError(f"{path} has no 'set' column (its columns: {reader.fieldnames})")
        for record in reader:
            figures = {}
            for method, cell in record.items():
                if method in (None, "set", "note") or not isinstance(cell, str):
                    continue
                try:
                    figures[method] = float(cell)
                except ValueError:
                    continue
            published[record["set"]] = figures
    return published


def development_targets(
    rows: list[dict], published: dict[str, dict[str, float]], ours: str = REFERENCE
) -> tuple[list[str], list[tuple[str, bool | None]]]:
    """``(lines, targets)``: the published comparison and the development targets of
    ``ours`` (see :data:`DEVELOPMENT_MEAN`) over the sets of ``rows`` it completed."""
    accuracy = {r["set"]: r["models"][ours]["accuracy"] for r in rows if _ok(r, ours, "accuracy")}
    lines: list[str] = []
    targets: list[tuple[str, bool | None]] = []
    if published and accuracy:
        mean = float(np.mean(list(accuracy.values())))
        targets.append(
            (
                f"mean accuracy over the {len(accuracy)} sets >= {DEVELOPMENT_MEAN:.4f} "
                f"({mean:.4f})",
                mean >= DEVELOPMENT_MEAN - TIE,
            )
        )
        methods = max((list(f) for f in published.values()), key=len, default=[])
        full = [s for s in accuracy if s in published and len(published[s]) == len(methods)]
        if full and methods:
            means = {m: float(np.mean([published[s][m] for s in full])) for m in methods}
            ours_mean = float(np.mean([accuracy[s] for s in full]))
            lines.append(
                f"  the {len(full)} sets with every published figure: {ours} {ours_mean:.4f}; "
                + ", ".join(f"{m} {v:.4f}" for m, v in means.items())
            )
            if "HC2" in means:
                goal = means["HC2"] + HC2_MARGIN
                targets.append(
                    (
                        f"mean accuracy over those {len(full)} sets >= HC2's + "
                        f"{HC2_MARGIN:g} = {goal:.4f} ({ours_mean:.4f})",
                        ours_mean >= goal - TIE,
                    )
                )
        alone = [s for s in accuracy if set(published.get(s, ())) == {"HC2"}]
        for s in alone:
            hc2 = published[s]["HC2"]
            targets.append(
                (f"{s} >= HC2's published {hc2:.4f} ({accuracy[s]:.4f})", accuracy[s] >= hc2 - TIE)
            )
    for r in rows:
        if r["set"] == "JapaneseVowels" and r["set"] in accuracy:
            rocket = r["models"].get("MiniRocket", {}).get("accuracy")
            gap = None if rocket is None else rocket - accuracy[r["set"]]
            targets.append(
                (
                    f"JapaneseVowels within {100 * JAPANESE_VOWELS_GAP:.0f} point of MiniRocket "
                    f"({accuracy[r['set']]:.4f} against "
                    f"{'-' if rocket is None else format(rocket, '.4f')})",
                    None if gap is None else gap <= JAPANESE_VOWELS_GAP + TIE,
                )
            )
    return lines, targets


def _text(path: Path) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as file:
        return file.read()


def read_tsv(text: str) -> tuple[list[np.ndarray], np.ndarray]:
    """UCR 2018 ``.tsv`` text: the series, each ``(1, n_steps_i)`` without its trailing NaN."""
    X, y = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        label, *values = line.rstrip("\r\n").split("\t")
        x = np.asarray(values, dtype=np.float64)
        observed = np.flatnonzero(~np.isnan(x))
        X.append(x[: observed[-1] + 1 if observed.size else 0][None])
        y.append(label.strip())
    return X, np.asarray(y)


def read_split(path: str | Path) -> tuple[list[np.ndarray], np.ndarray]:
    """One split's series as ``(n_channels, n_steps_i)`` float64 arrays, and its labels."""
    path = Path(path)
    name = path.name.removesuffix(".gz")
    if name.endswith(".tsv"):
        return read_tsv(_text(path))
    from aeon.datasets import load_from_arff_file, load_from_ts_file

    load = load_from_ts_file if name.endswith(".ts") else load_from_arff_file
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / name
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as source, open(plain, "wb") as target:
                shutil.copyfileobj(source, target)
        else:
            shutil.copyfile(path, plain)
        X, y = load(str(plain))
    return [np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1]) for x in X], np.asarray(y)


def load_set(paths: dict[str, Path]) -> tuple:
    """``(X_train, y_train, X_test, y_test)`` of a set found by :func:`find_sets`."""
    X, y = read_split(paths["TRAIN"])
    X_test, y_test = read_split(paths["TEST"])
    return X, y, X_test, y_test


def load_regression_set(name: str) -> tuple:
    """``(X_train, y_train, X_test, y_test)`` of a regression set an installed package ships."""
    if name == "Tecator":
        try:
            from sktime.datasets import load_tecator
        except ImportError as error:
            raise SetUnavailable("needs sktime, which ships it (pip install sktime)") from error

        def split(part):
            return load_tecator(split=part, return_X_y=True, return_type="numpy3D")

    else:
        from aeon.datasets import load_regression

        def split(part):
            return load_regression(name, split=part)

    X, y = split("train")
    X_test, y_test = split("test")
    cases = [np.asarray(x, dtype=np.float64) for x in X]
    test_cases = [np.asarray(x, dtype=np.float64) for x in X_test]
    return cases, np.asarray(y, dtype=np.float64), test_cases, np.asarray(y_test, np.float64)


def describe(X: list[np.ndarray], X_test: list[np.ndarray]) -> dict:
    """Channels and the shortest and longest series of a set (both splits)."""
    lengths = [x.shape[-1] for x in (*X, *X_test)]
    return {
        "n_channels": int(X[0].shape[0]),
        "min_length": min(lengths),
        "max_length": max(lengths),
    }


def for_lmu(X: list[np.ndarray]):
    """``(n_channels, n_steps)`` cases in lmu_sk's layout.

    Equal lengths: ``(n_cases, n_steps)`` for one channel, ``(n_cases, n_steps, n_channels)``
    for several; unequal lengths: a list of ``(n_steps_i, n_channels)`` arrays.
    """
    if len({x.shape[-1] for x in X}) == 1:
        stacked = np.stack(X).transpose(0, 2, 1)
        return stacked[:, :, 0].copy() if stacked.shape[2] == 1 else stacked.copy()
    return [np.ascontiguousarray(x.T) for x in X]


def for_aeon(X: list[np.ndarray], n_steps: int) -> np.ndarray:
    """``(n_cases, n_channels, n_steps)``: each case zero-padded at its end (or cut)."""
    out = np.zeros((len(X), X[0].shape[0], n_steps))
    for row, x in zip(out, X, strict=True):
        row[:, : min(n_steps, x.shape[-1])] = x[:, :n_steps]
    return out


# -------------------------------------------------------------------------------- models


def log_loss_clipped(y_true: Sequence, proba: np.ndarray, classes: Sequence) -> float:
    """Mean negative log probability of the true class.

    Probabilities are clipped to ``[EPS, 1 - EPS]`` (``EPS = 1e-15``) and each row is
    renormalised, as scikit-learn's ``log_loss`` did with its ``eps``; a true class the model
    never saw gets probability ``EPS``.
    """
    proba = np.clip(np.asarray(proba, dtype=np.float64), EPS, 1 - EPS)
    proba /= proba.sum(axis=1, keepdims=True)
    column = {label: j for j, label in enumerate(np.asarray(classes).tolist())}
    p = [
        proba[i, column[label]] if label in column else EPS
        for i, label in enumerate(np.asarray(y_true).tolist())
    ]
    return float(-np.mean(np.log(p)))


def aeon_factory(module: str, name: str, seed: int) -> Callable[[], object]:
    """A function making aeon's ``name`` with ``random_state=seed`` and ``n_jobs=1``."""
    cls = getattr(importlib.import_module(module), name)
    params = {"random_state": seed}
    if "n_jobs" in inspect.signature(cls).parameters:
        params["n_jobs"] = 1
    return lambda: cls(**params)


def make_models(
    peers: Sequence[str], seed: int, regression: bool = False, variant: dict | None = None
) -> dict:
    """``{label: factory}`` for lmu_sk's default model, its ``variant`` (parameters that
    differ from the defaults, as a second lmu_sk model) and the available peers.

    A peer that cannot be made here (aeon's Hydra needs torch) is left out with a message.
    """
    from lmu_sk import LMUClassifier, LMURegressor

    lmu = LMURegressor if regression else LMUClassifier
    models = {REFERENCE: lambda: lmu(random_state=seed)}
    if variant:
        models[variant_label(variant)] = lambda: lmu(random_state=seed, **variant)
    registry = REGRESSORS if regression else CLASSIFIERS
    for peer in peers:
        if peer not in registry:
            continue
        try:
            factory = aeon_factory(*registry[peer], seed)
            factory()
        except (ImportError, ModuleNotFoundError) as error:
            reason = str(error).splitlines()[0].split(". ")[0]
            print(f"{peer}: not available, left out ({reason})", flush=True)
            continue
        models[peer] = factory
    return models


def is_lmu(label: str) -> bool:
    """Whether a column is lmu_sk's (the default or its variant): it takes lmu_sk's input
    layout, and its log loss is reported."""
    return label == REFERENCE or label.startswith(REFERENCE + "-")


def variant_label(variant: dict) -> str:
    """The column label of an lmu_sk variant: 'LMU-' and its parameters' values."""
    return "LMU-" + "-".join(str(value) for value in variant.values())


def _variant_first(labels: list[str], variant: dict) -> list[str]:
    """The labels with the variant's first and the default's left out: the variant's
    summary against the peers."""
    own = variant_label(variant)
    return [own] + [label for label in labels if label not in (REFERENCE, own)]


def parse_variant(pairs: Sequence[str]) -> dict:
    """``KEY=VALUE`` pairs as parameters: each value a Python literal where it is one
    (``kernel=rbf`` -> ``'rbf'``, ``order=4`` -> ``4``)."""
    variant = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--variant takes KEY=VALUE pairs; got {pair!r}.")
        try:
            variant[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            variant[key] = text
    return variant


def fit_predict(
    make: Callable[[], object],
    X,
    y: np.ndarray,
    X_test,
    y_test: np.ndarray,
    proba: bool,
    regression: bool = False,
) -> dict:
    """Fit and predict one model, timed; the score; the log loss (untimed) if ``proba``.

    An exception becomes ``{"error": ...}``: a failing set is reported, never fatal.
    """
    gc.collect()
    result: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = make()
            cpu, wall = time.process_time(), time.perf_counter()
            model.fit(X, y)
            predicted = model.predict(X_test)
            result["cpu_s"] = time.process_time() - cpu
            result["wall_s"] = time.perf_counter() - wall
            if regression:
                error = np.asarray(predicted, dtype=np.float64) - y_test
                result["rmse"] = float(np.sqrt(np.mean(error**2)))
                if not np.isfinite(result["rmse"]):
                    raise ValueError("non-finite predictions")
            else:
                result["accuracy"] = float(np.mean(np.asarray(predicted) == y_test))
                if proba:
                    probabilities = model.predict_proba(X_test)
                    result["log_loss"] = log_loss_clipped(y_test, probabilities, model.classes_)
        except Exception as error:  # a failure is a result of the benchmark
            result = {"error": f"{type(error).__name__}: {error}".splitlines()[0][:300]}
    result["warnings"] = sorted({str(w.message).splitlines()[0][:200] for w in caught})
    return result


def warm_up(models: dict, regression: bool = False) -> dict[str, float]:
    """Untimed first fits on small synthetic sets (compilation); seconds per model.

    One channel and three channels of equal length for all; unequal lengths for lmu_sk too,
    which takes them as lists. A model that fails here is dropped.
    """
    rng = np.random.default_rng(0)
    y = np.arange(24) % 2 if not regression else rng.standard_normal(24)
    sets = [
        [rng.standard_normal((1, 60)) for _ in range(24)],
        [rng.standard_normal((3, 60)) for _ in range(24)],
    ]
    ragged = [
        [rng.standard_normal((1, 30 + i)) for i in range(24)],
        [rng.standard_normal((3, 30 + i)) for i in range(24)],
    ]
    seconds = {}
    for label in list(models):
        start = time.perf_counter()
        for X in sets + (ragged if is_lmu(label) else []):
            X_fit = for_lmu(X) if is_lmu(label) else for_aeon(X, 60)
            result = fit_predict(models[label], X_fit, y, X_fit, y, True, regression)
            if "error" in result:
                print(f"{label}: failed its warm-up, left out ({result['error']})", flush=True)
                del models[label]
                break
        seconds[label] = time.perf_counter() - start
    return seconds


# ------------------------------------------------------------------------------- summary


def mean_ranks(accuracy: np.ndarray) -> np.ndarray:
    """Mean rank of each column of ``accuracy`` (sets x models); 1 is best, ties averaged."""
    from scipy.stats import rankdata

    accuracy = np.asarray(accuracy, dtype=np.float64)
    if accuracy.size == 0:
        return np.full(accuracy.shape[1] if accuracy.ndim == 2 else 0, np.nan)
    rounded = np.round(accuracy / TIE) * TIE  # equal counts of correct cases tie exactly
    return rankdata(-rounded, method="average", axis=1).mean(axis=0)


def win_tie_loss(ours: Sequence[float], theirs: Sequence[float]) -> tuple[int, int, int]:
    """Sets on which ``ours`` is higher, equal (within ``TIE``), lower than ``theirs``."""
    diff = np.asarray(ours, dtype=np.float64) - np.asarray(theirs, dtype=np.float64)
    return int(np.sum(diff > TIE)), int(np.sum(np.abs(diff) <= TIE)), int(np.sum(diff < -TIE))


def _ok(row: dict, model: str, key: str) -> bool:
    return row["models"].get(model, {}).get(key) is not None


def summarise_classification(rows: list[dict], models: Sequence[str], clock: str = "cpu") -> dict:
    """The summary of per-set rows, over the sets that every model completed.

    Each row is ``{"set": name, "models": {label: {"accuracy", "cpu_s", "wall_s",
    "log_loss"?, "error"?}}}``; ``models[0]`` is lmu_sk's, compared with every other.
    """
    ours, peers = models[0], list(models[1:])
    complete = [r for r in rows if all(_ok(r, m, "accuracy") for m in models)]
    accuracy = np.array([[r["models"][m]["accuracy"] for m in models] for r in complete])
    accuracy = accuracy.reshape(len(complete), len(models))
    seconds = {m: sum(r["models"][m][f"{clock}_s"] for r in complete) for m in models}
    summary: dict = {
        "n_sets": len(rows),
        "n_complete": len(complete),
        "clock": clock,
        "failed": {
            m: [r["set"] for r in rows if "error" in r["models"].get(m, {})] for m in models
        },
        "mean_accuracy": {
            m: float(np.mean(accuracy[:, j])) if complete else None for j, m in enumerate(models)
        },
        "mean_rank": dict(zip(models, map(float, mean_ranks(accuracy)), strict=True)),
        "total_seconds": seconds,
        "mean_log_loss": {},
        "win_tie_loss": {},
        "time_ratio": {},
        "behind": {},
    }
    for m in models:
        losses = [r["models"][m]["log_loss"] for r in complete if _ok(r, m, "log_loss")]
        if complete and len(losses) == len(complete):
            summary["mean_log_loss"][m] = float(np.mean(losses))
    for j, peer in enumerate(peers, start=1):
        summary["win_tie_loss"][peer] = win_tie_loss(accuracy[:, 0], accuracy[:, j])
        summary["time_ratio"][peer] = seconds[ours] / seconds[peer] if seconds[peer] else None
        gap = accuracy[:, j] - accuracy[:, 0]
        summary["behind"][peer] = [
            r["set"] for r, g in zip(complete, gap, strict=True) if g > BEHIND + TIE
        ]
    return summary


def classification_targets(summary: dict, ours: str = REFERENCE) -> list[tuple[str, bool | None]]:
    """The targets for lmu_sk's defaults: ``(text, met)``, ``met`` None if not evaluated."""
    mean, ratio = summary["mean_accuracy"], summary["time_ratio"]
    hydra, rocket = "MultiRocket-Hydra", "MiniRocket"
    return [
        (
            f"mean accuracy >= {hydra}'s",
            None if mean.get(hydra) is None or mean[ours] is None else mean[ours] >= mean[hydra],
        ),
        (
            f"total fit + predict time <= {TIME_TARGET}x {rocket}'s",
            None if ratio.get(rocket) is None else ratio[rocket] <= TIME_TARGET,
        ),
        ("no set failing", not summary["failed"][ours]),
        (
            f"no set more than {100 * BEHIND:.0f} points behind {rocket}",
            None if rocket not in summary["behind"] else not summary["behind"][rocket],
        ),
    ]


def summarise_regression(rows: list[dict], models: Sequence[str], clock: str = "cpu") -> dict:
    """Per-model totals and the geometric-mean RMSE ratio of ``models[0]`` to each other."""
    ours = models[0]
    complete = [r for r in rows if all(_ok(r, m, "rmse") for m in models)]
    summary: dict = {
        "n_sets": len(rows),
        "n_complete": len(complete),
        "clock": clock,
        "failed": {
            m: [r["set"] for r in rows if "error" in r["models"].get(m, {})] for m in models
        },
        "total_seconds": {m: sum(r["models"][m][f"{clock}_s"] for r in complete) for m in models},
        "geo_mean_rmse_ratio": {},
    }
    for peer in models[1:]:
        ratios = [r["models"][ours]["rmse"] / r["models"][peer]["rmse"] for r in complete]
        summary["geo_mean_rmse_ratio"][peer] = (
            float(np.exp(np.mean(np.log(ratios)))) if ratios else None
        )
    return summary


def regression_targets(summary: dict, ours: str = REFERENCE) -> list[tuple[str, bool | None]]:
    """``(text, met)`` for the regression targets, ``met`` None if not evaluated."""
    ratio = summary["geo_mean_rmse_ratio"].get("MiniRocket")
    return [
        ("geometric-mean RMSE <= MiniRocketRegressor's", None if ratio is None else ratio <= 1),
        ("no set failing", not summary["failed"][ours]),
    ]


def print_targets(targets: list[tuple[str, bool | None]]) -> None:
    for text, met in targets:
        verdict = (
            "not evaluated (a model was not run)" if met is None else ("met" if met else "NOT met")
        )
        print(f"  target: {text}: {verdict}")


# --------------------------------------------------------------------------------- runs


def _order(models: list[str], index: int) -> list[str]:
    shift = index % len(models)
    return models[shift:] + models[:shift]


def _cell(value: float | None, width: int, fmt: str) -> str:
    return ("-" if value is None else format(value, fmt)).rjust(width)


def _run_set(index: int, data: tuple, models: dict, proba=(), regression=False) -> tuple:
    """``(info, results)`` of one set: every model fitted and predicted in turn, the first
    one rotated by ``index``; lmu_sk gets its layout, aeon the zero-padded arrays."""
    X, y, X_test, y_test = data
    info = describe(X, X_test)
    lmu_data = for_lmu(X), for_lmu(X_test)
    aeon_data = for_aeon(X, info["max_length"]), for_aeon(X_test, info["max_length"])
    results = {}
    for label in _order(list(models), index):
        X_fit, X_pred = lmu_data if is_lmu(label) else aeon_data
        results[label] = fit_predict(
            models[label], X_fit, y, X_pred, y_test, label in proba, regression
        )
    return info, {m: results[m] for m in models}


def _print_failures(results: dict) -> None:
    for m, result in results.items():
        if "error" in result:
            print(f"    {m} failed: {result['error']}", flush=True)


def run_classification(sets: dict, models: dict, clock: str) -> list[dict]:
    labels = list(models)
    with_proba = [m for m in labels if is_lmu(m) or m == "MiniRocket"]
    short = {"MultiRocket-Hydra": "MR-Hydra"}
    names = [short.get(m, m)[:10] for m in labels]
    gap = "MiniRocket" in labels
    print(
        f"{'':<30s} {'accuracy':^{11 * len(labels)}s}{'  pts' if gap else ''}"
        f" {f'fit+predict {clock} s':^{9 * len(labels)}s} {'log loss':^{9 * len(with_proba)}s}"
    )
    print(
        f"{'set':<30s}"
        + "".join(f" {n:>10s}" for n in names)
        + (f" {'vs MR':>6s}" if gap else "")
        + "".join(f" {n[:8]:>8s}" for n in names)
        + "".join(f" {short.get(m, m)[:8]:>8s}" for m in with_proba),
        flush=True,
    )
    rows = []
    for index, (name, paths) in enumerate(sets.items()):
        data = load_set(paths)
        X, y, X_test, _ = data
        info, results = _run_set(index, data, models, proba=with_proba)
        row = {
            "set": name,
            "n_train": len(X),
            "n_test": len(X_test),
            "n_classes": len(np.unique(y)),
            **info,
            "models": results,
        }
        rows.append(row)
        acc = {m: results[m].get("accuracy") for m in labels}
        diff = (
            None
            if not gap or acc[REFERENCE] is None or acc["MiniRocket"] is None
            else 100 * (acc[REFERENCE] - acc["MiniRocket"])
        )
        print(
            f"{name[:30]:<30s}"
            + "".join(f" {_cell(acc[m], 10, '.4f')}" for m in labels)
            + (f" {_cell(diff, 6, '+.1f')}" if gap else "")
            + "".join(f" {_cell(results[m].get(f'{clock}_s'), 8, '.2f')}" for m in labels)
            + "".join(f" {_cell(results[m].get('log_loss'), 8, '.3f')}" for m in with_proba),
            flush=True,
        )
        _print_failures(results)
    return rows


def repeated_time_ratios(summaries: Sequence[dict]) -> dict:
    """Per peer, the time ratios of repeated runs (lmu_sk's seconds over the peer's, one
    per run's summary, ``None`` where a peer took no time) and their median over the
    known ones (``None`` if none)."""
    ratios: dict = {}
    for peer in summaries[0]["time_ratio"]:
        each = [summary["time_ratio"][peer] for summary in summaries]
        known = [r for r in each if r is not None]
        ratios[peer] = {"ratios": each, "median": float(np.median(known)) if known else None}
    return ratios


def print_repeated_time_ratios(ratios: dict, ours: str, targets: bool = True) -> None:
    """Each run's time ratio of ``ours`` to every peer and their median, and (``targets``)
    the time target met or not by the median against MiniRocket."""
    for peer, figures in ratios.items():
        each = ", ".join(_cell(r, 4, ".2f") for r in figures["ratios"])
        print(
            f"  time ratio {ours}/{peer} over {len(figures['ratios'])} runs: {each}; median "
            f"{_cell(figures['median'], 4, '.2f')}"
        )
    rocket = ratios.get("MiniRocket")
    if rocket is not None and targets:
        median = rocket["median"]
        print_targets(
            [
                (
                    f"median total fit + predict time <= {TIME_TARGET}x MiniRocket's",
                    None if median is None else median <= TIME_TARGET,
                )
            ]
        )


def print_classification_summary(summary: dict, labels: list[str]) -> None:
    ours = labels[0]
    print(
        f"\nsummary over the {summary['n_complete']} of {summary['n_sets']} sets every model "
        f"completed ({summary['clock']} seconds of fit + predict):"
    )
    for m in labels:
        loss = summary["mean_log_loss"].get(m)
        mean = summary["mean_accuracy"][m]
        print(
            f"  {m:<18s} mean accuracy {_cell(mean, 6, '.4f')}  mean rank "
            f"{_cell(summary['mean_rank'][m], 4, '.2f')}  "
            f"total {summary['total_seconds'][m]:8.1f} s"
            + ("" if loss is None else f"  mean log loss {loss:.3f}")
            + (f"  failed on {', '.join(summary['failed'][m])}" if summary["failed"][m] else "")
        )
    for peer in labels[1:]:
        win, tie, loss = summary["win_tie_loss"][peer]
        ratio = summary["time_ratio"][peer]
        behind = summary["behind"][peer]
        print(
            f"  {ours} vs {peer}: {win} wins / {tie} ties / {loss} losses; time ratio "
            f"{ours}/{peer} {_cell(ratio, 5, '.2f')}; {len(behind)} sets more than "
            f"{100 * BEHIND:.0f} points behind" + (f" ({', '.join(behind)})" if behind else "")
        )
    print_targets(classification_targets(summary, ours))


def print_development_targets(
    rows: list[dict], published: dict[str, dict[str, float]], ours: str
) -> None:
    """The lines and targets of :func:`development_targets`, where there are any."""
    lines, targets = development_targets(rows, published, ours)
    if lines or targets:
        print(f"  development targets of {ours}" + (f" ({PUBLISHED})" if published else "") + ":")
    for line in lines:
        print(line)
    print_targets(targets)


def run_regression(names: Sequence[str], models: dict, clock: str) -> list[dict]:
    labels = list(models)
    print(
        f"{'set':<30s}"
        + "".join(f" {'RMSE ' + m:>16s}" for m in labels)
        + "".join(f" {m[:10] + ' s':>12s}" for m in labels),
        flush=True,
    )
    rows = []
    for index, name in enumerate(names):
        try:
            X, y, X_test, y_test = load_regression_set(name)
        except SetUnavailable as reason:
            print(f"{name:<30s} skipped: {reason}", flush=True)
            continue
        except Exception as error:  # e.g. a set the installed aeon does not ship
            print(f"{name:<30s} skipped: {type(error).__name__}: {error}", flush=True)
            continue
        info, results = _run_set(index, (X, y, X_test, y_test), models, regression=True)
        rows.append(
            {"set": name, "n_train": len(X), "n_test": len(X_test), **info, "models": results}
        )
        print(
            f"{name:<30s}"
            + "".join(f" {_cell(results[m].get('rmse'), 16, '.4g')}" for m in labels)
            + "".join(f" {_cell(results[m].get(f'{clock}_s'), 12, '.2f')}" for m in labels),
            flush=True,
        )
        _print_failures(results)
    return rows


def print_regression_summary(summary: dict, labels: list[str]) -> None:
    ours = labels[0]
    print(f"\nsummary over the {summary['n_complete']} of {summary['n_sets']} sets run:")
    for m in labels:
        failed = summary["failed"][m]
        print(
            f"  {m:<18s} total {summary['total_seconds'][m]:8.1f} s"
            + (f"  failed on {', '.join(failed)}" if failed else "")
        )
    for peer, ratio in summary["geo_mean_rmse_ratio"].items():
        print(f"  geometric-mean RMSE ratio {ours}/{peer}: {_cell(ratio, 6, '.3f')}")
    print_targets(regression_targets(summary, ours))


def _pin_one_cpu() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def _settings(args: argparse.Namespace, pinned: str) -> dict:
    import aeon
    from _timing import blas_in_use  # (beside this script: run as one, it is on the path)

    import lmu_sk

    threads = ", ".join(f"{v}={os.environ.get(v, 'unset')}" for v in THREAD_VARIABLES)
    return {
        "lmu_sk": lmu_sk.__version__,
        "aeon": aeon.__version__,
        "python": sys.version.split()[0],
        "threads": threads,
        "blas": blas_in_use(),
        "process": pinned,
        "clock": args.clock,
        "seed": args.seed,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "cpu_count": os.cpu_count(),
    }


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# ----------------------------------------------------------------------- --baseline mode


def _lmu_only(paths: dict[str, Path], variant: dict | None = None) -> dict:
    """Seconds of ``LMUClassifier(**variant)`` and of its features on one set (child
    process)."""
    from lmu_sk import LMUClassifier

    warnings.filterwarnings("ignore")
    X_warm = np.random.default_rng(0).standard_normal((20, 50))
    LMUClassifier().fit(X_warm, np.arange(20) % 2).predict(X_warm)  # compile or load
    X, y, X_test, y_test = load_set(paths)
    X, X_test = for_lmu(X), for_lmu(X_test)
    start = time.perf_counter()
    model = LMUClassifier(random_state=0, **(variant or {})).fit(X, y)
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    seconds = time.perf_counter() - start
    features = type(model.features_)(**model.features_.get_params())
    start = time.perf_counter()
    features.fit_transform(X)
    features.transform(X_test)
    return {"accuracy": accuracy, "seconds": seconds, "features": time.perf_counter() - start}


def compare(
    data_dir: str,
    sets: Sequence[str],
    baseline: str,
    repeats: int,
    variant_args: Sequence[str] = (),
) -> int:
    """This checkout against the lmu_sk in ``baseline``, set by set, in fresh processes
    (both running ``LMUClassifier`` with the ``--variant`` arguments ``variant_args``)."""
    here = str(Path(__file__).resolve().parents[1])
    versions = {"this checkout": here, f"baseline {baseline}": str(Path(baseline).resolve())}
    model = "LMUClassifier(" + ", ".join(variant_args) + ")"
    print(f"{model} in both versions")
    print(
        f"{'set':<30s} {'version':<34s} {'accuracy':>8s} {'features s':>10s} "
        f"{'fit+predict s':>13s}"
    )
    ratios = []
    for name in sets:
        best: dict[str, dict] = {}
        for _ in range(repeats):
            for version, path in versions.items():
                env = {**os.environ, "PYTHONPATH": path, "PYTHONWARNINGS": "ignore"}
                child = subprocess.run(
                    [sys.executable, __file__, data_dir, "--child", name]
                    + (["--variant", *variant_args] if variant_args else []),
                    env=env,
                    capture_output=True,
                    text=True,
                )
                if child.returncode:
                    raise SystemExit(
                        f"{model} on {name} failed in {version} ({path}):\n"
                        + "\n".join(child.stderr.strip().splitlines()[-5:])
                    )
                out = child.stdout
                result = json.loads(out.strip().splitlines()[-1])
                old = best.get(version, result)
                best[version] = {
                    "accuracy": result["accuracy"],
                    "seconds": min(old["seconds"], result["seconds"]),
                    "features": min(old["features"], result["features"]),
                }
        for version, result in best.items():
            print(
                f"{name[:30]:<30s} {version:<34s} {result['accuracy']:8.4f} "
                f"{result['features']:10.2f} {result['seconds']:13.2f}",
                flush=True,
            )
        new, old = best.values()
        ratios.append((old["features"] / new["features"], old["seconds"] / new["seconds"]))
    features = float(np.exp(np.mean(np.log([r[0] for r in ratios]))))
    whole = float(np.exp(np.mean(np.log([r[1] for r in ratios]))))
    print(
        f"speed of this checkout over the baseline (geometric mean): features {features:.2f}x, "
        f"fit + predict {whole:.2f}x (wall seconds, best of {repeats})"
    )
    print(
        f"  target: features no slower than the baseline: {'met' if features >= 1 else 'NOT met'}"
    )
    return 0


# ---------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Set names: the folders of DATA_DIR, and " + ", ".join(REGRESSION_SETS) + ".",
    )
    parser.add_argument(
        "data_dir",
        nargs="?",
        metavar="DATA_DIR",
        help="folder of classification sets (<Name>/<Name>_{TRAIN,TEST}.<ext>), or 'aeon': "
        "the sets aeon ships that no default was chosen on (" + ", ".join(HELD_OUT_SETS) + ")",
    )
    parser.add_argument("--sets", nargs="+", metavar="NAME", help="run only these sets")
    parser.add_argument(
        "--peers",
        nargs="+",
        choices=list(CLASSIFIERS),
        default=list(DEFAULT_PEERS),
        metavar="NAME",
        help=f"aeon classifiers to compare with, of {', '.join(CLASSIFIERS)} "
        f"(default: {' '.join(DEFAULT_PEERS)})",
    )
    parser.add_argument("--json", metavar="OUT", help="save settings, per-set rows and summaries")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--classification-only", action="store_true")
    only.add_argument("--regression-only", action="store_true")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="process CPU seconds (default) or wall-clock seconds",
    )
    parser.add_argument("--seed", type=int, default=0, help="random_state of every model")
    parser.add_argument(
        "--variant",
        nargs="+",
        metavar="KEY=VALUE",
        help="also run lmu_sk with these parameters (e.g. kernel=rbf), in the same run",
    )
    parser.add_argument(
        "--baseline", metavar="DIR", help="another lmu_sk checkout to compare with"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        help="runs of the whole classification comparison, each run's time ratios and "
        "their median printed (default 1); with --baseline: runs per version and set "
        "(default 2)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        variant = parse_variant(args.variant or [])
    except ValueError as error:
        parser.error(str(error))

    classification = not args.regression_only
    sets: dict[str, dict[str, Path]] = {}
    if classification or args.baseline or args.child:
        if args.data_dir is None:
            parser.error("DATA_DIR is required (or --regression-only)")
        try:
            args.data_dir, sets = classification_sets(args.data_dir, args.sets)
        except (ValueError, SetUnavailable) as error:
            parser.error(str(error))
        if not sets:
            parser.error(f"no <Name>/<Name>_{{TRAIN,TEST}}.<ext> sets in {args.data_dir!r}")
    if args.sets:
        unknown = sorted(set(args.sets) - set(sets) - set(REGRESSION_SETS))
        if unknown:
            parser.error(f"unknown sets {unknown}; known: {sorted(sets) + list(REGRESSION_SETS)}")
        sets = {name: paths for name, paths in sets.items() if name in args.sets}
    regression_sets = [s for s in REGRESSION_SETS if not args.sets or s in args.sets]
    if args.child:
        print(json.dumps(_lmu_only(sets[args.child], variant)))
        return 0
    if args.repeats is not None and args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.baseline:
        return compare(
            args.data_dir, list(sets), args.baseline, args.repeats or 2, args.variant or ()
        )

    warnings.filterwarnings("ignore")
    settings = _settings(args, _pin_one_cpu())
    print(
        f"lmu_sk {settings['lmu_sk']}: LMUClassifier() / LMURegressor() defaults with "
        f"random_state={args.seed}; aeon {settings['aeon']} with n_jobs=1, "
        f"random_state={args.seed}"
    )
    print(
        f"one thread each: {settings['threads']} before imports, aeon's n_jobs=1; "
        f"process {settings['process']}"
    )
    print(settings["blas"])
    clock = "process CPU" if args.clock == "cpu" else "wall-clock"
    print(
        f"times: {clock} seconds of fit + predict, after an untimed warm-up fit of each model "
        "(Numba compilation excluded); log loss from predict_proba, untimed, clipped at 1e-15"
    )
    print(
        "unequal lengths: lmu_sk gets lists of (n_steps_i, n_channels) arrays; aeon's models "
        "get the series zero-padded at the end to the set's longest (train and test)"
    )
    out: dict = {"settings": settings}

    if classification and sets:
        models = make_models(args.peers, args.seed, variant=variant)
        seconds = warm_up(models)
        print("warm-up (not counted): " + ", ".join(f"{m} {s:.1f} s" for m, s in seconds.items()))
        print(f"\nclassification, sets from {args.data_dir}:", flush=True)
        rows = run_classification(sets, models, args.clock)
        summary = summarise_classification(rows, list(models), args.clock)
        print_classification_summary(summary, list(models))
        published = read_published(args.data_dir)
        print_development_targets(rows, published, REFERENCE)
        out["classification"] = {"rows": rows, "summary": summary}
        if variant:  # the variant against the peers, as the default above
            labels = _variant_first(list(models), variant)
            variant_summary = summarise_classification(rows, labels, args.clock)
            print_classification_summary(variant_summary, labels)
            print_development_targets(rows, published, labels[0])
            out["classification"]["variant_summary"] = variant_summary
        summaries = [summary]
        variant_summaries = [variant_summary] if variant else []
        for run in range(2, (args.repeats or 1) + 1):
            print(f"\nclassification, run {run} of {args.repeats}:", flush=True)
            more = run_classification(sets, models, args.clock)
            summaries.append(summarise_classification(more, list(models), args.clock))
            if variant:
                variant_summaries.append(summarise_classification(more, labels, args.clock))
        if len(summaries) > 1:
            ratios = repeated_time_ratios(summaries)
            print(f"\nover the {len(summaries)} runs:")
            print_repeated_time_ratios(ratios, next(iter(models)))
            out["classification"]["repeats"] = {"summaries": summaries, "time_ratios": ratios}
            if variant:  # the variant's ratios to the peers, run by run, and their medians
                variant_ratios = repeated_time_ratios(variant_summaries)
                print_repeated_time_ratios(variant_ratios, labels[0], targets=False)
                out["classification"]["repeats"]["variant_time_ratios"] = variant_ratios
    elif classification:
        print("\nclassification: no selected set")

    if not args.classification_only and regression_sets:
        models = make_models(["MiniRocket"], args.seed, regression=True, variant=variant)
        seconds = warm_up(models, regression=True)
        print(
            "\nregression warm-up (not counted): "
            + ", ".join(f"{m} {s:.1f} s" for m, s in seconds.items())
        )
        rows = run_regression(regression_sets, models, args.clock)
        summary = summarise_regression(rows, list(models), args.clock)
        print_regression_summary(summary, list(models))
        out["regression"] = {"rows": rows, "summary": summary}
        if variant:
            labels = _variant_first(list(models), variant)
            summary = summarise_regression(rows, labels, args.clock)
            print_regression_summary(summary, labels)
            out["regression"]["variant_summary"] = summary

    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(out, file, indent=1, default=_json_default)
        print(f"\nrows saved to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
