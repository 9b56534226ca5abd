"""Tests of lmu_sk.datasets on small files and series the tests make themselves."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import os
import struct
import threading
import urllib.error
from pathlib import Path

import numpy as np
import pytest

from lmu_sk import _memory as memory_module
from lmu_sk import datasets
from lmu_sk._memory import MemoryBudgetError
from lmu_sk.datasets import (
    ChecksumMismatchError,
    get_data_home,
    load_psmnist,
    mackey_glass,
    mackey_glass_forecasting,
    nrmse,
    read_idx,
)

IDX_TYPE_CODES = {
    np.dtype(np.uint8): 0x08,
    np.dtype(np.int8): 0x09,
    np.dtype(np.int16): 0x0B,
    np.dtype(np.int32): 0x0C,
    np.dtype(np.float32): 0x0D,
    np.dtype(np.float64): 0x0E,
}


def idx_bytes(array: np.ndarray) -> bytes:
    """Encode ``array`` in the idx format, written out field by field."""
    header = bytes([0, 0, IDX_TYPE_CODES[array.dtype], array.ndim])
    header += b"".join(struct.pack(">I", size) for size in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path: Path, array: np.ndarray, compress: bool = True) -> Path:
    data = idx_bytes(array)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def write_fake_mnist(folder: Path, n_train: int, n_test: int, rows=28, cols=28, seed=0):
    """Four MNIST-named files with random images; returns the arrays written."""
    rng = np.random.default_rng(seed)
    arrays = {
        "train_images": rng.integers(0, 256, size=(n_train, rows, cols), dtype=np.uint8),
        "train_labels": rng.integers(0, 10, size=n_train, dtype=np.uint8),
        "test_images": rng.integers(0, 256, size=(n_test, rows, cols), dtype=np.uint8),
        "test_labels": rng.integers(0, 10, size=n_test, dtype=np.uint8),
    }
    folder.mkdir(parents=True, exist_ok=True)
    for role, array in arrays.items():
        write_idx(folder / datasets.MNIST_FILES[role][0], array)
    return arrays


@pytest.fixture
def fake_mnist(tmp_path):
    folder = tmp_path / "mnist"
    return folder, write_fake_mnist(folder, n_train=12, n_test=5)


@pytest.fixture
def fake_checksums(monkeypatch, fake_mnist):
    """Make the loader expect the fake files' checksums."""
    folder, _ = fake_mnist
    for role, (name, _) in list(datasets.MNIST_FILES.items()):
        digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        monkeypatch.setitem(datasets.MNIST_FILES, role, (name, digest))
    return folder


# ----------------------------------------------------------------------------------------------
# idx parsing
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize(
    "array",
    [
        np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28),
        np.array([7, 0, 9, 1], dtype=np.uint8),
        np.array([[-5, 70000], [3, -1]], dtype=np.int32),
        np.linspace(-1, 1, 6).reshape(2, 3),
        np.array([-3, 4], dtype=np.int16),
        np.array([1.5, -2.25], dtype=np.float32),
    ],
    ids=["images", "labels", "int32", "float64", "int16", "float32"],
)
def test_read_idx_round_trip(tmp_path, array, compress):
    path = write_idx(tmp_path / "data.idx", array, compress=compress)
    result = read_idx(path)
    assert result.dtype == array.dtype
    assert result.dtype.isnative
    np.testing.assert_array_equal(result, array)


def test_read_idx_truncated_values(tmp_path):
    data = idx_bytes(np.zeros((3, 28, 28), dtype=np.uint8))
    path = tmp_path / "short.gz"
    path.write_bytes(gzip.compress(data[:-10]))
    with pytest.raises(ValueError, match=r"truncated.*\(3, 28, 28\)"):
        read_idx(path)


def test_read_idx_truncated_header(tmp_path):
    data = idx_bytes(np.zeros((3, 28, 28), dtype=np.uint8))
    for cut in (2, 9):
        path = tmp_path / f"header{cut}"
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="truncated"):
            read_idx(path)


