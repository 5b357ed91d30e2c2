"""Sweeps: table shape and types, zip mode, resume, local = Dask, the CLI's files."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import flashlab

GRID = {"gc.victim": ["greedy", "fifo"], "device.spare_factor": [0.1, 0.2]}
OVER = {"workload.requests": 20000, "timing.enabled": False, "workload.prefill": True}


def without_wall(df):
    return df.drop(columns=["wall_time_s"]).reset_index(drop=True)


def test_sweep_table(base_toml):
    df = flashlab.sweep(base_toml, GRID, seeds=[1, 2, 3], overrides=OVER, jobs=2)
    assert df.shape[0] == 12
    assert list(df.columns[:3]) == ["gc.victim", "device.spare_factor", "seed"]
    assert df["gc.victim"].tolist()[:6] == ["greedy"] * 6
    assert df["device.spare_factor"].tolist()[:6] == [0.1] * 3 + [0.2] * 3
    assert df["seed"].tolist() == [1, 2, 3] * 4
    assert df["seed"].dtype == "int64" and df["waf"].dtype == "float64" and df["requests"].dtype == "int64"
    assert df["iops"].isna().all()  # counting mode: null, float
    result_keys = set(flashlab.Result.__annotations__)
    assert result_keys <= set(df.columns)
    assert len(df.columns) == len(result_keys) + 3
    one = flashlab.run(base_toml, {**OVER, "gc.victim": "fifo", "device.spare_factor": 0.2, "workload.seed": 2}).to_dict()
    row = df[(df["gc.victim"] == "fifo") & (df["device.spare_factor"] == 0.2) & (df["seed"] == 2)].iloc[0]
    assert row["waf"] == one["waf"] and row["nand_erases"] == one["nand_erases"]
    # The same sweep on one thread: the same table.
    pd.testing.assert_frame_equal(without_wall(df), without_wall(flashlab.sweep(base_toml, GRID, seeds=[1, 2, 3], overrides=OVER, jobs=1)), check_exact=True)


def test_zip_sweep(base_toml):
    df = flashlab.sweep(base_toml, GRID, seeds=[5], overrides=OVER, zip=True)
    assert df[["gc.victim", "device.spare_factor"]].values.tolist() == [["greedy", 0.1], ["fifo", 0.2]]


def test_sweep_errors(base_toml):
    with pytest.raises(flashlab.ConfigError, match="sweep point 1"):
        flashlab.sweep(base_toml, {"gc.victim": ["greedy", "nope"]})
    with pytest.raises(flashlab.ConfigError, match="zip"):
        flashlab.sweep(base_toml, {"gc.victim": ["greedy"], "device.spare_factor": [0.1, 0.2]}, zip=True)
    with pytest.raises(flashlab.ConfigError, match="seeds"):
        flashlab.sweep(base_toml, GRID, seeds=[])


def test_sweep_resumes(base_toml, tmp_path):
    out = tmp_path / "out"
    full = flashlab.sweep(base_toml, GRID, seeds=[1, 2], overrides=OVER, out=out)
    journal = (out / "runs.jsonl").read_text().splitlines()
    assert len(journal) == 8
    # Interrupted after 5 runs, with a torn last line.
    (out / "runs.jsonl").write_text("\n".join(journal[:5]) + "\n" + journal[5][:40])
    again = flashlab.sweep(base_toml, GRID, seeds=[1, 2], overrides=OVER, out=out)
    lines = (out / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 9 and lines[6].startswith('{"point"')  # 5 kept, the torn one, 3 reruns
    pd.testing.assert_frame_equal(without_wall(full), without_wall(again), check_exact=True)
    # The 5 journalled runs were not rerun: their wall times are the journal's.
    kept = [json.loads(line) for line in journal[:5]]
    for k in kept:
        i = k["point"] * 2 + [1, 2].index(k["seed"])
        assert again["wall_time_s"][i] == k["result"]["wall_time_s"] == full["wall_time_s"][i]
    csv = pd.read_csv(out / "results.csv")
    parquet = pd.read_parquet(out / "results.parquet")
    assert csv.shape == parquet.shape == full.shape
    assert parquet["waf"].tolist() == full["waf"].tolist()
    assert "mean ± sample std-dev" in (out / "summary.md").read_text()


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    # Two worker processes on loopback only; no dashboard.
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as c:
        yield c


def test_dask_sweep_equals_local(base_toml, cluster, tmp_path):
    from distributed import Client

    local = flashlab.sweep(base_toml, GRID, seeds=[1, 2], overrides=OVER)
    with Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        remote = flashlab.sweep(base_toml, GRID, seeds=[1, 2], overrides=OVER, client=client, out=tmp_path / "d")
    pd.testing.assert_frame_equal(without_wall(local), without_wall(remote), check_exact=True)
    assert len((tmp_path / "d" / "runs.jsonl").read_text().splitlines()) == 8


def write_sweep_file(base_toml):
    p = base_toml.parent / "s.toml"
    p.write_text(
        'base = "base.toml"\nseeds = [1, 2]\n[set]\n"workload.requests" = 20000\n"timing.enabled" = false\n'
        '"workload.prefill" = true\n[grid]\n"gc.victim" = ["greedy", "fifo"]\n"device.spare_factor" = [0.1, 0.2]\n'
    )
    return p


def cli():
    exe = os.environ.get("FLASHLAB_BIN")
    if not exe:
        pytest.skip("FLASHLAB_BIN (the flashlab binary) not set; scripts/test-all sets it")
    return exe


def test_cli_sweep_files_equal_the_python_sweep(base_toml, tmp_path):
    exe = cli()
    s = write_sweep_file(base_toml)
    subprocess.run([exe, "sweep", str(s), "--out", str(tmp_path / "cli"), "--jobs", "2", "--quiet"], check=True)
    py = flashlab._sweep.sweep_file(s, out=tmp_path / "py")
    a = pd.read_parquet(tmp_path / "cli" / "results.parquet")
    # TOML grid keys are alphabetical.
    assert list(a.columns[:3]) == ["device.spare_factor", "gc.victim", "seed"]
    pd.testing.assert_frame_equal(without_wall(a), without_wall(py), check_exact=True)


def test_cli_sweep_on_a_scheduler(base_toml, cluster, tmp_path):
    exe = cli()
    s = write_sweep_file(base_toml)
    env = dict(os.environ, FLASHLAB_PYTHON=sys.executable)
    subprocess.run([exe, "sweep", str(s), "--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "d")], check=True, env=env)
    subprocess.run([exe, "sweep", str(s), "--out", str(tmp_path / "l"), "--quiet"], check=True)
    a = pd.read_parquet(tmp_path / "d" / "results.parquet")
    b = pd.read_parquet(tmp_path / "l" / "results.parquet")
    pd.testing.assert_frame_equal(without_wall(a), without_wall(b), check_exact=True)
