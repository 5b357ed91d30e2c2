//! `flashlab swap`: the example runs and reports the contract's fields; bad input is one line.

use super::{fails, ok, repo, tmp};

#[test]
fn swap_example_reports_run_time_traffic_and_trim() {
    let ex = repo().join("examples/swap-linux.toml");
    let ex = ex.to_str().unwrap();
    let out = ok(&["swap", ex, "--set", "swap.max_references=120000", "--json", "-"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for k in
        ["run_time_s", "swap_outs", "swap_ins", "trim_commands", "trim_time_s_total", "trim_time_ms_mean", "ssd_waf"]
    {
        assert!(!v[k].is_null(), "{k} is null: {v}");
    }
    assert_eq!(v["swapping"], true);
    assert!(v["trim_commands"].as_u64().unwrap() > 0);
    let none =
        ok(&["swap", ex, "--set", "swap.max_references=120000", "--set", "swap.allocator=\"none\"", "--json", "-"]);
    let n: serde_json::Value = serde_json::from_str(&none).unwrap();
    assert_eq!(n["trim_commands"], 0);
    let table = ok(&["swap", ex, "--set", "swap.max_references=1000", "--set", "swap.ram_mib=512"]);
    assert!(table.contains("no (the footprint fits in RAM)"), "{table}");
}

#[test]
fn swap_bad_input_is_one_line() {
    let ex = repo().join("examples/swap-linux.toml");
    let ex = ex.to_str().unwrap();
    let e = fails(&["swap", ex, "--set", "swap.allocator=\"lru\""]);
    assert!(e.contains("swap.allocator = \"lru\": expected one of \"none\", \"linux\""), "{e}");
    let e = fails(&["swap", ex, "--set", "swap.swap_mib=4096"]);
    assert!(e.contains("swap.swap_mib = 4096: expected at most the SSD's logical capacity"), "{e}");
    let e = fails(&["swap", ex, "--set", "swap.app=\"photoshop\""]);
    assert!(e.contains("swap.app = \"photoshop\": expected one of \"imagemagick\""), "{e}");
    let (_d, t) = tmp("refs.txt", "W 0x1000\nR 0x2000\nQ 12\n");
    let e = fails(&["swap", ex, "--set", &format!("swap.trace=\"{}\"", t.display())]);
    assert!(e.contains("refs.txt:3: expected a reference kind"), "{e}");
}

#[test]
fn swap_runs_a_lackey_trace() {
    let mut text = String::from("==1== lackey\n");
    for i in 0..40_000u64 {
        text +=
            &format!(" S {:x},8\n L {:x},8\n", 0x1000_0000 + (i % 9000) * 4096, 0x1000_0000 + (i * 7 % 9000) * 4096);
    }
    let (_d, t) = tmp("lackey.txt", &text);
    let cfg =
        format!("[device]\nblocks_per_plane = 64\n[swap]\nram_mib = 16\nswap_mib = 64\ntrace = \"{}\"\n", t.display());
    let (_d2, c) = tmp("c.toml", &cfg);
    let v: serde_json::Value = serde_json::from_str(&ok(&["swap", c.to_str().unwrap(), "--json", "-"])).unwrap();
    assert_eq!(v["app"], "trace");
    assert_eq!(v["references"], 80_000);
    assert!(v["swap_outs"].as_u64().unwrap() > 0);
}
