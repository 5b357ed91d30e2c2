//! End-to-end tests of the `flashlab` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "cli_report/mod.rs"]
mod report;

fn flashlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashlab")).args(args).output().expect("flashlab runs")
}

fn ok(args: &[&str]) -> String {
    let o = flashlab(args);
    assert!(o.status.success(), "flashlab {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The one-line error of a failing command.
fn fails(args: &[&str]) -> String {
    let o = flashlab(args);
    assert!(!o.status.success(), "flashlab {args:?} should fail");
    let e = String::from_utf8(o.stderr).unwrap();
    assert_eq!(e.trim_end().lines().count(), 1, "error is one line: {e}");
    assert!(e.starts_with("flashlab: error: "), "{e}");
    e
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared_traces() -> Option<PathBuf> {
    let p = repo().join("../shared/traces");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("note: ../shared/traces not found; shared-trace checks skipped");
        None
    }
}

fn tmp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(name);
    std::fs::write(&p, text).unwrap();
    (d, p)
}

#[test]
fn config_default_is_complete_and_checks() {
    let text = ok(&["config", "default"]);
    for k in
        ["[device]", "spare_factor = 0.2", "[timing]", "erase_ms = 1.5", "victim = \"greedy\"", "free_blocks_min = 2"]
    {
        assert!(text.contains(k), "default config lacks {k}");
    }
    let (_d, p) = tmp("c.toml", &text);
    assert_eq!(ok(&["config", "check", p.to_str().unwrap()]), text);
}

#[test]
fn bad_config_errors_are_one_line_and_name_the_place() {
    let (_d, p) = tmp("bad.toml", "[gc]\nvictim = \"greedy\"\nfree_block_min = 3\n");
    let e = fails(&["config", "check", p.to_str().unwrap()]);
    assert!(e.contains("bad.toml:3: unknown key `gc.free_block_min`; nearest valid: gc.free_blocks_min"), "{e}");
    let e = fails(&["run", p.to_str().unwrap(), "--set", "gc.free_block_min=3"]);
    assert!(e.contains("unknown key"), "{e}");
    let (_d, p) = tmp("ok.toml", "");
    let e = fails(&["run", p.to_str().unwrap(), "--set", "device.spare_factr=0.1"]);
    assert!(e.contains("nearest valid: device.spare_factor"), "{e}");
    let e = fails(&["run", p.to_str().unwrap(), "--set", "gc.victim=best"]);
    assert!(e.contains("greedy, fifo, random, d-choices, cost-benefit"), "{e}");
    fails(&["run", "/nonexistent/x.toml"]);
}

#[test]
fn run_writes_the_contract_json_and_is_deterministic() {
    let (d, p) = tmp("c.toml", "[workload]\nrequests = 3000\nread_fraction = 0.5\nqueue_depth = 4\n");
    let small = ["--set", "device.blocks_per_plane=64", "--quiet"];
    let j1 = d.path().join("a.json");
    let j2 = d.path().join("b.json");
    for j in [&j1, &j2] {
        let mut args = vec!["run", p.to_str().unwrap(), "--json", j.to_str().unwrap()];
        args.extend(small);
        ok(&args);
    }
    let read = |p: &Path| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let (mut a, mut b) = (read(&j1), read(&j2));
    assert_eq!(a["requests"], 3000);
    assert_eq!(a["config"]["device"]["blocks_per_plane"], 64);
    assert!(a["write_latency_us_p99"].as_f64().unwrap() > 0.0);

    a["wall_time_s"] = 0.into();
    b["wall_time_s"] = 0.into();
    assert_eq!(a, b);
}

#[test]
fn json_to_stdout() {
    let (_d, p) = tmp("c.toml", "[workload]\nrequests = 100\n[timing]\nenabled = false\n");
    let out = ok(&["run", p.to_str().unwrap(), "--json", "-", "--set", "device.blocks_per_plane=64"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["read_latency_us_mean"].is_null());
    assert_eq!(v["host_write_pages"], 100);
}

#[test]
fn quickstart_example_runs_reduced() {
    let p = repo().join("examples/quickstart.toml");
    let out = ok(&["run", p.to_str().unwrap(), "--set", "workload.requests=20000", "--set", "workload.warmup=0"]);
    assert!(out.contains("WAF") && out.contains("write latency us"));
}

#[test]
fn shared_traces_are_read_with_their_request_counts() {
    let Some(dir) = shared_traces() else { return };
    let cases = [
        ("example.ascii", "ssdsim", 10_000),
        ("fin1", "ssdsim-fin", 100),
        ("tpcc-small.trace", "mqsim", 6_999),
        ("wsrch-small.trace", "mqsim", 24_783),
        ("cloudPhysicsIO.csv", "auto", 113_872),
        ("wiscsee-sqlitewal-events.txt", "auto", 5_008),
    ];
    for (file, format, n) in cases {
        let out = ok(&["trace", "stats", dir.join(file).to_str().unwrap(), "--format", format, "--json", "-"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["requests"], n, "{file}");
        assert_eq!(v["skipped_lines"], 0, "{file}");
    }
}

#[test]
fn shared_traces_run_through_the_simulator() {
    let Some(dir) = shared_traces() else { return };
    for (file, format) in
        [("example.ascii", "ssdsim"), ("tpcc-small.trace", "mqsim"), ("cloudPhysicsIO.csv", "cloudphysics")]
    {
        let cfg = format!(
            "[device]\nblocks_per_plane = 256\n[workload]\nkind = \"trace\"\ntrace_path = \"{}\"\ntrace_format = \"{format}\"\narrival = \"trace\"\n",
            dir.join(file).display()
        );
        let (_d, p) = tmp("t.toml", &cfg);
        let v: serde_json::Value = serde_json::from_str(&ok(&["run", p.to_str().unwrap(), "--json", "-"])).unwrap();
        assert!(v["requests"].as_u64().unwrap() > 0, "{file}");
        assert!(v["host_write_pages"].as_u64().unwrap() > 0, "{file}");
    }
}

#[test]
fn trace_convert_round_trips() {
    let text = "0 0 100 8 0\n1000 0 200 16 1\n2000 1 300 8 0\n";
    let (d, p) = tmp("t.ascii", text);
    let out = d.path().join("t.csv");
    ok(&["trace", "convert", p.to_str().unwrap(), "--format", "ssdsim", "--to", "csv", "-o", out.to_str().unwrap()]);
    let a = ok(&["trace", "stats", p.to_str().unwrap(), "--format", "ssdsim", "--json", "-"]);
    let b = ok(&["trace", "stats", out.to_str().unwrap(), "--format", "csv", "--json", "-"]);
    let (mut a, mut b): (serde_json::Value, serde_json::Value) =
        (serde_json::from_str(&a).unwrap(), serde_json::from_str(&b).unwrap());
    a["format"] = "".into();
    b["format"] = "".into();
    assert_eq!(a, b);
}

#[test]
fn bad_trace_line_names_file_line_and_field() {
    let (_d, p) = tmp("bad.ascii", "0 0 100 8 0\n10 0 1x0 8 0\n20 0 100 8 0\n");
    let e = fails(&["trace", "stats", p.to_str().unwrap(), "--format", "ssdsim"]);
    assert!(e.contains("bad.ascii:2") && e.contains("1x0"), "{e}");
    let out = ok(&["trace", "stats", p.to_str().unwrap(), "--format", "ssdsim", "--skip-bad-lines", "--json", "-"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["requests"].as_u64(), v["skipped_lines"].as_u64()), (Some(2), Some(1)));
    let cfg = format!("[workload]\nkind = \"trace\"\ntrace_path = \"{}\"\ntrace_format = \"ssdsim\"\n", p.display());
    let (_d2, c) = tmp("c.toml", &cfg);
    let e = fails(&["run", c.to_str().unwrap()]);
    assert!(e.contains("bad.ascii:2"), "{e}");
    ok(&["run", c.to_str().unwrap(), "--skip-bad-lines"]);
}

#[test]
fn bench_quick_reports_rates() {
    let out = ok(&["bench", "--quick"]);
    assert!(out.contains("counting-wasim") && out.contains("requests/s"));
    // The descriptions state the reduced work.
    assert!(out.contains("1 plane x 1024 blocks") && out.contains("trace of 125000 4 KiB writes"), "{out}");
    assert!(out.contains("fs-iozone-flashfs: fs bench: IOZone (4 KiB requests, 4 MiB file"), "{out}");
    for fs in ["f2fs", "ext4"] {
        let want = format!(
            "fs-iozone-{fs}: fs bench: IOZone (4 KiB requests, 4 MiB file, 50 % utilisation, six phases) on {fs}"
        );
        assert!(out.contains(&want), "{out}");
    }
    assert!(out.contains("flashfs-overwrite") && out.contains("CPU time s"), "{out}");
    assert!(!out.contains("scale-4tib"), "the scale case runs only when named: {out}");
}

#[test]
fn bench_cases_by_name_with_json_figures() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("b.json");
    ok(&["bench", "--quick", "--case", "flashfs", "--case", "map-page-seq-c", "--json", j.to_str().unwrap()]);
    let rows: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let names: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["map-page-seq-counting", "flashfs-overwrite"]);
    for r in rows.as_array().unwrap() {
        for key in ["requests_per_s", "wall_time_s", "cpu_time_s", "peak_rss_bytes"] {
            assert!(r[key].as_f64().is_some_and(|v| v > 0.0), "{key} in {r}");
        }
    }
    let (seq, ow) = (&rows[0], &rows[1]);
    assert!(seq["writes"].is_null() && seq["writes_per_s"].is_null(), "{seq}");
    assert_eq!(ow["writes"], ow["requests"], "every overwrite is a write: {ow}");
    let e = fails(&["bench", "--case", "nope"]);
    assert!(e.contains("--case nope") && e.contains("scale-4tib"), "{e}");
    let e = fails(&["bench", "--case", "scale", "--scale-divisor", "3"]);
    assert!(e.contains("--scale-divisor 3"), "{e}");
}

#[test]
fn bench_runs_each_case_in_its_own_process_with_the_same_results() {
    let d = tempfile::tempdir().unwrap();
    let rows = |extra: &[&str]| {
        let j = d.path().join("b.json");
        let mut args = vec!["bench", "--quick", "--case", "map-page-seq-c", "--case", "fs-iozone-f2fs", "--json"];
        args.push(j.to_str().unwrap());
        args.extend_from_slice(extra);
        ok(&args);
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
        v.as_array().unwrap().clone()
    };
    let (own, shared) = (rows(&[]), rows(&["--in-process"]));
    assert_eq!(own.len(), 2);
    for (a, b) in own.iter().zip(&shared) {
        for key in ["name", "requests", "writes", "waf", "state_bytes_per_physical_page", "mapping_ram_bytes"] {
            assert_eq!(a[key], b[key], "{key}: {a} against {b}");
        }
        assert!(a["peak_rss_bytes"].as_u64().is_some_and(|v| v > 0), "{a}");
    }
    let e = fails(&["bench", "--child", "nope"]);
    assert!(e.contains("--child nope: no such case"), "{e}");
}

#[test]
fn bench_fs_iozone_reports_its_write_requests() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("b.json");
    ok(&["bench", "--quick", "--case", "fs-iozone-flashfs", "--json", j.to_str().unwrap()]);
    let rows: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    let r = &rows[0];
    let (requests, writes) = (r["requests"].as_u64().unwrap(), r["writes"].as_u64().unwrap());
    // --quick: a 4 MiB file of 1 024 records; create, random write and
    // sequential write write each once, update a quarter of them (256); the
    // two read phases read 1 024 each.
    assert_eq!((writes, requests), (3 * 1024 + 256, 5 * 1024 + 256), "{r}");
    let rate = writes as f64 / r["wall_time_s"].as_f64().unwrap();
    assert!((r["writes_per_s"].as_f64().unwrap() - rate).abs() <= rate * 1e-9, "{r}");
}

