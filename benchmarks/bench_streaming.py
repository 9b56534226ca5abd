"""Streaming inference against a bare NumPy recurrence measured in the same run.

The model is the papers' psMNIST shape: order 468, theta 784, one hidden layer of 346
ReLU units and 10 softmax outputs, float32. Its weights come from a short fit on a few
random sequences: the timings do not depend on the values.

* One stream, one step: ``stream.update(u)`` then ``stream.predict_proba()``, against a
  bare NumPy step ``m = A @ m + B * u`` followed by the head's matrix products
  (standardization, ReLU layer, softmax) on preallocated float32 arrays. Target: the
  stream takes at most 2x the bare step.
* 1000 streams, one step: the same in batch (``M @ A.T + u[:, None] * B`` and the head on
  1000 rows). Target: the stream's throughput is at least 0.8x the bare batch step's.
* A chunk of 784 steps in one ``update`` against 784 single-step updates (one stream,
  output 'final'). Target: at least 10x faster. The first chunk of a new length also
  builds the impulse-response and matrix-power tables (float64, once per process); that
  one-time cost is printed separately. For reference, the same comparison for output
  'max', whose chunks need every state (the flops of single steps, in blocked GEMMs).

Every timing is the best of ``--repeats`` runs (of ``--steps`` steps) after a warm-up, the
stream and its baseline taking turns run by run: on a shared machine a slowdown then hits
both alike.

Run::

    python benchmarks/bench_streaming.py [--steps 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

try:
    from lmu_sk import LMUClassifier, LMUFeatures
except ImportError:  # run from a source checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from lmu_sk import LMUClassifier, LMUFeatures

ORDER, THETA, HIDDEN, N_CLASSES = 468, 784, (346,), 10


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def bare_step(model: LMUClassifier, n_streams: int):
    """A bare NumPy step of the recurrence and the head on preallocated float32 arrays."""
    A = model.features_.state_matrix_.astype(np.float32)
    B = model.features_.input_matrix_.astype(np.float32)
    mean = model.feature_mean_.astype(np.float32)
    inv_scale = (1.0 / model.feature_scale_).astype(np.float32)
    (W1, W2), (b1, b2) = model.coefs_, model.intercepts_
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
        np.multiply(f, inv_scale, out=f)
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


def best_seconds_per_step(steps: dict, inputs: np.ndarray, repeats: int) -> dict:
    """Best time per step of every function in ``steps`` over ``repeats`` passes through
    ``inputs`` (one step per row). The functions take turns pass by pass, so that a
    slowdown of the shared machine hits them alike."""
    for step in steps.values():
        for u in inputs[:50]:
            step(u)
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            for u in inputs:
                step(u)
            best[name] = min(best[name], (time.perf_counter() - start) / len(inputs))
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


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000, help="steps per timed pass")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    model = fitted_model()
    print(f"order {ORDER}, theta {THETA}, head {HIDDEN} -> {N_CLASSES}, float32")
    results = {}

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
    print(f"  ratio {ratio:.2f}x the bare step (target <= 2x): {verdict(ratio, 2.0, False)}")

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
    )
    t_bare, t_stream = times["bare"], times["stream"]
    ratio = t_bare / t_stream
    results["throughput"] = ratio
    print(f"{n_streams} streams, update + predict_proba per step:")
    print(f"  bare NumPy batch step   {n_streams / t_bare:12,.0f} stream-steps/s")
    print(f"  stream                  {n_streams / t_stream:12,.0f} stream-steps/s")
    print(
        f"  throughput {ratio:.2f}x the bare batch step (target >= 0.8x): "
        f"{verdict(ratio, 0.8, True)}"
    )

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
    print(f"  chunk {ratio:.1f}x faster (target >= 10x): {verdict(ratio, 10.0, True)}")

    # for reference: output 'max' needs every state of the chunk, as many flops as steps
    features = LMUFeatures(order=ORDER, theta=THETA, output="max", dtype="float32").fit(chunk)
    stream = features.stream(1)
    one_chunk()  # builds the block weights
    times = best_of_alternating({"single": single_steps, "chunk": one_chunk}, args.repeats)
    t_single, t_chunk = times["single"], times["chunk"]
    results["chunk_max"] = t_single / t_chunk
    print(
        f"  output 'max' (all states of the chunk, no target): chunk "
        f"{t_single / t_chunk:.1f}x faster than single steps"
    )
    return results


def _timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
