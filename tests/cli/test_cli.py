"""Tests of the ``lmu-sk`` command line on small .npy files."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lmu_sk
from lmu_sk import LMUFeatures, cli, dn_states
from lmu_sk.cli.common import ProgressBar


def run(*args: str) -> int:
    return cli.main([str(a) for a in args])


def leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".partial")]


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


def test_features_equal_the_transformer_on_the_whole_array(sequences, tmp_path):
    X, path = sequences
    out = tmp_path / "out.npy"
    assert (
        run("features", "--order", 12, "--theta", 30, "--batch-size", 5, "--quiet", path, out) == 0
    )
    F = np.load(out)
    expected = LMUFeatures(order=12, theta=30.0, dtype="float32").fit_transform(X)
    assert F.dtype == np.float32 and F.shape == (30, 12)
    np.testing.assert_allclose(F, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F, dn_states(X, 12, 30.0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("output", ["final", "sequence", "mean", "max"])
@pytest.mark.parametrize("layout", [None, "--channels-last", "--channels-first"])
def test_batches_give_the_same_result_as_one_batch(tmp_path, output, layout):
    rng = np.random.default_rng(1)
    shape = (9, 16) if layout is None else (9, 16, 2)
    X = rng.standard_normal(shape)
    np.save(tmp_path / "in.npy", X)
    common = ["--order", 5, "--theta", 12, "--output", output, "--dtype", "float64", "--quiet"]
    common += [layout] if layout else []
    whole, batched = tmp_path / "whole.npy", tmp_path / "batched.npy"
    assert run("features", *common, "--batch-size", 100, tmp_path / "in.npy", whole) == 0
    assert run("features", *common, "--batch-size", 2, tmp_path / "in.npy", batched) == 0
    A, B = np.load(whole), np.load(batched)
    assert A.dtype == np.float64
    np.testing.assert_allclose(B, A, rtol=1e-12, atol=1e-12)

    channels_last = np.swapaxes(X, 1, 2) if layout == "--channels-first" else X
    expected = LMUFeatures(
        order=5, theta=12.0, output=output, dtype="float64", channels_first=False
    ).fit_transform(channels_last)
    np.testing.assert_allclose(A, expected, rtol=1e-10, atol=1e-12)
    assert leftovers(tmp_path) == []


def test_defaults_integer_input_and_overwriting_an_old_output(tmp_path):
    X = np.random.default_rng(2).integers(-3, 4, size=(6, 20)).astype(np.int16)
    np.save(tmp_path / "in.npy", X)
    out = tmp_path / "out.npy"
    out.write_bytes(b"an old result")
    assert run("features", "--order", 4, "--quiet", tmp_path / "in.npy", out) == 0
    F = np.load(out)
    assert F.dtype == np.float32  # the default --dtype
    # theta defaults to the number of steps
    np.testing.assert_allclose(F, dn_states(X.astype(float), 4, 20.0), rtol=1e-4, atol=1e-5)


def test_progress_bar_and_summary_on_stderr(sequences, tmp_path, capsys):
    _, path = sequences
    assert run("features", "--order", 3, "--batch-size", 10, path, tmp_path / "o.npy") == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "30/30 rows" in captured.err and "100%" in captured.err and "10/30 rows" in captured.err
    assert "wrote" in captured.err and "(30, 3)" in captured.err

    assert run("features", "--order", 3, "--quiet", path, tmp_path / "o.npy") == 0
    assert capsys.readouterr().err == ""


def test_progress_bar_drawing():
    stream = io.StringIO()
    bar = ProgressBar(4, stream=stream, width=8, plain=False, redraw_interval=0)
    bar.update(0)
    bar.update(2)
    bar.update(4)
    bar.close()
    text = stream.getvalue()
    assert "[####....]  50% 2/4 rows" in text and "[########] 100% 4/4 rows" in text
    assert text.count("\r") == 3 and text.endswith("\n")

    silent = io.StringIO()
    quiet_bar = ProgressBar(4, stream=silent, enabled=False)
    quiet_bar.update(2)
    quiet_bar.close()
    assert silent.getvalue() == ""


# ----------------------------------------------------------------------------------------------
# Failures: exit status 2, one line naming the problem, nothing written
# ----------------------------------------------------------------------------------------------


def write_input(tmp_path, kind):
    """Make an input of the given kind and return its path."""
    path = tmp_path / "in.npy"
    good = np.zeros((4, 10))
    if kind == "missing":
        return tmp_path / "absent.npy"
    if kind == "directory":
        path.mkdir()
    elif kind == "text":
        path.write_text("1,2,3\n4,5,6\n")
    elif kind == "truncated":
        np.save(path, good)
        path.write_bytes(path.read_bytes()[:-40])
    elif kind == "npz":
        with open(path, "wb") as f:
            np.savez(f, X=good)
    elif kind == "objects":
        np.save(path, np.array([[{}], [1]], dtype=object), allow_pickle=True)
    elif kind == "strings":
        np.save(path, np.array([["a", "b"], ["c", "d"]]))
    elif kind == "complex":
        np.save(path, good.astype(np.complex128))
    elif kind == "1-D":
        np.save(path, np.zeros(10))
    elif kind == "4-D":
        np.save(path, np.zeros((2, 3, 4, 5)))
    elif kind == "3-D":
        np.save(path, np.zeros((2, 10, 3)))
    elif kind == "empty":
        np.save(path, np.zeros((0, 10)))
    elif kind == "nan":
        bad = good.copy()
        bad[2, 7] = np.nan
        np.save(path, bad)
    elif kind == "inf":
        bad = good.copy()
        bad[3, 0] = -np.inf
        np.save(path, bad)
    else:
        raise AssertionError(kind)
    return path


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("missing", "input file not found"),
        ("directory", "input folder holds no .npy shards"),
        ("text", "not a .npy file"),
        ("truncated", "not a readable .npy array"),
        ("npz", "not a .npy file"),
        ("objects", "not a readable .npy array"),
        ("strings", "non-numeric dtype <U1"),
        ("complex", "non-numeric dtype complex128"),
        ("1-D", "got 1-D shape (10,)"),
        ("4-D", "got 4-D shape (2, 3, 4, 5)"),
        ("3-D", "--channels-last"),
        ("empty", "no sequences"),
        ("nan", "input row 2 contains NaN"),
        ("inf", "input row 3 contains an infinite value"),
    ],
)
def test_bad_inputs(tmp_path, capsys, kind, message):
    path = write_input(tmp_path, kind)
    out = tmp_path / "out.npy"
    assert run("features", "--order", 4, "--batch-size", 2, path, out) == 2
    err = capsys.readouterr().err
    last_line = err.rstrip("\n").split("\n")[-1]
    assert last_line.startswith("lmu-sk: error: ") and message in last_line
    assert "Traceback" not in err
    assert not out.exists() and leftovers(tmp_path) == []


def test_output_would_overwrite_the_input(sequences, tmp_path, capsys, monkeypatch):
    X, path = sequences
    monkeypatch.chdir(tmp_path)
    link = tmp_path / "link.npy"
    link.symlink_to(path)
    for target in (path, "./in.npy", link):
        assert run("features", "--order", 4, path, target) == 2
        assert "output would overwrite the input" in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(path), X)


def test_an_output_holding_the_input_or_inside_its_shards_is_refused(tmp_path, capsys):
    """A folder of the user's .npy files given as the output of one of them was swapped
    out whole (the input deleted), and a file of an input folder of shards was
    overwritten by features: both ran with status 0."""
    pytest.importorskip("dask.array")
    X = np.random.default_rng(0).standard_normal((10, 12))
    shards = tmp_path / "data"
    shards.mkdir()
    for i in range(3):
        np.save(shards / f"part-{i}.npy", X + i)
    for source, target in [
        (shards / "part-0.npy", shards),  # the output folder holds the input
        (shards, shards / "part-0.npy"),  # the output inside the input's folder
        (shards, shards / "new.npy"),
    ]:
        assert run("features", "--quiet", "--order", 4, source, target) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "output would overwrite the input" in err
    for i in range(3):
        np.testing.assert_array_equal(np.load(shards / f"part-{i}.npy"), X + i)
    assert sorted(p.name for p in shards.iterdir()) == [f"part-{i}.npy" for i in range(3)]


def test_shards_of_unusual_names_and_a_file_that_is_not_npy(tmp_path, capsys):
    """A superscript digit in a shard's name crashed the ordering (int('²')), and a shard
    without the .npy header got NumPy's advice to load pickled data unsafely."""
    pytest.importorskip("dask.array")
    X = np.random.default_rng(0).standard_normal((6, 12))
    shards = tmp_path / "shards"
    shards.mkdir()
    np.save(shards / "b.npy", X)
    np.save(shards / "\u00b21.npy", X + 1)
    out = tmp_path / "out.npy"
    assert run("features", "--quiet", "--order", 4, "--dtype", "float64", shards, out) == 0
    assert np.load(out).shape == (12, 4)
    from lmu_sk.cli.dask_runner import _shard_order  # names whose runs fall unlike

    names = ["x.npy", "x.npy1.npy", "part-01.npy", "part-1.npy", "part-2.npy", "part-10.npy"]
    ordered = [p.name for p in sorted(map(Path, names), key=_shard_order)]
    assert ordered == [
        "part-01.npy",
        "part-1.npy",
        "part-2.npy",
        "part-10.npy",
        "x.npy",
        "x.npy1.npy",
    ]
    (shards / "c.npy").write_text("not npy")
    assert run("features", "--quiet", "--order", 4, shards, tmp_path / "other.npy") == 2
    err = capsys.readouterr().err
    assert "input shard is not a .npy file (no .npy header)" in err and "pickle" not in err


