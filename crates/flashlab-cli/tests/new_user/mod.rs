//! Regression tests for the problems a new user hit (issue 12): for each, the input,
//! the exit status and the exact one-line message.

use super::{flashlab, ok, repo, shared_traces, tmp};
use std::path::Path;
use std::process::Command;

/// The exact error line of a command that must fail with status 1.
fn error_line(args: &[&str]) -> String {
    let o = flashlab(args);
    assert_eq!(o.status.code(), Some(1), "flashlab {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let e = String::from_utf8(o.stderr).unwrap();
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    e.trim_end().to_string()
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).unwrap()
}

/// Standard error of a successful command.
fn warnings_of(args: &[&str]) -> Vec<String> {
    let o = flashlab(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stderr).unwrap().lines().map(str::to_string).collect()
}

const SMALL: &str = "[device]\nblocks_per_plane = 64\n[workload]\nrequests = 100\n";

fn trace_config(dir: &Path, trace: &str, extra: &str) -> std::path::PathBuf {
    let p = dir.join("t.toml");
    let text =
        format!("[device]\nblocks_per_plane = 64\n[workload]\nkind = \"trace\"\ntrace_path = \"{trace}\"\n{extra}");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn identifier_parameters_of_every_kind_are_accepted() {
    let cfg = "[placement]\nenabled = true\nidentifier = { kind = \"two-level-lru\", hot_entries = 512, candidate_entries = 1024 }\n\
               [flashfs.fs.hot_identifier]\nkind = \"multi-hash\"\ncounters = 8192\n";
    let (_d, p) = tmp("id.toml", cfg);
    let p = p.to_str().unwrap();
    let out = ok(&["config", "check", p]);
    assert!(out.contains("candidate_entries = 1024") && out.contains("counters = 8192"), "{out}");
    let out = ok(&["config", "check", p, "--set", "placement.identifier={ kind = \"multi-hash\", counters = 4096 }"]);
    assert!(
        out.contains("[placement.identifier]\nkind = \"multi-hash\"\nhash_functions = 4\ncounters = 4096"),
        "{out}"
    );
    assert_eq!(
        error_line(&["config", "check", p, "--set", "placement.identifier={ kind = \"multi-hash\", countrs = 8 }"]),
        "flashlab: error: --set: unknown key `placement.identifier.countrs`; nearest valid: \
         placement.identifier.counters, flashfs.fs.hot_identifier.counters, placement.identifier.counter_bits"
    );
}

#[test]
fn closed_form_waf_only_where_it_applies() {
    let (_d, p) = tmp("s.toml", SMALL);
    let p = p.to_str().unwrap();
    let out = ok(&["run", p]);
    assert!(out.lines().any(|l| l.starts_with("WAF ") && l.ends_with(" 1.0000  (no GC ran)")), "{out}");
    let v = json(&["run", p, "--json", "-"]);
    assert_eq!((v["gc_runs"].as_u64(), v["waf_closed_form"].is_null()), (Some(0), true));
    // With GC in steady state the closed form is shown; with one-page blocks it is not a WAF (< 1).
    let gc = ["--set", "workload.prefill=true", "--set", "workload.requests=100000", "--json", "-"];
    let v = json(&[&["run", p][..], &gc].concat());
    assert!(v["gc_runs"].as_u64().unwrap() > 0 && v["waf_closed_form"].as_f64().unwrap() > 1.0, "{v}");
    let one = ["--set", "device.pages_per_block=1", "--set", "device.blocks_per_plane=4096"];
    let v = json(&[&["run", p][..], &gc, &one].concat());
    assert!(v["gc_runs"].as_u64().unwrap() > 0 && v["waf_closed_form"].is_null(), "{v}");
}

#[test]
fn huge_geometry_is_an_error_not_a_panic() {
    let mut args = vec!["config", "check", "/dev/null"];
    for k in ["channels", "chips_per_channel", "dies_per_chip", "planes_per_die", "blocks_per_plane"] {
        args.extend(["--set", Box::leak(format!("device.{k}=65536").into_boxed_str())]);
    }
    assert_eq!(
        error_line(&args),
        "flashlab: error: device.channels x chips_per_channel x dies_per_chip x planes_per_die x blocks_per_plane x \
         pages_per_block = more than 2^64 physical pages; at most 4294967279 are supported (page ids are 32-bit)"
    );
}

#[test]
fn sizes_beyond_the_device_are_refused() {
    let (d, p) = tmp("s.toml", SMALL);
    let p = p.to_str().unwrap();
    assert_eq!(
        error_line(&["run", p, "--set", "buffer.bytes=1099511627776"]),
        "flashlab: error: buffer.bytes = 1099511627776: expected at most the logical capacity, 214747136 bytes"
    );
    assert_eq!(
        error_line(&["run", p, "--set", "workload.request_bytes=1099511627776"]),
        "flashlab: error: workload.request_bytes = 1099511627776: expected at most the logical capacity, 214747136 bytes"
    );
    // A 2 TiB trace request.
    std::fs::write(d.path().join("huge.ascii"), "0 0 0 8 0\n10 0 0 4294967296 0\n").unwrap();
    let c = trace_config(d.path(), "huge.ascii", "trace_format = \"ssdsim\"\n");
    let e = error_line(&["run", c.to_str().unwrap()]);
    assert!(
        e.ends_with("huge.ascii:2: request 1: 1073741824 pages is longer than the 104857 logical pages it maps onto"),
        "{e}"
    );
}

#[test]
fn skipped_lines_are_counted_and_empty_traces_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("bad.ascii"), "0 0 100 8 0\n10 0 1x0 8 0\n20 0 100 8 1\n").unwrap();
    let c = trace_config(d.path(), "bad.ascii", "trace_format = \"ssdsim\"\n");
    let c = c.to_str().unwrap();
    let v = json(&["run", c, "--skip-bad-lines", "--json", "-"]);
    assert_eq!((v["requests"].as_u64(), v["skipped_lines"].as_u64()), (Some(2), Some(1)));
    let out = ok(&["run", c, "--skip-bad-lines"]);
    assert!(
        out.lines().any(|l| l.starts_with("trace input ") && l.contains(" 1 bad lines skipped, 0 reordered")),
        "{out}"
    );
    assert_eq!(warnings_of(&["run", c, "--skip-bad-lines"]), ["flashlab: warning: 1 bad trace lines were skipped"]);
    // Random bytes with an explicit format: every line skipped, nothing to measure.
    let noise: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(d.path().join("bad.ascii"), &noise).unwrap();
    let e = error_line(&["run", c, "--skip-bad-lines"]);
    assert!(
        e.starts_with("flashlab: error: bad.ascii: no requests to measure (") && e.contains(" bad lines skipped)"),
        "{e}"
    );
    std::fs::write(d.path().join("bad.ascii"), "").unwrap();
    assert_eq!(error_line(&["run", c]), "flashlab: error: bad.ascii: no requests to measure (0 bad lines skipped)");
}

