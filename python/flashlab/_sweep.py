"""Sweeps: a base config × a grid of ``--set`` keys × seeds, on all local cores or on a
Dask cluster (each run one task). Both give the same table (every column but
``wall_time_s``), in task order: point by point, seeds fastest."""

from __future__ import annotations

import json
import os
from typing import Any, List, Mapping, Optional, Sequence

from . import _native, _tables


def _plan(base: Any, grid: Mapping[str, Sequence[Any]], seeds: Sequence[int], overrides: Any, zip: bool) -> Any:
    from . import _sets, _source

    path, text = _source(base)
    if path is not None:
        path = os.path.abspath(path)
    pairs = [[k, list(v)] for k, v in grid.items()]
    return _native.SweepPlan(path, text, json.dumps(pairs), zip, [int(s) for s in seeds], _sets(overrides))


def _run_task(path: Optional[str], text: Optional[str], sets: List[str]) -> str:
    """One sweep run on a Dask worker: the result object as JSON."""
    return _native.run(path, text, sets)[0]


def _run_dask(plan: Any, client: Any, out: Optional[str]) -> List[str]:
    from distributed import as_completed

    tasks = plan.tasks()
    results: List[Optional[str]] = [None] * len(tasks)
    if out is not None:
        for i, r in plan.finished(out):
            results[i] = r
    path, text = plan.base()
    futures = {}
    for i, (point, _seed_index, seed, sets) in enumerate(tasks):
        if results[i] is None:
            f = client.submit(_run_task, path, text, sets, key=f"flashlab-sweep-{point}-{seed}-{i}", pure=False)
            futures[f] = i
    for f in as_completed(list(futures)):
        i = futures[f]
        results[i] = f.result()
        if out is not None:
            plan.record(out, i, results[i])
    return [r for r in results if r is not None]


def _execute(plan: Any, client: Any, jobs: Optional[int], out: Any) -> Any:
    """Run the plan locally or on Dask; write the files into ``out``; the DataFrame."""
    out = os.fspath(out) if out is not None else None
    if client is None:
        results = plan.run_local(jobs or os.cpu_count() or 1, out)
    else:
        results = _run_dask(plan, client, out)
    if out is not None:
        plan.write(out, results)
    return _tables.sweep_table(plan.table(results)).to_pandas()


def sweep(
    base: Any,
    grid: Mapping[str, Sequence[Any]],
    seeds: Sequence[int] = (0,),
    overrides: Optional[Mapping[str, Any]] = None,
    client: Any = None,
    *,
    zip: bool = False,
    jobs: Optional[int] = None,
    out: Optional[str] = None,
) -> Any:
    """Run ``base`` (a config path or dict) for every point of ``grid`` (dotted keys
    to lists of values: their cartesian product, or with ``zip=True`` the i-th values
    together) and every seed; ``overrides`` apply to every point.

    Without ``client`` the runs use ``jobs`` threads (default: every core); with a
    ``dask.distributed.Client`` each run is a task on its cluster. With ``out``
    finished runs are journalled there (an interrupted sweep resumes) and
    results.csv, results.parquet, summary.md and index.html are written.

    Returns a pandas DataFrame: one column per grid key (named by its dotted key),
    ``seed``, and one per key of the result object (``config`` as JSON text)."""
    return _execute(_plan(base, grid, seeds, overrides, zip), client, jobs, out)


def sweep_file(path: str, client: Any = None, jobs: Optional[int] = None, out: Optional[str] = None) -> Any:
    """A sweep file (see ``flashlab sweep``), run like :func:`sweep`."""
    return _execute(_native.SweepPlan.from_file(os.fspath(path)), client, jobs, out)
