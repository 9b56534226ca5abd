"""Tests of the hand-written network: gradients, optimizers, schedules, initialisation."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from lmu_sk.neural.activations import ACTIVATIONS, HIDDEN_ACTIVATIONS
from lmu_sk.neural.initializers import glorot_uniform, he_uniform, init_bound
from lmu_sk.neural.losses import LOSSES
from lmu_sk.neural.network import DenseNetwork, forward_pass, make_device_rng
from lmu_sk.neural.optimizers import (
    SGD,
    Adam,
    AdaptiveLearningRate,
    ConstantLearningRate,
    CosineLearningRate,
    InverseScalingLearningRate,
    PlateauLearningRate,
    make_schedule,
)
from lmu_sk.neural.training import (
    BlockBatches,
    RowBatches,
    RowBlocks,
    TrainingDivergedError,
    TrainingHistory,
    resolve_batch_size,
    train_epochs,
)

# Central differences in float64 with step EPS have a truncation error of order
# EPS**2 * |f'''| (~1e-12 here) and a rounding error of order 1e-16 * |f| / EPS (~1e-10 for
# losses of order one), so analytic and numerical gradients agree to ~1e-9. RTOL = 1e-6
# with ATOL = 1e-8 leaves two to three orders of margin yet catches any wrong term (a
# missing factor or sign is an O(1) relative error). ReLU kinks are hit with probability
# ~1e-6 per unit because inputs and weights are continuous random draws.
EPS = 1e-6
RTOL = 1e-6
ATOL = 1e-8


def _make_problem(
    seed, n_samples, n_features, hidden, n_outputs, activation, loss, alpha, drop, input_drop=False
):
    rng = np.random.default_rng(seed)
    net = DenseNetwork(
        [n_features, *hidden, n_outputs],
        activation=activation,
        loss=loss,
        alpha=alpha,
        dropout=0.5 if drop else 0.0,
        dtype=np.float64,
        input_dropout=0.25 if input_drop else 0.0,
    )
    net.initialize(rng)
    # non-zero biases so that their gradients are exercised away from zero
    for b in net.intercepts:
        b[...] = rng.normal(scale=0.5, size=b.shape)
    X = rng.normal(size=(n_samples, n_features))
    if loss == "log_loss":
        Y = np.eye(n_outputs)[rng.integers(n_outputs, size=n_samples)]
    elif loss == "binary_log_loss":
        Y = rng.integers(2, size=(n_samples, n_outputs)).astype(np.float64)
    else:
        Y = rng.normal(size=(n_samples, n_outputs))
    masks = None
    if drop:
        # fixed inverted-dropout multipliers: 0 or 1 / (1 - 0.5)
        masks = [2.0 * (rng.random((n_samples, h)) >= 0.5) for h in hidden]
    if input_drop:
        # fixed inverted input-dropout multipliers: 0 or 1 / (1 - 0.25)
        input_mask = (rng.random((n_samples, n_features)) >= 0.25) / 0.75
        return net, X, Y, masks, input_mask
    return net, X, Y, masks


def _numerical_gradient(net, X, Y, masks, input_mask=None):
    flat = net.params
    num = np.empty_like(flat)
    options = dict(dropout_masks=masks, input_mask=input_mask)
    for j in range(flat.size):
        old = flat[j]
        flat[j] = old + EPS
        plus = float(net.loss_and_gradients(X, Y, **options))
        flat[j] = old - EPS
        minus = float(net.loss_and_gradients(X, Y, **options))
        flat[j] = old
        num[j] = (plus - minus) / (2 * EPS)
    return num


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_samples=st.integers(1, 6),
    n_features=st.integers(1, 4),
    hidden=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    n_outputs=st.integers(1, 3),
    activation=st.sampled_from(HIDDEN_ACTIVATIONS),
    loss=st.sampled_from(sorted(LOSSES)),
    alpha=st.sampled_from([0.0, 0.3]),
    drop=st.booleans(),
    input_drop=st.booleans(),
)
def test_gradients_match_finite_differences(
    seed, n_samples, n_features, hidden, n_outputs, activation, loss, alpha, drop, input_drop
):
    if loss == "log_loss":
        n_outputs += 1  # softmax needs at least two classes
    net, X, Y, masks, *input_mask = _make_problem(
        seed,
        n_samples,
        n_features,
        hidden,
        n_outputs,
        activation,
        loss,
        alpha,
        drop and hidden,
        input_drop,
    )
    input_mask = input_mask[0] if input_mask else None
    net.loss_and_gradients(X, Y, dropout_masks=masks, input_mask=input_mask)
    analytic = net.grads.copy()
    numerical = _numerical_gradient(net, X, Y, masks, input_mask)
    np.testing.assert_allclose(analytic, numerical, rtol=RTOL, atol=ATOL)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_samples=st.integers(1, 6),
    n_features=st.integers(1, 4),
    hidden=st.lists(st.integers(1, 4), min_size=0, max_size=2),
    n_outputs=st.integers(1, 3),
    activation=st.sampled_from(HIDDEN_ACTIVATIONS),
    loss=st.sampled_from(sorted(LOSSES)),
    alpha=st.sampled_from([0.0, 0.3]),
    drop=st.booleans(),
    zero_weight=st.booleans(),
)
def test_weighted_gradients_match_finite_differences(
    seed, n_samples, n_features, hidden, n_outputs, activation, loss, alpha, drop, zero_weight
):
    """The weighted loss's gradient, zero weights included (same tolerances as above)."""
    if loss == "log_loss":
        n_outputs += 1
    net, X, Y, masks = _make_problem(
        seed, n_samples, n_features, hidden, n_outputs, activation, loss, alpha, drop and hidden
    )
    rng = np.random.default_rng(seed + 1)
    w = rng.uniform(0.1, 3.0, size=n_samples)
    if zero_weight and n_samples > 1:
        w[rng.integers(n_samples)] = 0.0
    options = dict(dropout_masks=masks, sample_weight=w)
    net.loss_and_gradients(X, Y, **options)
    analytic = net.grads.copy()
    flat, numerical = net.params, np.empty_like(net.params)
    for j in range(flat.size):
        old = flat[j]
        flat[j] = old + EPS
        plus = float(net.loss_and_gradients(X, Y, **options))
        flat[j] = old - EPS
        minus = float(net.loss_and_gradients(X, Y, **options))
        flat[j] = old
        numerical[j] = (plus - minus) / (2 * EPS)
    np.testing.assert_allclose(analytic, numerical, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_weighted_loss_equals_repeated_rows(loss):
    """Integer weights give the loss and gradient of the data with rows repeated, and the
    L2 term divided by the total weight; float64, so equal to rounding (rtol 1e-12)."""
    net, X, Y, _ = _make_problem(4, 7, 3, [5], 3, "tanh", loss, 0.3, False)
    w = np.array([0, 1, 2, 3, 1, 0, 4])
    weighted = float(net.loss_and_gradients(X, Y, sample_weight=w.astype(float)))
    g_weighted = net.grads.copy()
    repeated = float(net.loss_and_gradients(X.repeat(w, axis=0), Y.repeat(w, axis=0)))
    assert weighted == pytest.approx(repeated, rel=1e-12)
    np.testing.assert_allclose(g_weighted, net.grads, rtol=1e-12, atol=1e-15)
    # the total weight given by the caller is the one used
    given = float(net.loss_and_gradients(X, Y, sample_weight=w.astype(float), weight_sum=11.0))
    assert given == pytest.approx(repeated, rel=1e-12)
    with pytest.raises(ValueError, match="sum to > 0"):
        net.loss_and_gradients(X, Y, sample_weight=np.zeros(7))


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_loss_values_against_direct_formulas(loss):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(5, 3)) * 3
    if loss == "log_loss":
        y = np.eye(3)[[0, 2, 1, 1, 0]]
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        expected = -np.mean(np.sum(y * np.log(p), axis=1))
    elif loss == "binary_log_loss":
        y = rng.integers(2, size=z.shape).astype(float)
        p = 1 / (1 + np.exp(-z))
        expected = -np.mean(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p), axis=1))
    else:
        y = rng.normal(size=z.shape)
        p = z.copy()
        expected = np.sum((z - y) ** 2) / (2 * len(z))
    zz = z.copy()
    value, grad = LOSSES[loss](zz, y)
    assert float(value) == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(zz, p, rtol=1e-12)  # z now holds the output activation
    np.testing.assert_allclose(grad, (p - y) / len(z), rtol=1e-12, atol=1e-15)


