"""LMUPooledFeatures against pooling the reference recurrence's states; memory; bad input.

The oracle is :func:`lmu_sk.reference.pooled`: every window's states by the plain float64
recurrence, pooled step by step. The compiled kernel runs the same recurrence in float64
(reassociated) and compares the state, rounded to float32, with float32 thresholds; it sums
the states above a threshold in float32 (flushed into float64 every 1024 steps). Hence:

* comparisons are only decided where no state lies within rounding of a threshold: the
  property tests draw thresholds and check, with the oracle itself, that moving them by
  ``GAP`` (relative to the state scale) changes no count; then the proportions, runs and
  competition counts are exact (to float64 rounding of ``count / n``);
* 'mpv' is a float32 sum of at most 1024 float32-rounded states, plus float64 sums: within
  ``MPV_TOL`` (1024 * 6e-8 = 6e-5, relative to the state scale);
* 'mean', 'max', 'min' are float64: within 1e-9 of the state scale (reassociation).
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from fake_cupy import clear_caches, install
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pooled_oracle import decided, state_scale, tolerances

from lmu_sk import LMUClassifier, LMUPooledFeatures, _memory, pooled, reference
from lmu_sk._memory import MemoryBudgetError
from lmu_sk.engine import plan, pooled_features
from lmu_sk.engine.pooling import (
    POOLS,
    TRANSFORMS,
    PooledSpec,
    WindowSpec,
)

GAP = 1e-5


@st.composite
def problems(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n_channels = draw(st.integers(1, 2))
    lengths = draw(st.lists(st.integers(1, 40), min_size=1, max_size=4))
    sequences = [rng.standard_normal((n, n_channels)) for n in lengths]
    transforms = tuple(t for t in TRANSFORMS if draw(st.booleans())) or ("series",)
    pools = tuple(p for p in POOLS if draw(st.booleans())) or ("ppv",)
    n_biases = draw(st.integers(1, 4))
    n_inputs = len(transforms) * n_channels
    windows = []
    for _ in range(draw(st.integers(1, 3))):
        order = draw(st.sampled_from([1, 2, 3, 4, 5, 8]))  # 8: the kernel's own recurrence
        theta = draw(st.floats(0.5, 30.0))
        stride = draw(st.integers(1, 4))
        fed = tuple(j for j in range(n_inputs) if draw(st.booleans())) or (0,)
        windows.append(WindowSpec(order, theta, stride, fed))
    spec = PooledSpec(tuple(windows), transforms, pools, n_biases)
    biases = [
        np.sort(rng.standard_normal((len(w.inputs), w.order, n_biases)), axis=-1).astype(
            np.float32
        )
        * np.float32(0.5)
        for w in windows
    ]
    scales = [rng.uniform(0.5, 2.0, (len(w.inputs), w.order)) for w in windows]
    return sequences, spec, biases, scales


def _assert_matches_oracle(got, sequences, spec, biases, scales):
    exact = [b.astype(np.float64) for b in biases]
    expected = reference.pooled(sequences, spec, exact, scales)
    assert got.shape == expected.shape == (len(sequences), spec.n_features)
    tolerance = tolerances(spec, state_scale(sequences, spec, exact, scales))
    assert np.all(np.abs(got - expected) <= tolerance)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(problems())
def test_engine_matches_the_oracle(problem):
    sequences, spec, biases, scales = problem
    assume(decided(sequences, spec, biases, scales, GAP))
    got = pooled_features(sequences, spec, biases, scales, dtype=np.float64)
    _assert_matches_oracle(got, sequences, spec, biases, scales)


def test_transformer_matches_the_oracle_on_new_data():
    rng = np.random.default_rng(0)
    train = [rng.standard_normal((n, 2)) for n in (60, 45, 80, 70, 33)]
    test = [rng.standard_normal((n, 2)) for n in (50, 81, 12)]
    model = LMUPooledFeatures(pools=POOLS, device="cpu").fit(train)
    got = model.transform(test)
    # two channels: the windows read them and their sum
    assert model.mixing_.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    expected = reference.pooled(
        test,
        model.spec_,
        [b.astype(np.float64) for b in model.biases_],
        model.scales_,
        model.mixing_,
    )
    assert got.shape == (3, model.n_features_out_) == expected.shape
    # thresholds fitted on other series: no test state sits on one (else a count is off)
    read = [x @ model.mixing_ for x in test]
    scale = state_scale(read, model.spec_, model.biases_, model.scales_)
    assert np.all(np.abs(got - expected) <= tolerances(model.spec_, scale))
    assert len(model.get_feature_names_out()) == model.n_features_out_


def test_default_windows_orders_strides_and_inputs():
    X = np.random.default_rng(0).standard_normal((6, 256, 2))
    model = LMUPooledFeatures(device="cpu", channel_sums=False).fit(X)
    thetas = np.maximum(256 * np.geomspace(1 / 128, 1, 16), 1)
    np.testing.assert_allclose(model.thetas_, thetas)
    cap = 8  # 16 states per window across 2 channels
    orders = [min(cap, max(2, int(np.ceil(t)))) for t in thetas]
    np.testing.assert_array_equal(model.orders_, orders)
    np.testing.assert_array_equal(
        model.strides_, [max(1, int(t // (2 * d))) for t, d in zip(thetas, orders, strict=True)]
    )
    # series and difference feed every window, the cumulative sum the 8 longest
    fed = [len(w.inputs) for w in model.spec_.windows]
    assert fed == [4] * 8 + [6] * 8
    expected = sum(n * d * (3 * 16 + 2) for n, d in zip(fed, orders, strict=True))
    assert model.n_features_out_ == expected
    assert model.transform(X[:, :10]).shape == (6, expected)


def test_default_windows_up_to_2048_steps_are_the_1_128th_progression():
    # exactly the windows of before (the same bits: fitted models and their features do
    # not change), for every length up to the crossover
    for n_steps in range(1, 2049):
        expected = np.maximum(n_steps * np.geomspace(1 / 128, 1, 16), 1)
        np.testing.assert_array_equal(pooled.default_thetas(n_steps), expected)


@pytest.mark.parametrize("n_steps", [2049, 2215, 20_000, 10**7])
def test_default_windows_of_longer_sequences_start_at_16_steps(n_steps):
    # the finest window stays at exactly 16 steps (2 215 steps by 16 / n rounded it to
    # 15.999..., a stride of 3 instead of 4 at order 2), the progression geometric to
    # the whole length
    thetas = pooled.default_thetas(n_steps)
    assert len(thetas) == 16 and thetas[0] == 16.0 and thetas[-1] == n_steps
    np.testing.assert_allclose(thetas[1:] / thetas[:-1], (n_steps / 16) ** (1 / 15), rtol=1e-12)
    orders = pooled.default_orders(thetas, 6)  # order 2 (6 channels read)
    assert pooled.default_strides(thetas, orders)[0] == 4


def test_long_sequences_keep_a_16_step_window():
    X = np.random.default_rng(3).standard_normal((3, 4000))
    model = LMUPooledFeatures(device="cpu", n_biases=2, transforms=["series"]).fit(X)
    assert model.thetas_[0] == 16.0
    assert model.strides_[0] == 1  # order 8: its block means of one step, every step seen


def test_thresholds_are_ascending_quantiles_and_scales_inverse_deviations():
    X = np.random.default_rng(2).standard_normal((5, 40))
    model = LMUPooledFeatures(
        order=3, thetas=[7.0], transforms=["series"], n_biases=3, device="cpu"
    ).fit(X)
    states = reference.dn_states(X, 3, 7.0, output="sequence").reshape(-1, 3)
    expected = np.quantile(states, [0.25, 0.5, 0.75], axis=0).T
    np.testing.assert_allclose(model.biases_[0][0], expected, rtol=1e-6)
    np.testing.assert_allclose(model.scales_[0][0], 1 / states.std(axis=0), rtol=1e-9)
    # a state exceeds its q-quantile on a fraction 1 - q of the training steps
    F = model.transform(X)[:, : 3 * 9].reshape(5, 3, 9)
    np.testing.assert_allclose(F[..., :3].mean(axis=0), [[0.75, 0.5, 0.25]] * 3, atol=0.01)


def test_unequal_lengths_are_pooled_over_their_own_steps():
    rng = np.random.default_rng(3)
    X = [rng.standard_normal((n, 1)) for n in (90, 30, 61)]
    model = LMUPooledFeatures(device="cpu").fit(X)
    together = model.transform(X)
    for u, row in zip(X, together, strict=True):
        np.testing.assert_allclose(model.transform([u])[0], row, rtol=1e-12, atol=1e-12)


def test_the_planner_picks_a_pooled_route_per_device():
    args = (100, 500, 2, [(4, 8, 500), (6, 4, 125)], 6, 1000, 8)
    assert plan.plan_pooled(*args, "cpu", 1 << 30).route == "pooled_recurrence"
    gpu = {"device_budget": 1 << 30}
    # the GPU's kernel at small orders (every state's thread runs its input's whole
    # recurrence: 2 order**3 flops a step), block products at large ones
    assert plan.plan_pooled(*args, "gpu", 1 << 30, **gpu).route == "pooled_recurrence"
    large = (100, 500, 2, [(4, 64, 500)], 6, 1000, 8)
    assert plan.plan_pooled(*large, "gpu", 1 << 30, **gpu).route == "pooled_blocked"
    # where numba.cuda does not see the GPU, the engine offers block products alone
    only = plan.plan_pooled(*args, "gpu", 1 << 30, routes=("pooled_blocked",), **gpu)
    assert only.route == "pooled_blocked"
    with pytest.raises(ValueError, match="routes must be some of"):
        plan.plan_pooled(*args, "cpu", 1 << 30, routes=("pooled_blocked",))


@pytest.mark.gpu
def test_gpu_path_on_the_stand_in(monkeypatch):
    rng = np.random.default_rng(1)
    X = [rng.standard_normal((n, 2)) for n in (30, 41, 17, 50)]
    cpu = LMUPooledFeatures(thetas=[4, 40], pools=POOLS, device="cpu").fit(X)
    install(monkeypatch, as_gpu=True)
    try:
        gpu = LMUPooledFeatures(**cpu.get_params()).set_params(device="gpu").fit(X)
        F = gpu.transform(X)
        assert type(F) is np.ndarray
        assert type(gpu.set_params(return_gpu_arrays=True).transform(X)).__module__.startswith(
            "cupy"
        )
    finally:
        clear_caches()
    # the same thresholds; the features within the comparisons' rounding (1 step in n)
    for a, b in zip(gpu.biases_, cpu.biases_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert np.mean(np.abs(F - cpu.transform(X)) > 1e-6) < 0.01


@pytest.mark.gpu
def test_thresholds_on_a_training_value_are_decided_alike_on_every_route(monkeypatch):
    """40 series of 20 steps sample 800 states: 799 = 17 * 47, so every one of the 16
    quantiles (levels k / 17) fell on a training state, whose own step was then decided by
    the arithmetic's last bit: the GPU's blocked route differed from the compiled kernel
    on its training data by up to 0.5 in 0.7 % of the features (a stream, continued on the
    compiled arithmetic, from its batch), none on new data. Such thresholds sit just above
    the value now."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 20, 2))
    cpu = LMUPooledFeatures(order=6, thetas=[10.0], device="cpu").fit(X)
    states = reference.dn_states(X[..., 0], 6, 10.0, output="sequence").reshape(-1, 6)
    for i, thresholds in enumerate(cpu.biases_[0][0]):  # the first channel's series
        gaps = np.abs(thresholds[:, None] - np.float32(states[:, i])[None, :])
        assert gaps.min() > 4 * np.spacing(np.float32(np.abs(thresholds).max()))
    install(monkeypatch, as_gpu=True)
    try:
        F = LMUPooledFeatures(**cpu.get_params()).set_params(device="gpu").fit(X).transform(X)
    finally:
        clear_caches()
    np.testing.assert_allclose(F, cpu.transform(X), rtol=0, atol=1e-6)


