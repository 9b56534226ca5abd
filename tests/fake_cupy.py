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

import contextlib
import ctypes
import dataclasses
import functools
import os
import sys
import threading
import time
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from lmu_sk import _device
from lmu_sk.engine import constants, run

#: ``LMU_SK_TEST_GPU=cupy``: the tests that install a GPU get real CuPy and its GPU
REAL_GPU = os.environ.get("LMU_SK_TEST_GPU", "") == "cupy"

#: The stand-in refuses what real CuPy refuses: mixing a device array with a NumPy array
#: (ufuncs, NumPy functions, CuPy functions), NumPy's implicit conversions of device arrays
#: (``np.asarray``), and its CuPy functions return device arrays. On by default (it found
#: a rounding guard that real CuPy would have skipped); ``LMU_SK_STRICT_STAND_IN=0``: the
#: lenient stand-in of before, an ndarray subclass that mixes silently
STRICT = os.environ.get("LMU_SK_STRICT_STAND_IN", "1") != "0"

_np_asarray = np.asarray
_np_array = np.array
_np_ascontiguousarray = np.ascontiguousarray

# depth of the stand-in's own NumPy calls (checks apply at the outermost call only)
_inside = threading.local()


@contextlib.contextmanager
def _nested():
    _inside.depth = getattr(_inside, "depth", 0) + 1
    try:
        yield
    finally:
        _inside.depth -= 1


def _checking() -> bool:
    return STRICT and getattr(_inside, "depth", 0) == 0


def _is_host(a) -> bool:
    return isinstance(a, np.ndarray) and not isinstance(a, FakeDeviceArray) and a.ndim >= 1


def _find_host(objs, depth=0):
    for a in objs:
        if _is_host(a):
            return a
        if depth < 2 and isinstance(a, (list, tuple)):
            found = _find_host(a, depth + 1)
            if found is not None:
                return found
    return None


def _refuse_host(where, args, kwargs=None):
    found = _find_host(list(args) + list((kwargs or {}).values()))
    if found is not None:
        raise TypeError(
            f"Unsupported type {type(found)} (strict stand-in: {where} mixes a NumPy "
            f"array of shape {found.shape} with device arrays)"
        )


def _to_device(result):
    """NumPy results of a CuPy function as device arrays (scalars as 0-d arrays)."""
    if isinstance(result, FakeDeviceArray):
        return result
    if isinstance(result, np.ndarray):
        return result.view(FakeDeviceArray)
    if isinstance(result, np.generic):
        return _np_asarray(result).view(FakeDeviceArray)
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(_to_device(r) for r in result)
    if isinstance(result, tuple):  # named tuples (eigh, ...)
        return type(result)(*(_to_device(r) for r in result))
    if isinstance(result, list):
        return [_to_device(r) for r in result]
    if isinstance(result, np.random.Generator):
        return _StrictNamespace(result, f"random.{type(result).__name__}")
    return result


def _to_ndarray(a):
    return a.view(np.ndarray) if isinstance(a, FakeDeviceArray) else a


def _strict_function(func, name, allow_host=False, host_positions=()):
    """``func`` as a CuPy function: no NumPy arrays in, device arrays out."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _checking() and not allow_host:
            checked = [a for i, a in enumerate(args) if i not in host_positions]
            _refuse_host(f"cupy.{name}", checked, kwargs)
        with _nested():
            return _to_device(func(*args, **kwargs))

    return wrapper


class _StrictUfunc:
    def __init__(self, ufunc):
        self._ufunc = ufunc
        self._call = _strict_function(ufunc, ufunc.__name__)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        if callable(attr):
            return _strict_function(attr, f"{self._ufunc.__name__}.{name}")
        return attr


class _StrictNamespace:
    """A module (or object) of NumPy passed off as CuPy's: its functions are strict."""

    def __init__(self, target, name):
        self._target = target
        self._name = name

    def __getattr__(self, name):
        attr = getattr(self._target, name)
        return _strict_attribute(attr, f"{self._name}.{name}")


# CuPy functions that take NumPy arrays: explicit conversions (and indices, for ``take``)
_CONVERSIONS = {
    "asarray",
    "array",
    "ascontiguousarray",
    "asfortranarray",
    "asanyarray",
    "asnumpy",
    "get_array_module",
    "isscalar",
    "result_type",
    "can_cast",
    "dtype",
    "finfo",
    "iinfo",
}
_HOST_POSITIONS = {"take": (1,)}


