"""The classification benchmark's loaders and summary arithmetic, on tiny hand-made data."""

import gzip
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_tsc.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_tsc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(path: Path, text: str, compress: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if compress:
        with gzip.open(path.with_name(path.name + ".gz"), "wt", encoding="utf-8") as file:
            file.write(text)
    else:
        path.write_text(text, encoding="utf-8")


TS = """@problemName Two
@timeStamps false
@missing false
@univariate false
@dimensions 2
@equalLength true
@seriesLength 3
@classLabel true a b
@data
1,2,3:4,5,6:a
7,8,9:10,11,12:b
"""


@pytest.fixture
def data_dir(tmp_path):
    # unequal lengths, padded with trailing NaN as UCR 2018 writes them
    _write(tmp_path / "Ragged" / "Ragged_TRAIN.tsv", "1\t1.0\t2.0\tNaN\n2\t3.0\t4.0\t5.0\n", True)
    _write(tmp_path / "Ragged" / "Ragged_TEST.tsv", "2\t6.0\tNaN\tNaN\n", True)
    _write(tmp_path / "Two" / "Two_TRAIN.ts", TS, False)
    _write(tmp_path / "Two" / "Two_TEST.ts", TS, True)
    _write(tmp_path / "Half" / "Half_TRAIN.tsv", "1\t1.0\n", False)  # no TEST: not a set
    (tmp_path / "notes.txt").write_text("not a set")
    return tmp_path


def test_finds_and_loads_the_sets(bench, data_dir):
    sets = bench.find_sets(data_dir)
    assert list(sets) == ["Ragged", "Two"]
    X, y, X_test, y_test = bench.load_set(sets["Ragged"])
    assert [x.tolist() for x in X] == [[[1.0, 2.0]], [[3.0, 4.0, 5.0]]]
    assert y.tolist() == ["1", "2"] and y_test.tolist() == ["2"]
    assert [x.tolist() for x in X_test] == [[[6.0]]]
    assert bench.describe(X, X_test) == {"n_channels": 1, "min_length": 1, "max_length": 3}
    # lmu_sk gets (n_steps_i, n_channels) sequences; aeon's models zeros at the end
    assert [x.shape for x in bench.for_lmu(X)] == [(2, 1), (3, 1)]
    np.testing.assert_array_equal(bench.for_aeon(X, 3), [[[1, 2, 0]], [[3, 4, 5]]])
    np.testing.assert_array_equal(bench.for_aeon(X, 2), [[[1, 2]], [[3, 4]]])


def test_loads_uea_ts_files_plain_and_compressed(bench, data_dir):
    pytest.importorskip("aeon")
    X, y, X_test, y_test = bench.load_set(bench.find_sets(data_dir)["Two"])
    assert y.tolist() == ["a", "b"] and y_test.tolist() == ["a", "b"]
    np.testing.assert_array_equal(np.stack(X), [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]])
    lmu = bench.for_lmu(X)  # equal lengths: (n_cases, n_steps, n_channels)
    np.testing.assert_array_equal(lmu[1], [[7, 10], [8, 11], [9, 12]])
    np.testing.assert_array_equal(np.stack(X_test), np.stack(X))


def test_log_loss_clips_at_1e_15_and_renormalises(bench):
    from sklearn.metrics import log_loss

    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    y = np.array(["b", "c"])
    expected = -(math.log(0.2) + math.log(0.8)) / 2
    # 1e-12: the clipping moves a probability of 0.1 by ~2e-16, and float64 rounding
    assert bench.log_loss_clipped(y, proba, ["a", "b", "c"]) == pytest.approx(expected, rel=1e-12)
    assert bench.log_loss_clipped(y, proba, ["a", "b", "c"]) == pytest.approx(
        log_loss(y, proba, labels=["a", "b", "c"]), rel=1e-12
    )
    # a one-hot wrong answer costs -log(1e-15); a class never seen costs the same
    one_hot = np.array([[1.0, 0.0], [1.0, 0.0]])
    wrong = -math.log(1e-15) / 2
    assert bench.log_loss_clipped(["a", "b"], one_hot, ["a", "b"]) == pytest.approx(wrong)
    assert bench.log_loss_clipped(["a", "z"], one_hot, ["a", "b"]) == pytest.approx(wrong)