def test_tasks_read_the_input_by_its_absolute_path(tmp_path, monkeypatch):
    """Relative paths went into the tasks: a cluster's worker read the file of that name
    in its own working folder (other numbers, silently) or none."""
    pytest.importorskip("dask.array")
    from lmu_sk.cli.dask_runner import open_input

    here, there = tmp_path / "here", tmp_path / "there"
    for folder, value in ((here, 1.0), (there, 2.0)):
        (folder / "shards").mkdir(parents=True)
        np.save(folder / "x.npy", np.full((4, 5), value))
        np.save(folder / "shards" / "part-0.npy", np.full((4, 5), value))
    monkeypatch.chdir(here)
    lazy = [open_input(Path(name), 2) for name in ("x.npy", "shards")]
    monkeypatch.chdir(there)  # where a worker would read
    for array in lazy:
        np.testing.assert_array_equal(array.compute(scheduler="synchronous"), 1.0)


def test_a_folder_named_as_a_npy_file_is_not_made_a_folder_of_shards(sequences, tmp_path, capsys):
    _, path = sequences
    (tmp_path / "feat.npy").mkdir()
    assert run("features", "--quiet", "--order", 4, path, tmp_path / "feat.npy") == 2
    assert "is a folder, where its name asks for a .npy file" in capsys.readouterr().err
    assert list((tmp_path / "feat.npy").iterdir()) == []


