//! `reproduce fs-compare`: the article's figures beside the measured ones,
//! the claims with a verdict each, results.md, results.json and the PNGs
//! (the runs: `repro_fscmp.rs`).

use crate::output::write_json;
use crate::plot;
use crate::repro_check::{measured, tally, Check};
use crate::repro_fscmp::{FsRow, Measurements, Plan, ScalingPoint, ROWS};
use anyhow::Context;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// The article's tables (seconds): its column, then write kernel, read
/// kernel, du -s, rm -r (averages over the ten copies), write files, read files.
pub const ARTICLE: [(&str, [f64; 6]); 6] = [
    ("ubifs", [72.4, 72.5, 9.9, 0.48, 850.0, 1684.0]),
    ("ubifs — NC", [139.9, 129.6, 8.7, 0.45, 876.0, 1539.0]),
    ("f2fs", [118.4, 175.7, 48.6, 0.36, 838.0, 571.0]),
    ("NILFS2", [140.0, 95.6, 4.4, 11.0, 1522.0, 574.0]),
    ("ext4", [135.5, 108.8, 4.4, 4.9, 696.0, 571.0]),
    ("Btrfs", [93.6, 121.0, 13.8, 33.6, 863.0, 613.0]),
];

/// The article's column each row is set beside.
pub fn article_column(row: &str) -> Option<&'static str> {
    Some(match row {
        "flashfs-lz4" => "ubifs",
        "flashfs-nc" => "ubifs — NC",
        "f2fs" => "f2fs",
        "ext4" | "kernel-ext4" => "ext4",
        "kernel-btrfs" => "Btrfs",
        _ => return None,
    })
}

const STEPS: [&str; 6] = ["write kernel", "read kernel", "du -s", "rm -r", "write files", "read files"];

fn steps_of(r: &FsRow) -> [f64; 6] {
    let s = &r.steps;
    [s.write_kernel_s, s.read_kernel_s, s.du_s, s.rm_s, s.write_files_s, s.read_files_s]
}

/// One claim of the article and what was measured.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub id: &'static str,
    pub article: &'static str,
    pub measured: String,
    pub verdict: String,
}

/// Everything results.json holds.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub plan: &'a Plan,
    pub claims: Vec<Claim>,
    pub measurements: &'a Measurements,
}

fn claim(id: &'static str, article: &'static str, checks: Vec<Check>, missing: &[String]) -> Claim {
    let verdict = if checks.is_empty() { format!("not compared ({})", missing.join("; ")) } else { tally(&checks) };
    Claim { id, article, measured: measured(&checks), verdict }
}

/// Step `i` of the rows that ran.
fn step(m: &Measurements, row: &str, i: usize) -> Option<f64> {
    m.rows.iter().find(|r| r.name == row && r.missing.is_none()).map(|r| steps_of(r)[i])
}

/// Whether the times of rows `a` and `b` are on one clock: flashfs on raw
/// NAND (no block2mtd) is timed with nandsim's delays, not the card's.
fn comparable(m: &Measurements, a: &str, b: &str) -> bool {
    m.flashfs_on_card || a.starts_with("flashfs") == b.starts_with("flashfs")
}

/// `a` < `b` for step `i` (both ran, on one clock): the comparison, or None.
fn less(m: &Measurements, i: usize, a: &str, b: &str) -> Option<Check> {
    if !comparable(m, a, b) {
        return None;
    }
    let (x, y) = (step(m, a, i)?, step(m, b, i)?);
    Some(Check { text: format!("{a} {x:.3} s < {b} {y:.3} s"), held: x < y })
}

/// Why comparisons among `rows` could not be made: the rows that did not
/// run, and flashfs off the card.
fn missing_of(m: &Measurements, rows: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().filter(|r| step(m, r, 0).is_none()).map(|r| format!("{r} missing")).collect();
    if !m.flashfs_on_card && rows.iter().any(|r| r.starts_with("flashfs")) {
        v.push("flashfs timed on raw NAND, not on the card".into());
    }
    v
}