def test_mean_rank_averages_ties(bench):
    accuracy = np.array(
        [
            [0.9, 0.9, 0.8],  # ranks 1.5 1.5 3
            [0.7, 0.8, 0.9],  # ranks 3 2 1
            [0.5, 0.5, 0.5],  # ranks 2 2 2
            [0.1 + 0.2, 0.3, 0.2],  # 0.30000000000000004 ties 0.3: ranks 1.5 1.5 3
        ]
    )
    np.testing.assert_allclose(bench.mean_ranks(accuracy), [8 / 4, 7 / 4, 9 / 4], rtol=1e-12)


def test_win_tie_loss(bench):
    assert bench.win_tie_loss([0.9, 0.5, 0.3, 0.1 + 0.2], [0.8, 0.5, 0.4, 0.3]) == (1, 2, 1)


def _row(name, **models):
    return {
        "set": name,
        "models": {
            label: (
                {"error": "ValueError: boom"}
                if value is None
                else {"accuracy": value[0], "cpu_s": value[1], "wall_s": 2 * value[1]}
            )
            for label, value in models.items()
        },
    }


def test_classification_summary_and_targets(bench):
    rows = [
        _row("A", LMU=(0.90, 1.0), MiniRocket=(0.95, 2.0), **{"MultiRocket-Hydra": (0.95, 4.0)}),
        _row("B", LMU=(0.80, 1.0), MiniRocket=(0.86, 2.0), **{"MultiRocket-Hydra": (0.70, 4.0)}),
        _row("C", LMU=(0.70, 3.0), MiniRocket=(0.60, 1.0), **{"MultiRocket-Hydra": (0.70, 2.0)}),
        _row("D", LMU=None, MiniRocket=(0.50, 1.0), **{"MultiRocket-Hydra": (0.50, 1.0)}),
    ]
    rows[0]["models"]["LMU"]["log_loss"] = 0.2
    rows[1]["models"]["LMU"]["log_loss"] = 0.4
    rows[2]["models"]["LMU"]["log_loss"] = 0.6
    models = ["LMU", "MiniRocket", "MultiRocket-Hydra"]
    summary = bench.summarise_classification(rows, models)
    assert summary["n_sets"] == 4 and summary["n_complete"] == 3
    assert summary["failed"] == {"LMU": ["D"], "MiniRocket": [], "MultiRocket-Hydra": []}
    assert summary["mean_accuracy"]["LMU"] == pytest.approx(0.8)
    assert summary["mean_accuracy"]["MultiRocket-Hydra"] == pytest.approx(2.35 / 3)
    # A: 3, 1.5, 1.5; B: 2, 1, 3; C: 1.5, 3, 1.5
    assert summary["mean_rank"] == pytest.approx(
        {"LMU": 6.5 / 3, "MiniRocket": 5.5 / 3, "MultiRocket-Hydra": 6 / 3}
    )
    assert summary["win_tie_loss"] == {"MiniRocket": (1, 0, 2), "MultiRocket-Hydra": (1, 1, 1)}
    assert summary["total_seconds"] == {"LMU": 5.0, "MiniRocket": 5.0, "MultiRocket-Hydra": 10.0}
    assert summary["time_ratio"] == {"MiniRocket": 1.0, "MultiRocket-Hydra": 0.5}
    assert summary["mean_log_loss"] == {"LMU": pytest.approx(0.4)}  # only LMU has them all
    # 0.95 - 0.90 is 5 points, 0.86 - 0.80 is 6: both more than 3
    assert summary["behind"]["MiniRocket"] == ["A", "B"]
    targets = dict(bench.classification_targets(summary))
    assert targets == {
        "mean accuracy >= MultiRocket-Hydra's": True,
        "total fit + predict time <= 0.7x MiniRocket's": False,  # 1.0x
        "no set failing": False,
        "no set more than 3 points behind MiniRocket": False,
    }
    faster = bench.summarise_classification(
        [_row("A", LMU=(0.93, 0.7), MiniRocket=(0.95, 1.0))], ["LMU", "MiniRocket"]
    )
    assert dict(bench.classification_targets(faster)) == {
        "mean accuracy >= MultiRocket-Hydra's": None,
        "total fit + predict time <= 0.7x MiniRocket's": True,
        "no set failing": True,
        "no set more than 3 points behind MiniRocket": True,  # 2 points
    }
    wall = bench.summarise_classification(rows, models, clock="wall")
    assert wall["total_seconds"]["LMU"] == 10.0
    # without the peers, their targets are not evaluated
    alone = bench.summarise_classification(rows[:3], ["LMU"])
    assert [met for _, met in bench.classification_targets(alone)] == [None, None, True, None]