#[test]
fn request_log_and_time_series() {
    let (d, p) = tmp(
        "c.toml",
        "[device]\nblocks_per_plane = 64\n[workload]\nrequests = 2500\nread_fraction = 0.2\nwarmup = 500\n",
    );
    let (log, series) = (d.path().join("r.csv"), d.path().join("s.csv"));
    ok(&[
        "run",
        p.to_str().unwrap(),
        "--quiet",
        "--requests-csv",
        log.to_str().unwrap(),
        "--series-csv",
        series.to_str().unwrap(),
        "--series-every",
        "1000",
    ]);
    let log = std::fs::read_to_string(log).unwrap();
    assert_eq!(log.lines().count(), 1 + 3000);
    assert!(log.starts_with("index,measured,op,offset_bytes,pages,issue_ns,done_ns,latency_ns,gc_wait_ns\n0,0,"));
    assert_eq!(log.lines().filter(|l| l.split(',').nth(1) == Some("1")).count(), 2500);
    let series = std::fs::read_to_string(series).unwrap();
    assert_eq!(series.lines().count(), 1 + 3);
    assert!(series.lines().nth(1).unwrap().starts_with("1000,"));
}

#[test]
fn hotness_compares_identifiers_on_synthetic_and_trace_workloads() {
    let cfg = "[device]\nchannels = 1\nchips_per_channel = 1\nblocks_per_plane = 256\n[workload]\npattern = \"hotcold\"\nhot_fraction = 0.02\nrequests = 200000\nprefill = true\n[hotness]\nwaf = true\nwarmup_writes = 20000\n";
    let (d, p) = tmp("h.toml", cfg);
    let png = d.path().join("h.png");
    let out = ok(&["hotness", p.to_str().unwrap(), "--json", "-", "--plot", png.to_str().unwrap()]);
    let v: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = v.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["multi-hash", "multi-bloom", "temperature-table", "two-level-lru", "window-oracle", "never-hot"]
    );
    for e in &v {
        for k in ["false_hot_rate", "false_cold_rate", "memory_bytes", "ns_per_write", "waf"] {
            assert!(e[k].is_number(), "{k} of {e}");
        }
    }
    let oracle = &v[4];
    assert_eq!((oracle["false_hot"].as_u64(), oracle["false_cold"].as_u64()), (Some(0), Some(0)));
    assert_eq!(v[5]["false_cold_rate"], 1.0);
    assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
    let Some(dir) = shared_traces() else { return };
    let cfg = format!("[workload]\nkind = \"trace\"\ntrace_path = \"{}\"\n", dir.join("cloudPhysicsIO.csv").display());
    let (_d, p) = tmp("t.toml", &cfg);
    let v: Vec<serde_json::Value> =
        serde_json::from_str(&ok(&["hotness", p.to_str().unwrap(), "--json", "-"])).unwrap();
    assert_eq!(v.len(), 6);
    assert!(v[0]["queries"].as_u64().unwrap() > 60_000);
}

