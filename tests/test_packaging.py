"""The package's metadata: GPU extras of one CUDA version each, one version, the GPU help."""

import importlib.metadata
import re
from pathlib import Path

import pytest

import lmu_sk

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"


@pytest.fixture(scope="module")
def project() -> dict:
    return tomllib.loads(PYPROJECT.read_text())["project"]


def _cuda_extras(project: dict) -> dict[str, list[str]]:
    extras = project["optional-dependencies"]
    return {name: reqs for name, reqs in extras.items() if re.fullmatch(r"gpu-cuda\d+", name)}


def test_each_gpu_extra_pairs_cupy_and_numba_cuda_of_one_cuda_version(project):
    extras = _cuda_extras(project)
    assert set(extras) >= {"gpu-cuda12", "gpu-cuda13"}
    for name, requirements in extras.items():
        major = name.removeprefix("gpu-cuda")
        cupy = [r for r in requirements if r.startswith("cupy")]
        numba_cuda = [r for r in requirements if r.startswith("numba-cuda")]
        # CuPy's wheel of that CUDA major, and numba-cuda with the extra that pins its CUDA
        # bindings to the same major (plain numba-cuda takes the newest bindings)
        assert len(cupy) == 1 and cupy[0].startswith(f"cupy-cuda{major}x"), requirements
        assert len(numba_cuda) == 1 and numba_cuda[0].startswith(f"numba-cuda[cu{major}]")


def test_gpu_extra_is_an_alias_of_a_cuda_extra(project):
    (alias,) = project["optional-dependencies"]["gpu"]
    match = re.fullmatch(r"lmu_sk\[(gpu-cuda\d+)\]", alias)
    assert match and match.group(1) in _cuda_extras(project)


def test_no_gpu_error_names_every_cuda_extra(project, monkeypatch):
    from lmu_sk import _device

    monkeypatch.setattr(_device, "_import_cupy_with_gpu", lambda: (None, "no CUDA device"))
    with pytest.raises(ValueError) as error:
        _device.get_array_module("gpu")
    message = str(error.value)
    for name in _cuda_extras(project):
        assert f'pip install ".[{name}]" (in a checkout of lmu_sk)' in message
    assert "device='cpu'" in message and "no CUDA device" in message


def test_install_hints_name_the_extras_packages(project):
    """The packages the messages name are those of pyproject.toml's extras."""
    from lmu_sk._extras import EXTRAS

    extras = project["optional-dependencies"]
    for name, packages in EXTRAS.items():
        declared = {re.split(r"[<>=!~ ]", requirement)[0] for requirement in extras[name]}
        assert set(packages) == declared, name


# The advice `pip install "lmu_sk[dask]"` fails: lmu_sk is not on a package index. The
# form that works from a checkout, `pip install ".[dask]"`, is given everywhere instead; the
# package name form appears only where it is stated as the form for once it is published.
ADVICE = re.compile(r"lmu_sk\[[\w-]+\]")


def test_no_install_advice_names_an_unpublished_package():
    sources = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    sources += [*(ROOT / "lmu_sk").rglob("*.py"), *(ROOT / "examples").glob("*.py")]
    sources += [*(ROOT / "benchmarks").glob("*.py")]
    found = []
    for path in sources:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if ADVICE.search(line) and "once it is published" not in line:
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
    # and what the command line says
    from lmu_sk.cli import build_parser

    features = build_parser()._subparsers._group_actions[0].choices["features"]
    assert not ADVICE.search(features.format_help())
    assert '".[dask]"' in features.format_help()


def test_version_is_written_once(project):
    assert "version" not in project and "version" in project["dynamic"]
    setuptools = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]
    assert setuptools["dynamic"]["version"] == {"attr": "lmu_sk._version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?\w+)?", lmu_sk.__version__)
    # the installed metadata, built from the same attribute
    assert importlib.metadata.version("lmu_sk") == lmu_sk.__version__


def test_license_is_an_spdx_expression(project):
    assert project["license"] == "MIT"
    assert not any(c.startswith("License ::") for c in project["classifiers"])
