"""The result object of a run as a Python object."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from . import _tables


class Result:
    """The result object of one run: one attribute per key (CONTRACT.md), plus the
    per-request and time-series tables when the run recorded them."""

    requests: int
    host_read_pages: int
    host_write_pages: int
    host_trim_pages: int
    nand_read_pages: int
    nand_program_pages: int
    nand_erases: int
    gc_runs: int
    gc_copied_pages: int
    waf: Optional[float]
    erase_count_min: int
    erase_count_max: int
    erase_count_mean: float
    erase_count_stddev: float
    read_latency_us_mean: Optional[float]
    read_latency_us_p99: Optional[float]
    write_latency_us_mean: Optional[float]
    write_latency_us_p99: Optional[float]
    iops: Optional[float]
    sim_time_s: Optional[float]
    wall_time_s: float
    config: Dict[str, Any]
    read_requests: int
    write_requests: int
    trim_requests: int
    unmapped_read_pages: int
    nand_program_pages_host: int
    nand_program_pages_gc: int
    nand_read_pages_gc: int
    erase_count_plane_stddev: float
    wl_moves: int
    nand_program_pages_wl: int
    logical_pages: int
    physical_pages: int
    read_latency_us_p50: Optional[float]
    read_latency_us_p999: Optional[float]
    read_latency_us_max: Optional[float]
    write_latency_us_p50: Optional[float]
    write_latency_us_p999: Optional[float]
    write_latency_us_max: Optional[float]
    bandwidth_mib_s: Optional[float]
    die_utilization_mean: Optional[float]
    die_utilization_max: Optional[float]
    channel_utilization_mean: Optional[float]
    channel_utilization_max: Optional[float]
    gc_blocked_requests: int
    gc_blocked_s_total: Optional[float]
    copyback_pages: int
    multiplane_joins: int
    buffer_write_hits: int
    buffer_read_hits: int
    buffer_flush_pages: int
    waf_closed_form: Optional[float]
    memory_bytes: int
    # Mapping schemes (null where the scheme has no such count).
    merges_switch: Optional[int]
    merges_partial: Optional[int]
    merges_full: Optional[int]
    merge_copied_pages: Optional[int]
    padding_pages: Optional[int]
    map_reads: Optional[int]
    map_writes: Optional[int]
    map_cache_hit_ratio: Optional[float]
    mapping_ram_bytes: Optional[int]
    erase_count_stddev_block: float
    nand_program_pages_merge: int
    nand_program_pages_padding: int
    nand_program_pages_map: int
    nand_program_pages_other: int
    # Timing: time dies waited for the bus; GC transfers moved behind host ones.
    die_wait_s_total: Optional[float]
    gc_transfers_deferred: int
    # What the run did to its input.
    skipped_lines: int
    reordered_requests: int
    folded_requests: int
    outlying_timestamps: int
    prewritten_pages: int

    def __init__(self, values: Dict[str, Any], requests_columns: Any = None, series_columns: Any = None) -> None:
        self.__dict__["_values"] = dict(values)
        self.__dict__["_requests_columns"] = requests_columns
        self.__dict__["_series_columns"] = series_columns

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"Result has no key {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Result is read-only")

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | set(self._values))

    def __repr__(self) -> str:
        return f"Result(requests={self.requests}, waf={self.waf}, iops={self.iops})"

    def keys(self) -> list:
        """The result keys, in the result object's order."""
        return list(self._values)

    def to_dict(self) -> Dict[str, Any]:
        """Every key of the result object (a copy; `config` is a dict)."""
        return json.loads(json.dumps(self._values))

    def to_arrow(self) -> Any:
        """One-row Arrow table of every key (`config` as JSON text)."""
        return _tables.result_table(self._values)

    def to_pandas(self) -> Any:
        """One-row pandas DataFrame of every key (`config` as JSON text)."""
        return _tables.to_pandas(self.to_arrow())

    def to_polars(self) -> Any:
        """One-row polars DataFrame of every key (`config` as JSON text)."""
        import polars as pl

        return pl.from_arrow(self.to_arrow())

    def request_table(self, kind: str = "pandas") -> Any:
        """Every request (run with ``record_requests=True``): index, measured, op,
        offset_bytes, pages, issue_ns, done_ns, latency_ns, gc_wait_ns (times null in
        counting mode). ``kind``: pandas, polars or arrow."""
        if self._requests_columns is None:
            raise ValueError("run with record_requests=True to get the request table")
        return _tables.convert(_tables.request_table(self._requests_columns), kind)

    def series_table(self, kind: str = "pandas") -> Any:
        """The time series (run with ``series_every=N``): per interval of N requests,
        requests, sim_time_s, waf, read/write latency means, mean GC wait."""
        if self._series_columns is None:
            raise ValueError("run with series_every=N to get the time series")
        return _tables.convert(_tables.series_table(self._series_columns), kind)


# `flashlab swap --json` writes another object (crates/flashlab-swap, SwapResult):
# these are its keys, in order (docs/swap.md explains each).
SWAP_RESULT_KEYS = (
    "app",
    "allocator",
    "device",
    "ram_mib",
    "swap_mib",
    "footprint_mib",
    "references",
    "swapping",
    "run_time_s",
    "cpu_time_s",
    "swap_io_wait_s",
    "trim_wait_s",
    "swap_outs",
    "swap_ins",
    "major_faults",
    "readahead_pages",
    "swap_write_requests",
    "swap_read_requests",
    "swap_out_rate_pages_per_s",
    "trim_commands",
    "trim_slots",
    "trim_time_s_total",
    "trim_time_ms_mean",
    "swapon_trim_ms",
    "ssd_waf",
    "ssd_erases",
    "ssd_gc_runs",
    "ssd_gc_copied_pages",
    "wall_time_s",
)


# `flashlab fs bench --json` (crates/flashlab-cli fs_bench.rs) adds `fs_kind` and `fs_device`
# ("nand" or "block2mtd") to the workload report; with fs.device = "block2mtd" its `device`
# object also holds these (docs/block2mtd.md): the MTD's counters, the requests block2mtd
# sent to the SSD, and the SSD's full result object (the keys of `Result` above).
FS_BENCH_KEYS = ("fs_kind", "fs_device")
FS_BENCH_BLOCK2MTD_DEVICE_KEYS = ("nand", "block2mtd", "ssd")
BLOCK2MTD_KEYS = (
    "read_requests",
    "read_bytes",
    "erased_read_bytes",
    "program_requests",
    "program_bytes",
    "erase_requests",
    "erase_bytes",
    "busy_ns",
)
