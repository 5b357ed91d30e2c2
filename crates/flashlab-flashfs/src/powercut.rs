//! The power-cut campaign: run a seeded workload, cut power at every k-th
//! NAND operation (each cut on a fresh copy of the formatted device),
//! reboot, attach and mount, then check that everything fsynced before
//! the cut is intact, that the invariants hold, that the file system is
//! still usable, and that nothing panicked.

use crate::model::{apply_fs, apply_model, read_path, Entry, ModelFs, Op, PATHS};
use crate::{Fs, FsError, FsSettings, OnFlash, PageCache};
use flashlab_mtd::{Nand, NandSettings, SettingsError};
use flashlab_ubi::{Ubi, UbiSettings};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Campaign configuration.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CampaignSettings {
    pub flash: NandSettings,
    pub ubi: UbiSettings,
    pub fs: FsSettings,
    /// Seed of the generated workload.
    pub workload_seed: u64,
    /// File-system operations in the workload.
    pub workload_ops: u32,
    /// Cut power at every k-th NAND operation of the run (1 = every one).
    pub every_k_ops: u64,
    /// Stop after this many cut points (0 = all).
    pub max_cut_points: u64,
    /// Largest write or truncate size in the workload.
    pub max_file_bytes: u32,
    /// Bytes written (in 64 KiB files the workload never touches) before
    /// the campaign, so that GC has to move them; they must survive
    /// every cut.
    pub prefill_bytes: u32,
    /// Bytes of short-lived files written interleaved with the prefill (a
    /// share after each prefill file) and deleted before the campaign: the
    /// prefill's LEBs are then partly dirty, as on an aged volume, so GC has
    /// to move live data once free LEBs run out, rather than taking LEBs
    /// that whole-file churn left entirely dirty. 0 = none; nothing without
    /// a prefill.
    pub prefill_dead_bytes: u32,
}

/// The default campaign cuts at every NAND operation of a run that reaches
/// each kind of write flashfs makes, so that its cut points are not more of
/// the same: 1.0 MB of older files on the 2 MiB device, written interleaved
/// with 120 KB of files deleted before the run (an aged volume), leave GC
/// work (moves, the syncs before a victim is unmapped, unmaps), 600
/// operations give journal writes of every head, log references, commits
/// (index, LPT, orphans, commit-start node, master, unmaps) and ENOSPC near
/// full, and the run ends with a sync, a clean unmount (its commit and
/// master write) and a remount (its master write). About 2 600 cut points.
impl Default for CampaignSettings {
    fn default() -> Self {
        Self {
            flash: NandSettings::small(64, 16, 2048),
            ubi: UbiSettings::default(),
            fs: FsSettings::default(),
            workload_seed: 1,
            workload_ops: 600,
            every_k_ops: 1,
            max_cut_points: 0,
            max_file_bytes: 24_000,
            prefill_bytes: 1_000_000,
            prefill_dead_bytes: 120_000,
        }
    }
}

impl CampaignSettings {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        self.flash.validate()?;
        self.ubi.validate()?;
        self.fs.validate()?;
        if self.fs.elide_payload {
            return Err(SettingsError::new("fs.elide_payload", "must be false: the campaign checks file contents"));
        }
        if self.every_k_ops == 0 {
            return Err(SettingsError::new("every_k_ops", "must be at least 1"));
        }
        if self.workload_ops == 0 {
            return Err(SettingsError::new("workload_ops", "must be at least 1"));
        }
        if self.max_file_bytes == 0 || self.max_file_bytes > 1 << 24 {
            return Err(SettingsError::new("max_file_bytes", "must be in 1..=16777216"));
        }
        Ok(())
    }
}

