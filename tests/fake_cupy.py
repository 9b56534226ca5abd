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
import time
import warnings
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from lmu_sk import _device
from lmu_sk.engine import constants, run

#: ``LMU_SK_TEST_GPU=cupy``: the tests that install a GPU get real CuPy and its GPU
REAL_GPU = os.environ.get("LMU_SK_TEST_GPU", "") == "cupy"

#: The stand-in refuses what real CuPy refuses (on by default; it found a rounding guard
#: that real CuPy would have skipped). Its device array is then *not* a NumPy array
#: (:class:`StrictDeviceArray`, a wrapper around a private ``ndarray``), as CuPy's is not:
#:
#: * ``isinstance(x, np.ndarray)`` is False for it; NumPy's implicit conversions
#:   (``np.asarray``, ``np.array``, a host array indexed with it or assigned from it,
#:   ``host[...] = dev``) raise CuPy's ``TypeError`` through ``__array__``;
#: * ufuncs, NumPy functions and the stand-in's CuPy functions refuse NumPy arrays among
#:   device arrays (CuPy takes Python and NumPy scalars only, and 0-d NumPy arrays in
#:   comparisons), and return device arrays (reductions: 0-d device arrays);
#: * ``dev[basic index] = host array`` raises CuPy's ``ValueError`` (host values reach a
#:   device array through ``cupy.asarray``, ``.set()`` or an advanced index only);
#: * ``operator.index(dev)`` fails (CuPy's arrays have no ``__index__``); ``len``, ``iter``,
#:   ``float``, ``int``, ``bool`` behave as CuPy's;
#: * it has ``__cuda_array_interface__``, and in Numba's CUDA simulator
#:   ``numba.cuda.as_cuda_array`` takes it without a copy, as Numba-CUDA takes CuPy's.
#:
#: ``LMU_SK_STRICT_STAND_IN=0``: the lenient stand-in of before, an ``ndarray`` subclass
#: that mixes silently with NumPy arrays.
STRICT = os.environ.get("LMU_SK_STRICT_STAND_IN", "1") != "0"

_np_asarray = np.asarray
_np_array = np.array

#: copies to the host (``get()``), by shape: shared by both kinds of device array
_TRANSFERS: list = []


@dataclasses.dataclass(frozen=True)
class CupyFlags:
    c_contiguous: bool
    f_contiguous: bool
    owndata: bool


class FakeOutOfMemory(Exception):
    pass


# --------------------------------------------------------------------------- lenient
class _LenientDeviceArray(np.ndarray):
    """The lenient stand-in (``LMU_SK_STRICT_STAND_IN=0``): a NumPy array the stand-in
    treats as device memory; it mixes with NumPy arrays silently."""

    transfers: ClassVar[list] = _TRANSFERS

    def get(self, stream=None, order="C", out=None, blocking=True):
        _TRANSFERS.append(self.shape)
        return _np_array(self.view(np.ndarray), order=order)

    @property
    def data(self):
        return FakePointer(self.view(np.ndarray))

    @property
    def flags(self):
        """CuPy's flags: C- and F-contiguity and ownership, no ``writeable``."""
        flags = super().flags
        return CupyFlags(flags.c_contiguous, flags.f_contiguous, flags.owndata)


_LenientDeviceArray.__module__ = "cupy._fake"


# ---------------------------------------------------------------------------- strict
_SCALARS = (bool, int, float, complex, np.generic)


def _is_device(a) -> bool:
    return isinstance(a, StrictDeviceArray)


def _refuse(where: str, found) -> None:
    detail = f" of shape {found.shape}" if isinstance(found, np.ndarray) else ""
    raise TypeError(
        f"Unsupported type {type(found)} (strict stand-in: {where} mixes a NumPy "
        f"array{detail} with device arrays)"
    )


def _find_host(obj, depth=0):
    """The first NumPy array in ``obj`` (nested in lists, tuples and dicts)."""
    if isinstance(obj, np.ndarray):
        return obj
    if depth < 3 and isinstance(obj, (list, tuple)):
        for a in obj:
            found = _find_host(a, depth + 1)
            if found is not None:
                return found
    if depth < 3 and isinstance(obj, dict):
        return _find_host(list(obj.values()), depth + 1)
    return None