#[test]
fn fs_powercut_campaign_reports_zero_loss() {
    let (_d, p) = tmp("pc.toml", "[flashfs]\nworkload_ops = 40\nevery_k_ops = 2\n");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["fs", "powercut", p.to_str().unwrap(), "--json", "-"])).unwrap();
    for k in ["cut_points", "recoveries", "lost_fsynced_bytes", "invariant_violations", "panics"] {
        assert!(v[k].is_u64(), "{k}");
    }
    assert!(v["cut_points"].as_u64().unwrap() > 50);
    assert_eq!(v["recoveries"], v["cut_points"]);
    assert_eq!(
        (v["lost_fsynced_bytes"].as_u64(), v["invariant_violations"].as_u64(), v["panics"].as_u64()),
        (Some(0), Some(0), Some(0))
    );
    let e = fails(&["fs", "powercut", p.to_str().unwrap(), "--set", "flashfs.every_k_op=2"]);
    assert!(e.contains("nearest valid: flashfs.every_k_ops"), "{e}");
    let e = fails(&["fs", "powercut", p.to_str().unwrap(), "--set", "flashfs.fs.elide_payload=true"]);
    assert!(e.contains("elide_payload") && e.contains("checks file contents"), "{e}");
}

#[test]
fn reproduce_wpo_gc_quick_writes_table_plots_and_json() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("wpo");
    let md = ok(&["reproduce", "wpo-gc", "--quick", "--out", out.to_str().unwrap()]);
    assert!(md.contains("| read response time | −20 % .. −40 % |") && md.contains("Financial*"), "{md}");
    for f in [
        "results.md",
        "results.json",
        "fig6_read_response.png",
        "fig7_write_response.png",
        "fig8_erases.png",
        "fig9_page_writes.png",
        "fig10_erase_stddev.png",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    // Four schemes under each set-up: four for a synthetic workload, two for a trace.
    assert_eq!(rows.len() % 4, 0);
    assert!(rows.len() >= 64);
    let aged = rows.iter().filter(|r| r["aging"] == "full aging");
    assert!(
        aged.clone().count() * 2 == rows.len() && aged.clone().all(|r| r["result"]["gc_runs"].as_u64().unwrap() > 0)
    );
    assert!(rows.iter().all(|r| r["erase_count_stddev_block"] == r["result"]["erase_count_stddev"]));
    assert!(
        md.contains("## Sensitivity") && md.contains("| Financial* | *vs DT-GC* ◀ | prefill only | seed's |"),
        "{md}"
    );
    report::reproduce_index_is_complete_and_renders(&out, d.path());
    let e = fails(&["reproduce", "nosuch"]);
    assert!(e.contains("available: wpo-gc, ubifs-hotdata"), "{e}");
}