/// What the campaign found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CampaignReport {
    pub cut_points: u64,
    /// Cut points after which attach + mount succeeded.
    pub recoveries: u64,
    /// Fsynced bytes that were missing or different after recovery.
    pub lost_fsynced_bytes: u64,
    /// Failed invariant checks, failed mounts, unusable file systems and
    /// model mismatches before the cut.
    pub invariant_violations: u64,
    pub panics: u64,
    pub mount_failures: u64,
    /// NAND operations of the uncut run (mount + workload).
    pub workload_nand_ops: u64,
    pub workload_fsyncs: u64,
    /// Operations of the uncut run refused with ENOSPC.
    pub workload_enospc: u64,
    /// Counters of the uncut run.
    pub workload_stats: Option<crate::Stats>,
    pub mean_recovery_nand_ops: f64,
    pub max_recovery_nand_ops: u64,
    /// The first failures, for diagnosis.
    pub failures: Vec<String>,
    /// Why the campaign could not run at all (format or prefill failed, or the uncut
    /// workload failed): not an invariant violation of power-cut recovery.
    pub setup_error: Option<String>,
    /// Cut points whose run or recovery stopped on an injected uncorrectable read
    /// (`flash.faults.uncorrectable_per_read`): media errors, not invariant violations.
    pub media_errors: u64,
}

/// Generates the workload: mostly valid operations (chosen against a
/// model of the namespace), some invalid ones for the error paths.
pub fn generate_ops(seed: u64, n: u32, max_bytes: u32) -> Vec<Op> {
    let mut r = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut m = ModelFs::default();
    let mut held = Vec::new();
    let mut out = vec![Op::Mkdir(3), Op::Mkdir(6)];
    for op in &out {
        let _ = apply_model(&mut m, &mut held, op);
    }
    while out.len() < n as usize {
        let op = pick_op(&mut r, &m, max_bytes);
        let _ = apply_model(&mut m, &mut held, &op);
        out.push(op);
    }
    out.truncate(n as usize);
    out
}

fn pick_path(r: &mut Xoshiro256PlusPlus, m: &ModelFs, want: Option<bool>) -> usize {
    let np = PATHS.len();
    let cands: Vec<usize> = (0..np)
        .filter(|i| {
            matches!(
                (m.entries.get(PATHS[*i]), want),
                (Some(Entry::File(_)), Some(false)) | (Some(Entry::Dir), Some(true)) | (None, None)
            )
        })
        .collect();
    if cands.is_empty() || r.gen_bool(0.1) {
        r.gen_range(0..np)
    } else {
        cands[r.gen_range(0..cands.len())]
    }
}

fn pick_op(r: &mut Xoshiro256PlusPlus, m: &ModelFs, max_bytes: u32) -> Op {
    let file = |r: &mut Xoshiro256PlusPlus| pick_path(r, m, Some(false));
    match r.gen_range(0..100) {
        0..=9 => Op::Create(pick_path(r, m, None)),
        10..=11 => Op::Mkdir(pick_path(r, m, None)),
        12..=49 => {
            let len = r.gen_range(1..=max_bytes.min(9000));
            let path = file(r);
            let size = match m.entries.get(PATHS[path]) {
                Some(Entry::File(b)) => b.len() as u32,
                _ => 0,
            };
            let off = if size > 0 && r.gen_bool(0.6) { r.gen_range(0..size) } else { r.gen_range(0..max_bytes) };
            Op::Write { path, off, len, byte: r.gen() }
        }
        50..=55 => Op::Truncate { path: file(r), size: r.gen_range(0..max_bytes) },
        56..=63 => Op::Unlink(file(r)),
        64..=65 => Op::Rmdir(pick_path(r, m, Some(true))),
        66..=70 => Op::Rename(pick_path(r, m, Some(false)), r.gen_range(0..PATHS.len())),
        71..=73 => Op::Hold(file(r)),
        74..=76 => Op::CloseAll,
        77..=88 => Op::Fsync(file(r)),
        89..=93 => Op::Sync,
        94..=96 => Op::Commit,
        _ => Op::Check(r.gen_range(0..PATHS.len())),
    }
}

/// Durable state as of the last fsync and what has changed since.
#[derive(Default, Clone)]
struct Tracker {
    model: ModelFs,
    held: Vec<String>,
    durable: ModelFs,
    unknown: BTreeMap<String, Vec<(u64, u64)>>,
    uncertain: BTreeSet<String>,
    fsyncs: u64,
    enospc: u64,
    detail: std::cell::RefCell<Vec<String>>,
}

