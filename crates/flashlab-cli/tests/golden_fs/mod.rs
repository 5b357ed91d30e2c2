//! Issue 22 and issue 15's speed work must leave every file-system result
//! bit-identical, as `flashlab-sim`'s golden test does for the SSD: each run below
//! (`fs bench` on flashfs, JFFS2, ext4 and F2FS; flashfs overwrites without a page
//! cache; a seed-000 reproduction point; a small power-cut campaign) produces a JSON
//! object that is compared, key by key, with the one recorded from the code before the
//! speed work in `tests/fixtures/golden_fs_results.json`. Keys added later are not in
//! the fixture and are not compared; wall time, the config echo and host-memory
//! estimates (`memory_bytes`, `sim_memory_bytes`) are left out, as they are not
//! results of the model. Re-record only for a deliberate model change, saying so in
//! the commit: `FLASHLAB_RECORD_GOLDEN=1 cargo test -p flashlab-cli --test cli golden_fs`.

use flashlab_cli::fs_bench::{result_object, run_kind, FsKind};
use flashlab_flashfs::{Compression, Fs, FsSettings};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};
use serde_json::{json, Map, Value};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/golden_fs_results.json");

/// Keys that are not model results (removed at the top level and under `device`).
const NOT_RESULTS: [&str; 4] = ["wall_time_s", "config", "memory_bytes", "sim_memory_bytes"];

/// (name, `--set`s) of the `fs bench` runs. Small devices, so that the debug build
/// runs them in seconds; each one reaches the page cache's writeback and reclaim,
/// and the models' cleaning where the utilisation is high.
fn fs_bench_configs() -> Vec<(&'static str, String)> {
    let flashfs = "fs.kind=\"flashfs\" flashfs.flash.blocks=128 fs.workload.file_kib=2048";
    let dev = |blocks: u32| {
        format!(
            "device.channels=1 device.chips_per_channel=1 device.dies_per_chip=2 device.planes_per_die=1 \
             device.blocks_per_plane={blocks} device.pages_per_block=64 device.page_bytes=4096 ftl.mapping=\"page\""
        )
    };
    let ext4 =
        format!("{} fs.kind=\"ext4\" fs.ext4.journal_mib=4 fs.ext4.group_mib=16 fs.workload.file_kib=4096", dev(128));
    let f2fs = format!("{} fs.kind=\"f2fs\" fs.cache.memory_mib=16 fs.workload.file_kib=8192", dev(512));
    let files = "fs.workload.write_target_mib=2 fs.workload.file_kib=64 fs.workload.files=24";
    vec![
        ("flashfs-iozone", format!("{flashfs} fs.workload.utilisation=50")),
        ("flashfs-iozone-no-cache", format!("{flashfs} flashfs.fs.page_cache=false")),
        ("flashfs-iozone-small-cache", format!("{flashfs} flashfs.fs.cache.memory_mib=1 fs.workload.utilisation=70")),
        ("flashfs-fileserver-85", format!("{flashfs} {files} fs.workload.kind=\"fileserver\" fs.workload.utilisation=85")),
        (
            "flashfs-varmail-lz4",
            format!("{flashfs} {files} fs.workload.kind=\"varmail\" flashfs.fs.compression=\"lz4\" fs.workload.utilisation=60"),
        ),
        ("jffs2-iozone", "fs.kind=\"jffs2\" flashfs.flash.blocks=128 fs.workload.file_kib=1024".into()),
        ("ext4-iozone-counting", format!("{ext4} timing.enabled=false fs.workload.utilisation=50")),
        ("ext4-iozone-timed", format!("{ext4} timing.enabled=true fs.workload.utilisation=80")),
        (
            "ext4-iozone-small-cache-bytes",
            format!("{ext4} timing.enabled=false fs.cache.memory_mib=1 fs.ext4.content=\"bytes\""),
        ),
        (
            "ext4-iozone-95-device-gc",
            format!(
                "{} fs.kind=\"ext4\" fs.ext4.journal_mib=4 fs.ext4.group_mib=16 fs.cache.memory_mib=16 device.spare_factor=0.05 \
                 fs.workload.file_kib=65536 fs.workload.utilisation=95 timing.enabled=false",
                dev(512)
            ),
        ),
        ("ext4-fileserver", format!("{ext4} {files} fs.workload.kind=\"fileserver\" timing.enabled=false")),
        ("f2fs-iozone-counting", format!("{f2fs} timing.enabled=false fs.workload.utilisation=80")),
        ("f2fs-iozone-timed-97-cleaning", format!("{f2fs} timing.enabled=true fs.workload.utilisation=97 fs.workload.file_kib=65536")),
        (
            "f2fs-iozone-small-cache-bytes",
            format!("{f2fs} timing.enabled=false fs.cache.memory_mib=1 fs.f2fs.content=\"bytes\""),
        ),
        ("f2fs-varmail", format!("{f2fs} {files} fs.workload.kind=\"varmail\" timing.enabled=false")),
    ]
}

