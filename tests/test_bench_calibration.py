"""The calibration benchmark's arithmetic and a run on tiny hand-made sets."""

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

FOLDER = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(FOLDER))  # it imports bench_tsc from its folder
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_calibration", FOLDER / "bench_calibration.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(FOLDER))
    return module


def test_expected_calibration_error_by_hand(bench):
    proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.45, 0.55]])
    y = np.array(["a", "b", "b", "a"])
    # confidences 0.9, 0.8, 0.7, 0.55 in bins 14, 12, 11 (10/15 < 0.7 <= 11/15) and 9;
    # correct: yes, no, yes, no
    expected = (abs(1 - 0.9) + abs(0 - 0.8) + abs(1 - 0.7) + abs(0 - 0.55)) / 4
    assert bench.expected_calibration_error(y, proba, ["a", "b"]) == pytest.approx(expected)
    # two rows in one bin: |mean correct - mean confidence| weighted by 2 of 2
    same_bin = np.array([[0.9, 0.1], [0.1, 0.9]])
    ece = bench.expected_calibration_error(["a", "a"], same_bin, ["a", "b"])
    assert ece == pytest.approx(abs(0.5 - 0.9))
    # perfectly confident and right: 0
    assert bench.expected_calibration_error(["a"], np.array([[1.0, 0.0]]), ["a", "b"]) == 0.0


def test_summary_counts_the_sets_of_lower_log_loss(bench):
    def row(lmu, logistic):
        return {
            "LMU": {"accuracy": 0.9, "log_loss": lmu, "ece": 0.1},
            "LogisticRegression": {"accuracy": 0.8, "log_loss": logistic, "ece": 0.2},
        }

    rows = [row(0.2, 0.3), row(0.5, 0.4), row(0.1, 0.6), {"error": "ValueError: boom"}]
    summary = bench.summarise(rows[:3])
    assert summary["models"] == ["LMU", "LogisticRegression"]
    assert summary["LMU log loss below LogisticRegression's"] == 2
    assert summary["LMU mean log_loss"] == pytest.approx(0.8 / 3)
    # a failed set leaves the model out of the comparison of every set
    assert bench.summarise(rows)["models"] == []


def _tsv(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")


def test_a_run_on_tiny_sets(bench, tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(0)
    for split, n in (("TRAIN", 24), ("TEST", 12)):
        labels = np.arange(n) % 2
        series = np.cumsum(rng.standard_normal((n, 30)), axis=1) + 3 * labels[:, None]
        rows = [[c, *x] for c, x in zip(labels, series, strict=True)]
        _tsv(tmp_path / "Toy" / f"Toy_{split}.tsv", rows)
    monkeypatch.setitem(sys.modules, "aeon", None)  # MiniRocket left out, as without aeon
    out = tmp_path / "out.json"
    assert bench.main([str(tmp_path), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "MiniRocket: aeon is not installed" in printed
    result = json.loads(out.read_text())
    (row,) = result["rows"]
    for model in ("LMU", "LogisticRegression"):
        assert 0 <= row[model]["ece"] <= 1 and 0 <= row[model]["accuracy"] <= 1
        assert math.isfinite(row[model]["log_loss"]) and row[model]["log_loss"] >= 0
    assert "target: LMU's log loss below LogisticRegression's on most sets" in printed
