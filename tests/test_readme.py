"""The README's Python blocks run as written, in order, in a fresh interpreter; those that
do not say they need an extra run without any (after the README's first command)."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_has_python_blocks():
    assert len(python_blocks(README.read_text())) >= 1  # the tour; the rest is in docs/


EXTRAS = ("dask", "distributed", "zarr", "matplotlib", "aeon", "skops", "cupy")
# Makes the optional libraries unimportable, as after `pip install .` alone ...
WITHOUT_EXTRAS = f"import sys\nfor name in {EXTRAS!r}:\n    sys.modules[name] = None\n"
# ... and importable again (those installed), as after `pip install ".[...]"`.
WITH_EXTRAS = f"for name in {EXTRAS!r}:\n    del sys.modules[name]\n"


def test_the_tour_runs_after_the_first_command_alone_then_with_the_extras(tmp_path):
    """The tour failed at `import dask` after `pip install . && python -m lmu_sk`, which
    installs no extra. Blocks that need one start with a comment saying which
    (`pip install ".[...]"`); the others run without any optional library. Then, in the
    same interpreter (one model fit for both checks), the extras come back and the blocks
    that need them run after the others, as a reader runs them in order."""
    blocks = python_blocks(README.read_text())
    needs_extra = ['pip install ".[' in block.splitlines()[0] for block in blocks]
    core = [block for block, extra in zip(blocks, needs_extra, strict=True) if not extra]
    extras = [block for block, extra in zip(blocks, needs_extra, strict=True) if extra]
    assert len(core) >= 1 and any("LMUClassifier" in block for block in core)
    assert all("import dask" not in block for block in core)
    # the blocks that need an extra come after the others: running them last is in order
    assert needs_extra == sorted(needs_extra)
    if importlib.util.find_spec("dask") is None:  # the test extra installs it
        extras = []
    script = tmp_path / "tour.py"
    script.write_text(
        WITHOUT_EXTRAS + "\n\n".join(core) + "\n\n" + WITH_EXTRAS + "\n\n".join(extras)
    )
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
