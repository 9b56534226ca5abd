"""LMUFeatures as a scikit-learn transformer: conventions, shapes, names and bad input."""

import pickle
import re
import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lmu_sk import LMUFeatures, LMUPooledFeatures, _memory, dn_states
from lmu_sk._memory import MemoryBudgetError
from lmu_sk.dn import EulerInstabilityWarning, discrete_system, impulse_response

# Sequences of another length than at fit time are accepted on purpose (the DN is causal
# and has no weights tied to the length), so the check that transform rejects a different
# number of columns does not apply.
EXPECTED_FAILED = {
    "check_n_features_in_after_fitting": "sequences of any length can be transformed",
    # Same reason; the rest of this check (fit_transform agreeing with fit + transform,
    # repeated fits) is asserted in test_fit_transform_equals_fit_then_transform.
    "check_transformer_general": "sequences of any length can be transformed",
}
# The pooled features' thresholds are quantiles of evenly spaced training sequences: a
# weight of 0 leaves a sequence out (asserted in
# test_sequences_of_weight_0_take_no_part_in_the_fit), other weights are not read, and a
# repeated sequence changes which are evenly spaced.
POOLED_EXPECTED_FAILED = {
    **EXPECTED_FAILED,
    "check_sample_weight_equivalence_on_dense_data": "thresholds of unweighted sequences",
}


@parametrize_with_checks(
    [LMUFeatures(order=4, device="cpu"), LMUPooledFeatures(order=2, thetas=[2, 5], device="cpu")],
    expected_failed_checks=lambda est: (
        POOLED_EXPECTED_FAILED if isinstance(est, LMUPooledFeatures) else EXPECTED_FAILED
    ),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture
def X():
    return np.random.default_rng(0).standard_normal((6, 30, 2))


def test_fit_transform_equals_fit_then_transform(X):
    for output in ("final", "sequence", "mean", "max"):
        est = LMUFeatures(order=5, output=output)
        first = est.fit_transform(X)
        np.testing.assert_array_equal(first, est.fit(X).transform(X))
        np.testing.assert_array_equal(first, est.fit_transform(X))


def test_output_shapes_and_channel_layout(X):
    est = LMUFeatures(order=5).fit(X)
    F = est.transform(X)
    assert F.shape == (6, 10)
    # feature k * order + i is state i of channel k
    for k in range(2):
        single = LMUFeatures(order=5, theta=30).fit_transform(X[:, :, k])
        np.testing.assert_allclose(F[:, 5 * k : 5 * k + 5], single, rtol=1e-12, atol=1e-14)
    seq = LMUFeatures(order=5, output="sequence").fit_transform(X)
    assert seq.shape == (6, 30, 10)
    np.testing.assert_allclose(seq[:, -1], F, rtol=1e-12, atol=1e-14)


def test_feature_names(X):
    est = LMUFeatures(order=3).fit(X)
    names = est.get_feature_names_out()
    assert list(names) == ["c0_m0", "c0_m1", "c0_m2", "c1_m0", "c1_m1", "c1_m2"]
    assert len(names) == est.transform(X).shape[1]


def test_theta_defaults_to_the_training_length(X):
    assert LMUFeatures().fit(X).theta_ == 30.0
    assert LMUFeatures(theta=7.5).fit(X).theta_ == 7.5


def test_other_lengths_transform_causally(X):
    est = LMUFeatures(order=4).fit(X)
    short = est.transform(X[:, :12])
    np.testing.assert_allclose(short, dn_states(X[:, :12], 4, 30.0), rtol=1e-12, atol=1e-14)
    longer = est.transform(np.concatenate([X, X], axis=1))
    assert longer.shape == (6, 8)


def test_dtypes_are_preserved_or_set(X):
    assert LMUFeatures(order=4).fit_transform(X.astype(np.float32)).dtype == np.float32
    assert LMUFeatures(order=4).fit_transform(X).dtype == np.float64
    assert LMUFeatures(order=4).fit_transform((X > 0).astype(int)).dtype == np.float64
    assert LMUFeatures(order=4, dtype="float32").fit_transform(X).dtype == np.float32


def test_lists_of_equal_length_are_arrays(X):
    est = LMUFeatures(order=4)
    np.testing.assert_array_equal(est.fit_transform(list(X)), est.fit_transform(X))


def test_pickles_and_works_in_a_pipeline(X):
    est = LMUFeatures(order=4).fit(X[:, :, 0])
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.transform(X[:, :, 0]), est.transform(X[:, :, 0]))
    pipe = make_pipeline(LMUFeatures(order=4), StandardScaler()).fit(X[:, :, 0])
    assert pipe.transform(X[:, :, 0]).shape == (6, 4)


def test_euler_instability_warns_at_fit(X):
    with pytest.warns(EulerInstabilityWarning, match="discretizer='zoh'"):
        LMUFeatures(order=64, theta=100, discretizer="euler").fit(X)


