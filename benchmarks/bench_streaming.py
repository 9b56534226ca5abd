"""Streaming inference: speed against a bare NumPy step, accuracy against the batch model.

Speed (``--part speed``). The model is the papers' psMNIST shape: order 468, theta 784,
one hidden layer of 346 ReLU units and 10 softmax outputs, float32; its weights come from
a short fit on a few random sequences (the timings do not depend on the values).

* One stream, one step: ``stream.update(u)`` then ``stream.predict_proba()``, against a
  bare NumPy step on preallocated float32 arrays: one matrix product of the state
  (``m = A @ m + B * u``) and the head's two (``relu((m - mean) @ W1' + b1) @ W2 + b2``,
  the scale folded into ``W1'``, then a softmax). Target: the stream takes at most 1.5x
  the bare step.
* 1000 streams, one step: the same in batch (``M @ A.T + u[:, None] * B`` and the head on
  1000 rows). The stream's throughput against the bare batch step's (no target).
* A chunk of 784 steps in one ``update`` against 784 single-step updates (one stream,
  output 'final'), and the same for output 'max', whose chunks need every state (no
  targets).
* The default ``LMUClassifier()`` (pooled features, ridge head: the Gaussian kernel's,
  as ``kernel='auto'`` takes it for 200 training series of 2 classes), fitted on 200 noisy
  sines of 300 steps: 500 streams given their 300 steps as one chunk, then ``predict``,
  against the model's batch ``predict`` of the same 500 series (no target); and one
  stream's single step (``update`` then ``predict_proba``) against the batch
  ``predict_proba`` of its 300 steps so far, which a model without a stream repeats at
  every step (no target).

Accuracy (``--part accuracy``). For every feature output ('final', 'sequence', 'mean',
'max', 'pooled') and every head (dense and ridge, classifier and regressor), in float32
and float64: a model fitted on 40 series of 1000 steps streams two fresh series of
``--accuracy-steps`` steps (default 1e6) one single-step update at a time; then its
features and head outputs are compared with the batch model on the whole series, as
``max |stream - batch| / max |batch|``. Target: below 1e-5 in float32.

Single steps are timed in batches of 20 consecutive steps, the stream and its baseline
taking turns batch by batch, and each reports its least time per step over all batches of
``--repeats`` passes through ``--steps`` steps: a batch takes milliseconds, so on a busy
shared machine many batches run uninterrupted and the least is the uncontended speed.
Chunks are timed as the best of ``--repeats`` alternating runs.

Run::

    python benchmarks/bench_streaming.py [--part speed|accuracy|all] [--steps 2000]
        [--repeats 5] [--accuracy-steps 1000000]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _timing import blas_in_use
from sklearn.exceptions import ConvergenceWarning

try:
    from lmu_sk import LMUClassifier, LMUFeatures, LMURegressor
except ImportError:  # run from a source checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from lmu_sk import LMUClassifier, LMUFeatures, LMURegressor

ORDER, THETA, HIDDEN, N_CLASSES = 468, 784, (346,), 10
LATENCY_TARGET = 1.5
ACCURACY_TARGET = 1e-5


def quiet_fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def fitted_model(n_steps: int = 784, seed: int = 0) -> LMUClassifier:
    """The psMNIST-shaped model, fitted for one epoch on 40 random sequences."""
    rng = np.random.default_rng(seed)
    X = rng.random((40, n_steps), dtype=np.float32)
    y = np.arange(40) % N_CLASSES
    model = LMUClassifier(
        head="dense",
        order=ORDER,
        theta=THETA,
        hidden_layer_sizes=HIDDEN,
        max_iter=1,
        random_state=0,
    )
    return quiet_fit(model, X, y)


def bare_step(model: LMUClassifier, n_streams: int):
    """A bare NumPy step of the recurrence and the head on preallocated float32 arrays."""
    A = model.features_.state_matrix_.astype(np.float32)
    B = model.features_.input_matrix_.astype(np.float32)
    mean = model.feature_mean_.astype(np.float32)
    (W1, W2), (b1, b2) = model.head_.coefs_, model.head_.intercepts_
    W1 = (W1 / model.feature_scale_[:, None]).astype(np.float32)  # the scale, folded
    m = np.zeros((n_streams, ORDER), np.float32)
    f = np.empty_like(m)
    h = np.empty((n_streams, W1.shape[1]), np.float32)
    z = np.empty((n_streams, W2.shape[1]), np.float32)
    AT = np.ascontiguousarray(A.T)

    def step(u):
        nonlocal m
        if n_streams == 1:
            m = (A @ m[0] + B * u[0])[None]
        else:
            m = m @ AT + u[:, None] * B
        np.subtract(m, mean, out=f)
        np.matmul(f, W1, out=h)
        np.add(h, b1, out=h)
        np.maximum(h, 0, out=h)
        np.matmul(h, W2, out=z)
        np.add(z, b2, out=z)
        np.subtract(z, z.max(axis=1, keepdims=True), out=z)
        np.exp(z, out=z)
        np.divide(z, z.sum(axis=1, keepdims=True), out=z)
        return z.astype(np.float64)

    return step


def best_seconds_per_step(steps: dict, inputs: np.ndarray, repeats: int, batch: int = 20) -> dict:
    """Best time per step of every function in ``steps``: the least time of a batch of
    ``batch`` consecutive steps (rows of ``inputs``) over ``repeats`` passes through
    ``inputs``. The functions take turns batch by batch, and a batch takes a few
    milliseconds, shorter than the slices a busy shared machine gives out: the least
    time of many batches is each function's uncontended speed."""
    for step in steps.values():
        for u in inputs[:50]:
            step(u)
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(repeats):
        for start in range(0, len(inputs) - batch + 1, batch):
            rows = inputs[start : start + batch]
            for name, step in steps.items():
                begin = time.perf_counter()
                for u in rows:
                    step(u)
                best[name] = min(best[name], (time.perf_counter() - begin) / batch)
    return best


