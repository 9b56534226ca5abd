"""The benchmark data of the LMU papers: permuted sequential MNIST and Mackey-Glass.

- :func:`load_psmnist` reads the four original MNIST idx files (downloading them on request)
  and applies the papers' permutation recipe.
- :func:`mackey_glass` integrates the Mackey-Glass delay differential equation;
  :func:`mackey_glass_forecasting` builds the papers' 15-steps-ahead prediction task from it.
- :func:`nrmse` is the papers' error measure for that task.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import math
import numbers
import os
import secrets
import shutil
import struct
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import BinaryIO

import numpy as np
import scipy.signal
from numpy.typing import ArrayLike, DTypeLike
from sklearn.utils import Bunch, check_random_state

from ._memory import check_fits

__all__ = [
    "DATA_HOME_ENV",
    "MNIST_BASE_URL",
    "MNIST_FILES",
    "ChecksumMismatchError",
    "get_data_home",
    "load_psmnist",
    "mackey_glass",
    "mackey_glass_forecasting",
    "nrmse",
    "read_idx",
]

logger = logging.getLogger(__name__)

#: Environment variable naming the folder that holds the four MNIST files.
DATA_HOME_ENV = "LMU_SK_DATA"

#: Where :func:`load_psmnist` downloads from unless given ``base_url``; any mirror serving
#: the four original files under their original names works, the checksums guard the content.
MNIST_BASE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"

#: The four original MNIST files: role -> (file name, SHA-256 of the gzip file).
MNIST_FILES = {
    "train_images": (
        "train-images-idx3-ubyte.gz",
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    ),
    "train_labels": (
        "train-labels-idx1-ubyte.gz",
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    ),
    "test_images": (
        "t10k-images-idx3-ubyte.gz",
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    ),
    "test_labels": (
        "t10k-labels-idx1-ubyte.gz",
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    ),
}

# idx type codes (third byte of the magic number) -> big-endian NumPy dtypes.
_IDX_DTYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"


class ChecksumMismatchError(OSError):
    """A downloaded file's SHA-256 digest differs from the known one."""


# ----------------------------------------------------------------------------------------------
# idx files
# ----------------------------------------------------------------------------------------------