def test_log_loss_is_finite_for_huge_logits():
    z = np.array([[1000.0, -1000.0], [0.0, 800.0]], dtype=np.float32)
    y = np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    value, grad = LOSSES["log_loss"](z, y)
    assert float(value) == pytest.approx((2000 + 800) / 2, rel=1e-6)
    assert np.isfinite(grad).all()


@pytest.mark.parametrize("activation", HIDDEN_ACTIVATIONS)
def test_activations_match_definitions(activation):
    x = np.linspace(-30, 30, 101)
    expected = {
        "identity": x,
        "relu": np.maximum(x, 0),
        "tanh": np.tanh(x),
        "logistic": 1 / (1 + np.exp(-x)),
    }[activation]
    np.testing.assert_allclose(ACTIVATIONS[activation](x.copy()), expected, rtol=1e-12)


def test_softmax_rows_sum_to_one():
    x = np.random.default_rng(0).normal(size=(4, 5)) * 50
    p = ACTIVATIONS["softmax"](x.copy())
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(p.argmax(axis=1), x.argmax(axis=1))


def test_forward_pass_matches_training_forward():
    net, X, Y, _ = _make_problem(3, 7, 4, [5, 3], 3, "tanh", "log_loss", 0.0, False)
    net.loss_and_gradients(X, Y)
    ws = net._workspace(7, False, False)
    np.testing.assert_allclose(net.forward(X), ws.acts[-1], rtol=1e-12)
    out = forward_pass(X, net.coefs, net.intercepts, "tanh", "softmax", chunk_size=2)
    np.testing.assert_allclose(out, ws.acts[-1], rtol=1e-12)


