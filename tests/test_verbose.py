"""``verbose`` progress on standard error, and the DEBUG logs of route and chunk choices."""

import contextlib
import io
import logging
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

from lmu_sk import LMUFeatures, LMUPooledFeatures
from lmu_sk._progress import ProgressBar, StepLog
from lmu_sk.engine.plan import plan_pooled

# 'sequence' features of 2 channels need 7 200 bytes of working memory per sample
# (row copy 800 B, states 6 400 B): this budget makes chunks of 10 samples, 20 in all.
N_SAMPLES, N_STEPS, ORDER = 200, 50, 8
MAX_MEMORY = 10 * (N_STEPS * 2 * 8 + N_STEPS * 2 * ORDER * 8)


@pytest.fixture
def X():
    return np.random.default_rng(0).standard_normal((N_SAMPLES, N_STEPS, 2))


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _progress_lines(text):
    """The plain progress lines of ``text``, as (done, total) pairs."""
    return [tuple(map(int, m)) for m in re.findall(r"(\d+)/(\d+) sequences", text)]


def _features(**params):
    return LMUFeatures(
        order=ORDER, output="sequence", max_memory=MAX_MEMORY, device="cpu", **params
    )


def test_verbose_writes_plain_bounded_progress_when_not_a_terminal(X, capsys):
    F = _features(verbose=True).fit_transform(X)
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert all(line.startswith("LMUFeatures: ") for line in lines)
    progress = _progress_lines(err)
    assert len(progress) == len(lines)
    # 20 chunks, but at most one line per tenth of the samples
    assert 2 <= len(progress) <= 11
    assert progress[-1] == (N_SAMPLES, N_SAMPLES)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    quiet = _features().fit_transform(X)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(F, quiet)


def test_verbose_transform_redraws_in_place_on_a_terminal(X, monkeypatch):
    est = _features(verbose=1).fit(X)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    F = est.transform(X)
    text = terminal.getvalue()
    assert text.startswith("\rLMUFeatures: [")
    assert text.endswith("\n") and text.count("\n") == 1
    assert _progress_lines(text)[-1] == (N_SAMPLES, N_SAMPLES)
    np.testing.assert_array_equal(F, _features().fit(X).transform(X))


@pytest.mark.parametrize("output", ["final", "sequence", "mean", "max"])
def test_verbose_counts_sequences_of_different_lengths(output, capsys):
    rng = np.random.default_rng(1)
    X = [rng.standard_normal(n) for n in (5, 9, 9, 30, 7)]
    F = LMUFeatures(order=4, output=output, device="cpu", verbose=True).fit_transform(X)
    assert _progress_lines(capsys.readouterr().err)[-1] == (5, 5)
    G = LMUFeatures(order=4, output=output, device="cpu").fit_transform(X)
    for f, g in zip(F, G, strict=True):
        np.testing.assert_array_equal(f, g)


def test_pooled_verbose_progress_and_same_results(capsys):
    X = np.random.default_rng(2).standard_normal((70, 40))
    est = LMUPooledFeatures(order=4, thetas=[10, 40], n_biases=4, device="cpu").fit(X)
    spec = est.spec_
    windows = [(len(w.inputs), w.order, w.n_steps(40)) for w in spec.windows]
    plan = plan_pooled(
        70, 40, 1, windows, len(spec.transforms), spec.n_features, 8, "cpu", 1 << 30
    )
    # a budget of 5 samples' working memory (and the thresholds' fit): chunks of 5, 14 in all
    budget = 5 * plan.bytes_per_sample
    est.set_params(max_memory=budget)
    F = est.set_params(verbose=True).fit_transform(X)
    err = capsys.readouterr().err
    assert "\r" not in err
    progress = _progress_lines(err)
    assert 2 <= len(progress) <= 11 and progress[-1] == (70, 70)
    G = est.set_params(verbose=False).fit_transform(X)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(F, G)


@pytest.mark.parametrize("estimator", [LMUFeatures, LMUPooledFeatures])
@pytest.mark.parametrize(
    ("verbose", "error", "match"),
    [("yes", TypeError, "'verbose' parameter .* Got 'yes'"), (-1, ValueError, r"\[0, inf\)")],
)
def test_bad_verbose_is_rejected_at_fit(estimator, verbose, error, match):
    X = np.zeros((3, 10))
    with pytest.raises(error, match=match):
        estimator(order=2, verbose=verbose).fit(X)


