"""aeon estimators: aeon's own estimator checks, channels and unequal lengths kept, errors."""

import subprocess
import sys

import numpy as np
import pytest

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor

try:
    from aeon.testing.estimator_checking import parametrize_with_checks
except ImportError:
    parametrize_with_checks = None

needs_aeon = pytest.mark.skipif(parametrize_with_checks is None, reason="aeon is not installed")

# The wrappers run with n_jobs=1 (one Numba and one BLAS thread), the lmu_sk references with
# all cores: matrix products may sum in another order, so results agree to a few roundings
# of their dtype (float32 eps 1.2e-7, amplified by the ridge solve; float64 eps 2.2e-16).
FLOAT32 = {"rtol": 1e-5, "atol": 1e-6}
FLOAT64 = {"rtol": 1e-12, "atol": 1e-12}


def test_import_lmu_sk_does_not_import_aeon():
    code = "import sys, lmu_sk; print('aeon' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_missing_aeon_names_the_extra(monkeypatch):
    # None in sys.modules makes ``import aeon...`` raise ImportError, as when it is absent
    for name in [name for name in sys.modules if name.split(".")[0] == "aeon"] + ["aeon"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "lmu_sk.aeon", raising=False)
    with pytest.raises(ImportError, match=r'pip install "\.\[aeon\]" \(in a checkout'):
        import lmu_sk.aeon  # noqa: F401


if parametrize_with_checks is not None:
    from lmu_sk.aeon import LMUAeonClassifier, LMUAeonRegressor, LMUAeonTransformer

    aeon_checks = parametrize_with_checks(
        [LMUAeonClassifier, LMUAeonRegressor, LMUAeonTransformer]
    )
else:  # the checks are collected from aeon: one skipped test stands for them
    aeon_checks = pytest.mark.parametrize(
        "check", [pytest.param(None, marks=pytest.mark.skip(reason="aeon is not installed"))]
    )


@aeon_checks
def test_aeon_estimator_checks(check):
    check()


