"""Memory estimates and budgets, checked before anything large is allocated."""

from __future__ import annotations

import math
import numbers
import os
import time
from pathlib import Path

__all__ = [
    "MemoryBudgetError",
    "available_memory",
    "check_fits",
    "format_bytes",
    "format_bytes_apart",
    "resolve_budget",
]


class MemoryBudgetError(ValueError):
    """Raised when a request would need more memory than the budget allows."""


def format_bytes(n_bytes: float, digits: int = 1) -> str:
    """Return ``n_bytes`` as a short human-readable string (``'1.5 GB'``), with ``digits``
    decimals beyond bytes."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n_bytes) < 1000 or unit == "TB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.{digits}f} {unit}"
        n_bytes /= 1000
    raise AssertionError("unreachable")


def format_bytes_apart(first: float, second: float) -> tuple[str, str]:
    """``first`` and ``second`` as :func:`format_bytes` writes them, with as many more
    decimals (up to four) as they need to read apart ("1.0 MB but only 1.0 MB" read as no
    shortfall)."""
    for digits in range(1, 5):
        a, b = format_bytes(first, digits), format_bytes(second, digits)
        if a != b:
            break
    return a, b


# Where the operating system says how much memory there is (module attributes, for tests).
_MEMINFO = "/proc/meminfo"
_PROC_CGROUP = "/proc/self/cgroup"
_CGROUP_ROOT = "/sys/fs/cgroup"
# A default reading of what is available is reused for this long: a fit checks many small
# requests in bursts (one per Delay Network constant made, per chunk planned), and a
# reading of /proc and the cgroup files costs about a millisecond (2 % of a small fit).
_READING_REUSE_S = 0.1
# (the paths read, time.monotonic() when read, the bytes available then)
_last_reading: tuple[tuple[str, str, str], float, int] | None = None
# cgroup v1 writes "no limit" as a number near 2**63 (the page counter's largest value)
_NO_LIMIT = 2**62
# cgroup v2 and v1's memory controller: the folder under the cgroup root, the files that
# limit a group, the file of what it uses, and the reclaimable part of that in memory.stat
_CGROUP_V2 = ("", ("memory.max", "memory.high"), "memory.current", ("inactive_file",))
_CGROUP_V1 = (
    "memory",
    ("memory.limit_in_bytes",),
    "memory.usage_in_bytes",
    ("total_inactive_file", "inactive_file"),
)


def available_memory(
    *,
    meminfo: str | os.PathLike | None = None,
    proc_cgroup: str | os.PathLike | None = None,
    cgroup_root: str | os.PathLike | None = None,
) -> int:
    """Bytes of memory this process may still use now.

    The smaller of what the system has available (``MemAvailable`` in ``/proc/meminfo``)
    and what the memory limits of the process's control group leave: in a container, or
    a job under a batch scheduler, that limit is often far below the machine's memory.
    Both cgroup v2 (``memory.max``, ``memory.high`` and ``memory.current``) and v1
    (``memory.limit_in_bytes`` and ``memory.usage_in_bytes``) are read, for the process's
    group and each group above it; reclaimable page cache (``inactive_file``) does not
    count as used.

    Parameters
    ----------
    meminfo, proc_cgroup, cgroup_root : path, optional
        Where to read ``/proc/meminfo``, ``/proc/self/cgroup`` and the cgroup file system
        (``/sys/fs/cgroup``) from; for tests. Without them a reading younger than
        ``_READING_REUSE_S`` (0.1 s) is reused.

    Returns
    -------
    n_bytes : int
    """
    global _last_reading
    default = meminfo is None and proc_cgroup is None and cgroup_root is None
    if default:
        paths = (_MEMINFO, _PROC_CGROUP, _CGROUP_ROOT)
        last, now = _last_reading, time.monotonic()
        if last is not None and last[0] == paths and now - last[1] < _READING_REUSE_S:
            return last[2]
    system = _system_available(_MEMINFO if meminfo is None else meminfo)
    limited = _cgroup_available(
        _PROC_CGROUP if proc_cgroup is None else proc_cgroup,
        _CGROUP_ROOT if cgroup_root is None else cgroup_root,
    )
    available = system if limited is None else min(system, limited)
    rlimited = _rlimit_available() if default else None
    if rlimited is not None:
        available = min(available, rlimited)
    if default:
        _last_reading = (paths, now, available)
    return available


# arrays of the predictions' size that predicting holds at most: the scores or outputs
# in float64, and a softmax's temporaries
PREDICTION_COPIES = 3


def check_predictions_fit(n_values: int, what: str) -> None:
    """Refuse predictions of ``n_values`` values (rows times scores) that the memory
    available cannot hold, in ``what``'s words, before any is computed."""
    check_fits(
        PREDICTION_COPIES * 8.0 * n_values,
        what,
        "Predict fewer samples at a time (in chunks of rows).",
    )


