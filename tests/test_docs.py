"""The documentation's Python blocks run as written, each page on its own."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("**/*.md"))

# each page's blocks run in order in a namespace of their own: a page that uses a name
# defined on another page fails here
RUNNER = textwrap.dedent(
    """
    import json, sys, traceback
    pages = json.load(open(sys.argv[1]))
    failed = []
    for page, source in pages.items():
        try:
            exec(compile(source, page, "exec"), {"__name__": "__main__"})
        except Exception:
            failed.append(page + ":\\n" + traceback.format_exc()[-2000:])
    print("\\n".join(failed), file=sys.stderr)
    sys.exit(1 if failed else 0)
    """
)


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_docs_have_pages_with_python_blocks():
    assert (DOCS / "conf.py").exists()
    with_code = [page for page in PAGES if python_blocks(page.read_text())]
    assert len(with_code) >= 8, [page.name for page in with_code]


@pytest.mark.slow
def test_docs_blocks_run_page_by_page(tmp_path):
    pytest.importorskip("dask")
    pytest.importorskip("distributed")
    pytest.importorskip("matplotlib")
    pytest.importorskip("skops")
    import json

    pages = {
        str(page.relative_to(ROOT)): "\n\n".join(python_blocks(page.read_text())) for page in PAGES
    }
    pages = {page: source for page, source in pages.items() if source}
    (tmp_path / "pages.json").write_text(json.dumps(pages))
    (tmp_path / "runner.py").write_text(RUNNER)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "MPLBACKEND": "Agg",
    }
    result = subprocess.run(
        [sys.executable, "runner.py", "pages.json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-6000:]
    # the pages' models train to convergence (or stop early) rather than warn
    assert "ConvergenceWarning" not in result.stderr, result.stderr[-6000:]
