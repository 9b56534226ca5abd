"""Print pip constraints pinning every direct dependency to its declared lower bound.

``--requirement NAME EXTRA...`` prints instead NAME's requirement as declared.

Reads ``[project] dependencies`` and the given extras of ``pyproject.toml``; a requirement
``name[extra]>=X,<Y`` becomes ``name==X``. Used by ``.ci/run`` to test the lowest versions
the package claims to support.
"""

import re
import sys
from pathlib import Path

import tomllib


def lower_bounds(pyproject: Path, extras: list[str]) -> dict[str, str]:
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    pins = {}
    for requirement in requirements:
        match = re.match(r"^\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)$", requirement)
        name, spec = match.group(1), match.group(3)
        lower = re.search(r">=\s*([0-9][^,;\s]*)", spec)
        if lower:
            pins[name.lower()] = lower.group(1)
    return pins


def requirement(pyproject: Path, name: str, extras: list[str]) -> str:
    """The requirement string of ``name`` as declared (e.g. ``ruff>=0.17,<0.18``)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    for line in requirements:
        if re.match(rf"^\s*{re.escape(name)}\b", line, flags=re.I):
            return line
    raise SystemExit(f"{name} is not declared in {extras}")


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    args = sys.argv[1:]
    if args[:1] == ["--requirement"]:
        print(requirement(root / "pyproject.toml", args[1], args[2:]))
    else:
        for name, version in sorted(lower_bounds(root / "pyproject.toml", args).items()):
            print(f"{name}=={version}")
