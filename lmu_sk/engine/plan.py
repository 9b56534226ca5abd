"""The one planner: route, steps per block, FFT length and rows per chunk, by device.

Every choice comes from one cost table per device (:data:`COSTS`) and one set of rules:

* **route** of an output: ``'gemm'`` (final and mean states, one matrix product),
  ``'blocked'`` (block matrix products carrying the state), ``'fft'`` (FFT convolution),
  ``'recurrence'`` (compiled kernels), and for the pooled features ``'pooled_recurrence'``
  (a compiled recurrence that pools as it goes) or ``'pooled_blocked'`` (block products
  pooled block by block);
* **steps per block** ``T``: ``clip(block_work // order, block_min, block_max)``;
* **FFT length**: the smallest even ``2^a 3^b 5^c 7^d >= 2 n - 1``;
* **rows per chunk**: the working memory one sample needs on its route, against the
  memory budget (and on a GPU the free device memory and the pinned host buffers), and
  about :data:`CHUNK_SECONDS` of work by the cost table so that progress has steps, by
  the package's one rows-per-budget rule (:func:`rows_within`).

The cost of a route, per row (one channel of one sample), is its flops at the rate the
table gives for that kind of work plus its memory traffic at the table's bandwidth. The
CPU constants are measured by ``python benchmarks/bench_features.py --calibrate`` (2-core
x86, AVX-512); the GPU ones are an H100's data-sheet rates, untested without a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .._memory import MemoryBudgetError, format_bytes, format_bytes_apart

__all__ = [
    "CHUNK_SECONDS",
    "COSTS",
    "METHODS",
    "MIN_CHUNK_SAMPLES",
    "OUTPUTS",
    "Costs",
    "Plan",
    "block_steps",
    "choose_route",
    "fft_length",
    "kernel_threads",
    "plan_features",
    "plan_pooled",
    "plan_sampled_states",
    "pooled_update_seconds",
    "rows_within",
]

OUTPUTS = ("final", "sequence", "mean", "max")
METHODS = ("auto", "gemm", "fft", "recurrence")

# Chunks hold about this many seconds of work by the cost table (and at least
# MIN_CHUNK_SAMPLES samples), so that verbose progress has steps to show.
CHUNK_SECONDS = 0.5
MIN_CHUNK_SAMPLES = 32
# A parallel compiled kernel with less work than this by the cost table runs on one
# thread: waking the others costs more than they save (a stream's steps).
PARALLEL_MIN_SECONDS = 1e-3
# Host inputs of a GPU computation larger than this are cut into at least OVERLAP_CHUNKS
# chunks so that the copies to the device overlap with compute.
OVERLAP_MIN_BYTES = 64 * 1024**2
OVERLAP_CHUNKS = 4


@dataclass(frozen=True)
class Costs:
    """Rates of one device, for float32 (float64 work costs ``itemsize / 4`` times more)."""

    gemm_flops: float  # large matrix products
    blocked_flops: float  # the blocked route's products (skinny, one block after another)
    fft_flops: float  # batched real FFTs, counted as 2.5 L log2 L flops per transform
    recurrence_flops: float  # the compiled recurrence, 2 d**2 flops per state update
    bandwidth: float  # bytes per second of memory traffic
    pool_seconds: float  # all the pools of one state at one step, compiled (CPU seconds)
    pool_xp_seconds: float  # one pool of one state at one step, by array operations
    block_work: int  # steps per block: clip(block_work // order, block_min, block_max)
    block_min: int
    block_max: int
    memory_fraction: float = 1.0  # share of the free device memory one chunk may use
    pooled_routes: tuple[str, ...] = field(default=("pooled_recurrence",))
    # the state updates of 'pooled_recurrence' (None: recurrence_flops, 2 d**2 per update)
    pooled_flops: float | None = None


COSTS = {
    # measured on the project's 2-core x86 machine (AVX-512, NumPy 2.3 with OpenBLAS,
    # SciPy 1.17) by benchmarks/bench_features.py --calibrate: float32 GEMM 92 GFLOP/s,
    # batched real FFTs 11 GFLOP/s, writes 22 GB/s, the recurrence 48 GFLOP/s, the
    # pooled kernel 9.4 ns per state and step at order 8 (of which 2.7 ns the update),
    # the pools by array operations 28 ns (7 pools). All states in float32, 200 x 784,
    # interleaved best of 3: blocks 0.16 s / FFT 0.28 s at order 256, 0.40 / 0.37 at 384,
    # 0.71 / 0.58 at 512, 2.05 / 0.88 at 768; this table puts the crossover between 256
    # and 384. Steps per block, best of 5: order 64 T=16 0.104 s, T=32 0.109 s (1000
    # samples); order 256 T=8 0.168 s, T=16 0.169 s, T=32 0.182 s (200 samples).
    "cpu": Costs(
        gemm_flops=92e9,
        blocked_flops=92e9,
        fft_flops=11e9,
        recurrence_flops=48e9,
        bandwidth=22e9,
        pool_seconds=7e-9,
        pool_xp_seconds=4e-9,
        block_work=2048,
        block_min=8,
        block_max=16,
    ),
    # an H100's data sheet (~60 TFLOP/s float32, ~3 TB/s), then measured on an H200
    # (benchmarks/bench_gpu.py, 2026-11-27; cuBLAS SGEMM 8192^3 at 51 TFLOP/s, the
    # psMNIST product at 40): all states, float32, 784 steps, blocked 1.71-1.77 ms and FFT
    # 2.06-2.11 ms at order 64 (1 000 rows, T=64), blocked 3.5-6.2 ms and FFT 1.66-1.70 ms at
    # order 468 (100 rows, T=16). The blocked route's products ran at 6-8 TFLOP/s and
    # cuFFT at about half the rate first assumed: with these two rates the table
    # reproduces both times within 15 % and picks the faster route at both orders (with
    # the data sheet's it took the blocked route at order 468, 2-3.6x slower). The rest
    # covers cuBLAS/cuFFT workspaces, pool fragmentation and other users.
    "gpu": Costs(
        gemm_flops=50e12,
        blocked_flops=8e12,
        fft_flops=2.5e12,
        recurrence_flops=2e12,
        bandwidth=2.5e12,
        pool_seconds=1e-12,
        pool_xp_seconds=2e-12,
        block_work=4096,
        block_min=16,
        block_max=128,
        memory_fraction=0.7,
        # the Numba-CUDA pooled kernel where numba.cuda sees the GPU (one thread per
        # state, each running its input's whole recurrence: 2 order**3 flops per input
        # and step at pooled_flops, float64), else block products
        pooled_routes=("pooled_recurrence", "pooled_blocked"),
        pooled_flops=10e12,
    ),
}


def block_steps(order: int, n_steps: int | None = None, device: str = "cpu") -> int:
    """Steps per block ``T`` of the blocked routes on ``device``.

    A block of ``T`` steps costs ``2 (order + T)`` flops per state instead of the
    recurrence's ``2 order``; longer blocks make larger, faster products. ``T`` is
    ``block_work // order`` clipped to the device's range, and to ``n_steps``.
    """
    costs = COSTS[device]
    T = max(costs.block_min, min(costs.block_max, costs.block_work // max(int(order), 1)))
    if n_steps is not None:
        T = min(T, int(n_steps))
    return max(1, T)


def pooled_update_seconds(order: int, n_biases: int, route: str, device: str) -> float:
    """Seconds of one step of one input of a window of ``order`` states, every pool
    (``n_biases`` thresholds) on ``route``, by the cost table (float32 for
    'pooled_blocked'; one pool costs about this share of ``pool_seconds``, measured with
    4 thresholds and 3 moments, and the thresholds run three pools each)."""
    costs = COSTS[device]
    d, pools = order, 3 * n_biases + 3
    if route == "pooled_recurrence":
        if costs.pooled_flops is not None:  # the GPU's kernel: every state's thread runs all
            return d * costs.pool_seconds * pools / 7 + 2.0 * d**3 / costs.pooled_flops
        return d * costs.pool_seconds * pools / 7 + 2.0 * d * d / costs.recurrence_flops
    T = block_steps(d, None, device)
    return 2.0 * (d + T) * d / costs.blocked_flops + d * pools * costs.pool_xp_seconds


def kernel_threads(seconds: float) -> int | None:
    """Threads for a parallel compiled kernel of ``seconds`` of work by the cost table:
    one below :data:`PARALLEL_MIN_SECONDS`, else all (None)."""
    return 1 if seconds < PARALLEL_MIN_SECONDS else None


def _is_smooth(m: int) -> bool:
    for p in (2, 3, 5, 7):
        while m % p == 0:
            m //= p
    return m == 1


def fft_length(n_steps: int) -> int:
    """The smallest even ``2^a 3^b 5^c 7^d`` that is ``>= 2 * n_steps - 1``.

    Such lengths are fast for both pocketfft (SciPy) and cuFFT, and padding to at least
    ``2 n - 1`` keeps the circular convolution from wrapping around.
    """
    m = max(2 * int(n_steps) - 1, 2)
    while m % 2 or not _is_smooth(m):
        m += 1
    return m


def _route_seconds(
    route: str, output: str, order: int, n_steps: int, itemsize: int, device: str
) -> float:
    """Seconds of one row (one channel of one sample) on ``route`` by the cost table."""
    c = COSTS[device]
    scale = itemsize / 4.0
    d, n = order, n_steps
    elements = n * d
    if route == "gemm":  # one product: 2 n d flops, the inputs read once
        return scale * (2.0 * elements / c.gemm_flops + itemsize * n / c.bandwidth)
    if route == "blocked":
        T = block_steps(d, n, device)
        return scale * (
            2.0 * (d + T) * elements / c.blocked_flops + 2.0 * itemsize * elements / c.bandwidth
        )
    if route == "fft":
        L = fft_length(n)
        bins = L // 2 + 1
        flops = d * (2.5 * L * math.log2(L) + 6.0 * bins)
        moved = itemsize * (d * (4.0 * bins + 2.0 * L) + 2.0 * elements)
        return scale * (flops / c.fft_flops + moved / c.bandwidth)
    if route == "recurrence":
        return scale * 2.0 * d * elements / c.recurrence_flops
    raise ValueError(f"Unknown route {route!r}.")


def choose_route(output: str, method: str, order: int, n_steps: int, itemsize: int, device: str):
    """The route of ``output`` asked for with ``method``.

    Final and mean states are one GEMM whatever the method, unless 'recurrence' (or, for
    the mean, 'fft') is asked for; 'sequence' and 'max' go by the method, and 'auto'
    picks the cheaper of the blocked and FFT routes by the cost table.
    """
    if method == "recurrence":
        return "recurrence"
    if output == "final" or (output == "mean" and method != "fft"):
        return "gemm"
    if method == "gemm":
        return "blocked"
    if method == "fft":
        return "fft"
    blocked = _route_seconds("blocked", output, order, n_steps, itemsize, device)
    fft = _route_seconds("fft", output, order, n_steps, itemsize, device)
    return "fft" if fft < blocked else "blocked"


# the advice of a route that does not fit max_memory
def _recurrence_fix(need: int, limit: int) -> str:
    """The advice to use the recurrence, where its ``need`` per sample fits ``limit``."""
    if need > limit:  # (a long 'sequence' of several channels: its output rows themselves)
        return ""
    needs = "almost none" if need < 1 << 16 else f"{format_bytes(need)} per sample"
    return f" or use method='recurrence', which needs {needs}"


def _constant_bytes(route: str, output: str, order: int, n_steps: int, itemsize: int) -> int:
    """Memory of the constants ``route`` makes once for all samples: the impulse response
    (float64) and, for one GEMM, its reversal (and for the mean its reversed cumulative
    sum) in the compute dtype; for the FFT route its spectrum."""
    d, n = order, n_steps
    if route == "gemm":
        return n * d * 8 + n * d * itemsize * (2 if output == "mean" else 1)
    if route == "fft":
        return n * d * 8 + (fft_length(n) // 2 + 1) * d * 2 * itemsize
    return 0


def _working_bytes(
    route: str,
    output: str,
    order: int,
    n_steps: int,
    n_channels: int,
    itemsize: int,
    ragged: bool,
    device: str,
) -> int:
    """Memory one sample needs beyond its result while it is computed, on ``route``."""
    b, c, d, n = itemsize, n_channels, order, n_steps
    work = n * c * b if c > 1 else 0  # the one-row-per-channel copy of the inputs
    if ragged:
        work += n * c * b  # the left-aligned, zero-padded chunk
        if route == "gemm":
            work += n * c * b + 2 * n * 8  # the right-aligned copy and its indices
        if output == "sequence":
            work += n * c * d * b  # the padded states, before they are cut to length
    if route == "fft":
        bins = fft_length(n) // 2 + 1
        work += 2 * c * bins * b + c * d * b * 4 * bins  # spectra, product, inverse
        if output == "mean":
            work += c * d * n * 8
    elif route == "blocked":
        T = block_steps(d, n, device)
        if output == "sequence" and c == 1 and not ragged:
            work += c * (d + T) * b
        else:
            work += c * b * ((d + T) + 2 * T * d + 2 * d)
    elif route == "recurrence":
        if output == "sequence" and c > 1:
            work += n * c * d * b
    if device == "gpu":
        work += 2 * n * c * b  # two device input buffers
    return int(work) + 1


def rows_within(
    budget: float,
    bytes_per_row: float,
    n_rows: int | None = None,
    *,
    seconds_per_row: float | None = None,
    what: str | None = None,
    fix: str = "",
    reserved: float = 0.0,
) -> int:
    """Rows at a time within a memory budget: the package's one rows-per-budget rule.

    As many rows as ``budget`` holds at ``bytes_per_row`` each, at most ``n_rows``, and at
    least one. With ``seconds_per_row`` (by the cost table), also about
    :data:`CHUNK_SECONDS` of work (at least :data:`MIN_CHUNK_SAMPLES` rows), so that
    progress has steps. The chunk loop, the streams' groups of rows, the blocks of dask
    arrays and the command line's batches all size themselves by it.

    ``reserved``: bytes of ``max_memory`` already taken beside ``budget`` (a route's
    constants), named in the error.

    Raises
    ------
    MemoryBudgetError
        A ValueError, when ``what`` is given and a single row does not fit ``budget``,
        naming ``what`` and ``fix``.
    """
    rows = int(budget // max(bytes_per_row, 1))
    if rows < 1 and what is not None:
        need, have = format_bytes_apart(bytes_per_row, budget)
        allows = f"max_memory allows {have}"
        if reserved > 0:
            allows = (
                f"max_memory ({format_bytes(budget + reserved)}) leaves {have} beside the "
                f"{format_bytes(reserved)} of its constants"
            )
        raise MemoryBudgetError(
            f"{what} needs {need} of working memory for a single sequence but {allows}; "
            f"raise max_memory{fix}."
        )
    if seconds_per_row is not None:
        limit = math.inf if n_rows is None else n_rows
        by_time = int(min(CHUNK_SECONDS / max(seconds_per_row, 1e-15), limit))
        rows = min(rows, max(MIN_CHUNK_SAMPLES, by_time))
    if n_rows is not None:
        rows = min(rows, max(int(n_rows), 1))
    return max(1, rows)


@dataclass(frozen=True)
class Plan:
    """How one computation runs: decided once, read by the chunk loop and the kernels."""

    device: str  # 'cpu' or 'gpu'
    route: str
    output: str
    method: str  # as asked
    order: int
    n_steps: int
    block: int  # steps per block of the blocked routes
    n_fft: int  # FFT length of the 'fft' route
    rows: int  # samples per chunk
    bytes_per_sample: int  # working memory (on the device for a GPU)
    seconds_per_sample: float
    budget: int  # bytes the chunks were sized for

    def describe(self, n_samples: int) -> str:
        """The plan in words, for DEBUG logs."""
        picked = " (picked by method='auto')" if self.method == "auto" else ""
        return (
            f"method={self.route if self.route != 'blocked' else 'gemm'!r}{picked}, "
            f"{-(-n_samples // self.rows)} chunk(s) of up to {self.rows} sample(s) "
            f"({format_bytes(self.bytes_per_sample)} of working memory per sample, "
            f"max_memory allows {format_bytes(self.budget)}; ~{self.seconds_per_sample:.2g} s "
            "of work per sample)"
        )


def _gpu_budget(budget: int, device_budget: int | None, costs: Costs) -> int:
    if device_budget is None:
        return budget
    return int(device_budget * costs.memory_fraction)


def _host_staging(
    n_samples: int, in_row: int, out_row: int, host_in: bool, host_out: bool, budget: int
) -> int:
    """Samples per chunk that the pinned host buffers of a GPU computation allow."""
    per_sample = 2 * ((in_row if host_in else 0) + (out_row if host_out else 0))
    rows = rows_within(budget, per_sample, n_samples) if per_sample else n_samples
    if host_in and n_samples * in_row > OVERLAP_MIN_BYTES:
        rows = min(rows, -(-n_samples // OVERLAP_CHUNKS))
    return max(1, int(rows))


def plan_features(
    n_samples: int,
    n_steps: int,
    n_channels: int,
    order: int,
    output: str,
    method: str,
    itemsize: int,
    device: str,
    budget: int,
    *,
    ragged: bool = False,
    device_budget: int | None = None,
    host_input: bool = True,
    host_output: bool = True,
) -> Plan:
    """The plan of Delay Network features (``output`` in :data:`OUTPUTS`).

    Parameters
    ----------
    n_samples, n_steps, n_channels, order
        The problem; ``n_steps`` is the longest sequence for sequences of different lengths.
    output, method
        As for :class:`~lmu_sk.LMUFeatures`.
    itemsize : int
        Bytes per element of the compute dtype.
    device : {'cpu', 'gpu'}
    budget : int
        Bytes of host working memory allowed besides the result.
    ragged : bool
        Sequences of different lengths (padded chunk by chunk).
    device_budget : int, optional
        Free device memory (GPU).
    host_input, host_output : bool
        Whether the inputs come from, and the results go to, host memory (GPU staging).
    """
    route = choose_route(output, method, order, n_steps, itemsize, device)
    costs = COSTS[device]
    limit = _gpu_budget(budget, device_budget, costs) if device == "gpu" else budget
    constants = _constant_bytes(route, output, order, n_steps, itemsize)
    recurrence_need = _working_bytes(
        "recurrence", output, order, n_steps, n_channels, itemsize, ragged, device
    )
    if constants > limit:  # the impulse response alone exceeds max_memory
        if method != "auto":
            need, have = format_bytes_apart(constants, limit)
            raise MemoryBudgetError(
                f"method={method!r} makes the impulse response of {n_steps} steps of order "
                f"{order} once, {need}, but max_memory allows {have}; raise max_memory"
                f"{_recurrence_fix(recurrence_need, limit)}."
            )
        route, constants = "recurrence", 0  # what 'auto' picks when the constants do not fit
    block = block_steps(order, n_steps, device)
    n_fft = fft_length(n_steps)
    per_sample = _working_bytes(
        route, output, order, n_steps, n_channels, itemsize, ragged, device
    )
    if method == "auto" and route != "recurrence" and constants + per_sample > limit:
        # not one sample fits beside the constants: 'auto' takes the route that needs least
        route, constants = "recurrence", 0
        per_sample = _working_bytes(
            route, output, order, n_steps, n_channels, itemsize, ragged, device
        )
    seconds = n_channels * _route_seconds(route, output, order, n_steps, itemsize, device)
    fix = "" if route == "recurrence" else _recurrence_fix(recurrence_need, limit)
    shown = "gemm" if route == "blocked" else route  # the method that asks for the route
    rows = rows_within(
        limit - constants,  # what the chunks of samples may use beside the constants
        per_sample,
        n_samples,
        seconds_per_row=seconds,
        what=f"method={method!r}" + (f" (here {shown!r})" if method == "auto" else ""),
        fix=fix,
        reserved=constants,
    )
    if device == "gpu":
        out_row = n_channels * order * itemsize * (n_steps if output == "sequence" else 1)
        in_row = n_steps * n_channels * itemsize
        rows = min(
            rows, _host_staging(n_samples, in_row, out_row, host_input, host_output, budget)
        )
    return Plan(
        device=device,
        route=route,
        output=output,
        method=method,
        order=order,
        n_steps=n_steps,
        block=block,
        n_fft=n_fft,
        rows=rows,
        bytes_per_sample=per_sample,
        seconds_per_sample=seconds,
        budget=limit,
    )


def plan_pooled(
    n_samples: int,
    n_raw_steps: int,
    n_channels: int,
    windows: Sequence[tuple[int, int, int]],
    n_transformed: int,
    n_features: int,
    itemsize: int,
    device: str,
    budget: int,
    *,
    n_biases: int = 16,
    device_budget: int | None = None,
    host_input: bool = True,
    host_output: bool = True,
    routes: Sequence[str] | None = None,
) -> Plan:
    """The plan of pooled features.

    Parameters
    ----------
    n_samples, n_raw_steps, n_channels : int
        The sequences before any transform (the longest length).
    windows : sequence of (n_inputs, order, n_steps)
        Every window's inputs, states and steps (blocks) of the longest sequence.
    n_transformed : int
        Inputs made of every step (channels times transforms).
    n_features : int
        Features per sample.
    itemsize : int
        Bytes per element of the compute dtype.
    device, budget, device_budget, host_input, host_output
        As for :func:`plan_features`.
    n_biases : int
        Thresholds per state.
    routes : sequence of str, optional
        The routes to choose from, of the device's (all of them by default): the cheaper
        by the cost table.
    """
    costs = COSTS[device]
    pools = 3 * n_biases + 3
    candidates = {}
    routes = costs.pooled_routes if routes is None else tuple(routes)
    if not routes or not set(routes) <= set(costs.pooled_routes):
        raise ValueError(
            f"routes must be some of {costs.pooled_routes} on the {device}; got {routes}."
        )
    for route in routes:
        scale = itemsize / 4.0 if route == "pooled_blocked" else 1.0
        candidates[route] = sum(
            scale * n_inputs * (n + 1) * pooled_update_seconds(d, n_biases, route, device)
            for n_inputs, d, n in windows
        )
    route = min(candidates, key=candidates.get)
    seconds = candidates[route]
    order = max(d for _, d, _ in windows)
    # the padded inputs and their transforms, the block means of one stride and one
    # window's inputs, the kernel's pools and the features
    per_sample = itemsize * n_raw_steps * (2 * n_channels + 3 * n_transformed)
    # and a float64 copy of the channels (measured: 8 bytes per step and channel that the
    # terms here missed, the working memory 4 % beyond max_memory)
    per_sample += 8 * n_raw_steps * n_channels
    per_sample += 8 * max(n_inputs * d * (pools + 2) for n_inputs, d, _ in windows)
    per_sample += 8 * n_features
    if route == "pooled_blocked":
        # one block of states, its masked copies and comparisons
        per_sample += max(
            (4 + n_biases) * itemsize * n_inputs * block_steps(d, n, device) * d
            for n_inputs, d, n in windows
        )
    if device == "gpu":
        per_sample += 2 * n_raw_steps * n_channels * itemsize
    limit = _gpu_budget(budget, device_budget, costs) if device == "gpu" else budget
    rows = rows_within(
        limit,
        per_sample,
        n_samples,
        seconds_per_row=seconds,
        what="LMUPooledFeatures",
        fix=" or use shorter sequences",
    )
    if device == "gpu":
        in_row = n_raw_steps * n_channels * itemsize
        rows = min(
            rows,
            _host_staging(
                n_samples, in_row, n_features * itemsize, host_input, host_output, budget
            ),
        )
    return Plan(
        device=device,
        route=route,
        output="pooled",
        method="auto",
        order=order,
        n_steps=n_raw_steps,
        block=block_steps(order, n_raw_steps, device),
        n_fft=fft_length(n_raw_steps),
        rows=rows,
        bytes_per_sample=int(per_sample),
        seconds_per_sample=seconds,
        budget=limit,
    )


def plan_sampled_states(
    n_samples: int,
    n_steps: int,
    n_inputs: int,
    order: int,
    itemsize: int,
    budget: int,
    *,
    n_channels: int | None = None,
    n_raw_steps: int | None = None,
    device: str = "cpu",
) -> tuple[int, int]:
    """Samples per chunk and steps per window of a walk over all states that keeps a few.

    The states of a chunk of samples are computed window of steps by window of steps,
    carrying the state across, so that no more than one window of inputs is held at once.

    Returns
    -------
    rows, window : int

    Raises
    ------
    MemoryBudgetError
        If one sample and one block of steps do not fit ``budget``.
    """
    n_channels = n_channels or n_inputs
    n_raw_steps = n_raw_steps or n_steps
    # the chunk in the compute dtype, its block means, and the inputs with differences
    inputs = itemsize * (n_raw_steps * n_channels + n_steps * (n_channels + n_inputs))
    T = block_steps(order, n_steps, device)
    # per step of a sample: the window's inputs, made contiguous for the recurrence (which
    # writes the kept states alone, into the result)
    per_step = n_inputs * itemsize
    smallest = inputs + per_step * T
    if budget < smallest:
        need, have = format_bytes_apart(smallest, budget)
        raise MemoryBudgetError(
            f"Fitting the thresholds needs {need} of working memory for a single sequence "
            f"but max_memory allows {have}; raise max_memory."
        )
    rows = rows_within(budget, inputs + per_step * min(n_steps, 1024), n_samples)
    window = int((budget - rows * inputs) // (rows * per_step))
    window = max(T, min(n_steps, window // T * T))
    return rows, window