def test_small_memory_budget_chunks_without_changing_results(X):
    full = LMUFeatures(order=6, output="sequence").fit_transform(X)
    chunked = LMUFeatures(order=6, output="sequence", max_memory=8000).fit_transform(X)
    np.testing.assert_array_equal(full, chunked)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"order": 0}, ValueError, "order must be an integer >= 1"),
        ({"order": 2.5}, TypeError, "order must be an integer"),
        ({"theta": 0}, ValueError, "theta must be a positive"),
        ({"theta": -1.0}, ValueError, "theta must be a positive"),
        ({"discretizer": "rk4"}, ValueError, "'discretizer' parameter .* among .* Got 'rk4'"),
        ({"output": "all"}, ValueError, "'output' parameter .* among .* Got 'all'"),
        ({"method": "magic"}, ValueError, "'method' parameter .* among .* Got 'magic'"),
        ({"dtype": "int8"}, ValueError, "dtype must be None, 'float32' or 'float64'"),
        ({"max_memory": "lots"}, ValueError, "max_memory='lots' is not understood"),
        (
            {"max_memory": -5},
            ValueError,
            "max_memory must be a finite number of bytes, at least 1",
        ),
        ({"max_memory": 0.5}, ValueError, "at least 1; got 0.5"),
        ({"device": "tpu"}, ValueError, "'device' parameter .* among .* Got 'tpu'"),
    ],
)
def test_bad_parameters(X, params, error, match):
    with pytest.raises(error, match=match):
        LMUFeatures(**params).fit(X)


@pytest.mark.parametrize("output", ["final", "mean"])
def test_max_memory_bounds_the_impulse_response_too(output):
    """The one GEMM of final and mean states makes the impulse response ``(n_steps,
    order)`` once, which max_memory did not count (800 MB at max_memory='10MB' in a
    user's run): where it does not fit, method='auto' takes the recurrence (the same
    states to rounding) and method='gemm' says so."""
    X = np.random.default_rng(0).standard_normal((2, 20_000))
    small = LMUFeatures(order=16, output=output, max_memory="1MB").fit_transform(X)
    expected = LMUFeatures(order=16, output=output, method="recurrence").fit_transform(X)
    np.testing.assert_allclose(small, expected, rtol=1e-5, atol=1e-6)  # float32 features
    with pytest.raises(MemoryBudgetError, match=r"impulse response.*method='recurrence'"):
        LMUFeatures(order=16, output=output, method="gemm", max_memory="1MB").fit_transform(X)


def test_the_recurrence_is_advised_only_where_it_fits():
    """The advice "or use method='recurrence', which needs almost none" came also where
    the recurrence's own rows (a long 'sequence' of several channels) exceed max_memory."""
    X = np.random.default_rng(0).standard_normal((2, 40_000, 3))
    with pytest.raises(MemoryBudgetError, match=r"raise max_memory\.$") as refused:
        LMUFeatures(order=64, output="sequence", method="fft", max_memory="2MB").fit(X).transform(
            X
        )
    assert "recurrence" not in str(refused.value)
    with pytest.raises(MemoryBudgetError, match=r"method='recurrence', which needs 960\.0 KB per"):
        LMUFeatures(order=64, output="mean", method="fft", max_memory="4MB").fit(X).transform(X)


@pytest.mark.parametrize("output", ["max"])
def test_method_auto_takes_the_recurrence_where_no_sample_fits_its_other_routes(output):
    """Where not one sample's working memory of the blocked or FFT route fits beside the
    impulse response, method='auto' takes the recurrence, which needs almost none (the
    same states to rounding); it refused naming method='gemm', which was not asked for.
    An explicit method is still refused, naming itself."""
    rng = np.random.default_rng(1)
    for X in (rng.standard_normal((20, 30, 2)), [rng.standard_normal((n, 2)) for n in (5, 40)]):
        small = LMUFeatures(order=6, output=output, max_memory=2000).fit_transform(X)
        exact = LMUFeatures(order=6, output=output, method="recurrence").fit_transform(X)
        for got, expected in zip(small, exact, strict=True):  # float64 features
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    X = rng.standard_normal((20, 30, 2))
    with pytest.raises(MemoryBudgetError, match="method='fft'"):
        LMUFeatures(order=6, output=output, method="fft", max_memory=2000).fit_transform(X)


def test_order_true_is_refused(X):
    """A flag is not a count: ``order=True`` was read as order 1."""
    with pytest.raises(TypeError, match="order must be an integer"):
        LMUFeatures(order=True).fit(X)


def test_a_channel_count_error_names_the_axis_of_the_layout():
    """With channels_first=True the advice said "on the last axis", which is the steps."""
    rng = np.random.default_rng(0)
    features = LMUFeatures(order=2, channels_first=True).fit(rng.standard_normal((4, 3, 20)))
    with pytest.raises(ValueError, match=r"3 channel\(s\) on axis 1 \(channels_first=True"):
        features.transform(rng.standard_normal((2, 4, 20)))


def test_max_memory_takes_numpy_numbers(X):
    """``max_memory=np.int64(...)`` was refused as "not a number of bytes"."""
    expected = LMUFeatures(order=3, max_memory=2**28).fit_transform(X)
    for budget in (np.int64(2**28), np.float64(2**28)):
        np.testing.assert_array_equal(
            LMUFeatures(order=3, max_memory=budget).fit_transform(X), expected
        )