#[test]
fn reproduce_fs_compare_quick_writes_claims_rows_plots_and_json() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("fscmp");
    // A hidden, smaller tree (0.2 % of a Linux 3.7 tree) keeps the test short.
    let o = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["reproduce", "fs-compare", "--quick", "--out", out.to_str().unwrap()])
        .env("FLASHLAB_FS_COMPARE_SCALE", "0.002")
        // The kernel rows' mount points go under this test's own directory, so the
        // check at the end sees only this run's (another fs-compare may be running).
        .env("TMPDIR", d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for f in ["results.md", "results.json", "small_files.png", "large_files.png", "flash_writes.png"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    for f in ["mount_time.png", "mount_time_ubi.png", "mount_memory.png", "index.html"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let plan = &v["plan"];
    let rows = v["measurements"]["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["flashfs-lz4", "flashfs-nc", "f2fs", "ext4", "kernel-ext4", "kernel-btrfs", "kernel-xfs"]);
    let tree_bytes = plan["tree_bytes"].as_u64().unwrap();
    for r in rows {
        if let Some(why) = r["missing"].as_str() {
            assert!(r["name"].as_str().unwrap().starts_with("kernel-"), "a model row is missing: {why}");
            eprintln!("note: {} missing: {why}", r["name"]);
            continue;
        }
        let phases = r["phases"].as_array().unwrap();
        let get = |n: &str| phases.iter().find(|p| p["name"] == n).unwrap_or_else(|| panic!("{n} in {}", r["name"]));
        // Every copy wrote and read back the whole tree; the large files went through whole.
        for k in 0..10 {
            assert_eq!(get(&format!("unpack/{k}"))["app_bytes_written"].as_u64(), Some(tree_bytes), "{}", r["name"]);
            assert_eq!(get(&format!("read/{k}"))["app_bytes_read"].as_u64(), Some(tree_bytes), "{}", r["name"]);
        }
        let large: u64 = plan["spec"]["large_file_bytes"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
        assert_eq!(get("large-read")["app_bytes_read"].as_u64(), Some(large));
        assert!(r["steps"]["write_kernel_s"].as_f64().unwrap() > 0.0, "{}", r["name"]);
        assert!(r["nand_program_pages"].as_u64().unwrap() > 0, "{}", r["name"]);
    }
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 12);
    assert!(claims.iter().all(|c| !c["verdict"].as_str().unwrap().is_empty()));
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("| flashfs-lz4 | ubifs |") && md.contains("| NILFS2 | NILFS2 | missing:"), "{md}");
    let scaling = v["measurements"]["scaling"].as_array().unwrap();
    assert_eq!(scaling.len(), 3);
    // The full scan reads more the larger the device.
    assert!(scaling[2]["jffs2_mount_s"].as_f64() > scaling[0]["jffs2_mount_s"].as_f64());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(d.path().to_str().unwrap()), "a mount was left: {mounts}");
}

/// A sweep file beside a small base config.
fn sweep_file(grid: &str) -> (tempfile::TempDir, PathBuf) {
    let (d, _) = tmp("base.toml", "[device]\nblocks_per_plane = 64\n[workload]\nrequests = 20000\nprefill = true\n");
    let s = d.path().join("s.toml");
    let text = format!("base = \"base.toml\"\nseeds = [1, 2]\n[set]\n\"timing.enabled\" = false\n[grid]\n{grid}");
    std::fs::write(&s, text).unwrap();
    (d, s)
}

/// CSV rows without the `wall_time_s` column.
fn csv_without_wall(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    // `config` (JSON text, quoted) is the only cell with commas and comes before
    // `wall_time_s` (alphabetical), so count the column from the end of the line.
    let from_end = header.len() - header.iter().position(|h| *h == "wall_time_s").unwrap();
    text.lines()
        .map(|l| {
            let mut cells: Vec<&str> = l.split(',').collect();
            cells.remove(cells.len() - from_end);
            cells.join(",")
        })
        .collect()
}

#[test]
fn sweep_writes_one_row_per_run_and_resumes() {
    let (d, s) = sweep_file("\"gc.victim\" = [\"greedy\", \"fifo\"]\n\"device.spare_factor\" = [0.1, 0.25]\n");
    let (out1, out2) = (d.path().join("o1"), d.path().join("o2"));
    let s = s.to_str().unwrap();
    ok(&["sweep", s, "--quiet", "--jobs", "2", "--out", out1.to_str().unwrap()]);
    ok(&["sweep", s, "--quiet", "--jobs", "1", "--out", out2.to_str().unwrap()]);
    let csv = std::fs::read_to_string(out1.join("results.csv")).unwrap();
    assert!(csv.starts_with("device.spare_factor,gc.victim,seed,"), "{}", &csv[..80]);
    assert_eq!(csv.lines().count(), 1 + 8);
    assert!(csv.lines().nth(1).unwrap().starts_with("0.1,greedy,1,"));
    assert!(csv.lines().nth(8).unwrap().starts_with("0.25,fifo,2,"));
    assert_eq!(csv_without_wall(&out1.join("results.csv")), csv_without_wall(&out2.join("results.csv")));
    let md = std::fs::read_to_string(out1.join("summary.md")).unwrap();
    assert_eq!(md.lines().filter(|l| l.starts_with("| 0.")).count(), 4, "{md}");
    assert!(std::fs::metadata(out1.join("results.parquet")).unwrap().len() > 1000);
    // index.html: same bytes from both runs (wall time left out), one plot per swept key and metric.
    let html = std::fs::read_to_string(out1.join("index.html")).unwrap();
    assert_eq!(html, std::fs::read_to_string(out2.join("index.html")).unwrap(), "same sweep, same page");
    report::sweep_index_is_complete_and_renders(&out1, d.path());

    // One run's WAF is that of the same config run alone.
    let alone = ok(&[
        "run",
        d.path().join("base.toml").to_str().unwrap(),
        "--quiet",
        "--json",
        "-",
        "--set",
        "timing.enabled=false",
        "--set",
        "gc.victim=fifo",
        "--set",
        "device.spare_factor=0.25",
        "--set",
        "workload.seed=2",
    ]);
    let waf = serde_json::from_str::<serde_json::Value>(&alone).unwrap()["waf"].as_f64().unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "waf").unwrap();
    let last: Vec<&str> = csv.lines().nth(8).unwrap().split(',').collect();
    // Columns before `config` (alphabetical: ... channel_utilization_*, config) do not shift; waf comes after it.
    let from_end = header.len() - col;
    assert_eq!(last[last.len() - from_end].parse::<f64>().unwrap(), waf);

    // Resume: with 3 runs journalled, only 5 run again.
    let journal = out1.join("runs.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&journal).unwrap().lines().map(String::from).collect();
    std::fs::write(&journal, lines[..3].join("\n") + "\n").unwrap();
    ok(&["sweep", s, "--quiet", "--out", out1.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&journal).unwrap().lines().count(), 8);
    assert_eq!(csv_without_wall(&out1.join("results.csv")), csv_without_wall(&out2.join("results.csv")));
}

#[test]
fn sweep_errors_name_the_point_or_key() {
    let (_d, s) = sweep_file("\"gc.victim\" = [\"greedy\", \"nope\"]\n");
    let e = fails(&["sweep", s.to_str().unwrap(), "--quiet"]);
    assert!(e.contains("sweep point 1 (gc.victim=\"nope\")") && e.contains("unknown GC victim policy"), "{e}");
    let (_d, s) = sweep_file("\"gc.victim\" = \"greedy\"\n");
    let e = fails(&["sweep", s.to_str().unwrap(), "--quiet"]);
    assert!(e.contains("grid.\"gc.victim\": expected a list"), "{e}");
    let (_d, s) = sweep_file("\"workload.seed\" = [1, 2]\n");
    assert!(fails(&["sweep", s.to_str().unwrap(), "--quiet"]).contains("list the seeds in `seeds`"));
}

mod fuse;
mod golden_fs;
mod hostile;
mod new_user;

#[test]
fn fs_bench_runs_iozone_on_flashfs_and_jffs2_with_phases_and_causes() {
    let cfg = "[flashfs.flash]\nblocks = 128\n[fs.workload]\nfile_kib = 256\nutilisation = 40.0\n";
    let (_d, p) = tmp("fsb.toml", cfg);
    let p = p.to_str().unwrap();
    for kind in ["flashfs", "jffs2"] {
        let set = format!("fs.kind=\"{kind}\"");
        let v: serde_json::Value =
            serde_json::from_str(&ok(&["fs", "bench", p, "--set", &set, "--json", "-"])).unwrap();
        assert_eq!((v["fs_kind"].as_str(), v["workload"].as_str()), (Some(kind), Some("iozone")));
        let phases: Vec<&str> = v["phases"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(phases, ["fill", "create", "update", "seq-read", "random-read", "random-write", "seq-write"]);
        // 64 records written by create, random-write and seq-write, 16 by the update.
        assert_eq!(v["app_bytes_written"].as_u64(), Some((3 * 64 + 16) * 4096), "{kind}");
        assert_eq!(v["app_bytes_read"].as_u64(), Some(2 * 64 * 4096), "{kind}");
        let w = &v["fs_writes"];
        let sum: u64 =
            ["data", "metadata", "journal", "checkpoint", "cleaning"].iter().map(|c| w[c].as_u64().unwrap()).sum();
        assert_eq!(v["fs_write_bytes"].as_u64(), Some(sum));
        assert!(v["fs_waf"].as_f64().unwrap() > 0.5 && v["device"]["nand"]["pages_programmed"].is_object(), "{kind}");
        assert!(v["phases"][1]["throughput_mib_s"].as_f64().unwrap() > 0.0);
        assert_eq!(v["enospc"], false);
    }
}

#[test]
fn fs_bench_runs_flashfs_and_jffs2_on_the_ssd_through_block2mtd() {
    let cfg = "[device]\npage_bytes = 4096\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 2\n\
               planes_per_die = 1\nblocks_per_plane = 128\npages_per_block = 64\nspare_factor = 0.125\n\
               [fs]\ndevice = \"block2mtd\"\n[fs.workload]\nfile_kib = 256\nutilisation = 40.0\n";
    let (_d, p) = tmp("b2m.toml", cfg);
    let p = p.to_str().unwrap();
    for kind in ["flashfs", "jffs2"] {
        let set = format!("fs.kind=\"{kind}\"");
        let v: serde_json::Value =
            serde_json::from_str(&ok(&["fs", "bench", p, "--set", &set, "--json", "-"])).unwrap();
        assert_eq!((v["fs_kind"].as_str(), v["fs_device"].as_str()), (Some(kind), Some("block2mtd")));
        assert_eq!(v["app_bytes_written"].as_u64(), Some((3 * 64 + 16) * 4096), "{kind}");
        let d = &v["device"];
        // 112 MiB of SSD (896 erase blocks of 128 KiB, 4 KiB write units).
        let b = &d["block2mtd"];
        assert!(b["program_requests"].as_u64().unwrap() > 0 && b["busy_ns"].as_u64().unwrap() > 0, "{d}");
        assert!(d["nand"]["pages_programmed"].is_object() && d["ssd"]["waf"].is_number(), "{d}");
        assert_eq!(
            d["ssd"]["write_requests"].as_u64().unwrap(),
            b["program_requests"].as_u64().unwrap() + b["erase_requests"].as_u64().unwrap(),
            "erase = write: every program and erase is one SSD write"
        );
        assert_eq!(d["ssd"]["read_requests"].as_u64(), b["read_requests"].as_u64());
    }
    let e = fails(&["fs", "bench", p, "--set", "block2mtd.erase_kib=96"]);
    assert!(e.contains("block2mtd.erase_kib: 96 KiB does not divide") && e.lines().count() == 1, "{e}");
    let e = fails(&["fs", "bench", p, "--set", "fs.device=\"disk\""]);
    assert!(e.contains("fs.device") && e.contains("nand, block2mtd") && e.lines().count() == 1, "{e}");
    let e = fails(&["fs", "bench", p, "--set", "block2mtd.erase=\"zap\""]);
    assert!(e.contains("block2mtd.erase: \"zap\" is not one of: write, trim"), "{e}");
    let e = fails(&["fs", "bench", p, "--set", "fs.kind=\"f2fs\""]);
    assert!(e.contains("fs.device = \"block2mtd\": expected \"nand\" for fs.kind = \"f2fs\""), "{e}");
    let e = fails(&["fs", "powercut", p]);
    assert!(e.contains("fs powercut runs on raw NAND only"), "{e}");
}

#[test]
fn fs_bench_runs_iozone_on_f2fs_over_the_ssd() {
    let cfg = "[device]\npage_bytes = 4096\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 2\n\
               planes_per_die = 1\nblocks_per_plane = 128\npages_per_block = 64\nspare_factor = 0.1\n\
               [fs]\nkind = \"f2fs\"\n[fs.workload]\nfile_kib = 256\nutilisation = 40.0\n[fs.f2fs]\nstrict = true\n";
    let (_d, p) = tmp("f2fs.toml", cfg);
    let p = p.to_str().unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&["fs", "bench", p, "--json", "-"])).unwrap();
    assert_eq!((v["fs_kind"].as_str(), v["workload"].as_str()), (Some("f2fs"), Some("iozone")));
    assert_eq!(v["app_bytes_written"].as_u64(), Some((3 * 64 + 16) * 4096));
    let w = &v["fs_writes"];
    let sum: u64 =
        ["data", "metadata", "journal", "checkpoint", "cleaning"].iter().map(|c| w[c].as_u64().unwrap()).sum();
    assert_eq!(v["fs_write_bytes"].as_u64(), Some(sum));
    assert!(w["data"].as_u64().unwrap() > 0 && w["checkpoint"].as_u64().unwrap() > 0, "{w}");
    assert_eq!(w["journal"].as_u64(), Some(0));
    // The SSD's full result with the model's counters and mkfs figures.
    let d = &v["device"];
    assert!(d["waf"].is_number() && d["nand_program_pages"].as_u64().unwrap() > 0, "{d}");
    assert!(d["trim_requests"].as_u64().unwrap() >= 1, "mkfs TRIMs the device");
    // The model counts every data block of the run; `fs_writes` only the measured
    // phases, so the model's count is the sum over every phase, the filler's included.
    let all_phases: u64 =
        v["phases"].as_array().unwrap().iter().map(|p| p["fs_writes"]["data"].as_u64().unwrap()).sum();
    assert!(all_phases > w["data"].as_u64().unwrap(), "the filler writes data too");
    assert_eq!(d["f2fs"]["data_blocks_written"].as_u64().unwrap() * 4096, all_phases);
    assert!(d["f2fs"]["main_segments"].as_u64().unwrap() > 0 && d["f2fs"]["checkpoints"].as_u64().unwrap() > 0);
    assert_eq!(v["enospc"], false);
    // Bad [fs.f2fs] values: one line naming the key.
    let e = fails(&["fs", "bench", p, "--set", "fs.f2fs.segs_per_sec=3"]);
    assert!(e.contains("fs.f2fs.segs_per_sec") && e.contains("power of two") && e.lines().count() == 1, "{e}");
    let e = fails(&["fs", "bench", p, "--set", "fs.f2fs.ipu_policy=\"often\""]);
    assert!(e.contains("ipu_policy") && e.lines().count() == 1, "{e}");
    let e = fails(&["fs", "bench", p, "--set", "fs.f2fs.bogus=1"]);
    assert!(e.contains("bogus") && e.lines().count() == 1, "{e}");
}

