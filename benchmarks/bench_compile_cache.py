"""First fit in a new process: compiling the Numba kernels, then loading them from the cache.

Runs two fresh Python processes one after the other, both with the same, initially empty
Numba cache folder: the first compiles every kernel ``LMUClassifier().fit`` needs and
writes it to the cache; the second loads them. Each process times, inside itself,
``import lmu_sk`` and ``LMUClassifier().fit`` on 100 series of 200 steps (wall and CPU
seconds). Target: the second process's fit within 1 s of wall time.

    python benchmarks/bench_compile_cache.py
    python benchmarks/bench_compile_cache.py --cache-dir ~/.cache/lmu_sk_numba  # keep it

The machine's load average is printed too: on a shared machine wall times grow with it,
CPU times much less.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, time
wall, cpu = time.perf_counter(), time.process_time()
import numpy as np
from lmu_sk import LMUClassifier
imported = time.perf_counter() - wall, time.process_time() - cpu
rng = np.random.default_rng(0)
X = rng.standard_normal((100, 200))
y = (X[:, -20:].sum(axis=1) > 0).astype(int)
wall, cpu = time.perf_counter(), time.process_time()
LMUClassifier().fit(X, y)
fitted = time.perf_counter() - wall, time.process_time() - cpu
wall = time.perf_counter()
LMUClassifier().fit(X, y)
again = time.perf_counter() - wall
print(json.dumps({"import": imported, "fit": fitted, "again": again}))
"""


def _run(env: dict[str, str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", help="Numba cache folder (default: a new temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        cache = args.cache_dir or scratch
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore"}
        print(f"Numba cache folder: {cache}")
        for name in ("first process (compiles)", "second process (cache warm)"):
            times = _run(env)
            print(
                f"{name:<28s} import lmu_sk {times['import'][0]:5.2f} s wall "
                f"({times['import'][1]:5.2f} s CPU); LMUClassifier().fit "
                f"{times['fit'][0]:5.2f} s wall ({times['fit'][1]:5.2f} s CPU); "
                f"a second fit {times['again']:5.2f} s"
            )
        print(f"fit in the second process <= 1 s of wall time: {times['fit'][0] <= 1.0}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
