"""The early classification benchmark's arithmetic, its quick selection and a run on tiny
hand-made sets."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

FOLDER = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(FOLDER))  # it imports bench_tsc from its folder
    try:
        spec = importlib.util.spec_from_file_location("bench_early", FOLDER / "bench_early.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(FOLDER))
    return module


def _result(harmonic, fit_s=1.0, **more):
    return {
        "harmonic_mean": harmonic,
        "accuracy": 0.9,
        "earliness": 0.3,
        "fit_s": fit_s,
        "predict_s": 0.1,
        **more,
    }


def test_each_peer_is_compared_on_the_sets_both_completed(bench):
    failed = {"error": "ValueError: boom"}
    rows = [
        {
            "set": "A",
            "lmu_classifier_accuracy": 0.9,
            "models": {
                "LMU": _result(0.8, 1.0, full_accuracy=0.9),
                "TEASER": _result(0.7, 10.0),
                "ProbThreshold": failed,
            },
        },
        {
            "set": "B",
            "lmu_classifier_accuracy": 0.8,
            "models": {
                "LMU": _result(0.6, 1.0, full_accuracy=0.8),
                "TEASER": failed,
                "ProbThreshold": _result(0.9, 4.0),
            },
        },
        {
            "set": "C",
            "lmu_classifier_accuracy": 0.7,
            "models": {
                "LMU": _result(0.9, 2.0, full_accuracy=0.7),
                "TEASER": _result(0.5, 10.0),
                "ProbThreshold": _result(0.9, 4.0),
            },
        },
    ]
    summary = bench.summarise(rows, ["LMU", "TEASER", "ProbThreshold"])
    assert summary["n_complete"] == 1  # C alone has every model
    teaser, prob = summary["pairwise"]["TEASER"], summary["pairwise"]["ProbThreshold"]
    assert teaser["n_sets"] == 2 and teaser["win_tie_loss"] == (2, 0, 0)
    assert teaser["mean_harmonic_mean"] == pytest.approx((0.85, 0.6))
    assert teaser["fit_ratio"] == pytest.approx(3.0 / 20.0)
    assert prob["n_sets"] == 2 and prob["win_tie_loss"] == (0, 1, 1)
    assert prob["mean_harmonic_mean"] == pytest.approx((0.75, 0.9))
    assert summary["full_accuracy"]["largest_gap"] == 0.0  # every set lmu_sk completed
    met = dict(bench.targets(summary))
    assert met["mean harmonic mean above TEASER's (the 2 sets both completed)"] is True
    assert (
        met["better than ProbThreshold on >= 2/3 of the sets (the 2 sets both completed)"] is False
    )
    assert met["fit time <= 0.2x TEASER's (the sets both completed)"] is True


def _tsv(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")


def _toy_set(folder: Path, name: str, n_train: int, n_steps: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for split, n in (("TRAIN", n_train), ("TEST", 12)):
        labels = np.arange(n) % 2
        series = rng.standard_normal((n, n_steps)) + 2.0 * labels[:, None] * (
            np.arange(n_steps) < n_steps // 3
        )
        rows = [[c, *x] for c, x in zip(labels, series, strict=True)]
        _tsv(folder / name / f"{name}_{split}.tsv", rows)


def test_quick_selection_takes_the_smallest_training_sets_first(bench, tmp_path):
    _toy_set(tmp_path, "Long", 20, 90)  # 1 800
    _toy_set(tmp_path, "Many", 60, 20)  # 1 200
    _toy_set(tmp_path, "Small", 20, 30)  # 600
    sets = bench.bench_tsc.find_sets(tmp_path)
    assert list(bench.quick_selection(sets, 2)) == ["Small", "Many"]
    assert list(bench.quick_selection(sets, 5)) == ["Small", "Many", "Long"]


def test_a_run_of_lmu_sk_alone_on_a_tiny_set(bench, tmp_path, capsys):
    pytest.importorskip("aeon")  # the accuracy part reports aeon's version
    _toy_set(tmp_path, "Toy", 30, 36)
    _toy_set(tmp_path, "Other", 40, 36, seed=1)
    out = tmp_path / "out.json"
    argv = [str(tmp_path), "--peers", "--quick", "1", "--json", str(out)]
    assert bench.main(argv) == 0
    printed = capsys.readouterr().out
    assert "quick selection (smallest training sets first): Toy" in printed
    (row,) = json.loads(out.read_text())["rows"]
    result = row["models"]["LMU"]
    assert row["set"] == "Toy" and 0 <= result["earliness"] <= 1
    # its classes part in the first third: decided early, mostly right
    assert result["accuracy"] >= 0.75 and result["earliness"] < 0.9
    assert result["full_accuracy"] == row["lmu_classifier_accuracy"]
