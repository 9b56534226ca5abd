"""Sphinx configuration of lmu_sk's documentation.

Build it from the repository root (offline; a few minutes on two cores the first time)::

    pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html

The API reference is generated from the public names: each module listed in
``PUBLIC_MODULES`` contributes the names of its ``__all__``. The gallery's figures and
printed results come from the example scripts themselves, run at build time on small
settings.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from importlib import import_module
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
GENERATED = DOCS / "_generated"
sys.path.insert(0, str(ROOT))  # document the source tree beside this folder
os.environ.setdefault("MPLBACKEND", "Agg")

import lmu_sk  # noqa: E402

# -- project -------------------------------------------------------------------------------
project = "lmu_sk"
author = "The lmu_sk developers"
copyright = "2026, The lmu_sk developers"
release = lmu_sk.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_templates"]
templates_path = ["_templates"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_typehints = "none"  # the numpydoc sections give the types
autodoc_member_order = "groupwise"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "furo"
html_title = f"lmu_sk {release}"
html_static_path: list[str] = []

# -- the API reference: public names only ---------------------------------------------------
#: The modules whose ``__all__`` is the public API (``lmu_sk`` itself first). A module that
#: does not import (e.g. an optional dependency missing) is left out of the reference.
PUBLIC_MODULES = (
    ("lmu_sk", "Estimators, transformers and functions"),
    ("lmu_sk.ridge", "Ridge heads"),
    ("lmu_sk.streaming", "Streams (what the estimators' stream() methods return)"),
    ("lmu_sk.aeon", "aeon estimators"),
    ("lmu_sk.datasets", "Data sets"),
    ("lmu_sk.demo", "Demonstration data"),
    ("lmu_sk.plotting", "Figures"),
)


def _defined_in(module) -> list[str]:
    """A module without ``__all__``: its own classes and functions (not its ``main``)."""
    return [
        name
        for name, obj in vars(module).items()
        if getattr(obj, "__module__", None) == module.__name__
        and isinstance(obj, type | type(_write_api_page))
        and name != "main"
    ]


def _write_api_page() -> None:
    lines = [
        "API reference",
        "=============",
        "",
        "Every public name, by module. Import them from the module they are listed under,",
        "e.g. ``from lmu_sk import LMUClassifier``; other modules are internal and may change.",
        "Methods the estimators inherit from scikit-learn (``get_params``, ``set_params``,",
        "``score``, ...) and aeon are documented by those libraries.",
        "",
    ]
    seen: set[int] = set()
    documented: set[str] = set()
    for name, title in PUBLIC_MODULES:
        try:
            module = import_module(name)
        except ImportError:
            continue
        names = [n for n in getattr(module, "__all__", _defined_in(module)) if n[0] != "_"]
        # classes and functions; constants are described where they are used
        names = [n for n in names if callable(getattr(module, n))]
        # a name re-exported by lmu_sk is documented once, where users import it from
        names = [n for n in names if id(getattr(module, n)) not in seen]
        seen.update(id(getattr(module, n)) for n in names)
        if not names:
            continue
        lines += [f"``{name}``: {title}", "-" * (len(name) + 6 + len(title)), ""]
        lines += [f".. automodule:: {name}", "   :no-members:", "   :no-index:", ""]
        lines += [f".. currentmodule:: {name}", "", ".. autosummary::", "   :toctree: api", ""]
        lines += [f"   {n}" for n in sorted(names, key=str.lower)] + [""]
        documented.update(f"{name}.{n}" for n in names)
    GENERATED.mkdir(exist_ok=True)
    # autosummary writes a page per name into _generated/api: drop the pages of names
    # no longer public (a stale page is a warning)
    for stub in (GENERATED / "api").glob("*.rst"):
        if stub.stem not in documented:
            stub.unlink()
    page = GENERATED / "api.rst"
    text = "\n".join(lines)
    if not page.exists() or page.read_text() != text:  # unchanged: no rebuild of the page
        page.write_text(text)


_write_api_page()

# -- the gallery's figures --------------------------------------------------------------------
#: Example script, its arguments for a quick run (``--out`` is added where it draws
#: figures; paths relative to the repository's root, where the scripts run), the figures
#: it writes and the file that receives what it prints (shown on its gallery page).
GALLERY_RUNS = (
    (
        "figures.py",
        [],
        ["legendre_basis.png", "delay_decoding.png", "learning_curve.png"],
        None,
    ),
    (
        "streaming.py",
        ["--epochs", "30", "--prefixes", "3"],
        ["streaming_digits.png"],
        "streaming.txt",
    ),
    (
        "early_classification.py",
        # TEASER's run (minutes, and independent of lmu_sk) as stored beside its page
        ["--teaser-run", "docs/gallery/teaser_gunpoint.json"],
        ["early_classification.png"],
        "early_classification.txt",
    ),
    (
        "mackey_glass.py",
        ["--sequences", "16", "--length", "2000", "--epochs", "30"],
        ["mackey_glass.png"],
        "mackey_glass.txt",
    ),
    ("grid_search.py", [], [], "grid_search.txt"),
    ("aeon_benchmark.py", ["--resamples", "1"], [], "aeon_benchmark.txt"),
)


def _draw_gallery_figures(app) -> None:
    """Run the example scripts that draw figures or print results (side by side), unless
    their outputs are current."""
    out = GENERATED / "gallery"
    out.mkdir(parents=True, exist_ok=True)
    newest_source = max(
        p.stat().st_mtime
        for p in [*(ROOT / "examples").glob("*.py"), *ROOT.glob("lmu_sk/**/*.py")]
    )
    runs = []
    for script, args, figures, log in GALLERY_RUNS:
        paths = [out / f for f in [*figures, *([log] if log else [])]]
        if all(p.exists() and p.stat().st_mtime > newest_source for p in paths):
            continue
        for path in paths:  # a failed run must not leave the previous outputs in place
            path.unlink(missing_ok=True)
        command = [sys.executable, str(ROOT / "examples" / script), *args]
        if figures:
            command += ["--out", str(out)]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            # the quick settings stop before convergence on purpose: no warnings in the logs
            "PYTHONWARNINGS": "ignore",
        }
        runs.append(
            (
                script,
                paths,
                out / log if log else None,
                subprocess.Popen(
                    command,
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                ),
            )
        )
    start = time.perf_counter()
    for script, paths, log, process in runs:
        output, _ = process.communicate()
        if log is not None and not process.returncode:
            log.write_text(_printed(output, out))
        missing = [p.name for p in paths if not p.exists()]
        if process.returncode or missing:
            raise RuntimeError(f"examples/{script} failed drawing {missing}:\n{output[-3000:]}")
    if runs:
        names = ", ".join(script for script, _, _, _ in runs)
        print(f"gallery: ran {names} in {time.perf_counter() - start:.0f} s")


def _printed(output: str, out: Path) -> str:
    """What a script printed, as its gallery page shows it: the output folder written as
    the script's default."""
    return output.replace(str(out), "figures")


def _skip_foreign_members(app, what, name, obj, skip, options) -> bool | None:
    """Document the members lmu_sk defines (its private bases' included), not those that
    its classes inherit from scikit-learn, aeon or Python (documented there)."""
    if what in ("class", "exception"):
        module = getattr(getattr(obj, "fget", obj), "__module__", None) or ""
        if not module.startswith("lmu_sk"):
            return True
    return None


def setup(app) -> None:
    app.connect("builder-inited", _draw_gallery_figures)
    app.connect("autodoc-skip-member", _skip_foreign_members)