@pytest.mark.parametrize("pooled", [False, True])
def test_input_features_are_checked_as_scikit_learn_checks_them(pooled):
    """``get_feature_names_out(input_features)`` ignored them, even wrong: they must be
    the names seen by fit, or as many as the steps where fit saw none (the names out do
    not depend on them)."""
    pd = pytest.importorskip("pandas")
    from lmu_sk import LMUPooledFeatures

    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.standard_normal((12, 15)), columns=[f"t{i}" for i in range(15)])
    make = (lambda: LMUPooledFeatures(thetas=[3.0, 9.0])) if pooled else LMUFeatures
    named = make().fit(table)
    names = named.get_feature_names_out()
    np.testing.assert_array_equal(named.get_feature_names_out(list(table.columns)), names)
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        named.get_feature_names_out(["a", "b"])
    plain = make().fit(table.to_numpy())
    assert len(plain.get_feature_names_out([f"x{i}" for i in range(15)])) == len(names)
    with pytest.raises(ValueError, match="input_features should have length equal"):
        plain.get_feature_names_out(["a", "b"])


@pytest.mark.parametrize(
    ("data", "error", "match"),
    [
        (np.array([[1.0, np.nan, 2.0]]), ValueError, "NaN"),
        (np.array([[1.0, np.inf, 2.0]]), ValueError, "infinity"),
        (np.ones(5), ValueError, "Reshape your data"),
        (np.ones((2, 3, 4, 5)), ValueError, r"must have shape \(n_samples, n_steps\)"),
        (np.ones((0, 5)), ValueError, "0 sample"),
        (np.ones((3, 0)), ValueError, "length zero"),
        ([np.ones(3), np.ones(0)], ValueError, "length zero"),
        (np.ones((3, 4, 0)), ValueError, "zero channels"),
        (np.array([["a", "b"]]), ValueError, "X holds strings"),
        (np.ones((2, 3)) * 1j, ValueError, "Complex data not supported"),
        ([np.ones((3, 2)), np.ones((5, 3))], ValueError, "same number of channels"),
    ],
)
def test_bad_input(data, error, match):
    with pytest.raises(error, match=match):
        LMUFeatures(order=3).fit(data)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("output", ["final", "sequence", "mean", "max"])
def test_non_finite_input_at_transform_and_fit_transform(X, bad, output):
    # transform checks its (smaller) result instead of the input; the error is the same
    est = LMUFeatures(order=3, output=output).fit(X)
    X_bad = X.copy()
    X_bad[2, 5, 1] = bad
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.transform(X_bad)
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        LMUFeatures(order=3, output=output).fit_transform(X_bad)
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.transform([X_bad[2], X_bad[3, :7]])


def test_overflowing_features_are_an_error_not_inf():
    # finite float32 inputs whose signs line up with the impulse response of one state:
    # that state becomes 3e38 * sum|H| ~ 1.8e39, beyond float32
    H = impulse_response(*discrete_system(64, 64.0), 300)
    state = np.argmax(np.abs(H).sum(axis=0))
    X = (3e38 * np.sign(H[::-1, state]))[None].astype(np.float32)
    est = LMUFeatures(order=64, theta=64.0).fit(X)
    with pytest.raises(ValueError, match="overflow"):
        est.transform(X)
    assert np.all(np.isfinite(LMUFeatures(order=64, theta=64.0, dtype="float64").fit_transform(X)))


def test_an_overflow_of_a_routes_sums_names_the_route_that_avoids_them():
    """Inputs near float32's limit whose states fit (3e38: the states reach 3.01e38) overflow
    in the FFT's transforms; the message said "some state exceeds that range" and named
    no route that computes them."""
    X = np.full((2, 100), 3e38, np.float32)
    with pytest.raises(ValueError, match=r"FFT's transforms.*method='recurrence'"):
        LMUFeatures(order=8, theta=30, output="sequence", method="fft").fit(X).transform(X)
    states = LMUFeatures(order=8, theta=30, output="sequence", method="recurrence").fit(X)
    assert np.isfinite(states.transform(X)).all()