def test_first_layer_input_gradient_is_not_formed():
    # deltas[0] stands for the input: it must never be allocated
    net, X, Y, _ = _make_problem(0, 4, 3, [2], 2, "relu", "squared_error", 0.0, False)
    net.loss_and_gradients(X, Y)
    assert net._workspace(4, False, False).deltas[0] is None


def test_dropout_rng_masks_scale_and_rate():
    rng = np.random.default_rng(0)
    net = DenseNetwork([3, 400, 2], "identity", "squared_error", dropout=0.25, dtype=np.float64)
    net.initialize(rng)
    X = rng.normal(size=(500, 3))
    Y = np.zeros((500, 2))
    net.loss_and_gradients(X, Y, dropout_rng=rng)
    mask = net._workspace(500, True, False).masks[1]
    assert set(np.unique(mask)) <= {0.0, 1 / 0.75}
    assert np.mean(mask == 0) == pytest.approx(0.25, abs=0.01)


def test_input_dropout_masks_the_features_seen_by_the_first_layer():
    rng = np.random.default_rng(0)
    net = DenseNetwork(
        [300, 4, 2], "relu", "squared_error", dtype=np.float64, input_dropout=0.4
    ).initialize(rng)
    X, Y = rng.normal(size=(200, 300)), rng.normal(size=(200, 2))
    loss = float(net.loss_and_gradients(X, Y, dropout_rng=rng))
    grads = net.grads.copy()
    ws = net._workspace(200, False, True)
    mask = ws.masks[0]
    assert set(np.unique(mask)) <= {0.0, 1 / 0.6}
    assert np.mean(mask == 0) == pytest.approx(0.4, abs=0.01)
    # the same as training without input dropout on the masked features
    plain = DenseNetwork([300, 4, 2], "relu", "squared_error", dtype=np.float64)
    plain.set_weights(net.coefs, net.intercepts)
    assert float(plain.loss_and_gradients(X * mask, Y)) == pytest.approx(loss, rel=1e-12)
    np.testing.assert_allclose(plain.grads, grads, rtol=1e-12)
    # without a generator (no training randomness) the features pass unmasked
    expected = float(plain.loss_and_gradients(X, Y))
    assert float(net.loss_and_gradients(X, Y)) == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(net.grads, plain.grads, rtol=1e-12)


# ---------------------------------------------------------------------------- optimizers
@pytest.mark.parametrize("fused", [False, None])
def test_adam_matches_hand_computed_steps(fused):
    p0 = np.array([1.0, -2.0, 0.5])
    grads = [np.array([0.1, -0.3, 2.0]), np.array([-0.2, 0.1, 1.0])]
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    p = p0.copy()
    opt = Adam([p], lr, b1, b2, eps, fused=fused)
    m = np.zeros(3)
    v = np.zeros(3)
    expected = p0.copy()
    for t, g in enumerate(grads, start=1):
        opt.update([p], [g])
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        lr_t = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
        expected = expected - lr_t * m / (np.sqrt(v) + eps)
        np.testing.assert_allclose(p, expected, rtol=1e-12)
    np.testing.assert_allclose(opt.first_moments[0], m, rtol=1e-12)
    np.testing.assert_allclose(opt.second_moments[0], v, rtol=1e-12)
    assert opt.t == 2


def test_adam_first_step_has_size_learning_rate():
    p = np.zeros(4, dtype=np.float32)
    Adam(p, 1e-3).update(p, np.array([5.0, -0.1, 0.05, 7.0], dtype=np.float32))
    np.testing.assert_allclose(p, [-1e-3, 1e-3, -1e-3, -1e-3], rtol=1e-4)
    assert p.dtype == np.float32


