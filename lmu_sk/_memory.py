"""Memory estimates and budgets, checked before anything large is allocated."""

from __future__ import annotations

import math
import os

__all__ = ["MemoryBudgetError", "available_memory", "check_fits", "format_bytes", "resolve_budget"]


class MemoryBudgetError(ValueError):
    """Raised when a request would need more memory than the budget allows."""


def format_bytes(n_bytes: float) -> str:
    """Return ``n_bytes`` as a short human-readable string (``'1.5 GB'``)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n_bytes) < 1000 or unit == "TB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1000
    raise AssertionError("unreachable")


def available_memory() -> int:
    """Bytes of memory the operating system reports as available now."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * 1024**3


def resolve_budget(max_memory: int | float | str | None) -> int:
    """Turn a user's ``max_memory`` setting into a number of bytes.

    ``None`` means half of the memory available now; numbers are bytes; strings such as
    ``'512MB'`` or ``'2 GB'`` are parsed with decimal units.
    """
    if max_memory is None:
        return max(available_memory() // 2, 64 * 1024**2)
    if isinstance(max_memory, str):
        text = max_memory.strip().upper().replace(" ", "")
        units = {"TB": 1e12, "GB": 1e9, "MB": 1e6, "KB": 1e3, "B": 1.0}
        for suffix, scale in units.items():
            if text.endswith(suffix):
                try:
                    value = float(text[: -len(suffix)]) * scale
                except ValueError:
                    break
                return resolve_budget(value)
        raise ValueError(f"max_memory={max_memory!r} is not understood; use bytes or e.g. '2GB'.")
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, float)):
        raise TypeError(
            f"max_memory must be None, a number of bytes or a string like '2GB'; "
            f"got {type(max_memory).__name__}."
        )
    if not (max_memory > 0 and math.isfinite(max_memory)):
        raise ValueError(
            f"max_memory must be a positive, finite number of bytes; got {max_memory!r}. "
            "Use None for half of the available memory."
        )
    return int(max_memory)


def check_fits(n_bytes: float, what: str, advice: str, budget: int | None = None) -> None:
    """Raise :class:`MemoryBudgetError` if ``n_bytes`` exceed ``budget``.

    Parameters
    ----------
    n_bytes : float
        Estimated size of the allocation.
    what : str
        What would be allocated, for the message.
    advice : str
        How the user can make the request fit.
    budget : int, optional
        Bytes allowed; defaults to the memory available now.
    """
    limit = available_memory() if budget is None else budget
    if n_bytes > limit:
        raise MemoryBudgetError(
            f"{what} would need {format_bytes(n_bytes)} but only {format_bytes(limit)} "
            f"is available for it. {advice}"
        )