def best_of_alternating(functions: dict, repeats: int) -> dict:
    """Best wall-clock seconds of every function in ``functions``, taking turns."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def verdict(ratio: float, target: float, higher_is_better: bool) -> str:
    met = ratio >= target if higher_is_better else ratio <= target
    return "met" if met else "NOT met"


def speed(args, results: dict) -> None:
    rng = np.random.default_rng(1)
    model = fitted_model()
    print(f"order {ORDER}, theta {THETA}, head {HIDDEN} -> {N_CLASSES}, float32")

    # one stream
    stream = model.stream(1)
    inputs = rng.random((args.steps, 1), dtype=np.float32)
    times = best_seconds_per_step(
        {"bare": bare_step(model, 1), "stream": lambda u: stream.update(u).predict_proba()},
        inputs,
        args.repeats,
    )
    t_bare, t_stream = times["bare"], times["stream"]
    ratio = t_stream / t_bare
    results["latency"] = ratio
    print("one stream, update + predict_proba per step:")
    print(f"  bare NumPy step         {t_bare * 1e6:8.1f} us")
    print(f"  stream                  {t_stream * 1e6:8.1f} us")
    print(
        f"  ratio {ratio:.2f}x the bare step (target <= {LATENCY_TARGET}x): "
        f"{verdict(ratio, LATENCY_TARGET, False)}"
    )

    # 1000 streams
    n_streams = 1000
    stream = model.stream(n_streams)
    steps = max(20, args.steps // 50)
    inputs = rng.random((steps, n_streams), dtype=np.float32)
    times = best_seconds_per_step(
        {
            "bare": bare_step(model, n_streams),
            "stream": lambda u: stream.update(u).predict_proba(),
        },
        inputs,
        args.repeats,
        batch=1,  # a step of 1000 streams takes milliseconds already
    )
    t_bare, t_stream = times["bare"], times["stream"]
    ratio = t_bare / t_stream
    results["throughput"] = ratio
    print(f"{n_streams} streams, update + predict_proba per step:")
    print(f"  bare NumPy batch step   {n_streams / t_bare:12,.0f} stream-steps/s")
    print(f"  stream                  {n_streams / t_stream:12,.0f} stream-steps/s")
    print(f"  throughput {ratio:.2f}x the bare batch step")

    # a chunk of 784 steps against 784 single steps
    chunk = rng.random((1, 784), dtype=np.float32)
    stream = model.stream(1)
    columns = [np.ascontiguousarray(chunk[:, t]) for t in range(784)]

    def single_steps():
        for u in columns:
            stream.update(u)

    def one_chunk():
        stream.update(chunk)

    t_first = _timed(one_chunk)  # builds the tables of 784-step chunks (once per process)
    times = best_of_alternating({"single": single_steps, "chunk": one_chunk}, args.repeats)
    t_single, t_chunk = times["single"], times["chunk"]
    ratio = t_single / t_chunk
    results["chunk"] = ratio
    print("one stream, 784 steps (output 'final'):")
    print(f"  784 single-step updates {t_single * 1e3:8.2f} ms")
    print(f"  one chunk update        {t_chunk * 1e3:8.2f} ms")
    print(f"  (the first chunk of a new length also builds its tables: {t_first * 1e3:.1f} ms)")
    print(f"  chunk {ratio:.1f}x faster than single steps")

    # output 'max' needs every state of the chunk, as many flops as steps
    features = LMUFeatures(order=ORDER, theta=THETA, output="max", dtype="float32").fit(chunk)
    stream = features.stream(1)
    one_chunk()  # builds the block weights
    times = best_of_alternating({"single": single_steps, "chunk": one_chunk}, args.repeats)
    t_single, t_chunk = times["single"], times["chunk"]
    results["chunk_max"] = t_single / t_chunk
    print(
        f"  output 'max' (all states of the chunk): chunk "
        f"{t_single / t_chunk:.1f}x faster than single steps"
    )

    # the default model: pooled features and the ridge head, a chunk against batch
    freq = rng.choice([0.05, 0.08], 700)
    X = series(rng, 700, 300, freq)
    default = LMUClassifier().fit(X[:200], freq[:200] > 0.06)
    test = X[200:]

    def stream_chunk():
        return default.stream(len(test)).update(test).predict()

    stream_chunk()  # compiles what the first chunk needs (once per process)
    times = best_of_alternating(
        {"batch": lambda: default.predict(test), "chunk": stream_chunk}, args.repeats
    )
    ratio = times["chunk"] / times["batch"]
    results["default_chunk"] = ratio
    kind = f"pooled features, ridge head, kernel_={default.head_.kernel_!r}"
    print(f"LMUClassifier() ({kind}), 500 series of 300 steps:")
    print(f"  batch predict           {times['batch'] * 1e3:8.2f} ms")
    print(f"  stream, one chunk       {times['chunk'] * 1e3:8.2f} ms (update + predict)")
    print(f"  the chunk takes {ratio:.2f}x the batch predict")

    # the default model online: one step of one stream against predicting the series so
    # far with the batch model, what a user without a stream repeats at every step
    one = np.ascontiguousarray(test[:1])
    stream = default.stream(1).update(one)
    inputs = rng.standard_normal((max(40, args.steps // 10), 1))
    times = best_seconds_per_step(
        {
            "batch": lambda u: default.predict_proba(one),
            "stream": lambda u: stream.update(u).predict_proba(),
        },
        inputs,
        args.repeats,
    )
    ratio = times["batch"] / times["stream"]
    results["default_step"] = ratio
    print("LMUClassifier(), one stream, update + predict_proba per step:")
    print(f"  batch predict_proba of the 300 steps so far {times['batch'] * 1e6:8.1f} us")
    print(f"  stream                                      {times['stream'] * 1e6:8.1f} us")
    print(f"  the step {ratio:.1f}x faster than predicting the series so far")


def _timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


# ---------------------------------------------------------------------------- accuracy
# (feature output, estimator, head, the outputs compared)
ACCURACY_MODELS = (
    ("final", LMUClassifier, "dense", ("predict_proba",)),
    ("sequence", LMURegressor, "ridge", ("predict",)),
    ("mean", LMURegressor, "dense", ("predict",)),
    ("max", LMUClassifier, "ridge", ("decision_function",)),
    ("pooled", LMUClassifier, "ridge", ("decision_function",)),
    ("pooled", LMURegressor, "dense", ("predict",)),
)


def series(rng, n: int, n_steps: int, freq: np.ndarray) -> np.ndarray:
    """Noisy sines of frequency ``freq`` (per series), float32."""
    t = np.arange(n_steps)
    return (rng.standard_normal((n, n_steps)) + np.sin(t[None, :] * freq[:, None])).astype(
        np.float32
    )


def accuracy_models(dtype: str, rng) -> list:
    """The models of :data:`ACCURACY_MODELS` fitted on 40 series of 1000 steps."""
    n_train, n_steps = 40, 1000
    y_class = np.arange(n_train) % 3
    X = series(rng, n_train, n_steps, (y_class + 1) / 50)
    models = []
    for output, estimator, head, methods in ACCURACY_MODELS:
        params = dict(feature_output=output, head=head, dtype=dtype, random_state=0)
        if output != "pooled":
            params["order"] = 32
        if head == "dense":
            params.update(hidden_layer_sizes=(32,), max_iter=20)
        if estimator is LMUClassifier:
            y = y_class
        elif output == "sequence":
            y = np.roll(X, -5, axis=1)  # forecast 5 steps ahead
        else:
            y = X.mean(axis=1)
        models.append((output, head, methods, quiet_fit(estimator(**params), X, y)))
    return models


def relative_error(got, expected) -> float:
    return float(np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-300))


def accuracy(args, results: dict) -> None:
    n_steps = int(args.accuracy_steps)
    rng = np.random.default_rng(2)
    X = series(rng, 2, n_steps, np.array([1 / 50, 1 / 150]))
    print(
        f"stream == batch after {n_steps:,} single-step updates (2 series), "
        f"max |stream - batch| / max |batch|:"
    )
    header = f"  {'output':9s} {'head':38s} {'dtype':8s} {'features':>10s} {'head output':>12s}"
    print(header)
    worst = {"float32": 0.0, "float64": 0.0}
    for dtype in ("float32", "float64"):
        models = accuracy_models(dtype, rng)
        streams = [model.stream(2) for *_, model in models]
        start = time.perf_counter()
        for t in range(n_steps):
            u = X[:, t]
            for stream in streams:
                stream.update(u)
        took = time.perf_counter() - start
        for (output, head, methods, model), stream in zip(models, streams, strict=True):
            expected = model.features_.transform(X)
            if output == "sequence":
                expected = expected[:, -1]
            feature_error = relative_error(stream.transform(), expected)
            head_error = 0.0
            for method in methods:
                batch = getattr(model, method)(X)
                if output == "sequence":
                    batch = batch[:, -1]
                head_error = max(head_error, relative_error(getattr(stream, method)(), batch))
            worst[dtype] = max(worst[dtype], feature_error, head_error)
            name = f"{head} {type(model).__name__[3:].lower()} ({methods[0]})"
            print(f"  {output:9s} {name:24s} {dtype:8s} {feature_error:10.1e} {head_error:12.1e}")
        print(
            f"  ({len(streams)} streams of 2 series, {took / n_steps / len(streams) * 1e6:.1f} "
            "us per single-step update)"
        )
    results["accuracy_float32"] = worst["float32"]
    results["accuracy_float64"] = worst["float64"]
    print(
        f"  worst float32 {worst['float32']:.1e} (target < {ACCURACY_TARGET:.0e}): "
        f"{verdict(worst['float32'], ACCURACY_TARGET, False)}; worst float64 "
        f"{worst['float64']:.1e}"
    )


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("speed", "accuracy", "all"), default="all")
    parser.add_argument("--steps", type=int, default=2000, help="steps per timed pass")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--accuracy-steps", type=float, default=1e6, help="single-step updates compared"
    )
    args = parser.parse_args(argv)
    print(blas_in_use())
    results: dict = {}
    if args.part in ("speed", "all"):
        speed(args, results)
    if args.part in ("accuracy", "all"):
        accuracy(args, results)
    return results


if __name__ == "__main__":
    main()
