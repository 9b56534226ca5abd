"""The ``lmu-sk`` command line.

:mod:`~lmu_sk.cli.main` parses the arguments and runs the local ``.npy`` path,
:mod:`~lmu_sk.cli.dask_runner` the Zarr, shard-folder and ``--scheduler`` paths; both share
:mod:`~lmu_sk.cli.common` and write through :mod:`~lmu_sk.cli.output_file`.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
