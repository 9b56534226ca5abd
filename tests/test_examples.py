"""The example scripts run end to end on small settings."""

import functools
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(script: str, argv: list[str], monkeypatch) -> dict:
    monkeypatch.setattr(sys, "argv", [script, *argv])
    return runpy.run_path(str(EXAMPLES / script), run_name="example")


def test_mackey_glass_example_learns_to_forecast(monkeypatch, capsys, tmp_path):
    main = _run("mackey_glass.py", [], monkeypatch)["main"]
    argv = ["--sequences", "8", "--length", "600", "--epochs", "30", "--batch-size", "64"]
    out = ["--out", str(tmp_path)] if _has_matplotlib() else []
    score = main([*argv, "--lr", "0.01", *out])
    # a trained forecaster beats predicting zero (NRMSE 1) by far even on this small run
    assert score < 0.5
    assert "test NRMSE" in capsys.readouterr().out
    if out:  # the gallery's figure of the forecast
        assert (tmp_path / "mackey_glass.png").stat().st_size > 10_000


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_figures_example_writes_pngs(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    main = _run("figures.py", [], monkeypatch)["main"]
    paths = main(["--out", str(tmp_path)])
    assert [p.name for p in paths] == [
        "legendre_basis.png",
        "delay_decoding.png",
        "learning_curve.png",
    ]
    assert all(p.stat().st_size > 10_000 for p in paths)


@pytest.mark.slow
def test_streaming_example_classifies_online_as_in_batch(tmp_path, monkeypatch):
    main = _run("streaming.py", [], monkeypatch)["main"]
    argv = ["--epochs", "30", "--prefixes", "3", "--out", str(tmp_path)]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        argv.append("--no-plot")
    result = main(argv)
    # float32 stream and batch agree to rounding (see tests/models/test_streaming.py)
    assert result["difference"] < 2e-5
    accuracy = result["accuracy"]
    assert accuracy[-1] > 0.85 and accuracy[-1] > accuracy[0] + 0.5
    if "--no-plot" not in argv:
        assert (tmp_path / "streaming_digits.png").stat().st_size > 10_000


STORED_TEASER = Path(__file__).resolve().parents[1] / "docs" / "gallery" / "teaser_gunpoint.json"


def _no_teaser(*args, **kwargs):
    raise AssertionError("TEASER ran although its run was stored")


def test_early_classification_example_decides_gunpoint_early(monkeypatch, capsys):
    pytest.importorskip("aeon")
    from aeon.classification import early_classification

    monkeypatch.setattr(early_classification, "TEASER", _no_teaser)
    main = _run("early_classification.py", [], monkeypatch)["main"]
    # the gallery's TEASER run, read from where the documentation stores it
    result = main(["--no-plot", "--teaser-run", str(STORED_TEASER)])
    # the stored run is TEASER's on GunPoint's 150 test series: it decides every case by
    # the end and is right on most (0.5 would be chance)
    teaser = result["curves"]["TEASER"]
    assert teaser["decided"][-1] == 1.0 and 0.5 < result["results"]["TEASER"][1] <= 1.0
    printed = capsys.readouterr().out
    assert "the run stored in teaser_gunpoint.json" in printed and "harmonic mean" in printed
    harmonic, accuracy, earliness = result["results"]["lmu_sk"]
    curve = result["curves"]["lmu_sk"]
    # GunPoint's classes part within the first half of the series (0.87 accurate at 40 %
    # with LMUClassifier() alone): the early classifier decides most cases before the
    # middle and is still right on about 9 in 10
    assert accuracy > 0.85 and earliness < 0.5 and harmonic > 0.7
    assert curve["decided"][-1] == 1.0 and np.all(np.diff(curve["decided"]) >= 0)


@pytest.mark.slow
def test_early_classification_example_draws_lmu_sk_beside_teaser(monkeypatch, tmp_path):
    pytest.importorskip("aeon")
    pytest.importorskip("matplotlib")
    from aeon.classification import early_classification
    from aeon.classification.interval_based import TimeSeriesForestClassifier

    # TEASER's defaults take two minutes on GunPoint (the gallery reads their run stored
    # in docs/gallery/teaser_gunpoint.json): a lighter TEASER checks the example
    lighter = functools.partial(
        early_classification.TEASER,
        classification_points=list(range(15, 151, 15)),
        estimator=TimeSeriesForestClassifier(n_estimators=20, random_state=0),
    )
    monkeypatch.setattr(early_classification, "TEASER", lighter)
    main = _run("early_classification.py", [], monkeypatch)["main"]
    stored = tmp_path / "teaser.json"
    result = main(["--out", str(tmp_path), "--teaser-run", str(stored)])
    assert set(result["curves"]) == {"lmu_sk", "TEASER"}
    teaser = result["curves"]["TEASER"]
    # TEASER decides every case by the end of the series; its accuracy counts the decided
    assert teaser["decided"][-1] == 1.0 and np.all(np.diff(teaser["decided"]) >= 0)
    assert 0.5 < result["results"]["TEASER"][1] <= 1.0
    assert (tmp_path / "early_classification.png").stat().st_size > 10_000
    # the run written is read back, and TEASER is not trained again
    monkeypatch.setattr(early_classification, "TEASER", _no_teaser)
    again = main(["--no-plot", "--teaser-run", str(stored)])
    assert again["results"]["TEASER"] == result["results"]["TEASER"]
    np.testing.assert_array_equal(again["curves"]["TEASER"]["steps"], teaser["steps"])


@pytest.mark.parametrize("extra", [[], ["--n-heads", "3", "--schedule", "cosine"]])
def test_psmnist_example_reports_validation_and_test_on_the_permutation_asked(
    extra, tmp_path, monkeypatch, capsys
):
    from test_datasets import write_fake_mnist

    from lmu_sk import datasets

    write_fake_mnist(tmp_path, n_train=60, n_test=20, rows=8, cols=8)
    seeds = []

    def recording_loader(*args, permutation_seed=50, **kwargs):
        seeds.append(permutation_seed)
        return load(*args, permutation_seed=permutation_seed, **kwargs)

    load = datasets.load_psmnist
    monkeypatch.setattr(datasets, "load_psmnist", recording_loader)
    main = _run("psmnist.py", [], monkeypatch)["main"]
    argv = ["--data", str(tmp_path), "--permutation-seed", "7", "--order", "8", "--theta", "64"]
    argv += ["--hidden", "8", "--epochs", "3", "--batch-size", "10", "--quiet", *extra]
    val_accuracy, test_accuracy = main(argv)
    out = capsys.readouterr().out
    assert seeds == [7]
    assert "permutation seed 7: 50 train / 10 validation / 20 test" in out
    # the accuracies printed are the ones returned: 10 validation and 20 test sequences
    assert f"validation accuracy: {val_accuracy:.4f}" in out
    assert f"test accuracy: {test_accuracy:.4f}" in out
    assert val_accuracy * 10 == pytest.approx(round(val_accuracy * 10))
    assert test_accuracy * 20 == pytest.approx(round(test_accuracy * 20))
    assert "(8 internal variables)" in out and "162 parameters" in out  # 8*8+8 + 8*10+10
    # with 3 heads, the ensemble of the first 2 is printed too (the full one is the result)
    assert ("heads 0-1 averaged: validation accuracy" in out) == bool(extra)