def test_verbose_set_after_fit_is_checked_at_transform():
    X = np.zeros((3, 10))
    est = LMUFeatures(order=2).fit(X).set_params(verbose=2.5)
    with pytest.raises(TypeError, match="'verbose' parameter of LMUFeatures"):
        est.transform(X)


def test_progress_bar_plain_mode_writes_at_most_one_line_per_tenth():
    stream = io.StringIO()
    with ProgressBar(1000, stream, plain=True, unit="rows") as bar:
        for _ in range(1000):
            bar.advance(1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0].startswith(" 10% 100/1000 rows")
    assert lines[-1].startswith("100% 1000/1000 rows")


def test_progress_bar_disabled_writes_nothing():
    stream = _Terminal()
    bar = ProgressBar(10, stream, enabled=False)
    bar.update(5)
    bar.close()
    assert stream.getvalue() == ""


@pytest.mark.parametrize(
    ("params", "route"),
    [
        ({"output": "sequence", "order": 8}, "method='gemm' (picked by method='auto')"),
        ({"output": "max", "order": 8, "method": "fft"}, "method='fft',"),
        ({"output": "mean", "order": 8, "method": "recurrence"}, "method='recurrence',"),
    ],
)
def test_route_and_chunks_are_logged_at_debug(params, route, caplog):
    X = np.random.default_rng(3).standard_normal((4, 20))
    with caplog.at_level(logging.DEBUG, logger="lmu_sk"):
        LMUFeatures(**params, max_memory="1GB", device="cpu").fit_transform(X)
    messages = [r.getMessage() for r in caplog.records if r.name == "lmu_sk.engine.run"]
    assert len(messages) == 1
    assert route in messages[0]
    assert "1 chunk(s) of up to 4 sample(s)" in messages[0]
    assert "max_memory allows 1.0 GB" in messages[0]
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name.startswith("lmu_sk"))
    devices = [r.getMessage() for r in caplog.records if r.name == "lmu_sk.features"]
    assert devices == ["LMUFeatures: device='cpu' runs on the cpu"]


def test_nothing_is_logged_at_the_default_level(caplog):
    X = np.random.default_rng(3).standard_normal((4, 20))
    with caplog.at_level(logging.WARNING):
        LMUFeatures(order=4, output="sequence").fit_transform(X)
    assert [r for r in caplog.records if r.name.startswith("lmu_sk")] == []
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("lmu_sk").handlers)


def test_long_computations_are_chunked_for_progress_within_max_memory(monkeypatch, capsys):
    # Chunks hold ~_CHUNK_SECONDS of work by the cost model (at least 32 samples): with
    # that made tiny, 100 samples come in chunks of 32 even though max_memory allows all.
    from lmu_sk.engine import plan

    X = np.random.default_rng(4).standard_normal((100, 20))
    whole = LMUFeatures(order=6, device="cpu").fit_transform(X)
    monkeypatch.setattr(plan, "CHUNK_SECONDS", 1e-12)
    F = LMUFeatures(order=6, device="cpu", verbose=True).fit_transform(X)
    assert _progress_lines(capsys.readouterr().err) == [
        (32, 100),
        (64, 100),
        (96, 100),
        (100, 100),
    ]
    # the same products row by row; chunks only change the BLAS blocking (float64 rounding)
    np.testing.assert_allclose(F, whole, rtol=0, atol=1e-12 * np.abs(whole).max())


@pytest.mark.gpu
def test_verbose_on_the_gpu_path_reports_the_whole_batch(capsys, monkeypatch):
    # the GPU path has no chunk callback: one line once everything is done
    from fake_cupy import clear_caches, install

    install(monkeypatch, as_gpu=True)
    try:
        X = np.random.default_rng(5).standard_normal((12, 30))
        F = LMUFeatures(order=4, device="gpu", verbose=True).fit_transform(X)
        assert _progress_lines(capsys.readouterr().err) == [(12, 12)]
        G = LMUFeatures(order=4, device="gpu").fit_transform(X)
        assert capsys.readouterr().err == ""
        np.testing.assert_array_equal(F, G)
    finally:
        clear_caches()


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_estimator_verbose_shows_the_feature_progress(X, head, tmp_path, capsys):
    from lmu_sk import LMUClassifier

    y = (X[:, -5:, 0].sum(axis=1) > 0).astype(int)
    params = dict(order=4, head=head, max_iter=2, device="cpu", memory=str(tmp_path))
    quiet = LMUClassifier(**params).fit(X, y)
    assert capsys.readouterr().err == ""
    # verbose is not part of the cache key: the cached features are reused and still shown
    # at prediction, where the transformer takes the estimator's verbose
    loud = LMUClassifier(**params, verbose=True).fit(X, y)
    assert loud.features_.verbose is True and quiet.features_.verbose is False
    loud.predict(X)
    assert (N_SAMPLES, N_SAMPLES) in _progress_lines(capsys.readouterr().err)