impl Tracker {
    fn touch_tree(&mut self, p: &str) {
        let pre = format!("{p}/");
        let subtree: Vec<String> =
            self.durable.entries.keys().filter(|k| *k == p || k.starts_with(&pre)).cloned().collect();
        self.uncertain.extend(subtree);
        self.uncertain.insert(p.to_string());
    }

    fn file_len(&self, p: &str) -> u64 {
        match self.model.entries.get(p) {
            Some(Entry::File(b)) => b.len() as u64,
            _ => 0,
        }
    }

    /// Records what `op` (which succeeded on the model) may have changed.
    fn note(&mut self, op: &Op) {
        let p = |i: &usize| PATHS[*i % PATHS.len()].to_string();
        match op {
            Op::Write { path, off, len, .. } => {
                let lo = (*off as u64).min(self.file_len(&p(path)));
                self.unknown.entry(p(path)).or_default().push((lo, *off as u64 + *len as u64));
            }
            Op::Truncate { path, size } => {
                let lo = (*size as u64).min(self.file_len(&p(path)));
                self.unknown.entry(p(path)).or_default().push((lo, u64::MAX));
            }
            Op::Unlink(i) | Op::Rmdir(i) | Op::Create(i) | Op::Mkdir(i) => self.touch_tree(&p(i)),
            Op::Rename(a, b) => {
                self.touch_tree(&p(a));
                self.touch_tree(&p(b));
            }
            _ => {}
        }
    }

    /// fsync makes one file's data and size durable (UBIFS's `ubifs_fsync`
    /// syncs only the write buffers holding that inode's nodes), nothing
    /// else; a file whose name changed since the last sync stays uncertain.
    fn fsynced(&mut self, p: &str) {
        self.fsyncs += 1;
        if self.uncertain.contains(p) {
            return;
        }
        if let Some(e) = self.model.entries.get(p) {
            self.durable.entries.insert(p.to_string(), e.clone());
            self.unknown.remove(p);
        }
    }

    fn synced(&mut self) {
        self.durable = self.model.clone();
        self.unknown.clear();
        self.uncertain.clear();
        self.fsyncs += 1;
    }
}

/// The prefill files and their content.
fn prefill(s: &CampaignSettings) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut left = s.prefill_bytes;
    let mut i = 0u32;
    while left > 0 {
        let n = left.min(65536);
        out.push((format!("/p{i}"), crate::model::pattern(i as u8, i * 65536, n)));
        left -= n;
        i += 1;
    }
    out
}

fn build_base(s: &CampaignSettings) -> Result<Nand, String> {
    let ubi = Ubi::format(Nand::new(s.flash.clone()), s.ubi.clone()).map_err(|f| f.error.to_string())?;
    let mut ubi = ubi;
    let vol = ubi.create_volume("flashfs", 0).map_err(|e| e.to_string())?;
    let mut fs = Fs::format(ubi, vol, s.fs.clone()).map_err(|f| f.error.to_string())?;
    let files = prefill(s);
    let dead = dead_shares(s.prefill_dead_bytes, files.len());
    let dead_note = match s.prefill_dead_bytes {
        0 => String::new(),
        d => format!(" and flashfs.prefill_dead_bytes = {d}"),
    };
    let prefill_err = |e: FsError| format!("prefill of flashfs.prefill_bytes = {}{dead_note}: {e}", s.prefill_bytes);
    for (i, (path, data)) in files.iter().enumerate() {
        write_file(&mut fs, path, data).map_err(prefill_err)?;
        if dead[i] > 0 {
            write_file(&mut fs, &dead_path(i), &crate::model::pattern(!(i as u8), 0, dead[i])).map_err(prefill_err)?;
        }
    }
    for i in (0..files.len()).filter(|i| dead[*i] > 0) {
        fs.unlink(&dead_path(i)).map_err(prefill_err)?;
    }
    let ubi = fs.unmount().map_err(|f| f.error.to_string())?;
    Ok(ubi.into_nand())
}