@pytest.mark.parametrize("fused", [False, None])
@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_matches_hand_computed_steps(nesterov, fused):
    lr, mu = 0.1, 0.9
    p = np.array([1.0, 2.0])
    opt = SGD([p], lr, momentum=mu, nesterov=nesterov, fused=fused)
    g1, g2 = np.array([1.0, -1.0]), np.array([0.5, 2.0])
    opt.update([p], [g1])
    v1 = -lr * g1
    e1 = np.array([1.0, 2.0]) + (mu * v1 - lr * g1 if nesterov else v1)
    np.testing.assert_allclose(p, e1, rtol=1e-12)
    opt.update([p], [g2])
    v2 = mu * v1 - lr * g2
    e2 = e1 + (mu * v2 - lr * g2 if nesterov else v2)
    np.testing.assert_allclose(p, e2, rtol=1e-12)


@pytest.mark.parametrize("Opt", [Adam, SGD])
def test_fused_and_array_paths_agree_in_float32(Opt):
    rng = np.random.default_rng(0)
    p = rng.normal(size=(30, 7)).astype(np.float32)
    q = p.copy()
    fused, plain = Opt([p], 0.01, fused=None), Opt([q], 0.01, fused=False)
    for _ in range(5):
        g = rng.normal(size=p.shape).astype(np.float32)
        fused.update([p], [g])
        plain.update([q], [g])
    assert p.dtype == np.float32
    np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fused", [False, None])
@pytest.mark.parametrize("Opt", [Adam, SGD])
def test_l2_folded_into_update_matches_network_gradient(Opt, fused):
    # the training loop lets the optimizer add alpha / n * W; the step must be the one
    # taken with the network's full gradient
    net, X, Y, _ = _make_problem(1, 9, 4, [5], 3, "tanh", "log_loss", 0.7, False)
    start = net.params.copy()
    loss_full = net.loss_and_gradients(X, Y)
    full = net.grads.copy()
    loss_data = net.loss_and_gradients(X, Y, l2_gradient=False)
    assert float(loss_full) == float(loss_data)  # the loss always includes the penalty
    assert not np.allclose(full, net.grads)
    data = net.grads.copy()
    nw, decay = net.n_weights, 0.7 / len(X)
    np.testing.assert_allclose(full[:nw], data[:nw] + decay * start[:nw], rtol=1e-12)
    p1, p2 = start.copy(), start.copy()
    o1, o2 = Opt([p1], 0.05, fused=fused), Opt([p2], 0.05, fused=fused)
    for _ in range(3):
        g1 = data.copy()
        g1[:nw] += decay * p1[:nw]  # the network's full gradient at the current weights
        o1.update([p1], [g1])
        o2.update([p2], [data.copy()], l2=net.l2_terms(len(X)))
    np.testing.assert_allclose(p1, p2, rtol=1e-12, atol=1e-15)
    assert net.l2_terms(9) == [(nw, 0.7 / 9)]


def test_optimizer_updates_in_place_and_pickles():
    import pickle

    p = np.ones(3)
    opt = Adam([p], 0.1)
    before = id(p)
    opt.update([p], [np.ones(3)])
    assert id(p) == before and np.all(p < 1)
    clone = pickle.loads(pickle.dumps(opt))
    q = p.copy()
    opt.update([p], [np.ones(3)])
    clone.update([q], [np.ones(3)])
    np.testing.assert_array_equal(p, q)


# ---------------------------------------------------------------------------- schedules
def test_plateau_schedule_divides_by_ten_then_stops():
    opt = Adam([np.zeros(1)], 1e-3)
    sched = PlateauLearningRate()
    rates = []
    while not sched.on_plateau(opt):
        rates.append(opt.learning_rate)
    np.testing.assert_allclose(rates, [1e-4, 1e-5, 1e-6])
    assert opt.learning_rate == pytest.approx(1e-6)


def test_constant_schedule_stops_and_make_schedule():
    opt = SGD([np.zeros(1)], 0.5)
    assert ConstantLearningRate().on_plateau(opt) is True
    assert opt.learning_rate == 0.5
    assert isinstance(make_schedule("plateau"), PlateauLearningRate)
    assert isinstance(make_schedule("adaptive"), AdaptiveLearningRate)
    assert make_schedule("invscaling", power_t=0.25).power_t == 0.25
    assert make_schedule("cosine", n_epochs=7).n_epochs == 7
    with pytest.raises(ValueError, match="learning_rate"):
        make_schedule("step")