def _unwrap(obj, originals: dict, depth=0):
    """``obj`` with its device arrays replaced by their NumPy arrays (``originals`` maps
    each NumPy array's id back to its device array)."""
    if isinstance(obj, StrictDeviceArray):
        originals[id(obj._a)] = obj
        return obj._a
    if depth < 3 and type(obj) in (list, tuple):
        return type(obj)(_unwrap(a, originals, depth + 1) for a in obj)
    if depth < 3 and type(obj) is dict:
        return {k: _unwrap(v, originals, depth + 1) for k, v in obj.items()}
    return obj


def _wrap(result, originals: dict | None = None):
    """NumPy results as device arrays (scalars as 0-d arrays); an array given in (an
    ``out=``, an input returned as it is) comes back as the device array it was."""
    if isinstance(result, StrictDeviceArray):
        return result
    if isinstance(result, np.ndarray):
        if originals and id(result) in originals:
            return originals[id(result)]
        return StrictDeviceArray._of(result)
    if isinstance(result, np.generic):
        return StrictDeviceArray._of(_np_array(result))
    if isinstance(result, tuple) and hasattr(result, "_fields"):  # named tuples (eigh, ...)
        return type(result)(*(_wrap(r, originals) for r in result))
    if isinstance(result, tuple):
        return tuple(_wrap(r, originals) for r in result)
    if isinstance(result, list):
        return [_wrap(r, originals) for r in result]
    if isinstance(result, np.random.Generator):
        return _StrictNamespace(result, f"random.{type(result).__name__}")
    return result


def _on_host(func, args, kwargs, where: str, allow_host=False, host_positions=(), owner=None):
    """``func`` (NumPy's) computed on the NumPy arrays of device arguments, as CuPy's
    function would be: NumPy arrays refused (unless ``allow_host``), device arrays out
    (``owner``: the device array whose method ``func`` is)."""
    if not allow_host:
        checked = [a for i, a in enumerate(args) if i not in host_positions]
        found = _find_host([checked, kwargs])
        if found is not None:
            _refuse(where, found)
    originals: dict = {} if owner is None else {id(owner._a): owner}
    host_args = _unwrap(tuple(args), originals)
    host_kwargs = _unwrap(dict(kwargs), originals)
    return _wrap(func(*host_args, **host_kwargs), originals)


def _is_advanced(key) -> bool:
    """Whether an index has an array (or list) component: CuPy's advanced indexing."""
    items = key if isinstance(key, tuple) else (key,)
    return any(
        isinstance(k, (list, np.ndarray, StrictDeviceArray)) or isinstance(k, (bool, np.bool_))
        for k in items
    )


def _index(key):
    """An index for the private NumPy array: device arrays in it by their NumPy arrays
    (CuPy takes NumPy and device index arrays alike)."""
    if isinstance(key, tuple):
        return tuple(k._a if isinstance(k, StrictDeviceArray) else k for k in key)
    return key._a if isinstance(key, StrictDeviceArray) else key


# ndarray methods CuPy's ndarray has too: computed on the private array, device arrays out
_METHODS = frozenset(
    """all any argmax argmin argpartition argsort astype choose clip compress conj
    conjugate cumprod cumsum diagonal flatten max mean min nonzero partition prod ptp put
    ravel repeat reshape round sort squeeze std sum swapaxes take trace transpose var
    """.split()
)