def _unequal_collection(n_cases=24, n_channels=3, seed=0):
    """Series of 15 to 40 points, channel ``c`` a noisy sine whose frequency sets the class."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for i in range(n_cases):
        label = i % 2
        n = int(rng.integers(15, 41))
        t = np.arange(n)
        rows = [
            np.sin((0.2 + 0.3 * label) * t * (c + 1)) + 0.1 * rng.standard_normal(n)
            for c in range(n_channels)
        ]
        X.append(np.stack(rows))
        y.append(label)
    return X, np.array(y)


@needs_aeon
def test_unequal_multivariate_predictions_are_lmu_sk_s():
    """The aeon classifier gives what LMUClassifier gives on the same list of series."""
    X, y = _unequal_collection()
    params = {"order": 4, "theta": [5.0, 20.0], "head": "ridge", "device": "cpu"}
    clf = LMUAeonClassifier(**params).fit(X, y)
    reference = LMUClassifier(**params, channels_first=True).fit(X, y)
    assert isinstance(clf.estimator_, LMUClassifier)
    assert clf.estimator_.channels_first is True
    np.testing.assert_array_equal(clf.predict(X), reference.predict(X))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba, reference.predict_proba(X), **FLOAT32)
    # float64 probabilities: rows sum to 1 within a few units of rounding
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    assert clf.get_tag("capability:multivariate") and clf.get_tag("capability:unequal_length")


@needs_aeon
def test_dense_head_probabilities_are_lmu_sk_s():
    X, y = _unequal_collection()
    y = np.array(["b", "a"])[y]  # string labels, columns in sorted order
    params = {"order": 4, "head": "dense", "hidden_layer_sizes": (8,), "random_state": 0}
    lmu = {"tol": 1e9, "n_iter_no_change": 1}  # two epochs, no ConvergenceWarning
    clf = LMUAeonClassifier(**params, device="cpu", lmu_params=lmu).fit(X, y)
    reference = LMUClassifier(**params, **lmu, device="cpu", channels_first=True).fit(X, y)
    # same code and seed: the same float32 numbers, up to the order of sums
    np.testing.assert_allclose(clf.predict_proba(X), reference.predict_proba(X), **FLOAT32)
    assert list(clf.classes_) == ["a", "b"]


@needs_aeon
def test_transformer_keeps_channels_and_lengths():
    """Features of each channel and of each series at its own length, as lmu_sk computes them."""
    X, _ = _unequal_collection(n_channels=3)
    Xt = LMUAeonTransformer(output="final", order=4, theta=10.0, device="cpu").fit_transform(X)
    reference = LMUFeatures(order=4, theta=10.0, device="cpu", channels_first=True)
    np.testing.assert_allclose(Xt, reference.fit_transform(X), **FLOAT64)
    assert Xt.shape == (len(X), 3 * 4)
    # the first two channels alone give the first two channels' features: none is mixed in
    Xt2 = LMUAeonTransformer(output="final", order=4, theta=10.0, device="cpu").fit_transform(
        [x[:2] for x in X]
    )
    assert Xt2.shape == (len(X), 2 * 4)
    np.testing.assert_allclose(Xt2, Xt[:, : 2 * 4], **FLOAT64)

    pooled = LMUAeonTransformer(order=4, theta=[5.0, 20.0], device="cpu").fit(X)
    assert isinstance(pooled.estimator_, LMUPooledFeatures)
    reference = LMUPooledFeatures(order=4, thetas=[5.0, 20.0], device="cpu", channels_first=True)
    np.testing.assert_allclose(pooled.transform(X), reference.fit(X).transform(X), **FLOAT64)


@needs_aeon
def test_regressor_matches_lmu_sk():
    X, y = _unequal_collection()
    target = np.array([x.mean() for x in X]) + y
    params = {"order": 4, "theta": [5.0, 20.0], "head": "ridge", "device": "cpu"}
    reg = LMUAeonRegressor(**params).fit(X, target)
    reference = LMURegressor(**params, channels_first=True).fit(X, target)
    prediction = reg.predict(X)
    assert prediction.shape == (len(X),)
    np.testing.assert_allclose(prediction, reference.predict(X), **FLOAT32)


@needs_aeon
@pytest.mark.parametrize(
    ("aeon_class", "lmu_class"),
    [("LMUAeonClassifier", LMUClassifier), ("LMUAeonRegressor", LMURegressor)],
)
def test_defaults_mirror_lmu_sk(aeon_class, lmu_class):
    """Each mirrored parameter defaults to the wrapped estimator's default."""
    import lmu_sk.aeon

    own = getattr(lmu_sk.aeon, aeon_class)().get_params()
    wrapped = lmu_class().get_params()
    mirrored = set(own) - {"n_jobs", "lmu_params"}
    assert mirrored <= set(wrapped)
    assert {name: own[name] for name in mirrored} == {name: wrapped[name] for name in mirrored}


@needs_aeon
@pytest.mark.parametrize(
    ("lmu_params", "error", "match"),
    [
        ({"channels_first": False}, ValueError, "cannot set channels_first"),
        ({"order": 3}, ValueError, r"LMUAeonClassifier\(order=\.\.\.\)"),
        ({"no_such": 1}, ValueError, "not a parameter of LMUClassifier"),
        ([("dropout", 0.1)], TypeError, "must be None or a dict"),
    ],
)
def test_bad_lmu_params(lmu_params, error, match):
    X, y = _unequal_collection(n_cases=8)
    with pytest.raises(error, match=match):
        LMUAeonClassifier(lmu_params=lmu_params).fit(X, y)


@needs_aeon
def test_bad_output_and_n_jobs():
    X, _ = _unequal_collection(n_cases=8)
    with pytest.raises(ValueError, match="Unknown output 'sequence'"):
        LMUAeonTransformer(output="sequence").fit(X)
    with pytest.raises(ValueError, match="n_jobs` must be None or an integer"):
        LMUAeonTransformer(n_jobs=1.5).fit(X)
    # a target per time point: LMURegressor's, which aeon's one target per series cannot
    # pass (its error asked for y of a shape aeon refuses)
    with pytest.raises(ValueError, match="one target per series"):
        LMUAeonRegressor(feature_output="sequence").fit(X, np.arange(8.0))


@needs_aeon
@pytest.mark.usefixtures("several_threads")
def test_n_jobs_limits_threads_and_keeps_results():
    import numba

    X, _ = _unequal_collection()
    before = numba.get_num_threads()
    params = {"order": 4, "theta": [5.0, 20.0], "device": "cpu"}
    one = LMUAeonTransformer(**params, n_jobs=1).fit(X)
    many = LMUAeonTransformer(**params, n_jobs=-1).fit(X)
    assert one._n_jobs == 1 and many._n_jobs >= 1
    np.testing.assert_allclose(one.transform(X), many.transform(X), **FLOAT64)
    assert numba.get_num_threads() == before


