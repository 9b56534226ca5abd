"""``python -m lmu_sk.cli``: the ``lmu-sk`` command."""

import sys

from .main import main

sys.exit(main())