def test_inputs_below_float32s_normal_range_are_an_error_not_zeros():
    """float64 input whose every value is below float32's normal range (1.2e-38) became
    zeros (or a few bits) with dtype='float32', silently: refused, naming the fix; kept in
    float64 (dtype None or 'float64') the same input is computed (to the reference's
    rounding, relative)."""
    X = np.random.default_rng(0).standard_normal((3, 40)) * 1e-42
    with pytest.raises(ValueError, match=r"dtype='float64'"):
        LMUFeatures(order=4, dtype="float32").fit_transform(X)
    expected = dn_states(X, 4, 40)
    for dtype in (None, "float64"):
        F = LMUFeatures(order=4, theta=40, dtype=dtype).fit_transform(X)
        np.testing.assert_allclose(F, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    LMUFeatures(order=4, dtype="float32").fit_transform(X * 1e6)  # above it: computed
    # sequences of different lengths are judged together: one tiny sequence among others
    # is data (it is near zero in float32, as it is beside them), all of them tiny is not
    ragged = [X[0, :20], X[1] * 1e6, X[2, :30] * 1e6]
    assert LMUFeatures(order=4, dtype="float32").fit_transform(ragged).shape == (3, 4)
    with pytest.raises(ValueError, match=r"dtype='float64'"):
        LMUFeatures(order=4, dtype="float32").fit_transform([X[0, :20], X[1]])


def test_channel_mismatch_between_fit_and_transform(X):
    est = LMUFeatures(order=3).fit(X)
    with pytest.raises(ValueError, match=r"X has 1 channel.* fitted with 2"):
        est.transform(X[:, :, 0])


def test_result_too_large_for_memory_is_refused_before_allocating(X, monkeypatch):
    # the Delay Network's matrices (393 KB to make at order 64) made while there is room,
    # as another test may have made them already: the features are what is refused
    LMUFeatures(order=64, output="final").fit_transform(X[:1])
    monkeypatch.setattr(_memory, "available_memory", lambda: 10_000)
    with pytest.raises(MemoryBudgetError, match=r"would need .*lmu-sk features"):
        LMUFeatures(order=64, output="sequence", max_memory=1000).fit_transform(X)


def test_huge_order_fails_clearly(X):
    with pytest.raises(MemoryBudgetError, match="smaller order"):
        LMUFeatures(order=100_000).fit(X)


def test_budget_too_small_for_one_sequence(X):
    with pytest.raises(ValueError, match="raise max_memory"):
        LMUFeatures(order=8, output="sequence", method="fft", max_memory=10).fit_transform(X)


class _DeviceArray(np.ndarray):
    """Stands in for a CuPy array: same module name and ``get()``; data stays on the CPU."""

    def get(self):
        return np.asarray(self)


_DeviceArray.__module__ = "cupy._core.core"


def test_device_arrays_are_validated_without_leaving_the_device(X):
    est = LMUFeatures(order=4, device="cpu")
    F = est.fit_transform(X.view(_DeviceArray))
    np.testing.assert_allclose(F, LMUFeatures(order=4).fit_transform(X), rtol=1e-12)
    bad = X.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        est.fit(bad.view(_DeviceArray))
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.transform(bad.view(_DeviceArray))
    with pytest.raises(TypeError, match="real numbers"):
        est.fit((X > 0).astype(complex).view(_DeviceArray))
    with pytest.raises(ValueError, match="must have shape"):
        est.fit(X[0, :, 0].view(_DeviceArray))


@pytest.mark.parametrize(
    ("shape", "expected"),
    [((3, 40), 40), ((3, 500), 128), ((3, 500, 4), 128), ((3, 500, 40), 51), ((3, 9, 4000), 1)],
)
def test_order_none_chooses_the_default_order_at_fit(shape, expected):
    X = np.random.default_rng(0).normal(size=shape)
    features = LMUFeatures(order=None, channels_first=False).fit(X)
    # min(n_steps, 128, 2048 // n_channels), at least 1
    assert features.order_ == expected and features.order is None
    assert features.transform(X).shape == (shape[0], expected * (shape[2:] or (1,))[0])
    assert features.state_matrix_.shape == (expected, expected)


def test_transform_uses_the_fitted_order():
    X = np.random.default_rng(0).normal(size=(4, 30))
    features = LMUFeatures(order=6).fit(X)
    expected = features.transform(X)
    features.set_params(order=9)  # checked, but the fitted system is the one used
    np.testing.assert_array_equal(features.transform(X), expected)
    with pytest.raises(ValueError, match="order"):
        features.set_params(order=0).transform(X)


@pytest.mark.parametrize(
    "X",
    [
        np.array([["1", "2", "3"], ["4", "5", "6"]]),
        np.array([[b"1", b"2"], [b"3", b"4"]]),
        np.array([[1.0, "2"], [3.0, 4.0]], dtype=object),
        [["1", "2"], ["3", "4"]],
    ],
)
def test_strings_are_refused(X):
    """Numbers written as text were read silently."""
    for estimator in (LMUFeatures(order=2), LMUPooledFeatures(order=2)):
        with pytest.raises(ValueError, match=r"X holds strings \(dtype"):
            estimator.fit(X)
    numbers = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=object)  # objects that are numbers
    assert LMUFeatures(order=2).fit_transform(numbers).shape == (2, 2)


def test_pandas_output_of_sequence_features_is_refused_clearly():
    """set_output(transform='pandas') with the 3-D 'sequence' features failed in pandas
    ("Must pass 2-d input"); the error now names the output and what to do. The 2-D
    outputs give DataFrames."""
    pytest.importorskip("pandas")
    import sklearn

    X = np.random.default_rng(0).standard_normal((6, 10))
    sequence = LMUFeatures(order=3, output="sequence").set_output(transform="pandas")
    for call in (sequence.fit_transform, sequence.fit(X).transform):
        with pytest.raises(ValueError, match="output='sequence' gives 3-D features"):
            call(X)
    with sklearn.config_context(transform_output="pandas"):
        with pytest.raises(ValueError, match=r"set_output\(transform='default'\)"):
            LMUFeatures(order=3, output="sequence").fit_transform(X)
        frame = LMUFeatures(order=3, output="mean").fit_transform(X)
        assert frame.shape == (6, 3) and list(frame.columns) == ["c0_m0", "c0_m1", "c0_m2"]
    assert sequence.set_output(transform="default").fit_transform(X).shape == (6, 10, 3)


