"""Saved estimators carry the lmu_sk version; loading checks it."""

import importlib.util
import io
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.exceptions import InconsistentVersionWarning as SklearnVersionWarning

import lmu_sk
from lmu_sk import (
    DenseHeadClassifier,
    DenseHeadRegressor,
    InconsistentVersionWarning,
    LMUClassifier,
    LMUEarlyClassifier,
    LMUFeatures,
    LMUPooledFeatures,
    LMURegressor,
)
from lmu_sk._persistence import PICKLED_MODULES, PICKLED_PACKAGES, VersionedPickleMixin


def _public(name: str):
    """A public class, from the package root when exported there, else from lmu_sk.ridge."""
    found = getattr(lmu_sk, name, None)
    return found if found is not None else getattr(importlib.import_module("lmu_sk.ridge"), name)


RidgeHeadClassifier = _public("RidgeHeadClassifier")
RidgeHeadRegressor = _public("RidgeHeadRegressor")

rng = np.random.default_rng(0)
X = rng.standard_normal((40, 20))
F = X[:, :6]
y_class = (X[:, -5:].sum(axis=1) > 0).astype(int)
y_reg = X[:, -5:].sum(axis=1)


def _fitted():
    """One fitted instance of every public estimator, with data to predict or transform."""
    dense = {"hidden_layer_sizes": (8,), "max_iter": 20, "random_state": 0}
    with warnings.catch_warnings():
        # whether 20 epochs converge does not matter to saving and loading the weights
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _fit_all(dense)


def _fit_all(dense: dict) -> list:
    return [
        (LMUFeatures(order=4).fit(X), X, "transform"),
        (LMUPooledFeatures(order=4, thetas=[5, 20]).fit(X), X, "transform"),
        (LMUClassifier().fit(X, y_class), X, "decision_function"),
        (LMUClassifier(head="dense", order=4, **dense).fit(X, y_class), X, "predict_proba"),
        (LMURegressor(order=4, **dense).fit(X, y_reg), X, "predict"),
        (DenseHeadClassifier(**dense).fit(F, y_class), F, "predict_proba"),
        (DenseHeadRegressor(**dense).fit(F, y_reg), F, "predict"),
        (RidgeHeadClassifier().fit(F, y_class), F, "decision_function"),
        (RidgeHeadRegressor().fit(F, y_reg), F, "predict"),
        (LMUEarlyClassifier(checkpoints=4).fit(X, y_class), X, "predict_proba"),
        # the ridge heads' Gaussian kernel: their training rows saved with them
        (LMUClassifier(kernel="rbf").fit(X, y_class), X, "predict_proba"),
        (RidgeHeadRegressor(kernel="rbf").fit(F, y_reg), F, "predict"),
    ]


FITTED = _fitted()
IDS = [type(estimator).__name__ for estimator, _, _ in FITTED]


def _pickled_by(version: str | None, estimator, monkeypatch) -> bytes:
    """The pickle that lmu_sk ``version`` would write; ``None``: one storing no version
    (as 0.1.0 and 0.2.0 wrote them: scikit-learn's ``BaseEstimator.__getstate__`` alone)."""
    with monkeypatch.context() as patch:
        if version is None:
            patch.setattr(VersionedPickleMixin, "__getstate__", BaseEstimator.__getstate__)
        else:
            patch.setattr("lmu_sk._persistence.__version__", version)
        return pickle.dumps(estimator)


@pytest.mark.parametrize(("estimator", "X_in", "method"), FITTED, ids=IDS)
def test_round_trip_is_silent_and_predicts_the_same(estimator, X_in, method):
    state = estimator.__getstate__()
    assert state["_lmu_sk_version"] == lmu_sk.__version__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = pickle.loads(pickle.dumps(estimator))
    assert "_lmu_sk_version" not in vars(loaded)
    # the same weights and the same code: bit-for-bit equal results
    np.testing.assert_array_equal(getattr(loaded, method)(X_in), getattr(estimator, method)(X_in))


