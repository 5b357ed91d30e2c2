"""flashlab: a fast, faithful simulator of the flash storage stack, from Python.

The same Rust core as the ``flashlab`` command: ``run`` gives the result object as a
:class:`Result` (attributes, ``to_dict``, ``to_pandas``, ``to_polars``, per-request and
time-series tables through Arrow); ``sweep`` runs a grid of configs × seeds on all cores
or on a Dask cluster; ``Ssd`` is the streaming SSD handle. Simulations release the GIL.
Errors raise :class:`FlashlabError` subclasses carrying the command's one-line message.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

from . import _native
from ._native import ConfigError, FlashlabError, SimulationError, TraceError
from ._result import Result
from ._sweep import sweep
from ._victim import Block, Candidates, VictimPolicy
from ._victim import wrap as _wrap_victim

__all__ = [
    "Block",
    "Candidates",
    "ConfigError",
    "FlashlabError",
    "Result",
    "SimulationError",
    "Completion",
    "Ssd",
    "TraceError",
    "default_config",
    "fs_bench",
    "hotness",
    "reproduce",
    "run",
    "sweep",
    "trace_stats",
]

Config = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def default_config() -> Dict[str, Any]:
    """The complete default configuration (every key) as a nested dict."""
    return json.loads(_native.default_config_json())


def _toml_value(v: Any) -> str:
    """A Python value as a TOML literal (the VALUE of a ``--set KEY=VALUE``)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        return repr(v) if abs(v) != float("inf") else ("inf" if v > 0 else "-inf")
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise ConfigError(f"override value {v!r}: expected a bool, number, string, list or dict")


def _sets(overrides: Optional[Mapping[str, Any]]) -> List[str]:
    return [f"{k}={_toml_value(v)}" for k, v in (overrides or {}).items()]


def _source(config: Config) -> Tuple[Optional[str], Optional[str]]:
    """(path, text) for the native calls: a file path, or a dict as TOML text."""
    if isinstance(config, Mapping):
        return None, _native.config_toml_from_json(json.dumps(config))
    return os.fspath(config), None


def run(
    config: Config,
    overrides: Optional[Mapping[str, Any]] = None,
    *,
    record_requests: bool = False,
    series_every: Optional[int] = None,
    gc_victim: Optional[VictimPolicy] = None,
) -> Result:
    """Run a config (a TOML file path or a dict like :func:`default_config`'s), with
    ``overrides`` keyed by dotted ``--set`` keys, e.g. ``{"gc.victim": "fifo"}``.

    ``record_requests`` keeps every request for :meth:`Result.request_table`;
    ``series_every=N`` keeps a time series of N-request intervals for
    :meth:`Result.series_table`. The GIL is released while the simulation runs.

    ``gc_victim`` is a GC victim policy written in Python: a callable that receives
    the plane's :class:`Candidates` and returns the chosen :class:`Block` (or its id);
    it replaces ``gc.victim`` (page-mapped schemes only). An exception it raises
    ends the run with :class:`SimulationError`."""
    path, text = _source(config)
    victim = None if gc_victim is None else _wrap_victim(gc_victim)
    result, req, series = _native.run(path, text, _sets(overrides), record_requests, series_every, victim)
    return Result(json.loads(result), req, series)


def trace_stats(path: Union[str, "os.PathLike[str]"], format: str = "auto", skip_bad_lines: bool = False) -> Dict[str, Any]:
    """Summary statistics of a block I/O trace (``flashlab trace stats``)."""
    return json.loads(_native.trace_stats(os.fspath(path), format, skip_bad_lines))


def hotness(config: Config, overrides: Optional[Mapping[str, Any]] = None) -> Any:
    """Compare the hot-data identifiers of the config's ``[hotness]`` section on its
    workload (``flashlab hotness``): one pandas row per identifier."""
    import pandas as pd

    path, text = _source(config)
    return pd.DataFrame(json.loads(_native.hotness(path, text, _sets(overrides))))


def fs_bench(
    workload: str = "fileserver",
    utilisation: int = 50,
    device_mib: int = 64,
    config: str = "baseline",
) -> Dict[str, Any]:
    """One run of flashfs's file-system benchmark (seed 000's set-up: ``workload`` dd,
    fileserver or varmail at ``utilisation`` % of a ``device_mib`` MiB device, flashfs
    ``config`` baseline, hot-journals, delayed-commit, validity-bitmap or optimised).
    Host file systems over the simulated SSD (ext4, F2FS) come with issue 15."""
    return json.loads(_native.fs_bench(device_mib, workload, utilisation, config))


def reproduce(name: str, out: Union[str, "os.PathLike[str]"], quick: bool = False) -> str:
    """Regenerate a seed paper's experiment into ``out`` (``flashlab reproduce``);
    returns ``out``."""
    _native.reproduce(name, os.fspath(out), quick)
    return os.fspath(out)


class Ssd:
    """The streaming SSD handle: submit reads, writes and trims at simulated times and
    get their completions; ``stats()`` is the result object of the measured requests
    so far. The device is prefilled and aged as the config says; the first
    ``workload.warmup`` requests are not measured. Issue times are the caller's (open
    loop); a time that goes back is held at the latest one."""

    def __init__(self, config: Config, overrides: Optional[Mapping[str, Any]] = None) -> None:
        path, text = _source(config)
        self._ssd = _native.Ssd(path, text, _sets(overrides))

    @property
    def page_bytes(self) -> int:
        return self._ssd.page_bytes

    @property
    def logical_bytes(self) -> int:
        return self._ssd.logical_bytes

    @property
    def submitted(self) -> int:
        return self._ssd.submitted

    def submit(self, op: str, offset_bytes: int, len_bytes: int, at_ns: int) -> "Completion":
        """Serve ``op`` (read, write or trim) of ``len_bytes`` at ``offset_bytes``,
        issued at ``at_ns``."""
        return Completion(*self._ssd.submit(op, offset_bytes, len_bytes, at_ns))

    def read(self, offset_bytes: int, len_bytes: int, at_ns: int) -> "Completion":
        return self.submit("read", offset_bytes, len_bytes, at_ns)

    def write(self, offset_bytes: int, len_bytes: int, at_ns: int) -> "Completion":
        return self.submit("write", offset_bytes, len_bytes, at_ns)

    def trim(self, offset_bytes: int, len_bytes: int, at_ns: int) -> "Completion":
        return self.submit("trim", offset_bytes, len_bytes, at_ns)

    def flush(self, at_ns: int) -> Optional[int]:
        """Write the DRAM write buffer to flash; its completion time (None in counting mode)."""
        return self._ssd.flush(at_ns)

    def stats(self) -> Result:
        """The result object of the measured requests so far (``wall_time_s`` 0, ``config`` null)."""
        return Result(json.loads(self._ssd.result_json()))


class Completion(NamedTuple):
    """When a submitted request completed (times None in counting mode)."""

    index: int
    issue_ns: Optional[int]
    done_ns: Optional[int]
    latency_ns: Optional[int]
    gc_wait_ns: int
    pages: int
