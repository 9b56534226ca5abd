"""``--help`` prints usage and exits without running anything, everywhere.

Every script and module is run as ``__main__`` with ``--help`` in one fresh interpreter
(one after the other, each with its own ``sys.argv``, ``sys.path[0]`` and captured output),
so that the imports they share are paid once rather than once per script.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(ROOT.glob("examples/*.py")) + sorted(ROOT.glob("benchmarks/bench_*.py"))
MODULES = ["lmu_sk", "lmu_sk.cli"]

# Runs each target (a module name, or the path of a script) as ``__main__`` with --help, and
# prints, as JSON, its exit status and what it wrote to stdout and stderr.
RUNNER = """
import contextlib, io, json, runpy, sys, traceback

results = {}
path = list(sys.path)
for kind, target in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    status = 0
    sys.path[:] = path
    sys.argv = [target, "--help"]
    if kind == "script":
        sys.path.insert(0, target.rsplit("/", 1)[0])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if kind == "module":
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(target, run_name="__main__")
        except SystemExit as exit:
            code = exit.code
            status = code if isinstance(code, int) else (0 if code is None else 1)
        except BaseException:
            traceback.print_exc()
            status = 1
    results[target] = {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def helps():
    """What each script and module does with ``--help``: exit status, stdout, stderr."""
    targets = [("module", name) for name in MODULES]
    targets += [("script", str(script)) for script in SCRIPTS]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(targets)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize("module", MODULES)
def test_module_help(helps, module):
    result = helps[module]
    assert result["status"] == 0, result["stderr"]
    assert result["stdout"].startswith("usage:")
    assert "permuted-pixel digits:" not in result["stdout"]  # the demo did not run


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_script_help(helps, script):
    result = helps[str(script)]
    assert result["status"] == 0, result["stderr"]
    assert result["stdout"].startswith("usage:")