# the ridge step: a line per step that can take seconds (issue: at 8 000 series a fit was
# silent for 85 s after the feature progress ended)
RIDGE_STEPS = (
    "standardization of",
    "Gram matrix of",
    "eigendecomposition of",
    "leave-one-out errors of 17 penalties",
    "coefficients at alpha=",
    "calibration on the leave-one-out decision values",
)


PER_CANDIDATE = ("eigendecomposition of", "leave-one-out errors of 17 penalties")


def test_ridge_fit_reports_its_steps_with_their_times(capsys):
    from lmu_sk import LMUClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 40))
    y = (X[:, -5:].sum(axis=1) > 0).astype(int)
    quiet = LMUClassifier(device="cpu").fit(X, y)
    assert capsys.readouterr().err == ""
    loud = LMUClassifier(device="cpu", verbose=1).fit(X, y)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "sequences" not in line]
    for step in RIDGE_STEPS:
        found = [line for line in lines if step in line]
        # the decomposition and its penalties once per candidate of the window weights
        assert len(found) == (2 if step in PER_CANDIDATE else 1), found
        for line in found:
            assert re.search(r"\.\.\. \d+\.\ds$", line), line  # the step's seconds
    assert "alpha=0.001:" not in err  # the penalties one by one: verbose=2 only
    # verbose=2 adds every penalty's leave-one-out error (the chosen one marked) and the
    # temperature
    LMUClassifier(device="cpu", verbose=2).fit(X, y)
    err2 = capsys.readouterr().err
    penalties = re.findall(r"alpha=(\S+): mean squared leave-one-out error", err2)
    assert len(penalties) == 17
    [chosen] = re.findall(r"alpha=(\S+): .*\(chosen\)", err2)
    assert float(chosen) == pytest.approx(loud.alpha_, rel=1e-3)
    assert "temperature" in err2
    np.testing.assert_array_equal(loud.predict_proba(X), quiet.predict_proba(X))


def test_ridge_head_alone_reports_its_steps(capsys):
    from lmu_sk.ridge import RidgeHeadRegressor

    F = np.random.default_rng(1).standard_normal((30, 80))
    RidgeHeadRegressor(verbose=True).fit(F, F[:, 0])
    err = capsys.readouterr().err
    assert all(line.startswith("RidgeHeadRegressor: ") for line in err.splitlines())
    assert "Gram matrix of 30 x 80 features" in err
    with pytest.raises(TypeError, match="verbose must be"):
        RidgeHeadRegressor(verbose="loud").fit(F, F[:, 0])


@pytest.mark.parametrize("stream", ["none", "closed"])
def test_verbose_progress_never_stops_a_fit_without_a_stderr(stream, monkeypatch):
    """Under pythonw or ``2>&-`` sys.stderr is None (or a closed stream): verbose=1 raised
    AttributeError (or ValueError) from the progress writes, after the work was done."""
    import io

    from lmu_sk import LMUClassifier

    X = np.random.default_rng(0).standard_normal((60, 30))
    y = np.arange(60) % 2
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", None if stream == "none" else closed)
    model = LMUClassifier(verbose=1).fit(X, y)
    assert model.predict(X).shape == (60,)


def test_the_channel_screening_reports_its_step(capsys):
    """Screening many channels against y takes seconds on large data and said nothing."""
    from lmu_sk import LMUPooledFeatures

    X = np.random.default_rng(0).standard_normal((60, 40, 20))
    LMUPooledFeatures(verbose=1, n_biases=2, thetas=[4, 16]).fit(X, np.arange(60) % 2)
    assert "LMUPooledFeatures: screening 20 channels against y... " in capsys.readouterr().err


def _compiled(module: str, source: str, name: str):
    """``name`` of ``source`` run as module ``module``, compiled by Numba without its
    on-disk cache (each test compiles it afresh)."""
    from numba import njit

    namespace = {"__name__": module, "njit": njit}
    exec(source, namespace)
    return namespace[name]