#[test]
fn fs_bench_bad_input_is_one_line_naming_the_key() {
    let (_d, p) = tmp("fsb.toml", "[flashfs.flash]\nblocks = 64\n");
    let p = p.to_str().unwrap();
    let e = fails(&["fs", "bench", p, "--set", "fs.kind=\"xfs\""]);
    assert!(e.contains("fs.kind") && e.contains("flashfs, jffs2"), "{e}");
    let e = fails(&["fs", "bench", p, "--set", "fs.workload.kind=\"tpcc\""]);
    assert!(e.contains("fs.workload.kind") && e.contains("iozone, fileserver, varmail, dd, untar"), "{e}");
    for u in ["0.0", "100.0", "-5.0"] {
        let e = fails(&["fs", "bench", p, "--set", &format!("fs.workload.utilisation={u}")]);
        assert!(e.contains("fs.workload.utilisation") && e.contains("(0, 100)"), "{e}");
    }
    let e = fails(&["fs", "bench", p, "--set", "fs.workload.file_kib=65536"]);
    assert!(e.contains("fs.workload.file_kib = 65536") && e.contains("fit"), "{e}");
    // Filling the device is a result, not a failure.
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "fs",
        "bench",
        p,
        "--set",
        "fs.workload.kind=\"dd\"",
        "--set",
        "fs.workload.write_target_mib=64",
        "--json",
        "-",
    ]))
    .unwrap();
    assert_eq!((v["enospc"].as_bool(), v["enospc_phase"].as_str()), (Some(true), Some("run")));
}
mod swap;

