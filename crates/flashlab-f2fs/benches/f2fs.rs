//! Speed of the F2FS model in counting mode: 4 KiB application writes
//! through the page cache (sequential fill, then random updates) on a
//! 1 GiB volume over page mapping. Issue 15's target: ≥ 300 000 writes/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flashlab_f2fs::{F2fs, F2fsSettings};
use flashlab_sim::Ssd;
use flashlab_vfs::{CacheSettings, FileSystem, PageCache};

const PAGES: u64 = 65_536; // 256 MiB file

fn ssd() -> Ssd {
    let sets: Vec<String> = [
        "device.page_bytes=4096",
        "device.channels=4",
        "device.chips_per_channel=1",
        "device.dies_per_chip=2",
        "device.planes_per_die=1",
        "device.pages_per_block=64",
        "device.blocks_per_plane=640",
        "timing.enabled=false",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Ssd::new(flashlab_config::load("", "bench", &sets).unwrap().1).unwrap()
}

fn iozone_writes() -> u64 {
    let fs = F2fs::format(ssd(), F2fsSettings::default()).unwrap();
    let mut c = PageCache::new(fs, CacheSettings::default(), 0);
    let fd = c.create("/iozone").unwrap();
    let page = vec![7u8; 4096];
    for k in 0..PAGES {
        c.write(fd, k * 4096, &page).unwrap();
    }
    let mut x = 1u64;
    for _ in 0..PAGES {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        c.write(fd, ((x >> 33) % PAGES) * 4096, &page).unwrap();
    }
    c.sync().unwrap();
    c.inner().stats().data_blocks_written
}

/// The model alone: the page cache's writeback calls (`write_inode`,
/// `writepage`) made directly, one per 4 KiB write.
fn model_writes() -> u64 {
    let mut fs = F2fs::format(ssd(), F2fsSettings::default()).unwrap();
    let fd = fs.create("/iozone").unwrap();
    let ino = fs.fstat(fd).unwrap().inum;
    let page = vec![7u8; 4096];
    fs.write_inode(ino, PAGES * 4096).unwrap();
    let mut t = 0;
    for k in 0..PAGES {
        t += 1000;
        fs.advance_to(t).unwrap();
        fs.writepage(ino, k, &page).unwrap();
    }
    let mut x = 1u64;
    for _ in 0..PAGES {
        t += 1000;
        fs.advance_to(t).unwrap();
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        fs.writepage(ino, (x >> 33) % PAGES, &page).unwrap();
    }
    fs.sync().unwrap();
    fs.stats().data_blocks_written
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("f2fs");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * PAGES));
    g.bench_function("iozone-writes-counting", |b| b.iter(iozone_writes));
    g.bench_function("model-writepage-counting", |b| b.iter(model_writes));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
