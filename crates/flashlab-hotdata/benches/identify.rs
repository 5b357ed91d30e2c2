//! ns per write (record + query) of every identifier over 1M precomputed LBAs.
//!
//! `cargo bench -p flashlab-hotdata --bench identify`. Criterion reports time per
//! iteration of the whole 1M-write stream and the throughput in writes/s; ns per
//! write = time per iteration / 1e6.

#[path = "../tests/common/workload.rs"]
mod workload;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flashlab_hotdata::{replay, HotDataIdentifier, IdentifierSpec, MultiHash, MultiHashParams, NAMES};

const WRITES: usize = 1_000_000;
/// 2^20 logical blocks (a 4 GiB device of 4 KiB pages); 80 % of writes to 5 % of them.
const BLOCKS: u64 = 1 << 20;

fn stream() -> Vec<u64> {
    workload::hot_cold(2024, WRITES, BLOCKS, 0.8)
}

fn bench_identifiers(c: &mut Criterion) {
    let writes = stream();
    let mut group = c.benchmark_group("record_and_query");
    group.throughput(Throughput::Elements(WRITES as u64));
    for name in NAMES {
        let mut id = IdentifierSpec::from_name(name).unwrap().build(1, BLOCKS).unwrap();
        group.bench_function(*name, |b| b.iter(|| replay(&mut id, black_box(&writes))));
    }
    group.finish();
}

fn bench_multi_hash_paths(c: &mut Criterion) {
    let writes = stream();
    let mut group = c.benchmark_group("multi-hash");
    group.throughput(Throughput::Elements(WRITES as u64));
    let mut t = MultiHash::new(&MultiHashParams::default(), 1).unwrap();
    group.bench_function("record_write+is_hot", |b| {
        b.iter(|| {
            let mut hot = 0u64;
            for &lba in black_box(&writes) {
                t.record_write(lba);
                hot += u64::from(t.is_hot(lba));
            }
            hot
        })
    });
    group.bench_function("record_and_query", |b| {
        b.iter(|| {
            let mut hot = 0u64;
            for &lba in black_box(&writes) {
                hot += u64::from(t.record_and_query(lba));
            }
            hot
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_identifiers, bench_multi_hash_paths
}
criterion_main!(benches);
