//! flashlab-fuse without FUSE: the sparse store against a flat-array oracle, the image
//! format (round trip, corruption, geometry), and the disk's semantics (contents, trim,
//! bounds, replay on reload, recorded trace). The mounted end-to-end tests are in
//! flashlab-cli's tests (they run the `flashlab` binary).

use flashlab_fuse::image::{self, DiskGeometry, ImageError, LogEntry, LogKind};
use flashlab_fuse::store::{SparseStore, CHUNK_BYTES};
use flashlab_fuse::{Disk, Pace};
use proptest::prelude::*;
use std::sync::{Arc, Mutex};

const SMALL: &str = "[device]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\nblocks_per_plane = 64\npages_per_block = 16\npage_bytes = 4096\nspare_factor = 0.25\n[ftl]\nmapping = \"page\"\n";

fn settings(sets: &[&str]) -> flashlab_sim::Settings {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    flashlab_config::load(SMALL, "small.toml", &sets).expect("config").1
}

fn disk(trace: Option<Box<dyn std::io::Write + Send>>) -> Disk {
    Disk::new(settings(&[]), SMALL.into(), serde_json::Value::Null, Pace::Virtual, trace).expect("disk")
}

#[derive(Clone, Debug)]
enum StoreOp {
    Write(u64, Vec<u8>),
    Trim(u64, u64),
    Read(u64, u64),
}

fn store_op(len: u64) -> impl Strategy<Value = StoreOp> {
    prop_oneof![
        (0..len, prop::collection::vec(1u8..=255, 1..9000))
            .prop_map(move |(o, d)| { StoreOp::Write(o.min(len - d.len() as u64), d) }),
        (0..len, 1u64..20000).prop_map(move |(o, n)| StoreOp::Trim(o.min(len - 1), n.min(len - o.min(len - 1)))),
        (0..len, 1u64..20000).prop_map(move |(o, n)| StoreOp::Read(o.min(len - 1), n.min(len - o.min(len - 1)))),
    ]
}

proptest! {
    #[test]
    fn store_matches_a_flat_array(ops in prop::collection::vec(store_op(64 * 1024 + 123), 1..60)) {
        let len = 64 * 1024 + 123;
        let mut store = SparseStore::new(len);
        let mut oracle = vec![0u8; len as usize];
        for op in ops {
            match op {
                StoreOp::Write(o, d) => {
                    store.write(o, &d);
                    oracle[o as usize..o as usize + d.len()].copy_from_slice(&d);
                }
                StoreOp::Trim(o, n) => {
                    store.trim(o, n);
                    oracle[o as usize..(o + n) as usize].fill(0);
                }
                StoreOp::Read(o, n) => {
                    let mut buf = vec![7u8; n as usize];
                    store.read(o, &mut buf);
                    prop_assert_eq!(&buf[..], &oracle[o as usize..(o + n) as usize]);
                }
            }
        }
        let mut all = vec![0u8; len as usize];
        store.read(0, &mut all);
        prop_assert_eq!(all, oracle);
        // An image keeps exactly the contents.
        let g = DiskGeometry { page_bytes: 1, logical_pages: len };
        let img = image::decode(&image::encode(g, "", &[], &store), g).expect("decodes");
        let mut back = vec![0u8; len as usize];
        img.store.read(0, &mut back);
        let mut again = vec![0u8; len as usize];
        store.read(0, &mut again);
        prop_assert_eq!(back, again);
    }
}

#[test]
fn store_releases_whole_trimmed_chunks_and_reuses_them() {
    let mut s = SparseStore::new(10 * CHUNK_BYTES as u64);
    s.write(100, &[1; 3 * CHUNK_BYTES]);
    assert_eq!(s.stored_chunks(), 4);
    s.trim(CHUNK_BYTES as u64, 2 * CHUNK_BYTES as u64);
    assert_eq!(s.stored_chunks(), 2);
    s.write(9 * CHUNK_BYTES as u64, &[2; 10]);
    assert_eq!(s.stored_chunks(), 3);
    let mut b = [9u8; 20];
    s.read(9 * CHUNK_BYTES as u64, &mut b);
    assert_eq!(&b[..10], &[2; 10]);
    assert_eq!(&b[10..], &[0; 10], "a reused chunk starts zeroed");
}

fn sample_image() -> (DiskGeometry, Vec<u8>) {
    let g = DiskGeometry { page_bytes: 4096, logical_pages: 16 };
    let mut s = SparseStore::new(g.bytes());
    s.write(5000, b"hello");
    let log = [
        LogEntry { kind: LogKind::Write, offset: 4096, len: 4096, at_ns: 0 },
        LogEntry { kind: LogKind::Flush, offset: 0, len: 0, at_ns: 10 },
    ];
    (g, image::encode(g, "cfg", &log, &s))
}

#[test]
fn image_round_trips() {
    let (g, bytes) = sample_image();
    let img = image::decode(&bytes, g).expect("decodes");
    assert_eq!(img.config, "cfg");
    assert_eq!(img.log.len(), 2);
    assert_eq!(img.log[1].kind, LogKind::Flush);
    let mut b = [0u8; 5];
    img.store.read(5000, &mut b);
    assert_eq!(&b, b"hello");
}

