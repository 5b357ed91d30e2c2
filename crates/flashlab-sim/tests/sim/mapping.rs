//! Mapping schemes through the engine: every scheme with every mode, merge traffic
//! through the timing model (copyback), result fields null where they cannot apply.

use super::{settings, synth};
use flashlab_sim::run;
use flashlab_trace::{Op, Request};

const HYBRID: [&str; 4] = ["block", "bast", "bast-padding", "fast"];

fn mapping(m: &str) -> String {
    format!("ftl.mapping=\"{m}\"")
}

/// Strict content-checked runs (reads, trims, multi-page requests, timed and counting,
/// superblocks): programs by cause add up to the total; merge copies are counted once.
#[test]
fn every_scheme_runs_strict_and_programs_add_up() {
    for m in HYBRID {
        for sb in ["ftl.superblock_blocks=1", "ftl.superblock_blocks=2"] {
            for timing in ["timing.enabled=true", "timing.enabled=false"] {
                let m = mapping(m);
                let r = synth(&[
                    &m,
                    sb,
                    timing,
                    "ftl.log_blocks=8",
                    "sim.strict=true",
                    "workload.requests=6000",
                    "workload.read_fraction=0.3",
                    "workload.trim_fraction=0.1",
                    "workload.request_bytes=2048",
                    "workload.request_bytes_max=16384",
                    "workload.pattern=hotcold",
                ]);
                let parts = r.nand_program_pages_host
                    + r.nand_program_pages_gc
                    + r.nand_program_pages_merge
                    + r.nand_program_pages_padding
                    + r.nand_program_pages_map
                    + r.nand_program_pages_wl
                    + r.nand_program_pages_other;
                assert_eq!(parts, r.nand_program_pages, "{m} {sb} {timing}");
                assert_eq!(r.merge_copied_pages, Some(r.nand_program_pages_merge), "{m}");
                assert_eq!((r.gc_runs, r.nand_program_pages_gc), (0, 0), "{m}: no page-mapping GC");
                assert!(r.merges_full.unwrap() > 0 && r.host_trim_pages > 0, "{m}");
                assert!(r.map_reads.is_none() && r.map_cache_hit_ratio.is_none());
                assert!(r.mapping_ram_bytes.unwrap() > 0);
            }
        }
    }
}

#[test]
fn counts_that_cannot_apply_are_null() {
    let page = synth(&["workload.requests=100"]);
    assert!(page.merges_switch.is_none() && page.merges_full.is_none() && page.padding_pages.is_none());
    assert!(page.map_writes.is_none() && page.map_cache_hit_ratio.is_none());
    assert_eq!(page.mapping_ram_bytes, Some(page.logical_pages * 4));
    let block = synth(&["workload.requests=100", "ftl.log_blocks=8", &mapping("block")]);
    assert!(block.merges_switch.is_none() && block.merges_full.is_some() && block.padding_pages.is_none());
    let bast = synth(&["workload.requests=100", "ftl.log_blocks=8", &mapping("bast")]);
    assert!(bast.merges_switch.is_some() && bast.padding_pages.is_none());
    let padded = synth(&["workload.requests=100", "ftl.log_blocks=8", &mapping("bast-padding")]);
    assert_eq!(padded.padding_pages, Some(padded.nand_program_pages_padding));
}

fn write(page: u64) -> Request {
    Request { time_ns: page * 1000, op: Op::Write, offset_bytes: page * 2048, len_bytes: 2048, device: 0 }
}

/// Check 2 through the engine: one full merge (4 valid pages of a 4-page unit, pool of
/// one log block) costs 4 reads, 4 programs and 2 erases with and without copyback;
/// with copyback every merge copy is a copyback (source and destination share a plane).
#[test]
fn merge_costs_are_the_same_with_and_without_copyback() {
    let base = [
        "device.channels=1",
        "device.dies_per_chip=1",
        "device.blocks_per_plane=16",
        "device.pages_per_block=4",
        "device.spare_factor=0.5",
        "ftl.mapping=\"bast\"",
        "ftl.log_blocks=1",
        "timing.copyback_same_parity=false",
        "workload.kind=\"trace\"",
        "workload.trace_path=\"unused\"",
    ];
    let trace: Vec<u64> = (0..8).chain([1, 0]).chain([4]).collect();
    let run_with = |copyback: &str| {
        let mut sets = base.to_vec();
        sets.push(copyback);
        let s = settings(&sets);
        run(&s, trace.iter().map(|&p| Ok::<_, String>(write(p))), &mut |_| {}).unwrap()
    };
    let (plain, cb) = (run_with("timing.copyback=false"), run_with("timing.copyback=true"));
    for r in [&plain, &cb] {
        assert_eq!((r.nand_read_pages, r.nand_program_pages, r.nand_erases), (4, 11 + 4, 2));
        assert_eq!((r.merges_switch, r.merges_partial, r.merges_full), (Some(0), Some(0), Some(1)));
    }
    assert_eq!((plain.copyback_pages, cb.copyback_pages), (0, 4));
    assert!(cb.write_latency_us_max.unwrap() < plain.write_latency_us_max.unwrap());
}

/// `config default` with any mapping resolves and runs (a short run of it).
#[test]
fn default_config_runs_with_every_mapping() {
    for m in HYBRID {
        let s = flashlab_config::load("", "default", &[mapping(m), "workload.requests=2000".into()]).unwrap().1;
        let r = flashlab_sim::run_synthetic(&s, &mut |_| {}).unwrap();
        assert_eq!(r.host_write_pages, 2000, "{m}");
    }
}

/// Superblocks spread a unit's consecutive pages over the planes of a die, so the pages
/// of one sequential request join multi-plane programs; without superblocks they cannot
/// (a unit is one block in one plane).
#[test]
fn superblocks_let_sequential_pages_join_multiplane_programs() {
    let joins = |sb: &str| {
        synth(&[
            &mapping("bast"),
            sb,
            "device.planes_per_die=2",
            "ftl.log_blocks=8",
            "timing.multiplane=true",
            "workload.pattern=sequential",
            "workload.request_bytes=16384",
            "workload.requests=2000",
        ])
        .multiplane_joins
    };
    assert_eq!(joins("ftl.superblock_blocks=1"), 0);
    assert!(joins("ftl.superblock_blocks=2") > 1000);
}

/// A DFTL translation-page rewrite changes the page's entries, so it is a read
/// to the controller and a program from it, never a copyback: with copyback on,
/// the copybacks are at most the data GC's page moves (same-die ones), while
/// the map writes far outnumber them.
#[test]
fn dftl_translation_rewrites_are_not_copybacks() {
    let r = synth(&[
        &mapping("dftl"),
        "ftl.map_cache_entries=64",
        "device.channels=1",
        "device.dies_per_chip=1",
        "device.blocks_per_plane=64",
        "device.pages_per_block=32",
        "timing.enabled=true",
        "timing.copyback=true",
        "timing.copyback_same_parity=false",
        "workload.requests=20000",
    ]);
    let map_writes = r.map_writes.unwrap();
    assert!(map_writes > 1000, "evictions rewrite translation pages: {map_writes}");
    assert!(
        r.copyback_pages <= r.nand_program_pages_gc,
        "{} copybacks, {} GC moves",
        r.copyback_pages,
        r.nand_program_pages_gc
    );
}
