"""Arrow tables from the flat buffers the native module returns (no CSV detour)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

import numpy as np
import pyarrow as pa

OPS = ["read", "write", "trim"]
_TYPES = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "text": pa.string()}


def _u64(b: bytes) -> np.ndarray:
    return np.frombuffer(b, dtype=np.uint64)


def request_table(c: Dict[str, Any]) -> pa.Table:
    n = len(c["index"]) // 8
    cols: Dict[str, pa.Array] = {
        "index": pa.array(_u64(c["index"])),
        "measured": pa.array(np.frombuffer(c["measured"], dtype=np.uint8).astype(bool)),
        "op": pa.DictionaryArray.from_arrays(
            pa.array(np.frombuffer(c["op"], dtype=np.uint8).astype(np.int8)), pa.array(OPS)
        ),
        "offset_bytes": pa.array(_u64(c["offset_bytes"])),
        "pages": pa.array(_u64(c["pages"])),
    }
    for k in ["issue_ns", "done_ns", "latency_ns"]:
        cols[k] = pa.array(_u64(c[k])) if c["timed"] else pa.nulls(n, pa.uint64())
    cols["gc_wait_ns"] = pa.array(_u64(c["gc_wait_ns"]))
    return pa.table(cols)


def series_table(c: Dict[str, bytes]) -> pa.Table:
    cols = {"requests": pa.array(_u64(c["requests"]))}
    for k in ["sim_time_s", "waf", "read_latency_us_mean", "write_latency_us_mean", "gc_wait_us_mean"]:
        cols[k] = pa.array(np.frombuffer(c[k], dtype=np.float64), from_pandas=True)
    return pa.table(cols)


def _value_type(v: Any) -> pa.DataType:
    if isinstance(v, bool):
        return pa.bool_()
    if isinstance(v, int):
        return pa.int64()
    return pa.float64()


# Keys that are Option<f64> in the result object: float even when null.
def result_table(values: Dict[str, Any]) -> pa.Table:
    cols = {}
    for k, v in values.items():
        if k == "config":
            cols[k] = pa.array([json.dumps(v, sort_keys=True)], pa.string())
        elif v is None:
            cols[k] = pa.array([None], pa.float64())
        else:
            cols[k] = pa.array([v], _value_type(v))
    return pa.table(cols)


def sweep_table(columns: List[Tuple[str, str, list]]) -> pa.Table:
    return pa.table({name: pa.array(values, _TYPES[kind]) for name, kind, values in columns})


def to_pandas(t: pa.Table) -> Any:
    return t.to_pandas()


def convert(t: pa.Table, kind: str) -> Any:
    if kind == "arrow":
        return t
    if kind == "pandas":
        return t.to_pandas()
    if kind == "polars":
        import polars as pl

        return pl.from_arrow(t)
    raise ValueError(f"kind = {kind!r}: expected pandas, polars or arrow")