def test_a_new_folder_of_shards_named_as_a_npy_file_is_refused(sequences, tmp_path, capsys):
    """feat.npy/ made a folder of shards named feat.npy, which every later run writing
    feat.npy then met as a folder."""
    pytest.importorskip("dask")
    _, path = sequences
    assert run("features", "--quiet", "--order", 4, path, f"{tmp_path / 'feat.npy'}/") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "name the folder without .npy" in err
    assert not (tmp_path / "feat.npy").exists()


def test_nan_among_the_rows_read_to_fit_is_counted_among_them(tmp_path, capsys):
    """NaN in the rows read to fit was reported as "(1 bad row(s) in rows 0-0)": a count
    of the one row read again, not of the input."""
    X = np.zeros((70, 10))
    X[[3, 5]] = np.nan
    np.save(tmp_path / "x.npy", X)
    assert (
        run("features", "--output", "pooled", "--quiet", tmp_path / "x.npy", tmp_path / "o.npy")
        == 2
    )
    err = capsys.readouterr().err
    assert "input row 3 contains NaN (2 bad row(s) among the 64 read to fit" in err


def test_warnings_are_one_line_each_in_the_options_terms(sequences, tmp_path, capsys):
    """Python's warnings reached stderr with the package's source file and line, and the
    pooled features' windows gave the same warning once per window."""
    _, path = sequences
    args = ["--quiet", "--discretizer", "euler", "--order", 8, "--theta", 3]
    assert run("features", *args, path, tmp_path / "out.npy") == 0
    err = capsys.readouterr().err
    assert err.startswith("lmu-sk: warning: The Euler-discretized") and err.count("\n") == 1
    assert "--discretizer zoh" in err and ".py:" not in err