fn fs_bench_result(sets: &str) -> Value {
    let sets: Vec<String> = sets.split_whitespace().map(String::from).collect();
    let (raw, ssd) = flashlab_config::load("", "golden", &sets).unwrap();
    let kind = FsKind::from_name(&raw.fs.kind).unwrap();
    let spec = raw.resolve_fs_bench().unwrap();
    let out = run_kind(kind, &raw, &ssd, &spec).unwrap();
    result_object(&raw.fs.kind, &out, &raw, 0.0)
}

/// `flashlab bench`'s `flashfs-overwrite` at 1/40 of its length (its set-up, its
/// writes), without a page cache: the file system's statistics, then a hash of the
/// file read back.
fn flashfs_overwrite_result(compression: Compression) -> Value {
    let nand = Nand::new(NandSettings { blocks: 256, pages_per_block: 64, ..NandSettings::default() });
    let mut ubi = Ubi::format(nand, UbiSettings::default()).unwrap();
    let vol = ubi.create_volume("fs", 0).unwrap();
    let mut fs = Fs::format(ubi, vol, FsSettings { compression, ..FsSettings::default() }).unwrap();
    let fd = fs.create("/bench").unwrap();
    let block: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    for i in 0..2048u64 {
        fs.write(fd, i * 4096, &block).unwrap();
    }
    let mut buf: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(40_503) >> 7) as u8).collect();
    let mut x = 1u64;
    for _ in 0..10_000 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        buf[0] = x as u8;
        fs.write(fd, (x >> 33) % 2048 * 4096, &buf).unwrap();
    }
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for i in 0..2048u64 {
        for b in fs.read(fd, i * 4096, 4096).unwrap() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let mut v = serde_json::to_value(fs.stats()).unwrap();
    v["content_fnv"] = json!(h);
    v
}

/// One seed-000 reproduction point near full under the page cache (GC busy).
fn repro_point_result() -> Value {
    use flashlab_flashfs::fsbench::repro::{configs_for, Plan};
    use flashlab_flashfs::fsbench::{run_point, PointSpec, WorkloadKind};
    let plan = Plan::sized(16, vec![85], true);
    let (name, fs) = configs_for(&plan.device).into_iter().last().unwrap();
    let mut w = plan.workload(WorkloadKind::Fileserver);
    w.write_target_bytes = 3 << 20;
    let p = PointSpec {
        device: plan.device,
        config: name,
        fs,
        workload: w,
        utilisation_pct: 85,
        sample_every_bytes: 1 << 19,
        fileset_fills: true,
        hot_oracle: false,
    };
    serde_json::to_value(run_point(&p).unwrap()).unwrap()
}

/// A small power-cut campaign (every cut re-attaches, replays and checks).
fn powercut_result() -> Value {
    use flashlab_flashfs::powercut::{run_campaign, CampaignSettings};
    let s = CampaignSettings { workload_ops: 80, max_cut_points: 40, ..CampaignSettings::default() };
    serde_json::to_value(run_campaign(&s)).unwrap()
}

fn strip(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        for k in NOT_RESULTS {
            m.remove(k);
        }
        if let Some(Value::Object(d)) = m.get_mut("device") {
            for k in NOT_RESULTS {
                d.remove(k);
            }
        }
    }
    v
}

fn results() -> Map<String, Value> {
    let mut out = Map::new();
    for (name, sets) in fs_bench_configs() {
        out.insert(name.to_string(), strip(fs_bench_result(&sets)));
    }
    out.insert("flashfs-overwrite".into(), strip(flashfs_overwrite_result(Compression::None)));
    out.insert("flashfs-overwrite-lz4".into(), strip(flashfs_overwrite_result(Compression::Lz4)));
    out.insert("flashfs-repro-fileserver-85".into(), strip(repro_point_result()));
    out.insert("flashfs-powercut".into(), strip(powercut_result()));
    out
}

/// Compares `want` with `got` key by key, recursing into objects, so that a key added
/// to a result later (not in the fixture) is ignored at any depth, arrays included.
fn compare(path: &str, want: &Value, got: &Value) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let gv = g.get(k).unwrap_or_else(|| panic!("{path}.{k}: missing"));
                compare(&format!("{path}.{k}"), wv, gv);
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            assert_eq!(w.len(), g.len(), "{path}: length changed");
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                compare(&format!("{path}[{i}]"), wv, gv);
            }
        }
        // serde_json keeps an f64 exactly (float_roundtrip), so equality is bit equality.
        _ => assert_eq!(want, got, "{path} changed"),
    }
}

#[test]
fn golden_fs_results_are_unchanged() {
    let got = results();
    if std::env::var_os("FLASHLAB_RECORD_GOLDEN").is_some() {
        std::fs::create_dir_all(std::path::Path::new(FIXTURE).parent().unwrap()).unwrap();
        std::fs::write(FIXTURE, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    assert_eq!(want.len(), got.len(), "configs and fixture differ in number");
    for (name, w) in &want {
        let g = got.get(name).unwrap_or_else(|| panic!("config {name} missing"));
        compare(name, w, g);
    }
}