#[test]
fn fs_bench_runs_iozone_on_ext4_over_the_ssd() {
    let cfg = "[device]\nblocks_per_plane = 256\npages_per_block = 64\npage_bytes = 4096\n[fs]\nkind = \"ext4\"\n\
               [fs.workload]\nfile_kib = 256\nutilisation = 40.0\n[fs.ext4]\njournal_mib = 16\nstrict = true\n";
    let (_d, p) = tmp("ext4.toml", cfg);
    let p = p.to_str().unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&["fs", "bench", p, "--json", "-"])).unwrap();
    assert_eq!((v["fs_kind"].as_str(), v["workload"].as_str()), (Some("ext4"), Some("iozone")));
    let phases: Vec<&str> = v["phases"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(phases, ["fill", "create", "update", "seq-read", "random-read", "random-write", "seq-write"]);
    assert_eq!(v["app_bytes_written"].as_u64(), Some((3 * 64 + 16) * 4096));
    let w = &v["fs_writes"];
    assert!(w["data"].as_u64().unwrap() > 0 && w["journal"].as_u64().unwrap() > 0, "{w}");
    assert_eq!(w["cleaning"].as_u64(), Some(0));
    // The SSD's full result, with the model's own counters beside it.
    let d = &v["device"];
    assert!(d["waf"].as_f64().is_some() && d["host_write_pages"].as_u64().unwrap() > 0, "{d}");
    assert!(d["ext4"]["commits"].as_u64().unwrap() > 0, "{d}");
    assert_eq!(v["enospc"], false);
    let e = fails(&["fs", "bench", p, "--set", "fs.ext4.group_mib=512"]);
    assert!(e.contains("fs.ext4.group_mib") && e.contains("1..=128"), "{e}");
    let e = fails(&["fs", "bench", p, "--set", "fs.ext4.journal_mb=4"]);
    assert!(e.contains("journal_mb"), "{e}");
    let e = fails(&["fs", "bench", p, "--set", "fs.kind=\"xfs\""]);
    assert!(e.contains("flashfs, jffs2, ext4"), "{e}");
}

