//! Criterion bench of the ext4 model under the page cache in counting mode:
//! IOZone-like 4 KiB application writes (a sequential pass over a 256 MiB
//! file, then random overwrites) on a 1 GiB page-mapped SSD. The target
//! (issue 15) is ≥ 300 000 writes per second.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use flashlab_ext4::{Ext4, Ext4Settings};
use flashlab_sim::Ssd;
use flashlab_vfs::{CacheSettings, FileSystem, PageCache};

const FILE_PAGES: u64 = 65536;

fn device() -> Ssd {
    let sets: Vec<String> = [
        "device.channels=2",
        "device.chips_per_channel=1",
        "device.dies_per_chip=2",
        "device.planes_per_die=1",
        "device.page_bytes=4096",
        "device.pages_per_block=128",
        "device.blocks_per_plane=640",
        "device.spare_factor=0.2",
        "timing.enabled=false",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Ssd::new(flashlab_config::load("", "bench", &sets).expect("valid bench config").1).expect("an SSD")
}

fn iozone_writes(c: &mut Criterion) {
    let mut g = c.benchmark_group("ext4_iozone");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * FILE_PAGES));
    let page = vec![0x5au8; 4096];
    g.bench_function("counting_4k_writes", |b| {
        b.iter_batched(
            || PageCache::new(Ext4::format(device(), Ext4Settings::default()).unwrap(), CacheSettings::default(), 0),
            |mut c| {
                let fd = c.create("/iozone").unwrap();
                for p in 0..FILE_PAGES {
                    c.write(fd, p * 4096, &page).unwrap();
                }
                let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
                for _ in 0..FILE_PAGES {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    c.write(fd, (x % FILE_PAGES) * 4096, &page).unwrap();
                }
                c.fsync(fd).unwrap();
                c
            },
            BatchSize::LargeInput,
        )
    });
    // The file system's share alone: the page cache's writeback calls
    // (write_inode, then writepage per page in runs of 64 dirty pages, and
    // the clock advancing between calls) without the cache's own work.
    g.bench_function("counting_writepage_only", |b| {
        b.iter_batched(
            || {
                let mut fs = Ext4::format(device(), Ext4Settings::default()).unwrap();
                let fd = fs.create("/iozone").unwrap();
                let inum = fs.fstat(fd).unwrap().inum;
                (fs, inum)
            },
            |(mut fs, inum)| {
                fs.write_inode(inum, FILE_PAGES * 4096).unwrap();
                let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
                for k in 0..2 * FILE_PAGES {
                    let p = if k < FILE_PAGES {
                        k
                    } else {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x % FILE_PAGES
                    };
                    fs.writepage(inum, p, &page).unwrap();
                    if k % 64 == 63 {
                        fs.advance_to(k * 1000).unwrap();
                    }
                }
                fs
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, iozone_writes);
criterion_main!(benches);