/// `a` faster than every row of `others` at step `i`.
fn fastest(m: &Measurements, i: usize, a: &str, others: &[&str]) -> Vec<Check> {
    others.iter().filter_map(|b| less(m, i, a, b)).collect()
}

fn ratio_check(m: &Measurements, i: usize, a: &str, b: &str, range: (f64, f64), what: &str) -> Vec<Check> {
    match (step(m, a, i), step(m, b, i)) {
        (Some(x), Some(y)) if y > 0.0 => {
            let r = x / y;
            vec![Check { text: format!("{what} {a}/{b} = {r:.2}"), held: r >= range.0 && r <= range.1 }]
        }
        _ => Vec::new(),
    }
}

fn tree_claims(m: &Measurements) -> Vec<Claim> {
    let others = ["flashfs-nc", "f2fs", "ext4", "kernel-ext4", "kernel-btrfs", "kernel-xfs"];
    let all: Vec<&str> = ROWS.to_vec();
    let flash = ["flashfs-lz4", "flashfs-nc", "f2fs"];
    let disk = ["ext4", "kernel-ext4", "kernel-btrfs", "kernel-xfs"];
    let rm: Vec<Check> = flash.iter().flat_map(|a| disk.iter().filter_map(|b| less(m, 3, a, b))).collect();
    vec![
        claim(
            "C1",
            "UBIFS with compression is clearly the winner at writing small files (72.4 s a tree, the others 93.6-140 s)",
            fastest(m, 0, "flashfs-lz4", &others),
            &missing_of(m, &all),
        ),
        claim(
            "C2",
            "Compression roughly halves UBIFS's tree times: write 72.4 vs 139.9 s (0.52), read 72.5 vs 129.6 s (0.56)",
            [ratio_check(m, 0, "flashfs-lz4", "flashfs-nc", (0.35, 0.75), "write"), ratio_check(
                m,
                1,
                "flashfs-lz4",
                "flashfs-nc",
                (0.35, 0.75),
                "read",
            )]
            .concat(),
            &missing_of(m, &["flashfs-lz4", "flashfs-nc"]),
        ),
        claim(
            "C3",
            "UBIFS with compression is also the fastest at reading the tree back (72.5 s; the others 95.6-175.7 s)",
            fastest(m, 1, "flashfs-lz4", &others),
            &missing_of(m, &all),
        ),
        claim(
            "C4",
            "rm -r is far faster on the flash file systems (ubifs, f2fs: 0.36-0.48 s) than on ext4 (4.9 s) and Btrfs (33.6 s)",
            rm,
            &missing_of(m, &all),
        ),
        claim(
            "C5",
            "f2fs is poor at du -s (48.6 s against ext4's 4.4 s), \"probably some simple implementation issue\"",
            [less(m, 2, "ext4", "f2fs"), less(m, 2, "kernel-ext4", "f2fs")].into_iter().flatten().collect(),
            &missing_of(m, &["f2fs", "ext4"]),
        ),
        claim(
            "C6",
            "Btrfs writes the tree faster than ext4 and f2fs (93.6 s against 135.5 and 118.4 s)",
            [less(m, 0, "kernel-btrfs", "kernel-ext4"), less(m, 0, "kernel-btrfs", "f2fs")]
                .into_iter()
                .flatten()
                .collect(),
            &missing_of(m, &["kernel-btrfs", "kernel-ext4"]),
        ),
    ]
}

fn large_claims(m: &Measurements) -> Vec<Claim> {
    let others = ["flashfs-lz4", "flashfs-nc", "f2fs", "kernel-btrfs", "kernel-xfs"];
    let ext4_first: Vec<Check> =
        ["ext4", "kernel-ext4"].iter().flat_map(|e| others.iter().filter_map(|b| less(m, 4, e, b))).collect();
    let ubifs_reads: Vec<Check> = ["flashfs-lz4", "flashfs-nc"]
        .iter()
        .flat_map(|a| ["f2fs", "ext4", "kernel-ext4"].iter().filter_map(|b| less(m, 5, b, a)))
        .collect();
    vec![
        claim(
            "C7",
            "Compression does not help with already-compressed large files (ubifs 850 s, NC 876 s to write)",
            ratio_check(m, 4, "flashfs-lz4", "flashfs-nc", (0.9, 1.1), "write files"),
            &missing_of(m, &["flashfs-lz4", "flashfs-nc"]),
        ),
        claim(
            "C8",
            "ext4 is the clear winner writing large files (696 s, 8.8 MB/s of the card's 10 MB/s)",
            ext4_first,
            &missing_of(m, &["ext4", "kernel-ext4"]),
        ),
        claim(
            "C9",
            "UBIFS is the clear loser on large-file reads (1539-1684 s against 571-613 s)",
            ubifs_reads,
            &missing_of(m, &["flashfs-lz4", "f2fs", "ext4"]),
        ),
    ]
}