def test_working_memory_is_planned_within_what_the_result_leaves(X, monkeypatch):
    """The working memory's budget (half the memory available by default) was read before
    the result was made, so a result of 95 % of the memory available passed its check and
    the chunks' working memory came on top (1.4x the memory available: the process was
    killed). The budget is now at most what the result leaves; the chunks shrink to fit
    it, and the features are the same."""
    import lmu_sk.engine.run as run

    features = LMUFeatures(order=8, output="sequence")
    expected = features.fit_transform(X)
    left = 20_000
    budgets = []

    def recording(*args, **kwargs):
        budgets.append(args[8])
        return plan_features(*args, **kwargs)

    plan_features = run.plan_features
    monkeypatch.setattr(run, "plan_features", recording)
    monkeypatch.setattr(run, "available_memory", lambda: expected.nbytes + left)
    monkeypatch.setattr(_memory, "available_memory", lambda: expected.nbytes + left)
    np.testing.assert_array_equal(features.transform(X), expected)
    assert budgets == [left]


def test_auto_leaves_the_float32_fft_route_where_its_rounding_would_show():
    """The FFT's rounding is relative to a series' largest value: one spike of 1e7 left
    float32 states off by 4.5e-2 (relative) long after it, and an input of 1e35 overflowed
    inside the transforms while the states stay 1 000x below float32's range ("some
    state exceeds that range"). 'auto' takes the blocked products there: their answer
    to float32 rounding (1e-5 of the states' scale); ordinary inputs keep the FFT."""
    import lmu_sk.engine.run as run
    from lmu_sk.engine import plan

    rng = np.random.default_rng(0)
    assert plan.choose_route("sequence", "auto", 468, 784, 4, "cpu") == "fft"
    spiked = rng.standard_normal((2, 784)).astype(np.float32)
    spiked[:, 0] = 1e7
    scaled = (rng.standard_normal((2, 784)) * 1e35).astype(np.float32)
    for X in (spiked, scaled):
        exact = LMUFeatures(order=468, theta=100, output="sequence", method="gemm").fit(X)
        auto = LMUFeatures(order=468, theta=100, output="sequence").fit(X)
        expected, got = exact.transform(X), auto.transform(X)
        late = np.abs(expected[:, 400:]).max()
        np.testing.assert_allclose(got[:, 400:], expected[:, 400:], rtol=0, atol=1e-5 * late)
    ordinary = run._Source(rng.standard_normal((2, 784, 1)).astype(np.float32))
    route = plan.plan_features(2, 784, 1, 468, "sequence", "auto", 4, "cpu", 1 << 30)
    assert route.route == "fft" and run._fft_fits(ordinary, route, np).all()


def test_float64_input_near_its_largest_takes_the_blocked_products():
    """method='auto' took the FFT for float64 input near 1e306, whose transforms' sums
    overflow, and refused it; the blocked products compute it (the same states)."""
    X = np.random.default_rng(0).standard_normal((2, 784)) * 1e306
    params = dict(order=512, theta=784, output="sequence", dtype="float64")
    auto = LMUFeatures(**params).fit_transform(X)
    gemm = LMUFeatures(**params, method="gemm").fit_transform(X)
    np.testing.assert_array_equal(auto, gemm)


def test_a_float32_rows_features_do_not_depend_on_the_rows_beside_it():
    """'auto' left the FFT for a spike judged over the whole input: a spiky row alone took
    the blocked products (7e-7 of its states' scale), among ordinary rows the FFT (3.4e-4).
    Judged series by series, it takes the blocked products in both."""
    from lmu_sk import dn_states

    rng = np.random.default_rng(10)
    spiky = rng.standard_normal(1000) * 1e-3
    spiky[10] = 1e2
    batch = np.vstack([spiky, rng.standard_normal((20, 1000))])
    expected = dn_states(spiky[None], 400, 60.0, output="sequence")[0][500:]
    for X in (spiky[None], batch):
        model = LMUFeatures(order=400, theta=60.0, output="sequence", dtype="float32")
        got = model.fit(X).transform(X.astype(np.float32))[0][500:]
        # float32: the blocked products' rounding, ~1e-6 of the states' scale
        assert np.abs(got - expected).max() <= 5e-6 * np.abs(expected).max()


def test_a_spiky_row_leaves_the_fft_route_alone():
    """'auto' sent every row of a call to the blocked products when one row's series did
    not fit the FFT: a plain float32 row beside a spiky one (in one call, or one dask
    block) got 5e-6 of its states' scale at order 512 instead of the FFT's 6e-7. The
    spiky row alone takes the blocked products now; the others keep the FFT."""
    import dask
    import dask.array as da

    from lmu_sk import dn_states

    rng = np.random.default_rng(0)
    X = rng.standard_normal((3, 1000)).astype(np.float32)
    X[2, 50] = 1e5
    model = LMUFeatures(order=512, output="max").fit(X)
    expected = dn_states(X, 512, 1000, output="sequence").max(axis=1)
    alone = model.transform(X[:2])
    beside = model.transform(X)
    with dask.config.set(scheduler="synchronous"):
        in_blocks = model.transform(da.from_array(X, chunks=(3, 1000))).compute()
    plain = np.abs(expected[:2]).max()
    for got in (alone, beside[:2], in_blocks[:2]):
        # float32 FFT at order 512: ~6e-7 of the states' scale (the blocked products 5e-6)
        assert np.abs(got - expected[:2]).max() <= 2e-6 * plain
    np.testing.assert_array_equal(beside[:2], alone)
    # the spiky row: the blocked products' float32 rounding of its own scale
    spiky = np.abs(expected[2]).max()
    assert np.abs(beside[2] - expected[2]).max() <= 2e-5 * spiky
    np.testing.assert_array_equal(beside[2:], model.transform(X[2:]))