def test_cosine_schedule_formula_plateau_and_no_length():
    opt = Adam([np.zeros(1)], 0.2)
    sched = CosineLearningRate(4)
    rates = [opt.learning_rate]
    for _ in range(4):
        assert sched.on_plateau(opt) is False  # a stall changes nothing
        sched.on_epoch_end(opt, 0)
        rates.append(opt.learning_rate)
    # epoch k runs at 0.2 * (1 + cos(pi (k - 1) / 4)) / 2; after the 4th (the last) the
    # rate stays at the 4th's: the formula's next value, 0, would make a partial_fit after
    # the fit train nothing, silently
    expected = [0.2 * (1 + math.cos(math.pi * k / 4)) / 2 for k in (0, 1, 2, 3, 3)]
    np.testing.assert_allclose(rates, expected, rtol=1e-12, atol=1e-17)
    assert sched.fixed_length and not ConstantLearningRate().fixed_length
    kept = CosineLearningRate(None)
    kept.on_epoch_end(opt, 100)
    assert opt.learning_rate == rates[-1]
    with pytest.raises(ValueError, match="n_epochs"):
        CosineLearningRate(0)


def test_adaptive_schedule_divides_by_five_as_scikit_learn():
    # scikit-learn stops at a plateau where the rate is already <= 1e-6, so the last rate
    # used, 3.2e-7, is below the minimum
    opt = SGD([np.zeros(1)], 1e-3)
    sched = AdaptiveLearningRate()
    rates = []
    while not sched.on_plateau(opt):
        rates.append(opt.learning_rate)
    np.testing.assert_allclose(rates, [2e-4, 4e-5, 8e-6, 1.6e-6, 3.2e-7], rtol=1e-12)
    sched.on_epoch_end(opt, 10_000)  # no change between plateaus
    assert opt.learning_rate == pytest.approx(3.2e-7, rel=1e-12)


def test_invscaling_schedule_formula_and_stop():
    opt = Adam([np.zeros(1)], 0.1)
    sched = InverseScalingLearningRate(power_t=0.25)
    for t in (0, 40, 1000):
        sched.on_epoch_end(opt, t)
        assert opt.learning_rate == pytest.approx(0.1 / (t + 1) ** 0.25, rel=1e-12)
    assert sched.on_plateau(opt) is True


def test_schedules_in_training_loop_update_after_every_epoch():
    # with a huge tol no epoch after the first improves; n_iter_no_change=1 gives a plateau
    # at epochs 3, 5, 7, ...
    net, X, Y, rng = _tiny_training_setup()
    opt = SGD([net.params], 1e-2)
    rates = []

    class Recording(AdaptiveLearningRate):
        def on_epoch_end(self, optimizer, t):
            super().on_epoch_end(optimizer, t)
            rates.append(optimizer.learning_rate)

    history = TrainingHistory()
    train_epochs(
        net, opt, Recording(), RowBatches(X, Y, 10), history, rng=rng, max_iter=100,
        tol=1e9, n_iter_no_change=1,
    )  # fmt: skip
    # the rate of epoch k is read before that epoch's plateau divides it
    expected = [1e-2, 1e-2, 1e-2, 2e-3, 2e-3, 4e-4, 4e-4, 8e-5, 8e-5, 1.6e-5, 1.6e-5]
    expected += [3.2e-6, 3.2e-6, 6.4e-7, 6.4e-7]
    np.testing.assert_allclose(rates, expected, rtol=1e-12)
    assert history.n_iter == 15
    net, X, Y, rng = _tiny_training_setup()
    opt = Adam([net.params], 1e-2)
    history = TrainingHistory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        train_epochs(
            net, opt, InverseScalingLearningRate(0.5), RowBatches(X, Y, 7), history, rng=rng,
            max_iter=4, tol=0.0,
        )  # fmt: skip
    # after 4 epochs of 40 samples: t = 160
    assert opt.learning_rate == pytest.approx(1e-2 / 161**0.5, rel=1e-12)