@needs_aeon
def test_benchmark_example_runs_offline(monkeypatch, capsys):
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "aeon_benchmark.py"
    monkeypatch.setattr(sys, "argv", [str(script)])
    example = runpy.run_path(str(script), run_name="example")
    main = example["main"]
    # lmu_sk alone: aeon's MiniRocket compiles its kernels for a minute and more in a
    # fresh environment (the documentation's gallery runs the example with both)
    argv = ["--resamples", "1", "--datasets", "UnitTest", "JapaneseVowels"]
    results = main([*argv, "--classifiers", "LMUAeonClassifier"])
    # published splits: LMU 0.909 and 0.986 here; well above chance (1/2 and 1/9)
    assert results[("UnitTest", "LMUAeonClassifier")][0][0] > 0.8
    assert results[("JapaneseVowels", "LMUAeonClassifier")][0][0] > 0.95
    assert {clf for _, clf in results} == {"LMUAeonClassifier"}
    assert "JapaneseVowels" in capsys.readouterr().out
    # MiniRocket's input: unequal lengths zero-padded to the longest
    X = [np.ones((2, 3)), 2 * np.ones((2, 5))]
    padded = example["pad"](X, 5)
    assert padded.shape == (2, 2, 5)
    np.testing.assert_array_equal(padded[0], [[1, 1, 1, 0, 0]] * 2)
    np.testing.assert_array_equal(padded[1], X[1])


@needs_aeon
def test_transformer_lmu_params_cannot_shadow_its_own():
    X, _ = _unequal_collection(n_cases=8)
    # order=None is not passed on, but remains the transformer's own parameter
    with pytest.raises(ValueError, match=r"LMUAeonTransformer\(order=\.\.\.\)"):
        LMUAeonTransformer(lmu_params={"order": 4}).fit(X)
    Xt = LMUAeonTransformer(order=4, theta=[5.0], lmu_params={"n_biases": 2}).fit_transform(X)
    reference = LMUPooledFeatures(order=4, thetas=[5.0], n_biases=2, channels_first=True)
    np.testing.assert_allclose(Xt, reference.fit_transform(X), **FLOAT64)
    # the pooled features' 'thetas' is the transformer's 'theta': the advice named
    # LMUAeonTransformer(thetas=...), a TypeError
    with pytest.raises(ValueError, match=r"own parameter 'theta'.*LMUAeonTransformer\(theta="):
        LMUAeonTransformer(lmu_params={"thetas": [3.0, 6.0]}).fit(X)


@needs_aeon
def test_aeon_wrappers_name_their_own_mistakes():
    """Several windows for one-window features gave a bare TypeError in LMUFeatures'
    terms; a dense head for the early classifier gave advice about a parameter the
    wrapper does not have."""
    from lmu_sk.aeon import LMUAeonEarlyClassifier

    X, y = _unequal_collection(n_cases=8)
    with pytest.raises(ValueError, match=r"several windows\) is for pooled features"):
        LMUAeonTransformer(output="final", theta=[3, 6]).fit(X)
    LMUAeonTransformer(output="final", theta=3.0, device="cpu").fit(X)
    with pytest.raises(ValueError, match=r"a window in a list\).*a number"):
        LMUAeonTransformer(output="final", theta=[3.0]).fit(X)
    equal = np.stack([x[:, :15] for x in X])  # the early classifier's equal lengths
    with pytest.raises(ValueError, match=r"Drop 'head' from lmu_params"):
        LMUAeonEarlyClassifier(lmu_params={"head": "dense"}).fit(equal, y)