fn write_file(fs: &mut Fs, path: &str, data: &[u8]) -> Result<(), FsError> {
    let fd = fs.create(path)?;
    fs.write(fd, 0, data)?;
    fs.close(fd)
}

/// `/dead{i}`: outside the workload's paths ([`PATHS`]).
fn dead_path(i: usize) -> String {
    format!("/dead{i}")
}

/// `total` bytes split over `n` files as evenly as possible.
fn dead_shares(total: u32, n: usize) -> Vec<u32> {
    let n32 = n.max(1) as u32;
    (0..n as u32).map(|i| total / n32 + u32::from(i < total % n32)).collect()
}

fn mount(nand: Nand, s: &CampaignSettings) -> Result<Fs, (Option<Nand>, FsError)> {
    let ubi = Ubi::attach(nand, s.ubi.clone()).map_err(|f| (Some(f.nand), FsError::Io(f.error)))?;
    Fs::mount(ubi, 0, s.fs.clone()).map_err(|f| (Some(f.ubi.into_nand()), f.error))
}

/// Outcome of running the workload on one device.
enum Run {
    /// Finished without hitting the cut.
    Done(Nand, Tracker, Box<crate::Stats>),
    /// Power was cut; the device and what was durable.
    Cut(Nand, Tracker),
    /// Something other than the cut went wrong before it; `true` when the cause is an
    /// injected media error.
    Broken(String, bool),
}

fn run_workload(nand: Nand, s: &CampaignSettings, ops: &[Op], cut: Option<u64>) -> Run {
    if s.fs.page_cache {
        run_workload_on::<PageCache<Fs>>(nand, s, ops, cut)
    } else {
        run_workload_on::<Fs>(nand, s, ops, cut)
    }
}

/// Runs the workload on flashfs, under the page cache or not (`F`); at the
/// cut, whatever the cache held is lost.
fn run_workload_on<F: OnFlash>(mut nand: Nand, s: &CampaignSettings, ops: &[Op], cut: Option<u64>) -> Run {
    let start = nand.stats().ops;
    let media0 = nand.stats().uncorrectable_reads;
    nand.arm_power_cut(cut.map(|c| start + c));
    let mut t = Tracker::default();
    for (path, data) in prefill(s) {
        t.model.entries.insert(path, Entry::File(data));
    }
    t.durable = t.model.clone();
    let mut fs = match mount(nand, s) {
        Ok(fs) => F::wrap(fs),
        Err((Some(n), e)) if n.is_powered_off() && e.is_power_cut() => return Run::Cut(n, t),
        Err((n, e)) => {
            let media = is_media_error(&e) || n.is_some_and(|n| n.stats().uncorrectable_reads > media0);
            return Run::Broken(format!("mount before workload: {e}"), media);
        }
    };
    let mut held = Vec::new();
    // The run ends by closing every handle and syncing, then unmounts and
    // mounts again (below), so that cuts also land in the unmount's commit
    // and master write and in the next mount.
    let closing = [Op::CloseAll, Op::Sync];
    for (i, op) in ops.iter().chain(closing.iter()).enumerate() {
        let r = apply_fs(&mut fs, &mut held, op);
        let powered_off = fs.flash().ubi().nand().is_powered_off();
        match r {
            Err(e) if powered_off || e.is_power_cut() => {
                t.note(op);
                return Run::Cut(fs.into_flash_lost().into_ubi().into_nand(), t);
            }
            Err(e) => {
                let media = is_media_error(&e) || fs.flash().ubi().nand().stats().uncorrectable_reads > media0;
                return Run::Broken(format!("op {i} {op:?}: {e}"), media);
            }
            Ok(_) if powered_off => {
                t.note(op);
                return Run::Cut(fs.into_flash_lost().into_ubi().into_nand(), t);
            }
            Ok(Err(crate::Errno::ENOSPC)) => {
                // A refused write may still have been partly written (a
                // short write under the page cache): its range is unknown.
                t.enospc += 1;
                if matches!(op, Op::Write { .. }) {
                    t.note(op);
                }
            }
            Ok(got) => {
                let want = apply_model(&mut t.model, &mut t.held, op);
                if got != want {
                    let msg = format!("op {i} {op:?}: fs {got:?} model {want:?}");
                    return Run::Broken(msg, fs.flash().ubi().nand().stats().uncorrectable_reads > media0);
                }
                if want.is_ok() {
                    t.note(op);
                    match op {
                        Op::Sync => t.synced(),
                        Op::Fsync(i) => t.fsynced(PATHS[*i % PATHS.len()]),
                        _ => {}
                    }
                }
            }
        }
    }
    let stats = Box::new(fs.flash().stats());
    // Nothing is left in the cache after the closing sync.
    let media = |n: &Nand| n.stats().uncorrectable_reads > media0;
    // An injected media error in this closing unmount or remount ends the
    // run as done: the workload itself finished.
    let nand = match fs.into_flash_lost().unmount() {
        Ok(ubi) => ubi.into_nand(),
        Err(f) if f.ubi.nand().is_powered_off() => return Run::Cut(f.ubi.into_nand(), t),
        Err(f) if media(f.ubi.nand()) || is_media_error(&f.error) => return Run::Done(f.ubi.into_nand(), t, stats),
        Err(f) => return Run::Broken(format!("unmount: {}", f.error), false),
    };
    match mount(nand, s) {
        Ok(fs) if fs.ubi().nand().is_powered_off() => Run::Cut(fs.into_ubi().into_nand(), t),
        Ok(fs) => Run::Done(fs.into_ubi().into_nand(), t, stats),
        Err((Some(n), _)) if n.is_powered_off() => Run::Cut(n, t),
        Err((Some(n), e)) if is_media_error(&e) || media(&n) => Run::Done(n, t, stats),
        Err((_, e)) => Run::Broken(format!("remount: {e}"), is_media_error(&e)),
    }
}