def test_read_idx_truncated_gzip_stream(tmp_path):
    compressed = gzip.compress(idx_bytes(np.arange(2000, dtype=np.int32)))
    path = tmp_path / "cut.gz"
    path.write_bytes(compressed[: len(compressed) // 2])
    with pytest.raises(ValueError, match="gzip"):
        read_idx(path)


def test_read_idx_wrong_magic(tmp_path):
    path = tmp_path / "not-idx"
    path.write_bytes(b"PK\x03\x04 this is a zip archive, not idx")
    with pytest.raises(ValueError, match="magic number is 0x504B0304"):
        read_idx(path)


def test_read_idx_trailing_bytes(tmp_path):
    path = tmp_path / "long"
    path.write_bytes(idx_bytes(np.zeros(4, dtype=np.uint8)) + b"\x00")
    with pytest.raises(ValueError, match="1 bytes after"):
        read_idx(path)


# ----------------------------------------------------------------------------------------------
# psMNIST
# ----------------------------------------------------------------------------------------------


def expected_sequences(images, indices, pixel_order):
    """Sequence by sequence, step by step: step t of sequence i is pixel pixel_order[t]."""
    out = np.empty((len(indices), len(pixel_order)), dtype=np.float32)
    for row, index in enumerate(indices):
        flat = images[index].ravel()
        for step, pixel in enumerate(pixel_order):
            out[row, step] = np.float32(flat[pixel]) / np.float32(255)
    return out


def test_psmnist_recipe_matches_independent_computation(fake_mnist):
    folder, arrays = fake_mnist
    data = load_psmnist(folder)

    rng = np.random.RandomState(50)
    sample_perm = rng.permutation(12)
    pixel_order = rng.permutation(784)
    n_val = 2  # 12 // 6, as 10 000 of 60 000
    train_idx, val_idx = sample_perm[: 12 - n_val], sample_perm[12 - n_val :]

    np.testing.assert_array_equal(data.permutation, pixel_order)
    np.testing.assert_array_equal(data.sample_permutation, sample_perm)
    images, labels = arrays["train_images"], arrays["train_labels"]
    np.testing.assert_array_equal(data.X_train, expected_sequences(images, train_idx, pixel_order))
    np.testing.assert_array_equal(data.X_val, expected_sequences(images, val_idx, pixel_order))
    np.testing.assert_array_equal(
        data.X_test, expected_sequences(arrays["test_images"], range(5), pixel_order)
    )
    np.testing.assert_array_equal(data.y_train, labels[train_idx])
    np.testing.assert_array_equal(data.y_val, labels[val_idx])
    np.testing.assert_array_equal(data.y_test, arrays["test_labels"])
    assert data.X_train.dtype == np.float32 and data.y_train.dtype == np.int64
    assert data.X_train.shape == (10, 784) and data.X_val.shape == (2, 784)
    assert data.data_home == str(folder)


def test_psmnist_seed_dtype_and_return_x_y(fake_mnist):
    folder, _ = fake_mnist
    default = load_psmnist(folder)
    other = load_psmnist(folder, permutation_seed=7, dtype=np.float64, n_validation=3)
    rng = np.random.RandomState(7)
    rng.permutation(12)
    np.testing.assert_array_equal(other.permutation, rng.permutation(784))
    assert other.X_train.dtype == np.float64 and other.X_val.shape == (3, 784)
    assert not np.array_equal(default.permutation, other.permutation)

    arrays = load_psmnist(folder, return_X_y=True)
    keys = ["X_train", "y_train", "X_val", "y_val", "X_test", "y_test"]
    for array, key in zip(arrays, keys, strict=True):
        np.testing.assert_array_equal(array, default[key])


@pytest.mark.parametrize("n_validation", [0, 12])
def test_psmnist_split_of_no_images_is_empty_not_a_reshape_error(fake_mnist, n_validation):
    """n_validation=0 (every training image for training) and n_validation=n_train are in
    the documented range: the empty split has shape (0, 784), not NumPy's "cannot reshape
    array of size 0"."""
    folder, _ = fake_mnist
    data = load_psmnist(folder, n_validation=n_validation)
    assert data.X_val.shape == (n_validation, 784)
    assert data.X_train.shape == (12 - n_validation, 784)
    assert len(data.y_val) == n_validation and len(data.y_train) == 12 - n_validation


def test_psmnist_split_sizes_for_60000_training_images(tmp_path):
    # Tiny 2x2 images keep the full-size count cheap.
    write_fake_mnist(tmp_path, n_train=60000, n_test=10000, rows=2, cols=2)
    data = load_psmnist(tmp_path)
    assert data.X_train.shape == (50000, 4)
    assert data.X_val.shape == (10000, 4)
    assert data.X_test.shape == (10000, 4)
    rng = np.random.RandomState(50)
    assert np.array_equal(data.sample_permutation, rng.permutation(60000))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"permutation_seed": np.nan}, TypeError, "permutation_seed"),
        ({"permutation_seed": 2.5}, TypeError, "permutation_seed"),
        ({"permutation_seed": -1}, ValueError, "permutation_seed"),
        ({"permutation_seed": 2**32}, ValueError, "permutation_seed must be below 2"),
        ({"n_validation": 2.5}, TypeError, "n_validation"),
        ({"n_validation": np.nan}, TypeError, "n_validation"),
        ({"n_validation": -1}, ValueError, "n_validation"),
        ({"download": "no"}, TypeError, "download"),
        ({"return_X_y": "yes"}, TypeError, "return_X_y"),
    ],
)
def test_psmnist_validates_parameters_before_touching_files(tmp_path, kwargs, error, match):
    # the folder is empty: a FileNotFoundError here would mean the check came too late
    with pytest.raises(error, match=match):
        load_psmnist(tmp_path, **kwargs)


