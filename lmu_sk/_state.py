"""An estimator's fitted state kept where a call that would change it raises."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["state_kept_on_error"]


@contextlib.contextmanager
def state_kept_on_error(estimator: Any) -> Iterator[None]:
    """Restore ``estimator``'s attributes as they were before the block where it raises.

    A refused or failed fit must not leave new attributes (``classes_``,
    ``n_features_in_``, features) in front of an old model: the old model's outputs under
    new labels, silently, or every prediction refused. The attributes are restored as
    objects (a shallow copy of ``__dict__``): one changed in place stays changed.
    """
    saved = dict(estimator.__dict__)
    try:
        yield
    except Exception:
        estimator.__dict__.clear()
        estimator.__dict__.update(saved)
        raise
