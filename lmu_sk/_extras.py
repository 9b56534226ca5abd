"""How to install an optional extra, as lmu_sk's messages and documentation say it.

lmu_sk is installed from a checkout of its repository: it is not on a package index, so
the package-name form of an extra finds nothing (it will work once it is published).
``pip install ".[dask]"`` in the checkout works, and so does installing the extra's
packages by name, anywhere.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "install_hint"]

#: The packages of each optional extra that a message may name (as in pyproject.toml's
#: ``[project.optional-dependencies]``, without the version bounds).
EXTRAS = {
    "dask": ("dask[array]", "distributed", "zarr"),
    "aeon": ("aeon",),
    "plot": ("matplotlib",),
    "gpu-cuda12": ("cupy-cuda12x", "numba-cuda[cu12]"),
    "gpu-cuda13": ("cupy-cuda13x", "numba-cuda[cu13]"),
}


def install_hint(extra: str) -> str:
    """``pip install ".[extra]"`` in a checkout, or the extra's packages by name."""
    packages = " ".join(f'"{name}"' if "[" in name else name for name in EXTRAS[extra])
    return f'pip install ".[{extra}]" (in a checkout of lmu_sk) or pip install {packages}'
