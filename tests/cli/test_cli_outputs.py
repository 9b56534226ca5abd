"""``lmu-sk features`` run as a real command: what it keeps, removes and reports on failure.

Each test guards a defect found by an audit: tracebacks for read-only output folders and
damaged Zarr chunks, a ``--scheduler`` run that waited forever for a cluster whose workers
had all died, two runs that shared one partial output, an old Zarr output deleted before
the new one took its name, renames not flushed to disk, and ``--help`` silent about when
signals take effect. The commands run in subprocesses, as a user runs them, so that exit
statuses, tracebacks and signals are the real ones.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import lmu_sk
from lmu_sk import LMUFeatures
from lmu_sk.cli import output_file

PACKAGE_ROOT = Path(lmu_sk.__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), *sys.path])}
COMMAND = [sys.executable, "-m", "lmu_sk.cli", "features"]
# a bound on each command, so that a hang fails the test instead of stalling the suite
TIMEOUT = 300

zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")


def features(X, order=4):
    return LMUFeatures(order=order, dtype="float32", channels_first=False).fit_transform(X)


def lmu_sk_command(*args, prefix=(), **kwargs) -> subprocess.CompletedProcess:
    """Run ``lmu-sk features ARGS`` to its end (under ``prefix``, e.g. unshare)."""
    return subprocess.run(
        [*prefix, *COMMAND, *map(str, args)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=TIMEOUT,
        check=False,
        **kwargs,
    )


def start_command(*args) -> subprocess.Popen:
    return subprocess.Popen(
        [*COMMAND, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def one_error_line(process) -> str:
    """The only line of the command's stderr, checked to be a one-line ``lmu-sk`` error."""
    err = process.stderr
    assert "Traceback" not in err, err[-3000:]
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err[-3000:]
    assert lines[0].startswith("lmu-sk: error: "), err
    return lines[0]


