"""The package's loggers: ``logging.getLogger('lmu_sk.<module>')``, silent by default.

They report what is neither an error nor progress (the route ``method='auto'`` picked, the
chunks ``max_memory`` allows, the device) at DEBUG level. As a library convention only a
``NullHandler`` is attached, to the package logger; show the messages with e.g.
``logging.basicConfig(level=logging.DEBUG)`` or
``logging.getLogger('lmu_sk').setLevel(logging.DEBUG)`` plus a handler.
"""

from __future__ import annotations

import logging

__all__ = ["get_logger"]

_PACKAGE = logging.getLogger("lmu_sk")
if not any(isinstance(handler, logging.NullHandler) for handler in _PACKAGE.handlers):
    _PACKAGE.addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger of module ``name`` (``__name__``), under the package logger."""
    return logging.getLogger(name)
