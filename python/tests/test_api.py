"""Every API call of the flashlab package, its exceptions and its tables."""

import json
import math

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import flashlab
from conftest import ROOT, SMALL


def test_default_config_is_a_complete_dict():
    c = flashlab.default_config()
    assert {"device", "timing", "ftl", "gc", "workload"} <= set(c)
    assert c["gc"]["victim"] == "greedy"


def test_run_from_path_and_from_dict_agree(base_toml):
    a = flashlab.run(base_toml, {"gc.victim": "fifo"})
    c = flashlab.default_config()
    c["device"].update(channels=2, chips_per_channel=1, dies_per_chip=2, planes_per_die=1, blocks_per_plane=64, pages_per_block=32)
    c["workload"]["requests"] = 20000
    b = flashlab.run(c, {"gc.victim": "fifo"})
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d.pop("wall_time_s")
    assert da == db
    assert a.config["gc"]["victim"] == "fifo"
    assert a.requests == 20000 and a.host_write_pages > 0


def test_result_has_an_attribute_per_key_and_the_stub_lists_them(small):
    r = flashlab.run(flashlab.default_config(), {**small, "workload.requests": 3000})
    d = r.to_dict()
    assert set(d) == set(flashlab.Result.__annotations__)
    for k, v in d.items():
        assert getattr(r, k) == v
    with pytest.raises(AttributeError):
        r.nope
    with pytest.raises(AttributeError):
        r.waf = 2


def test_result_frames(small):
    r = flashlab.run(flashlab.default_config(), {**small, "workload.requests": 3000})
    df = r.to_pandas()
    assert df.shape == (1, len(r.keys()))
    assert df["requests"].dtype == "int64" and df["waf"].dtype == "float64"
    assert json.loads(df["config"][0])["workload"]["requests"] == 3000
    p = r.to_polars()
    assert p.shape == (1, len(r.keys())) and p["requests"].dtype == pl.Int64


def test_request_and_series_tables(small):
    r = flashlab.run(
        flashlab.default_config(),
        {**small, "workload.requests": 5000, "workload.read_fraction": 0.3, "workload.warmup": 1000},
        record_requests=True,
        series_every=1000,
    )
    t = r.request_table()
    assert t.shape == (6000, 9)
    assert list(t.columns) == ["index", "measured", "op", "offset_bytes", "pages", "issue_ns", "done_ns", "latency_ns", "gc_wait_ns"]
    assert t["index"].dtype == "uint64" and t["measured"].dtype == bool
    assert set(t["op"].cat.categories) == {"read", "write", "trim"}
    assert (t["latency_ns"] == t["done_ns"] - t["issue_ns"]).all()
    assert t["measured"].sum() == 5000
    assert (t["op"][t["measured"]] == "read").sum() == r.read_requests
    s = r.series_table()
    assert s.shape == (6, 6) and s["requests"].tolist() == [1000, 2000, 3000, 4000, 5000, 6000]
    assert s["waf"].dtype == "float64"
    assert isinstance(r.request_table("arrow"), pa.Table)
    assert r.series_table("polars").shape == (6, 6)
    with pytest.raises(ValueError):
        flashlab.run(flashlab.default_config(), {**small, "workload.requests": 10}).request_table()


def test_counting_mode_tables_have_null_times(small):
    r = flashlab.run(
        flashlab.default_config(), {**small, "workload.requests": 2000, "timing.enabled": False}, record_requests=True, series_every=500
    )
    t = r.request_table("arrow")
    assert t.column("done_ns").null_count == 2000
    s = r.series_table()
    assert s["sim_time_s"].isna().all() and not s["waf"].isna().any()
    assert r.iops is None and r.write_latency_us_mean is None


def test_trace_stats(trace_csv):
    st = flashlab.trace_stats(trace_csv)
    assert st["format"] == "csv" and st["requests"] == 3000 and st["reads"] == 1000 and st["writes"] == 2000


def test_run_a_trace(trace_csv, small):
    over = {**small, "workload.kind": "trace", "workload.trace_path": str(trace_csv), "workload.arrival": "trace"}
    r = flashlab.run(flashlab.default_config(), over)
    assert r.requests == 3000 and r.read_requests == 1000


def test_hotness(small):
    df = flashlab.hotness(
        ROOT / "examples" / "hotness.toml",
        {**small, "workload.requests": 20000, "hotness.warmup_writes": 2000, "hotness.waf": False},
    )
    assert len(df) >= 2 and {"name", "false_hot_rate", "false_cold_rate", "memory_bytes"} <= set(df.columns)


def test_fs_bench():
    r = flashlab.fs_bench("dd", utilisation=30, device_mib=16)
    assert r["config"] == "baseline" and r["workload"] == "dd" and r["pages_programmed"] > 0
    with pytest.raises(flashlab.FlashlabError, match="workloads: "):
        flashlab.fs_bench("nope")


def test_reproduce(tmp_path):
    out = flashlab.reproduce("wpo-gc", tmp_path / "wpo", quick=True)
    assert (tmp_path / "wpo").is_dir() and any((tmp_path / "wpo").glob("*.md")), out
    with pytest.raises(flashlab.FlashlabError, match="available: "):
        flashlab.reproduce("nope", tmp_path / "x")