def test_development_targets_from_the_published_accuracies(bench, tmp_path, capsys):
    """The issue's targets: the mean over every set, the mean over the sets with every
    published figure against HC2's plus half a point, HC2 on the sets it alone has, and
    JapaneseVowels within a point of MiniRocket."""
    (tmp_path / bench.PUBLISHED).write_text(
        "set,HC2,MiniROCKET,note\n"
        "A,0.9000,0.8000,UCR official split\n"
        "B,0.8000,0.7000,\n"
        "U,0.9500,,UEA; HC2 only\n"
        "Absent,0.5000,0.5000,\n",
        encoding="utf-8",
    )
    published = bench.read_published(tmp_path)
    assert published["A"] == {"HC2": 0.9, "MiniROCKET": 0.8} and published["U"] == {"HC2": 0.95}
    assert bench.read_published(tmp_path / "elsewhere") == {}
    # a spreadsheet's byte-order mark, a row with more cells than columns, no 'set' column
    other = tmp_path / "other"
    other.mkdir()
    (other / bench.PUBLISHED).write_text("\ufeffset,HC2\nA,0.9,extra,cells\n", encoding="utf-8")
    assert bench.read_published(other) == {"A": {"HC2": 0.9}}
    (other / bench.PUBLISHED).write_text("name,HC2\nA,0.9\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no 'set' column"):
        bench.read_published(other)
    rows = [
        _row("A", LMU=(0.91, 1.0), MiniRocket=(0.9, 1.0)),
        _row("B", LMU=(0.80, 1.0), MiniRocket=(0.9, 1.0)),
        _row("U", LMU=(0.95, 1.0), MiniRocket=(0.9, 1.0)),
        _row("X", LMU=(0.70, 1.0), MiniRocket=(0.9, 1.0)),  # no published figure
        _row("F", LMU=None, MiniRocket=(0.9, 1.0)),  # failed: left out
    ]
    lines, targets = bench.development_targets(rows, published)
    assert lines == [
        "  the 2 sets with every published figure: LMU 0.8550; HC2 0.8500, MiniROCKET 0.7500"
    ]
    met = {text.split(" (")[0]: ok for text, ok in targets}
    assert met == {
        "mean accuracy over the 4 sets >= 0.8700": False,  # 0.84
        "mean accuracy over those 2 sets >= HC2's + 0.005 = 0.8550": True,  # 0.855, level
        "U >= HC2's published 0.9500": True,
    }
    # JapaneseVowels, read from aeon (no published file): within one point of MiniRocket
    vowels = [_row("JapaneseVowels", LMU=(0.975, 1.0), MiniRocket=(0.986, 1.0))]
    assert bench.development_targets(vowels, {}) == (
        [],
        [("JapaneseVowels within 1 point of MiniRocket (0.9750 against 0.9860)", False)],
    )
    vowels[0]["models"]["LMU"]["accuracy"] = 0.976
    assert bench.development_targets(vowels, {})[1][0][1] is True
    assert bench.development_targets(rows, {}) == ([], [])
    bench.print_development_targets(rows, published, "LMU")
    out = capsys.readouterr().out
    assert "development targets of LMU (published_accuracy.csv):" in out
    assert "target: U >= HC2's published 0.9500 (0.9500): met" in out


