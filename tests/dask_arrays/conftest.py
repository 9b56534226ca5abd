"""Fixtures of the dask tests (their modules skip when dask is not installed)."""

from __future__ import annotations

import pytest


@pytest.fixture
def sync():
    """Run dask's graphs on the synchronous scheduler."""
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def no_compute():
    """Any computation inside the block fails the test."""
    import dask

    def refuse(*args, **kwargs):
        pytest.fail("a dask computation ran")

    with dask.config.set(scheduler=refuse):
        yield
