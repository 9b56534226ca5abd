"""``numba.cuda`` as lmu_sk imports it: with the NumPy names numba-cuda registers.

numba-cuda 0.30.4 failed every kernel compile under NumPy 2.5.2 on a GPU machine
(``module 'numpy' has no attribute 'row_stack'``). These tests put a stand-in in place of
``numba.cuda``, so that the real one is not imported into the test process (other modules
switch the CUDA simulator on in-process, which needs it not imported yet).
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numba
import numpy as np
import pytest

from lmu_sk.kernels._jit import numba_cuda

REMOVED = "row_stack"  # a string: linters would rewrite ``np.row_stack`` to ``np.vstack``


@pytest.fixture
def stand_in(monkeypatch):
    module = SimpleNamespace(name="numba.cuda stand-in")
    monkeypatch.setitem(sys.modules, "numba.cuda", module)
    monkeypatch.setattr(numba, "cuda", module, raising=False)
    return module


def test_the_removed_alias_is_restored_before_numba_cuda_is_imported(monkeypatch, stand_in):
    monkeypatch.delattr(np, REMOVED, raising=False)  # as in NumPy 2.5
    assert numba_cuda() is stand_in
    assert getattr(np, REMOVED) is np.vstack


def test_a_numpy_that_has_the_name_is_left_alone(monkeypatch, stand_in):
    own = object()
    monkeypatch.setattr(np, REMOVED, own, raising=False)
    assert numba_cuda() is stand_in
    assert getattr(np, REMOVED) is own