fn scaling_claims(s: &[ScalingPoint]) -> Vec<Claim> {
    let (Some(a), Some(b)) = (s.first(), s.last()) else { return Vec::new() };
    let size = b.row.device_mib as f64 / a.row.device_mib as f64;
    let grows = |name: &str, x0: f64, x1: f64, linear: bool| {
        let g = x1 / x0.max(1e-12);
        // One threshold splits the two: linear grows by at least half the
        // device's factor, capped (sublinear) by less.
        let held = if linear { g >= 0.5 * size } else { g < 0.5 * size };
        Check { text: format!("{name} ×{g:.1} for ×{size:.0} the device"), held }
    };
    vec![
        claim(
            "C10",
            "JFFS2 scans the whole device at mount and keeps a skeleton in memory: both grow linearly with the device",
            vec![
                grows("JFFS2 mount time", a.jffs2_mount_s, b.jffs2_mount_s, true),
                grows("JFFS2 memory", a.row.jffs2_memory_bytes as f64, b.row.jffs2_memory_bytes as f64, true),
            ],
            &[],
        ),
        claim(
            "C11",
            "UBI's scanning attach reads the first page or two of every PEB: linear in the device too",
            vec![grows("UBI scan attach time", a.ubi_scan_attach_s, b.ubi_scan_attach_s, true)],
            &[],
        ),
        claim(
            "C12",
            "Fastmap puts a firm cap on attach time; UBIFS needs no scan and no in-memory skeleton",
            vec![
                grows(&fastmap_label(b), a.ubi_fastmap_attach_s, b.ubi_fastmap_attach_s, false),
                grows("flashfs mount time", a.flashfs_mount_s, b.flashfs_mount_s, false),
                Check {
                    text: format!(
                        "at {} MiB flashfs+UBI memory {} KiB < JFFS2's {} KiB",
                        b.row.device_mib,
                        b.row.flashfs_memory_bytes / 1024,
                        b.row.jffs2_memory_bytes / 1024
                    ),
                    held: b.row.flashfs_memory_bytes < b.row.jffs2_memory_bytes,
                },
            ],
            &[],
        ),
    ]
}

pub fn claims(m: &Measurements) -> Vec<Claim> {
    [tree_claims(m), large_claims(m), scaling_claims(&m.scaling)].concat()
}

fn table(m: &Measurements, plan: &Plan) -> String {
    let mut s = String::from(
        "| row | article column | write kernel s | read kernel s | du -s s | rm -r s (max) | write files s | read files s | NAND programs | erases | wall s |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &m.rows {
        let col = article_column(&r.name);
        let art = col.and_then(|c| ARTICLE.iter().find(|a| a.0 == c)).map(|a| a.1);
        if let Some(why) = &r.missing {
            let _ = writeln!(s, "| {} | {} | missing: {why} | | | | | | | | |", r.name, col.unwrap_or("–"));
            continue;
        }
        let v = steps_of(r);
        let cell = |i: usize| match art {
            Some(a) => format!("{:.3} ({})", v[i], a[i]),
            None => format!("{:.3}", v[i]),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} ({:.3}) | {} | {} | {} | {} | {:.1} |",
            r.name,
            col.unwrap_or("–"),
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            r.steps.rm_max_s,
            cell(4),
            cell(5),
            r.nand_program_pages,
            r.nand_erases,
            r.wall_s
        );
    }
    let _ = writeln!(
        s,
        "| NILFS2 | NILFS2 | missing: no NILFS2 model in this build (the kernel's needs mkfs.nilfs2) | | | | | | | | |"
    );
    let _ = writeln!(
        s,
        "\nSimulated seconds (in brackets: the article's, for a 500 MB tree and 6 GB of large files on the real card); tree: {} files, {} directories, {:.1} MB a copy, {} copies; large files {:.1} + {:.1} MB. Each row: see `what` in results.json.\n",
        plan.tree_files,
        plan.tree_dirs,
        plan.tree_bytes as f64 / 1e6,
        plan.spec.copies,
        plan.spec.large_file_bytes[0] as f64 / 1e6,
        plan.spec.large_file_bytes[1] as f64 / 1e6,
    );
    s
}