def test_repeated_runs_give_each_ratio_and_their_median(bench, capsys):
    def run(lmu, rocket, hydra):
        rows = [_row("A", LMU=(0.9, lmu), MiniRocket=(0.9, rocket), MR=(0.9, hydra))]
        return bench.summarise_classification(rows, ["LMU", "MiniRocket", "MR"])

    ratios = bench.repeated_time_ratios(
        [run(0.8, 1.0, 0.0), run(0.6, 1.0, 0.0), run(0.9, 1.0, 0.0)]
    )
    assert ratios["MiniRocket"]["ratios"] == pytest.approx([0.8, 0.6, 0.9])
    assert ratios["MiniRocket"]["median"] == pytest.approx(0.8)
    # a peer that took no time has no ratio, and then no median
    assert ratios["MR"] == {"ratios": [None, None, None], "median": None}
    bench.print_repeated_time_ratios(ratios, "LMU")
    printed = capsys.readouterr().out
    assert "time ratio LMU/MiniRocket over 3 runs: 0.80, 0.60, 0.90; median 0.80" in printed
    assert "median total fit + predict time <= 0.7x MiniRocket's: NOT met" in printed
    faster = bench.repeated_time_ratios([run(0.6, 1.0, 1.0), run(0.7, 1.0, 1.0)])
    bench.print_repeated_time_ratios(faster, "LMU")
    assert "0.7x MiniRocket's: met" in capsys.readouterr().out  # median 0.65
    # a variant's ratios are printed run by run, the default's target not judged on them
    bench.print_repeated_time_ratios(faster, "LMU-rbf", targets=False)
    printed = capsys.readouterr().out
    assert "time ratio LMU-rbf/MiniRocket over 2 runs: 0.60, 0.70; median 0.65" in printed
    assert "target" not in printed


def test_repeats_must_be_positive(bench, data_dir, capsys):
    with pytest.raises(SystemExit):
        bench.main([str(data_dir), "--repeats", "0"])
    assert "--repeats must be at least 1, got 0" in capsys.readouterr().err


def test_regression_summary_is_a_geometric_mean(bench):
    def row(name, ours, theirs):
        return {
            "set": name,
            "models": {
                "LMU": {"rmse": ours, "cpu_s": 1.0, "wall_s": 1.0},
                "MiniRocket": {"rmse": theirs, "cpu_s": 1.0, "wall_s": 1.0},
            },
        }

    rows = [row("A", 2.0, 1.0), row("B", 1.0, 2.0), row("C", 3.0, 3.0)]
    summary = bench.summarise_regression(rows, ["LMU", "MiniRocket"])
    assert summary["geo_mean_rmse_ratio"]["MiniRocket"] == pytest.approx(1.0)
    assert dict(bench.regression_targets(summary))["geometric-mean RMSE <= MiniRocketRegressor's"]
    rows.append(row("D", 8.0, 1.0))  # ratios 2, 1/2, 1, 8: geometric mean 8 ** (1/4)
    summary = bench.summarise_regression(rows, ["LMU", "MiniRocket"])
    assert summary["geo_mean_rmse_ratio"]["MiniRocket"] == pytest.approx(8**0.25)
    assert not dict(bench.regression_targets(summary))[
        "geometric-mean RMSE <= MiniRocketRegressor's"
    ]


def test_needs_a_data_dir_and_known_sets(bench, data_dir, capsys):
    with pytest.raises(SystemExit):
        bench.main([])
    assert "DATA_DIR is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main([str(data_dir), "--sets", "Nope"])
    assert "unknown sets ['Nope']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main([str(data_dir / "missing")])
    assert "is not a folder" in capsys.readouterr().err


def test_held_out_sets_are_those_named_in_aeons_folder(bench, tmp_path):
    # a folder laid out as aeon's: a held-out set, a development set, a regression set
    for name in ("JapaneseVowels", "OSULeaf", "Covid3Month", "ArrowHead"):
        for split in bench.SPLITS:
            _write(tmp_path / name / f"{name}_{split}.ts", TS, False)
    assert list(bench.held_out_sets(tmp_path)) == ["ArrowHead", "OSULeaf"]