def test_memory_budget_that_forbids_all_states():
    """Pooled features of a set whose all-states array would need 30x the budget."""
    rng = np.random.default_rng(3)
    n_samples, n_steps = 40, 2000
    X = rng.standard_normal((n_samples, n_steps)).astype(np.float32)
    model = LMUPooledFeatures(
        order=16, thetas=[50, 500, 2000], stride=1, max_memory="2MB", device="cpu"
    )
    F = model.fit(X).transform(X)
    all_states = n_samples * n_steps * 3 * 3 * 16 * 8
    assert all_states > 30 * 2e6
    assert F.shape == (40, model.n_features_out_) and F.dtype == np.float32
    unbounded = LMUPooledFeatures(**model.get_params()).set_params(max_memory=None).fit(X)
    np.testing.assert_allclose(F[:3], unbounded.transform(X[:3]), rtol=1e-6, atol=1e-6)
    with pytest.raises(MemoryBudgetError, match="max_memory"):
        model.set_params(max_memory=1000).transform(X)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        # the parameter's own name (it said "theta", which these features do not have)
        ({"thetas": [10, 0]}, ValueError, r"thetas must be positive.*got \[10, 0\]"),
        ({"thetas": -3.0}, ValueError, "thetas must be positive"),
        ({"thetas": ["a"]}, TypeError, "thetas must be positive"),
        ({"thetas": []}, ValueError, "non-empty"),
        ({"n_biases": 0}, ValueError, "n_biases"),
        ({"order": 0}, ValueError, "order"),
        ({"stride": 0}, ValueError, "stride"),
        ({"stride": "fast"}, TypeError, "stride"),
        ({"bias_samples": 1.5}, TypeError, "bias_samples"),
        ({"transforms": ["series", "square"]}, ValueError, "transforms"),
        ({"transforms": []}, TypeError, "transforms"),
        ({"pools": ["ppv", "median"]}, ValueError, "pools"),
        ({"pools": 3}, TypeError, "pools"),
        ({"discretizer": "rk4"}, ValueError, "discretizer"),
    ],
)
def test_bad_parameters(params, error, match):
    X = np.zeros((3, 10))
    with pytest.raises(error, match=match):
        LMUPooledFeatures(**params).fit(X)


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((4, 20, 2))
    model = LMUPooledFeatures(order=2, device="cpu").fit(X)
    with pytest.raises(ValueError, match="channel"):
        model.transform(X[..., :1])
    X_nan = X.copy()
    X_nan[0, 3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.transform(X_nan)


def test_fitted_windows_are_used_at_transform():
    # set_params after fit changes nothing until the next fit
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6, 90, 2))
    model = LMUPooledFeatures(order=4, thetas=[9, 45], stride=3, device="cpu").fit(X)
    F = model.transform(X)
    names = model.get_feature_names_out()
    for params in ({"stride": 1}, {"transforms": ["series"]}, {"stride": 0}, {"pools": "ppv"}):
        model.set_params(**params)
        np.testing.assert_array_equal(model.transform(X), F)
        np.testing.assert_array_equal(model.get_feature_names_out(), names)
    with pytest.raises(ValueError, match="stride"):
        model.fit(X)