def test_a_zarr_name_in_capitals_is_a_zarr_store(sequences, tmp_path):
    """out.ZARR was refused with "name it out.npy" (the .npy check ignores case, the
    Zarr one did not)."""
    zarr = pytest.importorskip("zarr")
    X, path = sequences
    out = tmp_path / "out.ZARR"
    assert run("features", "--quiet", "--order", 4, path, out) == 0
    np.testing.assert_allclose(
        zarr.open_array(str(out), mode="r")[:],
        LMUFeatures(order=4, dtype="float32").fit_transform(X),
        rtol=1e-5,
        atol=1e-6,
    )


def test_a_huge_order_is_named_not_taken_for_a_lack_of_disk(sequences, tmp_path, capsys):
    _, path = sequences
    assert run("features", "--order", 10**9, path, tmp_path / "out.npy") == 2
    err = capsys.readouterr().err
    assert "Choose a smaller order" in err and "free space" not in err


def test_no_command_runs_the_demo(monkeypatch, capsys):
    """The guide says lmu-sk, as python -m lmu_sk, runs the main job; it asked for a
    COMMAND."""
    import importlib

    module = importlib.import_module("lmu_sk.cli.main")  # (the package's main is the function)
    ran = []
    monkeypatch.setattr(module, "_run_demo", lambda prog: ran.append(prog) or 0)
    assert run() == 0 and ran == ["lmu-sk"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing-folder/out.npy", "output folder does not exist"),
        ("a-file/out.npy", "output path not writable"),
        ("a-folder", "holds more than .npy shards (notes.txt)"),
    ],
)
def test_unwritable_outputs(sequences, tmp_path, capsys, target, message):
    _, path = sequences
    (tmp_path / "a-file").write_text("not a folder")
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-folder" / "notes.txt").write_text("not a shard")
    assert run("features", "--order", 4, path, tmp_path / target) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize(
    ("input_name", "output_name", "message"),
    [
        ("", "o.npy", "INPUT is an empty path"),
        ("in.npy", "", "names no file or folder of its own"),
        ("in.npy", ".", "names no file or folder of its own"),
        ("in.npy", "./", "names no file or folder of its own"),
        ("in.npy", "..", "names no file or folder of its own"),
    ],
)
def test_paths_that_name_nothing_are_usage_errors(
    sequences, tmp_path, monkeypatch, capsys, input_name, output_name, message
):
    """An empty INPUT (an unset variable in a script) read the working folder's .npy files
    as shards, silently, with status 0; an OUTPUT of '.' crashed with a traceback (a
    partial output needs a name beside it) and '..' would replace a parent folder."""
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "other.npy", np.zeros((2, 24)))
    assert run("features", "--order", 4, input_name, output_name) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy", "other.npy"]