def test_every_public_estimator_stores_its_version():
    public = [getattr(lmu_sk, name) for name in lmu_sk.__all__]
    public += [RidgeHeadClassifier, RidgeHeadRegressor]
    estimators = [c for c in public if isinstance(c, type) and issubclass(c, BaseEstimator)]
    assert len(estimators) >= 8
    for cls in estimators:
        assert issubclass(cls, VersionedPickleMixin), cls.__name__
        assert cls().__getstate__()["_lmu_sk_version"] == lmu_sk.__version__


@pytest.mark.parametrize(("estimator", "X_in", "method"), FITTED, ids=IDS)
def test_other_version_warns_naming_both_versions(estimator, X_in, method, monkeypatch):
    data = _pickled_by("0.0.1", estimator, monkeypatch)
    with pytest.warns(InconsistentVersionWarning) as caught:
        loaded = pickle.loads(data)
    ours = [w.message for w in caught if isinstance(w.message, InconsistentVersionWarning)]
    # the composites warn once per saved estimator: themselves and their fitted parts
    assert type(estimator).__name__ in {message.estimator_name for message in ours}
    for message in ours:
        assert message.original_version == "0.0.1"
        assert message.current_version == lmu_sk.__version__
        text = str(message)
        assert "lmu_sk 0.0.1" in text and f"lmu_sk {lmu_sk.__version__}" in text
        assert "refitting" in text
    # it still loads: same code here, so the same results
    np.testing.assert_array_equal(getattr(loaded, method)(X_in), getattr(estimator, method)(X_in))


def test_state_without_version_warns_as_saved_by_an_old_release(monkeypatch):
    estimator = FITTED[2][0]  # LMUClassifier() with its pooled features and ridge head
    data = _pickled_by(None, estimator, monkeypatch)
    assert b"_lmu_sk_version" not in data
    with pytest.warns(InconsistentVersionWarning, match=r"saved by lmu_sk 0\.2\.0 or earlier"):
        pickle.loads(data)


def test_warning_is_scikit_learns_class_for_filters(monkeypatch):
    data = _pickled_by("0.0.1", FITTED[0][0], monkeypatch)
    with warnings.catch_warnings():
        # a production setting that turns scikit-learn's version warnings into errors
        warnings.simplefilter("error", SklearnVersionWarning)
        with pytest.raises(SklearnVersionWarning, match="LMUFeatures was saved by lmu_sk"):
            pickle.loads(data)


def test_warning_itself_pickles():
    warning = InconsistentVersionWarning(
        estimator_name="LMUFeatures", current_version="1.0", original_version="0.9"
    )
    loaded = pickle.loads(pickle.dumps(warning))
    assert str(loaded) == str(warning)


def test_state_lacking_a_parameter_fails_at_load_naming_it(monkeypatch):
    # a 0.1.0 pickle: no version stored, and no `verbose` (a later parameter); before, it
    # loaded silently and `predict` raised an AttributeError about `verbose`
    estimator = LMUFeatures(order=4).fit(X)
    state = BaseEstimator.__getstate__(estimator)
    del state["verbose"]
    loaded = LMUFeatures.__new__(LMUFeatures)
    with pytest.raises(pickle.UnpicklingError) as error:
        loaded.__setstate__(state)
    message = str(error.value)
    assert "'verbose'" in message
    assert "lmu_sk 0.2.0 or earlier" in message and f"lmu_sk {lmu_sk.__version__}" in message
    assert "Refit" in message


def test_same_version_lacking_a_parameter_fails_at_load_naming_it():
    """Audit N11: a same-version pickle without ``class_weight`` loaded, then failed with an
    AttributeError at predict or repr. Such a state is incomplete: refused at load."""
    model = LMUClassifier().fit(X, y_class)
    state = model.__getstate__()
    del state["class_weight"]
    loaded = LMUClassifier.__new__(LMUClassifier)
    with pytest.raises(pickle.UnpicklingError, match=r"lacks 'class_weight'.*incomplete"):
        loaded.__setstate__(state)