/// Fsynced bytes missing after recovery.
fn lost_bytes(fs: &mut Fs, t: &Tracker) -> Result<u64, String> {
    let mut lost = 0u64;
    for (path, e) in &t.durable.entries {
        if t.uncertain.contains(path) {
            continue;
        }
        let got = read_path(fs, path);
        match (e, got) {
            (Entry::Dir, Ok(_)) => {}
            (Entry::Dir, Err(_)) => lost += 1,
            (Entry::File(want), got) => {
                let got = got.unwrap_or_default();
                let unknown = t.unknown.get(path).cloned().unwrap_or_default();
                let before = lost;
                let mut first = None;
                for (i, b) in want.iter().enumerate() {
                    let i64_ = i as u64;
                    if unknown.iter().any(|(lo, hi)| i64_ >= *lo && i64_ < *hi) {
                        continue;
                    }
                    if got.get(i) != Some(b) {
                        lost += 1;
                        first.get_or_insert(i);
                    }
                }
                if let (true, Some(f)) = (lost > before, first) {
                    t.detail.borrow_mut().push(format!("{path}: {} bytes lost from offset {f}", lost - before));
                }
            }
        }
    }
    Ok(lost)
}

/// After recovery the file system must accept new data durably.
fn usable(fs: Fs, s: &CampaignSettings, media0: u64) -> Result<(), (String, bool)> {
    let mut last = None;
    let r = usable_inner(fs, s, &mut last);
    r.map_err(|(msg, media)| (msg, media || last.is_some_and(|n| n > media0)))
}

