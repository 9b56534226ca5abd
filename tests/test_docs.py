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


def _conf_value(name: str):
    """The literal value assigned to ``name`` in docs/conf.py (read, not run: running it
    writes the API pages)."""
    import ast

    tree = ast.parse((DOCS / "conf.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"docs/conf.py assigns no {name}")


def test_the_streams_that_stream_returns_have_api_pages():
    """ClassifierStream, RegressorStream, DNStream and PooledStream (what ``stream()``
    returns) had no API page: the reference documents the public names of the modules in
    PUBLIC_MODULES, and each class a public estimator's ``stream()`` returns is one."""
    import importlib

    import numpy as np

    from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor

    documented = set()
    for module_name, _ in _conf_value("PUBLIC_MODULES"):
        module = importlib.import_module(module_name)
        documented |= {
            f"{module_name}.{name}"
            for name in getattr(module, "__all__", ())
            if callable(getattr(module, name))
        }
    X = np.random.default_rng(0).standard_normal((20, 12))
    y = np.arange(20) % 2
    for fitted in (
        LMUFeatures(order=3).fit(X),
        LMUPooledFeatures(order=2, thetas=[4, 12]).fit(X),
        LMUClassifier(order=2, theta=[4, 12]).fit(X, y),
        LMURegressor(order=2, theta=[4, 12]).fit(X, y.astype(float)),
    ):
        stream = type(fitted.stream())
        assert f"{stream.__module__}.{stream.__name__}" in documented, stream.__name__


def test_every_gallery_page_shows_what_its_script_gives():
    """4 of the 6 gallery pages showed code without its output or figure. Each shows a
    figure or printed output, drawn or printed at build time by a run that conf.py's
    GALLERY_RUNS makes (or, for psMNIST, which needs a download, a run's recorded output)."""
    generated = set()
    for _, _, figures, log in _conf_value("GALLERY_RUNS"):
        generated |= set(figures) | ({log} if log else set())
    pages = [page for page in (DOCS / "gallery").glob("*.md") if page.stem != "index"]
    assert len(pages) >= 6
    for page in pages:
        text = page.read_text()
        shown = re.findall(r"/_generated/gallery/([\w.]+)", text)
        assert all(name in generated for name in shown), (page.name, shown)
        recorded = "```text" in text
        assert shown or recorded, f"{page.name} shows neither a figure nor an output"
        assert f"examples/{page.stem}.py" in text or page.stem == "figures", page.name