fn scaling_table(s: &[ScalingPoint]) -> String {
    let mut out = String::from(
        "| device MiB | PEBs | files | JFFS2 mount s | JFFS2 memory KiB | UBI scan attach s | UBI fastmap attach s | flashfs mount s | flashfs+UBI memory KiB |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in s {
        let r = &p.row;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.3} | {} | {:.3} | {} | {:.3} | {} |",
            r.device_mib,
            r.blocks,
            r.files,
            p.jffs2_mount_s,
            r.jffs2_memory_bytes / 1024,
            p.ubi_scan_attach_s,
            FastmapCell(p),
            p.flashfs_mount_s,
            r.flashfs_memory_bytes / 1024
        );
    }
    out
}

pub fn markdown(plan: &Plan, m: &Measurements, claims: &[Claim]) -> String {
    let mut s = format!("# fs-compare (seed 002): {}\n\n## Claims\n\n", plan.note);
    s += "| id | article | measured | verdict |\n|---|---|---|---|\n";
    for c in claims {
        let _ = writeln!(s, "| {} | {} | {} | {} |", c.id, c.article, c.measured, c.verdict);
    }
    s += "\n## The sequence on each file system\n\n";
    s += &table(m, plan);
    s += "\n## Mount time and memory against device size\n\n";
    s += &scaling_table(&m.scaling);
    s
}

fn plots(out: &Path, m: &Measurements) -> anyhow::Result<()> {
    let ran: Vec<&FsRow> = m.rows.iter().filter(|r| r.missing.is_none()).collect();
    for (file, title, idx) in [
        ("small_files.png", "Kernel tree: simulated seconds per copy", [0usize, 1, 2, 3].as_slice()),
        ("large_files.png", "Two large incompressible files: simulated seconds", [4usize, 5].as_slice()),
    ] {
        let cats: Vec<String> = idx.iter().map(|i| STEPS[*i].to_string()).collect();
        let series: Vec<(String, Vec<f64>)> =
            ran.iter().map(|r| (r.name.clone(), idx.iter().map(|i| steps_of(r)[*i]).collect())).collect();
        plot::grouped_bars(&out.join(file), title, "simulated s", &cats, &series)?;
    }
    let cats = vec!["NAND pages programmed".to_string(), "erases".to_string()];
    let series: Vec<(String, Vec<f64>)> =
        ran.iter().map(|r| (r.name.clone(), vec![r.nand_program_pages as f64, r.nand_erases as f64])).collect();
    plot::grouped_bars(
        &out.join("flash_writes.png"),
        "Whole sequence: flash programs and erases",
        "count",
        &cats,
        &series,
    )?;
    let pts = |f: fn(&ScalingPoint) -> f64| m.scaling.iter().map(|p| (p.row.device_mib as f64, f(p))).collect();
    plot::lines(
        &out.join("mount_time.png"),
        "Mount time against device size (half full)",
        "device (MiB)",
        "simulated s (pages read × 25 µs)",
        &[
            ("JFFS2 full scan".into(), pts(|p| p.jffs2_mount_s)),
            ("UBI scanning attach".into(), pts(|p| p.ubi_scan_attach_s)),
            ("UBI fastmap attach".into(), pts(|p| p.ubi_fastmap_attach_s)),
            ("flashfs mount".into(), pts(|p| p.flashfs_mount_s)),
        ],
    )?;
    plot::lines(
        &out.join("mount_time_ubi.png"),
        "UBI attach and flashfs mount against device size (JFFS2 left out)",
        "device (MiB)",
        "simulated s (pages read × 25 µs)",
        &[
            ("UBI scanning attach".into(), pts(|p| p.ubi_scan_attach_s)),
            ("UBI fastmap attach".into(), pts(|p| p.ubi_fastmap_attach_s)),
            ("flashfs mount (after attach)".into(), pts(|p| p.flashfs_mount_s)),
        ],
    )?;
    plot::lines(
        &out.join("mount_memory.png"),
        "Mount memory against device size (half full)",
        "device (MiB)",
        "KiB",
        &[
            ("JFFS2 skeleton".into(), pts(|p| p.row.jffs2_memory_bytes as f64 / 1024.0)),
            ("flashfs + UBI".into(), pts(|p| p.row.flashfs_memory_bytes as f64 / 1024.0)),
            ("UBI tables".into(), pts(|p| p.row.ubi_memory_bytes as f64 / 1024.0)),
        ],
    )
}