def hidden(folder: Path) -> list[str]:
    """Names of the hidden partial or set-aside outputs in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def write_zarr(path: Path, X: np.ndarray, rows: int) -> None:
    store = zarr.open_array(str(path), mode="w", shape=X.shape, chunks=(rows, *X.shape[1:]))
    store[:] = X


def read_output(path: Path) -> np.ndarray:
    if path.suffix == ".npy":
        return np.load(path)
    if path.suffix == ".zarr":
        return zarr.open_array(str(path), mode="r")[:]
    return np.concatenate([np.load(p) for p in sorted(path.glob("*.npy"))])


def wait_for(condition, process, what: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{what} did not happen"
        time.sleep(0.005)


# ----------------------------------------------------------------------------------------------
# A read-only output folder: exit status 2 and one line, on every path
# ----------------------------------------------------------------------------------------------


def read_only_prefix(folder: Path) -> list[str] | None:
    """A command prefix that runs a command with ``folder`` bind-mounted read-only.

    The mount lives in a private mount namespace (``unshare``) that ends with the command;
    root or unprivileged user namespaces are needed. None where neither is available.
    """
    if shutil.which("unshare") is None:
        return None
    mount = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    for unshare in (["unshare", "--mount"], ["unshare", "--map-root-user", "--mount"]):
        prefix = [*unshare, "sh", "-c", mount, "sh", str(folder)]
        probe = subprocess.run(
            [*prefix, "sh", "-c", f'! touch "{folder}/probe" 2>/dev/null'],
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return prefix
    return None


@pytest.mark.parametrize(
    ("source", "output"),
    [
        ("in.zarr", "out.zarr"),
        ("in.zarr", "out.npy"),
        ("in.zarr", "shards/"),
    ],
)
def test_read_only_output_folder(tmp_path, source, output):
    X = np.random.default_rng(0).standard_normal((20, 12)).astype(np.float32)
    np.save(tmp_path / "in.npy", X)
    write_zarr(tmp_path / "in.zarr", X, 5)
    folder = tmp_path / "ro"
    folder.mkdir()
    prefix = read_only_prefix(folder)
    if prefix is None:
        pytest.skip("cannot mount a read-only folder here (unshare --mount not permitted)")
    target = f"{folder}/{output}"
    result = lmu_sk_command("--order", 4, "--quiet", tmp_path / source, target, prefix=prefix)
    assert result.returncode == 2, result.stderr[-3000:]
    assert one_error_line(result) == (
        f"lmu-sk: error: output path not writable: {Path(target)} (Read-only file system)"
    )
    assert list(folder.iterdir()) == []


# ----------------------------------------------------------------------------------------------
# A damaged input: exit status 2 and one line naming the file
# ----------------------------------------------------------------------------------------------


def chunk_file(store: Path, row_chunk: int) -> Path:
    """The file of the ``row_chunk``-th chunk of rows of a 2-D store (Zarr v3 or v2)."""
    for path in (store / "c" / str(row_chunk) / "0", store / f"{row_chunk}.0"):
        if path.exists():
            return path
    raise AssertionError(f"no chunk file for rows chunk {row_chunk} in {store}")


def test_corrupt_zarr_chunk_names_the_input(tmp_path):
    X = np.random.default_rng(1).standard_normal((40, 16)).astype(np.float32)
    source = tmp_path / "in.zarr"
    write_zarr(source, X, 10)
    chunk_file(source, 1).write_bytes(b"not a compressed chunk " * 8)
    target = tmp_path / "out.zarr"
    result = lmu_sk_command("--order", 4, "--batch-size", 10, "--quiet", source, target)
    assert result.returncode == 2, result.stderr[-3000:]
    line = one_error_line(result)
    assert line.startswith(f"lmu-sk: error: cannot read rows 10-19 of input {source}: ")
    assert line.endswith("; the file is damaged or unreadable")
    assert not target.exists() and hidden(tmp_path) == []


# ----------------------------------------------------------------------------------------------
# --scheduler: a cluster whose workers all die ends the run after --worker-timeout
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def scheduler(tmp_path):
    """A dask scheduler in its own process; yields its address."""
    distributed = pytest.importorskip("distributed")
    info = tmp_path / "scheduler.json"
    options = ["--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", info]
    process = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", *map(str, options)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not info.exists() or not info.read_text().strip():
            assert process.poll() is None and time.monotonic() < deadline, "no scheduler"
            time.sleep(0.05)
        with distributed.Client(scheduler_file=str(info), timeout="60s") as client:
            yield client.scheduler.address, client
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def start_worker(address: str, folder: Path) -> subprocess.Popen:
    """A dask worker under a nanny, both in one new process group."""
    options = ["--nthreads", "1", "--nanny", "--no-dashboard", "--local-directory", str(folder)]
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
        start_new_session=True,
    )


def chunks_written(folder: Path, name: str) -> bool:
    return any(
        path.is_file() and path.name != "zarr.json" and path.name != ".zarray"
        for partial in folder.glob(f".{name}.*partial")
        for path in partial.rglob("*")
    )


@pytest.mark.slow
def test_a_cluster_without_workers_ends_the_run(tmp_path, scheduler):
    address, client = scheduler
    X = np.random.default_rng(2).standard_normal((4000, 64)).astype(np.float32)
    write_zarr(tmp_path / "in.zarr", X, 20)
    worker = start_worker(address, tmp_path / "worker")
    try:
        client.wait_for_workers(1, timeout=120)
        args = ("--order", 4, "--batch-size", 20, "--quiet", "--scheduler", address)
        command = start_command(
            *args, "--worker-timeout", 3, tmp_path / "in.zarr", tmp_path / "out.zarr"
        )
        # 200 blocks: the worker and its nanny die with the first of them written
        wait_for(lambda: chunks_written(tmp_path, "out.zarr"), command, "a block written")
        os.killpg(worker.pid, signal.SIGKILL)
        try:
            _, err = command.communicate(timeout=TIMEOUT)
        finally:
            if command.poll() is None:
                command.kill()
                command.communicate()
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    result = subprocess.CompletedProcess(command.args, command.returncode, "", err)
    assert result.returncode == 2, err[-3000:]
    assert one_error_line(result) == (
        f"lmu-sk: error: the cluster at {address} has had no workers for 3 s; gave up "
        "(--worker-timeout sets how long to wait)"
    )
    assert not (tmp_path / "out.zarr").exists() and hidden(tmp_path) == []


def test_worker_timeout_is_checked():
    bad = lmu_sk_command("--order", 4, "--worker-timeout", "-1", "a.zarr", "b.zarr")
    assert bad.returncode == 2 and "expected a number >= 0, got '-1'" in bad.stderr


# ----------------------------------------------------------------------------------------------
# Two runs writing one output: each its own partial output; the last rename wins
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["out.zarr", "out.npy"])
def test_two_runs_writing_one_output(tmp_path, output):
    rng = np.random.default_rng(3)
    inputs = {}
    for name in ("a", "b"):
        # 100 batches: the first run, stopped at its first write, has 99 left
        inputs[name] = rng.standard_normal((2000, 32)).astype(np.float32)
        (tmp_path / name).mkdir()
        np.save(tmp_path / name / "x.npy", inputs[name])
    target = tmp_path / output
    name = target.name
    args = ("--order", 4, "--batch-size", 20, "--quiet")
    first = start_command(*args, tmp_path / "a", target)
    try:
        # stop the first run in the middle of its writes, run the second to its end
        if output.endswith(".npy"):
            wait_for(lambda: any(tmp_path.glob(f".{name}.*partial")), first, "a partial output")
        else:
            wait_for(lambda: chunks_written(tmp_path, name), first, "a block written")
        first.send_signal(signal.SIGSTOP)
        second = lmu_sk_command(*args, tmp_path / "b", target)
    finally:
        first.send_signal(signal.SIGCONT)
        _, first_err = first.communicate(timeout=TIMEOUT)
    assert second.returncode == 0, second.stderr[-3000:]
    assert first.returncode == 0, first_err[-3000:]
    # the first run renamed last: its output, whole
    np.testing.assert_allclose(read_output(target), features(inputs["a"]), rtol=1e-5, atol=1e-6)
    assert hidden(tmp_path) == []


def test_partial_names_are_unique_to_the_run(tmp_path):
    target = tmp_path / "out.zarr"
    names = set()
    for folder in (False, True, False, True):
        partial = output_file.PartialOutput(target, folder=folder)
        assert partial.path.parent == tmp_path and partial.path.name.endswith(".partial")
        assert partial.path.name.startswith(f".out.zarr.{os.getpid()}-")
        assert partial.path.is_dir() == folder
        names.add(partial.path.name)
    assert len(names) == 4


# ----------------------------------------------------------------------------------------------
# Replacing an output: the old one kept until the new one is complete and on disk
# ----------------------------------------------------------------------------------------------

# Runs the command with an audit hook that kills the process (SIGKILL, like a power loss)
# at one moment of replacing the output: "first", just before the first change to the
# output's name (a rename to or from it, its removal, or an atomic swap with it); "into",
# just before the rename (or swap) that gives the new output that name; "after", just after
# it (at the next change of any kind).
KILLED_CHILD = """
import os, runpy, signal, sys
target, when, swap = sys.argv[1:4]
del sys.argv[1:4]
CHANGES = {"os.rename", "os.remove", "os.rmdir", "shutil.rmtree"}
renamed_into = []