@pytest.mark.parametrize(
    ("estimator", "attribute"),
    [
        (FITTED[2][0], "features_"),  # the default classifier
        (FITTED[2][0], "feature_scale_"),
        (FITTED[1][0], "spec_"),  # LMUPooledFeatures
        (FITTED[0][0], "state_matrix_"),  # LMUFeatures
        (FITTED[3][0], "head_"),  # a dense-headed classifier
        (FITTED[5][0], "coefs_"),  # DenseHeadClassifier
        (FITTED[7][0], "temperature_"),  # RidgeHeadClassifier
        (FITTED[8][0], "clip_margin_"),  # RidgeHeadRegressor
    ],
    ids=lambda value: value if isinstance(value, str) else type(value).__name__,
)
def test_a_fitted_state_lacking_a_fitted_attribute_fails_at_load(estimator, attribute):
    """N11: a pickle missing ``features_``, ``spec_`` or ``feature_scale_`` loaded and
    failed with an AttributeError at predict; it is refused at load, naming what lacks."""
    state = estimator.__getstate__()
    del state[attribute]
    loaded = type(estimator).__new__(type(estimator))
    with pytest.raises(pickle.UnpicklingError, match=rf"lacks '{attribute}', which every fitted"):
        loaded.__setstate__(state)


def test_unfitted_states_load_and_say_not_fitted():
    """A state without any fitted attribute is an unfitted estimator: it loads, and using
    it raises NotFittedError as before saving."""
    from sklearn.exceptions import NotFittedError

    for estimator in (LMUClassifier(), LMUFeatures(), RidgeHeadRegressor()):
        loaded = pickle.loads(pickle.dumps(estimator))
        assert loaded.get_params() == estimator.get_params()
    with pytest.raises(NotFittedError):
        pickle.loads(pickle.dumps(LMUClassifier())).predict(X)
    # without standardization a fitted composite has no feature_scale_ to lack
    plain = LMURegressor(scale_features=False, order=4).fit(X, y_reg)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(plain)).predict(X), plain.predict(X))


def _holds_generator(obj, depth: int = 0) -> bool:
    """Whether a NumPy random Generator is among ``obj``'s attributes, at any depth."""
    if isinstance(obj, np.random.Generator):
        return True
    if depth > 4 or not hasattr(obj, "__dict__"):
        return False
    return any(_holds_generator(value, depth + 1) for value in vars(obj).values())


@pytest.mark.parametrize(("estimator", "X_in", "method"), FITTED, ids=IDS)
def test_skops_round_trip(estimator, X_in, method):
    sio = pytest.importorskip("skops.io")
    if _holds_generator(estimator) and np.lib.NumpyVersion(np.__version__) < "1.25.0":
        # skops saves a Generator through BitGenerator.seed_seq, new in NumPy 1.25 (the
        # skops releases that install beside NumPy 1.24 fail on it)
        pytest.skip("skops cannot save NumPy < 1.25 random generators")
    data = sio.dumps(estimator)
    untrusted = sio.get_untrusted_types(data=data)
    # skops asks to trust lmu_sk's own classes only: nothing else needs trusting
    assert untrusted and all(name.startswith("lmu_sk.") for name in untrusted), untrusted
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = sio.loads(data, trusted=untrusted)
    np.testing.assert_array_equal(getattr(loaded, method)(X_in), getattr(estimator, method)(X_in))


def test_skops_load_warns_on_another_version(monkeypatch):
    sio = pytest.importorskip("skops.io")
    estimator = FITTED[0][0]
    with monkeypatch.context() as patch:
        patch.setattr("lmu_sk._persistence.__version__", "0.0.1")
        data = sio.dumps(estimator)
    with pytest.warns(InconsistentVersionWarning, match="saved by lmu_sk 0.0.1"):
        sio.loads(data, trusted=sio.get_untrusted_types(data=data))