class StrictDeviceArray(NDArrayOperatorsMixin):
    """A device array of the strict stand-in: a private NumPy array behind the part of
    ``cupy.ndarray``'s interface lmu_sk uses. Not an ``np.ndarray``: NumPy refuses to
    convert it implicitly, as it refuses CuPy's arrays.

    Its module name starts with ``cupy`` so that lmu_sk takes it for a CuPy array, and
    ``get()`` (a device-to-host copy) records the shape it copies in ``transfers``.
    """

    # (NumPy before 2 gives the mixin no __slots__: its instances have __weakref__ already)
    __slots__ = ("__weakref__", "_a") if "__slots__" in vars(NDArrayOperatorsMixin) else ("_a",)
    __hash__ = None  # type: ignore[assignment]
    transfers: ClassVar[list] = _TRANSFERS

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        if memptr is not None or strides is not None:
            raise NotImplementedError("strict stand-in: cupy.ndarray(memptr=, strides=)")
        self._a = np.empty(shape, dtype=dtype, order=order)

    @classmethod
    def _of(cls, a: np.ndarray) -> StrictDeviceArray:
        self = object.__new__(cls)
        self._a = a
        return self

    # -- attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: StrictDeviceArray._of(self._a.T))
    real = property(lambda self: StrictDeviceArray._of(self._a.real))
    imag = property(lambda self: StrictDeviceArray._of(self._a.imag))

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    @property
    def base(self):
        return None if self._a.base is None else StrictDeviceArray._of(self._a.base)

    @property
    def flags(self):
        """CuPy's flags: C- and F-contiguity and ownership, no ``writeable``."""
        flags = self._a.flags
        return CupyFlags(flags.c_contiguous, flags.f_contiguous, flags.owndata)

    @property
    def data(self):
        return FakePointer(self._a)

    @property
    def device(self):
        return FakeDevice(0)

    @property
    def __cuda_array_interface__(self):
        if REAL_GPU and not _in_cuda_simulator():
            # its memory is the host's: a real Numba-CUDA kernel would read the address
            # as a device pointer, fail with an illegal address and leave the process's
            # CUDA context unusable for every test after it
            raise AttributeError("the CuPy stand-in holds host memory; no real GPU takes it")
        a = self._a
        return {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "descr": a.dtype.descr,
            "data": (a.ctypes.data if a.size else 0, False),
            "strides": None if a.flags.c_contiguous else a.strides,
            "version": 3,
        }

    # -- conversions
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
            "construct a NumPy array explicitly."
        )

    def get(self, stream=None, order="C", out=None, blocking=True):
        _TRANSFERS.append(self.shape)
        if out is not None:
            np.copyto(out, self._a)
            return out
        return _np_array(self._a, order=order)

    def set(self, arr, stream=None):
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray: {type(arr)}")
        if arr.shape != self.shape or arr.dtype != self.dtype:
            raise ValueError("strict stand-in: set() needs the same shape and dtype")
        np.copyto(self._a, arr)

    def item(self, *args):
        return self._a.item(*args)

    def tolist(self):
        return self._a.tolist()

    def tobytes(self, order="C"):
        return self._a.tobytes(order)

    def __int__(self):
        return int(self._a)

    def __float__(self):
        return float(self._a)

    def __complex__(self):
        return complex(self._a)

    def __bool__(self):
        if self.size == 0:
            warnings.warn(
                "The truth value of an empty array is ambiguous. Returning False, but in "
                "future this will result in an error.",
                DeprecationWarning,
                stacklevel=2,
            )
            return False
        if self.size == 1:
            return bool(self._a.reshape(()))
        raise ValueError(
            "The truth value of an array with more than one element is ambiguous. "
            "Use a.any() or a.all()"
        )

    # no __index__: CuPy's arrays have none (``range(dev)``, ``host[dev_scalar]`` fail)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec)

    def __reduce__(self):
        return (_device_array_from_host, (_np_array(self._a),))

    def __copy__(self):
        return StrictDeviceArray._of(self._a.copy())

    def __deepcopy__(self, memo):
        return StrictDeviceArray._of(self._a.copy())

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()

    # -- indexing
    def __getitem__(self, key):
        index = _index(key)
        result = self._a[index]
        if isinstance(result, np.generic):  # CuPy: a 0-d array, a view
            with contextlib.suppress(Exception):
                view = self._a[(*index, Ellipsis) if isinstance(index, tuple) else (index, ...)]
                if isinstance(view, np.ndarray):
                    return StrictDeviceArray._of(view)
        return _wrap(result)

    def __setitem__(self, key, value):
        if isinstance(value, StrictDeviceArray):
            value = value._a
        elif not isinstance(value, _SCALARS) and not _is_advanced(key):
            # CuPy: a host value of a basic index goes through fill(): scalars only
            if np.ndim(value) != 0:
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a[_index(key)] = value

    def fill(self, value):
        if isinstance(value, StrictDeviceArray):
            if value.shape != ():
                raise ValueError("non-scalar cupy.ndarray cannot be used for fill")
            value = value._a
        elif np.ndim(value) != 0:
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a.fill(value)

    # -- methods
    def __getattr__(self, name):
        if name in _METHODS:
            method = getattr(self._a, name)

            @functools.wraps(method)
            def call(*args, **kwargs):
                return _on_host(method, args, kwargs, f"ndarray.{name}", owner=self)

            return call
        raise AttributeError(f"'cupy.ndarray' (strict stand-in) has no attribute '{name}'")

    def copy(self, order="C"):
        return StrictDeviceArray._of(self._a.copy(order=order))

    def view(self, dtype=None, array_class=None):
        if isinstance(dtype, type) and issubclass(dtype, np.ndarray):
            raise TypeError("strict stand-in: a device array has no NumPy view (use get())")
        return StrictDeviceArray._of(self._a if dtype is None else self._a.view(dtype))

    def dot(self, b, out=None):
        return _on_host(np.dot, (self, b), {"out": out} if out is not None else {}, "ndarray.dot")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method not in ("__call__", "outer", "at", "reduce", "accumulate", "reduceat"):
            return NotImplemented
        where = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        if ufunc.__name__ in ("greater", "greater_equal", "less", "less_equal", "equal",
                              "not_equal"):  # fmt: skip
            # CuPy: a 0-d NumPy array compared with a device array is taken as its item
            inputs = tuple(
                x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in inputs
            )
        outs = kwargs.get("out", ())
        for x in (*inputs, *(outs if isinstance(outs, tuple) else (outs,))):
            if x is None or isinstance(x, (StrictDeviceArray, *_SCALARS)):
                continue
            if method == "at" and isinstance(x, (np.ndarray, list, tuple, slice)):
                continue  # indices of ``ufunc.at``
            _refuse(where, x)
        return _on_host(getattr(ufunc, method), inputs, kwargs, where, allow_host=True)

    def __array_function__(self, func, types, args, kwargs):
        for t in types:
            if not issubclass(t, StrictDeviceArray):  # NumPy arrays (CuPy: TypeError)
                found = _find_host([args, kwargs])
                _refuse(f"numpy.{func.__name__}", found if found is not None else t)
        return _on_host(func, args, kwargs, f"numpy.{func.__name__}")

    def __eq__(self, other):
        if other is None or (
            type(other).__eq__ is object.__eq__ and not isinstance(other, StrictDeviceArray)
        ):
            return StrictDeviceArray._of(np.zeros(self.shape, dtype=bool))
        return np.equal(self, other)

    def __ne__(self, other):
        if other is None or (
            type(other).__eq__ is object.__eq__ and not isinstance(other, StrictDeviceArray)
        ):
            return StrictDeviceArray._of(np.ones(self.shape, dtype=bool))
        return np.not_equal(self, other)