@needs_aeon
def test_nan_padded_collections_get_the_way_to_pass_them():
    """aeon refused NaN-padded unequal lengths as missing values, naming no way through;
    the scikit-learn estimators give the list to pass. The wrappers now do, and the list
    works; NaN inside a series stays aeon's missing values."""
    from lmu_sk.aeon import LMUAeonEarlyClassifier

    X, y = _unequal_collection(n_cases=8)
    padded = np.full((8, 3, 40), np.nan)
    for i, x in enumerate(X):
        padded[i, :, : x.shape[1]] = x
    way = r"\[x\[:, ~np.isnan\(x\).any\(axis=0\)\] for x in X\]"
    for model in (LMUAeonClassifier(order=3, device="cpu"), LMUAeonTransformer(order=3)):
        with pytest.raises(ValueError, match=rf"end in NaN \(\d+ of them\).*{way}"):
            model.fit(padded, y)
        model.fit([x[:, ~np.isnan(x).any(axis=0)] for x in padded], y)
    with pytest.raises(ValueError, match="missing values"):  # one length: aeon's message
        LMUAeonEarlyClassifier().fit(padded, y)
    # one channel as a 2-D collection
    with pytest.raises(ValueError, match=r"\[x\[None, ~np.isnan\(x\)\] for x in X\]"):
        LMUAeonClassifier(order=3, device="cpu").fit(padded[:, 0], y)
    LMUAeonClassifier(order=3, device="cpu").fit([x[None, ~np.isnan(x)] for x in padded[:, 0]], y)
    holes = np.stack([x[:, :15] for x in X])
    holes[0, 0, 3] = np.nan
    with pytest.raises(ValueError, match="missing values"):
        LMUAeonClassifier(device="cpu").fit(holes, y)


@needs_aeon
@pytest.mark.parametrize(
    ("X", "match"),
    [
        (np.zeros((0, 1, 10)), "a collection of no series"),
        ([], "an empty list of series"),
        (np.zeros((4, 1, 0)), "series of no time points"),
        ([np.ones((1, 5)), np.ones((1, 0)), np.ones((1, 3))], "series 1 of shape"),
    ],
)
@pytest.mark.parametrize("name", ["LMUAeonClassifier", "LMUAeonRegressor", "LMUAeonTransformer"])
def test_empty_collections_and_series_get_a_clear_error(name, X, match):
    """N13: 0 cases or a 0-length series failed in aeon's checks with an IndexError or
    NumPy's "zero-size array"; lmu_sk refuses them first, naming the estimator."""
    import lmu_sk.aeon

    estimator = getattr(lmu_sk.aeon, name)()
    y = np.arange(len(X)) % 2 + np.linspace(0.0, 0.5, len(X))
    with pytest.raises(ValueError, match=rf"^{name} got {match}"):
        estimator.fit(X) if name == "LMUAeonTransformer" else estimator.fit(X, y)
    fitted_X, fitted_y = _unequal_collection(n_cases=8)
    if name == "LMUAeonTransformer":
        fitted = estimator.fit(fitted_X)
        with pytest.raises(ValueError, match=rf"^{name} got {match}"):
            fitted.transform(X)
    else:
        if name == "LMUAeonRegressor":
            fitted_y = fitted_y + np.linspace(0.0, 0.5, len(fitted_y))  # continuous targets
        fitted = estimator.fit(fitted_X, fitted_y)
        with pytest.raises(ValueError, match=rf"^{name} got {match}"):
            fitted.predict(X)


@needs_aeon
def test_the_regressors_head_is_what_its_docstring_says():
    """N14: LMUAeonRegressor's docstring said head='auto' is the dense head; it is the ridge
    head up to LMURegressor's limit (its docstring then said 10 000 series where the limit
    is 100 000: the figure is read from the estimators' constant)."""
    from lmu_sk.aeon import LMUAeonRegressor
    from lmu_sk.estimators import _RIDGE_MAX_SAMPLES

    X, y = _unequal_collection(n_cases=12)
    regressor = LMUAeonRegressor().fit(X, y + np.linspace(0.0, 0.5, len(y)))
    assert regressor.estimator_.head_kind_ == "ridge"
    doc = " ".join(LMUAeonRegressor.__doc__.split())
    limit = f"{_RIDGE_MAX_SAMPLES:,}".replace(",", " ")
    assert f"'auto' is ridge up to {limit} training series and the dense head beyond" in doc
    assert "'auto' is the dense head" not in doc


# ---------------------------------------------------------------------------- early
if parametrize_with_checks is not None:
    from lmu_sk.aeon import LMUAeonEarlyClassifier

    early_checks = parametrize_with_checks([LMUAeonEarlyClassifier])
else:
    early_checks = aeon_checks

# aeon's own configuration excludes this check for its early classifiers (TEASER,
# ProbabilityThresholdEarlyClassifier): predict keeps state_info for update_predict by design
STATEFUL_PREDICT = "check_non_state_changing_method"