def test_psmnist_rejects_label_count_mismatch(fake_mnist):
    folder, _ = fake_mnist
    write_idx(folder / "train-labels-idx1-ubyte.gz", np.zeros(11, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"12 images but .* 11 labels"):
        load_psmnist(folder)


def test_psmnist_rejects_wrong_kind_of_file(fake_mnist):
    folder, _ = fake_mnist
    write_idx(folder / "t10k-images-idx3-ubyte.gz", np.zeros((5, 784), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"shape \(n, rows, cols\)"):
        load_psmnist(folder)


def test_psmnist_truncated_file(fake_mnist):
    folder, _ = fake_mnist
    path = folder / "train-images-idx3-ubyte.gz"
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes())[:5000]))
    with pytest.raises(ValueError, match="truncated"):
        load_psmnist(folder)


def test_missing_files_message(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        load_psmnist(tmp_path)
    message = str(info.value)
    assert str(tmp_path) in message
    assert "train-images-idx3-ubyte.gz" in message
    assert "data_home" in message and "LMU_SK_DATA" in message and "download=True" in message


def test_data_home_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv("LMU_SK_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert get_data_home() == tmp_path / "cache" / "lmu_sk" / "mnist"
    monkeypatch.setenv("LMU_SK_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    with pytest.raises(FileNotFoundError, match="LMU_SK_DATA"):
        load_psmnist()


def test_loads_from_environment_variable(fake_mnist, monkeypatch):
    folder, _ = fake_mnist
    monkeypatch.setenv("LMU_SK_DATA", str(folder))
    assert load_psmnist().X_train.shape == (10, 784)


# ----------------------------------------------------------------------------------------------
# Downloading (never the real network)
# ----------------------------------------------------------------------------------------------


class FakeTransport:
    """Serves files from a folder by the last part of the URL and records the requests."""

    def __init__(self, folder: Path, corrupt: bool = False):
        self.folder = folder
        self.corrupt = corrupt
        self.requested: list[str] = []

    def __call__(self, url, destination, timeout=60.0):
        self.requested.append(url)
        data = (self.folder / url.rsplit("/", 1)[1]).read_bytes()
        if self.corrupt:
            data = data[:10] + bytes([data[10] ^ 0xFF]) + data[11:]
        destination.write(data)


def test_download_through_transport(fake_checksums, tmp_path, monkeypatch):
    source = fake_checksums
    transport = FakeTransport(source)
    monkeypatch.setattr(datasets, "_http_get", transport)
    cache = tmp_path / "cache" / "nested"
    data = load_psmnist(cache, download=True, base_url="https://mirror.invalid/mnist/")

    names = [name for name, _ in datasets.MNIST_FILES.values()]
    assert sorted(transport.requested) == sorted(
        f"https://mirror.invalid/mnist/{n}" for n in names
    )
    for name in names:
        assert (cache / name).read_bytes() == (source / name).read_bytes()
    assert sorted(p.name for p in cache.iterdir()) == sorted(names)  # no partial files left
    np.testing.assert_array_equal(data.X_train, load_psmnist(source).X_train)

    # Present files are not fetched again.
    (cache / names[0]).unlink()
    transport.requested.clear()
    load_psmnist(cache, download=True, base_url="https://mirror.invalid/mnist")
    assert transport.requested == [f"https://mirror.invalid/mnist/{names[0]}"]


def test_download_checksum_mismatch(fake_checksums, tmp_path, monkeypatch):
    monkeypatch.setattr(datasets, "_http_get", FakeTransport(fake_checksums, corrupt=True))
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumMismatchError, match="SHA-256"):
        load_psmnist(cache, download=True)
    assert list(cache.iterdir()) == []  # neither the file nor its partial download is kept


def test_download_network_error(fake_checksums, tmp_path, monkeypatch):
    def unreachable(url, destination, timeout=60.0):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(datasets, "_http_get", unreachable)
    with pytest.raises(OSError, match=r"Could not download .*no route to host"):
        load_psmnist(tmp_path / "cache", download=True, base_url="http://127.0.0.1:9")
    assert list((tmp_path / "cache").iterdir()) == []


def test_embedded_checksums_are_sha256_digests():
    for name, digest in datasets.MNIST_FILES.values():
        assert name.endswith("-ubyte.gz")
        assert len(digest) == 64 and int(digest, 16) >= 0


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def local_server(fake_checksums):
    handler = functools.partial(QuietHandler, directory=str(fake_checksums))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_download_from_local_http_server(local_server, fake_checksums, tmp_path):
    data = load_psmnist(tmp_path / "cache", download=True, base_url=local_server + "/")
    np.testing.assert_array_equal(data.X_test, load_psmnist(fake_checksums).X_test)


def test_download_http_error(local_server, tmp_path):
    with pytest.raises(OSError, match="404"):
        load_psmnist(tmp_path / "cache", download=True, base_url=local_server + "/missing")


# ----------------------------------------------------------------------------------------------
# Mackey-Glass
# ----------------------------------------------------------------------------------------------


def heun_mackey_glass(t_end, step, x0=1.2, tau=17.0):
    """Independent check: Heun's method with the delayed values on the grid, O(step^2)."""
    lag = round(tau / step)
    n_steps = round(t_end / step)
    x = np.full(lag + n_steps + 1, x0)

    def rate(current, delayed):
        return 0.2 * delayed / (1.0 + delayed**10) - 0.1 * current

    for k in range(lag, lag + n_steps):
        slope = rate(x[k], x[k - lag])
        predicted = x[k] + step * slope
        x[k + 1] = x[k] + step / 2 * (slope + rate(predicted, x[k - lag + 1]))
    return x[lag:]


def test_mackey_glass_stays_on_the_attractor():
    series = mackey_glass(3000)
    assert series.shape == (3000,) and series.dtype == np.float64
    assert 0.2 < series.min() < 0.6 and 1.2 < series.max() < 1.4


def test_mackey_glass_is_deterministic():
    np.testing.assert_array_equal(mackey_glass(500), mackey_glass(500))
    np.testing.assert_array_equal(mackey_glass(500, seed=3), mackey_glass(500, seed=3))
    assert not np.allclose(mackey_glass(500, seed=3), mackey_glass(500, seed=4))


def test_mackey_glass_matches_fine_step_references():
    coarse = mackey_glass(301, discard=0.0)  # x(0), x(1), ..., x(300); dt = 0.1
    assert coarse[0] == 1.2
    # Heun with 20x smaller steps: its own error is about 1e-6 here.
    reference = heun_mackey_glass(300.0, 0.005)[::200]
    np.testing.assert_allclose(coarse, reference, rtol=0, atol=1e-5)
    # The same scheme with 10x smaller steps: fourth order, so the two agree to 1e-7.
    fine = mackey_glass(301, discard=0.0, dt=0.01)
    np.testing.assert_allclose(coarse, fine, rtol=0, atol=1e-7)


def test_mackey_glass_sampling_and_discard():
    dense = mackey_glass(200, discard=0.0)
    sparse = mackey_glass(10, discard=50.0, sample_interval=2.0)
    np.testing.assert_allclose(sparse, dense[50:70:2], rtol=0, atol=1e-12)


def test_mackey_glass_validates_grid():
    with pytest.raises(ValueError, match=r"tau=17\.5 must be a whole multiple of dt=0\.2"):
        mackey_glass(10, tau=17.5, dt=0.2)
    with pytest.raises(ValueError, match="sample_interval"):
        mackey_glass(10, sample_interval=0.25)
    with pytest.raises(ValueError, match="positive"):
        mackey_glass(10, x0=-1.0)
    with pytest.raises(ValueError, match="n_samples"):
        mackey_glass(0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"x0": np.inf}, ValueError, "x0 must be positive and finite"),
        ({"x0": np.nan}, ValueError, "x0 must be positive and finite"),
        ({"history_spread": np.nan, "seed": 0}, ValueError, "history_spread"),
        # x0 - history_spread / 2 < 0 would give negative histories
        ({"history_spread": 10.0, "seed": 0}, ValueError, r"history_spread must lie in \[0, "),
        ({"tau": np.nan}, ValueError, "tau must be positive and finite"),
        ({"tau": "17"}, TypeError, "tau must be a real number"),
        ({"tau": 1e300}, ValueError, "tau=1e\\+300 is .* integration steps"),
        # below one step: the delay would vanish (and the integration never advance)
        ({"tau": 1e-320}, ValueError, "tau=.* must be at least 1 integration step"),
        # below one step: every sample would be the same grid point
        ({"sample_interval": 1e-320}, ValueError, "sample_interval=.* at least 1"),
        ({"dt": 1e-320}, ValueError, "integration steps of dt"),
        ({"gamma": 30.0}, ValueError, "unstable"),
        ({"gamma": 1e300}, ValueError, "unstable"),
        ({"beta": 1e300}, ValueError, "left the range of float64"),
        ({"discard": np.nan}, ValueError, "discard"),
        # a tau of one step: one pass of the integration's loop per step, hours of work
        # at the 1e9 steps allowed (one delay of 17 steps: 5e5 steps in 0.1 s, of tau = dt
        # 11 s)
        ({"tau": 0.1, "dt": 0.1, "sample_interval": 1e6}, ValueError, "spans 4.9e\\+08 delays"),
    ],
)
def test_mackey_glass_validates_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        mackey_glass(50, **kwargs)