@pytest.mark.parametrize("method", ["gemm", "auto"])
def test_float32_blocked_products_do_not_drift_over_long_windows(method):
    """The blocked products carried the state with float32-rounded powers of Abar, whose
    decay error grew with the blocks a state lives through: 5e-5 of the states' scale at
    theta = 1e5 (1.2e-5 at 1e4), against 2e-7 for the recurrence. Carried as increments
    over it (Abar^s - I), they stay within float32 rounding of a few blocks."""
    from lmu_sk import dn_states

    X = np.ones((1, 30_000)) + 0.1 * np.random.default_rng(0).standard_normal((1, 30_000))
    expected = dn_states(X, 16, 3e4, output="sequence")[0]
    model = LMUFeatures(order=16, theta=3e4, output="sequence", method=method, dtype="float32")
    got = model.fit(X).transform(X.astype(np.float32))[0]
    # float32 over 30 000 steps: a few 1e-7 per block, ~1e-6 in all (before: 2e-5)
    assert np.abs(got - expected).max() <= 4e-6 * np.abs(expected).max()


@pytest.mark.gpu
def test_the_fft_check_reads_host_input_and_lists_for_a_gpu(monkeypatch):
    """On a GPU the input may stay on the host (an array, or a list of sequences): the
    check reads it with NumPy, the device's arrays with the device's module."""
    from fake_cupy import clear_caches, install

    import lmu_sk.engine.run as run
    from lmu_sk.engine import plan

    fake = install(monkeypatch, as_gpu=True)
    try:
        rng = np.random.default_rng(1)
        route = plan.plan_features(2, 784, 1, 468, "sequence", "auto", 4, "cpu", 1 << 30)
        host = rng.standard_normal((2, 784, 1)).astype(np.float32)
        spiked = [u.copy() for u in host]
        spiked[0][0] = 1e7

        class DeviceOnly:  # real CuPy refuses NumPy arrays; the stand-in would take them
            def __getattr__(self, name):
                raise AssertionError(f"the device's module read host input ({name})")

        assert run._fft_fits(run._Source(host), route, DeviceOnly()).tolist() == [True] * 2
        assert run._fft_fits(run._Source(list(host)), route, DeviceOnly()).all()
        assert run._fft_fits(run._Source(spiked), route, DeviceOnly()).tolist() == [False, True]
        assert run._fft_fits(run._Source(fake.asarray(host)), route, fake).all()
    finally:
        clear_caches()


def _object_column_of(sequence, n: int) -> np.ndarray:
    """A 1-D object array holding ``sequence`` ``n`` times."""
    column = np.empty(n, dtype=object)
    for index in range(n):
        column[index] = sequence
    return column


@pytest.mark.parametrize(
    ("X", "error", "message"),
    [
        (None, ValueError, "X is None"),
        ("abc", ValueError, "X is a string"),
        ((row for row in np.ones((3, 5))), TypeError, r"iterator .*list\(X\)"),
        (
            np.ma.masked_array(np.ones((2, 5)), mask=np.eye(2, 5, dtype=bool)),
            ValueError,
            r"masked array with 2 masked value\(s\)",
        ),
        (np.zeros((2, 5), dtype="datetime64[D]"), ValueError, "dates or times"),
        (np.ones((2, 5)) + 1j, ValueError, r"complex numbers .*X\.real, X\.imag"),
        ([np.ones(5) + 1j, np.ones(4) + 0j], ValueError, "complex numbers"),
        ({"a": np.ones(5)}, TypeError, "X is of type dict, a mapping, set or view of one"),
        ({1.0, 2.0}, TypeError, "X is of type set"),
        ({"a": np.ones(5)}.values(), TypeError, "X is of type dict_values"),
        (np.zeros(3, dtype=[("a", float), ("b", float)]), TypeError, "structured_to_unstr"),
        ([[[1.0, 2.0], 3.0], [[1.0], 2.0]], ValueError, r"X\[0\] is not an array of numbers"),
        ([np.ones(5), [[1.0, 2.0], 3.0]], ValueError, r"X\[1\] is not an array of numbers"),
        (np.full((2, 5), 1 + 1j, dtype=object), ValueError, r"complex numbers \(X\[0, 0\]"),
        (np.array([[1.0, [2.0]]] * 2, dtype=object), ValueError, r"X\[0, 1\] is a sequence"),
        (np.array([[1.0, {}]] * 2, dtype=object), TypeError, r"X\[0, 1\] is dict"),
        (_object_column_of(np.ones(5) + 1j, 3), ValueError, "complex numbers"),
    ],
)
def test_inputs_numpy_would_misread_are_refused_naming_the_fix(X, error, message):
    """A masked array's masked values were read as numbers and dates as day counts,
    silently; None, a string, a generator and complex numbers met NumPy's or
    scikit-learn's raw messages (the last with a dump of the whole array)."""
    with pytest.raises(error, match=message):
        LMUFeatures(order=3).fit(X)