def test_aeon_ships_every_held_out_set(bench, capsys):
    pytest.importorskip("aeon")
    folder = bench.aeon_data_dir()
    assert tuple(bench.held_out_sets(folder)) == bench.HELD_OUT_SETS
    # 'aeon' as DATA_DIR offers those sets, and any other classification set aeon ships
    # when named (JapaneseVowels, a multivariate development set), not its regression sets
    named = bench.classification_sets("aeon", ["JapaneseVowels"])[1]
    assert "JapaneseVowels" in named and "Covid3Month" not in named
    with pytest.raises(SystemExit):
        bench.main(["aeon", "--sets", "NoSuchSet"])
    assert "unknown sets ['NoSuchSet']" in capsys.readouterr().err


def test_both_splits_in_one_format(bench, tmp_path):
    # the training split in two formats, the test split in one: both read as .ts
    _write(tmp_path / "Mixed" / "Mixed_TRAIN.arff", "@relation Mixed\n", False)
    _write(tmp_path / "Mixed" / "Mixed_TRAIN.ts", TS, False)
    _write(tmp_path / "Mixed" / "Mixed_TEST.ts", TS, True)
    # no format in common: each split in the first format it has
    _write(tmp_path / "Apart" / "Apart_TRAIN.tsv", "1\t1.0\n", False)
    _write(tmp_path / "Apart" / "Apart_TEST.ts", TS, False)
    sets = bench.find_sets(tmp_path)
    assert sets["Mixed"] == {
        "TRAIN": tmp_path / "Mixed" / "Mixed_TRAIN.ts",
        "TEST": tmp_path / "Mixed" / "Mixed_TEST.ts.gz",
    }
    assert sets["Apart"] == {
        "TRAIN": tmp_path / "Apart" / "Apart_TRAIN.tsv",
        "TEST": tmp_path / "Apart" / "Apart_TEST.ts",
    }


def test_classification_sets_name_a_folder_or_aeon(bench, data_dir, tmp_path, monkeypatch):
    assert bench.classification_sets(str(data_dir)) == (str(data_dir), bench.find_sets(data_dir))
    with pytest.raises(ValueError, match="is not a folder"):
        bench.classification_sets(str(data_dir / "missing"))
    # a folder named 'aeon' in the working directory is read as a folder of sets
    (tmp_path / "aeon").mkdir()
    monkeypatch.chdir(tmp_path)
    assert bench.classification_sets("aeon") == ("aeon", {})


def test_a_variant_is_parsed_labelled_and_given_lmu_sks_layout(bench, data_dir, capsys):
    """--variant kernel=rbf: a second lmu_sk model, with lmu_sk's input layout (a variant
    given aeon's (n, channels, steps) arrays once read 427 channels of one step)."""
    assert bench.parse_variant(["kernel=rbf", "order=4", "theta=[2, 8]"]) == {
        "kernel": "rbf",
        "order": 4,
        "theta": [2, 8],
    }
    with pytest.raises(ValueError, match="KEY=VALUE"):
        bench.parse_variant(["rbf"])
    variant = {"kernel": "rbf"}
    assert bench.variant_label(variant) == "LMU-rbf"
    assert bench.is_lmu("LMU") and bench.is_lmu("LMU-rbf") and not bench.is_lmu("MiniRocket")
    labels = bench._variant_first(["LMU", "LMU-rbf", "MiniRocket"], variant)
    assert labels == ["LMU-rbf", "MiniRocket"]
    seen = {}

    def recorder(label):
        class Model:
            def fit(self, X, y):
                seen[label] = X
                return self

            def predict(self, X):
                return np.zeros(len(X), dtype=int)

        return Model

    data = bench.load_set(bench.find_sets(data_dir)["Two"])
    models = {label: recorder(label) for label in ("LMU", "LMU-rbf", "MiniRocket")}
    bench._run_set(0, data, models)
    assert seen["LMU-rbf"] is not seen["MiniRocket"]
    np.testing.assert_array_equal(np.asarray(seen["LMU-rbf"]), np.asarray(seen["LMU"]))
    assert np.shape(seen["MiniRocket"]) == (2, 2, 3)  # aeon's (n, channels, steps)
    assert np.shape(seen["LMU-rbf"]) == (2, 3, 2)  # lmu_sk's (n, steps, channels)
    with pytest.raises(SystemExit):
        bench.main([str(data_dir), "--variant", "rbf"])
    assert "--variant takes KEY=VALUE pairs" in capsys.readouterr().err
