"""A NumPy stand-in for CuPy: the part of its API lmu_sk uses, with data on the CPU.

Its arrays pass for CuPy arrays (module name, ``get()``), copies to the host are recorded,
and :func:`install` makes lmu_sk believe a GPU is present, so that the GPU code paths of
the estimators run, and are checked, on machines without one. The timing part of CuPy's
API (events, device synchronisation, device properties) is there too, for the dry run of
``benchmarks/gpu_check.py``.

With the environment variable ``LMU_SK_TEST_GPU=cupy`` (set by ``benchmarks/gpu_check.py``
on a machine with a GPU), ``install(..., as_gpu=True)`` gives real CuPy instead, so that
the tests of the estimators' GPU paths run on the GPU; what only the stand-in can observe
(the copies to the host) is then left unchecked (:func:`records_transfers`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import sys
import time
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from lmu_sk import _device
from lmu_sk.engine import constants, run

#: ``LMU_SK_TEST_GPU=cupy``: the tests that install a GPU get real CuPy and its GPU
REAL_GPU = os.environ.get("LMU_SK_TEST_GPU", "") == "cupy"


class FakeOutOfMemory(Exception):
    pass


class FakeDeviceArray(np.ndarray):
    """A NumPy array the stand-in treats as device memory; ``.data`` is a device pointer.

    Its module name starts with ``cupy`` so that lmu_sk takes it for a CuPy array, and
    ``get()`` (a device-to-host copy) records the shape it copies in ``transfers``.
    """

    transfers: ClassVar[list] = []

    def get(self):
        FakeDeviceArray.transfers.append(self.shape)
        return np.array(self)

    @property
    def data(self):
        return FakePointer(self)

    @property
    def flags(self):
        """CuPy's flags: C- and F-contiguity and ownership, no ``writeable``."""
        flags = super().flags
        return CupyFlags(flags.c_contiguous, flags.f_contiguous, flags.owndata)


@dataclasses.dataclass(frozen=True)
class CupyFlags:
    c_contiguous: bool
    f_contiguous: bool
    owndata: bool


class FakePointer:
    def __init__(self, array):
        self.array = array

    def copy_from_host_async(self, source, nbytes, stream):
        assert self.array.flags.c_contiguous and 0 < nbytes <= self.array.nbytes
        ctypes.memmove(self.array.ctypes.data, source.value, nbytes)

    def copy_to_host_async(self, target, nbytes, stream):
        assert self.array.flags.c_contiguous and nbytes == self.array.nbytes
        ctypes.memmove(target.value, self.array.ctypes.data, nbytes)


class FakeStream:
    ptr = 0

    def __init__(self, non_blocking=False):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def record(self, event=None):
        return SimpleNamespace(synchronize=lambda: None)

    def wait_event(self, event):
        pass

    def synchronize(self):
        pass


class FakeEvent:
    """A CUDA event: the host clock when recorded (the stand-in computes synchronously)."""

    def __init__(self, *args, **kwargs):
        self.seconds = 0.0

    def record(self, stream=None):
        self.seconds = time.perf_counter()

    def synchronize(self):
        pass


class FakeDevice:
    """The current device: a context manager that synchronises at once."""

    compute_capability = "stand-in"

    def __init__(self, device_id=0):
        self.id = device_id

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass


class FakeCupy:
    """The part of CuPy lmu_sk uses, on NumPy; everything else falls through to NumPy."""

    ndarray = FakeDeviceArray
    fft = np.fft
    __version__ = f"stand-in on NumPy {np.__version__}"

    def __init__(self, free_bytes):
        self.pool = SimpleNamespace(free_bytes=lambda: 0, free_all_blocks=lambda: None)
        properties = {"name": b"NumPy stand-in for CuPy", "totalGlobalMem": 2 * free_bytes}
        self.cuda = SimpleNamespace(
            runtime=SimpleNamespace(
                getDeviceCount=lambda: 1,
                getDevice=lambda: 0,
                memGetInfo=lambda: (free_bytes, 2 * free_bytes),
                getDeviceProperties=lambda device_id: dict(properties),
                runtimeGetVersion=lambda: 0,
                driverGetVersion=lambda: 0,
            ),
            Device=FakeDevice,
            Event=FakeEvent,
            get_elapsed_time=lambda start, end: 1e3 * (end.seconds - start.seconds),
            Stream=FakeStream,
            get_current_stream=FakeStream,
            memory=SimpleNamespace(OutOfMemoryError=FakeOutOfMemory),
        )

    def __getattr__(self, name):
        return getattr(np, name)

    def get_default_memory_pool(self):
        return self.pool

    def asarray(self, a, dtype=None):
        return np.asarray(a, dtype=dtype).view(FakeDeviceArray)

    def empty(self, shape, dtype=float):
        return np.empty(shape, dtype=dtype).view(FakeDeviceArray)

    def ascontiguousarray(self, a, dtype=None):
        return np.ascontiguousarray(a, dtype=dtype).view(FakeDeviceArray)


FakeDeviceArray.__module__ = "cupy._fake"


def install(monkeypatch, free_bytes: int = 2 * 1024**3, as_gpu: bool = False) -> Any:
    """Make a :class:`FakeCupy` usable as lmu_sk's ``xp`` for the rest of the test.

    The engine takes it as its array module when a test passes it; with ``as_gpu`` the
    device policy's probe finds it too (``device='auto'`` and ``'gpu'``), so whole
    estimators run their GPU paths on it. With ``as_gpu`` and ``LMU_SK_TEST_GPU=cupy``,
    real CuPy is returned instead (``free_bytes`` does not apply).
    """
    if as_gpu and REAL_GPU:
        cupy, reason = _device._import_cupy_with_gpu()
        if cupy is None:
            raise RuntimeError(f"LMU_SK_TEST_GPU=cupy, but {reason}.")
        clear_caches()
        return cupy
    fake = FakeCupy(free_bytes=free_bytes)
    pinned = SimpleNamespace(empty_pinned=lambda shape, dtype: np.empty(shape, dtype=dtype))
    monkeypatch.setitem(sys.modules, "cupyx", pinned)
    if as_gpu:
        monkeypatch.setitem(sys.modules, "cupy", fake)
        monkeypatch.setattr(_device, "_import_cupy_with_gpu", lambda: (fake, ""))
    clear_caches()
    FakeDeviceArray.transfers.clear()
    return fake


def records_transfers(xp) -> bool:
    """Whether the copies to the host are recorded (``FakeDeviceArray.transfers``): with
    the stand-in, not with real CuPy."""
    return xp.ndarray is FakeDeviceArray


def uninstall(monkeypatch) -> None:
    """No GPU from here on: the stand-in's patches are undone (all of the test's
    ``monkeypatch`` patches), and real CuPy's GPU is hidden from the device policy."""
    monkeypatch.undo()
    clear_caches()
    if REAL_GPU:
        monkeypatch.setattr(_device, "_import_cupy_with_gpu", lambda: (None, "hidden by a test"))


def clear_caches() -> None:
    """Drop the device constants and streams cached while the stand-in was installed."""
    constants.clear()
    run._streams.cache_clear()