def test_a_ragged_sequence_after_fit_is_named_as_in_fit():
    """transform (and a model's predict) of a sequence itself ragged met NumPy's raw error
    in the channels-last check that runs once a model is fitted."""
    X = np.random.default_rng(0).standard_normal((4, 8))
    features = LMUFeatures(order=3).fit(X)
    with pytest.raises(ValueError, match=r"X\[0\] is not an array of numbers"):
        features.transform([[[1.0, 2.0], 3.0], *map(list, X[1:])])


def test_a_sparse_pandas_frame_is_refused_as_sparse():
    """Read as a nullable frame, a sparse DataFrame was made dense silently."""
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.eye(4)).astype(pd.SparseDtype(float, 0.0))
    with pytest.raises(TypeError, match="Sparse data"):
        LMUFeatures(order=3).fit(X)


def test_missing_values_of_pandas_and_object_arrays_get_the_messages_of_nan():
    """``pd.NA`` in a nullable DataFrame or an object array met a raw ``float()`` error;
    it is read as NaN, so that padding at the sequences' ends is recognized as such."""
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).standard_normal((4, 8))
    padded = pd.DataFrame(X).astype("Float64")
    padded.iloc[0, 5:] = pd.NA
    with pytest.raises(ValueError, match=r"NaN at the end of 1 sequence\(s\)"):
        LMUFeatures(order=3).fit(padded)
    inside = pd.DataFrame(X).astype(object)
    inside.iloc[1, 2] = pd.NA
    with pytest.raises(ValueError, match="contains NaN or infinity"):
        LMUFeatures(order=3).fit(inside)
    whole = pd.DataFrame(X).astype("Float64")  # without a missing value: read as it was
    features = LMUFeatures(order=3)
    np.testing.assert_array_equal(features.fit_transform(whole), features.fit_transform(X))
    # nullable float32 columns are read in float32, as NumPy's and pandas' own (they were
    # promoted to float64, and the features with them)
    single = X.astype(np.float32)
    out = features.fit_transform(pd.DataFrame(single).astype("Float32"))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, features.fit_transform(single))
    mixed = pd.DataFrame(single).astype({0: "Float32", 1: "Float64"})
    assert features.fit_transform(mixed).dtype == np.float64


def test_an_object_array_of_sequences_is_read_as_the_list_it_holds():
    """A 1-D object array of sequences (a pandas Series' ``.values`` of arrays) met a raw
    error; it is read as a list, of one length or of different ones."""
    X = np.random.default_rng(0).standard_normal((3, 8))
    features = LMUFeatures(order=3)
    np.testing.assert_array_equal(
        features.fit_transform(_object_column_of(X[0], 3)),
        features.fit_transform(np.stack([X[0]] * 3)),
    )
    ragged = [X[0], X[1, :5], X[2, :3]]
    column = np.empty(3, dtype=object)
    column[:] = ragged
    np.testing.assert_array_equal(features.fit_transform(column), features.fit_transform(ragged))


_MASKED = np.ma.masked_array(np.ones((2, 5)), mask=np.eye(2, 5, dtype=bool))


@pytest.mark.parametrize(
    "X", [list(_MASKED), tuple(_MASKED), [_MASKED[0], _MASKED[1][:3]], [np.ones(4), _MASKED[1]]]
)
@pytest.mark.parametrize("make", [LMUFeatures, LMUPooledFeatures])
def test_masked_sequences_in_a_list_are_refused(X, make):
    """A list of masked sequences (of one length or several) had its masked values read
    as numbers, silently; a masked array itself was refused."""
    masked = next(i for i, seq in enumerate(X) if np.ma.count_masked(seq))
    with pytest.raises(ValueError, match=rf"X\[{masked}\] is a masked array with 1 masked"):
        make().fit(X)
    fitted = make().fit(np.ones((2, 5)))
    with pytest.raises(ValueError, match=rf"X\[{masked}\] is a masked array"):
        fitted.transform(X)


