"""``--help`` prints usage and exits without running anything, everywhere."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(ROOT.glob("examples/*.py")) + sorted(ROOT.glob("benchmarks/bench_*.py"))


def _help(args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args, "--help"], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize("args", [["-m", "lmu_sk"], ["-m", "lmu_sk.cli"]], ids=str)
def test_module_help(args):
    result = _help(args)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:")
    assert "permuted-pixel digits:" not in result.stdout  # the demo did not run


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_script_help(script):
    result = _help([str(script)])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:")
