//! `flashlab fs ext4-trace` (hidden): the ext4-like model's block trace for a
//! `fs bench` config, each request with its workload phase and its region —
//! data, journal or metadata — plus the model's layout. The kernel check
//! (`scripts/ext4-kernel-check`, docs/host-fs.md "ext4 model against the
//! kernel's ext4") compares it with the real ext4's trace on `blockdev serve`.

use crate::config_cmd::{load_config, ConfigArgs};
use crate::output::{check_output, write_json};
use anyhow::Context;
use flashlab_ext4::{Cause, Ext4, Layout, Req, FLUSH_BLOCK};
use flashlab_sim::Op;
use flashlab_vfs::workload::run_workload;
use flashlab_vfs::PageCache;
use serde::Serialize;
use serde_json::{json, Value};

/// Where a request lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    Data,
    Journal,
    /// Bitmaps, inode tables, descriptors, superblock, directory and
    /// extent-tree blocks.
    Metadata,
}

/// The region of a model request: journal extents by address; otherwise data
/// writes and reads are data, the rest (flusher and checkpoint writes home)
/// metadata.
pub fn region_of(r: &Req, journal: &[(u64, u64)]) -> Region {
    if journal.iter().any(|&(s, n)| r.block >= s && r.block < s + n) {
        return Region::Journal;
    }
    match r.cause {
        Cause::Data | Cause::Read | Cause::Discard => Region::Data,
        Cause::Journal => Region::Journal,
        Cause::Metadata | Cause::Checkpoint | Cause::MetaRead => Region::Metadata,
    }
}

/// The fixed metadata of every group as (first block, blocks, what).
pub fn fixed_metadata(l: &Layout) -> Vec<(u64, u64, &'static str)> {
    let mut v = Vec::new();
    for g in 0..l.groups {
        let start = l.group_start(g);
        if l.has_super(g) {
            v.push((start, 1, "superblock"));
            v.push((start + 1, l.gdt_blocks + l.rsv_gdt_blocks, "gdt"));
        }
        v.push((l.block_bitmap(g), 1, "block_bitmap"));
        v.push((l.inode_bitmap(g), 1, "inode_bitmap"));
        v.push((l.inode_table(g), l.itable_blocks, "inode_table"));
    }
    v
}

fn op_name(r: &Req) -> &'static str {
    match (r.op, r.block == FLUSH_BLOCK) {
        (_, true) => "flush",
        (Op::Read, _) => "read",
        (Op::Write, _) => "write",
        (Op::Trim, _) => "trim",
    }
}

pub fn ext4_trace(a: ConfigArgs) -> anyhow::Result<()> {
    let (raw, ssd) = load_config(&a.config, &a.sets)?;
    anyhow::ensure!(raw.fs.kind == "ext4", "fs.kind = {:?}: fs ext4-trace needs \"ext4\"", raw.fs.kind);
    let spec = raw.resolve_fs_bench()?;
    let out = a.json.as_deref().context("--json PATH is required (the trace goes there)")?;
    check_output(Some(out), "--json")?;
    let dev = flashlab_sim::Ssd::new(ssd).context("fs.ext4: building the SSD")?;
    let mut fs = Ext4::format(dev, raw.fs.ext4.clone()).context("fs.ext4: mkfs failed")?;
    fs.record_requests(true);
    let mut pc = PageCache::new(fs, raw.fs.cache.clone(), 0);
    let report = run_workload(&mut pc, &spec)?;
    let fs = pc.inner_mut();
    let marks = fs.take_phase_marks();
    let log = fs.record_requests(false);
    let journal = fs.journal_extents().to_vec();
    let mut requests = Vec::with_capacity(log.len());
    let mut phase = 0;
    for (i, r) in log.iter().enumerate() {
        while phase + 1 < marks.len() && marks[phase + 1].1 <= i {
            phase += 1;
        }
        let region = if r.block == FLUSH_BLOCK { Value::Null } else { json!(region_of(r, &journal)) };
        requests.push(json!([phase, op_name(r), r.block, r.blocks, region]));
    }
    let l = fs.layout();
    let v = json!({
        "layout": {
            "blocks": l.blocks,
            "blocks_per_group": l.blocks_per_group,
            "groups": l.groups,
            "inodes_per_group": l.inodes_per_group,
            "inode_table_blocks": l.itable_blocks,
            "gdt_blocks": l.gdt_blocks,
            "reserved_gdt_blocks": l.rsv_gdt_blocks,
            "fixed_metadata": fixed_metadata(l),
            "journal_extents": journal,
        },
        "fs": raw.fs,
        "phases": marks.iter().map(|m| &m.0).collect::<Vec<_>>(),
        "request_columns": ["phase", "op", "block", "blocks", "region"],
        "requests": requests,
        "report": report,
        "ext4": fs.stats(),
    });
    write_json(out, &v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_follow_the_journal_extents_then_the_cause() {
        let j = [(100, 10)];
        let r = |cause, block| Req { cause, op: Op::Write, block, blocks: 1 };
        assert_eq!(region_of(&r(Cause::Checkpoint, 100), &j), Region::Journal);
        assert_eq!(region_of(&r(Cause::Checkpoint, 110), &j), Region::Metadata);
        assert_eq!(region_of(&r(Cause::Metadata, 5), &j), Region::Metadata);
        assert_eq!(region_of(&r(Cause::Data, 99), &j), Region::Data);
        assert_eq!(region_of(&r(Cause::Journal, 105), &j), Region::Journal);
    }
}