@pytest.mark.parametrize(
    "args",
    [
        ("features", "--order", "-3", "in.npy", "out.npy"),
        ("features", "--theta", "0"),
        ("featurez",),
    ],
)
def test_argument_errors_are_one_line(args, capsys):
    """Exit status 2 and one line on stderr, as the guide says of usage errors: argparse
    printed its whole usage block before the error."""
    assert run(*args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lmu-sk") and "--help" in err


def test_transformer_errors_are_usage_errors(sequences, tmp_path, capsys):
    _, path = sequences
    # A Delay Network of this order needs terabytes: the transformer refuses it.
    assert run("features", "--order", 200000, "--quiet", path, tmp_path / "o.npy") == 2
    err = capsys.readouterr().err
    assert err.startswith("lmu-sk: error: cannot compute features:") and err.count("\n") == 1
    assert leftovers(tmp_path) == [] and not (tmp_path / "o.npy").exists()
    # the transformer's advice names the command's options, not the Python parameters
    huge = tmp_path / "huge.npy"
    np.save(huge, np.array([[1e300, 1.0], [1.0, 2.0]]))
    assert run("features", "--quiet", huge, tmp_path / "o.npy") == 2
    err = capsys.readouterr().err
    assert "use --dtype float64" in err and "dtype=" not in err


def test_messages_say_the_options_of_the_command():
    from lmu_sk.cli.common import as_options

    said = as_options(
        "Use dtype='float64'. Or use device='cpu'. pass channels_first=True; order=8 ok; "
        "max_memory='1GB' and n_biases=4 stay (no such options)"
    )
    assert said == (
        "Use --dtype float64. Or use --device cpu. pass --channels-first; --order 8 ok; "
        "max_memory='1GB' and n_biases=4 stay (no such options)"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["features", "--output", "median", "in.npy", "out.npy"],
        ["features", "--order", "0", "in.npy", "out.npy"],
        ["features", "--order", "4", "--theta", "-1", "in.npy", "out.npy"],
        ["features", "--order", "4", "--channels-last", "--channels-first", "a", "b"],
        ["frobnicate"],
    ],
)
def test_argument_errors(argv, capsys):
    assert cli.main(argv) == 2
    assert "error" in capsys.readouterr().err


def test_help_and_version(capsys):
    assert cli.main(["--help"]) == 0
    assert "features" in capsys.readouterr().out
    assert cli.main(["features", "--help"]) == 0
    assert "--batch-size" in capsys.readouterr().out
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("lmu-sk ")


def test_demo_runs_the_demo_module(monkeypatch):
    """`lmu-sk demo` runs the demo with no arguments of its own: the demo's parser would
    otherwise read sys.argv, whose 'demo' it refused (exit 2, every time)."""
    import lmu_sk.demo

    calls = []
    entry = sys.modules["lmu_sk.cli.main"]
    monkeypatch.setattr(sys, "argv", ["lmu-sk", "demo"])

    def parse_only(argv=None):  # the demo's own parser, without its training
        monkeypatch.setattr(lmu_sk.demo, "load_permuted_digits", _stop)
        try:
            lmu_sk.demo.main(argv)
        except _Stopped:
            calls.append("parsed")

    monkeypatch.setattr(entry, "demo_main", parse_only)
    assert cli.main(["demo"]) == 0
    assert calls == ["parsed"]
    monkeypatch.setattr(entry, "demo_main", lambda argv=None: 3)
    assert cli.main(["demo"]) == 3


class _Stopped(Exception):
    pass


def _stop(*args, **kwargs):
    raise _Stopped