def test_mackey_glass_validates_n_samples():
    for bad in (50.0, "50", True):
        with pytest.raises(TypeError, match="n_samples must be an integer"):
            mackey_glass(bad)
    with pytest.raises(ValueError, match="1e\\+16 integration steps"):
        mackey_glass(10**15)
    assert mackey_glass(np.int64(5)).shape == (5,)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((4, 50), {"test_fraction": np.nan}, ValueError, "test_fraction must be a number "),
        ((4, 50), {"test_fraction": np.inf}, ValueError, "strictly between 0 and 1"),
        ((4, 50), {"test_fraction": 1.0}, ValueError, "strictly between 0 and 1"),
        ((4, 50), {"test_fraction": -0.5}, ValueError, "strictly between 0 and 1"),
        ((4, 50), {"test_fraction": "half"}, TypeError, "test_fraction"),
        ((4.5, 50), {}, TypeError, "n_sequences must be an integer"),
        ((1, 50), {}, ValueError, "n_sequences must be an integer >= 2"),
        ((4, 50.5), {}, TypeError, "sequence_length must be an integer"),
        ((4, 0), {}, ValueError, "sequence_length must be an integer >= 1"),
        ((4, 50), {"horizon": 1.5}, TypeError, "horizon must be an integer"),
        ((4, 50), {"horizon": -1}, ValueError, "horizon must be an integer >= 0"),
        ((4, 50), {"squash": "no"}, TypeError, "squash must be True or False"),
        ((4, 50), {"center": None}, TypeError, "center must be True or False"),
        ((4, 50), {"tau": np.nan}, ValueError, "tau must be positive and finite"),
        ((4, 50), {"dt": 1e-300}, ValueError, "integration steps"),
        ((4, 10**12), {}, ValueError, "integration steps"),
    ],
)
def test_forecasting_validates_parameters(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        mackey_glass_forecasting(*args, **kwargs)


def test_forecasting_checks_memory_before_allocating(monkeypatch):
    # 10**12 sequences: the histories alone would be 8 TB
    with pytest.raises(MemoryBudgetError, match="1000000000000 Mackey-Glass series"):
        mackey_glass_forecasting(10**12, 50)
    # the estimate counts every copy the function holds at once: one copy of 64 sequences
    # of 5015 float64 samples is 2.6 MB, so a 5 MB budget is too small and 50 MB enough
    monkeypatch.setattr(memory_module, "available_memory", lambda: 5_000_000)
    with pytest.raises(MemoryBudgetError, match="64 Mackey-Glass series of 5015 samples"):
        mackey_glass_forecasting(64, 5000, dt=1.0, discard=0.0)
    monkeypatch.setattr(memory_module, "available_memory", lambda: 50_000_000)
    assert mackey_glass_forecasting(64, 5000, dt=1.0, discard=0.0).X_train.shape == (32, 5000)


def test_forecasting_targets_are_the_series_shifted_by_horizon():
    data = mackey_glass_forecasting(
        n_sequences=4, sequence_length=300, squash=False, center=False, seed=1
    )
    assert data.X_train.shape == data.y_train.shape == (2, 300)
    assert data.X_test.shape == data.y_test.shape == (2, 300)
    assert data.horizon == 15 and data.offset == 0.0
    np.testing.assert_array_equal(data.y_train[:, :-15], data.X_train[:, 15:])
    np.testing.assert_array_equal(data.y_test[:, :-15], data.X_test[:, 15:])
    # The first sequence is the series of the first random history drawn from the seed.
    series = mackey_glass(315, seed=1)
    np.testing.assert_allclose(data.X_train[0], series[:300], rtol=0, atol=1e-12)
    np.testing.assert_allclose(data.y_train[0], series[15:], rtol=0, atol=1e-12)


def test_forecasting_squash_center_and_split():
    raw = mackey_glass_forecasting(5, 200, test_fraction=0.4, squash=False, center=False)
    data = mackey_glass_forecasting(5, 200, test_fraction=0.4)
    assert data.X_train.shape == (3, 200) and data.X_test.shape == (2, 200)
    np.testing.assert_allclose(data.X_test, np.tanh(raw.X_test - 1) - data.offset, atol=1e-12)
    train_series = np.concatenate([data.X_train, data.y_train[:, -15:]], axis=1)
    assert abs(train_series.mean()) < 1e-12
    assert -0.6 < data.X_train.min() and data.X_train.max() < 0.5
    with pytest.raises(ValueError, match="test_fraction"):
        mackey_glass_forecasting(4, 50, test_fraction=0.0)


# ----------------------------------------------------------------------------------------------
# NRMSE
# ----------------------------------------------------------------------------------------------


def test_nrmse_hand_computation():
    # mean squared error (0 + 1 + 4) / 3, mean square of the targets (1 + 4 + 9) / 3
    assert nrmse([1.0, 2.0, 3.0], [1.0, 1.0, 5.0]) == pytest.approx(np.sqrt(5 / 14))
    assert nrmse([[1.0, -2.0], [3.0, 0.5]], np.zeros((2, 2))) == pytest.approx(1.0)
    assert nrmse([0.5, -0.5], [0.5, -0.5]) == 0.0


def test_nrmse_neither_overflows_nor_underflows():
    # each error equals its target, so the exact answer is 1; the old formula squared
    # 1e200 to inf (giving NaN) and 1e-200 to 0 ("all zeros")
    assert nrmse([1e200, 0.0], [0.0, 0.0]) == 1.0
    assert nrmse([1e-200, 2e-200], [0.0, 0.0]) == 1.0
    assert nrmse([5e-324, 0.0], [0.0, 0.0]) == 1.0  # the smallest subnormal
    # the difference itself overflows: errors of 2e308 against targets of 1e308
    assert nrmse([1e308, -1e308], [-1e308, 1e308]) == 2.0
    # an error beyond the float64 range is infinite, not NaN
    assert nrmse([1e-300], [1e300]) == np.inf


@pytest.mark.parametrize("exponent", [-1000, -600, -100, 100, 600, 900])
def test_nrmse_is_exactly_scale_free(exponent):
    rng = np.random.default_rng(exponent + 1000)
    y_true, y_pred = rng.normal(size=(2, 50))
    reference = nrmse(y_true, y_pred)
    # ordinary values: the hand formula, to a few float64 rounding errors
    direct = np.sqrt(np.mean((y_true - y_pred) ** 2) / np.mean(y_true**2))
    assert reference == pytest.approx(direct, rel=1e-14, abs=0)
    # scaling both by a power of two is exact in float64 (no subnormals for these
    # exponents and values), and so is the function's own rescaling: equal results
    scale = 2.0**exponent
    assert nrmse(y_true * scale, y_pred * scale) == reference


def test_nrmse_rejects_non_real_values():
    with pytest.raises(TypeError, match="y_true must hold real numbers"):
        nrmse([1j, 2.0], [0.0, 0.0])
    with pytest.raises(TypeError, match="y_pred must hold real numbers"):
        nrmse([1.0, 2.0], ["a", "b"])


@pytest.mark.parametrize(
    ("y_true", "y_pred", "match"),
    [
        (np.ones(3), np.ones(4), "same shape"),
        (np.ones((2, 3)), np.ones(6), "same shape"),
        (np.ones(0), np.ones(0), "empty"),
        (np.zeros(3), np.ones(3), "all zeros"),
        (np.array([1.0, np.nan]), np.ones(2), "finite"),
    ],
)
def test_nrmse_rejects_bad_input(y_true, y_pred, match):
    with pytest.raises(ValueError, match=match):
        nrmse(y_true, y_pred)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(dtype="bogus"), ValueError, "dtype must be a floating dtype"),
        (dict(dtype=None), ValueError, "dtype must be a floating dtype"),
        (dict(data_home=5), TypeError, "data_home must be a folder's path"),
        (dict(data_home=".", base_url=5), TypeError, "base_url must be None or a URL"),
    ],
)
def test_psmnist_parameters_are_named(kwargs, error, match):
    """Each was met by a raw message, or (dtype=None) silently gave float64."""
    from lmu_sk.datasets import load_psmnist

    with pytest.raises(error, match=match):
        load_psmnist(**kwargs)


