"""The GPU check (``benchmarks/gpu_check.py``): its dry run passes every step, and a step
over its time limit is stopped while the others go on.

The dry run is the check itself, every step in its own process, on the CPU at tiny sizes
with the NumPy stand-in for CuPy and Numba's CUDA simulator, so that the check a GPU
machine runs as it is cannot rot where no GPU is.
"""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "benchmarks"
STEPS = ["environment", "tests", "benchmarks", "classifier", "streams", "dlpack"]
# the benchmarks' figures named in the GPU issue, each with what it is set against
FIGURES = (
    "psMNIST final states, host in/out, warm",
    "psMNIST final states, device in/out: speed vs SGEMM",
    "all states (8 x 24, order 6): share of the memory bandwidth",
    "dense head epoch, psMNIST shape: GPU speed vs CPU",
    "dense head epoch, psMNIST shape: share of the FP32 rate",
    "50 streams, order 12: one step",
)


@pytest.fixture(scope="module")
def gpu_check():
    sys.path.insert(0, str(FOLDER))  # it imports _gpu from its folder
    try:
        spec = importlib.util.spec_from_file_location("gpu_check", FOLDER / "gpu_check.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["gpu_check"] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(FOLDER))
    yield module
    sys.modules.pop("gpu_check", None)


@pytest.mark.slow  # a minute: six fresh interpreters; CI runs it with the slow tests
def test_dry_run_passes_every_step(tmp_path):
    command = [sys.executable, str(FOLDER / "gpu_check.py"), "--dry-run", "--out", str(tmp_path)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    report = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [row["step"] for row in summary] == STEPS, report
    assert all(row["status"] == "ok" for row in summary), summary
    assert "all steps passed" in result.stdout
    # what a device call brings back: at most 8 files, each step's log among them
    files = sorted(path.name for path in tmp_path.iterdir())
    assert len(files) <= 8 and all(path.is_file() for path in tmp_path.iterdir())
    assert [f"{i:02d}_{name}.log" for i, name in enumerate(STEPS, 1)] == files[:6]
    figures = json.loads((tmp_path / "figures.json").read_text())
    for name in FIGURES:
        assert figures[name]["value"] > 0 and figures[name]["against"], name
    assert any(name.startswith("LMUClassifier(") for name in figures)
    # the profiles of the all-states call and of the GPU fit, each in a process of its own
    assert (tmp_path / "03_benchmarks.log").read_text().count("by own time: calls") == 2
    tests_log = (tmp_path / "02_tests.log").read_text()
    assert "cudasim-final-equal-float32] PASSED" in tests_log  # in the simulator
    counts = re.search(r"=+ (\d+) passed(.*) in [\d.]+s =+", tests_log)
    assert counts is not None and int(counts.group(1)) >= 3, tests_log[-2000:]
    assert "failed" not in counts.group(2) and "error" not in counts.group(2), counts.group(0)


def test_a_step_over_its_limit_is_stopped_and_logged(gpu_check, tmp_path):
    step = gpu_check.Step("sleeper", 2, "prints, then sleeps")
    code = "print('started', flush=True); import time; time.sleep(60)"
    log = tmp_path / "sleeper.log"
    status, seconds = gpu_check.run_step([sys.executable, "-c", code], {}, 60, step, log)
    assert status == "TIMEOUT after 2 s" and 2 <= seconds < 30
    assert log.read_text().startswith("started\n")
    assert "over its limit of 2 s" in log.read_text()


def test_a_failing_step_reports_its_exit_status(gpu_check, tmp_path):
    step = gpu_check.Step("failing", 30, "exits 3")
    code = "import sys; print('x PASSED'); print('FAIL: reason'); sys.exit(3)"
    log = tmp_path / "failing.log"
    status, _ = gpu_check.run_step([sys.executable, "-c", code], {}, 1, step, log)
    assert status == "FAILED (exit 3)"  # the smaller of its limit and the budget left: 1 s
    assert log.read_text() == "x PASSED\nFAIL: reason\n"
