"""The free-memory estimate heeds a container's cgroup memory limit, read from fake files.

Under a container or a batch job the machine's ``MemAvailable`` can be far more than the
process may use; the default memory budgets (half of what is available) must come from the
control group's limit then.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lmu_sk import _memory

GiB = 1024**3
MiB = 1024**2


def fake_system(tmp_path: Path, available: int, cgroup_lines: str) -> dict[str, Path]:
    """A /proc/meminfo, a /proc/self/cgroup and an empty cgroup root under ``tmp_path``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(
        f"MemTotal:       {64 * GiB // 1024} kB\nMemFree:        1000 kB\n"
        f"MemAvailable:   {available // 1024} kB\n"
    )
    proc_cgroup = tmp_path / "cgroup"
    proc_cgroup.write_text(cgroup_lines)
    root = tmp_path / "sys-fs-cgroup"
    root.mkdir()
    return {"meminfo": meminfo, "proc_cgroup": proc_cgroup, "cgroup_root": root}


def group(root: Path, path: str, **files: str) -> Path:
    """A cgroup folder under ``root`` holding ``files`` (``memory_max`` -> ``memory.max``)."""
    folder = root / path
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".", 1)).write_text(text)
    return folder


def test_cgroup_v2_limit_below_the_machine(tmp_path):
    paths = fake_system(tmp_path, 48 * GiB, "0::/user.slice/job-7\n")
    group(
        paths["cgroup_root"],
        "user.slice/job-7",
        memory_max=f"{2 * GiB}\n",
        memory_current=f"{GiB}\n",
        memory_stat=f"anon {700 * MiB}\nfile {324 * MiB}\ninactive_file {256 * MiB}\n",
    )
    # 2 GiB limit, 1 GiB used of which 256 MiB is reclaimable page cache
    assert _memory.available_memory(**paths) == 2 * GiB - (GiB - 256 * MiB)


def test_cgroup_v2_parent_limit_and_memory_high(tmp_path):
    paths = fake_system(tmp_path, 48 * GiB, "0::/a/b\n")
    root = paths["cgroup_root"]
    group(root, "a", memory_max=f"{3 * GiB}\n", memory_current=f"{2 * GiB}\n")
    group(root, "a/b", memory_max="max\n", memory_current=f"{GiB}\n")
    assert _memory.available_memory(**paths) == GiB  # the parent's room
    group(root, "a/b", memory_high=f"{GiB + 100 * MiB}\n")
    assert _memory.available_memory(**paths) == 100 * MiB  # throttled above memory.high


def test_cgroup_v1_limit_seen_from_inside_a_container(tmp_path):
    # the host's path of the group; the container's /sys/fs/cgroup/memory is that group
    paths = fake_system(tmp_path, 48 * GiB, "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n")
    group(
        paths["cgroup_root"],
        "memory",
        memory_limit_in_bytes=f"{512 * MiB}\n",
        memory_usage_in_bytes=f"{300 * MiB}\n",
        memory_stat=f"cache {120 * MiB}\ntotal_inactive_file {100 * MiB}\n",
    )
    assert _memory.available_memory(**paths) == 512 * MiB - 200 * MiB


def test_used_beyond_the_limit_leaves_nothing(tmp_path):
    paths = fake_system(tmp_path, 48 * GiB, "0::/\n")
    group(paths["cgroup_root"], "", memory_max=f"{GiB}\n", memory_current=f"{GiB + 1}\n")
    assert _memory.available_memory(**paths) == 0


@pytest.mark.parametrize(
    ("lines", "files"),
    [
        ("0::/\n", {}),  # the root group: no memory.max
        ("0::/job\n", {"memory_max": "max\n", "memory_current": "1000\n"}),
        ("4:memory:/\n", {"memory_limit_in_bytes": "9223372036854771712\n"}),  # v1: no limit
        ("1:name=systemd:/\n", {}),  # no memory controller
    ],
)
def test_no_limit_leaves_the_machine_figure(tmp_path, lines, files):
    paths = fake_system(tmp_path, 5 * GiB, lines)
    folder = "memory" if lines.startswith("4:") else lines.strip().split(":")[-1].lstrip("/")
    group(paths["cgroup_root"], folder, **files)
    assert _memory.available_memory(**paths) == 5 * GiB


def test_the_smaller_of_machine_and_limit(tmp_path):
    paths = fake_system(tmp_path, GiB, "0::/job\n")
    group(paths["cgroup_root"], "job", memory_max=f"{8 * GiB}\n", memory_current="0\n")
    assert _memory.available_memory(**paths) == GiB


def test_unreadable_cgroup_files_are_no_limit(tmp_path):
    paths = fake_system(tmp_path, 3 * GiB, "0::/job\n")
    paths["proc_cgroup"] = tmp_path / "missing"
    assert _memory.available_memory(**paths) == 3 * GiB
    paths = fake_system(tmp_path / "b", 3 * GiB, "garbage\n0::/job\n")
    group(paths["cgroup_root"], "job", memory_max="not a number\n")
    assert _memory.available_memory(**paths) == 3 * GiB


def test_default_budget_is_half_of_the_cgroup_room(tmp_path, monkeypatch):
    paths = fake_system(tmp_path, 48 * GiB, "0::/job\n")
    group(paths["cgroup_root"], "job", memory_max=f"{4 * GiB}\n", memory_current="0\n")
    monkeypatch.setattr(_memory, "_MEMINFO", str(paths["meminfo"]))
    monkeypatch.setattr(_memory, "_PROC_CGROUP", str(paths["proc_cgroup"]))
    monkeypatch.setattr(_memory, "_CGROUP_ROOT", str(paths["cgroup_root"]))
    assert _memory.resolve_budget(None) == 2 * GiB


def test_default_reading_is_reused_briefly_then_read_again(tmp_path, monkeypatch):
    paths = fake_system(tmp_path, 3 * GiB, "0::/\n")
    monkeypatch.setattr(_memory, "_MEMINFO", str(paths["meminfo"]))
    monkeypatch.setattr(_memory, "_PROC_CGROUP", str(paths["proc_cgroup"]))
    monkeypatch.setattr(_memory, "_CGROUP_ROOT", str(paths["cgroup_root"]))
    clock = [100.0]
    monkeypatch.setattr(_memory.time, "monotonic", lambda: clock[0])
    assert _memory.available_memory() == 3 * GiB
    paths["meminfo"].write_text(f"MemAvailable:   {GiB // 1024} kB\n")
    clock[0] += _memory._READING_REUSE_S / 2
    assert _memory.available_memory() == 3 * GiB  # within the reuse window
    # explicit paths always read the files
    assert _memory.available_memory(**paths) == GiB
    clock[0] += _memory._READING_REUSE_S
    assert _memory.available_memory() == GiB  # read again after it


def test_the_address_space_limit_of_ulimit_v_is_heeded():
    """A batch scheduler's ``ulimit -v`` (RLIMIT_AS) bounds what a process may map, and
    was not read: an 8 GB result was allowed against 24 GB of MemAvailable under a 4 GB
    limit, and the allocation died with a raw MemoryError."""
    import subprocess
    import sys

    code = (
        "import resource\n"
        "from lmu_sk import _memory\n"
        "size = int(open('/proc/self/status').read().split('VmSize:')[1].split()[0]) * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + 2**30, resource.RLIM_INFINITY))\n"
        "print(_memory.available_memory())\n"
    )
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc/self/status (Linux)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 0 <= int(out.stdout) <= GiB