def _strict_attribute(attr, name):
    if isinstance(attr, type) or not callable(attr):
        if isinstance(attr, type(np)):
            return _StrictNamespace(attr, name)
        return attr
    if isinstance(attr, np.ufunc):
        return _StrictUfunc(attr)
    short = name.rsplit(".", 1)[-1]
    return _strict_function(
        attr,
        name,
        allow_host=short in _CONVERSIONS,
        host_positions=_HOST_POSITIONS.get(short, ()),
    )


def _refuse_conversion(convert):
    """NumPy's ``asarray`` & co. refuse device arrays, as CuPy's ``__array__`` does."""

    @functools.wraps(convert)
    def strict(a, *args, **kwargs):
        if _checking() and not _from_numba_kernels(sys._getframe(1)):
            items = a if isinstance(a, (list, tuple)) else (a,)
            if any(isinstance(x, FakeDeviceArray) for x in items):
                raise TypeError(
                    "Implicit conversion to a NumPy array is not allowed. Please use "
                    "`.get()` to construct a NumPy array explicitly. (strict stand-in: "
                    f"numpy.{convert.__name__})"
                )
        return convert(a, *args, **kwargs)

    return strict


def _from_numba_kernels(frame) -> bool:
    """Calls from ``lmu_sk.kernels.cuda`` that take a device array for a host one: there
    ``is_cuda_array`` sends real CuPy arrays (not NumPy arrays) to ``as_cuda_array``, and
    only the stand-in's arrays (an ``np.ndarray`` subclass) to the host branch."""
    return frame.f_code.co_filename.replace(os.sep, "/").endswith("lmu_sk/kernels/cuda.py")


if STRICT:
    for _name in (
        "asarray",
        "asanyarray",
        "array",
        "ascontiguousarray",
        "asfortranarray",
        "asarray_chkfinite",
    ):
        setattr(np, _name, _refuse_conversion(getattr(np, _name)))


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
        return _np_array(self.view(np.ndarray))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if _checking():
            _refuse_host(f"numpy.{ufunc.__name__}.{method}", inputs, kwargs)
        args = [_to_ndarray(a) for a in inputs]
        outs = kwargs.get("out")
        if outs is not None:
            kwargs["out"] = tuple(_to_ndarray(o) for o in outs)
        if "where" in kwargs:
            kwargs["where"] = _to_ndarray(kwargs["where"])
        with _nested():
            result = getattr(ufunc, method)(*args, **kwargs)
        if method == "at":
            return None
        if outs is not None:  # the outputs given, as they were given
            results = result if isinstance(result, tuple) else (result,)
            given = tuple(
                o if o is not None else _to_device(r) for o, r in zip(outs, results, strict=True)
            )
            return given if isinstance(result, tuple) else given[0]
        return _to_device(result)

    def __array_function__(self, func, types, args, kwargs):
        if _checking():
            _refuse_host(f"numpy.{func.__name__}", args, kwargs)
        with _nested():
            result = super().__array_function__(func, types, args, kwargs)
        if result is NotImplemented:
            return result
        return _to_device(result)

    def dot(self, b, out=None):
        if _checking():
            _refuse_host("ndarray.dot", (b,))
        with _nested():
            return _to_device(np.dot(self.view(np.ndarray), _to_ndarray(b), out=out))

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
        if STRICT:
            if name == "asnumpy":
                return lambda a, *args, **kwargs: (
                    a.get() if isinstance(a, FakeDeviceArray) else _np_asarray(a, *args, **kwargs)
                )
            return _strict_attribute(getattr(np, name), name)
        return getattr(np, name)

    @property
    def fft(self):
        return _StrictNamespace(np.fft, "fft") if STRICT else np.fft

    def get_default_memory_pool(self):
        return self.pool

    def asarray(self, a, dtype=None):
        with _nested():
            if STRICT and not isinstance(a, FakeDeviceArray):  # a copy to the device
                return _np_array(a, dtype=dtype).view(FakeDeviceArray)
            return _np_asarray(a, dtype=dtype).view(FakeDeviceArray)

    def empty(self, shape, dtype=float):
        return np.empty(shape, dtype=dtype).view(FakeDeviceArray)

    def ascontiguousarray(self, a, dtype=None):
        with _nested():
            if STRICT and not isinstance(a, FakeDeviceArray):  # a copy to the device
                return _np_array(a, dtype=dtype, order="C").view(FakeDeviceArray)
            return _np_ascontiguousarray(a, dtype=dtype).view(FakeDeviceArray)


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