@pytest.mark.parametrize("make", [LMUFeatures, LMUPooledFeatures])
def test_data_frames_of_dates_or_times_are_refused(make):
    """A DataFrame of dates was read as nanoseconds since 1970 by the transformers (its
    array, and the same frame given to the classifier, were refused)."""
    pd = pytest.importorskip("pandas")
    dates = pd.DataFrame({t: pd.to_datetime(["2020-01-01", "2021-06-01"]) for t in range(5)})
    for X, unit in [
        (dates, "datetime64"),
        (dates - dates.iloc[0, 0], "timedelta64"),
        (dates[0], "datetime64"),
    ]:
        with pytest.raises(
            ValueError, match=rf"dates or times \(dtype {unit}.*'{unit}\[s\]'"
        ) as error:
            make().fit(X)
        # the advised conversion runs on what was given (pandas casts no dates to float)
        advice = re.search(r"seconds: (.*)\)\.$", str(error.value))[1]
        seconds = eval(advice, {"np": np, "X": X})
        assert seconds.dtype == np.float64 and seconds.shape == np.shape(X)
    with pytest.raises(ValueError, match="dates or times"):
        make().fit(np.ones((2, 5))).transform(dates)
    # a timezone's dates, which NumPy holds as objects (a TypeError without the advice)
    zoned = dates[0].dt.tz_localize("UTC")
    with pytest.raises(ValueError, match=r"X\[0\] is a date or time .*'datetime64\[s\]'") as error:
        make().fit(zoned)
    advice = re.search(r"seconds: (.*)\)\.$", str(error.value))[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (NumPy has no timezones)
        assert eval(advice, {"np": np, "X": zoned}).dtype == np.float64


@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("make", [LMUFeatures, LMUPooledFeatures])
def test_sequences_of_weight_0_take_no_part_in_the_fit(make, ragged):
    """A sequence of weight 0 shaped the pooled features' thresholds and the window the
    fit chooses (the longest training sequence), as if it counted: the fit is now the fit
    without it, and the features of every sequence are returned."""
    rng = np.random.default_rng(0)
    X = list(rng.standard_normal((12, 40)))
    junk = [5.0 * rng.standard_normal(60 if ragged else 40) for _ in range(4)]
    both = X[:6] + junk[:2] + X[6:] + junk[2:]
    weights = np.r_[np.ones(6), np.zeros(2), np.ones(6), np.zeros(2)]
    alone = make().fit(X)
    weighed = make().fit(both, sample_weight=weights)
    np.testing.assert_array_equal(weighed.transform(X), alone.transform(X))
    F = make().fit_transform(both, sample_weight=weights)
    assert len(F) == len(both)
    np.testing.assert_array_equal(F[weights > 0], alone.transform(X))
    with pytest.raises(ValueError, match="sample_weight has 3 weights but X has 16"):
        make().fit(both, sample_weight=np.ones(3))


def test_targets_are_checked_before_the_sequences_of_weight_0_are_left_out():
    """With a weight of 0, y was indexed by the sequences kept before it was checked: a y
    too long was taken, one too short raised an IndexError, and the features that read no
    y subscripted it."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 30, 20)), np.arange(20) % 2
    weights = np.r_[np.ones(15), np.zeros(5)]
    for wrong in (np.r_[y, y], y[:10]):
        with pytest.raises(ValueError, match=r"20 sequences, y of shape \(\d+,\)"):
            LMUPooledFeatures(channels=4).fit(X, wrong, sample_weight=weights)
    LMUFeatures().fit(X, 5, sample_weight=weights)  # (y ignored, as without weights)
    da = pytest.importorskip("dask.array")
    for wrong in (np.r_[y, y], y[:10]):  # (a dask y by its shape)
        with pytest.raises(ValueError, match=r"20 sequences, y of shape \(\d+,\)"):
            LMUPooledFeatures(channels=4).fit(X, da.from_array(wrong), sample_weight=weights)


def test_a_masked_array_without_masked_values_is_read():
    X = np.random.default_rng(0).standard_normal((3, 8))
    features = LMUFeatures(order=3)
    np.testing.assert_array_equal(
        features.fit_transform(np.ma.masked_array(X)), features.fit_transform(X)
    )


def test_input_beyond_float32_is_refused_without_a_stray_overflow_warning():
    """Values beyond float32's range for float32 features are refused with a ValueError
    naming the fix; before it, comparing them with float32's smallest normal number (a
    NumPy scalar) cast them to float32 first and warned of an overflow, which turned into
    the error under warnings as errors."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="float32"):
            LMUFeatures(order=4, dtype="float32").fit(np.full((2, 5), 1e300))


def test_the_delay_network_matrices_are_checked_against_max_memory_before_they_are_made():
    """fit made the matrices of order 2000 and their discretization's temporaries (about
    300 MB) under max_memory='10MB'; they are refused first, naming the order."""
    import tracemalloc

    X = np.random.default_rng(0).standard_normal((3, 20))
    tracemalloc.start()
    try:
        with pytest.raises(MemoryBudgetError, match=r"matrices of order 2000.*raise max_memory"):
            LMUFeatures(order=2000, max_memory="10MB").fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10e6, peak
    LMUFeatures(order=40, max_memory="10MB").fit(X)  # small orders fit small budgets
    with pytest.raises(MemoryBudgetError, match="matrices of order 2000"):
        LMUPooledFeatures(order=2000, thetas=[10], max_memory="10MB").fit(X)


def test_a_route_s_refusal_names_max_memory_and_its_constants_apart():
    """The FFT route's constants (the impulse response's spectrum) take part of max_memory:
    the refusal said 'max_memory allows 33.0 KB' of a max_memory of 64 KB."""
    X = np.random.default_rng(0).standard_normal((5, 80, 2))
    features = LMUFeatures(order=16, theta=30.0, output="sequence", method="fft")
    with pytest.raises(MemoryBudgetError, match=r"max_memory \(64.0 KB\) leaves .* beside the"):
        features.set_params(max_memory="64KB").fit(X).transform(X)