@early_checks
def test_aeon_early_classifier_checks(check):
    if check.func.__name__ == STATEFUL_PREDICT:
        pytest.skip("predict keeps state_info for update_predict (aeon excludes it for TEASER)")
    check()


def _gunpoint_like(n_cases=45, n_steps=40, seed=0):
    """Three classes told apart early, midway and late (a bump), two channels."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_cases) % 3
    t = np.arange(n_steps)
    centre = np.array([0.15, 0.45, 0.75])[y] * n_steps
    bump = np.exp(-(((t[None, :] - centre[:, None]) / 3.0) ** 2))
    X = 0.3 * rng.standard_normal((n_cases, 2, n_steps)) + 1.5 * bump[:, None, :]
    return X, np.array(["early", "middle", "late"])[y]


@needs_aeon
def test_aeon_early_predictions_are_lmu_sk_s_with_aeon_s_conventions():
    from lmu_sk import LMUEarlyClassifier

    X, y = _gunpoint_like()
    X_test, y_test = _gunpoint_like(seed=1)
    clf = LMUAeonEarlyClassifier(checkpoints=8, device="cpu").fit(X, y)
    assert isinstance(clf.estimator_, LMUEarlyClassifier)
    reference = LMUEarlyClassifier(
        LMUClassifier(device="cpu", channels_first=True), checkpoints=8
    ).fit(X, y)
    # at full length every case is decided, as the lmu_sk model decides it
    labels, decided = clf.predict(X_test)
    assert decided.dtype == bool and decided.all()
    decisions = reference.decide(X_test)
    np.testing.assert_array_equal(labels, decisions.labels)
    state = clf.get_state_info()
    assert state.shape == (len(X_test), 4)
    np.testing.assert_array_equal(state[:, 3], decisions.steps)
    np.testing.assert_array_equal(clf.classes_[state[:, 2]], decisions.labels)
    proba, _ = clf.predict_proba(X_test)
    # aeon's model fits and predicts on one thread (its n_jobs=1), the reference on all:
    # their products are summed in other groupings, a few units of 1e-16 that the
    # heads' solves and the calibrated softmax carry to about 1e-9 (1.2e-9 seen)
    np.testing.assert_allclose(proba, decisions.proba, rtol=0, atol=1e-8)
    harmonic, accuracy, earliness = clf.score(X_test, y_test)
    assert accuracy == pytest.approx(np.mean(decisions.labels == y_test))
    assert earliness == pytest.approx(np.mean(decisions.steps) / X.shape[-1])
    assert harmonic == pytest.approx(2 * accuracy * (1 - earliness) / (accuracy + 1 - earliness))


@needs_aeon
def test_aeon_early_update_predict_continues_the_undecided_cases():
    X, y = _gunpoint_like()
    X_test, _ = _gunpoint_like(seed=2)
    clf = LMUAeonEarlyClassifier(checkpoints=8, device="cpu").fit(X, y)
    full_labels, _ = clf.predict(X_test)
    full_state = clf.get_state_info().copy()
    clf.reset_state_info()
    # a prefix: some decided, the others -1 with probabilities -1
    labels, decided = clf.predict(X_test[:, :, :15])
    assert decided.any() and not decided.all()
    assert (labels[~decided] == "-1").all()
    proba, _ = clf.predict_proba(X_test[:, :, :15])
    assert (proba[~decided] == -1).all()
    np.testing.assert_allclose(proba[decided].sum(axis=1), 1.0)
    np.testing.assert_array_equal(labels[decided], full_labels[decided])
    # the undecided cases continue, the decided ones removed; the same cases again, or
    # series no longer than before: clear errors
    rest = ~decided
    with pytest.raises(ValueError, match="undecided"):
        clf.update_predict(X_test[:, :, :30])
    with pytest.raises(ValueError, match="longer series"):
        clf.update_predict(X_test[rest][:, :, :15])
    more, more_decided = clf.update_predict(X_test[rest][:, :, :25])
    state = clf.get_state_info()
    assert len(state) == rest.sum()
    np.testing.assert_array_equal(more[more_decided], full_labels[rest][more_decided])
    np.testing.assert_array_equal(state[more_decided, 3], full_state[rest][more_decided, 3])
    # to the end: every case decided
    if not more_decided.all():
        last, last_decided = clf.update_predict_proba(X_test[rest][~more_decided])
        assert last_decided.all()
        np.testing.assert_allclose(last.sum(axis=1), 1.0)


@needs_aeon
def test_aeon_early_refuses_unequal_lengths_and_bad_cost():
    X, y = _gunpoint_like()
    with pytest.raises(ValueError, match="cost must be >= 0"):
        LMUAeonEarlyClassifier(cost=-1.0, device="cpu").fit(X, y)
    clf = LMUAeonEarlyClassifier(checkpoints=4, device="cpu").fit(X, y)
    assert not clf.get_tag("capability:unequal_length")
    with pytest.raises(ValueError, match="unequal"):
        clf.fit([x[:, : 20 + i % 5] for i, x in enumerate(X)], y)


@needs_aeon
def test_aeon_early_reads_series_longer_than_the_training_ones_up_to_their_length():
    X, y = _gunpoint_like()
    X_test, y_test = _gunpoint_like(seed=3)
    clf = LMUAeonEarlyClassifier(checkpoints=8, device="cpu").fit(X, y)
    labels, decided = clf.predict(X_test)
    state = clf.get_state_info().copy()
    # later time points are not read (aeon refuses NaN anywhere before that): every case
    # is decided by the training length (earliness over the training length, as aeon's)
    longer = np.concatenate([X_test, np.full((len(X_test), 2, 17), np.nan)], axis=2)
    with pytest.raises(ValueError, match="missing values"):
        clf.predict(longer)
    longer[:, :, X.shape[-1] :] = 1e3
    more, more_decided = clf.predict(longer)
    assert more_decided.all() and decided.all()
    np.testing.assert_array_equal(more, labels)
    np.testing.assert_array_equal(clf.get_state_info(), state)
    assert clf.score(longer, y_test) == pytest.approx(clf.score(X_test, y_test))


@needs_aeon
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("LMUAeonRegressor", {"device": -1}),
        ("LMUAeonClassifier", {"device": "tpu"}),
        ("LMUAeonTransformer", {"device": "tpu"}),
        ("LMUAeonEarlyClassifier", {"device": "tpu"}),
    ],
)
def test_parameter_errors_name_the_wrapper(name, params):
    """The wrapped estimator validates the parameters at fit: its errors named it
    ("The 'device' parameter of LMURegressor ..."), a class the user never built."""
    from lmu_sk import aeon

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((12, 1, 20)), np.arange(12) % 2
    if name == "LMUAeonRegressor":
        y = rng.standard_normal(12)
    with pytest.raises(ValueError, match=f"The 'device' parameter of {name} must be"):
        getattr(aeon, name)(**params).fit(X, y)


@needs_aeon
@pytest.mark.parametrize(
    ("lmu_params", "extra"),
    [
        ({"dropout": 5.0}, {"head": "dense"}),  # an LMUClassifier parameter
        ({"discretizer": "rk4"}, {}),  # one of the LMUPooledFeatures inside
    ],
)
def test_errors_of_lmu_params_name_lmu_params(lmu_params, extra):
    """A bad value given in lmu_params was named "The 'dropout' parameter of
    LMUAeonClassifier", which has no such parameter (or named the inner
    LMUPooledFeatures): it is named as a parameter in lmu_params of the wrapper."""
    from lmu_sk.aeon import LMUAeonClassifier

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((12, 2, 20)), np.arange(12) % 3
    (name,) = lmu_params
    expected = f"The '{name}' parameter in lmu_params of LMUAeonClassifier must be"
    with pytest.raises(ValueError, match=expected):
        LMUAeonClassifier(order=4, device="cpu", lmu_params=lmu_params, **extra).fit(X, y)


@needs_aeon
@pytest.mark.gpu
@pytest.mark.parametrize("output", ["pooled", "final"])
def test_transformer_returns_numpy_when_lmu_params_keep_features_on_the_gpu(fake_gpu, output):
    from lmu_sk.aeon import LMUAeonTransformer

    X = np.random.default_rng(0).standard_normal((12, 2, 30))
    kwargs = {} if output == "pooled" else {"theta": 10.0, "order": 4}
    transformer = LMUAeonTransformer(
        output=output, device="gpu", lmu_params={"return_gpu_arrays": True}, **kwargs
    )
    expected = LMUAeonTransformer(output=output, device="cpu", **kwargs).fit_transform(X)
    for Xt in (transformer.fit_transform(X), transformer.transform(X)):
        assert type(Xt) is np.ndarray
        np.testing.assert_allclose(Xt, expected, atol=1e-5)