def test_fitting_the_thresholds_stays_within_max_memory():
    # 4 series of 200 000 steps, order 32, stride 1: the states of one series' three
    # inputs in one window are 154 MB; max_memory is 20 MB. Beyond it, fitting holds the
    # 2048 states per state it fits the thresholds on and np.quantile's copy of them.
    X = np.random.default_rng(6).standard_normal((4, 200_000)).astype(np.float32)
    kept = 2 * 2048 * 3 * 32 * 8
    params = dict(order=32, thetas=[100, 10_000], stride=1, max_memory="20MB", device="cpu")
    model = LMUPooledFeatures(**params)
    model.fit(X[:, :50])  # compiled (or loaded) first: Numba's allocations are not ours
    tracemalloc.start()
    try:
        model.fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6 + kept, peak
    # the thresholds are those of the states held all at once
    whole = LMUPooledFeatures(**model.get_params()).set_params(max_memory="4GB").fit(X)
    for a, b in zip(model.biases_, whole.biases_, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(MemoryBudgetError, match=r"Fitting the thresholds .* raise max_memory"):
        model.set_params(max_memory="1MB").fit(X)


def test_huge_n_biases_is_refused_before_allocating(monkeypatch):
    X = np.random.default_rng(7).standard_normal((5, 100))
    with pytest.raises(MemoryBudgetError, match=r"n_biases=1000000 .* would need .*n_biases"):
        LMUPooledFeatures(n_biases=10**6, max_memory="1GB").fit(X)
    monkeypatch.setattr(_memory, "available_memory", lambda: 2 * 1024**3)
    with pytest.raises(MemoryBudgetError, match="Use fewer thresholds"):
        LMUPooledFeatures(n_biases=10**6).fit(X)


@pytest.mark.parametrize("extreme", [1e39, -1e39])
def test_one_extreme_value_is_refused_whatever_its_sign(extreme):
    """The state range is checked from the input's maximum and minimum (no array of
    magnitudes): a single value beyond the limit, negative in otherwise positive input,
    is refused as a positive one is, at fit and at transform."""
    X = np.abs(np.random.default_rng(0).standard_normal((40, 30))) + 0.1
    bad = X.copy()
    bad[3, 7] = extreme
    with pytest.raises(ValueError, match=r"beyond the largest float32"):
        LMUPooledFeatures(dtype="float64", n_biases=4).fit(bad)
    fitted = LMUPooledFeatures(dtype="float64", n_biases=4).fit(X)
    with pytest.raises(ValueError, match=r"beyond the largest float32"):
        fitted.transform(bad)


@pytest.mark.parametrize("pools", [("ppv", "mpv", "lspv"), ("ppv", "lspv")])
@pytest.mark.parametrize("scale", [1e39, 1e307])
def test_states_beyond_float32_are_refused_naming_the_limit(pools, scale):
    """N4: LMUPooledFeatures(dtype='float64') on X * 1e39 said its features overflow
    float64 (the float32 thresholds and 'mpv' had); without 'mpv' the proportions were off
    by up to 1.0, silently. Such input is refused, naming float32's limit, at fit and at
    transform; input below the limit keeps its proportions (the pools of X * 1e30 are those
    of X: thresholds and states scale together; 1e-3 allows a float32 rounding that puts a
    state on the other side of a threshold)."""
    X = np.random.default_rng(0).standard_normal((40, 30))
    params = dict(dtype="float64", pools=pools, n_biases=4)
    with pytest.raises(ValueError, match=r"beyond the largest float32 \(3.4e\+38\)"):
        LMUPooledFeatures(**params).fit_transform(X * scale)
    fitted = LMUPooledFeatures(**params).fit(X)
    with pytest.raises(ValueError, match="compares its states with float32 thresholds"):
        fitted.transform(X * scale)
    proportions = [i for i, name in enumerate(fitted.get_feature_names_out()) if "ppv" in name]
    big = LMUPooledFeatures(**params).fit_transform(X * 1e30)[:, proportions]
    plain = fitted.transform(X)[:, proportions]
    assert np.abs(big - plain).mean() < 1e-3


@pytest.mark.parametrize(("scale", "dtype", "match"), [
    (1e-42, "float32", r"below the smallest normal float32 \(1.18e-38\)"),
    (1e-200, "float64", r"compare them with float32 thresholds"),
])  # fmt: skip
def test_states_below_float32_are_refused_naming_the_limit(scale, dtype, match):
    """Inputs so small that float32 (the input's dtype, or the thresholds') cannot hold
    them made every feature constant, silently: refused at fit, naming the limit; inputs
    above it (1e-30) keep their proportions, as for the largest, and all-zero inputs fit."""
    X = np.random.default_rng(0).standard_normal((40, 30))
    with pytest.raises(ValueError, match=match):
        LMUPooledFeatures(dtype=dtype, n_biases=4).fit(X * scale)
    fitted = LMUPooledFeatures(dtype=dtype, n_biases=4).fit(X)
    proportions = [i for i, name in enumerate(fitted.get_feature_names_out()) if "ppv" in name]
    small = LMUPooledFeatures(dtype=dtype, n_biases=4).fit_transform(X * 1e-30)[:, proportions]
    assert np.abs(small - fitted.transform(X)[:, proportions]).mean() < 1e-3
    zeros = LMUPooledFeatures(dtype=dtype, n_biases=4).fit_transform(np.zeros((4, 30)))
    assert np.ptp(zeros, axis=0).max() == 0.0


def _with_constant_stretches(n_samples: int, n_steps: int, seed: int) -> np.ndarray:
    """Series made of stretches of 5 to 60 steps, most of them constant (a few levels
    shared by the series), the others noise."""
    rng = np.random.default_rng(seed)
    X = np.empty((n_samples, n_steps))
    for row in X:
        t = 0
        while t < n_steps:
            stretch = slice(t, t + int(rng.integers(5, 60)))
            constant = rng.random() < 0.7
            level = rng.choice([0.0, 1.0, 2.5, -0.75])
            row[stretch] = level if constant else rng.standard_normal(len(row[stretch]))
            t = stretch.stop
    return X


@pytest.mark.gpu
def test_constant_stretches_give_the_same_features_on_every_route(monkeypatch):
    # On a constant stretch a state settles on one value (and the higher Legendre states on
    # 0): a threshold there, or a tie between states, was decided by the arithmetic's last
    # bit, and the blocked route (the GPU's) differed from the compiled kernel by up to
    # 0.55 in 0.3 % of the features. Thresholds now sit above shared values and the
    # competition has a tie: at most the rounding of one step in 300 remains.
    X = _with_constant_stretches(30, 300, 0)
    cpu = LMUPooledFeatures(device="cpu").fit(X)
    install(monkeypatch, as_gpu=True)
    try:
        gpu = LMUPooledFeatures(**cpu.get_params()).set_params(device="gpu").fit(X)
        F = gpu.transform(X)
    finally:
        clear_caches()
    difference = np.abs(F - cpu.transform(X))
    names = cpu.get_feature_names_out()
    counted = np.array(
        [name.rsplit("_", 1)[1][:4] in ("ppv", "lspv", "top", "bott") for name in names]
    )
    assert difference[:, counted].max() <= 1 / 300 + 1e-9
    # the means over steps above a threshold, and the moments: float32 rounding of the
    # state (the stand-in computes in float32, as a GPU does), and a step counted or not
    assert np.mean(difference[:, ~counted] > 1e-4) < 1e-3


def test_thresholds_sit_above_a_value_many_steps_share():
    X = _with_constant_stretches(20, 200, 1)
    model = LMUPooledFeatures(order=3, thetas=[6.0], transforms=["series"], device="cpu").fit(X)
    states = reference.dn_states(X, 3, 6.0, output="sequence").reshape(-1, 3)
    for i, thresholds in enumerate(model.biases_[0][0]):
        values, counts = np.unique(np.float32(states[:, i]), return_counts=True)
        shared = values[counts >= 5]
        # no threshold within float32 rounding of a value held for 5 steps or more
        gaps = np.abs(thresholds[:, None] - shared[None, :])
        assert np.all(gaps > 4 * np.spacing(np.abs(shared)).astype(np.float32)[None, :])


def test_the_competition_breaks_ties_by_the_first_state():
    # a constant input holds the higher Legendre states at 0 (to rounding): the first of
    # them within the tie is the largest or the smallest, on every route and the oracle's
    scaled = np.array([[[1.0, 1e-17, -1e-17, 0.0], [-1.0, 3e-17, 0.0, -2e-17]]])
    top, bottom = reference.first_within_tie(scaled)
    assert top.tolist() == [[0, 1]] and bottom.tolist() == [[1, 0]]


def test_an_offset_far_beyond_the_spread_is_warned_of():
    """Values on an offset 1e6 times their spread lose their variation in the float32
    comparisons of states and thresholds (a classifier's accuracy 0.99 -> 0.86, 0.32 at
    1e9), silently: a warning names the channel and the fix. Not for ordinary values, a
    constant channel, or inputs without the 'series' transform."""
    X = np.random.default_rng(0).standard_normal((20, 40, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LMUPooledFeatures().fit(X)
        LMUPooledFeatures().fit(np.concatenate([X, np.full((20, 40, 1), 7.0)], axis=-1))
        LMUPooledFeatures(transforms=("difference",)).fit(X + 1e7)
    shifted = X.copy()
    shifted[..., 1] += 1e6
    with pytest.warns(UserWarning, match=r"channel\(s\) \[1\] sit on an offset .*Subtract"):
        LMUPooledFeatures().fit(shifted)
    with pytest.warns(UserWarning, match="offset"):
        LMUPooledFeatures().fit(list(shifted))


@pytest.mark.parametrize(
    ("thetas", "stride", "match"),
    [([1e20], "auto", "window of 1e\\+20 steps"), ([5.0], 2**63, "stride must be at most")],
)
def test_strides_beyond_int64_are_refused_naming_them(thetas, stride, match):
    """A window or stride so long that its stride overflowed int64 raised a bare
    OverflowError; the longest stride taken fits."""
    X = np.random.default_rng(0).standard_normal((4, 32))
    with pytest.raises(ValueError, match=match):
        LMUPooledFeatures(thetas=thetas, order=2, stride=stride).fit(X)
    assert LMUPooledFeatures(thetas=[5.0], order=2, stride=2**62).fit(X).strides_[0] == 2**62


def test_no_offset_warning_for_a_constant_channel_or_one_not_read():
    """A constant channel of 0.1 (whose spread, from the mean of squares, is rounding) has
    nothing to lose; a channel the screening drops is not read; a kept channel on an
    offset is warned of once (the screening's own fit warned again)."""
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 20)
    X = rng.standard_normal((40, 20, 20))
    X[:, :, 3] += 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LMUPooledFeatures(thetas=[4], n_biases=2).fit(np.full((3, 32), 0.1))
        LMUPooledFeatures(thetas=[4], n_biases=2, channels=2).fit(X, y)
    X[:, :, 3] += 3.0 * y[:, None]  # now informative, and kept
    with pytest.warns(UserWarning, match=r"channel\(s\) \[3\] sit on an offset") as caught:
        LMUPooledFeatures(thetas=[4], n_biases=2, channels=2).fit(X, y)
    assert len(caught) == 1


def test_inputs_whose_mpv_sums_would_pass_float32_are_refused():
    """'mpv' sums up to 1 024 states in float32 before it flushes them into float64:
    inputs of 1e36 (their states within float32's range) overflowed those sums, and the
    error blamed float64 and advised dtype='float64'. Such inputs are refused up front,
    naming the sums; without 'mpv' they are read."""
    X = (1 + np.random.default_rng(0).random((4, 3000))) * 1e36
    params = dict(order=2, thetas=[4], transforms=("series",))
    with pytest.raises(ValueError, match="sums them in float32 for 'mpv'"):
        LMUPooledFeatures(**params, pools=("mpv",)).fit_transform(X)
    assert np.isfinite(LMUPooledFeatures(**params, pools=("ppv",)).fit_transform(X)).all()


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        (dict(thetas=(t for t in [2, 4])), TypeError, r"thetas must be a number or a sequence"),
        (dict(thetas={2, 4}), TypeError, r"got a set\. Pass list\(thetas\)"),
        (dict(max_memory="2gib"), ValueError, "decimal units B, KB, MB, GB, TB"),
        (dict(n_jobs=2**70), ValueError, "beyond any machine's threads"),
    ],
)
def test_unclear_parameters_get_messages_that_name_the_fix(params, error, match):
    """A generator or set of windows was called "not positive, finite numbers", an unknown
    unit "not understood" without the units, and a huge n_jobs met ctypes' raw error."""
    X = np.random.default_rng(0).standard_normal((4, 20))
    with pytest.raises(error, match=match):
        LMUPooledFeatures(**params).fit(X)