/// [`usable`]'s checks; `media` in the error when an injected uncorrectable read
/// caused it; `last` gets the device's uncorrectable-read count when known.
fn usable_inner(mut fs: Fs, s: &CampaignSettings, last: &mut Option<u64>) -> Result<(), (String, bool)> {
    let fail = |what: &str, e: FsError| (format!("{what}: {e}"), is_media_error(&e));
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
    let _ = fs.unlink("/pc_check");
    let full = |e: &FsError| e.errno() == crate::Errno::ENOSPC;
    let fd = match fs.create("/pc_check") {
        Ok(fd) => fd,
        Err(e) if full(&e) => return Ok(()),
        Err(e) => return Err(fail("create after recovery", e)),
    };
    match fs.write(fd, 0, &data) {
        Ok(_) => {}
        Err(e) if full(&e) => return Ok(()),
        Err(e) => return Err(fail("write after recovery", e)),
    }
    fs.fsync(fd).map_err(|e| fail("fsync after recovery", e))?;
    *last = Some(fs.ubi().nand().stats().uncorrectable_reads);
    let mut n = fs.into_ubi().into_nand();
    n.reboot();
    let mut fs = mount(n, s).map_err(|(_, e)| fail("second mount", e))?;
    *last = Some(fs.ubi().nand().stats().uncorrectable_reads);
    fs.check_invariants().map_err(|e| fail("invariants after second mount", e))?;
    let got = read_path(&mut fs, "/pc_check");
    *last = Some(fs.ubi().nand().stats().uncorrectable_reads);
    match got {
        Ok(b) if b == data => Ok(()),
        Ok(b) => Err((format!("post-recovery file wrong: {} bytes", b.len()), false)),
        Err(e) => Err(fail("read after recovery", e)),
    }
}

#[derive(Default)]
struct CutOutcome {
    reached: bool,
    recovered: bool,
    lost: u64,
    violation: Option<String>,
    mount_failed: bool,
    media_error: bool,
    recovery_ops: u64,
}

/// An uncorrectable read injected by the fault model.
fn is_media_error(e: &FsError) -> bool {
    matches!(e, FsError::Io(flashlab_ubi::UbiError::Mtd(flashlab_mtd::MtdError::Uncorrectable { .. })))
}

fn run_cut(base: &Nand, s: &CampaignSettings, ops: &[Op], cut: u64) -> CutOutcome {
    let mut out = CutOutcome::default();
    let (mut nand, t) = match run_workload(base.clone(), s, ops, Some(cut)) {
        Run::Done(..) => return out,
        Run::Cut(n, t) => (n, t),
        Run::Broken(_, true) => {
            out.reached = true;
            out.media_error = true;
            return out;
        }
        Run::Broken(msg, false) => {
            out.reached = true;
            out.violation = Some(format!("cut {cut}: before the cut: {msg}"));
            return out;
        }
    };
    out.reached = true;
    nand.reboot();
    let ops0 = nand.stats().ops;
    // Injected uncorrectable reads make a failure a media error, not a recovery bug.
    let media0 = base.stats().uncorrectable_reads;
    let mut fs = match mount(nand, s) {
        Ok(fs) => fs,
        Err((n, e)) if is_media_error(&e) || n.as_ref().is_some_and(|n| n.stats().uncorrectable_reads > media0) => {
            out.media_error = true;
            return out;
        }
        Err((_, e)) => {
            out.mount_failed = true;
            out.violation = Some(format!("cut {cut}: mount failed: {e}"));
            return out;
        }
    };
    out.recovered = true;
    out.recovery_ops = fs.ubi().nand().stats().ops - ops0;
    let media = |fs: &Fs| fs.flash().ubi().nand().stats().uncorrectable_reads > media0;
    if let Err(e) = fs.check_invariants() {
        out.media_error = media(&fs);
        if !out.media_error {
            out.violation = Some(format!("cut {cut}: {e}"));
        }
        return out;
    }
    match lost_bytes(&mut fs, &t) {
        Ok(l) => out.lost = l,
        Err(e) => out.violation = Some(format!("cut {cut}: {e}")),
    }
    if (out.lost > 0 || out.violation.is_some()) && media(&fs) {
        // Data unreadable because of an injected media error is not lost by recovery.
        (out.lost, out.violation, out.media_error) = (0, None, true);
        return out;
    }
    if out.lost > 0 {
        let d = t.detail.borrow().join("; ");
        out.violation.get_or_insert(format!("cut {cut}: lost {} fsynced bytes ({d})", out.lost));
    }
    match usable(fs, s, media0) {
        Err((_, true)) => out.media_error = true,
        Err((e, false)) => out.violation = Some(format!("cut {cut}: {e}")),
        Ok(()) => {}
    }
    out
}

