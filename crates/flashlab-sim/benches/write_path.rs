//! Criterion benches of the write path: counting mode and timed mode, uniform random
//! single-page writes on a prefilled device (GC active throughout).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use flashlab_config::load;

fn settings(sets: &[&str]) -> flashlab_sim::Settings {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    load("", "bench", &sets).expect("valid bench config").1
}

fn write_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("write_path");
    g.sample_size(10);
    let n = 1_000_000u64;
    g.throughput(Throughput::Elements(n));
    let base = [
        "device.channels=1",
        "device.chips_per_channel=1",
        "device.dies_per_chip=1",
        "device.planes_per_die=1",
        "device.blocks_per_plane=2048",
        "device.spare_factor=0.1",
        "workload.prefill=true",
    ];
    let req = format!("workload.requests={n}");
    for (name, timing) in [("counting", "timing.enabled=false"), ("timed", "timing.enabled=true")] {
        let mut sets = base.to_vec();
        sets.extend([timing, req.as_str()]);
        let s = settings(&sets);
        g.bench_function(name, |b| {
            b.iter_batched(
                || s.clone(),
                |s| flashlab_sim::run_synthetic(&s, &mut |_| {}).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, write_path);
criterion_main!(benches);
