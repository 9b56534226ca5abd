"""Host copies split over threads give the values of one ``np.copyto``."""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pytest

from lmu_sk.engine import host_copy


@pytest.fixture
def small_pieces(monkeypatch, several_threads):
    """Pieces of 64 bytes, on every core (at least two): the copies split over threads."""
    monkeypatch.setattr(host_copy, "MIN_BYTES_PER_THREAD", 64)


@pytest.mark.parametrize("source_dtype", [np.float64, np.float32, np.int16])
@pytest.mark.parametrize("n_rows", [1, 2, 7, 100])
def test_rows_copied_on_threads_equal_one_copy(small_pieces, source_dtype, n_rows):
    rng = np.random.default_rng(n_rows)
    source = (rng.standard_normal((n_rows, 13, 3)) * 1e3).astype(source_dtype)
    destination = np.full(source.shape, np.nan, dtype=np.float32)
    expected = np.empty_like(destination)
    np.copyto(expected, source, casting="unsafe")
    host_copy.copy_rows(destination, source)
    assert np.array_equal(destination, expected)  # exact: the same casts, element by element


def test_threads_follow_numba_setting_and_size(small_pieces):
    threads = numba.get_num_threads()
    assert host_copy.copy_threads(10**9, 10**6) == threads
    assert host_copy.copy_threads(10**9, 1) == 1  # one row: one piece
    assert host_copy.copy_threads(100, 10**6) == 1  # 100 bytes: one piece of at least 64
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert host_copy.copy_threads(10**9, 10**6) == 1  # n_jobs=1 in an estimator's call
    finally:
        numba.set_num_threads(before)


def test_a_copy_into_a_strided_view_writes_only_its_rows(small_pieces):
    source = np.arange(60, dtype=np.float64).reshape(20, 3)
    destination = np.zeros((40, 3), dtype=np.float32)
    host_copy.copy_rows(destination[10:30], source)
    assert np.array_equal(destination[10:30], source.astype(np.float32))
    assert not destination[:10].any() and not destination[30:].any()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_copies_on_threads_of_its_own(small_pieces):
    # the child inherits the pool object but none of its threads: without a pool of its
    # own its copy would wait forever
    source = np.arange(4000, dtype=np.float64).reshape(400, 10)
    pool = host_copy._executor()  # the parent's pool, two threads of it started
    for waited in [pool.submit(time.sleep, 0.2) for _ in range(2)]:
        waited.result()
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        result = pool.apply_async(_copy_in_child, (source,))
        assert np.array_equal(result.get(timeout=60), source)


def _copy_in_child(source: np.ndarray) -> np.ndarray:
    host_copy.MIN_BYTES_PER_THREAD = 64  # several threads in the child too
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    destination = np.empty_like(source)
    host_copy.copy_rows(destination, source)
    return destination


def test_copies_from_several_threads_at_once(small_pieces):
    # the estimators' calls may run in threads of the caller's (a GridSearchCV with
    # threads, say): every copy gets its own rows, from the one shared pool
    rng = np.random.default_rng(3)
    sources = [rng.standard_normal((300, 7)) for _ in range(8)]
    destinations = [np.empty_like(a, dtype=np.float32) for a in sources]
    with ThreadPoolExecutor(4) as callers:
        pairs = zip(destinations, sources, strict=True)
        for done in [callers.submit(host_copy.copy_rows, d, s) for d, s in pairs]:
            done.result()
    for d, s in zip(destinations, sources, strict=True):
        assert np.array_equal(d, s.astype(np.float32))