def _weighted_training(weights, X, Y, dtype, repeat, batch_size, shuffle=True):
    net = DenseNetwork([3, 4, 1], "tanh", "squared_error", alpha=0.1, dtype=dtype)
    net.initialize(np.random.default_rng(0))
    opt = Adam([net.params], 1e-2)
    if repeat:
        X, Y, weights = X.repeat(weights, axis=0), Y.repeat(weights, axis=0), None
    batches = RowBatches(X.astype(dtype), Y.astype(dtype), batch_size, sample_weight=weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = train_epochs(
            net, opt, ConstantLearningRate(), batches, TrainingHistory(),
            rng=np.random.default_rng(1), max_iter=5, tol=0.0, shuffle=shuffle,
        )  # fmt: skip
    return net.params.copy(), history


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_integer_weights_train_as_repeated_rows(dtype, rtol):
    """One full batch, no shuffling: the weighted and the repeated problem take the same
    steps, up to the summation order of the batch sums (1e-16 relative per operation in
    float64, 6e-8 in float32, grown over 5 Adam steps to well within the tolerances)."""
    _, X, Y, _ = _tiny_training_setup(n=12)
    w = np.array([1, 0, 2, 3, 1, 1, 0, 4, 2, 1, 1, 2])
    a, ha = _weighted_training(w, X, Y, dtype, False, batch_size=12, shuffle=False)
    b, hb = _weighted_training(w, X, Y, dtype, True, batch_size=int(w.sum()), shuffle=False)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2)
    assert ha.loss_curve == pytest.approx(hb.loss_curve, rel=rtol)


def test_zero_weight_batches_are_skipped():
    # batches of 3 in order: the second batch has only zero weights and gives no step, so
    # training equals training on the other two batches
    _, X, Y, _ = _tiny_training_setup(n=9)
    w = np.array([1.0, 2, 1, 0, 0, 0, 3, 1, 1])
    keep = w > 0
    a, _ = _weighted_training(w, X, Y, np.float64, False, batch_size=3, shuffle=False)
    b, _ = _weighted_training(w[keep], X[keep], Y[keep], np.float64, False, batch_size=3,
                              shuffle=False)  # fmt: skip
    np.testing.assert_allclose(a, b, rtol=1e-12)
    with pytest.raises(ValueError, match="positive sum"):
        _weighted_training(np.zeros(9), X, Y, np.float64, False, batch_size=3)


def test_exploding_loss_warns_once_and_normal_training_does_not():
    net, X, Y, rng = _tiny_training_setup()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter is reached
        train_epochs(
            net, Adam([net.params], 1e-2), ConstantLearningRate(), RowBatches(X, Y, 10),
            TrainingHistory(), rng=rng, max_iter=30, tol=1e-9, n_iter_no_change=100,
        )  # fmt: skip
    net, X, Y, rng = _tiny_training_setup()
    with pytest.warns(UserWarning, match="learning_rate_init") as record:
        warnings.simplefilter("ignore", ConvergenceWarning)
        train_epochs(
            net, Adam([net.params], 1e4), ConstantLearningRate(), RowBatches(X, Y, 10),
            TrainingHistory(), rng=rng, max_iter=5, tol=0.0,
        )  # fmt: skip
    assert sum("exploded" in str(w.message) for w in record) == 1