StrictDeviceArray.__module__ = "cupy._fake"


def _device_array_from_host(a):
    """Unpickling: a device array from its host copy (CuPy: ``cupy.array``)."""
    return StrictDeviceArray._of(a)


#: The device array of the stand-in installed: strict or lenient
FakeDeviceArray: Any = StrictDeviceArray if STRICT else _LenientDeviceArray


class _StrictUfunc:
    def __init__(self, ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        return _on_host(self._ufunc, args, kwargs, f"cupy.{self._ufunc.__name__}")

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        if not callable(attr):
            return attr
        where = f"cupy.{self._ufunc.__name__}.{name}"

        def method(*args, **kwargs):
            # ``at``'s indices may be host arrays (CuPy converts them)
            positions = (1,) if name == "at" else ()
            return _on_host(attr, args, kwargs, where, host_positions=positions)

        return method


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
    "isscalar",
    "result_type",
    "can_cast",
    "dtype",
    "finfo",
    "iinfo",
    "ndim",
    "shape",
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

    @functools.wraps(attr)
    def function(*args, **kwargs):
        return _on_host(
            attr,
            args,
            kwargs,
            f"cupy.{name}",
            allow_host=short in _CONVERSIONS,
            host_positions=_HOST_POSITIONS.get(short, ()),
        )

    return function


def _host_data(a, depth=0):
    """What ``cupy.asarray`` copies to the device: ``a`` with device arrays (also those in
    lists) and Numba's simulated device arrays by their NumPy arrays."""
    if isinstance(a, StrictDeviceArray):
        return a._a
    if getattr(a, "__cuda_ndarray__", False) and hasattr(a, "_ary"):  # the CUDA simulator
        return a._ary
    if depth < 3 and isinstance(a, (list, tuple)):
        return type(a)(_host_data(x, depth + 1) for x in a)
    return a


# -------------------------------------------------------------------------- pointers
class FakePointer:
    """``cupy.ndarray.data``: copies between host memory and the array's memory."""

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def ptr(self) -> int:
        return self.array.ctypes.data

    def copy_from_host_async(self, source, nbytes, stream=None):
        assert self.array.flags.c_contiguous and 0 < nbytes <= self.array.nbytes
        ctypes.memmove(self.array.ctypes.data, _address(source), nbytes)

    def copy_to_host_async(self, target, nbytes, stream=None):
        assert self.array.flags.c_contiguous and nbytes == self.array.nbytes
        ctypes.memmove(_address(target), self.array.ctypes.data, nbytes)


def _address(pointer) -> int:
    return pointer.value if hasattr(pointer, "value") else int(pointer)


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
            return _strict_attribute(getattr(np, name), name)
        return getattr(np, name)

    @property
    def fft(self):
        return _StrictNamespace(np.fft, "fft") if STRICT else np.fft

    def get_default_memory_pool(self):
        return self.pool

    def get_array_module(self, *args):
        return self if any(isinstance(a, FakeDeviceArray) for a in args) else np

    def asnumpy(self, a, stream=None, order="C", out=None, blocking=True):
        if isinstance(a, FakeDeviceArray):
            return a.get(order=order, out=out)
        return _np_asarray(a, order=order)

    def array(self, obj, dtype=None, copy=True, order="K", subok=False, ndmin=0):
        if not STRICT:
            return _np_array(obj, dtype=dtype, copy=copy, order=order, ndmin=ndmin).view(
                FakeDeviceArray
            )
        if isinstance(obj, StrictDeviceArray) and not copy:
            if (dtype is None or np.dtype(dtype) == obj.dtype) and obj.ndim >= ndmin:
                return obj
        data = _host_data(obj)
        return StrictDeviceArray._of(
            _np_array(data, dtype=dtype, copy=True if copy else None, order=order, ndmin=ndmin)
        )

    def asarray(self, a, dtype=None, order=None, *, blocking=False):
        if not STRICT:
            if not isinstance(a, FakeDeviceArray):
                return _np_array(a, dtype=dtype, order=order).view(FakeDeviceArray)
            return _np_asarray(a, dtype=dtype, order=order).view(FakeDeviceArray)
        if isinstance(a, StrictDeviceArray) or getattr(a, "__cuda_ndarray__", False):
            # on the device already (a CuPy array, a Numba device array): no copy if it fits
            data = _host_data(a)
            converted = _np_asarray(data, dtype=dtype, order=order)
            if converted is data and isinstance(a, StrictDeviceArray):
                return a
            return StrictDeviceArray._of(converted)
        # a copy to the device
        return StrictDeviceArray._of(_np_array(_host_data(a), dtype=dtype, order=order))

    def asanyarray(self, a, dtype=None, order=None):
        return self.asarray(a, dtype=dtype, order=order)

    def ascontiguousarray(self, a, dtype=None):
        self._refuse_host("ascontiguousarray", a)
        return self.asarray(a, dtype=dtype, order="C")

    def asfortranarray(self, a, dtype=None):
        self._refuse_host("asfortranarray", a)
        return self.asarray(a, dtype=dtype, order="F")

    @staticmethod
    def _refuse_host(name: str, a) -> None:
        """CuPy's ``ascontiguousarray`` and ``asfortranarray`` take its own arrays only
        (seen on a GPU: a NumPy array raised this TypeError); ``asarray`` copies."""
        if STRICT and not isinstance(a, StrictDeviceArray):
            raise TypeError(
                f"Argument 'a' has incorrect type (expected cupy._core.core._ndarray_base, "
                f"got {type(a).__module__}.{type(a).__name__}) (strict stand-in: "
                f"cupy.{name})"
            )

    def empty(self, shape, dtype=float, order="C"):
        return self._new(np.empty(shape, dtype=dtype, order=order))

    def _new(self, a):
        return StrictDeviceArray._of(a) if STRICT else a.view(FakeDeviceArray)


def _in_cuda_simulator() -> bool:
    numba = sys.modules.get("numba")
    return numba is not None and bool(getattr(numba.config, "ENABLE_CUDASIM", False))


def _patch_cuda_simulator(monkeypatch) -> None:
    """In Numba's CUDA simulator, ``numba.cuda.as_cuda_array`` (which the simulator
    lacks) takes the stand-in's arrays without a copy, as Numba-CUDA takes CuPy's by their
    ``__cuda_array_interface__``; ``is_cuda_array`` tells them too."""
    if not _in_cuda_simulator():
        return
    from numba import cuda
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    def as_cuda_array(obj, sync=True):
        if isinstance(obj, StrictDeviceArray):
            return FakeCUDAArray(obj._a)
        raise TypeError("*obj* doesn't implement the cuda array interface.")

    monkeypatch.setattr(cuda, "as_cuda_array", as_cuda_array, raising=False)
    monkeypatch.setattr(
        cuda, "is_cuda_array", lambda obj: hasattr(obj, "__cuda_array_interface__"),
        raising=False,
    )  # fmt: skip


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
    if STRICT:
        _patch_cuda_simulator(monkeypatch)
    clear_caches()
    _TRANSFERS.clear()
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