# ---------------------------------------------------------------------- the pickle surface
class _NamesSeen(pickle.Unpickler):
    """An unpickler that records every global (module, name) the pickle makes it import."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.names: set[tuple[str, str]] = set()

    def find_class(self, module, name):
        self.names.add((module, name))
        return super().find_class(module, name)


def _saved_objects() -> dict:
    """Fitted models of every kind, a transformer of each kind and streams mid-way."""
    series = np.cumsum(rng.standard_normal((30, 40)), axis=1)
    labels = np.arange(30) % 2
    dense = {"hidden_layer_sizes": (4,), "max_iter": 3, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        made = {
            "default classifier": LMUClassifier().fit(series, labels),
            "default regressor": LMURegressor().fit(series, series[:, -1]),
            "dense-head classifier": LMUClassifier(head="dense", order=4, **dense).fit(
                series, labels
            ),
            "dense-head regressor (sgd)": LMURegressor(
                head="dense", order=4, solver="sgd", **dense
            ).fit(series, series[:, -1]),
            "LMUFeatures": LMUFeatures(order=4).fit(series),
            "LMUPooledFeatures": LMUPooledFeatures(order=3, thetas=[4, 20]).fit(series),
            "early classifier": LMUEarlyClassifier(checkpoints=5).fit(series, labels),
        }
    # streams mid-way: part of a block of the pooled windows seen
    made["stream of the default classifier"] = made["default classifier"].stream(2)
    made["stream of the default classifier"].update(series[:2, :13])
    made["stream of a dense-head model"] = made["dense-head classifier"].stream(2)
    made["stream of a dense-head model"].update(series[:2, :7])
    made["pooled features stream"] = made["LMUPooledFeatures"].stream(2).update(series[:2, :9])
    made["stream of the early classifier"] = made["early classifier"].stream(4)
    made["stream of the early classifier"].update(series[:4, :17])
    return made


SAVED = _saved_objects()


@pytest.mark.parametrize("name", list(SAVED))
def test_saved_models_name_only_the_declared_modules(name):
    """A pickle names the module of every class it holds: only those declared
    (``PICKLED_MODULES``, ``PICKLED_PACKAGES``; docs/guide/architecture.md) may appear."""
    obj = SAVED[name]
    data = pickle.dumps(obj)
    seen = _NamesSeen(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same version: silent
        loaded = seen.load()
    ours = {module for module, _ in seen.names if module.split(".")[0] == "lmu_sk"}
    others = {module.split(".")[0] for module, _ in seen.names} - {"lmu_sk"}
    assert ours and ours <= set(PICKLED_MODULES), sorted(ours)
    assert others <= set(PICKLED_PACKAGES), sorted(others)
    # and what was saved is what loads
    if hasattr(obj, "decision_steps"):
        np.testing.assert_array_equal(loaded.predict_proba(), obj.predict_proba())
        np.testing.assert_array_equal(loaded.decision_steps, obj.decision_steps)
    elif hasattr(obj, "steps_seen"):
        np.testing.assert_array_equal(loaded.transform(), obj.transform())
    elif hasattr(obj, "transform"):
        np.testing.assert_array_equal(loaded.transform(X), obj.transform(X))
    else:
        np.testing.assert_array_equal(loaded.predict(X), obj.predict(X))


def test_the_internal_state_is_saved_as_plain_data():
    """The pooled features' spec_, the dense head's optimizer and training history: plain
    data in the saved state, the same objects again once loaded."""
    pooled = SAVED["LMUPooledFeatures"]
    state = pooled.__getstate__()
    assert isinstance(state["spec_"], dict) and state["spec_"] == pooled.spec_.to_plain()
    assert pickle.loads(pickle.dumps(pooled)).spec_ == pooled.spec_
    for name in ("dense-head classifier", "dense-head regressor (sgd)"):
        head = SAVED[name].head_
        state = head.__getstate__()
        assert isinstance(state["_optimizer"], dict) and isinstance(state["_history"], dict)
        loaded = pickle.loads(pickle.dumps(head))
        assert type(loaded._optimizer) is type(head._optimizer)
        assert loaded._history == head._history
        for key, value in vars(head._optimizer).items():
            if isinstance(value, list):
                for a, b in zip(value, getattr(loaded._optimizer, key), strict=True):
                    np.testing.assert_array_equal(a, b)
            elif key != "_xp":
                assert getattr(loaded._optimizer, key) == value, key


def test_models_saved_with_the_objects_themselves_still_load(monkeypatch):
    """Pickles written before the plain data (the spec, optimizer and history as objects)
    load, predict the same and keep training."""
    from lmu_sk.head import _BaseDenseHead

    models = [SAVED["default classifier"], SAVED["dense-head classifier"]]
    with monkeypatch.context() as patch:
        patch.setattr(LMUPooledFeatures, "_plain_attributes", {})
        patch.setattr(_BaseDenseHead, "_plain_attributes", {})
        data = pickle.dumps(models)
    assert b"lmu_sk.engine.pooling" in data and b"lmu_sk.neural" in data
    loaded = pickle.loads(data)
    for before, after in zip(models, loaded, strict=True):
        np.testing.assert_array_equal(after.predict(X), before.predict(X))
    assert loaded[0].features_.spec_ == models[0].features_.spec_
    series = np.cumsum(rng.standard_normal((6, 40)), axis=1)
    loaded[1].partial_fit(series, np.arange(6) % 2)  # the optimizer carries on


# ---------------------------------------------------------------------------- skops
def test_trusted_types_cover_every_saved_model():
    """``lmu_sk.TRUSTED_TYPES`` lists what the saved estimators hold, each name an lmu_sk
    type that exists (so a moved class shows here)."""
    sio = pytest.importorskip("skops.io")
    listed = set(lmu_sk.TRUSTED_TYPES)
    checked = 0
    for estimator, X_in, method in FITTED:
        try:
            data = sio.dumps(estimator)
        except AttributeError as error:
            # skops saves a NumPy Generator through its seed_seq, which NumPy has from 1.25:
            # under NumPy 1.24 (the lowest declared) a model holding one (the dense head's)
            # cannot be saved by skops, whatever lmu_sk does; pickle and joblib save it
            if "seed_seq" in str(error) and not hasattr(np.random.PCG64(0), "seed_seq"):
                continue
            raise
        checked += 1
        assert set(sio.get_untrusted_types(data=data)) <= listed, type(estimator).__name__
        loaded = sio.loads(data, trusted=lmu_sk.TRUSTED_TYPES)
        np.testing.assert_array_equal(
            getattr(loaded, method)(X_in), getattr(estimator, method)(X_in)
        )
    assert checked >= 5  # the transformers, the ridge heads and the default classifier
    for name in listed - {"numpy.dtype"}:  # (a dtype parameter given as np.dtype)
        module, _, qualname = name.rpartition(".")
        assert module.startswith("lmu_sk.")
        if module == "lmu_sk.aeon" and importlib.util.find_spec("aeon") is None:
            continue  # the aeon wrappers need aeon (the aeon extra)
        assert isinstance(getattr(importlib.import_module(module), qualname), type), name


def test_a_dtype_parameter_given_as_a_numpy_dtype_loads_with_the_trusted_types():
    """Parameters are stored as given: ``dtype=np.dtype('float32')`` saved a NumPy dtype,
    refused as untrusted by ``lmu_sk.TRUSTED_TYPES``."""
    sio = pytest.importorskip("skops.io")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 15))
    y = np.arange(20) % 2
    model = LMUClassifier(order=4, dtype=np.dtype("float32")).fit(X, y)
    loaded = sio.loads(sio.dumps(model), trusted=lmu_sk.TRUSTED_TYPES)
    assert loaded.dtype == np.dtype("float32")
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_the_aeon_wrappers_load_with_the_trusted_types():
    """The aeon wrappers are lmu_sk estimators too: skops loads them trusting
    ``lmu_sk.TRUSTED_TYPES`` alone (they were missing: UntrustedTypesFoundException)."""
    sio = pytest.importorskip("skops.io")
    aeon = pytest.importorskip("lmu_sk.aeon")
    rng = np.random.default_rng(0)
    X3 = rng.standard_normal((24, 2, 20))
    labels = np.arange(24) % 2
    X3[:, 0, -5:] += labels[:, None]
    models = [
        (aeon.LMUAeonClassifier(order=4).fit(X3, labels), "predict_proba"),
        (aeon.LMUAeonRegressor(order=4).fit(X3, labels + 0.5), "predict"),
        (aeon.LMUAeonTransformer(order=4).fit(X3), "transform"),
        (aeon.LMUAeonEarlyClassifier(checkpoints=4).fit(X3, labels), "predict_proba"),
    ]
    for model, method in models:
        data = sio.dumps(model)
        assert set(sio.get_untrusted_types(data=data)) <= set(lmu_sk.TRUSTED_TYPES)
        loaded = sio.loads(data, trusted=lmu_sk.TRUSTED_TYPES)
        expected = getattr(model, method)(X3)
        result = getattr(loaded, method)(X3)
        if isinstance(expected, tuple):  # the early classifier's (proba, decided)
            expected, result = expected[0], result[0]
        np.testing.assert_array_equal(result, expected)


def test_skops_load_with_the_trusted_types_refuses_a_foreign_callable():
    """N3: the skops recipe of the persistence guide trusted whatever the file listed, so a
    file that also held ``functools.partial(os.getcwd)`` loaded the foreign callable. With
    ``trusted=lmu_sk.TRUSTED_TYPES`` it is refused; the guide uses that."""
    import functools
    import os
    from pathlib import Path

    sio = pytest.importorskip("skops.io")
    model = LMUClassifier().fit(X, y_class)
    model.callback = functools.partial(os.getcwd)  # what a tampered file could carry
    data = sio.dumps(model)
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException, match=r"functools\.partial"):
        sio.loads(data, trusted=lmu_sk.TRUSTED_TYPES)
    guide = (Path(__file__).resolve().parents[2] / "docs/guide/persistence.md").read_text()
    assert "trusted=lmu_sk.TRUSTED_TYPES" in guide
    assert "trusted=sio.get_untrusted_types" not in guide


@pytest.mark.parametrize("composite", [LMUClassifier, LMURegressor])
def test_a_dense_model_loaded_read_only_trains_on(composite, tmp_path):
    """A model loaded with joblib's mmap_mode='r' holds read-only optimizer state: its
    partial_fit failed with Numba's typing error (setitem on a readonly array)."""
    joblib = pytest.importorskip("joblib")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 20))
    y = np.arange(40) % 2 if composite is LMUClassifier else X[:, -1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = composite(head="dense", max_iter=3, random_state=0, device="cpu").fit(X, y)
        joblib.dump(model, tmp_path / "model.joblib")
        mapped = joblib.load(tmp_path / "model.joblib", mmap_mode="r").partial_fit(X, y)
        loaded = joblib.load(tmp_path / "model.joblib").partial_fit(X, y)
    for a, b in zip(mapped.coefs_, loaded.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_complete_but_inconsistent_state_is_refused_at_load():
    """Only missing attributes were refused: a head_ of None, a standardization of another
    width or half of it loaded, then failed with raw errors (an AttributeError, a
    broadcast error) or a NaN message about the input."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 20)), np.arange(30) % 2
    state = LMUClassifier(device="cpu").fit(X, y).__getstate__()
    for change, problem in [
        ({"head_": None}, "a head_ of type NoneType"),
        ({"feature_mean_": state["feature_mean_"][:5]}, r"a feature_mean_ of shape \(5,\)"),
        ({"feature_scale_": None}, "only one of feature_mean_ and feature_scale_"),
    ]:
        with pytest.raises(pickle.UnpicklingError, match=problem):
            LMUClassifier.__new__(LMUClassifier).__setstate__({**state, **change})
    # no standardization at all is a state fit gives (scale_features set after it)
    loaded = LMUClassifier.__new__(LMUClassifier)
    loaded.__setstate__({**state, "feature_mean_": None, "feature_scale_": None})
    assert loaded.predict(X).shape == (30,)


def test_an_inconsistent_early_classifier_state_is_refused_at_load():
    """A saved early classifier with heads of another count than its checkpoints, another
    last checkpoint than its length or an unfitted estimator loaded, then failed at
    predict with a zip() or matmul error, or an AttributeError."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 24)), np.arange(40) % 2
    state = LMUEarlyClassifier(LMUClassifier(order=4)).fit(X, y).__getstate__()
    for change, problem in [
        ({"heads_": state["heads_"][:-1]}, "one fewer than the checkpoints"),
        ({"checkpoints_": state["checkpoints_"][:-1]}, "one fewer than the checkpoints"),
        ({"n_features_in_": 30}, "a last checkpoint of 24 steps for n_features_in_ 30"),
        ({"estimator_": LMUClassifier()}, "no fitted LMUClassifier"),
    ]:
        with pytest.raises(pickle.UnpicklingError, match=problem):
            LMUEarlyClassifier.__new__(LMUEarlyClassifier).__setstate__({**state, **change})
    loaded = LMUEarlyClassifier.__new__(LMUEarlyClassifier)
    loaded.__setstate__(state)
    assert loaded.predict(X).shape == (40,)
