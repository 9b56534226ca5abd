"""``python -m lmu_sk``: the ``lmu-sk`` command under that name; with no command it runs
the package's main job, the demo (``python -m lmu_sk features --help`` for the tool)."""

import sys

from .cli.main import main

sys.exit(main(prog="python -m lmu_sk"))
