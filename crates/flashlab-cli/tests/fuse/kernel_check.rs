//! scripts/ext4-kernel-check --quick: the kernel's ext4 on `blockdev serve` and the
//! ext4-like model run the same small IOZone scenario; the summary must hold both
//! sides' phases with exact data volumes. Skips (printing why) where the script would.

use super::skip_reason;
use std::path::Path;
use std::process::Command;

fn data_written(summary: &serde_json::Value, side: &str, phase: &str) -> u64 {
    summary[side]["by_region"][phase]["data"][0].as_u64().unwrap_or(0)
}

#[test]
fn ext4_kernel_check_quick_compares_both_traces() {
    if let Some(why) = skip_reason(&["mkfs.ext4", "dumpe2fs", "debugfs", "fsck.ext4", "losetup", "python3"]) {
        println!("note: ext4 kernel check skipped: {why}");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .arg(root.join("scripts/ext4-kernel-check"))
        .args(["--quick", "--flashlab", env!("CARGO_BIN_EXE_flashlab"), "--out"])
        .arg(tmp.path())
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("fsck -fn rc 0"), "{text}");
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("summary.json")).unwrap()).unwrap();
    // --quick: a 4 MiB file, written whole at the create and seq-write fsyncs on both sides.
    for side in ["model", "kernel"] {
        for phase in ["create", "seq-write"] {
            assert_eq!(data_written(&s, side, phase), 4 << 20, "{side} {phase}: {}", s[side]["by_region"][phase]);
        }
        let journal = s[side]["by_region"]["create"]["journal"][0].as_u64().unwrap_or(0);
        assert!(journal > 0, "{side}: the create phase's fsync commits a transaction");
        assert_eq!(data_written(&s, side, "seq-read"), 0, "{side}: reading writes no data");
    }
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    assert!(!String::from_utf8_lossy(&loops.stdout).contains("ext4-kernel-check"), "a loop device was left attached");
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains("ext4-kernel-check"), "a mount was left behind");
}