#[test]
fn image_errors_are_named() {
    let (g, bytes) = sample_image();
    let mut bad = bytes.clone();
    bad[40] ^= 1;
    assert!(matches!(image::decode(&bad, g), Err(ImageError::Checksum { .. })));
    assert!(image::decode(&bytes[..bytes.len() - 9], g).unwrap_err().to_string().contains("corrupt"));
    assert_eq!(image::decode(b"hello world", g).unwrap_err(), ImageError::Magic);
    let other = DiskGeometry { page_bytes: 4096, logical_pages: 17 };
    let e = image::decode(&bytes, other).unwrap_err();
    assert_eq!(
        e.to_string(),
        "image is of a different geometry: 16 pages of 4096 bytes, the config gives 17 pages of 4096 bytes"
    );
}

#[test]
fn disk_reads_what_was_written_and_zeros_elsewhere() {
    let mut d = disk(None);
    assert_eq!(d.size(), 48 * 16 * 4096);
    d.write(4096 * 3 + 10, b"flash").unwrap();
    assert_eq!(d.read(4096 * 3 + 8, 9).unwrap(), b"\0\0flash\0\0");
    d.trim(4096 * 3, 4096).unwrap();
    assert_eq!(d.read(4096 * 3 + 8, 9).unwrap(), vec![0; 9]);
    // Past the end: a write is refused with ENOSPC, a read is cut at the end.
    let e = d.write(d.size() - 2, b"abc").unwrap_err();
    assert_eq!(e.errno(), libc::ENOSPC);
    assert_eq!(d.read(d.size() - 2, 100).unwrap().len(), 2);
    assert_eq!(d.read(d.size() + 5, 100).unwrap().len(), 0);
    let r = d.result();
    assert_eq!((r.write_requests, r.trim_requests, r.read_requests), (1, 1, 3));
    assert_eq!(r.host_trim_pages, 1);
}

#[test]
fn reloading_an_image_restores_contents_and_the_ssds_state() {
    let mut a = disk(None);
    for i in 0..2000u64 {
        let page = (i * 7919) % 700;
        a.write(page * 4096, &[(i % 251) as u8 + 1; 4096]).unwrap();
        if i % 97 == 0 {
            a.trim(((i * 31) % 700) * 4096, 8192).unwrap();
            a.flush().unwrap();
        }
    }
    let before = a.result();
    assert!(before.gc_runs > 0, "the history must have made GC run");
    let bytes = a.image();
    let mut b = disk(None);
    b.load_image(&bytes).unwrap();
    let mut after = b.result();
    after.wall_time_s = before.wall_time_s;
    assert_eq!(after, before);
    assert_eq!(b.read(0, a.size()).unwrap(), a.read(0, a.size()).unwrap());
    // Served further, both go on identically.
    a.write(0, &[9; 8192]).unwrap();
    b.write(0, &[9; 8192]).unwrap();
    let (ra, mut rb) = (a.result(), b.result());
    rb.wall_time_s = ra.wall_time_s;
    assert_eq!(ra, rb);
    // An image of another geometry is refused.
    let mut c = Disk::new(
        settings(&["device.blocks_per_plane=65"]),
        String::new(),
        serde_json::Value::Null,
        Pace::Virtual,
        None,
    )
    .unwrap();
    assert!(matches!(c.load_image(&bytes), Err(flashlab_fuse::DiskError::Image(ImageError::Geometry { .. }))));
}

/// A `Write` whose bytes the test can read afterwards.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_recorded_trace_replays_to_the_same_result() {
    let out = Shared::default();
    let mut d = disk(Some(Box::new(out.clone())));
    for i in 0..500u64 {
        d.write(((i * 13) % 600) * 4096, &[1; 8192]).unwrap();
        if i % 10 == 0 {
            d.read(i * 4096, 4096).unwrap();
            d.trim(((i * 17) % 600) * 4096, 4096).unwrap();
        }
    }
    d.finish_trace().unwrap();
    let text = out.0.lock().unwrap().clone();
    let reader = flashlab_trace::TraceReader::new(
        &text[..],
        flashlab_trace::TraceFormat::Csv,
        flashlab_trace::ReaderOptions::default(),
    );
    let reqs: Vec<_> = reader.map(|r| r.expect("parses")).collect();
    assert_eq!(reqs.len(), 500 + 50 + 50);
    // Replayed through a fresh SSD at their recorded times, they give the same result.
    let mut ssd = flashlab_sim::Ssd::new(settings(&[])).unwrap();
    for r in &reqs {
        ssd.submit(r.op, r.offset_bytes, r.len_bytes, r.time_ns).unwrap();
    }
    let (mut a, b) = (ssd.result(), d.result());
    a.wall_time_s = b.wall_time_s;
    a.config = b.config.clone();
    assert_eq!(a, b);
}