def test_exception_classes():
    for cls in (flashlab.ConfigError, flashlab.TraceError, flashlab.SimulationError):
        assert issubclass(cls, flashlab.FlashlabError) and issubclass(cls, Exception)


def test_config_errors(tmp_path, small):
    with pytest.raises(flashlab.ConfigError, match="unknown key `workload.nope`"):
        flashlab.run(flashlab.default_config(), {"workload.nope": 1})
    with pytest.raises(flashlab.ConfigError, match="cannot read config"):
        flashlab.run(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[device]\nblocks_per_plane = -3\n")
    with pytest.raises(flashlab.ConfigError, match="bad.toml"):
        flashlab.run(bad)
    with pytest.raises(flashlab.ConfigError):
        flashlab.Ssd(flashlab.default_config(), {"gc.victim": "nope"})


def test_trace_errors(tmp_path, small):
    with pytest.raises(flashlab.TraceError, match="cannot open trace"):
        flashlab.trace_stats(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("time_ns,op,offset_bytes,len_bytes,device\n0,write,0,12x,0\n")
    with pytest.raises(flashlab.TraceError, match="bad.csv:2"):
        flashlab.trace_stats(bad, format="csv")
    over = {**small, "workload.kind": "trace", "workload.trace_path": str(bad), "workload.trace_format": "csv"}
    with pytest.raises(flashlab.TraceError, match="len_bytes"):
        flashlab.run(flashlab.default_config(), over)


def test_simulation_error(trace_csv, small, tmp_path):
    far = tmp_path / "far.csv"
    far.write_text("time_ns,op,offset_bytes,len_bytes,device\n0,write,0,4096,0\n10,write,%d,4096,0\n" % (1 << 40))
    over = {**small, "workload.kind": "trace", "workload.trace_path": str(far), "workload.address_overflow": "error"}
    with pytest.raises(flashlab.SimulationError, match="request 1: logical page"):
        flashlab.run(flashlab.default_config(), over)
    ssd = flashlab.Ssd(flashlab.default_config(), {**small, "workload.address_overflow": "error"})
    with pytest.raises(flashlab.SimulationError, match="request 0: logical page"):
        ssd.write(1 << 40, 4096, 0)
    with pytest.raises(ValueError, match="len_bytes = 0"):
        ssd.write(0, 0, 0)


def test_ssd_matches_a_trace_run(trace_csv, small):
    over = {**small, "workload.prefill": True, "workload.aging_writes": 2000, "workload.warmup": 100}
    over.update({"workload.kind": "trace", "workload.trace_path": str(trace_csv), "workload.arrival": "trace"})
    run = flashlab.run(flashlab.default_config(), over).to_dict()
    ssd = flashlab.Ssd(flashlab.default_config(), over)
    lines = trace_csv.read_text().splitlines()[1:]
    for i, line in enumerate(lines):
        t, op, off, n, _ = line.split(",")
        c = ssd.submit(op, int(off), int(n), int(t))
        assert c.index == i and c.done_ns >= c.issue_ns and c.latency_ns == c.done_ns - c.issue_ns
    got = ssd.stats().to_dict()
    for d in (run, got):
        d.pop("wall_time_s"), d.pop("config")
    assert got == run
    assert ssd.submitted == 3000


def test_ssd_flush_and_stats(small):
    ssd = flashlab.Ssd(flashlab.default_config(), {**small, "buffer.bytes": 1 << 16})
    page = ssd.page_bytes
    assert ssd.logical_bytes > 0
    for i in range(8):
        ssd.write(i * page, page, i * 1000)
    assert ssd.stats().nand_program_pages == 0
    done = ssd.flush(100_000)
    assert done > 100_000 and ssd.stats().nand_program_pages >= 8
    r = ssd.read(0, page, done)
    assert r.latency_ns > 0 and ssd.trim(0, page, done).pages == 1
    with pytest.raises(ValueError):
        ssd.submit("erase", 0, page, 0)
    counting = flashlab.Ssd(flashlab.default_config(), {**small, "timing.enabled": False})
    c = counting.write(0, page, 5)
    assert c.done_ns is None and counting.flush(10) is None


def test_runs_release_the_gil(small):
    import threading
    import time

    over = {**small, "workload.requests": 3_000_000, "timing.enabled": False}
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    th = threading.Thread(target=tick)
    th.start()
    t0 = time.perf_counter()
    flashlab.run(flashlab.default_config(), over)
    t1 = time.perf_counter()
    stop.set()
    th.join()
    during = [t for t in ticks if t0 < t < t1]
    # With the GIL held the ticker would not run at all while the simulation does.
    assert t1 - t0 > 0.02 and len(during) >= 5, (t1 - t0, len(during))


def test_override_values_become_toml(small):
    r = flashlab.run(
        flashlab.default_config(),
        {**small, "workload.requests": 100, "device.spare_factor": 0.15, "workload.prefill": True, "gc.victim": "cost-benefit"},
    )
    assert r.config["device"]["spare_factor"] == 0.15 and r.config["workload"]["prefill"] is True
    assert math.isclose(1 - r.logical_pages / r.physical_pages, 0.15, abs_tol=0.01)