def _tiny_training_setup(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Y = X @ rng.normal(size=(3, 1))
    net = DenseNetwork([3, 4, 1], "tanh", "squared_error", dtype=np.float64).initialize(rng)
    return net, X, Y, rng


def test_plateau_schedule_in_training_loop():
    net, X, Y, rng = _tiny_training_setup()
    opt = Adam([net.params], 1e-2)
    history = TrainingHistory()
    # with a huge tol no epoch counts as an improvement: a plateau every 2 epochs
    train_epochs(
        net, opt, PlateauLearningRate(), RowBatches(X, Y, 10), history, rng=rng,
        max_iter=100, tol=1e9, n_iter_no_change=1,
    )  # fmt: skip
    # the first epoch sets best_loss; plateaus at epochs 3, 5, 7, 9 take 1e-2 down to
    # 1e-6 and the one at epoch 11 stops training
    assert opt.learning_rate == pytest.approx(1e-6)
    assert history.n_iter == 11


def test_constant_schedule_stops_after_n_iter_no_change_plus_one():
    net, X, Y, rng = _tiny_training_setup()
    history = TrainingHistory()
    train_epochs(
        net, Adam([net.params]), ConstantLearningRate(), RowBatches(X, Y, 10), history, rng=rng,
        max_iter=100, tol=1e9, n_iter_no_change=3,
    )  # fmt: skip
    assert history.n_iter == 5
    assert len(history.loss_curve) == 5 and history.t == 5 * 40


def test_training_warns_at_max_iter():
    net, X, Y, rng = _tiny_training_setup()
    with pytest.warns(ConvergenceWarning, match="Maximum iterations"):
        train_epochs(
            net, Adam([net.params]), ConstantLearningRate(), RowBatches(X, Y, 7),
            TrainingHistory(), rng=rng, max_iter=3, tol=0.0,
        )  # fmt: skip


def test_early_stopping_restores_best_epoch_weights():
    net, X, Y, rng = _tiny_training_setup()
    scores = iter([0.1, 0.5, 0.3, 0.2, 0.4, 0.45, 0.1, 0.2])
    snapshots = []

    def validation_score():
        snapshots.append(net.params.copy())
        return next(scores)

    history = TrainingHistory()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        train_epochs(
            net, Adam([net.params], 1e-2), ConstantLearningRate(), RowBatches(X, Y, 10), history,
            rng=rng, max_iter=50, tol=0.0, n_iter_no_change=3,
            validation_score=validation_score,
        )  # fmt: skip
    # best is epoch 2 (0.5); epochs 3-6 do not beat it, the 4th of them stops training
    assert history.n_iter == 6
    assert history.best_validation_score == 0.5
    np.testing.assert_array_equal(net.params, snapshots[1])
    assert not np.array_equal(snapshots[1], snapshots[-1])


def test_divergence_raises_clear_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * 100
    Y = X @ rng.normal(size=(3, 1)) * 100
    net = DenseNetwork([3, 8, 1], "relu", "squared_error", dtype=np.float32).initialize(rng)
    with pytest.raises(TrainingDivergedError, match="Lower learning_rate_init") as info:
        train_epochs(
            net, SGD([net.params], 10.0), ConstantLearningRate(),
            RowBatches(X.astype(np.float32), Y.astype(np.float32), 10), TrainingHistory(),
            rng=rng, max_iter=50,
        )  # fmt: skip
    assert isinstance(info.value, ValueError) and isinstance(info.value, FloatingPointError)


def _numpy_lookalike():
    """A module that is not ``numpy`` but forwards to it: takes the non-NumPy code paths
    (no fused loops, device RNG, explicit transfers) that CuPy would take."""
    import types

    fake = types.ModuleType("numpy_lookalike")
    fake.__dict__.update({k: v for k, v in np.__dict__.items() if not k.startswith("__")})
    return fake


def test_training_on_another_array_module_matches_numpy():
    xp = _numpy_lookalike()
    results = []
    for module in (np, xp):
        _, X, Y, _ = _tiny_training_setup(seed=5)
        net = DenseNetwork(
            [3, 4, 1], "tanh", "squared_error", alpha=0.1, dtype=np.float64, xp=module
        )
        net.initialize(np.random.default_rng(0))
        opt = Adam([net.params], 1e-2, xp=module, fused=False)
        history = TrainingHistory()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            train_epochs(
                net, opt, ConstantLearningRate(), RowBatches(X, Y, 8, xp=module), history,
                rng=np.random.default_rng(1), max_iter=5,
            )  # fmt: skip
        results.append((net.params.copy(), history.loss_curve))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    assert results[0][1] == pytest.approx(results[1][1], rel=1e-12)


def test_dropout_on_another_array_module_uses_device_generator():
    xp = _numpy_lookalike()
    net, X, Y, _ = _tiny_training_setup()
    net = DenseNetwork([3, 50, 1], "relu", "squared_error", dropout=0.5, xp=xp)
    net.initialize(np.random.default_rng(0))
    dev_rng = make_device_rng(xp, np.random.default_rng(0))
    assert isinstance(dev_rng, np.random.Generator)
    net.loss_and_gradients(X.astype(np.float32), Y.astype(np.float32), dropout_rng=dev_rng)
    mask = net._workspace(len(X), True, False).masks[1]
    assert set(np.unique(mask)) <= {0.0, 2.0}


def test_resolve_batch_size():
    assert resolve_batch_size("auto", 50) == 50
    assert resolve_batch_size("auto", 5000) == 200
    assert resolve_batch_size(32, 100) == 32
    with pytest.warns(UserWarning, match="clipped"):
        assert resolve_batch_size(500, 100) == 100


# ---------------------------------------------------------------------------- initialisation
@pytest.mark.parametrize(
    ("init", "fan_in", "fan_out", "variance"),
    [
        (he_uniform, 400, 300, 2 / 400),
        (glorot_uniform, 400, 300, 2 / 700),
        (glorot_uniform, 50, 10, 2 / 60),
    ],
)
def test_init_scales(init, fan_in, fan_out, variance):
    w = init(np.random.default_rng(0), fan_in, fan_out)
    assert w.shape == (fan_in, fan_out) and w.dtype == np.float32
    # the sample variance of n uniform draws has relative standard error ~sqrt(0.8 / n)
    assert np.var(w) == pytest.approx(variance, rel=5 * math.sqrt(0.8 / w.size))
    assert np.abs(w).max() <= init_bound(fan_in, fan_out, "relu" if init is he_uniform else "x")
    assert abs(np.mean(w)) < 5 * math.sqrt(variance / w.size)


def test_initialize_uses_he_for_relu_and_glorot_for_output():
    net = DenseNetwork([300, 200, 10], "relu", "log_loss", dtype=np.float64)
    net.initialize(np.random.RandomState(0))
    assert np.abs(net.coefs[0]).max() <= math.sqrt(6 / 300)
    assert np.abs(net.coefs[0]).max() > math.sqrt(6 / 500)  # wider than Glorot
    assert np.abs(net.coefs[1]).max() <= math.sqrt(6 / 210)
    assert all(np.all(b == 0) for b in net.intercepts)


def _blocks_of(X, sizes, indices=None, visits=None):
    """``RowBlocks`` over the rows of ``X`` cut into blocks of ``sizes``; ``visits``
    records the order in which the blocks are loaded."""
    bounds = np.cumsum((0, *sizes))

    def load(order):
        for k in order:
            if visits is not None:
                visits.append(int(k))
            yield int(k), X[bounds[k] : bounds[k + 1]]

    indices = np.arange(len(sizes)) if indices is None else np.asarray(indices)
    return RowBlocks(bounds, indices, X.shape[1], load)


def _train(batches, max_iter=6, seed=1):
    net = DenseNetwork([3, 4, 1], "tanh", "squared_error", alpha=0.1, dtype=np.float64)
    net.initialize(np.random.default_rng(0))
    history = TrainingHistory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        train_epochs(
            net, Adam([net.params], 1e-2), ConstantLearningRate(), batches, history,
            rng=np.random.default_rng(seed), max_iter=max_iter, tol=0.0,
        )  # fmt: skip
    return net.params.copy(), history


def test_one_block_trains_exactly_as_rows_in_memory():
    """The epoch loop is one: a single block is the in-memory problem, minibatch for
    minibatch and random draw for random draw, so the weights are equal bit for bit."""
    _, X, Y, _ = _tiny_training_setup(n=37)
    in_memory, h_memory = _train(RowBatches(X, Y, 8))
    one_block, h_block = _train(BlockBatches(_blocks_of(X, [37]), Y, 8, np.float64, np))
    np.testing.assert_array_equal(one_block, in_memory)
    assert h_block.loss_curve == h_memory.loss_curve and h_block.t == h_memory.t == 6 * 37


def test_blocks_are_visited_in_a_new_order_every_epoch_and_held_out_ones_never():
    _, X, Y, _ = _tiny_training_setup(n=40)
    visits = []
    blocks = _blocks_of(X, [10, 5, 10, 10, 5], indices=[0, 1, 3, 4], visits=visits)
    _, history = _train(BlockBatches(blocks, Y, 4, np.float64, np), max_iter=5)
    epochs = [visits[i : i + 4] for i in range(0, len(visits), 4)]
    assert len(epochs) == 5 and all(sorted(e) == [0, 1, 3, 4] for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # reshuffled (5 draws of 24 orders)
    assert history.t == 5 * 30  # the rows of the trained blocks only
    assert blocks.n_rows == 30


def test_blocks_train_towards_the_in_memory_solution():
    _, X, Y, _ = _tiny_training_setup(n=200)
    _, h_memory = _train(RowBatches(X, Y, 10), max_iter=60)
    blocks = BlockBatches(_blocks_of(X, [50, 50, 50, 50]), Y, 10, np.float64, np)
    _, h_blocks = _train(blocks, max_iter=60)
    assert h_blocks.loss_curve[-1] < 0.2 * h_blocks.loss_curve[0]
    # another order of the same minibatch steps: the same loss within a few per cent
    assert h_blocks.loss_curve[-1] == pytest.approx(h_memory.loss_curve[-1], rel=0.1)


def test_a_block_of_the_wrong_shape_is_an_error():
    _, X, Y, _ = _tiny_training_setup(n=20)
    blocks = _blocks_of(X, [10, 10])
    wrong = RowBlocks(blocks.bounds, blocks.indices, 3, lambda order: ((k, X[:7]) for k in order))
    with pytest.raises(ValueError, match=r"Block \d has feature rows of shape \(7, 3\)"):
        _train(BlockBatches(wrong, Y, 4, np.float64, np))


def test_invscaling_with_a_huge_power_sets_the_rate_to_zero_without_an_overflow():
    """(t + 1) ** power_t beyond float's range raised a bare OverflowError ('Numerical
    result out of range') from the schedule; the rate it stands for is 0."""
    opt = Adam([np.zeros(1)], 0.2)
    InverseScalingLearningRate(power_t=1e6).on_epoch_end(opt, 100)
    assert opt.learning_rate == 0.0
    InverseScalingLearningRate(power_t=0.5).on_epoch_end(opt, 3)
    assert opt.learning_rate == 0.2 / 2.0