/// The hidden tree scale of the tests (`FLASHLAB_FS_COMPARE_SCALE`).
fn scale_override() -> anyhow::Result<Option<f64>> {
    match std::env::var("FLASHLAB_FS_COMPARE_SCALE") {
        Ok(v) => {
            let x: f64 = v
                .parse()
                .ok()
                .filter(|x: &f64| *x > 0.0 && *x <= 1.0)
                .ok_or_else(|| anyhow::anyhow!("FLASHLAB_FS_COMPARE_SCALE = {v:?}: expected a number in (0, 1]"))?;
            Ok(Some(x))
        }
        Err(_) => Ok(None),
    }
}

pub fn run(out: &Path, quick: bool) -> anyhow::Result<()> {
    let plan = Plan::new(quick, scale_override()?);
    eprintln!("fs-compare: {} ({} rows, {} scaling sizes)", plan.note, ROWS.len(), plan.scaling_blocks.len());
    let m = crate::repro_fscmp::measure(&plan, |name| eprintln!("fs-compare: {name} done"))?;
    let claims = claims(&m);
    let md = markdown(&plan, &m, &claims);
    print!("{md}");
    std::fs::write(out.join("results.md"), &md).with_context(|| format!("cannot write {}", out.display()))?;
    write_json(&out.join("results.json"), &Report { plan: &plan, claims, measurements: &m })?;
    plots(out, &m)
}

/// The plan and the microSD preset, as used.
pub fn configs(quick: bool) -> anyhow::Result<Vec<crate::report::repro::ConfigUsed>> {
    use crate::report::repro::ConfigUsed;
    let plan = Plan::new(quick, scale_override()?);
    Ok(vec![
        ConfigUsed { name: "plan (tree, sequence, devices)".into(), text: serde_json::to_string_pretty(&plan)? },
        ConfigUsed {
            name: format!("examples/microsd.toml (with {})", plan.device_sets.join(" ")),
            text: crate::repro_fscmp::MICROSD_TOML.into(),
        },
    ])
}

/// The fastmap attach time, marked when the model's fastmap did not fit and
/// the attach scanned.
struct FastmapCell<'a>(&'a ScalingPoint);

impl std::fmt::Display for FastmapCell<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3}", self.0.ubi_fastmap_attach_s)?;
        if self.0.row.ubi_fastmap_attach_mode != "fastmap" {
            write!(f, " (scan: no fastmap fits one LEB)")?;
        }
        Ok(())
    }
}

/// C12's label: says when the largest device's fastmap did not fit.
fn fastmap_label(b: &ScalingPoint) -> String {
    if b.row.ubi_fastmap_attach_mode == "fastmap" {
        "UBI fastmap attach time".into()
    } else {
        format!(
            "UBI fastmap attach time (at {} MiB the model's one-LEB fastmap does not fit {} PEBs' records: the attach scanned; Linux's spans up to 32 PEBs)",
            b.row.device_mib, b.row.blocks
        )
    }
}
