"""The README's Python blocks run as written, in order, in a fresh interpreter."""

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
