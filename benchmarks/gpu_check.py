"""The GPU check: lmu_sk on a real GPU in one command, step by step.

    PYTHONPATH=. python benchmarks/gpu_check.py             # a machine with a CUDA GPU
    PYTHONPATH=. python benchmarks/gpu_check.py --dry-run   # anywhere: CPU, stand-in, simulator
    PYTHONPATH=. python benchmarks/gpu_check.py --steps tests,streams   # some steps again

Needs what the ``gpu-cuda12`` or ``gpu-cuda13`` and ``test`` extras install (CuPy,
numba-cuda, pytest, hypothesis) and nothing else; Dask, PyTorch and JAX are used where
present. The steps run in order, each in its own process under its own time limit, all of
them within ``--budget`` seconds (8 minutes by default), so that a step that hangs or fails
leaves the others' results:

1. ``environment``: GPU, memory, driver, CUDA, CuPy and Numba-CUDA versions.
2. ``tests``: every test marked ``gpu`` (the engine's contract test, the kernels, the
   estimators' GPU paths, their streams, the DLPack hand-off) with ``LMU_SK_TEST_GPU=cupy``:
   on real CuPy and Numba-CUDA, not the stand-in or the simulator. A GPU case skipped
   fails the step.
3. ``benchmarks``: ``benchmarks/bench_gpu.py``, its figures also in ``figures.json``.
4. ``classifier``: the default ``LMUClassifier()`` on the GPU and on the CPU on the same
   data (``random_state=0``), for each head the default picks (ridge on pooled features up
   to 10 000 series, dense on final states above): both times, the test accuracies, and
   the predictions, which must agree on at least 98 % of the test series with accuracies
   within 2 points (float32 features differ by rounding between the routes: threshold
   counts of states within rounding of a threshold flip, and float32 training moves the
   weights a little; only series near a decision boundary can change class).
5. ``streams``: streams on the GPU against the GPU batch, after every update, for every
   output of ``LMUFeatures`` in float32 and float64, ``LMUPooledFeatures`` and a
   classifier's probabilities (tolerances in ``_gpu_check_steps.step_streams``).
6. ``dlpack``: features handed to PyTorch and JAX without a copy (where installed), and a
   linear layer trained on them in PyTorch.

Output: each line as it comes, except the tests that pass (those are in the log); then a
table of the steps. Files, in ``--out``, else ``$OUT``, else a new temporary folder:
``NN_step.log`` per step, written as it runs, ``summary.json`` rewritten after every step,
and ``figures.json`` from the benchmarks (8 files). Exit status 0 when every step passed.

``--dry-run`` runs every step on the CPU at tiny sizes, with the tests' NumPy stand-in for
CuPy and Numba's CUDA simulator (``benchmarks/_gpu.py``); the test suite runs it
(``tests/test_gpu_check.py``), so that the check cannot rot on machines without a GPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _gpu import ROOT, simulator_env


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    seconds: int  # its time limit on an H100
    what: str


STEPS = (
    # Measured on H200s: tests 46-62 s with Numba's and CuPy's compilation caches warm,
    # 150-190 s on a fresh machine (the kernels compile: CPU, CUDA, CuPy's); benchmarks
    # 39-64 s, classifier 10-22 s, streams 5-12 s, dlpack 9-12 s (2026-11-27 to 11-30).
    Step("environment", 20, "GPU, driver, CUDA, CuPy, Numba-CUDA"),
    Step("tests", 280, "the tests marked gpu on real CuPy and Numba-CUDA"),
    Step("benchmarks", 110, "benchmarks/bench_gpu.py"),
    Step("classifier", 35, "default LMUClassifier, GPU against CPU"),
    Step("streams", 15, "GPU streams against the GPU batch"),
    Step("dlpack", 20, "features to PyTorch and JAX without a copy"),
)
BUDGET = 480  # seconds: 8 minutes for the whole check (the steps' limits together)


# =============================================================================== the parent
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="CPU, stand-in, simulator")
    parser.add_argument("--out", type=Path, help="folder of the logs (default: $OUT or temp)")
    parser.add_argument("--budget", type=float, default=BUDGET, help="seconds for all steps")
    parser.add_argument(
        "--steps", default=",".join(s.name for s in STEPS), help="comma-separated steps to run"
    )
    parser.add_argument("--scale", type=float, default=1.0, help="benchmarks' sample counts")
    parser.add_argument("--step", help=argparse.SUPPRESS)  # run one step in this process
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.steps.split(",") if name.strip()]
    unknown = sorted(set(names) - {s.name for s in STEPS})
    if unknown or not names:
        parser.error(f"unknown steps {unknown}; choose from {[s.name for s in STEPS]}")
    out = args.out or Path(os.environ.get("OUT") or tempfile.mkdtemp(prefix="lmu_sk_gpu_check_"))
    out.mkdir(parents=True, exist_ok=True)
    if args.step:
        import _gpu_check_steps

        return _gpu_check_steps.STEPS[args.step](args.dry_run, out, args.scale)

    mode = "dry run: CPU, NumPy stand-in, CUDA simulator" if args.dry_run else "real GPU"
    print(f"lmu_sk GPU check ({mode}); logs in {out}", flush=True)
    deadline = time.monotonic() + args.budget
    summary = []
    for index, step in enumerate(STEPS, 1):
        if step.name not in names:
            continue
        log = out / f"{index:02d}_{step.name}.log"
        left = deadline - time.monotonic()
        print(f"\n=== {index}. {step.name}: {step.what} (limit {min(step.seconds, left):.0f} s)")
        command = [sys.executable, str(Path(__file__).resolve()), "--step", step.name]
        command += ["--out", str(out), "--scale", str(args.scale)]
        command += ["--dry-run"] if args.dry_run else []
        if left < 5:
            status, seconds = "NOT RUN (budget spent)", 0.0
        else:
            status, seconds = run_step(command, simulator_env(args.dry_run), left, step, log)
        print(f"=== {index}. {step.name}: {status} in {seconds:.1f} s", flush=True)
        summary.append({"step": step.name, "status": status, "seconds": round(seconds, 1)})
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print("\n== GPU check ==")
    for row in summary:
        print(f"{row['step']:<12} {row['status']:<28} {row['seconds']:7.1f} s")
    failed = [row["step"] for row in summary if row["status"] != "ok"]
    print(f"{'FAILED: ' + ', '.join(failed) if failed else 'all steps passed'}; logs in {out}")
    return 1 if failed else 0


def run_step(command: list[str], env: dict, left: float, step: Step, log: Path):
    """Run ``command`` in a new process group under the step's limit (at most ``left``
    seconds), its output echoed and written to ``log`` line by line, the tests that pass
    only to the log; ``(status, seconds)``."""
    limit = min(step.seconds, left)
    env = dict(env, PYTHONUNBUFFERED="1")
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as sink:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,  # its own process group: a timeout ends its children
        )

        def copy_lines():
            assert process.stdout is not None
            for line in process.stdout:
                sink.write(line)
                sink.flush()
                if " PASSED" not in line:
                    print(f"  {line}", end="", flush=True)

        reader = threading.Thread(target=copy_lines, daemon=True)
        reader.start()
        try:
            code = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = None
        reader.join(timeout=10)
        seconds = time.monotonic() - start
        if code is None:
            sink.write(f"\n*** stopped: over its limit of {limit:.0f} s\n")
            return f"TIMEOUT after {limit:.0f} s", seconds
    return ("ok" if code == 0 else f"FAILED (exit {code})"), seconds


if __name__ == "__main__":
    sys.exit(main())