def kill():
    os.kill(os.getpid(), signal.SIGKILL)

def hook(event, args):
    if event not in CHANGES:
        return
    if renamed_into:
        kill()
    names = [os.fsdecode(a) for a in args if isinstance(a, (str, bytes, os.PathLike))]
    if when == "first" and target in names:
        kill()
    if event == "os.rename" and names[1:2] == [target]:
        if when == "into":
            kill()
        renamed_into.append(when == "after")

sys.addaudithook(hook)
from lmu_sk.cli import output_file
real_exchange = getattr(output_file, "_exchange", None)

def exchange(a, b):  # a system call through ctypes: no audit event of its own
    if swap == "no":
        return False
    hook("os.rename", (a, b))
    return real_exchange(a, b)

output_file._exchange = exchange
sys.argv[0] = "lmu-sk"
runpy.run_module("lmu_sk.cli", run_name="__main__", alter_sys=True)
"""


def zarr_stores(folder: Path, name: str) -> dict[str, np.ndarray]:
    """The readable Zarr stores in ``folder`` named ``name`` or hidden beside it."""
    stores = {}
    for path in folder.iterdir():
        if path.name == name or path.name.startswith(f".{name}."):
            try:
                stores[path.name] = zarr.open_array(str(path), mode="r")[:]
            except Exception:  # an incomplete store
                continue
    return stores


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("when", "swap"),
    [("first", "no"), ("into", "yes"), ("into", "no"), ("after", "yes"), ("after", "no")],
    ids=lambda v: {"yes": "atomic-swap", "no": "rename-aside"}.get(v, v),
)
def test_a_kill_while_replacing_a_zarr_output_loses_nothing(tmp_path, when, swap):
    X = np.random.default_rng(4).standard_normal((30, 20)).astype(np.float32)
    np.save(tmp_path / "in.npy", X)
    new = features(X)
    old = np.arange(new.size, dtype=np.float32).reshape(new.shape)
    target = tmp_path / "out.zarr"
    write_zarr(target, old, 10)
    args = ["--order", "4", "--batch-size", "10", "--quiet", str(tmp_path / "in.npy"), str(target)]
    process = subprocess.run(
        [sys.executable, "-c", KILLED_CHILD, str(target), when, swap, "features", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=TIMEOUT,
        check=False,
    )
    assert process.returncode == -signal.SIGKILL, process.stderr[-3000:]
    stores = zarr_stores(tmp_path, "out.zarr")
    if target.exists():
        # the output's name holds one whole output, the old or the new
        assert same(stores.get("out.zarr", np.empty(0)), old) or same(stores["out.zarr"], new)
    else:
        # only renaming aside leaves the name empty for a moment: both outputs are whole
        assert (when, swap) == ("into", "no")
        assert any(same(s, old) for s in stores.values()), sorted(stores)
        assert any(same(s, new) for s in stores.values()), sorted(stores)
    if when == "after":
        assert same(stores["out.zarr"], new)


def fsync_log(monkeypatch) -> list[tuple[str, str]]:
    """Record the paths flushed to disk and the renames, in their order."""
    log = []
    real_fsync, real_replace, real_rename = os.fsync, os.replace, os.rename
    real_exchange = output_file._exchange

    def fsync(fd):
        log.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def rename(real):
        def renamed(src, dst, *args, **kwargs):
            log.append(("rename", os.path.abspath(dst)))
            return real(src, dst, *args, **kwargs)

        return renamed

    def exchange(a, b):
        swapped = real_exchange(a, b)
        if swapped:
            log.append(("rename", os.path.abspath(b)))
        return swapped

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", rename(real_replace))
    monkeypatch.setattr(os, "rename", rename(real_rename))
    monkeypatch.setattr(output_file, "_exchange", exchange)
    return log


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
@pytest.mark.parametrize(
    ("source", "output"),
    [("in.npy", "out.npy"), ("in.zarr", "out.npy"), ("in.npy", "out.zarr"), ("in.zarr", "s/")],
)
def test_outputs_are_on_disk_before_they_take_their_name(tmp_path, monkeypatch, source, output):
    X = np.random.default_rng(5).standard_normal((25, 12)).astype(np.float32)
    np.save(tmp_path / "in.npy", X)
    write_zarr(tmp_path / "in.zarr", X, 10)
    target = tmp_path / output.rstrip("/")
    if output == "out.zarr":
        write_zarr(target, np.zeros((2, 2), np.float32), 1)  # an old output to replace
    log = fsync_log(monkeypatch)
    args = ("features", "--order", 4, "--batch-size", 10, "--quiet", tmp_path / source)
    assert lmu_sk.cli.main([str(a) for a in (*args, f"{tmp_path}/{output}")]) == 0
    np.testing.assert_allclose(read_output(target), features(X), rtol=1e-5, atol=1e-6)

    commit = log.index(("rename", str(target)))
    flushed = [path for what, path in log[:commit] if what == "fsync"]
    partial = Path(flushed[-1])  # the partial output itself is flushed last
    assert partial.name.startswith(f".{target.name}.") and partial.name.endswith(".partial")
    written = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    if target.is_dir():
        assert (
            written
            and sorted(str(Path(p).relative_to(partial)) for p in flushed if p != str(partial))
            == written
        )  # every file and folder in it
    assert ("fsync", str(tmp_path)) in log[commit + 1 :]  # the rename itself
    assert hidden(tmp_path) == []


# ----------------------------------------------------------------------------------------------
# Signals: when they take effect, said in --help
# ----------------------------------------------------------------------------------------------


def test_help_says_when_signals_take_effect_and_how_long_workers_are_awaited():
    result = subprocess.run(
        [*COMMAND, "--help"], capture_output=True, text=True, env=ENV, timeout=TIMEOUT
    )
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "Signals are acted on between batches: the batch being computed finishes first, " in (
        text
    )
    assert "so a large --batch-size delays them." in text
    assert "blocks already running on workers (which cannot be stopped) are waited for" in text
    assert "Exit status: 0 when OUTPUT is written; 2 on a usage, input or output error" in text
    assert "--worker-timeout SECONDS" in text
    assert "once the cluster has had no workers for this long (default: 300; 0 waits" in text
