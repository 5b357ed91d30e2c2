//! 4 KiB writes per second through flashfs (counting mode: no latency
//! model, the figure is simulator throughput). 32 MiB device, 8 MiB file,
//! overwrites at pseudo-random 4 KiB offsets (so GC and commits run).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flashlab_flashfs::{Compression, Fs, FsSettings};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};

fn setup(compression: Compression) -> (Fs, flashlab_flashfs::Fd) {
    let nand = Nand::new(NandSettings { blocks: 256, pages_per_block: 64, ..NandSettings::default() });
    let mut ubi = Ubi::format(nand, UbiSettings::default()).expect("ubi");
    let vol = ubi.create_volume("fs", 0).expect("volume");
    let mut fs = Fs::format(ubi, vol, FsSettings { compression, ..FsSettings::default() }).expect("format");
    let fd = fs.create("/bench").expect("create");
    let block: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    for i in 0..2048u64 {
        fs.write(fd, i * 4096, &block).expect("prefill");
    }
    (fs, fd)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("flashfs");
    g.throughput(Throughput::Elements(1));
    for (name, comp) in [("write_4k_none", Compression::None), ("write_4k_lz4", Compression::Lz4)] {
        let (mut fs, fd) = setup(comp);
        let mut buf: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(40_503) >> 7) as u8).collect();
        let mut x = 1u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                buf[0] = x as u8;
                fs.write(fd, (x >> 33) % 2048 * 4096, &buf).expect("write");
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
