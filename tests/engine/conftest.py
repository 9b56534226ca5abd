"""Fixtures of the engine's tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def in_cuda_simulator():
    """``run(test_file) -> (stdout, report)``: the ``cudasim`` tests of ``test_file`` run in
    a fresh interpreter with Numba's CUDA simulator on (it must be on before ``numba.cuda``
    is first imported), asserted to exit 0; skipped without numba-cuda or when this
    process already runs in the simulator."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        pytest.skip("the simulator is on in this process: the cudasim cases run here")
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed")

    def run(test_file: str) -> tuple[str, str]:
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        command = [sys.executable, "-m", "pytest", test_file, "-q", "-k", "cudasim"]
        command += ["-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning"]
        result = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        report = result.stdout[-4000:] + result.stderr[-2000:]
        assert result.returncode == 0, report
        return result.stdout, report

    return run