@pytest.mark.parametrize("n_channels", [1, 3])
def test_transform_stays_within_max_memory(n_channels):
    """The plan missed 8 bytes per step and channel: 20.8 MB of working memory for a
    budget of 20 MB, two sequences at a time (tracemalloc: NumPy's allocations; the
    result's own bytes apart)."""
    X = np.random.default_rng(0).standard_normal((4, 200_000 // n_channels, n_channels))
    X = X.astype(np.float32)
    model = LMUPooledFeatures(order=4, n_biases=4, max_memory="20MB", channel_sums=False)
    model.fit(X[:, :2000])
    model.transform(X[:1, :3000])  # compiled first: Numba's allocations are not ours
    tracemalloc.start()
    try:
        F = model.transform(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak - F.nbytes <= 20e6, peak - F.nbytes


def test_one_outlier_in_one_training_series_leaves_the_thresholds_of_the_others():
    """A value of 1e9 in one of 100 training series of values about 1 made the states'
    standard deviation, from which a quantile counts as shared by many steps, so large
    that every quantile counted as shared and was moved above every other state: 100 % of
    the features constant on clean data, a classifier at chance. The spread is now the
    range of the states' middle 90 %."""
    rng = np.random.default_rng(0)
    t = np.arange(30)
    y = np.arange(200) % 2
    X = 0.3 * rng.standard_normal((200, 30)) + np.where(y[:, None] == 1, np.sin(t / 3.0), 0)
    glitched = X[:100].copy()
    glitched[0, 5] = 1e9
    clean = LMUPooledFeatures(device="cpu").fit(X[:100]).transform(X[100:])
    F = LMUPooledFeatures(device="cpu").fit(glitched).transform(X[100:])
    assert np.mean(F.std(axis=0) == 0) < np.mean(clean.std(axis=0) == 0) + 0.05
    model = LMUClassifier(device="cpu").fit(glitched, y[:100])
    assert model.score(X[100:], y[100:]) > 0.95


def test_input_on_a_large_offset_is_read_at_its_own_precision():
    """The estimators' features (dtype='float32') cast float64 input to float32 before
    anything: 1e8 plus values of spread 0.3 became one constant, the classifier fell to
    chance and the offset warning, which skips constant channels, said nothing. The input
    is read at its own precision: the difference and the cumulative sum keep the
    variation, and the warning names the offset the series' own states lose."""
    rng = np.random.default_rng(0)
    t = np.arange(30)
    y = np.arange(200) % 2
    X = 0.3 * rng.standard_normal((200, 30)) + np.where(y[:, None] == 1, np.sin(t / 3.0), 0)
    with pytest.warns(UserWarning, match="offset up to"):
        model = LMUClassifier(device="cpu").fit(X[:100] + 1e8, y[:100])
    assert model.score(X[100:] + 1e8, y[100:]) > 0.95
    # float32 input stays float32, read as given
    f = LMUPooledFeatures(device="cpu", dtype="float32").fit(X.astype(np.float32))
    g = LMUPooledFeatures(device="cpu", dtype="float32").fit(
        X.astype(np.float32).astype(np.float64)
    )
    np.testing.assert_array_equal(
        f.transform(X[:5].astype(np.float32)), g.transform(X[:5].astype(np.float32))
    )


def test_one_outlier_in_a_channel_mostly_at_one_value_leaves_its_thresholds():
    """A channel at 0 in 96 of 100 training series (a sensor mostly off) holds its states
    at one value for more than 95 % of the steps: the middle 90 % of them has no range,
    and the standard deviation, which a 1e9 value inflates, made every feature of the
    channel constant. The middle 98 % serves there."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 30, 2))
    X[:96, :, 1] = 0.0
    T = rng.standard_normal((200, 30, 2))
    T[:, :, 1] *= (rng.random(200) < 0.5)[:, None]
    glitched = X.copy()
    glitched[97, 5, 1] = 1e9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the offset warning of the glitched channel)
        F = LMUPooledFeatures(device="cpu", channel_sums=False).fit(glitched).transform(T)
    clean = LMUPooledFeatures(device="cpu", channel_sums=False).fit(X).transform(T)
    assert np.mean(F.std(axis=0) == 0) < np.mean(clean.std(axis=0) == 0) + 0.1


def test_a_sequence_s_channel_sums_do_not_depend_on_the_sequences_beside_it():
    """A list of float32 and float64 sequences is held in float64: the pair sums of a
    float32 sequence were made in float32 alone and in float64 beside a float64 one, and
    its features moved by up to 0.18 (a decision by 0.007). The sums are made in float64
    everywhere (exact for two float32 values): batch, lists, streams and dask alike."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((40, 3)).astype(np.float32)
    b = rng.standard_normal((35, 3))
    f = LMUPooledFeatures(device="cpu", dtype="float32", channel_sums=True).fit(
        rng.standard_normal((20, 40, 3))
    )
    alone = f.transform([a, b.astype(np.float32)])[0]
    np.testing.assert_array_equal(f.transform([a, b])[0], alone)
    np.testing.assert_array_equal(f.transform(a[None])[0], alone)
    stream = f.stream(1)
    stream.update(a[None])
    np.testing.assert_array_equal(stream.transform()[0].astype(np.float32), alone)


def test_the_offset_check_reads_every_channel_without_copying_the_input():
    """Where every channel is read (any univariate set), the check of offsets took the
    channels by a fancy index: a copy of the whole input, whatever max_memory."""
    import tracemalloc

    from lmu_sk.pooled import _warn_of_offsets

    X = np.random.default_rng(0).standard_normal((2000, 500, 1)).astype(np.float32)
    tracemalloc.start()
    try:
        _warn_of_offsets(X, np.array([0]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.1 * X.nbytes, peak