/// Runs one cut point and describes its outcome (for debugging).
pub fn debug_cut(s: &CampaignSettings, cut: u64) -> String {
    let ops = generate_ops(s.workload_seed, s.workload_ops, s.max_file_bytes);
    let base = match build_base(s) {
        Ok(b) => b,
        Err(e) => return format!("format failed: {e}"),
    };
    let o = run_cut(&base, s, &ops, cut);
    format!("reached {} recovered {} lost {} violation {:?}", o.reached, o.recovered, o.lost, o.violation)
}

/// Runs `ops` on a fresh formatted device with power cut at NAND
/// operation `cut` (relative to the start of the run), recovers and checks.
/// Returns None when all is well (or the cut was not reached), else the
/// problem found.
pub fn check_cut(s: &CampaignSettings, ops: &[Op], cut: u64) -> Option<String> {
    let base = match build_base(s) {
        Ok(b) => b,
        Err(e) => return Some(e),
    };
    match catch_unwind(AssertUnwindSafe(|| run_cut(&base, s, ops, cut))) {
        Ok(o) => o.violation,
        Err(_) => Some(format!("cut {cut}: panic")),
    }
}

/// Runs the campaign.
pub fn run_campaign(s: &CampaignSettings) -> CampaignReport {
    let mut rep = CampaignReport::default();
    let ops = generate_ops(s.workload_seed, s.workload_ops, s.max_file_bytes);
    let base = match build_base(s) {
        Ok(b) => b,
        Err(e) => {
            rep.setup_error = Some(format!("format: {e}"));
            return rep;
        }
    };
    let total = match run_workload(base.clone(), s, &ops, None) {
        Run::Done(n, t, stats) => {
            rep.workload_fsyncs = t.fsyncs;
            rep.workload_enospc = t.enospc;
            rep.workload_stats = Some(*stats);
            n.stats().ops - base.stats().ops
        }
        Run::Cut(..) => 0,
        Run::Broken(msg, _) => {
            rep.setup_error = Some(format!("the uncut workload failed: {msg}"));
            return rep;
        }
    };
    rep.workload_nand_ops = total;
    let mut sum_ops = 0u64;
    let mut cut = 0;
    while cut < total && (s.max_cut_points == 0 || rep.cut_points < s.max_cut_points) {
        let r = catch_unwind(AssertUnwindSafe(|| run_cut(&base, s, &ops, cut)));
        rep.cut_points += 1;
        match r {
            Ok(o) => record(&mut rep, o, &mut sum_ops),
            Err(p) => {
                rep.panics += 1;
                let msg =
                    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                push_failure(&mut rep, format!("cut {cut}: panic: {}", msg.unwrap_or_default()));
            }
        }
        cut += s.every_k_ops;
    }
    if rep.recoveries > 0 {
        rep.mean_recovery_nand_ops = sum_ops as f64 / rep.recoveries as f64;
    }
    rep
}

fn push_failure(rep: &mut CampaignReport, s: String) {
    if rep.failures.len() < 20 {
        rep.failures.push(s);
    }
}

fn record(rep: &mut CampaignReport, o: CutOutcome, sum_ops: &mut u64) {
    if o.recovered {
        rep.recoveries += 1;
        *sum_ops += o.recovery_ops;
        rep.max_recovery_nand_ops = rep.max_recovery_nand_ops.max(o.recovery_ops);
    }
    if o.mount_failed {
        rep.mount_failures += 1;
    }
    rep.media_errors += o.media_error as u64;
    rep.lost_fsynced_bytes += o.lost;
    if let Some(v) = o.violation {
        rep.invariant_violations += 1;
        push_failure(rep, v);
    }
}
