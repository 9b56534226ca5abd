"""The README's Python blocks run as written, in order, in a fresh interpreter; those that
do not say they need an extra run without any (after the README's first command)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_has_python_blocks():
    assert len(python_blocks(README.read_text())) >= 1  # the tour; the rest is in docs/


def test_readme_blocks_run_in_order(tmp_path):
    pytest.importorskip("dask")
    source = "\n\n".join(python_blocks(README.read_text()))
    script = tmp_path / "readme_blocks.py"
    script.write_text(source)
    root = str(README.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]


# Makes the optional libraries unimportable, as after `pip install .` alone.
WITHOUT_EXTRAS = (
    "import sys\n"
    "for name in ('dask', 'distributed', 'zarr', 'matplotlib', 'aeon', 'skops', 'cupy'):\n"
    "    sys.modules[name] = None\n"
)


def test_the_tour_runs_after_the_first_command_alone(tmp_path):
    """The tour failed at `import dask` after `pip install . && python -m lmu_sk`, which
    installs no extra. Blocks that need one start with a comment saying which
    (`pip install ".[...]"`); the others run without any optional library."""
    blocks = python_blocks(README.read_text())
    core = [block for block in blocks if 'pip install ".[' not in block.splitlines()[0]]
    assert len(core) >= 1 and any("LMUClassifier" in block for block in core)
    assert all("import dask" not in block for block in core)
    script = tmp_path / "tour.py"
    script.write_text(WITHOUT_EXTRAS + "\n\n".join(core))
    root = str(README.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