/// A reader that has gone (`flashlab config default | head -c 0`) ends flashlab by
/// SIGPIPE, quietly, not by a panic on EPIPE.
#[cfg(unix)]
#[test]
fn closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    // The read end is closed before flashlab starts, so its first write
    // finds no reader whatever the scheduling (closing it after the spawn
    // raced with the child writing its few KiB into the pipe first).
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["config", "default"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("flashlab runs");
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?} {err}");
}

#[test]
fn fsftl_plan_formats_f2fs_and_ext4_as_seed_004() {
    use flashlab_cli::repro_fsftl::Plan;
    for quick in [false, true] {
        let plan = Plan::new(quick);
        let page = plan.ftls.iter().position(|f| f.name == "page").unwrap();
        let sets = plan.sets("f2fs", page, 95.0);
        for want in ["fs.f2fs.mkfs_tools=\"1.1\"", "fs.f2fs.overprovision_ratio=5.0", "fs.f2fs.kernel=\"3.8\""] {
            assert!(sets.iter().any(|s| s == want), "{want} missing from {sets:?}");
        }
        assert!(!plan.sets("ext4", page, 95.0).iter().any(|s| s.starts_with("fs.f2fs")));
        let (raw, ssd) = flashlab_config::load("", "t", &sets).unwrap();
        let bytes = ssd.ftl.logical_pages * ssd.geometry.page_bytes as u64;
        let f = &raw.fs.f2fs;
        let l = flashlab_f2fs::Layout::with_tools(bytes, 1, 1, f.overprovision(), f.mkfs_tools).unwrap();
        // Table 2: 50 MB reserved; 250 MB overprovision on 4 GB, here 340 MB less (page
        // mapping's spare space): (main − 25) × 5 % + 25 segments of 2 MiB.
        assert_eq!(l.reserved_segments, 25);
        assert_eq!(l.overprov_segments, (l.segment_count_main - 25) * 5 / 100 + 25);
        let blocks = bytes / 4096;
        // mke2fs's 64 MiB for the 4 GB device; --quick divides it by 16 (4 MiB).
        assert_eq!(plan.journal_mib(blocks), if quick { 4 } else { 64 });
    }
}