def test_compile_notices_tell_each_compilation_of_the_package_s_loops_once():
    """A first call waited seconds in silence while Numba compiled (about 15 s for the
    default classifier's first fit in a new environment)."""
    from lmu_sk.kernels._jit import compile_notices

    inner = _compiled("lmu_sk._probe", "@njit\ndef inner(x):\n    return x + 1\n", "inner")
    outer = _compiled(
        "lmu_sk._probe",
        "@njit\ndef outer(x):\n    return inner(x) * 2\n",
        "outer",
    )
    outer.py_func.__globals__["inner"] = inner
    other = _compiled("elsewhere", "@njit\ndef other(x):\n    return x - 1\n", "other")
    elsewhere = _compiled("lmu_sk._probe", "@njit\ndef elsewhere(x):\n    return x\n", "elsewhere")
    steps = []

    @contextlib.contextmanager
    def step(what):
        try:
            yield
        except RuntimeError:
            steps.append(f"{what}: stopped")
            raise
        steps.append(what)

    with compile_notices(step):
        assert outer(1) == 4  # compiles outer, and inner within it: one step
        assert outer(2) == 6  # compiled: nothing
        assert other(1) == 0  # not the package's: nothing
        assert outer(1.5) == 5.0  # new argument types: a step
        with pytest.raises(Exception, match=r"(?i)typing"):
            outer("text")  # a compilation that fails: its step stopped
        thread = threading.Thread(target=elsewhere, args=(1,))
        thread.start()  # another thread's compilation: not this block's
        thread.join()
    assert inner(1.5j) == 1 + 1.5j  # after the block: nothing
    compiled = "compiling lmu_sk._probe.outer (first call with these argument types)"
    assert steps == [compiled, compiled, f"{compiled}: stopped"]
    assert elsewhere.signatures  # (it compiled, unnoticed)


def test_a_line_written_within_a_step_ends_its_line_first():
    """A compile notice within "screening 20 channels against y... " was written on its
    line, and the screening's seconds ended up alone on a line of their own."""
    stream = io.StringIO()
    log = StepLog("A: ", 1, stream)
    with log.step("outer"):
        with log.step("inner"):
            pass
        log.note("a note")
    with log.step("alone"):
        pass
    lines = stream.getvalue().splitlines()
    assert [re.sub(r"\d+\.\ds", "T", line) for line in lines] == [
        "A: outer... ",
        "A: inner... T",
        "A: a note",
        "A: outer: T",
        "A: alone... T",
    ]
    # a terminal's bar, its line ended by a step, is redrawn below it and ended once
    terminal = _Terminal()
    with ProgressBar(2, terminal, redraw_interval=0.0) as bar:
        bar.advance(1)
        with StepLog("B: ", 1, terminal).step("compiling"):
            pass
        bar.advance(1)
    text = terminal.getvalue()
    assert text.count("\n") == 3 and text.endswith("2/2 rows, 0.0s  \n"), repr(text)
    assert "\nB: compiling... " in text


def test_a_first_fit_tells_what_it_compiles(tmp_path):
    """In a new environment (an empty cache) the transformers' fit names each compiled
    loop it compiles with verbose, and takes it from the cache the next time."""
    script = (
        "import numpy as np\n"
        "from lmu_sk import LMUFeatures\n"
        "LMUFeatures(order=3, output='max', method='recurrence', verbose=1)"
        ".fit_transform(np.ones((2, 5)))\n"
    )
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    notice = "LMUFeatures: compiling lmu_sk.kernels.cpu._recurrence (first call"
    for first in (True, False):
        run = subprocess.run(
            [sys.executable, "-c", script], env=environment, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        assert (notice in run.stderr) == first, run.stderr


@pytest.mark.parametrize("verbose", [0, 1, 2])
def test_the_transformers_notices_follow_verbose(capsys, verbose):
    """The notices go to standard error with the transformer's label, at verbose 1 and
    above only."""
    probe = _compiled("lmu_sk._probe", "@njit\ndef probe(x):\n    return x * 3\n", "probe")
    with LMUPooledFeatures(verbose=verbose)._compile_notices():
        assert probe(2) == 6
    written = capsys.readouterr().err
    expected = re.compile(
        r"LMUPooledFeatures: compiling lmu_sk\._probe\.probe \(first call with these "
        r"argument types\)\.\.\. \d+\.\ds\n"
    )
    assert (expected.fullmatch(written) is not None) == (verbose > 0), written