def test_module_entry_point_exit_status(tmp_path):
    path = write_input(tmp_path, "nan")
    package_root = Path(lmu_sk.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package_root), *sys.path])}
    process = subprocess.run(
        [sys.executable, "-m", "lmu_sk.cli", "features", "--order", "2", "--quiet", path, "o.npy"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert process.returncode == 2
    assert process.stderr == (
        "lmu-sk: error: input row 2 contains NaN (1 bad row(s) in rows 0-3); "
        "clean or drop them first\n"
    )


def test_python_dash_m_lmu_sk_is_the_same_command(tmp_path):
    """The guide says "python -m lmu_sk (or lmu-sk)"; python -m lmu_sk ran the demo only,
    and refused 'features' with argparse's whole usage block."""
    path = write_input(tmp_path, "nan")
    package_root = Path(lmu_sk.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package_root), *sys.path])}

    def module(*args):
        return subprocess.run(
            [sys.executable, "-m", "lmu_sk", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            check=False,
        )

    process = module("features", "--order", "2", "--quiet", path, "o.npy")
    assert process.returncode == 2
    assert process.stderr == (
        "python -m lmu_sk: error: input row 2 contains NaN (1 bad row(s) in rows 0-3); "
        "clean or drop them first\n"
    )
    process = module("--no-such-option")
    assert process.returncode == 2
    assert process.stderr.count("\n") == 1 and "python -m lmu_sk --help" in process.stderr


# ----------------------------------------------------------------------------------------------
# The library's defaults, the default models' features, outputs named as other formats
# ----------------------------------------------------------------------------------------------


def test_order_defaults_to_the_transformers_default(sequences, tmp_path):
    """--order was required although LMUFeatures has a default (64)."""
    X, path = sequences
    out = tmp_path / "out.npy"
    assert run("features", "--quiet", path, out) == 0
    expected = LMUFeatures(dtype="float32").fit_transform(X)
    assert np.load(out).shape == (30, LMUFeatures().order) == expected.shape
    np.testing.assert_allclose(np.load(out), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("order", [None, 3])
def test_pooled_output_gives_the_default_models_features(tmp_path, order):
    """The command could not write the default model's pooled features; --output pooled
    writes LMUPooledFeatures' (thresholds fitted on 64 evenly spaced sequences, here all
    of them), batch by batch."""
    from lmu_sk import LMUPooledFeatures

    X = np.random.default_rng(5).standard_normal((40, 50))
    np.save(tmp_path / "in.npy", X)
    out = tmp_path / "pooled.npy"
    args = ["--order", order] if order else []
    assert run("features", "--output", "pooled", *args, "--batch-size", 7, "--quiet",
               tmp_path / "in.npy", out) == 0  # fmt: skip
    params = {"dtype": "float32"} if order is None else {"dtype": "float32", "order": order}
    expected = LMUPooledFeatures(**params).fit(X).transform(X)
    F = np.load(out)
    assert F.shape == expected.shape and F.dtype == np.float32
    # batches of 7 and one batch of 40: the same pooled sums (float32 rounding)
    np.testing.assert_allclose(F, expected, rtol=1e-5, atol=1e-6)


def test_pooled_output_refuses_options_it_does_not_take(sequences, tmp_path, capsys):
    _, path = sequences
    for option in (["--theta", "5"], ["--method", "fft"]):
        assert run("features", "--output", "pooled", *option, path, tmp_path / "o.npy") == 2
        err = capsys.readouterr().err
        assert f"{option[0]} does not apply to --output pooled" in err
        assert not (tmp_path / "o.npy").exists()


@pytest.mark.parametrize("name", ["features.csv", "features.npz", "features.NPZ", "f.txt"])
def test_outputs_named_as_other_formats_are_refused(sequences, tmp_path, capsys, name):
    """An output named .csv or .npz silently received .npy bytes."""
    _, path = sequences
    assert run("features", "--order", 4, path, tmp_path / name) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "writes .npy arrays" in err
    assert f"name it {tmp_path / Path(name).stem}.npy" in err
    assert list(tmp_path.iterdir()) == [path]
    # a .npy name with another suffix after it: the .npy name, not .npy.npy
    assert run("features", "--order", 4, path, tmp_path / "f.npy.bak") == 2
    assert f"name it {tmp_path / 'f.npy'}\n" in capsys.readouterr().err
    # a name without a suffix is taken as given
    assert run("features", "--order", 4, "--quiet", path, tmp_path / "features") == 0
    assert np.load(tmp_path / "features").shape == (30, 4)


def test_a_batch_beyond_memory_is_a_usage_error(tmp_path, capsys, monkeypatch):
    """--batch-size was taken as given: a batch beyond the memory available died with a
    raw MemoryError and a traceback (exit 1, the code of a bug) at the first batch."""
    import lmu_sk._memory as memory

    path = tmp_path / "in.npy"
    np.save(path, np.zeros((2000, 500), dtype=np.float32))  # a batch of all: 12 MB
    out = tmp_path / "out.npy"
    monkeypatch.setattr(memory, "available_memory", lambda **kwargs: 1_000_000)
    assert run("features", "--order", 12, "--batch-size", 2000, "--quiet", path, out) == 2
    err = capsys.readouterr().err
    assert "A batch of 2000 rows" in err and "smaller --batch-size" in err
    assert "Traceback" not in err and not out.exists()