#[test]
fn trace_example_works_from_a_fresh_clone_layout_and_names_paths() {
    let Some(traces) = shared_traces() else { return };
    // A clone with shared/ beside it, run from an unrelated working folder.
    let root = tempfile::tempdir().unwrap();
    let examples = root.path().join("flashlab/examples");
    std::fs::create_dir_all(&examples).unwrap();
    std::fs::create_dir_all(root.path().join("shared")).unwrap();
    std::os::unix::fs::symlink(&traces, root.path().join("shared/traces")).unwrap();
    let cfg = examples.join("trace-ssdsim.toml");
    std::fs::copy(repo().join("examples/trace-ssdsim.toml"), &cfg).unwrap();
    let run = |cfg: &Path, env: Option<&Path>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_flashlab"));
        c.args(["run", cfg.to_str().unwrap(), "--json", "-"]).current_dir(std::env::temp_dir());
        if let Some(dir) = env {
            c.env("FLASHLAB_TRACES", dir);
        }
        c.output().unwrap()
    };
    let o = run(&cfg, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Elsewhere, the path does not resolve: the error names the key, the config and the resolved path.
    let other = root.path().join("elsewhere.toml");
    std::fs::copy(&cfg, &other).unwrap();
    let o = run(&other, None);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8(o.stderr).unwrap();
    let want = format!(
        "flashlab: error: workload.trace_path = \"../../shared/traces/example.ascii\" in {}: cannot open {}: \
         No such file or directory (os error 2) (relative paths are resolved against the config file's folder, \
         then by file name in $FLASHLAB_TRACES)\n",
        other.display(),
        root.path().join("../../shared/traces/example.ascii").display()
    );
    assert_eq!(e, want);
    // FLASHLAB_TRACES points it at the shared traces.
    let o = run(&other, Some(&traces));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn output_paths_are_checked_before_the_run() {
    // 10^12 requests would run for hours: the error must come first.
    let (_d, p) = tmp("s.toml", "[workload]\nrequests = 1000000000000\n");
    let p = p.to_str().unwrap();
    assert_eq!(
        error_line(&["run", p, "--json", "/nonexistent-dir/x.json"]),
        "flashlab: error: --json /nonexistent-dir/x.json: folder /nonexistent-dir does not exist"
    );
    assert_eq!(
        error_line(&["run", p, "--series-csv", "/nonexistent-dir/s.csv"]),
        "flashlab: error: --series-csv /nonexistent-dir/s.csv: folder /nonexistent-dir does not exist"
    );
    assert_eq!(
        error_line(&["hotness", p, "--plot", "/nonexistent-dir/h.png"]),
        "flashlab: error: --plot /nonexistent-dir/h.png: folder /nonexistent-dir does not exist"
    );
    assert_eq!(
        error_line(&["run", p, "--series-every", "0"]),
        "flashlab: error: --series-every 0: expected at least 1 request per interval"
    );
}

#[test]
fn powercut_setup_and_media_errors_are_not_invariant_violations() {
    let (_d, p) = tmp("pc.toml", "[flashfs]\nworkload_ops = 40\nevery_k_ops = 2\nprefill_bytes = 0\n");
    let p = p.to_str().unwrap();
    assert_eq!(
        error_line(&["fs", "powercut", p, "--set", "flashfs.flash.blocks=4"]),
        "flashlab: error: flashfs.flash.blocks: 4 is too few: UBI needs at least 8 eraseblocks"
    );
    assert_eq!(
        error_line(&["fs", "powercut", p, "--set", "flashfs.prefill_bytes=100000000"]),
        "flashlab: error: flashfs.prefill_bytes: 100000000 is not less than the raw flash size, 2097152 bytes (flashfs.flash.*)"
    );
    assert_eq!(
        error_line(&["fs", "powercut", p, "--set", "flashfs.prefill_bytes=2000000"]),
        "flashlab: error: flashfs.prefill_dead_bytes: 120000 plus flashfs.prefill_bytes = 2000000 is not less than the raw flash size, 2097152 bytes (flashfs.flash.*)"
    );
    assert_eq!(
        error_line(&[
            "fs",
            "powercut",
            p,
            "--set",
            "flashfs.prefill_bytes=2000000",
            "--set",
            "flashfs.prefill_dead_bytes=0"
        ]),
        "flashlab: error: power-cut campaign could not run: format: prefill of flashfs.prefill_bytes = 2000000: ENOSPC"
    );
    let set = ["--set", "flashfs.prefill_bytes=1000000", "--set", "flashfs.prefill_dead_bytes=1100000"];
    assert_eq!(
        error_line(&[&["fs", "powercut", p][..], &set].concat()),
        "flashlab: error: flashfs.prefill_dead_bytes: 1100000 plus flashfs.prefill_bytes = 1000000 is not less than the raw flash size, 2097152 bytes (flashfs.flash.*)"
    );
    let set = ["--set", "flashfs.prefill_bytes=900000", "--set", "flashfs.prefill_dead_bytes=900000"];
    assert_eq!(
        error_line(&[&["fs", "powercut", p][..], &set].concat()),
        "flashlab: error: power-cut campaign could not run: format: prefill of flashfs.prefill_bytes = 900000 and flashfs.prefill_dead_bytes = 900000: ENOSPC"
    );
    assert_eq!(
        error_line(&["fs", "powercut", p, "--set", "flashfs.fs.fanout=2"]),
        "flashlab: error: flashfs.fs.fanout: must be in 3..=64"
    );
    let v = json(&[
        "fs",
        "powercut",
        p,
        "--set",
        "flashfs.flash.faults.uncorrectable_per_read=0.01",
        "--set",
        "flashfs.max_cut_points=20",
        "--json",
        "-",
    ]);
    assert_eq!((v["invariant_violations"].as_u64(), v["lost_fsynced_bytes"].as_u64()), (Some(0), Some(0)));
    assert!(v["media_errors"].as_u64().unwrap() > 0, "{v}");
    assert!(!serde_json::to_string(&v).unwrap().contains("flash: flash:"));
}

#[test]
fn reordered_outlying_and_folded_requests_are_reported() {
    let d = tempfile::tempdir().unwrap();
    let glitch = "0 0 0 8 0\n1000000 0 8 8 0\n2000000 0 16 8 0\n1270000000000000000 0 24 8 0\n3000000 0 32 8 0\n4000000 0 40 8 0\n";
    std::fs::write(d.path().join("g.ascii"), glitch).unwrap();
    let c = trace_config(d.path(), "g.ascii", "trace_format = \"ssdsim\"\narrival = \"trace\"\n");
    let c = c.to_str().unwrap();
    let v = json(&["run", c, "--json", "-"]);
    assert_eq!((v["reordered_requests"].as_u64(), v["outlying_timestamps"].as_u64()), (Some(2), Some(1)));
    assert_eq!((v["folded_requests"].as_u64(), v["skipped_lines"].as_u64()), (Some(0), Some(0)));
    assert_eq!(
        warnings_of(&["run", c]),
        [
            "flashlab: warning: 2 requests had a timestamp earlier than an earlier request's and were issued at that \
             earlier request's time",
            "flashlab: warning: 1 gaps between timestamps are over 1 s and about 1000 times the median gap; the \
             simulated time includes them",
        ]
    );
    // One request far beyond the 104 857 logical pages: folded (counted), or an error at its file and line.
    std::fs::write(d.path().join("g.ascii"), "0 0 0 8 0\n10 0 4294967296000 8 0\n").unwrap();
    let v = json(&["run", c, "--json", "-"]);
    assert_eq!(v["folded_requests"].as_u64(), Some(1));
    assert_eq!(
        warnings_of(&["run", c]),
        ["flashlab: warning: 1 requests reached beyond the 104857 logical pages and were folded into them \
          (workload.address_overflow = \"fold\")"]
    );
    let e = error_line(&["run", c, "--set", "workload.address_overflow=error"]);
    assert!(
        e.ends_with(
            "g.ascii:2: request 1: logical page 1073741824001 is beyond the logical capacity of 104857 pages \
                     (workload.address_overflow = \"error\"; use \"fold\" to fold addresses)"
        ),
        "{e}"
    );
}

#[test]
fn polish_errors_once_stats_display_help_texts() {
    let (d, p) = tmp("s.toml", SMALL);
    let p = p.to_str().unwrap();
    assert_eq!(
        error_line(&["config", "check", p, "--set", "device.page_bytes=100"]),
        "flashlab: error: device.page_bytes = 100 must be a multiple of 512"
    );
    std::fs::write(d.path().join("t.ascii"), "0 0 3 3 0\n5000 0 6000000 8 1\n").unwrap();
    let out = ok(&["trace", "stats", d.path().join("t.ascii").to_str().unwrap()]);
    assert!(out.contains("\naddress range  1536 .. 3072004096 (2.861 GiB)\n"), "{out}");
    assert!(!out.contains("Some(") && !out.contains("None"), "{out}");
    let help = ok(&["reproduce", "--help"]);
    for name in ["wpo-gc", "ubifs-hotdata", "FLASHLAB_TRACES"] {
        assert!(help.contains(name), "{help}");
    }
    // Every argument and option of every command has a help text.
    for cmd in [
        &["run"][..],
        &["trace", "stats"],
        &["trace", "convert"],
        &["config", "check"],
        &["bench"],
        &["hotness"],
        &["fs", "powercut"],
    ] {
        let help = ok(&[cmd, &["--help"]].concat());
        let bare: Vec<&str> = help
            .lines()
            .filter(|l| l.trim_start().starts_with('-') || l.trim_start().starts_with('<'))
            .filter(|l| l.split("  ").filter(|s| !s.trim().is_empty()).count() < 2)
            .collect();
        assert!(bare.is_empty(), "{cmd:?} lacks help for {bare:?}");
    }
}

#[test]
fn disksim_and_diskmon_traces_are_read_with_their_time_units() {
    let d = tempfile::tempdir().unwrap();
    let disksim = d.path().join("d.trace");
    std::fs::write(&disksim, "579.500020 0 1320146 8 1\n580.25 0 64 16 0\n").unwrap();
    let v = json(&["trace", "stats", disksim.to_str().unwrap(), "--json", "-"]);
    assert_eq!((v["format"].as_str(), v["requests"].as_u64()), (Some("disksim"), Some(2)));
    assert_eq!((v["first_time_s"].as_f64(), v["last_time_s"].as_f64()), (Some(0.57950002), Some(0.58025)));
    let diskmon = d.path().join("m.log");
    std::fs::write(&diskmon, "1\t0.000000\t0.00004768\t0\tWrite\t3074\t8\n2\t1.5\t0.001\t0\tRead\t10\t1\n").unwrap();
    let v = json(&["trace", "stats", diskmon.to_str().unwrap(), "--json", "-"]);
    assert_eq!(
        (v["format"].as_str(), v["reads"].as_u64(), v["last_time_s"].as_f64()),
        (Some("diskmon"), Some(1), Some(1.5))
    );
}

#[test]
fn prewrite_reads_and_blkparse_action() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("r.ascii"), "0 0 0 8 1\n10 0 8 8 1\n20 0 0 8 0\n").unwrap();
    let c = trace_config(d.path(), "r.ascii", "trace_format = \"ssdsim\"\n");
    let c = c.to_str().unwrap();
    let v = json(&["run", c, "--json", "-"]);
    assert_eq!((v["unmapped_read_pages"].as_u64(), v["read_latency_us_mean"].as_f64()), (Some(4), Some(0.0)));
    assert_eq!(
        warnings_of(&["run", c]),
        ["flashlab: warning: 4 page reads found never-written pages and cost no flash time \
          (workload.prewrite_reads = true writes them first, as SSDsim does)"]
    );
    let v = json(&["run", c, "--set", "workload.prewrite_reads=true", "--json", "-"]);
    assert_eq!((v["unmapped_read_pages"].as_u64(), v["prewritten_pages"].as_u64()), (Some(0), Some(4)));
    assert!(v["read_latency_us_mean"].as_f64().unwrap() > 20.0, "{v}");
    assert_eq!(v["host_write_pages"].as_u64(), Some(2), "pre-written pages are not counted");
    // A blkparse file with only completion events.
    let blk = "  8,0 3 1 0.000000000 1234 C W 223490 + 8 [0]\n  8,0 3 2 0.000100000 1234 C R 223490 + 8 [0]\n";
    std::fs::write(d.path().join("c.blk"), blk).unwrap();
    let c = trace_config(d.path(), "c.blk", "");
    let c = c.to_str().unwrap();
    assert_eq!(
        error_line(&["run", c]),
        "flashlab: error: c.blk: no requests to measure (0 bad lines skipped; a blkparse trace yields only its `D` \
         events (workload.blkparse_action))"
    );
    assert_eq!(json(&["run", c, "--set", "workload.blkparse_action=C", "--json", "-"])["requests"].as_u64(), Some(2));
    assert_eq!(
        error_line(&["run", c, "--set", "workload.blkparse_action=DD"]),
        "flashlab: error: workload.blkparse_action = \"DD\": expected one blkparse action letter, e.g. \"D\" \
         (issued to the driver), \"Q\" (queued), \"C\" (completed)"
    );
}

/// `flashlab hotness` measures its WAF column on page mapping: another `ftl.mapping` is
/// named in a warning, not silently ignored.
#[test]
fn hotness_warns_that_its_waf_uses_page_mapping() {
    let cfg =
        "[device]\nblocks_per_plane = 64\n[workload]\nrequests = 3000\n[hotness]\nwaf = true\nwarmup_writes = 0\n";
    let (_d, p) = tmp("h.toml", cfg);
    let p = p.to_str().unwrap();
    assert!(warnings_of(&["hotness", p]).iter().all(|w| !w.contains("ftl.mapping")));
    let w = warnings_of(&["hotness", p, "--set", "ftl.mapping=\"bast\""]);
    assert_eq!(
        w.iter().filter(|l| l.contains("ftl.mapping")).collect::<Vec<_>>(),
        ["flashlab: warning: ftl.mapping = \"bast\" does not apply to hotness's WAF column, which uses page mapping"]
    );
}
