"""``python -m lmu_sk``: run the demo (``python -m lmu_sk.cli --help`` for the tool)."""

import sys

from .demo import main

sys.exit(main())
