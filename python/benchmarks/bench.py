"""Speed figures of the Python package (docs/performance.md, "Python and sweeps").

    python python/benchmarks/bench.py [--calls 200] [--jobs 2]

1. Per-call overhead of flashlab.run: the wall time of the call minus the result's
   `wall_time_s` (the core's time, measured in Rust around the simulation exactly as
   `flashlab run` measures it); median over many calls of a tiny run.
2. A local sweep of 64 points (4 policies × 4 spare factors × 4 seeds) with --jobs
   threads against the same sweep on one thread.
"""

from __future__ import annotations

import argparse
import statistics
import time

import flashlab

SMALL = {
    "device.channels": 1,
    "device.chips_per_channel": 1,
    "device.dies_per_chip": 2,
    "device.planes_per_die": 2,
    "device.blocks_per_plane": 128,
    "device.pages_per_block": 64,
}


def overhead(calls: int) -> None:
    cfg = flashlab.default_config()
    over = {**SMALL, "workload.requests": 1000}
    flashlab.run(cfg, over)
    extra = []
    for _ in range(calls):
        t = time.perf_counter()
        r = flashlab.run(cfg, over)
        extra.append(time.perf_counter() - t - r.wall_time_s)
    extra.sort()
    print(
        f"flashlab.run overhead over the core time: median {statistics.median(extra) * 1e3:.3f} ms, "
        f"p90 {extra[int(0.9 * len(extra))] * 1e3:.3f} ms ({calls} calls, dict config, 1000-request run)"
    )


def sweep(jobs: int) -> None:
    grid = {"gc.victim": ["greedy", "fifo", "cost-benefit", "random"], "device.spare_factor": [0.07, 0.1, 0.15, 0.2]}
    over = {**SMALL, "timing.enabled": False, "workload.prefill": True, "workload.aging_writes": 100_000, "workload.requests": 100_000}
    args = (flashlab.default_config(), grid)
    # Warm up: pyarrow's one-off initialisation (about a second) is not the sweep's.
    flashlab.sweep(args[0], {"gc.victim": ["greedy"]}, overrides={**over, "workload.requests": 10}, jobs=1)
    times, cpu = {}, {}
    for j in (1, jobs):
        t, c = time.perf_counter(), time.process_time()
        df = flashlab.sweep(*args, seeds=[1, 2, 3, 4], overrides=over, jobs=j)
        times[j], cpu[j] = time.perf_counter() - t, time.process_time() - c
        assert len(df) == 64
    print(
        f"64-point sweep: 1 job {times[1]:.2f} s (CPU {cpu[1]:.2f} s), {jobs} jobs {times[jobs]:.2f} s "
        f"(CPU {cpu[jobs]:.2f} s), ratio {times[jobs] / times[1]:.3f}"
    )


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    overhead(a.calls)
    sweep(a.jobs)