def _rlimit_available() -> int | None:
    """Bytes of address space the process's ``RLIMIT_AS`` (``ulimit -v``, as some batch
    schedulers set) leaves beyond what it has mapped; None without such a limit."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return max(soft - int(line.split()[1]) * 1024, 0)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _system_available(meminfo: str | os.PathLike) -> int:
    """Bytes the operating system reports as available now."""
    try:
        with open(meminfo) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * 1024**3


def _cgroup_available(proc_cgroup: str | os.PathLike, root: str | os.PathLike) -> int | None:
    """Bytes the memory limits of this process's control groups leave; None without limits."""
    try:
        with open(proc_cgroup) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    rooms = []
    for line in lines:  # "hierarchy-id:controllers:path"
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, group = fields
        if controllers == "":
            mount, limits, usage, reclaimable = _CGROUP_V2
        elif "memory" in controllers.split(","):
            mount, limits, usage, reclaimable = _CGROUP_V1
        else:
            continue
        for folder in _group_folders(Path(root, mount), group):
            room = _room(folder, limits, usage, reclaimable)
            if room is not None:
                rooms.append(room)
    return min(rooms) if rooms else None


def _group_folders(base: Path, group: str) -> list[Path]:
    """The folders of control group ``group`` and of the groups above it, that exist.

    In a container the cgroup file system often shows the container's own group as its
    root while ``/proc/self/cgroup`` names it from the host's: then only ``base`` exists.
    """
    parts = [part for part in group.split("/") if part]
    folders = [base.joinpath(*parts[:k]) for k in range(len(parts), -1, -1)]
    return [folder for folder in folders if folder.is_dir()]


def _read_number(path: Path) -> int | None:
    """The number in the file at ``path``; None when missing, unreadable or ``max``."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stat_value(path: Path, keys: tuple[str, ...]) -> int:
    """The first of ``keys`` found in a ``memory.stat`` file; 0 when none is."""
    try:
        values = dict(line.split()[:2] for line in path.read_text().splitlines() if " " in line)
    except (OSError, ValueError):
        return 0
    for key in keys:
        if key in values:
            try:
                return int(values[key])
            except ValueError:
                return 0
    return 0


def _room(
    folder: Path, limits: tuple[str, ...], usage: str, reclaimable: tuple[str, ...]
) -> int | None:
    """Bytes left under the limits of the control group at ``folder``; None without one."""
    values = [_read_number(folder / name) for name in limits]
    limit = min((value for value in values if value is not None), default=None)
    if limit is None or limit >= _NO_LIMIT:
        return None
    used = _read_number(folder / usage) or 0
    working_set = max(used - _stat_value(folder / "memory.stat", reclaimable), 0)
    return max(limit - working_set, 0)


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
        raise ValueError(
            f"max_memory={max_memory!r} is not understood; use a number of bytes (e.g. 1e9) or "
            "a number followed by one of the decimal units B, KB, MB, GB, TB (e.g. '2GB')."
        )
    if isinstance(max_memory, bool) or not isinstance(max_memory, numbers.Real):
        raise TypeError(
            f"max_memory must be None, a number of bytes or a string like '2GB'; "
            f"got {type(max_memory).__name__}."
        )
    if not (max_memory >= 1 and math.isfinite(max_memory)):
        raise ValueError(
            f"max_memory must be a finite number of bytes, at least 1; got {max_memory!r}. "
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
        need, have = format_bytes_apart(n_bytes, limit)
        raise MemoryBudgetError(
            f"{what} would need {need} but only {have} is available for it. {advice}"
        )
