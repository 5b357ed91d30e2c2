"""``python -m flashlab sweep SWEEP.toml --scheduler tcp://HOST:PORT [--out DIR]``:
the Dask driver that ``flashlab sweep --scheduler`` delegates to."""

from __future__ import annotations

import argparse
import sys

from . import FlashlabError
from ._sweep import sweep_file


def main(argv: list = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flashlab")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep", help="run a sweep file, locally or on a Dask scheduler")
    s.add_argument("sweep")
    s.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://127.0.0.1:8786")
    s.add_argument("--jobs", type=int)
    s.add_argument("--out", required=True)
    a = p.parse_args(argv)
    try:
        client = None
        if a.scheduler:
            from distributed import Client

            client = Client(a.scheduler)
        df = sweep_file(a.sweep, client=client, jobs=a.jobs, out=a.out)
        print(f"{len(df)} runs; wrote {a.out}/results.csv, results.parquet, summary.md, index.html", file=sys.stderr)
    except FlashlabError as e:
        print(f"flashlab: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