def parse_idx(data: bytes, name: str = "idx data") -> np.ndarray:
    """Decode the bytes of an (uncompressed) idx file.

    The idx format: two zero bytes, a type code byte, a byte with the number of dimensions,
    one big-endian ``uint32`` per dimension, then the values in C order, big-endian.

    Parameters
    ----------
    data : bytes
        The whole file.
    name : str
        How to name the source in error messages.

    Returns
    -------
    array : ndarray
        Native byte order, shape given by the header.

    Raises
    ------
    ValueError
        If the magic number is wrong, or the file is shorter or longer than its header says.
    """
    if len(data) < 4:
        raise ValueError(
            f"{name} is truncated: {len(data)} bytes, while an idx header alone needs at least 4."
        )
    magic = int.from_bytes(data[:4], "big")
    type_code, ndim = data[2], data[3]
    if data[:2] != b"\x00\x00" or type_code not in _IDX_DTYPES:
        raise ValueError(
            f"{name} is not an idx file: its magic number is 0x{magic:08X}, while idx files "
            "start with 0x0000TTNN (TT a type code such as 08 for unsigned bytes, NN the "
            "number of dimensions)."
        )
    header_length = 4 + 4 * ndim
    if len(data) < header_length:
        raise ValueError(
            f"{name} is truncated: its header announces {ndim} dimensions ({header_length} "
            f"header bytes) but the file holds only {len(data)} bytes."
        )
    shape = struct.unpack(f">{ndim}I", data[4:header_length])
    dtype = _IDX_DTYPES[type_code]
    count = math.prod(shape)
    expected = count * dtype.itemsize
    present = len(data) - header_length
    if present < expected:
        raise ValueError(
            f"{name} is truncated: its header announces shape {shape} ({expected} bytes of "
            f"values) but only {present} bytes follow."
        )
    if present > expected:
        raise ValueError(
            f"{name} has {present - expected} bytes after the {expected} bytes of values its "
            f"header (shape {shape}) announces; it is not a valid idx file."
        )
    values = np.frombuffer(data, dtype=dtype, count=count, offset=header_length)
    return values.reshape(shape).astype(dtype.newbyteorder("="))


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an idx file, gzip-compressed (as MNIST is distributed) or not.

    Parameters
    ----------
    path : str or path-like
        The file; compression is recognised from its content, not its name.

    Returns
    -------
    array : ndarray
        Native byte order, shape given by the file's header.

    Raises
    ------
    ValueError
        If the file is a damaged gzip stream or not a well-formed idx file.
    """
    path = Path(path)
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise ValueError(
                f"{path} is a damaged or truncated gzip file: {exc}. Delete it and download "
                "it again (load_psmnist(download=True) fetches the files missing)."
            ) from exc
    return parse_idx(raw, name=str(path))


# ----------------------------------------------------------------------------------------------
# Finding and downloading the MNIST files
# ----------------------------------------------------------------------------------------------


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The folder that holds (or will hold) the four MNIST files.

    In order of precedence: ``data_home`` if given, the environment variable ``LMU_SK_DATA``
    if set, else ``$XDG_CACHE_HOME/lmu_sk/mnist`` (``~/.cache/lmu_sk/mnist`` by default).
    """
    if data_home is not None:
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(
                f"data_home must be a folder's path (a str or path-like); got {data_home!r}."
            )
        return Path(data_home).expanduser()
    from_env = os.environ.get(DATA_HOME_ENV)
    if from_env:
        return Path(from_env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(cache).expanduser() / "lmu_sk" / "mnist"


def _describe_data_home(data_home: str | os.PathLike | None) -> str:
    if data_home is not None:
        return "the data_home argument"
    if os.environ.get(DATA_HOME_ENV):
        return f"the environment variable {DATA_HOME_ENV}"
    return "the default cache folder"


def _http_get(url: str, destination: BinaryIO, timeout: float = 60.0) -> None:
    """Copy the body of ``url`` into the open binary file ``destination``."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        shutil.copyfileobj(response, destination, length=1 << 20)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _new_partial_file(target: Path) -> tuple[int, Path]:
    """A new hidden file beside ``target``, opened for writing, with the permissions of any
    newly created file (``0o666`` less the umask, which the system applies: reading the
    umask means setting it, process-wide, and another thread could create a file in
    between; ``tempfile.mkstemp`` makes files only their owner can read)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        partial = target.parent / f".{target.name}.{secrets.token_hex(6)}.part"
        try:
            return os.open(partial, flags, 0o666), partial
        except FileExistsError:  # (a name drawn twice: draw again)
            continue


def _download(url: str, target: Path, expected_sha256: str) -> None:
    """Download ``url`` to ``target`` atomically, keeping it only if the checksum matches."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = _new_partial_file(target)
    try:
        with os.fdopen(fd, "wb") as f:
            try:
                _http_get(url, f)
            except (urllib.error.URLError, OSError) as exc:
                raise OSError(
                    f"Could not download {url}: {exc}. Check the connection, pass base_url= "
                    "a mirror of the MNIST files, or put the files in the data folder by hand."
                ) from exc
        digest = _sha256(partial)
        if digest != expected_sha256:
            raise ChecksumMismatchError(
                f"The file downloaded from {url} has SHA-256 {digest}, not the expected "
                f"{expected_sha256}; it was discarded. The mirror may serve a different or "
                "damaged file: try again, or pass base_url= another mirror."
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _ensure_mnist_files(
    data_home: str | os.PathLike | None, download: bool, base_url: str | None
) -> dict[str, Path]:
    if base_url is not None and not isinstance(base_url, str):
        raise TypeError(f"base_url must be None or a URL (a str); got {base_url!r}.")
    folder = get_data_home(data_home)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(
            f"The MNIST data folder {folder} (from {_describe_data_home(data_home)}) is a "
            "file, not a folder: point it at a folder (data_home=, or the environment "
            f"variable {DATA_HOME_ENV})."
        )
    paths = {role: folder / name for role, (name, _) in MNIST_FILES.items()}
    for path in paths.values():
        if path.exists() and not path.is_file():
            raise IsADirectoryError(
                f"{path} is not a file (a folder?) where an MNIST file belongs: remove or "
                "rename it."
            )
    missing = [role for role, path in paths.items() if not path.is_file()]
    if missing and not download:
        names = ", ".join(MNIST_FILES[role][0] for role in missing)
        raise FileNotFoundError(
            f"MNIST files missing in {folder} (from {_describe_data_home(data_home)}): {names}. "
            f"To fix: pass data_home= the folder holding the four MNIST idx .gz files, set the "
            f"environment variable {DATA_HOME_ENV} to it, or call load_psmnist(download=True) "
            f"to download them into {folder}."
        )
    base = (MNIST_BASE_URL if base_url is None else base_url).rstrip("/")
    for role in missing:
        name, sha256 = MNIST_FILES[role]
        url = f"{base}/{name}"
        logger.info("Downloading %s to %s", url, paths[role])
        _download(url, paths[role], sha256)
    return paths


# ----------------------------------------------------------------------------------------------
# Permuted sequential MNIST
# ----------------------------------------------------------------------------------------------


def _read_image_label_pair(images_path: Path, labels_path: Path) -> tuple[np.ndarray, np.ndarray]:
    images = read_idx(images_path)
    labels = read_idx(labels_path)
    if images.ndim != 3 or images.dtype != np.uint8:
        raise ValueError(
            f"{images_path} should hold unsigned-byte images of shape (n, rows, cols); it holds "
            f"{images.dtype} values of shape {images.shape}."
        )
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise ValueError(
            f"{labels_path} should hold one unsigned-byte label per image; it holds "
            f"{labels.dtype} values of shape {labels.shape}."
        )
    if labels.shape[0] != images.shape[0]:
        raise ValueError(
            f"{images_path} holds {images.shape[0]} images but {labels_path} holds "
            f"{labels.shape[0]} labels."
        )
    return images, labels


def _as_sequences(images: np.ndarray, pixel_order: np.ndarray, dtype: np.dtype) -> np.ndarray:
    # the pixels' count from the order, not -1: a split of zero images reshapes too
    sequences = images.reshape(len(images), len(pixel_order))[:, pixel_order].astype(dtype)
    sequences /= 255
    return sequences


def load_psmnist(
    data_home: str | os.PathLike | None = None,
    *,
    permutation_seed: int = 50,
    n_validation: int | None = None,
    download: bool = False,
    base_url: str | None = None,
    dtype: DTypeLike = np.float32,
    return_X_y: bool = False,
) -> Bunch | tuple[np.ndarray, ...]:
    """Permuted sequential MNIST, split as in the LMU papers.

    The recipe (that of Chandar et al. 2019, reused by both LMU papers), for ``n`` training
    images of ``p`` pixels each::

        rng = np.random.RandomState(permutation_seed)
        sample_perm = rng.permutation(n)       # shuffles the training images
        seq_perm = rng.permutation(p)          # the pixel order shared by every sequence
        train = sample_perm[:n - n_validation], validation = sample_perm[n - n_validation:]

    The test set is every test image in file order. Each image becomes the sequence of its
    pixels in row-major order, reordered by ``seq_perm``, scaled by ``1 / 255`` and nothing
    else. With the original files this gives 50 000 / 10 000 / 10 000 sequences of 784 steps.

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder holding ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
        ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz``. Defaults to the
        environment variable ``LMU_SK_DATA``, else ``~/.cache/lmu_sk/mnist``
        (see :func:`get_data_home`). Downloads go to this folder too.
    permutation_seed : int, default=50
        Seed of the ``RandomState`` drawing both permutations; 50 is the papers'.
    n_validation : int, optional
        Number of training images held out for validation; defaults to ``n // 6``, which is
        the papers' 10 000 for the 60 000 MNIST training images.
    download : bool, default=False
        Download missing files from ``base_url`` (checking their SHA-256 checksums) instead of
        raising :class:`FileNotFoundError`. Files already present are used as they are.
    base_url : str, optional
        Mirror to download from; defaults to :data:`MNIST_BASE_URL`.
    dtype : dtype, default=np.float32
        Floating dtype of the sequences.
    return_X_y : bool, default=False
        Return ``(X_train, y_train, X_val, y_val, X_test, y_test)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``X_train``, ``X_val``, ``X_test`` of shape ``(n_i, p)`` and ``dtype``; ``y_train``,
        ``y_val``, ``y_test`` as int64 class labels; ``permutation`` (``seq_perm``, the pixel
        order: step ``t`` of every sequence is pixel ``permutation[t]``); ``sample_permutation``
        (``sample_perm``); ``data_home``; ``DESCR``.

    Raises
    ------
    FileNotFoundError
        If files are missing and ``download`` is False.
    ChecksumMismatchError
        If a downloaded file is not the expected one.
    TypeError
        If ``permutation_seed`` or ``n_validation`` is not an integer, ``download`` or
        ``return_X_y`` not a bool, ``data_home`` not a path or ``base_url`` not a str.
    ValueError
        If a file is truncated or not an idx file of the expected kind, or a parameter is
        out of range.
    """
    try:
        dtype = np.dtype(dtype) if dtype is not None else None
    except TypeError as error:
        raise ValueError(
            f"dtype must be a floating dtype, e.g. 'float32'; got {dtype!r}."
        ) from error
    if dtype is None or not np.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype must be a floating dtype, e.g. 'float32'; got {dtype!r}.")
    permutation_seed = _check_integer(permutation_seed, "permutation_seed", 0)
    if permutation_seed >= 2**32:
        raise ValueError(
            f"permutation_seed must be below 2**32 (a RandomState seed); got {permutation_seed}."
        )
    if n_validation is not None:
        n_validation = _check_integer(n_validation, "n_validation", 0)
    download = _check_bool(download, "download")
    return_X_y = _check_bool(return_X_y, "return_X_y")
    paths = _ensure_mnist_files(data_home, download, base_url)
    train_images, train_labels = _read_image_label_pair(
        paths["train_images"], paths["train_labels"]
    )
    test_images, test_labels = _read_image_label_pair(paths["test_images"], paths["test_labels"])
    if train_images.shape[1:] != test_images.shape[1:]:
        raise ValueError(
            f"Training images are {train_images.shape[1:]} pixels but test images are "
            f"{test_images.shape[1:]}."
        )
    n_train = train_images.shape[0]
    if n_validation is None:
        n_validation = n_train // 6
    if not 0 <= n_validation <= n_train:
        raise ValueError(f"n_validation must lie in [0, {n_train}]; got {n_validation}.")
    n_pixels = math.prod(train_images.shape[1:])

    rng = np.random.RandomState(permutation_seed)
    sample_perm = rng.permutation(n_train)
    seq_perm = rng.permutation(n_pixels)
    train_index = sample_perm[: n_train - n_validation]
    val_index = sample_perm[n_train - n_validation :]

    X_train = _as_sequences(train_images[train_index], seq_perm, dtype)
    X_val = _as_sequences(train_images[val_index], seq_perm, dtype)
    X_test = _as_sequences(test_images, seq_perm, dtype)
    y_train = train_labels[train_index].astype(np.int64)
    y_val = train_labels[val_index].astype(np.int64)
    y_test = test_labels.astype(np.int64)
    if return_X_y:
        return X_train, y_train, X_val, y_val, X_test, y_test
    return Bunch(
        X_train=X_train,
        y_train=y_train,
        X_val=X_val,
        y_val=y_val,
        X_test=X_test,
        y_test=y_test,
        permutation=seq_perm,
        sample_permutation=sample_perm,
        data_home=str(get_data_home(data_home)),
        DESCR=(
            f"Permuted sequential MNIST: {X_train.shape[0]} training, {X_val.shape[0]} "
            f"validation and {X_test.shape[0]} test sequences of {n_pixels} pixels in "
            f"[0, 1], pixel order and training shuffle from RandomState({permutation_seed})."
        ),
    )


# ----------------------------------------------------------------------------------------------
# Mackey-Glass
# ----------------------------------------------------------------------------------------------


# integration steps of one call: beyond this, minutes of work
_MAX_INTEGRATION_STEPS = 1e9
# delay intervals of one series, each a pass of the integration's Python loop (about
# 20 us: 1e7 of them minutes of work whatever dt, for a tau of one step or a few)
_MAX_DELAY_INTERVALS = 1e7

# RK4 applied to x' = -gamma x is stable for gamma * dt below about 2.785 (the root of
# z + z**2 / 2 + z**3 / 6 + z**4 / 24 = 0 on the negative real axis), rounded down here.
_RK4_STABILITY_LIMIT = 2.78


def _check_integer(value: object, name: str, minimum: int) -> int:
    """``value`` as an ``int``, or a TypeError / ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def _check_real(value: object, name: str) -> float:
    """``value`` as a ``float``, or a TypeError naming ``name`` (NaN and inf pass here)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}.")
    return float(value)


def _check_bool(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def _steps(length: float, dt: float, what: str, minimum: int) -> int:
    """``length / dt`` as an integer ``>= minimum``, or a ValueError saying what is wrong."""
    ratio = length / dt
    if not (math.isfinite(ratio) and ratio <= _MAX_INTEGRATION_STEPS):
        raise ValueError(
            f"{what}={length:g} is {ratio:.3g} integration steps of dt={dt:g}, over the "
            f"{_MAX_INTEGRATION_STEPS:.0e} allowed: raise dt or lower {what}."
        )
    count = round(ratio)
    if abs(ratio - count) > 1e-9 * max(1.0, abs(ratio)):
        raise ValueError(f"{what}={length:g} must be a whole multiple of dt={dt:g}.")
    if count < minimum:
        raise ValueError(
            f"{what}={length:g} must be at least {minimum} integration step of dt={dt:g}; "
            f"raise {what} or lower dt."
        )
    return count


def _integrate_mackey_glass(
    history: np.ndarray,
    *,
    delay_steps: int,
    dt: float,
    beta: float,
    gamma: float,
    n: float,
    sample_nodes: np.ndarray,
) -> np.ndarray:
    """RK4 integration of Mackey-Glass for several constant histories at once.

    ``x(t) = history`` for ``t <= 0``; the grid is ``t_k = k dt`` with ``tau = delay_steps dt``,
    so the delayed values at the start and end of every step are grid values. The delayed
    value at the half step is the cubic Hermite interpolant of the two neighbouring grid
    values and their derivatives, accurate to ``O(dt^4)`` like RK4 itself. Derivative
    discontinuities of the solution (at multiples of ``tau``) fall on grid points.

    The delayed values of a whole stretch of ``delay_steps`` steps are known before the
    stretch starts, and given them the equation is linear in ``x``: each RK4 step is
    ``x_{k+1} = a x_k + b_k``, computed for the whole stretch at once by a linear filter.

    Returns
    -------
    samples : ndarray of shape (len(history), len(sample_nodes))
        ``x`` at the grid indices ``sample_nodes`` (sorted, ``>= 0``).
    """

    def feedback(y: np.ndarray) -> np.ndarray:
        return beta * y / (1.0 + y**n)

    m = delay_steps
    z = -gamma * dt
    growth = 1.0 + z + z**2 / 2 + z**3 / 6 + z**4 / 24  # RK4 step of x' = -gamma x
    x_now = np.asarray(history, dtype=np.float64).copy()
    # Grid values and derivatives on the last delay interval: nodes [start - m, start].
    window_x = np.repeat(x_now[:, None], m + 1, axis=1)
    window_dx = np.zeros_like(window_x)  # the history is constant

    samples = np.empty((x_now.shape[0], sample_nodes.shape[0]))
    last_node = int(sample_nodes[-1]) if sample_nodes.size else 0
    start = 0
    taken = 0
    while taken < sample_nodes.size and sample_nodes[taken] == 0:
        samples[:, taken] = x_now
        taken += 1
    while start < last_node:
        left, right = window_x[:, :-1], window_x[:, 1:]
        middle = 0.5 * (left + right) + (dt / 8.0) * (window_dx[:, :-1] - window_dx[:, 1:])
        g_left, g_middle, g_right = feedback(left), feedback(middle), feedback(right)
        # RK4 stages with x = 0: the part of x_{k+1} that does not depend on x_k.
        k1 = g_left
        k2 = g_middle - gamma * (dt / 2) * k1
        k3 = g_middle - gamma * (dt / 2) * k2
        k4 = g_right - gamma * dt * k3
        forcing = (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        new_x, _ = scipy.signal.lfilter(
            [1.0], [1.0, -growth], forcing, axis=1, zi=growth * x_now[:, None]
        )
        start_dx = feedback(window_x[:, 0]) - gamma * x_now  # right derivative at `start`
        new_dx = g_right - gamma * new_x
        while taken < sample_nodes.size and sample_nodes[taken] <= start + m:
            samples[:, taken] = new_x[:, sample_nodes[taken] - start - 1]
            taken += 1
        window_x = np.concatenate([x_now[:, None], new_x], axis=1)
        window_dx = np.concatenate([start_dx[:, None], new_dx], axis=1)
        x_now = new_x[:, -1]
        start += m
    return samples


def _check_positive(**values: object) -> dict[str, float]:
    checked = {}
    for name, value in values.items():
        value = _check_real(value, name)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be positive and finite; got {value!r}.")
        checked[name] = value
    return checked


def _mackey_glass_grid(
    n_series: int,
    n_samples: int,
    *,
    tau: float,
    beta: float,
    gamma: float,
    n: float,
    dt: float,
    sample_interval: float,
    discard: float,
    copies: int,
) -> dict:
    """Validate the settings of ``n_series`` series and check their memory and work.

    Called before anything of the size of the request is allocated. ``copies`` is the
    number of ``(n_series, n_samples)`` float64 arrays the caller holds at once.

    Returns
    -------
    grid : dict
        The checked floats ``beta``, ``gamma``, ``n``, ``dt`` and the integer step counts
        ``delay_steps``, ``every`` and ``first`` for :func:`_mackey_glass_batch`.
    """
    values = _check_positive(
        tau=tau, beta=beta, gamma=gamma, n=n, dt=dt, sample_interval=sample_interval
    )
    discard = _check_real(discard, "discard")
    if not (math.isfinite(discard) and discard >= 0):
        raise ValueError(f"discard must be >= 0 and finite; got {discard!r}.")
    dt = values["dt"]
    if values["gamma"] * dt >= _RK4_STABILITY_LIMIT:
        raise ValueError(
            f"gamma * dt = {values['gamma'] * dt:g} makes the RK4 steps unstable (they need "
            f"gamma * dt < {_RK4_STABILITY_LIMIT}); lower dt or gamma."
        )
    delay_steps = _steps(values["tau"], dt, "tau", minimum=1)
    every = _steps(values["sample_interval"], dt, "sample_interval", minimum=1)
    first = _steps(discard, dt, "discard", minimum=0)
    per_series = first + every * (n_samples - 1) + delay_steps
    if per_series > _MAX_INTEGRATION_STEPS:
        raise ValueError(
            f"A series of {n_samples} samples needs {per_series:.3g} integration steps (over "
            f"the {_MAX_INTEGRATION_STEPS:.0e} allowed): raise dt, or ask for shorter series."
        )
    intervals = math.ceil(per_series / delay_steps)
    if intervals > _MAX_DELAY_INTERVALS:
        raise ValueError(
            f"A series of {n_samples} samples spans {intervals:.3g} delays of tau (the "
            f"integration passes over one at a time; over the {_MAX_DELAY_INTERVALS:.0e} "
            "allowed): ask for shorter series or a larger tau."
        )
    # the integration holds about 16 arrays of one delay interval per series
    check_fits(
        8.0 * n_series * (copies * n_samples + 16 * (delay_steps + 1)),
        f"{n_series} Mackey-Glass series of {n_samples} samples",
        "Ask for fewer or shorter series.",
    )
    total = per_series * n_series
    if total > _MAX_INTEGRATION_STEPS:
        raise ValueError(
            f"These settings need {total:.3g} integration steps (over the "
            f"{_MAX_INTEGRATION_STEPS:.0e} allowed): raise dt, or ask for fewer "
            "or shorter series."
        )
    return {
        "beta": values["beta"],
        "gamma": values["gamma"],
        "n": values["n"],
        "dt": dt,
        "delay_steps": delay_steps,
        "every": every,
        "first": first,
    }


def _mackey_glass_batch(histories: np.ndarray, n_samples: int, grid: dict) -> np.ndarray:
    """Integrate one series per history value on a grid from :func:`_mackey_glass_grid`."""
    nodes = grid["first"] + grid["every"] * np.arange(n_samples)
    with np.errstate(over="ignore", invalid="ignore"):
        samples = _integrate_mackey_glass(
            histories,
            delay_steps=grid["delay_steps"],
            dt=grid["dt"],
            beta=grid["beta"],
            gamma=grid["gamma"],
            n=grid["n"],
            sample_nodes=nodes,
        )
    if not np.all(np.isfinite(samples)):
        raise ValueError(
            f"The Mackey-Glass series left the range of float64 (it reached infinity or NaN) "
            f"with beta={grid['beta']:g}, gamma={grid['gamma']:g}, n={grid['n']:g} and "
            f"dt={grid['dt']:g}; choose parameters nearer the defaults (beta=0.2, gamma=0.1, "
            "n=10) or a smaller dt."
        )
    return samples


def _histories(count: int, x0: object, history_spread: object, seed) -> np.ndarray:
    """Constant history values of ``count`` series (``count`` already budgeted)."""
    x0 = _check_real(x0, "x0")
    if not (math.isfinite(x0) and x0 > 0):
        raise ValueError(f"The initial value x0 must be positive and finite; got {x0!r}.")
    if seed is None:
        return np.full(count, x0)
    history_spread = _check_real(history_spread, "history_spread")
    if not (math.isfinite(history_spread) and 0 <= history_spread < 2 * x0):
        raise ValueError(
            f"history_spread must lie in [0, 2 * x0) = [0, {2 * x0:g}) so that every history "
            f"value x0 +- history_spread / 2 is positive; got {history_spread!r}."
        )
    rng = _random_state(seed)
    return x0 + history_spread * (rng.uniform(size=count) - 0.5)


def _random_state(seed) -> np.random.RandomState:
    """:func:`~sklearn.utils.check_random_state` of ``seed``, with an error naming it
    (NumPy's says "Seed must be between 0 and 2**32 - 1")."""
    message = f"seed must be None, an integer in [0, 2**32) or a RandomState; got {seed!r}."
    usable = seed is None or isinstance(seed, np.random.RandomState)
    if not usable and (
        isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral)
    ):
        raise TypeError(message)
    try:
        return check_random_state(seed)
    except ValueError as error:  # an integer out of range
        raise ValueError(message) from error


def mackey_glass(
    n_samples: int = 5000,
    *,
    tau: float = 17.0,
    beta: float = 0.2,
    gamma: float = 0.1,
    n: float = 10.0,
    dt: float = 0.1,
    sample_interval: float = 1.0,
    x0: float = 1.2,
    discard: float = 500.0,
    history_spread: float = 0.2,
    seed: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """A Mackey-Glass time series.

    Integrates the delay differential equation

    .. math:: \\frac{dx}{dt} = \\beta \\frac{x(t - \\tau)}{1 + x(t - \\tau)^n} - \\gamma x(t)

    with a constant history ``x(t) = x0`` for ``t <= 0`` by the classical Runge-Kutta method
    (RK4) on the grid ``t_k = k dt``. ``tau`` must be a whole multiple of ``dt`` so that the
    delayed values at the ends of every step lie on the grid; the delayed value at the half
    step is the cubic Hermite interpolant of its grid neighbours and their derivatives, so
    the scheme keeps RK4's fourth order. The first ``discard`` time units (the transient
    from the constant history onto the attractor) are dropped and the solution is sampled
    every ``sample_interval`` time units: ``series[i] = x(discard + i * sample_interval)``.

    The defaults are the usual benchmark: ``tau = 17`` (mildly chaotic), ``beta = 0.2``,
    ``gamma = 0.1``, ``n = 10``, one sample per time unit, ten integration steps per sample.
    On the attractor (``tau = 17``) the series stays within about 0.4 to 1.35.

    Parameters
    ----------
    n_samples : int, default=5000
        Length of the returned series.
    tau : float, default=17.0
        The delay, a whole multiple of ``dt``.
    beta, gamma, n : float
        Feedback gain, decay rate and nonlinearity exponent.
    dt : float, default=0.1
        Integration step.
    sample_interval : float, default=1.0
        Time between samples, a whole multiple of ``dt``.
    x0 : float, default=1.2
        Value of the constant history (positive).
    discard : float, default=500.0
        Time integrated before the first sample, a whole multiple of ``dt``.
    history_spread : float, default=0.2
        With a ``seed``, the history value is drawn uniformly from
        ``x0 +- history_spread / 2`` instead of being ``x0``.
    seed : int, RandomState or None, default=None
        None gives the history ``x0`` exactly (no randomness at all); otherwise it seeds the
        draw of the history value, which (the system being chaotic) selects a trajectory.

    Returns
    -------
    series : ndarray of shape (n_samples,), float64

    Raises
    ------
    TypeError
        If ``n_samples`` is not an integer or another parameter not a real number.
    ValueError
        If a parameter is out of range or not a whole multiple of ``dt``, if ``gamma * dt``
        makes the RK4 steps unstable, if the series leaves the float64 range, or if the
        request needs more than a billion integration steps.
    lmu_sk._memory.MemoryBudgetError (a ValueError)
        If the series would not fit in the memory available.
    """
    n_samples = _check_integer(n_samples, "n_samples", 1)
    grid = _mackey_glass_grid(
        1,
        n_samples,
        tau=tau,
        beta=beta,
        gamma=gamma,
        n=n,
        dt=dt,
        sample_interval=sample_interval,
        discard=discard,
        copies=1,
    )
    history = _histories(1, x0, history_spread, seed)
    return _mackey_glass_batch(history, n_samples, grid)[0]


def mackey_glass_forecasting(
    n_sequences: int = 128,
    sequence_length: int = 5000,
    *,
    horizon: int = 15,
    test_fraction: float = 0.5,
    tau: float = 17.0,
    dt: float = 0.1,
    discard: float = 500.0,
    squash: bool = True,
    center: bool = True,
    seed: int | np.random.RandomState | None = 0,
) -> Bunch:
    """The LMU papers' Mackey-Glass task: predict the series ``horizon`` steps ahead.

    The ICML paper on parallelizing LMU training says: predict 15 time-steps into the future;
    sequences of 5000 steps; a DN of ``d = 40``, ``theta = 50`` plus a dense layer; error as
    NRMSE on the test set (0.044). The original LMU paper adds: the parameterized data set of
    the Deep Learning Summer School 2015 (Montreal), with a Mackey-Glass time constant of 17
    steps. Neither text gives the number of sequences, the split or the normalisation; the
    LMU authors' published experiment code makes 128 sequences of 5000 steps with that
    generator (forward Euler with step 0.1, a random history around 1.2, one sample per
    time unit), drops a washout of 100 samples, squashes by ``tanh(x - 1)``, subtracts the
    global mean and splits the sequences half for training, half for testing. This function
    follows that setup with three deliberate differences: the equation is integrated by RK4
    (see :func:`mackey_glass`), the history of each sequence is a random constant in
    ``1.2 +- 0.1`` instead of random values at every step (with a longer transient dropped),
    and the mean removed is that of the training sequences only, so that nothing of the
    test set leaks into the data.

    Each sequence ``s`` (``sequence_length + horizon`` samples, one per time unit, after a
    transient of ``discard`` time units) gives one input window and its targets::

        X[i, t] = s_i[t],    y[i, t] = s_i[t + horizon]    for t < sequence_length

    so the model predicts at every step. The first ``n_sequences - n_test`` sequences are the
    training set, the rest the test set, with ``n_test = round(test_fraction * n_sequences)``.

    Parameters
    ----------
    n_sequences : int, default=128
        Number of independent sequences.
    sequence_length : int, default=5000
        Steps per input window.
    horizon : int, default=15
        How many steps ahead the targets lie.
    test_fraction : float, default=0.5
        Share of the sequences used for testing.
    tau : float, default=17.0
        Mackey-Glass delay.
    dt : float, default=0.1
        Integration step (ten steps per sample).
    discard : float, default=500.0
        Transient dropped at the start of every sequence, in time units.
    squash : bool, default=True
        Apply ``tanh(x - 1)``, which maps the attractor to about ``[-0.55, 0.35]``.
    center : bool, default=True
        Subtract the mean of the training sequences (after squashing).
    seed : int, RandomState or None, default=0
        Seeds the random histories; None draws them from fresh entropy.

    Returns
    -------
    data : Bunch
        ``X_train``, ``y_train`` of shape ``(n_train, sequence_length)``; ``X_test``,
        ``y_test`` of shape ``(n_test, sequence_length)``; ``offset``, the value subtracted
        by ``center`` (0.0 otherwise); ``horizon``; ``DESCR``.

    Raises
    ------
    TypeError
        If ``n_sequences``, ``sequence_length`` or ``horizon`` is not an integer,
        ``test_fraction``, ``tau``, ``dt`` or ``discard`` not a real number, or ``squash``
        or ``center`` not a bool.
    ValueError
        If a parameter is out of range (``test_fraction`` must lie strictly between 0 and
        1 and leave at least one sequence on each side), or as for :func:`mackey_glass`.
    lmu_sk._memory.MemoryBudgetError (a ValueError)
        If the sequences would not fit in the memory available (estimated before anything
        is allocated).
    """
    n_sequences = _check_integer(n_sequences, "n_sequences", 2)
    sequence_length = _check_integer(sequence_length, "sequence_length", 1)
    horizon = _check_integer(horizon, "horizon", 0)
    squash = _check_bool(squash, "squash")
    center = _check_bool(center, "center")
    test_fraction = _check_real(test_fraction, "test_fraction")
    if not 0 < test_fraction < 1:  # False for NaN too
        raise ValueError(
            "test_fraction must be a number strictly between 0 and 1 (the share of the "
            f"sequences held out for testing); got {test_fraction!r}."
        )
    n_test = round(test_fraction * n_sequences)
    if not 1 <= n_test <= n_sequences - 1:
        raise ValueError(
            f"test_fraction={test_fraction} leaves {n_test} of {n_sequences} sequences for "
            "testing; both sets need at least one."
        )
    # the series, its squashed copy and the four contiguous outputs (two series in all)
    grid = _mackey_glass_grid(
        n_sequences,
        sequence_length + horizon,
        tau=tau,
        beta=0.2,
        gamma=0.1,
        n=10.0,
        dt=dt,
        sample_interval=1.0,
        discard=discard,
        copies=4,
    )
    rng = _random_state(seed)
    histories = 1.2 + 0.2 * (rng.uniform(size=n_sequences) - 0.5)
    series = _mackey_glass_batch(histories, sequence_length + horizon, grid)
    if squash:
        series = np.tanh(series - 1.0)
    n_train = n_sequences - n_test
    offset = float(series[:n_train].mean()) if center else 0.0
    series -= offset
    X = series[:, :sequence_length]
    y = series[:, horizon : horizon + sequence_length]
    return Bunch(
        X_train=np.ascontiguousarray(X[:n_train]),
        y_train=np.ascontiguousarray(y[:n_train]),
        X_test=np.ascontiguousarray(X[n_train:]),
        y_test=np.ascontiguousarray(y[n_train:]),
        offset=offset,
        horizon=horizon,
        DESCR=(
            f"Mackey-Glass (tau={tau:g}) forecasting {horizon} steps ahead: {n_train} "
            f"training and {n_test} test sequences of {sequence_length} steps"
            + (", squashed by tanh(x - 1)" if squash else "")
            + (f", centred by {offset:.6f}" if center else "")
            + "."
        ),
    )


def nrmse(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Normalised root mean squared error, the LMU papers' measure for Mackey-Glass.

    ``sqrt(mean((y_true - y_pred) ** 2) / mean(y_true ** 2))`` over all elements, so that
    always predicting 0 scores 1.

    Parameters
    ----------
    y_true, y_pred : array-like of the same shape

    Returns
    -------
    error : float

    Any scale of values works: the norms are taken after an exact power-of-two scaling,
    so values near the limits of float64 (``1e300``, ``1e-300``) neither overflow nor
    underflow. An error beyond the float64 range is returned as ``inf``.

    Raises
    ------
    TypeError
        If either array holds something other than real numbers.
    ValueError
        If the shapes differ, the arrays are empty or hold non-finite values, or
        ``y_true`` is all zeros.
    """
    y_true = _real_array(y_true, "y_true")
    y_pred = _real_array(y_pred, "y_pred")
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"y_true and y_pred must have the same shape; got {y_true.shape} and {y_pred.shape}."
        )
    if y_true.size == 0:
        raise ValueError("nrmse needs at least one value; got empty arrays.")
    if not (np.all(np.isfinite(y_true)) and np.all(np.isfinite(y_pred))):
        raise ValueError("y_true and y_pred must be finite (no NaN or infinity).")
    # The two means cover the same elements, so the ratio is that of two Euclidean norms,
    # each taken after an exact power-of-two scaling: no square overflows or underflows.
    true_norm, true_exponent = _scaled_norm(y_true)
    if true_norm == 0:
        raise ValueError("nrmse is undefined when y_true is all zeros.")
    with np.errstate(over="ignore"):
        error = y_true - y_pred
    halved = not np.all(np.isfinite(error))
    if halved:  # the difference overflows: take half of it, which cannot
        error = 0.5 * y_true - 0.5 * y_pred
    error_norm, error_exponent = _scaled_norm(error)
    exponent = error_exponent - true_exponent + int(halved)
    with np.errstate(over="ignore"):  # an error beyond float64 is reported as inf
        return float(np.ldexp(error_norm / true_norm, exponent))


def _real_array(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a float64 array, or a TypeError (ValueError for ragged nesting)
    naming ``name``."""
    try:
        array = np.asarray(values)
    except ValueError as error:  # ragged: rows of different lengths
        raise ValueError(
            f"{name} must be an array of one shape (rows of equal length); got a ragged "
            f"{type(values).__name__}."
        ) from error
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers; got an array of dtype {array.dtype}.")
    return array.astype(np.float64, copy=False)


def _scaled_norm(values: np.ndarray) -> tuple[float, int]:
    """``(r, e)`` with ``||values||_2 = r * 2**e``, computed without overflow or underflow."""
    largest = float(np.max(np.abs(values)))
    if largest == 0:
        return 0.0, 0
    _, exponent = math.frexp(largest)  # largest = f * 2**exponent with 0.5 <= f < 1
    scaled = np.ldexp(values, -exponent)
    return float(np.sqrt(np.sum(scaled * scaled))), exponent
