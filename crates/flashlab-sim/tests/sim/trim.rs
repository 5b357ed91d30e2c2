//! TRIM cost inside the SSD (`crate::trim`): command + per mapped page, non-queued
//! drains and blocks, queued does neither, DFTL's translation pages on the path.

use super::settings;
use flashlab_sim::Ssd;
use flashlab_trace::Op;

const PAGE: u64 = 2048;

/// Four pages and page 10 written at 0, then a TRIM of pages 0..8 and a read of page
/// 10, both issued at 0. Returns (latest write completion, trim completion, read completion).
fn scenario(sets: &[&str]) -> (u64, u64, u64) {
    let mut ssd = Ssd::new(settings(sets)).unwrap();
    let w1 = ssd.submit(Op::Write, 0, 4 * PAGE, 0).unwrap();
    let w2 = ssd.submit(Op::Write, 10 * PAGE, PAGE, 0).unwrap();
    let t = ssd.submit(Op::Trim, 0, 8 * PAGE, 0).unwrap();
    let r = ssd.submit(Op::Read, 10 * PAGE, PAGE, 0).unwrap();
    assert_eq!((t.issue_ns, r.issue_ns), (Some(0), Some(0)), "latency counts from the issue");
    (w1.done_ns.unwrap().max(w2.done_ns.unwrap()), t.done_ns.unwrap(), r.done_ns.unwrap())
}

#[test]
fn non_queued_trim_drains_the_queue_and_blocks_later_requests() {
    let (writes, trim, read) = scenario(&[]);
    // Default fit: 1 ms per command + 1.55 µs per mapped page (4 of the 8 were written).
    assert_eq!(trim, writes + 1_000_000 + 4 * 1550);
    // The read starts when the TRIM completed: tR 20 µs + 2048 B × 25 ns on an idle die.
    assert_eq!(read, trim + 20_000 + 51_200);
}

#[test]
fn queued_trim_neither_waits_nor_blocks() {
    let (writes, trim, read) = scenario(&["timing.trim_queued=true", "timing.trim_page_ns=100"]);
    assert_eq!(trim, 1_000_000 + 4 * 100);
    assert!(read < trim && read <= writes + 71_200, "read {read} trim {trim} writes {writes}");
}

#[test]
fn zero_cost_trim_is_free_when_queued_and_a_drain_when_not() {
    let (_, trim, _) = scenario(&["timing.trim_queued=true", "timing.trim_command_us=0", "timing.trim_page_ns=0"]);
    assert_eq!(trim, 0);
    let (writes, trim, read) = scenario(&["timing.trim_command_us=0", "timing.trim_page_ns=0"]);
    assert_eq!((trim, read), (writes, writes + 71_200));
}

#[test]
fn cost_per_byte_falls_with_the_range_and_rises_with_pages_written() {
    let cost = |pages: u64, written: u64| {
        let mut ssd = Ssd::new(settings(&["timing.trim_queued=true"])).unwrap();
        if written > 0 {
            ssd.submit(Op::Write, 0, written * PAGE, 0).unwrap();
        }
        let t = ssd.submit(Op::Trim, 0, pages * PAGE, 0).unwrap();
        t.latency_ns.unwrap()
    };
    assert_eq!(cost(512, 0), 1_000_000);
    assert_eq!(cost(512, 512), 1_000_000 + 512 * 1550);
    assert!(cost(512, 256) < cost(512, 512));
    let per_byte = |pages: u64| cost(pages, pages) as f64 / pages as f64;
    assert!(per_byte(4096) < per_byte(512));
}

#[test]
fn dftl_trim_waits_for_its_translation_pages() {
    let sets = ["ftl.mapping=\"dftl\"", "ftl.map_cache_entries=16", "timing.trim_queued=true"];
    let mut ssd = Ssd::new(settings(&sets)).unwrap();
    // Write far apart so the cached entries of the first pages are evicted.
    for i in 0..64 {
        ssd.submit(Op::Write, i * 512 * PAGE, PAGE, 0).unwrap();
    }
    let t = ssd.submit(Op::Trim, 0, PAGE, 10_000_000).unwrap();
    let lat = t.latency_ns.unwrap();
    assert!(lat > 1_000_000 + 1550, "a translation-page read is on the path: {lat}");
}

#[test]
fn counting_mode_trims_untimed() {
    let mut ssd = Ssd::new(settings(&["timing.enabled=false"])).unwrap();
    ssd.submit(Op::Write, 0, 4 * PAGE, 0).unwrap();
    let t = ssd.submit(Op::Trim, 0, 8 * PAGE, 0).unwrap();
    assert_eq!((t.done_ns, t.pages), (None, 8));
    assert_eq!(ssd.result().host_trim_pages, 8);
}