def test_a_negative_seed_is_named():
    from lmu_sk.datasets import mackey_glass_forecasting

    with pytest.raises(ValueError, match="seed must be None, an integer"):
        mackey_glass_forecasting(n_sequences=2, sequence_length=50, seed=-1)


@pytest.mark.parametrize(
    ("seed", "error"), [(1.5, TypeError), (None, TypeError), (True, TypeError), (-1, ValueError)]
)
def test_the_demo_digits_take_an_integer_seed(seed, error):
    """The order is fixed by an integer seed: 1.5 and -1 met NumPy's raw errors, None gave
    another order at every call, True was read as 1."""
    from lmu_sk.demo import load_permuted_digits

    with pytest.raises(error, match="seed must be an integer"):
        load_permuted_digits(seed)
    first, _ = load_permuted_digits(3)
    np.testing.assert_array_equal(first, load_permuted_digits(3)[0])


def test_a_seed_of_another_type_is_a_type_error():
    from lmu_sk.datasets import mackey_glass

    with pytest.raises(TypeError, match="seed must be None, an integer"):
        mackey_glass(200, seed="a")


def test_downloads_get_the_permissions_of_new_files_under_the_umask(
    fake_checksums, tmp_path, monkeypatch
):
    """The downloaded files are created with 0o666 less the umask by the system: the
    umask was read by setting it to 0 process-wide, which let a file another thread made
    meanwhile be world-writable."""
    monkeypatch.setattr(datasets, "_http_get", FakeTransport(fake_checksums))
    umask = os.umask(0o027)
    try:
        with monkeypatch.context() as patched:  # the umask neither set nor read
            patched.setattr(os, "umask", lambda mask: pytest.fail("os.umask called"))
            load_psmnist(tmp_path / "cache", download=True)
    finally:
        os.umask(umask)
    for path in (tmp_path / "cache").iterdir():
        assert path.stat().st_mode & 0o777 == 0o640


def test_a_data_folder_that_is_a_file_or_a_folder_where_a_file_belongs_is_named(
    fake_checksums, tmp_path, monkeypatch
):
    monkeypatch.setattr(datasets, "_http_get", FakeTransport(fake_checksums))
    a_file = tmp_path / "data_home_file"
    a_file.write_text("not a folder")
    for download in (False, True):
        with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
            load_psmnist(a_file, download=download)
    folder = tmp_path / "cache"
    (folder / datasets.MNIST_FILES["train_images"][0]).mkdir(parents=True)
    with pytest.raises(IsADirectoryError, match="where an MNIST file belongs"):
        load_psmnist(folder, download=True)


def test_a_damaged_file_names_the_way_to_download_it_again(tmp_path):
    path = tmp_path / "damaged.gz"
    path.write_bytes(gzip.compress(b"\x00" * 100)[:-8])
    with pytest.raises(ValueError, match=r"Delete it and download it again"):
        read_idx(path)
