"""A NumPy stand-in for CuPy: the part of its API lmu_sk uses, with data on the CPU.

Its arrays pass for CuPy arrays (module name, ``get()``), copies to the host are recorded,
and :func:`install` makes lmu_sk believe a GPU is present, so that the GPU code paths of
the estimators run, and are checked, on machines without one.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from types import SimpleNamespace
from typing import ClassVar

import numpy as np

from lmu_sk import _device
from lmu_sk.engine import constants, run


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


class FakeCupy:
    """The part of CuPy lmu_sk uses, on NumPy; everything else falls through to NumPy."""

    ndarray = FakeDeviceArray
    fft = np.fft

    def __init__(self, free_bytes):
        self.pool = SimpleNamespace(free_bytes=lambda: 0, free_all_blocks=lambda: None)
        self.cuda = SimpleNamespace(
            runtime=SimpleNamespace(
                getDeviceCount=lambda: 1,
                getDevice=lambda: 0,
                memGetInfo=lambda: (free_bytes, 2 * free_bytes),
            ),
            Device=lambda device_id=0: contextlib.nullcontext(),
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


def install(monkeypatch, free_bytes: int = 2 * 1024**3, as_gpu: bool = False) -> FakeCupy:
    """Make a :class:`FakeCupy` usable as lmu_sk's ``xp`` for the rest of the test.

    The engine takes it as its array module when a test passes it; with ``as_gpu`` the
    device policy's probe finds it too (``device='auto'`` and ``'gpu'``), so whole
    estimators run their GPU paths on it.
    """
    fake = FakeCupy(free_bytes=free_bytes)
    pinned = SimpleNamespace(empty_pinned=lambda shape, dtype: np.empty(shape, dtype=dtype))
    monkeypatch.setitem(sys.modules, "cupyx", pinned)
    if as_gpu:
        monkeypatch.setitem(sys.modules, "cupy", fake)
        monkeypatch.setattr(_device, "_import_cupy_with_gpu", lambda: (fake, ""))
    clear_caches()
    FakeDeviceArray.transfers.clear()
    return fake


def clear_caches() -> None:
    """Drop the device constants and streams cached while the stand-in was installed."""
    constants.clear()
    run._streams.cache_clear()
